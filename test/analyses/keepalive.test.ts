import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../../src/errors.js';
import { pingsFor, whatifKeepalive, type KeepaliveBudgetRow } from '../../src/analyses/keepalive.js';
import { chain, chainASpecs, MIN, near, SEC, weightsFor } from './helpers/fixtures.js';

// Interval 270 s, TTL 300 s, a ping = 0.1 × C + 30 × 1.25 + 10 × 5 = 0.1 × C + 87.5.
//
// A (main, weight 35,450): gaps 60 s, 360 s, 30 s. The 360 s gap (C2 = 12,000, expiry 12,000):
//   m = min(B, ⌈360/270⌉ − 1 = 1); one ping 1,200 + 87.5 = 1,287.5; bridged at m = 1 (360 − 270 = 90 ≤ 300),
//   saving 12,000 × 1.15 = 13,800 → net 12,512.5 for every B ≥ 1.
// K (subagent, weight 25,000 + 3,250 + 27,500 = 55,750):
//   k2 at 280 s: 280 ≤ 300, m = min(B, 1), one ping 2,000 + 87.5 = 2,087.5 of pure cost;
//   k3 1,200 s later (C2 = 21,000, expiry 21,000): m = min(B, 4), one ping 2,100 + 87.5 = 2,187.5,
//   bridged only at m = 4 (1,200 − 1,080 = 120 ≤ 300; 1,200 − 810 = 390 > 300), saving 21,000 × 1.15 = 24,150.
//   B = 1: −2,087.5 − 2,187.5 = −4,275; B = 2: −2,087.5 − 4,375 = −6,462.5; B = 3: −2,087.5 − 6,562.5 = −8,650;
//   B ≥ 4: −2,087.5 − 8,750 + 24,150 = 13,312.5.
// E (subagent, weight 12,500 + 4,150 + 1,325 = 17,975): a 20-minute gap ends in a cold restart after
//   compaction — not a gap; then a 30 s gap: nothing.
// H (main, 1-hour chain, weight 20,000 + 5,000 + 3,200 = 28,200): its 6-minute gap is not a 5-minute gap.
// All weight 35,450 + 55,750 + 17,975 + 28,200 = 137,375; subagent weight 55,750 + 17,975 = 73,725.
const A = chain('A', chainASpecs);
const K = chain(
  'K',
  [
    { t: 0, w: 20_000 },
    { t: 280 * SEC, r: 20_000, w: 1_000 },
    { t: 1_480 * SEC, r: 0, w: 22_000 },
  ],
  { kind: 'subagent' },
);
const E = chain(
  'E',
  [
    { t: 0, w: 10_000 },
    { t: 20 * MIN, r: 4_000, w: 3_000, segment: 1 },
    { t: 20 * MIN + 30 * SEC, r: 7_000, w: 500, segment: 1 },
  ],
  { kind: 'subagent' },
);
const H = chain('H', [
  { t: 0, w: 10_000, ttl: '1h' },
  { t: 1 * MIN, r: 10_000, w: 2_000, ttl: '1h' },
  { t: 7 * MIN, r: 12_000, w: 1_000, ttl: '1h' },
]);

function pick(r: KeepaliveBudgetRow) {
  return [r.budget, r.pings, r.gaps_over_ttl, r.bridged, r.expired_after_budget];
}

test('pings per gap: m = min(B, ⌈g/I⌉ − 1), 0 when g ≤ I', () => {
  const I = 270_000;
  assert.equal(pingsFor(270_000, I, Infinity), 0);
  assert.equal(pingsFor(280_000, I, Infinity), 1);
  assert.equal(pingsFor(540_000, I, Infinity), 1);
  assert.equal(pingsFor(540_001, I, Infinity), 2);
  assert.equal(pingsFor(1_200_000, I, Infinity), 4);
  assert.equal(pingsFor(1_200_000, I, 2), 2);
  assert.equal(pingsFor(1_200_000, I, 0), 0);
});

