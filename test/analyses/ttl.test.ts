import { test } from 'node:test';
import assert from 'node:assert/strict';
import { breakEvenShare, whatifTtl } from '../../src/analyses/ttl.js';
import { chain, chainASpecs, HOUR, MIN, near, OPUS, weightsFor } from './helpers/fixtures.js';

const F_STAR = (2 - 1.25) / (2 - 0.1);

test('break-even share f* = (2 − 1.25) / (2 − 0.1) ≈ 0.395, from the weights', () => {
  near(breakEvenShare(OPUS), 0.75 / 1.9);
  assert.equal(breakEvenShare(OPUS)!.toFixed(3), '0.395');
  near(breakEvenShare({ ...OPUS, read: 0.2 }), 0.75 / 1.8);
});

test('no break-even share when a 1-hour write costs no more than a read (a price table may say so): null, not Infinity or NaN', () => {
  // W1h = Wread: forcing 1h changes the cost by the writes alone, whatever f; (2 − 1.25) / 0 was Infinity, 0 / 0 NaN
  for (const w of [{ ...OPUS, write1h: 0.1 }, { ...OPUS, write5m: 0, write1h: 0, read: 0 }, { ...OPUS, write1h: 0.05 }]) {
    assert.equal(breakEvenShare(w), null, JSON.stringify(w));
    for (const to of ['1h', '5m'] as const) {
      // with changed writes (from their sums) and without (from the first priced request)
      for (const specs of [chainASpecs, chainASpecs.map((s) => ({ ...s, ttl: '1h' as const }))]) {
        const res = whatifTtl([chain('A', specs)], { to, weightsFor: () => w });
        assert.equal(res.break_even_share, null, `${to} ${JSON.stringify(w)}`);
        for (const b of res.buckets) assert.equal(b.break_even_share, null);
      }
    }
  }
});

test('to 1h on chain A: every write at 2, the 6-minute expiry becomes a read', () => {
  // baseline 13,010 + 3,755 + 16,505 + 2,180 = 35,450
  // scenario #1 10 + 10,000×2 + 500                 = 20,510
  //          #2 5 + 2,000×2 + 10,000×0.1 + 250      =  5,255
  //          #3 5 + (13,000 − 12,000)×2 + 12,000×0.1 + 250 = 3,455
  //          #4 5 + 500×2 + 13,000×0.1 + 250        =  2,555  → 31,775
  // f = 12,000 / (10,000 + 2,000 + 13,000 + 500) = 12,000 / 25,500
  const res = whatifTtl([chain('A', chainASpecs)], { to: '1h', weightsFor });
  near(res.baseline_weight, 35_450);
  near(res.scenario_weight, 31_775);
  near(res.baseline_usd, 35_450 * 5e-6);
  near(res.scenario_usd, 31_775 * 5e-6);
  near(res.delta_pct, ((31_775 - 35_450) / 35_450) * 100);
  near(res.expiry_share, 12_000 / 25_500);
  near(res.break_even_share, F_STAR);
  assert.equal(res.changed_chains, 1);
});

test('to 1h leaves 1-hour chains unchanged; to 5m leaves 5-minute chains unchanged', () => {
  const oneHour = chain('A1h', chainASpecs.map((s) => ({ ...s, ttl: '1h' as const })));
  const r1 = whatifTtl([oneHour], { to: '1h', weightsFor });
  assert.equal(r1.changed_chains, 0);
  assert.equal(r1.scenario_weight, r1.baseline_weight);
  assert.equal(r1.expiry_share, null);
  near(r1.break_even_share, F_STAR);
  const r2 = whatifTtl([chain('A', chainASpecs)], { to: '5m', weightsFor });
  assert.equal(r2.changed_chains, 0);
  near(r2.scenario_weight, 35_450);
  assert.equal(r2.delta_pct, 0);
});

// Two corpora of a main chain P (expiry after 10 minutes) and a subagent chain Q (expiry after
// 2 hours, which the override does not save). 100 output tokens per request (4 × 500 = 2,000).
//   P: w 3,800 then 5,200 (rw 3,800, growth 1,400)  |  w 4,100 then 4,900 (rw 4,100, growth 800)
//   Q: w 500 then 500 after 2h (rw 500, gap > 1h: still expires, rewritten at 2)
// All writes 10,000 → baseline 12,500 + 2,000 = 14,500 in both.
//   f1 = 3,800 / 10,000 = 0.38 < f*; scenario 7,600 + 1,400×2 + 3,800×0.1 + 1,000×2 + 2,000 = 14,780
//   f2 = 4,100 / 10,000 = 0.41 > f*; scenario 8,200 +   800×2 + 4,100×0.1 + 1,000×2 + 2,000 = 14,210
function corpus(first: number, second: number) {
  const P = chain('P', [
    { t: 0, w: first, output: 100 },
    { t: 10 * MIN, r: 0, w: second, output: 100 },
  ]);
  const Q = chain(
    'Q',
    [
      { t: 0, w: 500, output: 100 },
      { t: 2 * HOUR, r: 0, w: 500, output: 100 },
    ],
    { kind: 'subagent', agentType: 'Explore' },
  );
  return [P, Q];
}

