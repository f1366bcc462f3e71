/**
 * `whatif ttl` and `whatif keepalive` through the CLI on tiny hand-written transcripts, at the
 * boundaries a user checking the numbers by hand would try: requests stamped with the same
 * millisecond, a model switch across an expired gap. Opus 4.6 weights 1 / 1.25 / 2 / 0.1 / 5,
 * $5 per million; a ping = 0.1 × C + 30 × 1.25 + 10 × 5 = 0.1 × C + 87.5.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assistant, cli, writeCorpus } from '../helpers/corpus.js';
import { near } from './helpers/fixtures.js';

/** ISO time `s` seconds after 2026-03-01 10:00:00 UTC. */
const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 10) + s * 1000).toISOString();

function json(dir: string, args: string[]): any {
  const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('requests stamped with the same millisecond keep the order of their lines, whatever their ids', () => {
  // In file order: z0 t=0 w 10,000; z2 t=60 s r 10,000 w 2,000; a1 t=60 s r 12,000 w 500 (it reads
  // what z2 wrote, so it came after z2); q3 t=660 s r 0 w 13,000.
  //   z2 growth 2,000 (C 12,000); a1 growth 500 (C 12,500); q3 gap 600 s: expiry 12,500, growth 500.
  // Ordered by id instead (a1 before z2), z2 would read 10,000 of a prefix of 12,500: a break of 2,000.
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'msg_z0', t: at(0), u: { w5: 10_000 } }),
      assistant({ session: 's1', msg: 'msg_z2', t: at(60), u: { r: 10_000, w5: 2_000 } }),
      assistant({ session: 's1', msg: 'msg_a1', t: at(60), u: { r: 12_000, w5: 500 } }),
      assistant({ session: 's1', msg: 'msg_q3', t: at(660), u: { w5: 13_000 } }),
    ],
  });
  const detail = json(dir, ['anatomy', '--chain', 's1']);
  assert.deepEqual(
    detail.requests.map((q: any) => [q.cold, q.growth, q.break, q.expiry]),
    [
      [10_000, 0, 0, 0],
      [0, 2_000, 0, 0],
      [0, 500, 0, 0],
      [0, 500, 0, 12_500],
    ],
  );
  // keepalive at ∞: the 600 s gap takes ⌈600/270⌉ − 1 = 2 pings of 1,250 + 87.5 and saves 12,500 × 1.15;
  // the two 60 s gaps (and the 0 s one) need none
  const ka = json(dir, ['whatif', 'keepalive', '--budget', 'inf']).budgets[0];
  assert.deepEqual([ka.pings, ka.gaps_over_ttl, ka.bridged], [2, 1, 1]);
  near(ka.ping_weight, 2 * 1_337.5);
  near(ka.saved_weight, 12_500 * 1.15);
  // ttl to 1h: the expiry 12,500 (600 s ≤ 1 h) becomes a read; f = 12,500 / 25,500
  const ttl = json(dir, ['whatif', 'ttl']);
  near(ttl.expiry_share, 12_500 / 25_500);
});

test('gaps of exactly the TTL, of exactly 1 hour, and a budget spent exactly at the bridge', () => {
  // one 5-minute chain per gap g: #1 w 10,000, #2 after g r 0 w 10,000 (rw 10,000); baseline 25,000
  const two = (g: number) =>
    writeCorpus({
      'p/s1.jsonl': [assistant({ session: 's1', msg: 'm1', t: at(0), u: { w5: 10_000 } }), assistant({ session: 's1', msg: 'm2', t: at(g), u: { w5: 10_000 } })],
    });
  // ttl to 1h: g = 300 s is inside the TTL (a break, unchanged: both writes at 2 = 40,000, f 0);
  // 301 s and 3,600 s are expiries within the hour (read: 20,000 + 1,000, f 0.5); 3,601 s still expires
  for (const [g, scenario, f] of [
    [300, 40_000, 0],
    [301, 21_000, 0.5],
    [3_600, 21_000, 0.5],
    [3_601, 40_000, 0],
  ] as const) {
    const ttl = json(two(g), ['whatif', 'ttl']);
    near(ttl.baseline_weight, 25_000, `baseline at ${g} s`);
    near(ttl.scenario_weight, scenario, `scenario at ${g} s`);
    near(ttl.expiry_share, f, `f at ${g} s`);
  }
  // keepalive, one ping = 1,000 + 87.5: at B = 1 and ∞
  //   300 s: 1 ping of pure cost, not over the TTL;
  //   540 s = 2·I: 1 ping (the second would fall on the request), 540 − 270 ≤ 300: bridged;
  //   570 s = TTL + I: bridged by B = 1 exactly (570 − 270 = 300); ∞ sends ⌈570/270⌉ − 1 = 2;
  //   571 s: B = 1 leaves 301 > 300: expired; ∞ bridges with 2.
  const pick = (r: any) => [r.budget, r.pings, r.gaps_over_ttl, r.bridged, r.expired_after_budget];
  for (const [g, one, inf] of [
    [300, [1, 1, 0, 0, 0], ['inf', 1, 0, 0, 0]],
    [540, [1, 1, 1, 1, 0], ['inf', 1, 1, 1, 0]],
    [570, [1, 1, 1, 1, 0], ['inf', 2, 1, 1, 0]],
    [571, [1, 1, 1, 0, 1], ['inf', 2, 1, 1, 0]],
  ] as const) {
    const ka = json(two(g), ['whatif', 'keepalive', '--budget', 'sweep']);
    assert.deepEqual(pick(ka.budgets[1]), one, `B = 1 at ${g} s`);
    assert.deepEqual(pick(ka.budgets[21]), inf, `B = ∞ at ${g} s`);
    const bridgedAtOne = one[3] === 1;
    near(ka.budgets[1].net_saving_weight, (bridgedAtOne ? 11_500 : 0) - 1_087.5, `net at B = 1, ${g} s`);
  }
});

