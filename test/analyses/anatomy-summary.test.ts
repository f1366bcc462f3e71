import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AnatomyAnalysis, analyzeAnatomy, chainDetail, roundTotals } from '../../src/analyses/anatomy-summary.js';
import { detectRepurchase } from '../../src/analyses/repurchase.js';
import { anatomizeChain } from '../../src/analyses/anatomy.js';
import { chain, chainASpecs, MIN, near, OPUS, SEC, weightsFor, type ReqSpec } from './helpers/fixtures.js';
import type { ChainInput, WeightsFor } from '../../src/analyses/chain.js';

// Chain A (main, opus, 5m): weights by request at 1 / 1.25 / 0.1 / 5
//   #1 10 + 10,000×1.25 + 100×5            = 13,010
//   #2 5 + 2,000×1.25 + 10,000×0.1 + 50×5  =  3,755
//   #3 5 + 13,000×1.25 + 50×5              = 16,505
//   #4 5 + 500×1.25 + 13,000×0.1 + 50×5    =  2,180   → 35,450; waste 12,000 × (1.25 − 0.1) = 13,800
// Chain B (subagent Explore): #1,#2 opus, #3,#4 sonnet ($3/M), three breaks of 6,000, 12,000, 12,000
//   #1 10,000×1.25 = 12,500; #2 4,000×0.1 + 8,000×1.25 = 10,400; #3, #4 12,000×1.25 = 15,000 each → 52,900
//   waste (6,000 + 12,000 + 12,000) × 1.15 = 34,500
// Chain U: an unpriced model; an expiry of 2,000 after 10 minutes (C1 = 2,000, r 0).
const A = chain('A', chainASpecs);
/** Sums of tenths in floating point, to a millionth. */
const round = (x: number) => Math.round(x * 1e6) / 1e6;
const B = chain(
  'B',
  [
    { t: 0, w: 10_000 },
    { t: 30 * SEC, r: 4_000, w: 8_000 },
    { t: 60 * SEC, r: 0, w: 12_000, model: 'sonnet' },
    { t: 6 * MIN, r: 0, w: 12_000, model: 'sonnet' },
  ],
  { kind: 'subagent', agentType: 'Explore', events: [{ t: 20 * SEC, kind: 'attachment', detail: 'skill_listing' }] },
);
const U = chain('U', [
  { t: 0, w: 2_000, model: 'mystery' },
  { t: 10 * MIN, r: 0, w: 2_000, model: 'mystery' },
]);

test('anatomy totals: tokens by cause, hit ratio, weight, waste, unpriced requests never $0', () => {
  const res = analyzeAnatomy([A, B, U], { weightsFor });
  const t = res.totals;
  assert.equal(t.chains, 3);
  assert.equal(t.requests, 10);
  assert.equal(t.unpriced_requests, 2);
  assert.equal(t.cold, 10_000 + 10_000 + 2_000);
  assert.equal(t.growth, 2_000 + 1_000 + 500 + 2_000);
  assert.equal(t.expiry, 12_000 + 2_000);
  assert.equal(t.break, 6_000 + 12_000 + 12_000);
  assert.equal(t.break_events, 3);
  // Σr = 23,000 (A) + 4,000 (B); ΣP = 48,525 (A: 10,010 + 12,005 + 13,005 + 13,505) + 46,000 (B) + 4,000 (U)
  near(t.hit_ratio, 27_000 / 98_525, 'hit ratio');
  near(t.weight, 35_450 + 52_900, 'weight');
  near(t.usd, 35_450 * 5e-6 + 22_900 * 5e-6 + 30_000 * 3e-6, 'usd');
  near(t.waste_weight, 13_800 + 34_500, 'waste');
  near(t.waste_usd, 13_800 * 5e-6 + 6_000 * 1.15 * 5e-6 + 24_000 * 1.15 * 3e-6, 'waste usd');
  // writes (25,500 + 42,000) × 1.25 = 84,375; reads 23,000×0.1 + 4,000×0.1 = 2,700
  near(t.write_read_ratio, 84_375 / 2_700, 'write:read');
  near(t.components.write5m, 84_375, 'write5m');
  near(t.components.output, 250 * 5 + 0, 'output');
  assert.deepEqual(res.unpriced_models, [{ model: 'mystery', requests: 2 }]);
  // the write weight split like the tokens, unpriced U left out: all at 1.25 here
  near(t.anatomy_weight.cold, 20_000 * 1.25, 'cold weight');
  near(t.anatomy_weight.growth, 5_500 * 1.25, 'growth weight');
  near(t.anatomy_weight.expiry, 12_000 * 1.25, 'expiry weight');
  near(t.anatomy_weight.break, 30_000 * 1.25, 'break weight');
  near(t.anatomy_usd.break, 6_000 * 1.25 * 5e-6 + 24_000 * 1.25 * 3e-6, 'break usd');
});