test('keepalive with budgets 0, 1, 2 and ∞', () => {
  const res = whatifKeepalive([A, K, E, H], { budgets: [0, 1, 2, Infinity], weightsFor });
  assert.equal(res.gaps, 3 + 2 + 1);
  assert.equal(res.unpriced_gaps, 0);
  near(res.baseline_weight, 137_375);
  near(res.subagent_weight, 73_725);
  assert.deepEqual(res.budgets.map(pick), [
    [0, 0, 2, 0, 2],
    [1, 3, 2, 1, 1],
    [2, 4, 2, 1, 1],
    ['inf', 6, 2, 2, 0],
  ]);
  const net = [0, 12_512.5 - 4_275, 12_512.5 - 6_462.5, 12_512.5 + 13_312.5];
  res.budgets.forEach((b, i) => near(b.net_saving_weight, net[i]!, `net at ${b.budget}`));
  const sub = [0, -4_275, -6_462.5, 13_312.5];
  res.budgets.forEach((b, i) => near(b.net_saving_pct_subagent, (sub[i]! / 73_725) * 100, `% subagent at ${b.budget}`));
  res.budgets.forEach((b, i) => near(b.net_saving_pct_all, (net[i]! / 137_375) * 100, `% all at ${b.budget}`));
  const inf = res.budgets[3]!;
  near(inf.ping_weight, 1_287.5 + 2_087.5 + 4 * 2_187.5);
  near(inf.saved_weight, 13_800 + 24_150);
  near(inf.net_saving_usd, 25_825 * 5e-6);
  assert.equal(res.best_budget, 'inf');
});

test('best budget over 0…20 and ∞ is the smallest with the largest net saving', () => {
  const res = whatifKeepalive([K], { weightsFor });
  assert.equal(res.budgets.length, 22);
  assert.equal(res.budgets[21]!.budget, 'inf');
  near(res.budgets[3]!.net_saving_weight, -8_650);
  near(res.budgets[4]!.net_saving_weight, 13_312.5);
  near(res.budgets[20]!.net_saving_weight, 13_312.5);
  near(res.budgets[21]!.net_saving_weight, 13_312.5);
  assert.equal(res.best_budget, 4);
  // pings on the 280 s gap are sent although it turned out shorter than the TTL
  assert.deepEqual(pick(res.budgets[1]!), [1, 2, 1, 0, 1]);
});

test('no gap over the TTL and no pings: every budget nets 0, the tie goes to budget 0', () => {
  const res = whatifKeepalive([H, E], { weightsFor });
  assert.ok(res.budgets.every((b) => b.net_saving_weight === 0 && b.pings === 0 && b.gaps_over_ttl === 0));
  assert.equal(res.best_budget, 0);
});

test('a single budget, custom ping sizes and interval', () => {
  // I = 120 s, pingIn 100, pingOut 0 on K: k2 (280 s) m = min(1, ⌈280/120⌉ − 1 = 2) = 1, ping 2,000 + 125 = 2,125;
  // k3 (1,200 s) m = 1, ping 2,100 + 125 = 2,225, 1,200 − 120 = 1,080 > 300 → expired. Net −4,350.
  const res = whatifKeepalive([K], { weightsFor, budgets: 1, intervalS: 120, pingIn: 100, pingOut: 0 });
  assert.equal(res.budgets.length, 1);
  assert.deepEqual(pick(res.budgets[0]!), [1, 2, 1, 0, 1]);
  near(res.budgets[0]!.net_saving_weight, -4_350);
  assert.equal(res.best_budget, 1);
});

test('gaps touching an unpriced request count in the pings and gaps, their weights are unknown and left out', () => {
  const U = chain('U', [
    { t: 0, w: 5_000, model: 'mystery' },
    { t: 10 * MIN, r: 0, w: 5_000, model: 'mystery' },
  ]);
  const res = whatifKeepalive([U, K], { weightsFor, budgets: [0, Infinity] });
  assert.equal(res.gaps, 3);
  assert.equal(res.unpriced_gaps, 1);
  assert.deepEqual(res.unpriced_models, ['mystery']);
  // U's 600 s gap: over the TTL; at ∞ ⌈600/270⌉ − 1 = 2 pings bridge it (600 − 540 ≤ 300); K's 1 + 4 pings as above
  assert.deepEqual(pick(res.budgets[0]!), [0, 0, 2, 0, 2]);
  assert.deepEqual(pick(res.budgets[1]!), ['inf', 5 + 2, 2, 2, 0]);
  near(res.budgets[1]!.net_saving_weight, 13_312.5);
  near(res.baseline_weight, 55_750);
  assert.equal(res.best_budget, 'inf');
  // nothing priced at all: no net saving to rank, no best budget, but the gaps are counted
  const only = whatifKeepalive([U], { weightsFor });
  assert.equal(only.gaps, 1);
  assert.equal(only.unpriced_gaps, 1);
  assert.equal(only.budgets[21]!.gaps_over_ttl, 1);
  assert.equal(only.budgets[21]!.bridged, 1);
  assert.equal(only.best_budget, null);
  assert.deepEqual(only.buckets, []);
});

