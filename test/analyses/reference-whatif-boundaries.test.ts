/**
 * Boundary fixtures for `whatif ttl` and `whatif keepalive`, each a tiny transcript written here,
 * its expected numbers computed by hand in the comments, and checked against both the product's
 * `--json` and the independent reference (test/helpers/reference-whatif.ts).
 *
 * Opus 4.6 throughout (weights 1 / 1.25 / 2 / 0.1 / 5, $5 per million base input tokens), no
 * input or output tokens unless said. Keepalive defaults: I = 270 s, TTL 300 s, a ping costs
 * 0.1 × C + 30 × 1.25 + 10 × 5 = 0.1 × C + 87.5. With C = 20,000: a ping is 2,087.5, and a bridged
 * expiry rewrite of 20,000 saves 20,000 × (1.25 − 0.1) = 23,000.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { assistant, cli, tempDir, writeCorpus } from '../helpers/corpus.js';
import { loadChains, referenceKeepalive, referenceTtl, type Budget } from '../helpers/reference-whatif.js';

const HOME = tempDir('cachelens-home-');
/** ISO time `s` seconds after 2026-03-01 10:00:00 UTC. */
const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 10) + s * 1000).toISOString();

function run(dir: string, args: string[]): any {
  const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC', '--json'], { HOME });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** A one-chain corpus: request k at times[k] with usage us[k]. */
function chain(times: number[], us: Parameters<typeof assistant>[0]['u'][], model = 'claude-opus-4-6'): string {
  return writeCorpus({
    'p/s1.jsonl': times.map((t, k) => assistant({ session: 's1', msg: `msg_${k}`, t: at(t), model, u: us[k] })),
  });
}

/** Write 20,000 at 0, then read 0 and write 20,000 again g seconds later (rw = 20,000). */
const twoRequests = (g: number, ttl: 'w5' | 'w1h' = 'w5') => chain([0, g], [{ [ttl]: 20_000 }, { [ttl]: 20_000 }]);

const row = (ka: any, budget: Budget) => ka.budgets.find((b: any) => b.budget === budget);
const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-6 * Math.max(1, Math.abs(b)), `${what}: ${a} ≠ ${b}`);

/** The product's sweep and the reference's agree on every budget row and on the best budget. */
function sweepAgrees(dir: string, ka: any): void {
  const ref = referenceKeepalive(loadChains([dir]));
  assert.equal(ka.best_budget, ref.best_budget, 'best_budget');
  assert.equal(ka.gaps, ref.gaps, 'gaps');
  ka.budgets.forEach((b: any, i: number) => {
    for (const k of ['budget', 'pings', 'gaps_over_ttl', 'bridged', 'expired_after_budget'] as const) assert.equal(b[k], ref.budgets[i][k], `${b.budget} ${k}`);
    for (const k of ['ping_weight', 'saved_weight', 'net_saving_weight', 'net_saving_usd'] as const) near(b[k], ref.budgets[i][k], `${b.budget} ${k}`);
  });
}

test('keepalive: a gap of exactly I takes no ping; exactly 2I takes one and is bridged; budgets that net the same tie to the smallest', () => {
  // g = 270 s = I: ⌈270/270⌉ − 1 = 0 pings at any budget, ∞ included; 270 ≤ 300 is no gap over the TTL.
  // (rw = 20,000 within the TTL is a break, which no ping saves.)
  const exactlyI = twoRequests(270);
  const a = run(exactlyI, ['whatif', 'keepalive']);
  assert.equal(a.gaps, 1);
  for (const b of a.budgets) assert.deepEqual([b.pings, b.gaps_over_ttl, b.net_saving_weight], [0, 0, 0], `budget ${b.budget}`);
  assert.equal(a.best_budget, 0, 'every budget nets 0: the tie goes to 0');
  sweepAgrees(exactlyI, a);

  // g = 540 s = 2I: ⌈540/270⌉ − 1 = 1 ping; 540 − 270 = 270 ≤ 300: bridged by B = 1.
  //   B = 0: 0 pings, expired;  B ≥ 1 (and ∞): m = min(B, 1) = 1, net 23,000 − 2,087.5 = 20,912.5.
  // B = 1…20 and ∞ all net 20,912.5: the best is the smallest, 1.
  const exactly2I = twoRequests(540);
  const b = run(exactly2I, ['whatif', 'keepalive']);
  assert.deepEqual([row(b, 0).pings, row(b, 0).bridged, row(b, 0).expired_after_budget], [0, 0, 1]);
  for (const budget of [1, 7, 20, 'inf'] as const) {
    const r = row(b, budget);
    assert.deepEqual([r.pings, r.gaps_over_ttl, r.bridged, r.expired_after_budget], [1, 1, 1, 0], `budget ${budget}`);
    near(r.ping_weight, 2_087.5, `${budget} ping_weight`);
    near(r.saved_weight, 23_000, `${budget} saved_weight`);
    near(r.net_saving_weight, 20_912.5, `${budget} net`);
  }
  assert.equal(b.best_budget, 1);
  sweepAgrees(exactly2I, b);
});