test('anatomy weight of a 1-hour chain uses the 1-hour write price', () => {
  const res = analyzeAnatomy([chain('A1h', chainASpecs.map((s) => ({ ...s, ttl: '1h' as const })))], { weightsFor });
  near(res.totals.anatomy_weight.cold, 10_000 * 2);
  near(res.totals.anatomy_weight.break, 12_000 * 2);
  near(res.totals.anatomy_weight.growth, 3_500 * 2);
});

test('anatomy rows per chain, agent type and model, sorted by cost (USD)', () => {
  const res = analyzeAnatomy([A, B, U], { weightsFor });
  assert.deepEqual(res.chains.map((c) => [c.chain_id, c.agent_type, c.requests, c.cold, c.growth, c.expiry, c.break]), [
    ['B', 'Explore', 4, 10_000, 2_000, 0, 30_000],
    ['A', 'main', 4, 10_000, 3_500, 12_000, 0],
    ['U', 'main', 2, 2_000, 0, 2_000, 0],
  ]);
  near(res.chains[1]!.weight, 35_450);
  near(res.chains[1]!.waste_weight, 13_800);
  assert.equal(res.chains[2]!.weight, 0);
  assert.equal(res.chains[2]!.unpriced_requests, 2);
  // B: 2 opus and 2 sonnet requests, the tie goes to the first model seen
  assert.deepEqual(res.chains.map((c) => c.model), ['opus', 'opus', 'mystery']);
  assert.deepEqual(res.by_agent_type.map((r) => [r.agent_type, r.chains, r.requests]), [
    ['Explore', 1, 4],
    ['main', 2, 6],
  ]);
  // opus: A + B#1,#2 = 35,450 + 22,900; sonnet: B#3,#4 = 30,000 with both 12,000 breaks
  assert.deepEqual(res.by_model.map((r) => [r.model, r.chains, r.requests, r.break, r.break_events]), [
    ['opus', 2, 6, 6_000, 1],
    ['sonnet', 1, 2, 24_000, 2],
    ['mystery', 1, 2, 0, 0],
  ]);
  near(res.by_model[0]!.weight, 58_350);
  near(res.by_model[1]!.usd, 30_000 * 3e-6);
});

test('anatomy rows per project and per session (SPEC §3), sorted by cost (USD); sums only without lists', () => {
  // A and B in session s1 of /p/one, U in session s2 of no known project
  const inProject = (c: typeof A, project: string | null, sessionId: string) => ({ ...c, project, sessionId });
  const chains = [inProject(A, '/p/one', 's1'), inProject(B, '/p/one', 's1'), inProject(U, null, 's2')];
  const res = analyzeAnatomy(chains, { weightsFor });
  assert.deepEqual(res.by_project.map((r) => [r.project, r.chains, r.requests, r.expiry, r.break]), [
    ['/p/one', 2, 8, 12_000, 30_000],
    ['unknown', 1, 2, 2_000, 0],
  ]);
  near(res.by_project[0]!.weight, 35_450 + 52_900);
  near(res.by_project[0]!.waste_weight, 13_800 + 34_500);
  assert.deepEqual(res.by_session.map((r) => [r.session_id, r.project, r.chains, r.requests, r.unpriced_requests]), [
    ['s1', '/p/one', 2, 8, 0],
    ['s2', null, 1, 2, 2],
  ]);
  assert.deepEqual(res.chains.map((c) => [c.chain_id, c.project]), [['B', '/p/one'], ['A', '/p/one'], ['U', null]]);
  const sums = new AnatomyAnalysis({ weightsFor }, { lists: false });
  for (const c of chains) sums.add(c);
  const r = sums.result();
  assert.deepEqual(r.by_session, []);
  assert.equal(r.by_project.length, 2);
});