test('an interval with a fraction of a second: a gap of exactly k·I needs k − 1 pings', () => {
  // 128.2 s × 1000 is 128199.99999999999 in floating point: ⌈256,400 / that⌉ would be 3
  const F = chain('F', [{ t: 0, w: 20_000 }, { t: 256_400, r: 20_000, w: 1_000 }]);
  const res = whatifKeepalive([F], { weightsFor, budgets: [Infinity], intervalS: 128.2 });
  assert.equal(res.budgets[0]!.pings, 1);
});

test('the best budget per bucket: main vs subagent, agent type, model, rounds', () => {
  const res = whatifKeepalive([A, K, E, H], { weightsFor });
  assert.equal(res.best_budget, 4);
  const row = (d: string, b: string) => res.buckets.find((x) => x.dimension === d && x.bucket === b)!;
  const main = row('kind', 'main');
  const sub = row('kind', 'subagent');
  assert.equal(main.chains, 2);
  assert.equal(sub.chains, 2);
  near(main.net_saving_weight, 12_512.5);
  near(sub.net_saving_weight, 13_312.5);
  near(main.baseline_weight, 35_450 + 28_200);
  near(sub.baseline_weight, 73_725);
  near(sub.net_saving_pct, (13_312.5 / 73_725) * 100);
  assert.deepEqual([sub.pings, sub.gaps_over_ttl, sub.bridged, sub.expired_after_budget, sub.gaps], [5, 1, 1, 0, 3]);
  // each dimension splits the same totals
  for (const d of ['kind', 'agent_type', 'model', 'rounds']) {
    const rows = res.buckets.filter((x) => x.dimension === d);
    near(rows.reduce((n, x) => n + x.net_saving_weight, 0), 12_512.5 + 13_312.5, `net over ${d}`);
    near(rows.reduce((n, x) => n + x.baseline_weight, 0), 137_375, `weight over ${d}`);
    assert.equal(rows.reduce((n, x) => n + x.chains, 0), 4, `chains over ${d}`);
  }
});

test('--scope subagents pings only subagent chains; main chains stay in every weight', () => {
  const res = whatifKeepalive([A, K, E, H], { budgets: [0, 1, 4, Infinity], scope: 'subagents', weightsFor });
  assert.equal(res.scope, 'subagents');
  // K's two gaps and E's one; A's three gaps are not pinged
  assert.equal(res.gaps, 3);
  near(res.baseline_weight, 137_375);
  near(res.subagent_weight, 73_725);
  assert.deepEqual(res.budgets.map(pick), [
    [0, 0, 1, 0, 1],
    [1, 2, 1, 0, 1],
    [4, 5, 1, 1, 0],
    ['inf', 5, 1, 1, 0],
  ]);
  const net = [0, -4_275, 13_312.5, 13_312.5];
  res.budgets.forEach((b, i) => near(b.net_saving_weight, net[i]!, `net at ${b.budget}`));
  res.budgets.forEach((b, i) => near(b.net_saving_pct_subagent, (net[i]! / 73_725) * 100, `% subagent at ${b.budget}`));
  // the saving over the whole bill, main threads' weight included
  res.budgets.forEach((b, i) => near(b.net_saving_pct_all, (net[i]! / 137_375) * 100, `% all at ${b.budget}`));
  assert.equal(res.best_budget, 4);
  const main = res.buckets.find((x) => x.dimension === 'kind' && x.bucket === 'main')!;
  assert.deepEqual([main.chains, main.gaps, main.pings, main.net_saving_weight], [2, 0, 0, 0]);
  near(main.baseline_weight, 35_450 + 28_200);

  const mainOnly = whatifKeepalive([A, K, E, H], { budgets: [1], scope: 'main', weightsFor });
  assert.equal(mainOnly.gaps, 3);
  near(mainOnly.budgets[0]!.net_saving_weight, 12_512.5);
  near(mainOnly.budgets[0]!.net_saving_weight_subagent, 0);
  near(mainOnly.budgets[0]!.net_saving_pct_all, (12_512.5 / 137_375) * 100);
  // the default pings every chain: the two scopes split its gaps
  assert.equal(whatifKeepalive([A, K, E, H], { budgets: [1], weightsFor }).gaps, mainOnly.gaps + res.gaps);
  assert.throws(() => whatifKeepalive([K], { weightsFor, scope: 'some' as 'all' }), UsageError);
});