test('keepalive: a gap of exactly the TTL is no expiry (its ping is pure cost); g − m·I exactly the TTL is bridged', () => {
  // g = 300 s: not over the TTL (expiry needs g > 300), yet ⌈300/270⌉ − 1 = 1 ping fires:
  // B ≥ 1 costs 2,087.5 for nothing, so the best budget is 0.
  const exactlyTtl = twoRequests(300);
  const a = run(exactlyTtl, ['whatif', 'keepalive']);
  assert.deepEqual([row(a, 1).pings, row(a, 1).gaps_over_ttl, row(a, 1).bridged], [1, 0, 0]);
  near(row(a, 1).net_saving_weight, -2_087.5, 'net at B = 1');
  assert.equal(a.best_budget, 0);
  sweepAgrees(exactlyTtl, a);

  // g = 300 + 2 × 270 = 840 s: ⌈840/270⌉ − 1 = 3 pings without a budget.
  //   B = 1: 840 − 270 = 570 > 300, expired, net −2,087.5.
  //   B = 2: 840 − 540 = 300 ≤ 300, bridged, net 23,000 − 4,175 = 18,825 (the best).
  //   B ≥ 3 and ∞: 3 pings, bridged, net 23,000 − 6,262.5 = 16,737.5.
  const edge = twoRequests(840);
  const b = run(edge, ['whatif', 'keepalive']);
  assert.deepEqual([row(b, 1).bridged, row(b, 1).expired_after_budget], [0, 1]);
  assert.deepEqual([row(b, 2).pings, row(b, 2).bridged, row(b, 2).expired_after_budget], [2, 1, 0]);
  assert.deepEqual([row(b, 'inf').pings, row(b, 'inf').bridged], [3, 1]);
  near(row(b, 1).net_saving_weight, -2_087.5, 'net B = 1');
  near(row(b, 2).net_saving_weight, 18_825, 'net B = 2');
  near(row(b, 'inf').net_saving_weight, 16_737.5, 'net B = ∞');
  assert.equal(b.best_budget, 2);
  // one budget alone gives the same row
  const only2 = run(edge, ['whatif', 'keepalive', '--budget', '2']);
  assert.deepEqual(only2.budgets.map((r: any) => r.budget), [2]);
  near(only2.budgets[0].net_saving_weight, 18_825, '--budget 2');
  sweepAgrees(edge, b);
});

test('keepalive: B = ∞ on a 3-hour gap sends 39 pings and loses; B = 20 expires', () => {
  // g = 10,800 s: ⌈10,800/270⌉ − 1 = 39 pings; 10,800 − 39 × 270 = 270 ≤ 300: bridged.
  //   ∞: net 23,000 − 39 × 2,087.5 = 23,000 − 81,412.5 = −58,412.5.
  //   B = 20: 10,800 − 5,400 = 5,400 > 300, expired: net −20 × 2,087.5 = −41,750. Best: 0.
  // $: −58,412.5 × $5/M = −$0.2920625.
  const dir = twoRequests(10_800);
  const ka = run(dir, ['whatif', 'keepalive']);
  assert.deepEqual([row(ka, 'inf').pings, row(ka, 'inf').bridged, row(ka, 'inf').expired_after_budget], [39, 1, 0]);
  assert.deepEqual([row(ka, 20).pings, row(ka, 20).bridged, row(ka, 20).expired_after_budget], [20, 0, 1]);
  near(row(ka, 'inf').net_saving_weight, -58_412.5, 'net ∞');
  near(row(ka, 'inf').net_saving_usd, -0.2920625, 'net USD ∞');
  near(row(ka, 20).net_saving_weight, -41_750, 'net 20');
  assert.equal(ka.best_budget, 0);
  sweepAgrees(dir, ka);
});

test('a 1-hour chain: keepalive counts no gap; a gap of exactly 1 h is no expiry, 1 h + 1 s is', () => {
  // Two 1-hour chains, 20,000 written at 1 h, then read 0 and 20,000 written again 3,600 s (a
  // break: g ≤ TTL 1 h) or 3,601 s later (an expiry).
  const dir = writeCorpus({
    'p/s1.jsonl': [0, 3_600].map((t, k) => assistant({ session: 's1', msg: `a${k}`, t: at(t), u: { w1h: 20_000 } })),
    'p/s2.jsonl': [0, 3_601].map((t, k) => assistant({ session: 's2', msg: `b${k}`, t: at(t), u: { w1h: 20_000 } })),
  });
  const ka = run(dir, ['whatif', 'keepalive']);
  assert.equal(ka.gaps, 0, 'no gap of a 1-hour chain is pinged');
  for (const b of ka.budgets) assert.deepEqual([b.pings, b.gaps_over_ttl], [0, 0]);
  assert.equal(ka.best_budget, null, 'no gap, no best budget');
  const s1 = run(dir, ['anatomy', '--chain', 's1']).requests[1];
  const s2 = run(dir, ['anatomy', '--chain', 's2']).requests[1];
  assert.deepEqual([s1.break, s1.expiry], [20_000, 0]);
  assert.deepEqual([s2.break, s2.expiry], [0, 20_000]);
  // --to 5m: 1-hour writes at 1.25: baseline 4 × 20,000 × 2 = 160,000, scenario 100,000, no reads to
  // expire (both second requests read 0); f = expiry rewrites with g ≤ 1 h (none: 3,601 > 1 h) / writes = 0.
  const to5m = run(dir, ['whatif', 'ttl', '--to', '5m']);
  near(to5m.baseline_weight, 160_000, 'baseline');
  near(to5m.scenario_weight, 100_000, 'scenario');
  assert.equal(to5m.expiry_share, 0);
  assert.equal(referenceTtl(loadChains([dir]), '5m').expiry_share, 0);
});

