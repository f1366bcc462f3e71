/**
 * The cache analyses a chain at a time (AnatomyAnalysis, TtlWhatIf, KeepaliveWhatIf), as the
 * report runs them over chains it reads in batches: what they keep per chain is counted, not
 * collected, and these checks compute the same counts another way over the real logs' chains.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { AnatomyAnalysis, analyzeAnatomy } from '../../src/analyses/anatomy-summary.js';
import type { ChainInput } from '../../src/analyses/chain.js';
import { KeepaliveWhatIf, whatifKeepalive } from '../../src/analyses/keepalive.js';
import { loadChains } from '../../src/analyses/load-chains.js';
import { TtlWhatIf } from '../../src/analyses/ttl.js';
import { ingest } from '../../src/ingest/ingest.js';
import { prices, realLogs, tmp } from '../store/helpers.js';

const weightsFor = (m: string, p: number) => prices.weightsFor(m, p);

async function realChains(): Promise<ChainInput[]> {
  const r = await ingest({ paths: [realLogs], dbPath: path.join(tmp(), 'r.duckdb'), prices, workers: 1 });
  try {
    return await loadChains(r.store, { since: null, until: null, project: null, timezone: 'UTC' });
  } finally {
    r.store.close();
  }
}

test('TtlWhatIf counts each chain once per bucket, as the distinct chains with a request there', async () => {
  const chains = await realChains();
  assert.ok(chains.length > 10);
  const whatif = new TtlWhatIf({ to: '1h', weightsFor });
  for (const c of chains) whatif.add(c);
  const res = whatif.result();
  assert.equal(res.chains, chains.length);
  assert.equal(res.changed_chains, chains.filter((c) => c.requests.some((q) => q.cacheWrite5m > 0)).length);
  assert.ok(res.changed_chains > 0 && res.changed_chains < res.chains, 'some chains change, some do not');
  // a model's bucket: the chains with a request of that model, however their models interleave
  const models = new Set(chains.flatMap((c) => c.requests.map((q) => q.model)));
  assert.ok(models.size > 1);
  for (const model of models) {
    const row = res.buckets.find((b) => b.dimension === 'model' && b.bucket === model);
    assert.equal(row?.chains, chains.filter((c) => c.requests.some((q) => q.model === model)).length, model);
  }
  const kinds = res.buckets.filter((b) => b.dimension === 'kind');
  assert.equal(kinds.reduce((n, b) => n + b.chains, 0), chains.length);
});

test('KeepaliveWhatIf tallies each gap into every budget as it meets it: a budget row is the same alone as in a sweep', async () => {
  const chains = await realChains();
  const whatif = new KeepaliveWhatIf({ weightsFor });
  for (const c of chains) whatif.add(c);
  const sweep = whatif.result();
  assert.ok(sweep.gaps > 0 && sweep.budgets.some((b) => b.bridged > 0));
  for (const budget of [0, 1, 4, Infinity]) {
    const alone = whatifKeepalive(chains, { weightsFor, budgets: budget });
    assert.deepEqual(alone.budgets, [sweep.budgets.find((b) => b.budget === (budget === Infinity ? 'inf' : budget))]);
    assert.equal(alone.gaps, sweep.gaps);
  }
  // a chain added in two halves of the list is the same as all at once
  const halves = new KeepaliveWhatIf({ weightsFor });
  for (const part of [chains.slice(0, 7), chains.slice(7)]) for (const c of part) halves.add(c);
  assert.deepEqual(halves.result(), sweep);
});

test('AnatomyAnalysis without lists keeps the sums and returns each chain row from add()', async () => {
  const chains = await realChains();
  const full = analyzeAnatomy(chains, { weightsFor });
  const bare = new AnatomyAnalysis({ weightsFor }, { lists: false });
  const rows = chains.map((c) => bare.add(c));
  const res = bare.result();
  assert.deepEqual([res.chains, res.repurchase, res.breaks, res.by_session], [[], [], [], []]);
  assert.deepEqual({ ...res, chains: full.chains, repurchase: full.repurchase, breaks: full.breaks, by_session: full.by_session }, full);
  assert.deepEqual(
    rows.sort((a, b) => (a.chain_id < b.chain_id ? -1 : 1)),
    [...full.chains].sort((a, b) => (a.chain_id < b.chain_id ? -1 : 1)),
  );
  assert.ok(full.breaks.length > 0 && full.chains.length === chains.length);
});