test('a bridged rewrite written at the 1-hour weight saves what it paid: rw × (2 − 0.1), as anatomy prices its waste', () => {
  // #1 t=0 w 10,000 (5-minute); #2 t=600 s r 0 w 10,000 written at 1 hour: an expiry of 10,000 (the
  // TTL in force is #1's 5 minutes), billed at 2. Two pings (⌈600/270⌉ − 1) of 1,000 + 87.5 bridge it
  // (600 − 540 ≤ 300): saving 10,000 × 1.9 = 19,000, net 16,825 (SPEC's 1.25 − 0.1 would say 9,325).
  const c = chain('X', [
    { t: 0, w: 10_000 },
    { t: 600 * SEC, r: 0, w: 10_000, ttl: '1h' },
  ]);
  const res = whatifKeepalive([c], { budgets: [1, 2], weightsFor });
  assert.deepEqual(res.budgets.map(pick), [
    [1, 1, 1, 0, 1],
    [2, 2, 1, 1, 0],
  ]);
  near(res.budgets[1]!.saved_weight, 19_000);
  near(res.budgets[1]!.net_saving_weight, 19_000 - 2 * 1_087.5);
  // a 5-minute rewrite keeps SPEC's figure
  const five = whatifKeepalive([chain('Y', [{ t: 0, w: 10_000 }, { t: 600 * SEC, r: 0, w: 10_000 }])], { budgets: [2], weightsFor });
  near(five.budgets[0]!.saved_weight, 11_500);
});

test('ping sizes must be whole numbers of tokens, not negative', () => {
  for (const bad of [-1, 1.5, Number.NaN, Infinity]) {
    assert.throws(() => whatifKeepalive([K], { weightsFor, pingIn: bad }), UsageError);
    assert.throws(() => whatifKeepalive([K], { weightsFor, pingOut: bad }), UsageError);
  }
});

test('an interval not below the 5-minute TTL or a negative budget is refused', () => {
  assert.throws(() => whatifKeepalive([K], { weightsFor, intervalS: 300 }), UsageError);
  assert.throws(() => whatifKeepalive([K], { weightsFor, budgets: [-1] }), UsageError);
  assert.throws(() => whatifKeepalive([K], { weightsFor, budgets: [1.5] }), UsageError);
});

test('pings keep the cache of the model that wrote it: an expiry at a model switch is bridged but saves nothing', () => {
  // #1 opus t=0 w 10,000; #2 sonnet t=600 s r 0 w 10,000 (expiry 10,000 by SPEC §3, at a model switch).
  // ⌈600/270⌉ − 1 = 2 opus pings of 1,000 + 87.5 keep opus's prefix, which sonnet cannot read: net −2,175.
  const M = chain('M', [
    { t: 0, w: 10_000 },
    { t: 600 * SEC, w: 10_000, model: 'sonnet' },
  ]);
  const row = whatifKeepalive([M], { weightsFor, budgets: [Infinity] }).budgets[0]!;
  assert.deepEqual(pick(row), ['inf', 2, 1, 1, 0]);
  near(row.ping_weight, 2_175);
  assert.equal(row.saved_weight, 0);
  near(row.net_saving_weight, -2_175);
});

test('interval_s is the interval the pings were counted at, in whole milliseconds, not the flag\'s digits past them', () => {
  // a 10-minute gap: at 0.6 ms a ping would be ⌈600,000 / 0.6⌉ − 1; counted at 1 ms it is 599,999
  const c = chain('X', [{ t: 0, w: 10_000 }, { t: 600 * SEC, r: 0, w: 10_000 }]);
  const res = whatifKeepalive([c], { intervalS: 0.0006, budgets: [Infinity], weightsFor });
  assert.equal(res.budgets[0]!.pings, 599_999);
  assert.equal(res.interval_s, 0.001);
  assert.equal(whatifKeepalive([c], { intervalS: 270.0004, budgets: [1], weightsFor }).interval_s, 270);
  assert.equal(whatifKeepalive([c], { intervalS: 270, budgets: [1], weightsFor }).interval_s, 270);
});
