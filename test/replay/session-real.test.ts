/**
 * The session replay on the real transcripts in ../shared/real-logs: every main chain (12
 * sessions in 5 folders) is found through the store, re-read and replayed under every strategy,
 * and `recorded` is held against the observed usage. The bounds are what the data supports
 * (docs/session-replay.md has the table and why four sessions miss the 10% goal).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { openContext, type Context } from '../../src/context.js';
import { locateChain } from '../../src/replay/session-locate.js';
import { replaySessionFile, type SessionReplayResult } from '../../src/replay/session-replay.js';
import { SESSION_STRATEGIES } from '../../src/replay/session-strategy.js';
import { SegmentTokenizer } from '../../src/replay/tokenizer.js';
import { REAL_LOGS } from '../helpers/corpus.js';

let ctx: Context;
let tok: SegmentTokenizer;
let chains: { chain_id: string; session_id: string; kind: string; requests: number }[];
const results = new Map<string, SessionReplayResult>();

before(async () => {
  // 12 MB of logs: read in this thread, no worker pool needed
  ctx = await openContext({ paths: [REAL_LOGS], db: ':memory:', timezone: 'UTC', workers: 1 });
  chains = (await ctx.store.all(`SELECT chain_id, session_id, kind, requests FROM chains WHERE requests > 0 ORDER BY chain_id`)) as typeof chains;
  tok = await SegmentTokenizer.load('cl100k_base');
  for (const c of chains.filter((c) => c.kind === 'main')) {
    const located = await locateChain(ctx.store, c.session_id);
    results.set(c.chain_id, await replaySessionFile(located.path, { chain: located.chain_id, elsewhere: located.elsewhere, prices: ctx.prices, tokenizer: tok }));
  }
});

after(() => ctx.store.close());

test('every main chain of the real logs is replayed, with the reader’s request count', () => {
  const main = chains.filter((c) => c.kind === 'main');
  assert.equal(main.length, 12);
  assert.equal(new Set(main.map((c) => c.session_id)).size, 12);
  for (const c of main) {
    const r = results.get(c.chain_id)!;
    assert.equal(r.chain.chain_id, c.chain_id);
    assert.equal(r.chain.requests, c.requests, `${c.chain_id}: one request per (message.id, requestId), as the store`);
    assert.equal(r.chain.copied_requests, 0, `${c.chain_id}: no session of the real logs resumes another`);
    const ran = Object.keys(r.strategies).sort();
    const expected = SESSION_STRATEGIES.filter((s) => s !== 'reinject' || r.chain.attachments > 0);
    assert.deepEqual(ran, [...expected].sort(), c.chain_id);
  }
});

test('subagent and sidechain chains are found in their files with the same requests as the store', async () => {
  const tok = await SegmentTokenizer.load('cl100k_base');
  const others = chains.filter((c) => c.kind !== 'main');
  assert.ok(others.length >= 6);
  for (const c of others) {
    const located = await locateChain(ctx.store, c.session_id, c.chain_id);
    const r = await replaySessionFile(located.path, { chain: located.chain_id, elsewhere: located.elsewhere, prices: ctx.prices, tokenizer: tok, strategies: ['recorded'] });
    assert.equal(r.chain.requests, c.requests, c.chain_id);
  }
});

test('recorded fidelity is finite for every session, within the measured bounds', () => {
  const medians: number[] = [];
  for (const [id, r] of results) {
    const f = r.fidelity!;
    assert.ok(f.requests === r.chain.requests - 1, id);
    for (const e of [f.prompt, f.cache_read]) {
      assert.ok(e.n > 0, id);
      assert.ok(Number.isFinite(e.median_rel_error) && Number.isFinite(e.p90_rel_error) && Number.isFinite(e.mean_signed_rel_error), id);
      assert.ok(e.median_rel_error <= e.p90_rel_error, id);
    }
    assert.ok(f.prompt.median_rel_error < 0.3, `${id}: median ${f.prompt.median_rel_error}`);
    assert.ok(f.prompt.p90_rel_error < 0.35, `${id}: p90 ${f.prompt.p90_rel_error}`);
    assert.ok(f.cache_read.median_rel_error < 0.3, `${id}: reads median ${f.cache_read.median_rel_error}`);
    medians.push(f.prompt.median_rel_error);
  }
  // the goal (median within 10%) holds for 8 of the 12 sessions
  assert.ok(medians.filter((m) => m < 0.1).length >= 8, medians.map((m) => m.toFixed(3)).join(' '));
});

test('where the goal is missed, the replay under-predicts (the prompt grows faster than its logged text)', () => {
  for (const [id, r] of results) {
    const f = r.fidelity!.prompt;
    if (f.median_rel_error >= 0.1) assert.ok(f.mean_signed_rel_error < -0.05, `${id}: ${f.mean_signed_rel_error}`);
  }
});

test('--calibrate 5: on the held-out requests of every calibrated session the median error falls below the uncalibrated one', async () => {
  const median = (xs: number[]) => {
    const v = [...xs].sort((a, b) => a - b);
    const m = (v.length - 1) / 2;
    return (v[Math.floor(m)]! + v[Math.ceil(m)]!) / 2;
  };
  let calibrated = 0;
  const met: string[] = [];
  for (const c of chains.filter((c) => c.kind === 'main')) {
    const located = await locateChain(ctx.store, c.session_id);
    const r = await replaySessionFile(located.path, { chain: located.chain_id, prices: ctx.prices, tokenizer: tok, strategies: ['recorded'], calibrate: 5 });
    const f = r.fidelity!;
    const cal = f.calibration!;
    if (c.requests < 7) {
      assert.equal(cal.scale, null, c.chain_id);
      assert.equal(f.from, 2, c.chain_id);
      continue;
    }
    calibrated++;
    // Claude counts the conversation at more tokens than cl100k_base: the fitted scale is above 1
    assert.ok(cal.scale! > 1 && cal.scale! < 2, `${c.chain_id}: scale ${cal.scale}`);
    assert.equal(f.from, 7, c.chain_id);
    const off = results.get(c.chain_id)!.fidelity!.rows.filter((x) => x.request >= 7);
    const before = median(off.map((x) => Math.abs(x.predicted_prompt - x.observed_prompt) / x.observed_prompt));
    assert.ok(f.prompt.median_rel_error < before, `${c.chain_id}: ${f.prompt.median_rel_error} vs ${before}`);
    if (f.prompt.median_rel_error < 0.1) met.push(c.chain_id);
  }
  assert.equal(calibrated, 9);
  // measured: 7 of the 9 meet the goal on their held-out requests (two marot sessions miss)
  assert.ok(met.length >= 7, met.join(' '));
  assert.ok(met.some((id) => id.startsWith('d3ad4cdc')), 'chiphuyen meets the goal once calibrated');
});

test('cold-replay: every request of a compaction segment sends at least what the one before it sent; every strategy\'s per-request series sum to its totals', () => {
  for (const [id, r] of results) {
    // the lines of the transcript's compactions: the conversation restarts there, so may the prompt
    const compactions = readFileSync(r.chain.file, 'utf8').split('\n').flatMap((l, i) => (l.includes('"compact_boundary"') && JSON.parse(l).subtype === 'compact_boundary' ? [i + 1] : []));
    const segmentOf = (line: number) => compactions.filter((c) => c < line).length;
    const cold = r.turns.filter((t) => t.strategy === 'cold-replay');
    assert.equal(cold.length, r.chain.requests, id);
    for (let i = 1; i < cold.length; i++) {
      if (segmentOf(cold[i].line) !== segmentOf(cold[i - 1].line)) continue;
      assert.ok(cold[i].input_tokens >= cold[i - 1].input_tokens, `${id}: cold-replay request ${cold[i].request} sends ${cold[i].input_tokens} after ${cold[i - 1].input_tokens}`);
    }
    for (const [s, sum] of Object.entries(r.strategies)) {
      const turns = r.turns.filter((t) => t.strategy === s);
      const total = (f: (t: (typeof turns)[number]) => number) => turns.reduce((a, t) => a + f(t), 0);
      assert.equal(total((t) => t.input_tokens), sum!.input_tokens, `${id} ${s}: input`);
      assert.equal(total((t) => t.cacheable_tokens), sum!.cacheable_tokens, `${id} ${s}: cacheable`);
      assert.equal(total((t) => t.input_tokens - t.cacheable_tokens), sum!.input_tokens - sum!.cacheable_tokens, `${id} ${s}: uncached`);
      assert.equal(total((t) => t.context_tokens), sum!.context_tokens, `${id} ${s}: context`);
      assert.equal(total((t) => t.already_seen_tokens), sum!.already_seen_tokens, `${id} ${s}: already seen`);
      assert.equal(total((t) => t.output_tokens), sum!.output_tokens, `${id} ${s}: output`);
      assert.ok(Math.abs(total((t) => t.weight ?? 0) - sum!.weight) <= 1e-6 * sum!.weight, `${id} ${s}: weight`);
      assert.ok(turns.every((t) => t.read_tokens <= t.cacheable_tokens && t.cacheable_tokens <= t.input_tokens), `${id} ${s}: read ≤ cacheable ≤ input`);
    }
  }
});

test('the strategies keep their shape on real sessions', () => {
  for (const [id, r] of results) {
    const rec = r.strategies.recorded!;
    const vol = r.strategies['volatile-prefix']!;
    const dd = r.strategies['dedupe-attachments']!;
    assert.ok(vol.cacheable_ratio < 0.01, `${id}: volatile ${vol.cacheable_ratio}`);
    assert.ok(rec.cacheable_ratio > 0.7, `${id}: recorded ${rec.cacheable_ratio}`);
    assert.ok(dd.input_tokens <= rec.input_tokens, id);
    assert.equal(dd.already_seen_tokens, 0, id);
    assert.ok(rec.weight > 0 && Number.isFinite(rec.weight), id);
  }
});
