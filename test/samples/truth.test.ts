/**
 * The reader and the analyses against the sample corpus's truth.json, which the generator writes
 * from its own plan (never from reading the files back): summary --json totals and per-model
 * tokens, data quality, chains (kind, agent type, definition, rounds, skill_listing) and every
 * request's planted cache class and rewrite tokens.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { anatomizeChain } from '../../src/analyses/anatomy.js';
import { loadChains } from '../../src/analyses/load-chains.js';
import { openContext } from '../../src/context.js';
import { REPO, summaryJson } from '../helpers/corpus.js';

const SAMPLE = join(REPO, 'sample-logs');
const truth = JSON.parse(readFileSync(join(SAMPLE, 'truth.json'), 'utf8'));
const TOKENS = ['requests', 'input', 'output', 'cache_write_5m', 'cache_write_1h', 'cache_read'] as const;

test('summary --json on the sample equals truth.json: totals, per model, data quality', () => {
  const s = summaryJson([SAMPLE]);
  for (const k of TOKENS) assert.equal(s.totals[k], truth.totals[k], `totals.${k}`);
  assert.deepEqual(
    Object.fromEntries(s.by_model.map((m: any) => [m.model, Object.fromEntries(TOKENS.map((k) => [k, m[k]]))])),
    truth.by_model,
  );
  const skipped = Object.fromEntries(s.quality.skipped.map((g: any) => [g.reason, g.count]));
  assert.equal(skipped.invalid_json, truth.counts.invalid_lines);
  assert.equal(skipped.incomplete_last_line, truth.counts.incomplete_last_lines);
  assert.equal(s.quality.synthetic, truth.counts.synthetic_lines);
  assert.equal(s.quality.duplicates_removed, truth.counts.duplicate_lines);
  const transcriptLines = truth.files
    .filter((f: any) => f.path.startsWith('projects/') && f.path.endsWith('.jsonl'))
    .reduce((n: number, f: any) => n + f.lines, 0);
  assert.equal(s.quality.lines, transcriptLines - truth.counts.incomplete_last_lines, 'the half-written last line is left for the next run');
  assert.deepEqual(s.quality.unknown_models.map((m: any) => m.model).sort(), Object.keys(truth.unpriced_models ?? {}).sort());
  assert.equal(s.totals.unpriced_requests, Object.values(truth.unpriced_models ?? {}).reduce((a: number, m: any) => a + (m.requests ?? m), 0));
});

test('chains on the sample equal truth.json: agent type, definition, rounds, skill_listing', async () => {
  const ctx = await openContext({ paths: [SAMPLE], db: ':memory:', timezone: 'UTC' });
  try {
    const chains = new Map((await ctx.store.all(`
      SELECT c.*, (SELECT count(*) FROM attachments a WHERE a.chain_id = c.chain_id AND a.type = 'skill_listing') AS skill_listing
      FROM chains c`)).map((c) => [c.chain_id as string, c]));
    for (const t of truth.chains) {
      const c = chains.get(t.chain_id);
      assert.ok(c, `chain ${t.chain_id} found`);
      assert.equal(c.agent_type, t.agent_type, `${t.chain_id} agent_type`);
      if (t.definition) assert.equal(c.definition, t.definition, `${t.chain_id} definition`);
      assert.equal(c.rounds, t.rounds, `${t.chain_id} rounds`);
      assert.equal(c.skill_listing, t.skill_listing, `${t.chain_id} skill_listing`);
      assert.equal(c.requests, t.requests, `${t.chain_id} requests`);
    }
  } finally {
    ctx.store.close();
  }
});

test('every sample request has its planted class and rewrite tokens', async () => {
  const ctx = await openContext({ paths: [SAMPLE], db: ':memory:', timezone: 'UTC' });
  try {
    const chains = await loadChains(ctx.store, ctx.filters);
    const found = new Map<string, { class: string; rewrite: number }>();
    for (const c of chains) {
      for (const a of anatomizeChain(c)) found.set(a.request.key.split('\u0000')[0], { class: a.class === 'none' ? 'growth' : a.class, rewrite: a.rewriteTokens });
    }
    assert.equal(found.size, truth.requests.length);
    const wrong = truth.requests.filter((r: any) => {
      const f = found.get(r.message_id);
      return !f || f.class !== r.class || f.rewrite !== r.rewrite_tokens;
    });
    assert.deepEqual(wrong.map((r: any) => `${r.message_id} ${r.class}/${r.rewrite_tokens} vs ${JSON.stringify(found.get(r.message_id))}`), []);
  } finally {
    ctx.store.close();
  }
});