test('--budget takes ∞ as the table prints it, and inf in any case, as inf', () => {
  const dir = writeCorpus({
    'p/s1.jsonl': [assistant({ session: 's1', msg: 'm1', t: at(0), u: { w5: 10_000 } }), assistant({ session: 's1', msg: 'm2', t: at(1_200), u: { w5: 10_000 } })],
  });
  const inf = json(dir, ['whatif', 'keepalive', '--budget', 'inf']);
  assert.deepEqual(inf.budgets.map((b: any) => [b.budget, b.pings]), [['inf', 4]]);
  for (const spelling of ['∞', 'Inf', 'INFINITY']) assert.deepEqual(json(dir, ['whatif', 'keepalive', '--budget', spelling]), inf, spelling);
});

test('a chain whose first request writes 1-hour tokens, and a request that writes both TTLs', () => {
  // h1 t=0 w1h 10,000; h2 t=600 s r 10,000 w5 2,000 (9 minutes under the 1-hour TTL: growth);
  // h3 t=1,200 s r 0 w5 12,000: the TTL in force is h2's 5 minutes, so an expiry of 12,000.
  // baseline 20,000 + (1,000 + 2,500) + 15,000 = 38,500
  // to 1h: 20,000 + (1,000 + 4,000) + 1,200 = 26,200; f = 12,000 / 24,000
  const first1h = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'h1', t: at(0), u: { w1h: 10_000 } }),
      assistant({ session: 's1', msg: 'h2', t: at(600), u: { r: 10_000, w5: 2_000 } }),
      assistant({ session: 's1', msg: 'h3', t: at(1_200), u: { w5: 12_000 } }),
    ],
  });
  const ttl = json(first1h, ['whatif', 'ttl']);
  near(ttl.baseline_weight, 38_500);
  near(ttl.scenario_weight, 26_200);
  near(ttl.expiry_share, 0.5);
  // keepalive: h2's gap is under a 1-hour TTL (not a gap of a 5-minute chain); h3's 600 s gap takes
  // 2 pings of 1,200 + 87.5 and bridges 12,000 × 1.15
  const ka = json(first1h, ['whatif', 'keepalive', '--budget', 'inf']);
  assert.equal(ka.gaps, 1);
  near(ka.budgets[0].ping_weight, 2 * 1_287.5);
  near(ka.budgets[0].saved_weight, 13_800);

  // b1 t=0 w5 4,000 + w1h 6,000 (the TTL in force after it: 1 hour); b2 t=600 s r 6,000 w5 4,000:
  // rw 4,000 within the hour is a break. baseline 17,000 + 5,600 = 22,600
  const both = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'b1', t: at(0), u: { w5: 4_000, w1h: 6_000 } }),
      assistant({ session: 's1', msg: 'b2', t: at(600), u: { r: 6_000, w5: 4_000 } }),
    ],
  });
  // to 1h: every write at 2, the break unchanged: 20,000 + 600 + 8,000 = 28,600; no expiry, f = 0
  const up = json(both, ['whatif', 'ttl']);
  near(up.scenario_weight, 28_600);
  assert.equal(up.expiry_share, 0);
  // to 5m: writes at 1.25 and b2's reads (600 s > 5 min) expire: 12,500 + 10,000 × 1.25 = 25,000;
  // f = 6,000 / (14,000 + 6,000)
  const down = json(both, ['whatif', 'ttl', '--to', '5m']);
  near(down.baseline_weight, 22_600);
  near(down.scenario_weight, 25_000);
  near(down.expiry_share, 0.3);
  assert.equal(json(both, ['whatif', 'keepalive']).gaps, 0);
});

test('a request stamped before the line above it (a clock stepped back) takes its place by time: no gap is negative', () => {
  // In file order: m1 t=0 w 10,000; m2 t=600 s r 10,000 w 2,000; m3 t=60 s r 0 w 13,000; m4 t=700 s r 13,000 w 100.
  // By time: m1; m3 gap 60 s: break 10,000, growth 3,000 (C 13,000); m2 gap 540 s: rw = min(2,000, 3,000),
  // expiry 2,000 (C 12,000); m4 gap 100 s: growth 100. In line order m3's gap would be −540 s, "within the TTL".
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'm1', t: at(0), u: { w5: 10_000 } }),
      assistant({ session: 's1', msg: 'm2', t: at(600), u: { r: 10_000, w5: 2_000 } }),
      assistant({ session: 's1', msg: 'm3', t: at(60), u: { w5: 13_000 } }),
      assistant({ session: 's1', msg: 'm4', t: at(700), u: { r: 13_000, w5: 100 } }),
    ],
  });
  const detail = json(dir, ['anatomy', '--chain', 's1']);
  assert.deepEqual(
    detail.requests.map((q: any) => [q.time.slice(11, 19), q.gap_s, q.class]),
    [
      ['10:00:00', null, 'cold'],
      ['10:01:00', 60, 'break'],
      ['10:10:00', 540, 'expiry'],
      ['10:11:40', 100, 'growth'],
    ],
  );
  // keepalive at ∞: 3 gaps, the 540 s one over the TTL (1 ping bridges it); ttl to 1h: f = 2,000 / 25,100
  const ka = json(dir, ['whatif', 'keepalive', '--budget', 'inf']);
  assert.equal(ka.gaps, 3);
  assert.deepEqual([ka.budgets[0].pings, ka.budgets[0].gaps_over_ttl, ka.budgets[0].bridged], [1, 1, 1]);
  near(json(dir, ['whatif', 'ttl']).expiry_share, 2_000 / 25_100);
});
