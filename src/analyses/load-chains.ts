/**
 * Reads the chains of the store's scope as the cache analyses want them (ChainInput): requests in
 * time order with their segment and round, plus the attachments and compactions between them
 * (to say what preceded a break). The project filter takes whole chains (a chain is of one
 * session, so of one project); the day filters take the chains with a request on those days,
 * whole: a request's class, cached prefix and TTL in force come from the requests before it, so
 * those outside the days come along as its context (ChainRequest.context) and count in no sum.
 */
import type { ResultChunk, Store } from '../store/store.js';
import type { ChainEvent, ChainInput, ChainRequest } from './chain.js';
import type { Filters } from './filters.js';
import type { ChainKind } from '../types.js';

/** The requests of the chains in scope, each with `in_scope` (false: context only). */
const FILTERED = `
  SELECT * FROM (
    SELECT *, ($since IS NULL OR CAST(timezone($tz, ts) AS DATE) >= CAST($since AS DATE))
              AND ($until IS NULL OR CAST(timezone($tz, ts) AS DATE) <= CAST($until AS DATE)) AS in_scope,
           bool_or(in_scope) OVER (PARTITION BY chain_id) AS chain_in_scope
    FROM requests
    WHERE ($project IS NULL OR contains(fold_case(project), fold_case($project))))
  WHERE chain_in_scope`;

/** The same without day filters: every request of the chains of the project (or all) is in scope. */
const UNFILTERED_DAYS = `
  SELECT *, true AS in_scope FROM requests
  WHERE ($project IS NULL OR contains(fold_case(project), fold_case($project)))`;

/** Requests and events travel in one stream, in chain order: a request's tag is 0, an event's 1. */
const REQUEST = 0;

/**
 * The chains of the store's scope with their requests (in time order) and events, a batch at a
 * time: each batch holds the chains whose last request arrived in one chunk of DuckDB's stream
 * (~2,048 rows), so a caller that analyses them as they come holds a few thousand requests, not
 * every one. Chains come in chain-id order. One sort in DuckDB orders the requests and the events
 * together by chain (it spills beyond DuckDB's memory limit); the chains' own rows come from a
 * second stream, beside, in the same order.
 * `keys: false` leaves every request's key null: the report shows none, and decoding 148,000 of
 * them (one native call each, BENCHMARKS-log.md Report) was ~0.4 s of a 1 GB report.
 * Example: 10 GB of sample logs (1.48 million requests in 156,520 chains) come in ~900 batches.
 */
