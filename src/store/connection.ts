/**
 * DuckDB connections that know what runs on them, so that a streamed result cannot be cut short
 * without a word. DuckDB ends a connection's pending stream when that connection runs any other
 * statement, and the stream's next fetch then gives an empty chunk, as at its end: the rows not
 * yet read were lost silently (a test that asked one connection for a stream and a whole result at
 * once got no rows in one CI run of many). `tracked` counts the statements run on a connection;
 * `streamChunks` throws when one ran while its stream was read, or was still running when the
 * stream was asked for.
 *
 * Example: on one tracked connection, `for await (const c of streamChunks(db, q)) await db.run(u)`
 * throws on the second fetch instead of ending early; two connections (Store.beside) run at once.
 */
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';

/** What has run on a tracked connection: statements begun, and those not yet settled. */
interface Use {
  started: number;
  running: number;
}

const uses = new WeakMap<DuckDBConnection, Use>();

/**
 * `conn`, every method call on it counted (run, stream, runAndReadAll, createAppender, …; an
 * appender's own calls are not). The calls go to `conn` itself, unchanged.
 */
export function tracked(conn: DuckDBConnection): DuckDBConnection {
  const use: Use = { started: 0, running: 0 };
  const counted = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  const proxy = new Proxy(conn, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      let call = counted.get(prop);
      if (!call) {
        const method = value as (...args: unknown[]) => unknown;
        call = (...args: unknown[]) => {
          use.started++;
          use.running++;
          let out: unknown;
          try {
            out = method.apply(target, args);
          } catch (err) {
            use.running--;
            throw err;
          }
          if (out instanceof Promise) {
            return out.finally(() => {
              use.running--;
            });
          }
          use.running--;
          return out;
        };
        counted.set(prop, call);
      }
      return call;
    },
  });
  uses.set(proxy, use);
  return proxy;
}

/**
 * The result of `sql` on `conn`, a chunk at a time, to its end; on a tracked connection it throws
 * rather than ends early when another statement ran on `conn` while the stream was read (or was
 * running when it was asked for). Read it to the end, or stop, before `conn` runs anything else.
 */
export async function* streamChunks(conn: DuckDBConnection, sql: string, params?: Record<string, unknown>): AsyncGenerator<DuckDBDataChunk> {
  const use = uses.get(conn);
  if (use && use.running > 0) throw new Error(`a stream was asked of a DuckDB connection while another statement ran on it (${brief(sql)})`);
  const begun = use ? use.started + 1 : 0; // counting the stream's own call
  const result = await conn.stream(sql, params as never);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (use && use.started !== begun) {
      throw new Error(`another statement ran on a DuckDB connection while a stream from it was read, which ends the stream (${brief(sql)})`);
    }
    if (!chunk || chunk.rowCount === 0) return;
    yield chunk;
  }
}

function brief(sql: string): string {
  const one = sql.replace(/\s+/g, ' ').trim();
  return one.length > 80 ? `${one.slice(0, 80)}…` : one;
}