test('--to 1h: an expiry after exactly 1 h becomes a read, after 1 h + 1 s it stays a write at the 1-hour weight', () => {
  // s1: 20,000 at 0, then 20,000 again at 3,600 s: expiry ≤ 1 h → a read.
  //   baseline 2 × 25,000 = 50,000; scenario 20,000 × 2 + 20,000 × 0.1 = 42,000; f = 20,000 / 40,000 = 0.5.
  // s2: the same at 3,601 s: still expires → 20,000 × 2. Scenario 80,000; f = 0.
  // Together: baseline 100,000, scenario 122,000, delta +22 %, f = 20,000 / 80,000 = 0.25.
  const dir = writeCorpus({
    'p/s1.jsonl': [0, 3_600].map((t, k) => assistant({ session: 's1', msg: `a${k}`, t: at(t), u: { w5: 20_000 } })),
    'p/s2.jsonl': [0, 3_601].map((t, k) => assistant({ session: 's2', msg: `b${k}`, t: at(t), u: { w5: 20_000 } })),
  });
  const p = run(dir, ['whatif', 'ttl', '--to', '1h']);
  near(p.baseline_weight, 100_000, 'baseline');
  near(p.scenario_weight, 122_000, 'scenario');
  near(p.delta_pct, 22, 'delta');
  near(p.expiry_share, 0.25, 'f');
  near(p.break_even_share, 0.75 / 1.9, 'f*');
  const ref = referenceTtl(loadChains([dir]), '1h');
  near(ref.scenario_weight, 122_000, 'reference scenario');
  near(ref.expiry_share!, 0.25, 'reference f');
});

test('a chain whose TTL switches mid-chain: keepalive pings only the 5-minute gaps; both TTL directions re-price it', () => {
  // #1 t=0      r 0       w5  20,000                   baseline 25,000
  // #2 t=60     r 20,000  w1h  5,000  (TTL now 1 h)    baseline 2,000 + 10,000 = 12,000
  // #3 t=660    r 25,000  w1h  1,000  (gap 600 s, TTL 1 h: no expiry)  2,500 + 2,000 = 4,500
  // #4 t=720    r 26,000  w5   2,000  (TTL back to 5 min)              2,600 + 2,500 = 5,100
  // #5 t=1,260  r 0       w5  28,000  (gap 540 s > 300: expiry rw = min(28,000, 28,000 − 0))  35,000
  // baseline 81,600; write tokens 56,000.
  // Keepalive: gaps after #1 (60 s) and #4 (540 s) are 5-minute gaps; after #2 and #3 the TTL is 1 h.
  //   gaps = 2; over the TTL 1 (540 s); B = 1: ⌈540/270⌉ − 1 = 1 ping of 0.1 × 28,000 + 87.5 = 2,887.5;
  //   540 − 270 = 270: bridged, saving 28,000 × 1.15 = 32,200: net 29,312.5; B ≥ 1 the same: best 1.
  // --to 1h: 5-minute writes at 2 (#1 40,000, #4 2,600 + 4,000), the 540 s expiry a read (#5 2,800):
  //   scenario 40,000 + 12,000 + 4,500 + 6,600 + 2,800 = 65,900; f = 28,000 / 56,000 = 0.5.
  // --to 5m: 1-hour writes at 1.25 (#2 −3,750, #3 −750); #3's gap of 600 s (no expiry) makes its
  //   25,000 reads 5-minute writes (+25,000 × 1.15 = 28,750): scenario 105,850;
  //   f = (25,000 + the 28,000 expiry with g ≤ 1 h) / (56,000 + 25,000) = 53,000 / 81,000.
  const dir = chain([0, 60, 660, 720, 1_260], [
    { w5: 20_000 }, { r: 20_000, w1h: 5_000 }, { r: 25_000, w1h: 1_000 }, { r: 26_000, w5: 2_000 }, { w5: 28_000 },
  ]);
  const ka = run(dir, ['whatif', 'keepalive']);
  assert.equal(ka.gaps, 2);
  assert.deepEqual([row(ka, 1).pings, row(ka, 1).gaps_over_ttl, row(ka, 1).bridged], [1, 1, 1]);
  near(row(ka, 1).net_saving_weight, 29_312.5, 'net B = 1');
  assert.equal(ka.best_budget, 1);
  sweepAgrees(dir, ka);

  const to1h = run(dir, ['whatif', 'ttl', '--to', '1h']);
  near(to1h.baseline_weight, 81_600, '1h baseline');
  near(to1h.scenario_weight, 65_900, '1h scenario');
  near(to1h.expiry_share, 0.5, '1h f');
  const to5m = run(dir, ['whatif', 'ttl', '--to', '5m']);
  near(to5m.scenario_weight, 105_850, '5m scenario');
  near(to5m.expiry_share, 53_000 / 81_000, '5m f');
  const chains = loadChains([dir]);
  near(referenceTtl(chains, '1h').scenario_weight, 65_900, 'reference 1h');
  near(referenceTtl(chains, '5m').scenario_weight, 105_850, 'reference 5m');
  near(referenceTtl(chains, '5m').expiry_share!, 53_000 / 81_000, 'reference 5m f');
});

