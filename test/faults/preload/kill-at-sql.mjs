/**
 * Preload (`node --import`) for the fault suite: the process kills itself (SIGKILL, as the kernel's
 * OOM killer or `kill -9` would) just before DuckDB runs the KILL_AT_SQL_NTH-th statement whose
 * text contains KILL_AT_SQL, so that a case stops a run at an exact point of its work on the store
 * (between two statements, each committed on its own or not). KILL_AT_SQL_THROW=1: that statement
 * throws instead (a DuckDB failure in the middle of the work, which the CLI reports as a bug).
 * KILL_AT_SQL_HOLD=/path: that statement is held instead (a DuckDB that takes its time, the event
 * loop free meanwhile): the preload writes the process id to /path and lets the statement run only
 * after 60 s, for a test to signal the process at that exact point. KILL_AT_SQL_MESSAGE: the message
 * that statement throws with (KILL_AT_SQL_THROW=1), as DuckDB would word its failure (a full disk's:
 * `… Could not write file "…": No space left on device`).
 * KILL_AT_OPEN_NOSPACE=1: opening a database file that is not there fails as DuckDB's does on a full
 * disk (tried on a 4 KiB tmpfs): the file is left cut short (its first bytes), and the open throws
 * `IO Error: Could not write file "PATH": No space left on device`.
 *
 * It wraps the functions of @duckdb/node-bindings that take SQL text (`query`, `prepare`,
 * `extract_statements`), as the bundled DuckDB API calls them: through the binding's exports
 * object, looked up at each call. The binding's own object is not writable, so the module's
 * exports are replaced by a copy with the wrapped functions, before the CLI first loads it.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const match = process.env.KILL_AT_SQL;
const nth = Number(process.env.KILL_AT_SQL_NTH ?? 1);
const throwInstead = process.env.KILL_AT_SQL_THROW === '1';
const message = process.env.KILL_AT_SQL_MESSAGE;
const hold = process.env.KILL_AT_SQL_HOLD;
const openNoSpace = process.env.KILL_AT_OPEN_NOSPACE === '1';
if (isMainThread && (match || openNoSpace)) {
  const require = createRequire(new URL('../../../node_modules/@duckdb/node-api/package.json', import.meta.url));
  const id = require.resolve('@duckdb/node-bindings');
  const binding = require('@duckdb/node-bindings');
  const wrapped = {};
  for (const k of Object.getOwnPropertyNames(binding)) wrapped[k] = binding[k];
  let seen = 0;
  if (openNoSpace) {
    const real = binding.open;
    wrapped.open = function (path, ...rest) {
      if (typeof path === 'string' && path !== ':memory:' && path !== '' && !existsSync(path)) {
        writeFileSync(path, Buffer.alloc(100));
        throw new Error(`IO Error: Could not write file "${path}": No space left on device`);
      }
      return real.call(this, path, ...rest);
    };
  }
  for (const name of match ? ['query', 'prepare', 'extract_statements'] : []) {
    const real = binding[name];
    wrapped[name] = function (connection, sql, ...rest) {
      if (String(sql).includes(match) && ++seen === nth) {
        if (throwInstead) throw new Error(message ?? `KILL_AT_SQL_THROW: refused ${match}`);
        if (hold) {
          writeFileSync(hold, String(process.pid));
          return new Promise((resolve) => setTimeout(resolve, 60_000)).then(() => real.call(this, connection, sql, ...rest));
        }
        process.kill(process.pid, 'SIGKILL');
      }
      return real.call(this, connection, sql, ...rest);
    };
  }
  require.cache[id].exports = wrapped;
}