test('expiry share 0.38 < f*: forcing 1h loses (+280 weight, +1.93 %)', () => {
  const res = whatifTtl(corpus(3_800, 5_200), { to: '1h', weightsFor });
  near(res.expiry_share, 0.38);
  near(res.baseline_weight, 14_500);
  near(res.scenario_weight, 14_780);
  near(res.delta_pct, (280 / 14_500) * 100);
  assert.ok(res.delta_pct! > 0 && res.expiry_share! < res.break_even_share!);
  // the same through the closed form: extra weight = 0.75 × 10,000 − 1.9 × 3,800 = 280
  near(0.75 * 10_000 - 1.9 * 3_800, res.scenario_weight - res.baseline_weight);
});

test('expiry share 0.41 > f*: forcing 1h gains (−290 weight, −2.00 %)', () => {
  const res = whatifTtl(corpus(4_100, 4_900), { to: '1h', weightsFor });
  near(res.expiry_share, 0.41);
  near(res.baseline_weight, 14_500);
  near(res.scenario_weight, 14_210);
  near(res.delta_pct, (-290 / 14_500) * 100);
  assert.ok(res.delta_pct! < 0 && res.expiry_share! > res.break_even_share!);
  near(0.75 * 10_000 - 1.9 * 4_100, res.scenario_weight - res.baseline_weight);
});

test('TTL override buckets: main gains while the subagent with a 2-hour gap loses', () => {
  // main P: baseline 9,000×1.25 + 1,000 = 12,250; scenario 7,600 + 2,800 + 380 + 1,000 = 11,780; f = 3,800/9,000
  // subagent Q: baseline 1,000×1.25 + 1,000 = 2,250; scenario 1,000×2 + 1,000 = 3,000; f = 0
  const res = whatifTtl(corpus(3_800, 5_200), { to: '1h', weightsFor });
  const row = (d: string, b: string) => res.buckets.find((x) => x.dimension === d && x.bucket === b)!;
  near(row('kind', 'main').baseline_weight, 12_250);
  near(row('kind', 'main').scenario_weight, 11_780);
  near(row('kind', 'main').delta_pct, ((11_780 - 12_250) / 12_250) * 100);
  near(row('kind', 'main').expiry_share, 3_800 / 9_000);
  near(row('kind', 'subagent').scenario_weight, 3_000);
  near(row('kind', 'subagent').delta_pct, (750 / 2_250) * 100);
  assert.equal(row('kind', 'subagent').expiry_share, 0);
  near(row('agent_type', 'Explore').scenario_weight, 3_000);
  near(row('model', 'opus').scenario_weight, 14_780);
  assert.equal(row('rounds', '1').chains, 2);
  assert.deepEqual(
    res.buckets.map((b) => `${b.dimension}:${b.bucket}`),
    ['kind:main', 'kind:subagent', 'agent_type:main', 'agent_type:Explore', 'model:opus', 'rounds:1'],
  );
});

test('scope selects chains before anything is counted', () => {
  const sub = whatifTtl(corpus(3_800, 5_200), { to: '1h', scope: 'subagents', weightsFor });
  assert.equal(sub.chains, 1);
  near(sub.baseline_weight, 2_250);
  near(sub.scenario_weight, 3_000);
  const main = whatifTtl(corpus(3_800, 5_200), { to: '1h', scope: 'main', weightsFor });
  near(main.baseline_weight, 12_250);
  near(main.scenario_weight, 11_780);
});

test('rounds buckets: 1, 2-3, 4-9, 10+', () => {
  const [P, Q] = corpus(3_800, 5_200);
  const res = whatifTtl([{ ...P!, rounds: 10 }, { ...Q!, rounds: 3 }], { to: '1h', weightsFor });
  assert.deepEqual(
    res.buckets.filter((b) => b.dimension === 'rounds').map((b) => [b.bucket, b.chains]),
    [
      ['2-3', 1],
      ['10+', 1],
    ],
  );
});

test('to 5m on a 1-hour chain: writes at 1.25, reads across a 10-minute gap become writes', () => {
  // h1 t=0 w 10,000; h2 t=10m r 10,000 w 2,000; h3 t=2h10m r 0 w 13,000 (expiry 12,000, gap 2h > 1h); h4 +1m r 13,000 w 500
  // baseline 20,000 + (1,000 + 4,000) + 26,000 + (1,300 + 1,000) = 53,300
  // scenario 12,500 + (10,000 + 2,000)×1.25 + 13,000×1.25 + (1,300 + 625) = 12,500 + 15,000 + 16,250 + 1,925 = 45,675
  // f = 10,000 expiring reads / (25,500 writes + 10,000) = 0.2817 < f*: forcing 5m saves
  const H = chain('H', [
    { t: 0, w: 10_000, ttl: '1h' },
    { t: 10 * MIN, r: 10_000, w: 2_000, ttl: '1h' },
    { t: 2 * HOUR + 10 * MIN, r: 0, w: 13_000, ttl: '1h' },
    { t: 2 * HOUR + 11 * MIN, r: 13_000, w: 500, ttl: '1h' },
  ]);
  const res = whatifTtl([H], { to: '5m', weightsFor });
  near(res.baseline_weight, 53_300);
  near(res.scenario_weight, 45_675);
  near(res.delta_pct, (-7_625 / 53_300) * 100);
  near(res.expiry_share, 10_000 / 35_500);
  assert.ok(res.expiry_share! < res.break_even_share!);
});