test('a compaction: the cold restart after it is no keepalive gap; under --to 5m its reads of the shared prefix expire', () => {
  // 5-minute chain: #1 w5 20,000 at 0; compaction; #2 at 600 s reads 0, writes 15,000: cold, no gap.
  const five = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'a0', t: at(0), u: { w5: 20_000 } }),
      { type: 'system', subtype: 'compact_boundary', sessionId: 's1', timestamp: at(300), cwd: '/work/demo', uuid: 'cmp-1', content: 'Conversation compacted' },
      assistant({ session: 's1', msg: 'a1', t: at(600), u: { w5: 15_000 } }),
    ],
  });
  const ka = run(five, ['whatif', 'keepalive']);
  assert.equal(ka.gaps, 0);
  assert.equal(row(ka, 'inf').pings, 0);
  sweepAgrees(five, ka);
  // 1-hour chain: #1 w1h 20,000 at 0; compaction; #2 at 600 s reads 5,000 (the system prompt), writes
  // w1h 10,000. --to 5m: 30,000 × 1.25 + the 5,000 reads, 600 s after #1, as 5-minute writes:
  //   baseline 40,000 + 500 + 20,000 = 60,500; scenario 37,500 + 6,250 = 43,750;
  //   f = 5,000 / (30,000 + 5,000) = 1/7.
  const hour = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'a0', t: at(0), u: { w1h: 20_000 } }),
      { type: 'system', subtype: 'compact_boundary', sessionId: 's1', timestamp: at(300), cwd: '/work/demo', uuid: 'cmp-1', content: 'Conversation compacted' },
      assistant({ session: 's1', msg: 'a1', t: at(600), u: { r: 5_000, w1h: 10_000 } }),
    ],
  });
  const to5m = run(hour, ['whatif', 'ttl', '--to', '5m']);
  near(to5m.baseline_weight, 60_500, 'baseline');
  near(to5m.scenario_weight, 43_750, 'scenario');
  near(to5m.expiry_share, 1 / 7, 'f');
  near(referenceTtl(loadChains([hour]), '5m').expiry_share!, 1 / 7, 'reference f');
});

test('a model without a price: its gaps and pings are counted, its weights are unknown, never $0', () => {
  // claude-mystery-9 (no price): g = 540 s: 1 gap over the TTL, bridged by B = 1 with 1 ping, as any
  // model's; no weight (unpriced_gaps 1), so no best budget; whatif ttl counts 2 unpriced requests.
  const dir = chain([0, 540], [{ w5: 20_000 }, { w5: 20_000 }], 'claude-mystery-9');
  const ka = run(dir, ['whatif', 'keepalive']);
  assert.deepEqual([ka.gaps, ka.unpriced_gaps], [1, 1]);
  assert.deepEqual(ka.unpriced_models, ['claude-mystery-9']);
  assert.deepEqual([row(ka, 1).pings, row(ka, 1).bridged, row(ka, 1).ping_weight], [1, 1, 0]);
  assert.equal(ka.best_budget, null);
  sweepAgrees(dir, ka);
  const ttl = run(dir, ['whatif', 'ttl']);
  assert.deepEqual([ttl.requests, ttl.unpriced_requests, ttl.baseline_weight], [2, 2, 0]);
  assert.deepEqual(ttl.unpriced_models, ['claude-mystery-9']);
  assert.equal(ttl.expiry_share, null, 'no priced write: f is unknown');
  const text = cli(['whatif', 'keepalive', dir, '--db', ':memory:'], { HOME }).stdout;
  assert.match(text, /claude-mystery-9/, 'the text names the unpriced model');
});

test('keepalive buckets: a gap at a model switch counts in the model bucket of request i−1, whose cache its pings keep and whose price they pay', () => {
  // #1 opus  t=0      w5 20,000
  // #2 opus  t=540 s  r 0  w5 20,000: expiry 20,000; B ≥ 1: 1 ping (2,087.5), 540 − 270 ≤ 300 bridged, saves 23,000
  // #3 haiku t=1,080 s r 0  w5 5,000: rw = min(5,000, 20,000) = 5,000 expiry at a model switch; B ≥ 1: 1 ping
  //    of opus's cache at opus's price (2,087.5, $0.0104375), bridged, saving nothing (haiku cannot read opus's cache)
  // Net at B = 1: 23,000 − 4,175 = 18,825 opus weight, the best budget.
  // Model buckets at B = 1: opus has both gaps and both pings (4,175); haiku has no gap and no ping,
  // so its net is 0 (its own weight 5,000 × 1.25 = 6,250 haiku weight). Counted in haiku's bucket
  // instead, the opus ping would be −2,087.5 opus weight over 6,250 haiku weight: −33 %, a mix of units.
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'a0', t: at(0), u: { w5: 20_000 } }),
      assistant({ session: 's1', msg: 'a1', t: at(540), u: { w5: 20_000 } }),
      assistant({ session: 's1', msg: 'a2', t: at(1_080), model: 'claude-haiku-4-5-20251001', u: { w5: 5_000 } }),
    ],
  });
  const ka = run(dir, ['whatif', 'keepalive']);
  assert.equal(ka.best_budget, 1);
  near(row(ka, 1).net_saving_weight, 18_825, 'net B = 1');
  const model = (m: string) => ka.buckets.find((b: any) => b.dimension === 'model' && b.bucket === m);
  const opus = model('claude-opus-4-6');
  const haiku = model('claude-haiku-4-5-20251001');
  assert.deepEqual([opus.gaps, opus.pings, opus.bridged], [2, 2, 2]);
  near(opus.ping_weight, 4_175, 'opus ping weight');
  near(opus.net_saving_weight, 18_825, 'opus net');
  assert.deepEqual([haiku.chains, haiku.requests, haiku.gaps, haiku.pings], [1, 1, 0, 0]);
  near(haiku.baseline_weight, 6_250, 'haiku weight');
  assert.equal(haiku.net_saving_pct, 0);
  const ref = referenceKeepalive(loadChains([dir])).buckets;
  assert.equal(ref.get('model\tclaude-haiku-4-5-20251001')!.pings, 0);
  assert.equal(ref.get('model\tclaude-opus-4-6')!.pings, 2);
});