test('break causes: the preceding attachment, the model change, else unknown', () => {
  const res = analyzeAnatomy([A, B, U], { weightsFor });
  // weights: 12,000 × 1.25 = 15,000 (sonnet, $3/M), 6,000 × 1.25 = 7,500 (opus, $5/M); waste at 1.15 a token
  assert.deepEqual(
    res.break_causes.map((c) => [c.cause, c.events, c.tokens, c.weight, round(c.waste_weight), c.unpriced_events]),
    [
      ['model:opus→sonnet', 1, 12_000, 15_000, 13_800, 0],
      ['unknown', 1, 12_000, 15_000, 13_800, 0],
      ['attachment:skill_listing', 1, 6_000, 7_500, 6_900, 0],
    ],
  );
  near(res.break_causes[0]!.usd, 15_000 * 3e-6);
  assert.deepEqual(res.breaks.map((b) => [b.chain_id, b.tokens, b.gap_s, b.causes, b.weight]), [
    ['B', 12_000, 30, ['model:opus→sonnet'], 15_000],
    ['B', 12_000, 300, [], 15_000],
    ['B', 6_000, 30, ['attachment:skill_listing'], 7_500],
  ]);
});

test('breaks and their causes rank by what they cost, not by tokens', () => {
  // F: a 5-minute chain's break of 12,000 after a skill_listing: 15,000 wt.
  // G: a 1-hour chain's break of 10,000 after a todo_reminder: 20,000 wt (fewer tokens, more cost).
  const F = chain('F', [{ t: 0, w: 12_000 }, { t: 60 * SEC, r: 0, w: 12_000 }], { events: [{ t: 30 * SEC, kind: 'attachment', detail: 'skill_listing' }] });
  const G = chain('G', [{ t: 0, w: 10_000, ttl: '1h' }, { t: 10 * MIN, r: 0, w: 10_000, ttl: '1h' }], { events: [{ t: 5 * MIN, kind: 'attachment', detail: 'todo_reminder' }] });
  const res = analyzeAnatomy([F, G], { weightsFor });
  assert.deepEqual(res.breaks.map((b) => [b.chain_id, b.tokens, b.weight, round(b.waste_weight!)]), [
    ['G', 10_000, 20_000, 19_000],
    ['F', 12_000, 15_000, 13_800],
  ]);
  assert.deepEqual(res.break_causes.map((c) => c.cause), ['attachment:todo_reminder', 'attachment:skill_listing']);
  // across models, by USD: sonnet's 12,000-token break (15,000 wt, $0.045) after opus's 8,000 (10,000 wt, $0.05)
  const S = chain('S', [{ t: 0, w: 12_000, model: 'sonnet' }, { t: 60 * SEC, r: 0, w: 12_000, model: 'sonnet' }]);
  const O = chain('O', [{ t: 0, w: 8_000 }, { t: 60 * SEC, r: 0, w: 8_000 }]);
  assert.deepEqual(analyzeAnatomy([S, O], { weightsFor }).breaks.map((b) => [b.chain_id, b.weight]), [['O', 10_000], ['S', 15_000]]);
});

test('waste is at the write price the rewrite paid: a 1-hour chain rewriting at 5 minutes pays 1.25 a token', () => {
  // #1 writes 1-hour tokens; 10 minutes later (within the 1-hour TTL: a break) 10,000 are rewritten at 5 minutes:
  // the rewrite weighs 12,500, its waste 10,000 × (1.25 − 0.1) = 11,500, not 10,000 × (2 − 0.1) = 19,000.
  const M = chain('M', [{ t: 0, w: 10_000, ttl: '1h' }, { t: 10 * MIN, r: 0, w: 10_000 }]);
  const res = analyzeAnatomy([M], { weightsFor });
  assert.equal(res.totals.break, 10_000);
  near(res.totals.anatomy_weight.break, 12_500);
  near(res.totals.waste_weight, 11_500);
  // and the reverse: 1-hour tokens after 5-minute ones are paid at 2
  const R = chain('R', [{ t: 0, w: 10_000 }, { t: 2 * MIN, r: 0, w: 10_000, ttl: '1h' }]);
  near(analyzeAnatomy([R], { weightsFor }).totals.waste_weight, 19_000);
});