export async function* streamChains(store: Store, f: Filters, opts: { keys?: boolean } = {}): AsyncGenerator<ChainInput[]> {
  const keys = opts.keys ?? true;
  const days = f.since !== null || f.until !== null;
  const params = days ? { tz: f.timezone, since: f.since, until: f.until, project: f.project } : { project: f.project };
  // strings that repeat travel as numbers (a string decoded per value cost ~1 s on 150,000
  // requests): the model as its position in `models`, an event's detail in `details`
  const models = (await store.all(`SELECT DISTINCT model FROM requests ORDER BY model`)).map((r) => r.model as string);
  const events = `SELECT chain_id, t, 'attachment' AS kind, type AS detail FROM attachments JOIN scope USING (file_id) ANTI JOIN line_copies USING (file_id, line)
     UNION ALL
     SELECT chain_id, t, kind, detail FROM chain_events JOIN scope USING (file_id) ANTI JOIN line_copies USING (file_id, line) WHERE kind = 'compaction'`;
  const details = (await store.all(`SELECT DISTINCT detail FROM (${events}) ORDER BY detail NULLS LAST`)).map((r) => r.detail as string);
  // a chain's position in chain-id order, which both streams follow
  const cn = `c AS (SELECT chain_id, (row_number() OVER (ORDER BY chain_id) - 1)::INTEGER AS cn FROM chains)`;
  const side = await store.beside();
  const chainRows = side.chunks(`SELECT chain_id, session_id, agent_id, kind, agent_type, rounds, project FROM chains ORDER BY chain_id`)[Symbol.asyncIterator]();
  // columns: cn, tag, t, code (model or detail), input, output, cache_write, cache_write_5m,
  // cache_write_1h, cache_read, segment, round, key, compaction (a request's: 1 when it is context
  // only), line; requests of one millisecond keep the order of their lines (a request that reads what
  // another wrote came after it, whatever their ids); events sort as before: by time, attachments
  // before compactions, then by detail
  const rows = store.chunks(
    `WITH ${cn},
          m AS (SELECT model, (row_number() OVER (ORDER BY model) - 1)::INTEGER AS mn FROM (SELECT DISTINCT model FROM requests)),
          d AS (SELECT detail, (row_number() OVER (ORDER BY detail NULLS LAST) - 1)::INTEGER AS dn FROM (SELECT DISTINCT detail FROM (${events})))
     SELECT c.cn, ${REQUEST} AS tag, r.t, m.mn AS code, r.input, r.output, r.cache_write, r.cache_write_5m, r.cache_write_1h, r.cache_read,
            r.segment, r.round, r.key, (NOT r.in_scope)::INTEGER AS compaction, r.line
     FROM (${days ? FILTERED : UNFILTERED_DAYS}) r JOIN c USING (chain_id) JOIN m ON m.model IS NOT DISTINCT FROM r.model
     UNION ALL
     SELECT c.cn, 1, e.t, d.dn, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, (e.kind = 'compaction')::INTEGER, NULL
     FROM (${events}) e JOIN c USING (chain_id) JOIN d ON d.detail IS NOT DISTINCT FROM e.detail
     ORDER BY cn, tag, t, line, key, compaction, code`,
    params,
    // a batch is garbage once its caller has analysed it (a 10 GB report's heap grew to ~190 MB
    // of it without this)
    { keepHeap: true },
  );

  // the chains' rows, read up to a position as the requests reach it
  let chainChunk: ResultChunk | undefined;
  let chainAt = 0;
  let chainRow = 0;
  const chainAtPosition = async (position: number): Promise<ChainInput> => {
    for (;;) {
      if (chainChunk && chainRow < chainChunk.rowCount) {
        if (chainAt === position) break;
        chainAt++;
        chainRow++;
        continue;
      }
      const next = await chainRows.next();
      if (next.done) throw new Error(`chain ${position} of the requests is not among the chains`);
      chainChunk = next.value;
      chainRow = 0;
    }
    const c = chainChunk;
    const input: ChainInput = {
      chainId: c.column(0).getItem(chainRow) as string,
      sessionId: c.column(1).getItem(chainRow) as string,
      agentId: (c.column(2).getItem(chainRow) as string | null) ?? null,
      agentType: c.column(4).getItem(chainRow) as string,
      kind: c.column(3).getItem(chainRow) as ChainKind,
      requests: [],
      events: [],
      rounds: c.column(5).getItem(chainRow) as number,
      project: (c.column(6).getItem(chainRow) as string | null) ?? null,
    };
    chainAt++;
    chainRow++;
    return input;
  };

  try {
    let current: ChainInput | undefined;
    let currentAt = -1;
    let done: ChainInput[] = [];
    // a chain whose events came but no request (all filtered out) is not one of the chains
    const finish = () => {
      if (current && current.requests.length > 0) done.push(current);
    };
    for await (const chunk of rows) {
      const [pos, tag, t, code] = [0, 1, 2, 3].map((c) => chunk.column(c));
      const [input, output, cacheWrite, cacheWrite5m, cacheWrite1h, cacheRead, segment, round, key, compaction] = [4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map((c) => chunk.column(c));
      for (let i = 0; i < chunk.rowCount; i++) {
        const at = pos.getItem(i) as number;
        if (at !== currentAt) {
          finish();
          current = await chainAtPosition(at);
          currentAt = at;
        }
        if (tag.getItem(i) === REQUEST) {
          const q: ChainRequest = {
            key: keys ? (key.getItem(i) as string) : null,
            t: t.getItem(i) as number,
            model: models[code.getItem(i) as number],
            input: input.getItem(i) as number,
            output: output.getItem(i) as number,
            cacheWrite: cacheWrite.getItem(i) as number,
            cacheWrite5m: cacheWrite5m.getItem(i) as number,
            cacheWrite1h: cacheWrite1h.getItem(i) as number,
            cacheRead: cacheRead.getItem(i) as number,
            segment: segment.getItem(i) as number,
            round: round.getItem(i) as number,
          };
          if (compaction.getItem(i)) q.context = true;
          (current!.requests as ChainRequest[]).push(q);
        } else {
          (current!.events as ChainEvent[]).push({ t: t.getItem(i) as number, kind: compaction.getItem(i) ? 'compaction' : 'attachment', detail: details[code.getItem(i) as number] });
        }
      }
      if (done.length > 0) {
        yield done;
        done = [];
      }
    }
    finish();
    if (done.length > 0) yield done;
  } finally {
    // the chains' stream read to its end: its connection then runs nothing (Store.beside)
    while (!(await chainRows.next()).done);
  }
}

/** Every chain of the store's scope at once (streamChains' batches, joined). */
export async function loadChains(store: Store, f: Filters, opts: { keys?: boolean } = {}): Promise<ChainInput[]> {
  const out: ChainInput[] = [];
  for await (const batch of streamChains(store, f, opts)) for (const chain of batch) out.push(chain);
  return out;
}