test('--since: a request just after midnight is classed against the chain’s request before midnight, its gap counted', () => {
  // #1 2026-03-01 23:58:00 w5 20,000; #2 2026-03-02 00:05:00 r 0 w5 20,000: gap 420 s > 300, expiry 20,000.
  // --since 2026-03-02 counts #2 alone, #1 being its context:
  //   --to 1h: baseline 25,000, scenario 20,000 × 0.1 = 2,000, f = 20,000 / 20,000 = 1.
  //   keepalive: 1 gap, over the TTL; B = 1: ⌈420/270⌉ − 1 = 1 ping, 420 − 270 = 150 ≤ 300 bridged:
  //   net 23,000 − 2,087.5 = 20,912.5; best budget 1.
  // --until 2026-03-01 counts #1 alone: no gap.
  const day1 = Date.UTC(2026, 2, 1, 23, 58) / 1000 - Date.UTC(2026, 2, 1, 10) / 1000;
  const dir = writeCorpus({ 'p/s1.jsonl': [day1, day1 + 420].map((t, k) => assistant({ session: 's1', msg: `m${k}`, t: at(t), u: { w5: 20_000 } })) });
  const ttl = run(dir, ['whatif', 'ttl', '--since', '2026-03-02']);
  assert.deepEqual([ttl.requests, ttl.changed_chains], [1, 1]);
  near(ttl.baseline_weight, 25_000, 'baseline');
  near(ttl.scenario_weight, 2_000, 'scenario');
  near(ttl.expiry_share, 1, 'f');
  const ka = run(dir, ['whatif', 'keepalive', '--since', '2026-03-02']);
  assert.deepEqual([ka.gaps, row(ka, 1).pings, row(ka, 1).bridged], [1, 1, 1]);
  near(row(ka, 1).net_saving_weight, 20_912.5, 'net B = 1');
  assert.equal(ka.best_budget, 1);
  assert.equal(run(dir, ['whatif', 'keepalive', '--until', '2026-03-01']).gaps, 0);
  const lo = Date.UTC(2026, 2, 2);
  const ref = referenceKeepalive(loadChains([dir]), { inDays: (t) => t >= lo });
  assert.deepEqual([ref.gaps, ref.best_budget], [1, 1]);
  near(ref.budgets[1].net_saving_weight, 20_912.5, 'reference net B = 1');
});

test('keepalive: a ping is priced by its own prompt (C + ping-in), not by the long-context price of the request before it', () => {
  // Sonnet 4.5 ($3 per million; above 200,000 prompt tokens the whole request is billed at $6 / $22.50).
  // #1 t=0: in 50,000 + w5 160,000: P = 210,000, long context. Its cached prefix C = 160,000.
  // #2 t=540 s: r 0, w5 160,000 (P = 160,000): expiry 160,000.
  // B = 1: one ping, its prompt 160,000 + 30 ≤ 200,000: 16,000 + 37.5 + 50 = 16,087.5 weight at $3/M = $0.0482625
  // (at #1's long-context price it would be $6/M and output at 3.75: wrong). 540 − 270 ≤ 300: bridged,
  // saving 160,000 × 1.15 = 184,000 at #2's $3/M = $0.552. Net $0.5037375.
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'a0', t: at(0), model: 'claude-sonnet-4-5-20250929', u: { in: 50_000, w5: 160_000 } }),
      assistant({ session: 's1', msg: 'a1', t: at(540), model: 'claude-sonnet-4-5-20250929', u: { w5: 160_000 } }),
    ],
  });
  const b1 = run(dir, ['whatif', 'keepalive', '--budget', '1']).budgets[0];
  near(b1.ping_weight, 16_087.5, 'ping weight');
  near(b1.ping_usd, 0.0482625, 'ping USD');
  near(b1.saved_usd, 0.552, 'saved USD');
  near(b1.net_saving_usd, 0.5037375, 'net USD');
});