test('waste of a break under a 1-hour TTL uses the 1-hour write weight', () => {
  // A with 1-hour writes: #3 is a break of 12,000; waste 12,000 × (2 − 0.1) = 22,800.
  const res = analyzeAnatomy([chain('A1h', chainASpecs.map((s) => ({ ...s, ttl: '1h' as const })))], { weightsFor });
  assert.equal(res.totals.break, 12_000);
  near(res.totals.waste_weight, 22_800);
});

// One request per round, the pattern of the field note (reads pinned near 13.8k):
//   round 1: r 13,800  w 120,000                                           C = 133,800
//   round 2: r 13,818  w 131,000  rw = min(131,000, 119,982) = 119,982 ≥ 107,040   C = 144,818
//   round 3: r 13,810  w 140,000  rw = min(140,000, 131,008) = 131,008 ≥ 115,854.4
const repurchaseSpecs: ReqSpec[] = [
  { t: 0, r: 13_800, w: 120_000, round: 1 },
  { t: 1 * MIN, r: 13_818, w: 131_000, round: 2 },
  { t: 2 * MIN, r: 13_810, w: 140_000, round: 3 },
];

test('re-purchase pattern: flagged with 3 rounds of pinned reads and full rewrites', () => {
  const check = detectRepurchase(anatomizeChain(chain('R', repurchaseSpecs)));
  assert.deepEqual(check, { flagged: true, rounds: 3, readMedian: 13_810 });
  // a second request inside a round does not count as a round start
  const withFollowUps = chain('R', [
    repurchaseSpecs[0]!,
    { t: 10 * SEC, r: 133_800, w: 1_000, round: 1 },
    { ...repurchaseSpecs[1]!, w: 132_000 },
    repurchaseSpecs[2]!,
  ]);
  // round 2: C = 134,800, rw = min(132,000, 120,982) = 120,982 ≥ 107,840; round 3: C = 145,818, rw = min(140,000, 132,008) ≥ 116,654.4
  assert.equal(detectRepurchase(anatomizeChain(withFollowUps)).flagged, true);
  assert.deepEqual(
    chainDetail(withFollowUps, { weightsFor }).by_round.map((r) => [r.round, r.requests, r.read, r.write, r.rewrite]),
    [
      [1, 2, 13_800 + 133_800, 120_000 + 1_000, 0],
      [2, 1, 13_818, 132_000, 120_982],
      [3, 1, 13_810, 140_000, 132_008],
    ],
  );
});

test('re-purchase pattern: not flagged with 2 rounds, a read 1,025 off the median, or a partial rewrite', () => {
  const flagged = (specs: ReqSpec[]) => detectRepurchase(anatomizeChain(chain('R', specs))).flagged;
  assert.equal(flagged(repurchaseSpecs.slice(0, 2)), false);
  // reads 13,800 / 13,818 / 14,843: median 13,818, 14,843 − 13,818 = 1,025 > 1,024
  // (round 3 rw = min(140,000, 144,818 − 14,843 = 129,975) ≥ 115,854.4 still holds)
  assert.equal(flagged([repurchaseSpecs[0]!, repurchaseSpecs[1]!, { ...repurchaseSpecs[2]!, r: 14_843 }]), false);
  // exactly 1,024 off (14,842) is within
  assert.equal(flagged([repurchaseSpecs[0]!, repurchaseSpecs[1]!, { ...repurchaseSpecs[2]!, r: 14_842 }]), true);
  // round 3 writes 100,000: rw = min(100,000, 131,008) = 100,000 < 115,854.4
  assert.equal(flagged([repurchaseSpecs[0]!, repurchaseSpecs[1]!, { ...repurchaseSpecs[2]!, w: 100_000 }]), false);
});

