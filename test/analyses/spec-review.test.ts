/**
 * SPEC §1.3 rules that decide the analyses' numbers, checked end to end (transcripts → `--json`) on
 * fixtures small enough to compute by hand: a request's time is its first copy's, whichever copy
 * attributes it; a request without the 5m/1h split is a 5-minute write and sets the TTL in force;
 * the long-context tier starts above 200,000 prompt tokens, not at it. Opus 4.6 weights
 * 1 / 1.25 / 2 / 0.1 / 5 at $5 per million; a ping = 0.1 × C + 30 × 1.25 + 10 × 5 = 0.1 × C + 87.5.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assistant, cli, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { near } from './helpers/fixtures.js';

const S = '5bec0000-0000-4000-8000-000000000001';
const P = 'projects/-work-demo';

/** ISO time `s` seconds after 2026-03-01 10:00:00 UTC. */
const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 10) + s * 1000).toISOString();

function json(dir: string, args: string[]): any {
  const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test("a request's time is its first copy's (an agent_progress copy in the parent), while the subagent file's copy attributes it: the gap that decides expiry or break runs to that time", () => {
  // Subagent a1: #1 at 0 s w5 10,000; #2 r 0 w5 10,000 out 50 in its file at 360 s, and copied as agent_progress
  // in the parent with its own timestamp 299 s (out 10). #2 is one request of chain S:a1, t = 299 s, out 50 (the
  // field-wise maximum). Gap 299 s ≤ 300 s: C = 10,000, rw = min(10,000, 10,000 − 0) = 10,000 is a break.
  // Timed by the subagent file's line (360 s) it would be an expiry.
  const second = assistant({ session: S, msg: 'msg_2', t: at(360), agentId: 'a1', u: { w5: 10_000, out: 50 } });
  const copy = assistant({ session: S, msg: 'msg_2', t: at(299), agentId: 'a1', u: { w5: 10_000, out: 10 } });
  const progress = {
    type: 'progress', sessionId: S, timestamp: at(300), cwd: '/work/demo',
    data: { type: 'agent_progress', agentId: 'a1', message: { type: 'assistant', timestamp: at(299), requestId: 'req_msg_2', message: copy.message } },
  };
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [userPrompt(S, at(-10)), progress],
    [`${P}/${S}/subagents/agent-a1.jsonl`]: [
      userPrompt(S, at(-1), 'sub task', 'a1'),
      assistant({ session: S, msg: 'msg_1', t: at(0), agentId: 'a1', u: { w5: 10_000 } }),
      second,
    ],
  });
  const anatomy = json(dir, ['anatomy']);
  assert.equal(anatomy.totals.requests, 2);
  assert.equal(anatomy.chains.length, 1);
  assert.equal(anatomy.chains[0].chain_id, `${S}:a1`);
  assert.deepEqual([anatomy.totals.cold, anatomy.totals.break, anatomy.totals.expiry, anatomy.totals.growth], [10_000, 10_000, 0, 0]);
  // weight: 2 × 12,500 + 50 × 5 = 25,250
  near(anatomy.totals.weight, 25_250);
  // keepalive: one gap of 299 s > I = 270 s takes ⌈299/270⌉ − 1 = 1 ping (pure cost), none over the TTL
  const ka = json(dir, ['whatif', 'keepalive', '--budget', 'inf']);
  assert.deepEqual([ka.gaps, ka.budgets[0].pings, ka.budgets[0].gaps_over_ttl], [1, 1, 0]);
  near(ka.budgets[0].ping_weight, 1_000 + 87.5);
  // to 1h: a break stays a write, at 2: 40,000 + 250; no expiry share
  const ttl = json(dir, ['whatif', 'ttl']);
  near(ttl.scenario_weight, 40_250);
  near(ttl.expiry_share, 0);
});

test('a request without the 5m/1h split is a 5-minute write (split_missing): it sets the TTL in force, and forcing 1 h turns the expiry after it into a read', () => {
  // #1 t 0      w1h 10,000                      TTL in force after it: 1 h
  // #2 t 60 s   r 10,000, w 1,000 (no split)    growth; w5 = 1,000, so the TTL in force after it is 5 minutes
  // #3 t 660 s  r 0, w5 12,000                  gap 600 s > 5 min: C = 11,000, expiry 11,000, growth 1,000
  // baseline 20,000 + (1,000 + 1,250) + 15,000 = 37,250
  // to 1h (the chain wrote 5-minute tokens): 20,000 + (1,000 + 2,000) + (1,000 × 2 + 11,000 × 0.1) = 26,100;
  //   f = 11,000 / (10,000 + 1,000 + 12,000)
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      assistant({ session: S, msg: 'm1', t: at(0), u: { w1h: 10_000 } }),
      assistant({ session: S, msg: 'm2', t: at(60), u: { r: 10_000, w5: 1_000, split: false } }),
      assistant({ session: S, msg: 'm3', t: at(660), u: { w5: 12_000 } }),
    ],
  });
  const detail = json(dir, ['anatomy', '--chain', S]);
  assert.deepEqual(
    detail.requests.map((q: any) => [q.cold, q.growth, q.expiry, q.break]),
    [
      [10_000, 0, 0, 0],
      [0, 1_000, 0, 0],
      [0, 1_000, 11_000, 0],
    ],
  );
  const summary = json(dir, ['summary']);
  assert.deepEqual([summary.totals.cache_write_5m, summary.totals.cache_write_1h], [13_000, 10_000]);
  near(summary.totals.weight, 37_250);
  const ttl = json(dir, ['whatif', 'ttl']);
  assert.equal(ttl.changed_chains, 1);
  near(ttl.baseline_weight, 37_250);
  near(ttl.scenario_weight, 26_100);
  near(ttl.expiry_share, 11_000 / 23_000);
  // keepalive: the 60 s gap follows a 1-hour write (no gap of a 5-minute chain); the 600 s one takes
  // ⌈600/270⌉ − 1 = 2 pings of 0.1 × 11,000 + 87.5 and is bridged by them (600 − 540 ≤ 300): saves 11,000 × 1.15
  const ka = json(dir, ['whatif', 'keepalive', '--budget', '2']);
  assert.deepEqual([ka.gaps, ka.budgets[0].pings, ka.budgets[0].bridged], [1, 2, 1]);
  near(ka.budgets[0].net_saving_weight, 11_000 * 1.15 - 2 * 1_187.5);
});

test('Sonnet 4.5 long context starts above 200,000 prompt tokens: a prompt of exactly 200,000 is billed at the standard rates, 200,001 wholly at $6 / $22.50', () => {
  // P = in + w + r. #1 r 200,000 (P = 200,000): 200,000 × 0.1 = 20,000 wt, $0.06.
  // #2 in 1, r 200,000 (P = 200,001): weights of the $3 base: input 6/3 = 2, read 0.6/3 = 0.2 → 2 + 40,000 = 40,002 wt, × $3/M.
  const model = 'claude-sonnet-4-5-20250929';
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      assistant({ session: S, msg: 'l1', t: at(0), model, u: { r: 200_000 } }),
      assistant({ session: S, msg: 'l2', t: at(10), model, u: { in: 1, r: 200_000 } }),
    ],
  });
  const summary = json(dir, ['summary']);
  near(summary.totals.weight, 60_002);
  near(summary.totals.usd, 60_002 * 3e-6);
  // the what-ifs price each request at its own tier: both baselines are the bill
  near(json(dir, ['whatif', 'ttl']).baseline_usd, 60_002 * 3e-6);
  near(json(dir, ['whatif', 'keepalive']).baseline_weight, 60_002);
});