test('--to 1h: a rewrite of exactly the jitter tolerance (1,024) is an expiry the override saves; 1,023 is growth', () => {
  // #1 w5 20,000 at 0; #2 600 s later reads 18,976 and writes 1,024: rw = min(1,024, 20,000 − 18,976) = 1,024 ≥ 1,024,
  //   an expiry (600 s > 300): scenario 20,000 × 2 + 1,897.6 + 1,024 × 0.1 = 42,000; f = 1,024 / 21,024.
  // With 18,977 read and 1,023 written: rw = 1,023 < 1,024 counts as 0 (jitter): growth, written at 2:
  //   scenario 40,000 + 1,897.7 + 2,046 = 43,943.7; f = 0.
  const exact = chain([0, 600], [{ w5: 20_000 }, { r: 18_976, w5: 1_024 }]);
  const a = run(exact, ['whatif', 'ttl']);
  near(a.baseline_weight, 25_000 + 1_897.6 + 1_280, 'baseline at 1,024');
  near(a.scenario_weight, 42_000, 'scenario at 1,024');
  near(a.expiry_share, 1_024 / 21_024, 'f at 1,024');
  near(referenceTtl(loadChains([exact]), '1h').scenario_weight, 42_000, 'reference at 1,024');
  const under = chain([0, 600], [{ w5: 20_000 }, { r: 18_977, w5: 1_023 }]);
  const b = run(under, ['whatif', 'ttl']);
  near(b.scenario_weight, 43_943.7, 'scenario at 1,023');
  assert.equal(b.expiry_share, 0);
  // --jitter 0 counts the 1,023 as an expiry: scenario 40,000 + 1,897.7 + 102.3 = 42,000
  near(run(under, ['whatif', 'ttl', '--jitter', '0']).scenario_weight, 42_000, 'scenario at 1,023, --jitter 0');
});

test('keepalive --since: a model switch after a request of an earlier day puts that gap in a model bucket with pings and no request, and the table says why', () => {
  // Opus 4.6 ($5 per million), Sonnet 4.5 ($3 per million), both 1 / 1.25 / 2 / 0.1 / 5.
  // #1 opus   2026-03-01 23:58:00  w5 10,000 (before --since 2026-03-02: the context of #2)
  // #2 sonnet 2026-03-02 00:10:00  w5 12,000: gap 720 s, rw = min(12,000, 10,000) = 10,000 expiry at a
  //    model switch; ⌈720/270⌉ − 1 = 2 pings of opus's cache at opus's price, 0.1 × 10,000 + 87.5 = 1,087.5
  //    each, saving nothing (sonnet cannot read opus's cache); bridged from B = 2 (720 − 2·270 = 180 ≤ 300).
  // #3 sonnet 00:19:00 (540 s later) w5 12,000: expiry 12,000; 1 ping of 0.1 × 12,000 + 87.5 = 1,287.5
  //    bridges it (540 − 270 ≤ 300), saving 12,000 × 1.15 = 13,800.
  // Counted: #2 and #3, 12,000 × 1.25 × 2 = 30,000 sonnet weight.
  // B = 1: 13,800 − 1,287.5 − 1,087.5 = 11,425 wt; USD (12,512.5 × 3 − 1,087.5 × 5) / 10⁶ = $0.0321.
  // B = 2: one more opus ping: 10,337.5 wt, $0.02666; B ≥ 2 sends no more (k = 2, 1). Best B = 1.
  // Model buckets at B = 1: opus has 1 chain, 0 requests, the 720 s gap and its 1 ping: −1,087.5, of no
  // weight of its own (net % null); sonnet 30,000 wt, the 540 s gap: 12,512.5 (41.7 %). The two add up to the total.
  const t0 = Date.UTC(2026, 2, 1, 23, 58) / 1000 - Date.UTC(2026, 2, 1, 10) / 1000;
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'm0', t: at(t0), u: { w5: 10_000 } }),
      assistant({ session: 's1', msg: 'm1', t: at(t0 + 720), model: 'claude-sonnet-4-5', u: { w5: 12_000 } }),
      assistant({ session: 's1', msg: 'm2', t: at(t0 + 1_260), model: 'claude-sonnet-4-5', u: { w5: 12_000 } }),
    ],
  });
  const ka = run(dir, ['whatif', 'keepalive', '--since', '2026-03-02']);
  near(ka.baseline_weight, 30_000, 'baseline');
  assert.equal(ka.best_budget, 1);
  near(row(ka, 1).net_saving_weight, 11_425, 'net B = 1');
  near(row(ka, 1).net_saving_usd, 0.0321, 'net USD B = 1');
  near(row(ka, 2).net_saving_weight, 10_337.5, 'net B = 2');
  const model = (m: string) => ka.buckets.find((b: any) => b.dimension === 'model' && b.bucket === m);
  const opus = model('claude-opus-4-6');
  const sonnet = model('claude-sonnet-4-5');
  assert.deepEqual([opus.chains, opus.requests, opus.gaps, opus.pings, opus.bridged, opus.baseline_weight, opus.net_saving_pct], [1, 0, 1, 1, 0, 0, null]);
  near(opus.net_saving_weight, -1_087.5, 'opus net');
  assert.deepEqual([sonnet.requests, sonnet.gaps, sonnet.pings], [2, 1, 1]);
  near(sonnet.net_saving_weight, 12_512.5, 'sonnet net');
  near(sonnet.net_saving_pct, (12_512.5 / 30_000) * 100, 'sonnet net %');
  near(opus.net_saving_weight + sonnet.net_saving_weight, row(ka, 1).net_saving_weight, 'model buckets add up to the total');
  // the reference finds the same bucket (it had none: its buckets came from the requests of the days asked for)
  const ref = referenceKeepalive(loadChains([dir]), { inDays: (t) => t >= Date.UTC(2026, 2, 2) });
  assert.equal(ref.best_budget, 1);
  const refOpus = ref.buckets.get('model\tclaude-opus-4-6')!;
  assert.deepEqual([refOpus.chains, refOpus.requests, refOpus.pings, refOpus.net_saving_pct], [1, 0, 1, null]);
  near(refOpus.net_saving_weight, -1_087.5, 'reference opus net');
  // the table's opus row shows weight 0 and net % —: a line under it says that row is pings alone, and why
  const text = cli(['whatif', 'keepalive', dir, '--db', ':memory:', '--timezone', 'UTC', '--since', '2026-03-02'], { HOME }).stdout;
  assert.match(text, /\nclaude-opus-4-6: no request in the days asked for; its row is the pings on gaps after its request of an earlier day/);
  // without --since #1 is counted: the opus bucket has its request and weight, and no such line
  const all = cli(['whatif', 'keepalive', dir, '--db', ':memory:', '--timezone', 'UTC'], { HOME }).stdout;
  assert.doesNotMatch(all, /no request in the days asked for/);
});