test('flagged chains are ranked by waste, not by weight', () => {
  // R: waste (119,982 + 131,008) × 1.15 = 288,638.5
  //    weight (120,000 + 131,000 + 140,000) × 1.25 + (13,800 + 13,818 + 13,810) × 0.1 = 492,892.8
  // S: reads 1,000, writes 20,000 / 25,000 / 30,000: rw 20,000 ≥ 16,800 and 25,000 ≥ 20,800;
  //    waste 45,000 × 1.15 = 51,750; 100,000 output tokens per request make its weight
  //    75,000 × 1.25 + 3,000 × 0.1 + 100,000 × 3 × 5 = 93,750 + 300 + 1,500,000 = 1,594,050.
  const R = chain('R', repurchaseSpecs);
  const S = chain('S', [
    { t: 0, r: 1_000, w: 20_000, output: 100_000, round: 1 },
    { t: 1 * MIN, r: 1_000, w: 25_000, output: 100_000, round: 2 },
    { t: 2 * MIN, r: 1_000, w: 30_000, output: 100_000, round: 3 },
  ]);
  const res = analyzeAnatomy([R, S, A], { weightsFor });
  assert.deepEqual(res.chains.map((c) => [c.chain_id, c.repurchase]), [
    ['S', true],
    ['R', true],
    ['A', false],
  ]);
  assert.deepEqual(res.repurchase.map((r) => r.chain_id), ['R', 'S']);
  near(res.repurchase[0]!.waste_weight, 288_638.5);
  near(res.repurchase[0]!.weight, 492_892.8);
  near(res.repurchase[1]!.waste_weight, 51_750);
  near(res.chains[0]!.weight, 1_594_050);
});

test('chain detail: one row per request with gap, P, r, w, rewrite and class', () => {
  const d = chainDetail(A, { weightsFor });
  assert.deepEqual(
    d.requests.map((q) => [q.gap_s, q.ttl, q.p, q.r, q.w, q.cached_prefix, q.rewrite, q.class, q.weight]),
    [
      [null, null, 10_010, 0, 10_000, 0, 0, 'cold', 13_010],
      [60, '5m', 12_005, 10_000, 2_000, 10_000, 0, 'growth', 3_755],
      [360, '5m', 13_005, 0, 13_000, 12_000, 12_000, 'expiry', 16_505],
      [30, '5m', 13_505, 13_000, 500, 13_000, 0, 'growth', 2_180],
    ],
  );
  assert.equal(d.requests[2]!.time, '1970-01-01T00:07:00.000Z');
  near(d.requests[2]!.waste_weight, 13_800);
  near(d.summary.weight, 35_450);
  assert.equal(d.summary.expiry, 12_000);
  assert.equal(d.repurchase, false);
  const u = chainDetail(U, { weightsFor });
  assert.deepEqual(u.requests.map((q) => q.weight), [null, null]);
});

test('a chain’s sums per round without its rows (the report’s top chains) are its detail’s', () => {
  const chains = [
    A,
    U,
    chain('R', repurchaseSpecs),
    chain('F', [repurchaseSpecs[0]!, { t: 10 * SEC, r: 133_800, w: 1_000, round: 1 }, { ...repurchaseSpecs[1]!, w: 132_000 }, repurchaseSpecs[2]!]),
  ];
  for (const c of chains) assert.deepEqual(roundTotals(c, { weightsFor }), chainDetail(c, { weightsFor }).by_round, c.chainId);
  // U is unpriced: its rounds' weight is null, as in the detail
  assert.deepEqual(roundTotals(U, { weightsFor }).map((r) => r.weight), chainDetail(U, { weightsFor }).by_round.map(() => null));
  assert.deepEqual(roundTotals(chains[3]!, { weightsFor }).map((r) => [r.round, r.requests, r.rewrite]), [[1, 2, 0], [2, 1, 120_982], [3, 1, 132_008]]);
});

