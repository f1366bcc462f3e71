/**
 * Reads the chains of the store's scope as the cache analyses want them (ChainInput): requests in
 * time order with their segment and round, plus the attachments and compactions between them
 * (to say what preceded a break). Filters apply per request, by day and project.
 */
import type { Store } from '../store/store.js';
import type { ChainEvent, ChainInput, ChainRequest } from './chain.js';
import type { Filters } from './filters.js';
import type { ChainKind } from '../types.js';

const FILTERED = `
  SELECT * FROM requests
  WHERE ($since IS NULL OR strftime(timezone($tz, ts), '%Y-%m-%d') >= $since)
    AND ($until IS NULL OR strftime(timezone($tz, ts), '%Y-%m-%d') <= $until)
    AND ($project IS NULL OR contains(lower(project), lower($project)))`;

/**
 * `keys: false` leaves every request's key null: the report shows none, and decoding 148,000 of
 * them (one native call each, BENCHMARKS.md Report) was ~0.4 s of a 1 GB report.
 */
export async function loadChains(store: Store, f: Filters, opts: { keys?: boolean } = {}): Promise<ChainInput[]> {
  const keys = opts.keys ?? true;
  const params = { tz: f.timezone, since: f.since, until: f.until, project: f.project };
  const [chainId, sessionId, agentId, kind, agentType, rounds] = (await store.columns(
    `SELECT chain_id, session_id, agent_id, kind, agent_type, rounds FROM chains ORDER BY chain_id`,
  )) as [string[], string[], (string | null)[], ChainKind[], string[], ArrayLike<number>];
  const models = (await store.all(`SELECT DISTINCT model FROM requests ORDER BY model`)).map((r) => r.model as string);
  // Every request is read, so each travels as numbers: its chain as the position in `chains`, its
  // model as the position in `models` (a string decoded per value cost ~1 s on 150,000 requests).
  const [cn, key, t, mn, input, output, cacheWrite, cacheWrite5m, cacheWrite1h, cacheRead, segment, round] = (await store.columns(
    `WITH c AS (SELECT chain_id, (row_number() OVER (ORDER BY chain_id) - 1)::INTEGER AS cn FROM chains),
          m AS (SELECT model, (row_number() OVER (ORDER BY model) - 1)::INTEGER AS mn FROM (SELECT DISTINCT model FROM requests))
     SELECT c.cn, ${keys ? 'r.key' : 'NULL::VARCHAR'}, r.t, m.mn, r.input, r.output, r.cache_write, r.cache_write_5m, r.cache_write_1h, r.cache_read, r.segment, r.round
     FROM (${FILTERED}) r JOIN c USING (chain_id) JOIN m ON m.model IS NOT DISTINCT FROM r.model
     ORDER BY c.cn, r.t, r.key`,
    params,
  )) as [ArrayLike<number>, ArrayLike<string | null>, ...ArrayLike<number>[]];
  const byChain: ChainRequest[][] = chainId.map(() => []);
  for (let i = 0; i < cn.length; i++) {
    byChain[cn[i]].push({
      key: key[i],
      t: t[i],
      model: models[mn[i]],
      input: input[i],
      output: output[i],
      cacheWrite: cacheWrite[i],
      cacheWrite5m: cacheWrite5m[i],
      cacheWrite1h: cacheWrite1h[i],
      cacheRead: cacheRead[i],
      segment: segment[i],
      round: round[i],
    });
  }
  // the attachments and compactions by chain, as numbers too: the chain's position, the detail's in `details`
  const events = `SELECT chain_id, t, 'attachment' AS kind, type AS detail FROM attachments JOIN scope USING (file_id)
     UNION ALL
     SELECT chain_id, t, 'compaction' AS kind, detail FROM chain_events JOIN scope USING (file_id)`;
  const details = (await store.all(`SELECT DISTINCT detail FROM (${events}) ORDER BY detail NULLS LAST`)).map((r) => r.detail as string);
  const [ecn, et, compaction, dn] = (await store.columns(
    `WITH c AS (SELECT chain_id, (row_number() OVER (ORDER BY chain_id) - 1)::INTEGER AS cn FROM chains),
          d AS (SELECT detail, (row_number() OVER (ORDER BY detail NULLS LAST) - 1)::INTEGER AS dn FROM (SELECT DISTINCT detail FROM (${events})))
     SELECT c.cn, e.t, (e.kind = 'compaction')::INTEGER, d.dn
     FROM (${events}) e JOIN c USING (chain_id) JOIN d ON d.detail IS NOT DISTINCT FROM e.detail
     ORDER BY c.cn, e.t, e.kind, d.dn`,
  )) as ArrayLike<number>[];
  const eventsByChain: ChainEvent[][] = chainId.map(() => []);
  for (let i = 0; i < ecn.length; i++) eventsByChain[ecn[i]].push({ t: et[i], kind: compaction[i] ? 'compaction' : 'attachment', detail: details[dn[i]] });
  const out: ChainInput[] = [];
  chainId.forEach((id, i) => {
    const requests = byChain[i];
    if (requests.length === 0) return;
    out.push({
      chainId: id,
      sessionId: sessionId[i],
      agentId: agentId[i] ?? null,
      agentType: agentType[i],
      kind: kind[i],
      requests,
      events: eventsByChain[i],
      rounds: rounds[i],
    });
  });
  return out;
}
