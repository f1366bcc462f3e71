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

export async function loadChains(store: Store, f: Filters): Promise<ChainInput[]> {
  const params = { tz: f.timezone, since: f.since, until: f.until, project: f.project };
  const reqs = await store.all(
    `SELECT chain_id, key, t, model, input, output, cache_write, cache_write_5m, cache_write_1h, cache_read, segment, round
     FROM (${FILTERED}) ORDER BY chain_id, t, key`,
    params,
  );
  const chains = await store.all(`SELECT chain_id, session_id, agent_id, kind, agent_type, rounds FROM chains`);
  const events = await store.all(
    `SELECT chain_id, t, 'attachment' AS kind, type AS detail FROM attachments JOIN scope USING (file_id)
     UNION ALL
     SELECT chain_id, t, 'compaction' AS kind, detail FROM chain_events JOIN scope USING (file_id)
     ORDER BY chain_id, t`,
  );
  const byChain = new Map<string, ChainRequest[]>();
  for (const r of reqs) {
    const id = r.chain_id as string;
    let list = byChain.get(id);
    if (!list) byChain.set(id, (list = []));
    list.push({
      key: r.key as string,
      t: r.t as number,
      model: r.model as string,
      input: r.input as number,
      output: r.output as number,
      cacheWrite: r.cache_write as number,
      cacheWrite5m: r.cache_write_5m as number,
      cacheWrite1h: r.cache_write_1h as number,
      cacheRead: r.cache_read as number,
      segment: r.segment as number,
      round: r.round as number,
    });
  }
  const eventsByChain = new Map<string, ChainEvent[]>();
  for (const e of events) {
    const id = e.chain_id as string;
    let list = eventsByChain.get(id);
    if (!list) eventsByChain.set(id, (list = []));
    list.push({ t: e.t as number, kind: e.kind as ChainEvent['kind'], detail: e.detail as string });
  }
  const out: ChainInput[] = [];
  for (const c of chains) {
    const requests = byChain.get(c.chain_id as string);
    if (!requests || requests.length === 0) continue;
    out.push({
      chainId: c.chain_id as string,
      sessionId: c.session_id as string,
      agentId: (c.agent_id as string | null) ?? null,
      agentType: c.agent_type as string,
      kind: c.kind as ChainKind,
      requests,
      events: eventsByChain.get(c.chain_id as string) ?? [],
      rounds: c.rounds as number,
    });
  }
  return out;
}