test('unpriced_tokens: the tokens of the requests without a price, by class then by component, in the order --json has written them', () => {
  const res = analyzeAnatomy([A, B, U], { weightsFor });
  const a = anatomizeChain(U);
  const sum = (f: (x: (typeof a)[number]) => number) => a.reduce((s, x) => s + f(x), 0);
  const expected = {
    cold: sum((x) => x.cold),
    growth: sum((x) => x.growth),
    expiry: sum((x) => x.expiry),
    break: sum((x) => x.break),
    input: sum((x) => x.request.input),
    write5m: sum((x) => x.request.cacheWrite5m),
    write1h: sum((x) => x.request.cacheWrite1h),
    read: sum((x) => x.request.cacheRead),
    output: sum((x) => x.request.output),
  };
  assert.ok(expected.cold > 0 && expected.expiry > 0 && expected.write5m > 0);
  // the report's HTML and --json hold the object as it is made: its keys' order is part of their bytes
  for (const row of [res.totals, res.by_model.find((r) => r.model === 'mystery')!, res.chains.find((c) => c.chain_id === U.chainId)!]) {
    assert.deepEqual(Object.entries(row.unpriced_tokens), Object.entries(expected));
  }
  assert.deepEqual(Object.values(res.by_model.find((r) => r.model !== 'mystery')!.unpriced_tokens), Array(9).fill(0));
});

test('re-purchase chains rank by the USD of their waste, not its weight (weights of two models do not compare)', () => {
  // R (opus, $5/M): waste 288,638.5 wt = $1.4432. T (sonnet, $3/M), R's writes × 1.2: rw 157,800 − 13,818 = 143,982,
  // then 171,018 − 13,810 = 157,208; waste (143,982 + 157,208) × 1.15 = 346,368.5 wt (more) = $1.0391 (less)
  const R = chain('R', repurchaseSpecs);
  const T = chain('T', repurchaseSpecs.map((s) => ({ ...s, w: s.w! * 1.2, model: 'sonnet' })));
  const res = analyzeAnatomy([T, R], { weightsFor });
  assert.deepEqual(res.repurchase.map((r) => r.chain_id), ['R', 'T']);
  near(res.repurchase[0]!.waste_usd, 288_638.5 * 5e-6);
  near(res.repurchase[1]!.waste_weight, 346_368.5);
  near(res.repurchase[1]!.waste_usd, 346_368.5 * 3e-6);
  // a chain of a model without a price re-buying the same is last (its waste's USD unknown), after both
  const M = chain('M', repurchaseSpecs.map((s) => ({ ...s, model: 'mystery' })));
  assert.deepEqual(analyzeAnatomy([M, T, R], { weightsFor }).repurchase.map((r) => r.chain_id), ['R', 'T', 'M']);
});

test('rows whose USD is unknown (no priced request) come after priced $0 rows, whatever their names', () => {
  // 'free' is priced at $0 a weight: its rows cost $0, known; 'mystery' has no price. By name alone the unpriced
  // rows (a…) came first, tied at usd 0 with the priced $0 ones (z…)
  const weights: WeightsFor = (model) => (model === 'free' ? { ...OPUS, usdPerWeight: 0 } : weightsFor(model));
  const at = (c: ChainInput, project: string, sessionId: string) => ({ ...c, project, sessionId });
  const unpriced = at(chain('a-chain', [{ t: 0, w: 1_000, model: 'mystery' }], { agentType: 'a-type' }), '/a', 'a-session');
  const zero = at(chain('z-chain', [{ t: 0, w: 1_000, model: 'free' }], { agentType: 'z-type' }), '/z', 'z-session');
  const res = analyzeAnatomy([unpriced, zero], { weightsFor: weights });
  assert.deepEqual(res.chains.map((r) => [r.chain_id, r.usd, r.unpriced_requests]), [['z-chain', 0, 0], ['a-chain', 0, 1]]);
  assert.deepEqual(res.by_session.map((r) => r.session_id), ['z-session', 'a-session']);
  assert.deepEqual(res.by_project.map((r) => r.project), ['/z', '/a']);
  assert.deepEqual(res.by_model.map((r) => r.model), ['free', 'mystery']);
  assert.deepEqual(res.by_agent_type.map((r) => r.agent_type), ['z-type', 'a-type']);
});