test('unpriced requests are left out of both sides and counted', () => {
  const res = whatifTtl([chain('A', chainASpecs), chain('U', [{ t: 0, w: 5_000, model: 'mystery' }])], { to: '1h', weightsFor });
  assert.equal(res.unpriced_requests, 1);
  near(res.baseline_weight, 35_450);
  near(res.expiry_share, 12_000 / 25_500);
});

test('model buckets follow each request as a chain changes model; a chain without requests adds no bucket', () => {
  const mixed = chain('M', [
    { t: 0, w: 1_000, output: 100 },
    { t: MIN, r: 1_000, w: 200, output: 100, model: 'sonnet' },
    { t: 2 * MIN, r: 1_200, w: 300, output: 100 },
    { t: 3 * MIN, r: 1_500, w: 50, output: 100, model: 'unpriced-model' },
  ]);
  const empty = { ...chain('E', []), agentType: 'Plan' };
  const res = whatifTtl([mixed, empty], { to: '1h', weightsFor });
  const rows = res.buckets.filter((b) => b.dimension === 'model').map((b) => [b.bucket, b.chains, b.requests, b.unpriced_requests]);
  assert.deepEqual(rows.sort(), [
    ['opus', 1, 2, 0],
    ['sonnet', 1, 1, 0],
    ['unpriced-model', 1, 1, 1],
  ]);
  // each model's weights add up to the whole, and the chain-level buckets hold every request once
  const byModel = res.buckets.filter((b) => b.dimension === 'model').reduce((sum, b) => sum + b.baseline_weight, 0);
  near(byModel, res.baseline_weight);
  for (const dimension of ['kind', 'agent_type', 'rounds']) {
    assert.deepEqual(res.buckets.filter((b) => b.dimension === dimension).map((b) => [b.chains, b.requests]), [[1, 4]], dimension);
  }
  assert.ok(!res.buckets.some((b) => b.bucket === 'Plan'));
});

test('to 1h: an expiry at a model switch stays a write (the cache is per model; no TTL keeps it for another)', () => {
  // #1 opus t=0 w 10,000; #2 sonnet t=10m r 0 w 10,000: by SPEC §3 an expiry of 10,000 (600 s > 5m),
  // but sonnet could not have read opus's prefix under any TTL: both writes at 2, f = 0 / 20,000.
  // baseline 12,500 × $5e-6 + 12,500 × $3e-6 = $0.10; scenario 20,000 × $5e-6 + 20,000 × $3e-6 = $0.16
  const M = chain('M', [
    { t: 0, w: 10_000 },
    { t: 10 * MIN, w: 10_000, model: 'sonnet' },
  ]);
  const res = whatifTtl([M], { to: '1h', weightsFor });
  near(res.baseline_weight, 25_000);
  near(res.scenario_weight, 40_000);
  near(res.baseline_usd, 0.1);
  near(res.scenario_usd, 0.16);
  assert.equal(res.expiry_share, 0);
  // the same model on both sides: the expiry becomes a read (20,000 + 1,000), f = 0.5
  const same = whatifTtl([chain('S', [{ t: 0, w: 10_000 }, { t: 10 * MIN, w: 10_000 }])], { to: '1h', weightsFor });
  near(same.scenario_weight, 21_000);
  near(same.expiry_share, 0.5);
});

test('to 5m: an expiry at a model switch is not in f either, so f is the same in both directions', () => {
  // #1 opus t=0 w 10,000 (5m); #2 sonnet t=10m r 0 w 10,000 (1h): an expiry at a model switch,
  // which no TTL would have made a read: f = 0 to 1h, and 0 to 5m (it was 10,000 / 20,000 = 0.5 > f*,
  // "forcing 5m costs more", while the scenario saves: 25,000 against 32,500)
  const M = chain('M', [
    { t: 0, w: 10_000 },
    { t: 10 * MIN, w: 10_000, model: 'sonnet', ttl: '1h' },
  ]);
  const to1h = whatifTtl([M], { to: '1h', weightsFor });
  const to5m = whatifTtl([M], { to: '5m', weightsFor });
  assert.equal(to1h.expiry_share, 0);
  assert.equal(to5m.expiry_share, 0);
  near(to5m.baseline_weight, 32_500);
  near(to5m.scenario_weight, 25_000);
});