test('--to 5m: a request whose gap was already an expiry keeps its remaining reads (SPEC §5.1: "that was not already an expiry")', () => {
  // #1 t=0    r 0       w1h 10,000  (TTL 1 h)                                 baseline 20,000
  // #2 t=60   r 10,000  w5   5,000  (TTL now 5 min; C = 15,000)               baseline 1,000 + 6,250 = 7,250
  // #3 t=660  r 10,000  w5   5,000  gap 600 s > 5 min: rw = min(5,000, 15,000 − 10,000) = 5,000 expiry;
  //           its 10,000 reads are of #1's 1-hour prefix, still cached        baseline 7,250
  // baseline 34,500. --to 5m: #1 at 1.25 (12,500); #3 was already an expiry, so its reads stay reads
  // (they would have expired at 5 minutes too, +10,000 × 1.15 = 11,500, but SPEC §5.1 converts the reads of a
  // gap "that was not already an expiry" only): scenario 12,500 + 7,250 + 7,250 = 27,000;
  // f = (0 expiring reads + the 5,000 expiry with g ≤ 1 h) / (20,000 writes + 0) = 0.25.
  const dir = chain([0, 60, 660], [{ w1h: 10_000 }, { r: 10_000, w5: 5_000 }, { r: 10_000, w5: 5_000 }]);
  const to5m = run(dir, ['whatif', 'ttl', '--to', '5m']);
  near(to5m.baseline_weight, 34_500, 'baseline');
  near(to5m.scenario_weight, 27_000, 'scenario');
  near(to5m.expiry_share, 0.25, 'f');
  const ref = referenceTtl(loadChains([dir]), '5m');
  near(ref.scenario_weight, 27_000, 'reference scenario');
  near(ref.expiry_share!, 0.25, 'reference f');
});

test('window edges: --since at a request\'s exact millisecond, a chain across the window, --project, an empty window and one of reads only; baselines equal summary\'s', () => {
  // alpha (project /w/alpha, opus, 5-minute):
  //   a0 03-01 23:50:00.000  w5 20,000                cold                     25,000
  //   a1 03-01 23:59:59.999  r 20,000 w5 1,000         growth (rw 0)             3,250
  //   a2 03-02 00:00:00.000  r 21,000 out 100          gap 1 ms; C1 = 21,000     2,100 + 500 = 2,600
  //   a3 03-02 00:10:00.000  r 21,000 out 100          gap 600 s, no write       2,600
  //   a4 03-03 00:00:00.000  w5 21,000                 gap 85,800 s: expiry 21,000 (> 1 h)  26,250
  // beta (project /w/beta): b0 03-02 10:00 w5 5,000 (6,250); b1 10:10 w5 5,000: expiry 5,000 (6,250).
  const dir = writeCorpus({
    'a/s1.jsonl': [
      ['a0', '2026-03-01T23:50:00.000Z', { w5: 20_000 }],
      ['a1', '2026-03-01T23:59:59.999Z', { r: 20_000, w5: 1_000 }],
      ['a2', '2026-03-02T00:00:00.000Z', { r: 21_000, out: 100 }],
      ['a3', '2026-03-02T00:10:00.000Z', { r: 21_000, out: 100 }],
      ['a4', '2026-03-03T00:00:00.000Z', { w5: 21_000 }],
    ].map(([msg, t, u]) => assistant({ session: 's1', msg: msg as string, t: t as string, u: u as object, cwd: '/w/alpha' })),
    'b/s2.jsonl': [
      assistant({ session: 's2', msg: 'b0', t: '2026-03-02T10:00:00.000Z', u: { w5: 5_000 }, cwd: '/w/beta' }),
      assistant({ session: 's2', msg: 'b1', t: '2026-03-02T10:10:00.000Z', u: { w5: 5_000 }, cwd: '/w/beta' }),
    ],
  });
  const day = (d: string) => Date.UTC(2026, 2, Number(d.slice(8)));
  const inDays = (since: string, until?: string) => (t: number) => t >= day(since) && (until === undefined || t < day(until) + 86_400_000);
  const baselineIsSummary = (filters: string[], ttl: any, ka: any) => {
    const s = run(dir, ['summary', ...filters]).totals;
    near(ttl.baseline_weight, s.weight ?? 0, `ttl baseline = summary ${filters.join(' ')}`);
    near(ttl.baseline_usd, s.usd ?? 0, `ttl USD = summary ${filters.join(' ')}`);
    near(ka.baseline_weight, s.weight ?? 0, `keepalive baseline = summary ${filters.join(' ')}`);
    assert.equal(ttl.requests, s.requests);
  };

  // --since/--until 03-02: a2 (stamped exactly at midnight) counts, a1 (a millisecond before) is context.
  // Counted a2, a3, b0, b1: baseline 2,600 + 2,600 + 6,250 + 6,250 = 17,700.
  // --to 1h: both chains change (alpha by its writes of other days); a2, a3 write nothing: 2,600 each;
  //   b0 10,000, b1's expiry a read 500: scenario 15,700; f = 5,000 / 10,000.
  // keepalive: gaps a1→a2 (1 ms), a2→a3 (600 s), b0→b1 (600 s) = 3; each 600 s gap takes ⌈600/270⌉ − 1 = 2
  //   pings and is bridged by 2 (600 − 540 ≤ 300), not by 1. Pings 0.1 × 21,000 + 87.5 = 2,187.5 (a3: nothing
  //   to save, it rewrote nothing) and 0.1 × 5,000 + 87.5 = 587.5 (b1: saves 5,000 × 1.15 = 5,750).
  //   B = 1: −2,775; B = 2: 5,750 − 4,375 − 1,175 = 200, the best.
  let f = ['--since', '2026-03-02', '--until', '2026-03-02'];
  let ttl = run(dir, ['whatif', 'ttl', ...f]);
  let ka = run(dir, ['whatif', 'keepalive', ...f]);
  near(ttl.baseline_weight, 17_700, 'baseline 03-02');
  near(ttl.scenario_weight, 15_700, 'scenario 03-02');
  near(ttl.expiry_share, 0.5, 'f 03-02');
  assert.deepEqual([ttl.requests, ttl.chains, ttl.changed_chains, ka.gaps, ka.best_budget], [4, 2, 2, 3, 2]);
  near(row(ka, 1).net_saving_weight, -2_775, 'net B = 1');
  near(row(ka, 2).net_saving_weight, 200, 'net B = 2');
  baselineIsSummary(f, ttl, ka);
  let chains = loadChains([dir]);
  near(referenceTtl(chains, '1h', 'all', 1024, inDays('2026-03-02', '2026-03-02')).scenario_weight, 15_700, 'reference scenario 03-02');
  assert.equal(referenceKeepalive(chains, { inDays: inDays('2026-03-02', '2026-03-02') }).best_budget, 2);

  // and --project alpha: a2 and a3 alone, reads only (w = 0): baseline 5,200, the scenario the same, f null (no
  // write in the window), the chain still changed (its writes of other days); keepalive: 2 gaps, the 600 s one
  // over the TTL saves nothing: B = 2 nets −4,375, the best budget is 0.
  f = [...f, '--project', 'ALPHA'];
  ttl = run(dir, ['whatif', 'ttl', ...f]);
  ka = run(dir, ['whatif', 'keepalive', ...f]);
  near(ttl.baseline_weight, 5_200, 'baseline alpha');
  near(ttl.scenario_weight, 5_200, 'scenario alpha');
  assert.deepEqual([ttl.expiry_share, ttl.delta_pct, ttl.changed_chains, ka.gaps, ka.best_budget], [null, 0, 1, 2, 0]);
  near(row(ka, 2).net_saving_weight, -4_375, 'net B = 2, alpha');
  baselineIsSummary(f, ttl, ka);
  chains = loadChains([join(dir, 'a')]);
  assert.equal(referenceTtl(chains, '1h', 'all', 1024, inDays('2026-03-02', '2026-03-02')).expiry_share, null);
  assert.equal(referenceKeepalive(chains, { inDays: inDays('2026-03-02', '2026-03-02') }).best_budget, 0);

  // --since 03-03: a4 alone, a3 its context; its expiry is 85,800 s after a3, over 1 h: --to 1h keeps it a
  // write, at 2: 42,000 against 26,250, f = 0 / 21,000. Keepalive: ⌈85,800/270⌉ − 1 = 317 pings bridge it
  // (85,800 − 317 × 270 = 210 ≤ 300); B = 20 leaves it expired; ∞ nets 24,150 − 317 × 2,187.5 = −669,287.5.
  f = ['--since', '2026-03-03'];
  ttl = run(dir, ['whatif', 'ttl', ...f]);
  ka = run(dir, ['whatif', 'keepalive', ...f]);
  near(ttl.scenario_weight, 42_000, 'scenario 03-03');
  assert.equal(ttl.expiry_share, 0);
  assert.deepEqual([row(ka, 20).expired_after_budget, row(ka, 'inf').pings, row(ka, 'inf').bridged, ka.best_budget], [1, 317, 1, 0]);
  near(row(ka, 'inf').net_saving_weight, -669_287.5, 'net ∞');
  baselineIsSummary(f, ttl, ka);

  // a window without a request: zeros, no share, no best budget, no buckets (summary's zeros too)
  f = ['--since', '2026-03-05'];
  ttl = run(dir, ['whatif', 'ttl', ...f]);
  ka = run(dir, ['whatif', 'keepalive', ...f]);
  assert.deepEqual([ttl.requests, ttl.delta_pct, ttl.expiry_share, ttl.break_even_share, ttl.buckets.length], [0, null, null, null, 0]);
  assert.deepEqual([ka.gaps, ka.best_budget, ka.buckets.length], [0, null, 0]);
  baselineIsSummary(f, ttl, ka);
});
