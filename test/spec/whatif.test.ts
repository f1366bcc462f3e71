/**
 * SPEC §5 (what-ifs), checked by hand on the sessions of test/spec/corpora.ts (their anatomy is worked
 * out in test/spec/anatomy.test.ts): `whatif ttl --json` both ways, `whatif keepalive --json`, and the
 * terminal tables and the HTML report against the JSON. Opus 4.6: 1 / 1.25 / 2 / 0.1 / 5 at $5 per million.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openContext } from '../../src/context.js';
import { buildReportData } from '../../src/report/build.js';
import { renderReport } from '../../src/report/render.js';
import { assistant, cli, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { near } from '../analyses/helpers/fixtures.js';
import { at, main5m, mixed1h } from './corpora.js';

function run(dir: string, args: string[], json = true): any {
  const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC', ...(json ? ['--json'] : [])]);
  assert.equal(r.code, 0, r.stderr);
  return json ? JSON.parse(r.stdout) : r.stdout;
}

test('§5.1: forcing 1 h on 5-minute chains, by hand: writes at 2, an expiry within the hour read at 0.1, the one past the hour rewritten at 2', () => {
  // baseline: writes 78,500 × 1.25 + reads 25,000 × 0.1 = 100,625 wt ($0.503125)
  // main: writes 72,000, of them the 360 s expiry (21,000) becomes a read, the 3,700 s one (5,000) stays:
  //   (72,000 − 21,000) × 2 + (25,000 + 21,000) × 0.1 = 102,000 + 4,600 = 106,600
  // subagent: 3,500 × 2 + 3,000 × 0.1 = 7,300
  // scenario 113,900 wt ($0.5695), delta +13,275 = +13.1925%; f = (21,000 + 3,000) / 78,500 = 0.30573 < f* = 0.75 / 1.9
  const dir = writeCorpus(main5m());
  const t = run(dir, ['whatif', 'ttl']);
  assert.deepEqual([t.chains, t.changed_chains, t.requests], [2, 2, 8]);
  near(t.baseline_weight, 100_625, 'baseline');
  near(t.scenario_weight, 113_900, 'scenario');
  near(t.baseline_usd, 0.503125, 'baseline USD');
  near(t.scenario_usd, 0.5695, 'scenario USD');
  near(t.delta_pct, (13_275 / 100_625) * 100, 'delta');
  near(t.expiry_share, 24_000 / 78_500, 'f');
  near(t.break_even_share, 0.75 / 1.9, 'f*');
  const bucket = (d: string, b: string) => t.buckets.find((x: any) => x.dimension === d && x.bucket === b);
  // main 92,500 → 106,600 (+15.24%); subagent 8,125 → 7,300 (−10.15%)
  near(bucket('kind', 'main').scenario_weight, 106_600, 'main bucket');
  near(bucket('kind', 'subagent').scenario_weight, 7_300, 'subagent bucket');
  const out = run(dir, ['whatif', 'ttl'], false);
  assert.match(out, /^baseline +100,625 +\$0\.5031$/m);
  assert.match(out, /^scenario +113,900 +\$0\.5695$/m);
  assert.match(out, /^delta +\+13,275 \(\+13\.19%\) +\+\$0\.0664 \(\+13\.19%\)$/m);
  assert.match(out, /^expiry share f 30\.6%, break-even f\* 39\.5%: forcing 1h costs more$/m);
});

test('§5.1: forcing 5 minutes on a 1-hour chain, by hand: 1-hour writes at 1.25, reads after a gap over 5 minutes (not already an expiry) become 5-minute writes', () => {
  // main (1-hour): #1 10,000 → 12,500; #2 (gap 10 min) r 10,000 expire: (2,000 + 10,000) × 1.25 = 15,000;
  //   #3 (already an expiry) 13,000 × 1.25 = 16,250; #4 sonnet 14,000 × 1.25 = 17,500 (of $3)
  // baseline: opus 20,000 + 5,000 + 26,000 = 51,000, sonnet 28,000, inline sidechain (5-minute, unchanged) 7,875: 86,875 wt
  // scenario: 12,500 + 15,000 + 16,250 + 17,500 + 7,875 = 69,125 wt
  // USD: baseline (51,000 + 7,875) × $5/M + 28,000 × $3/M = 0.378375; scenario (43,750 + 7,875) × $5/M + 17,500 × $3/M = 0.310625
  // f = 10,000 reads that expire / (writes 39,000 + those 10,000) = 0.20408: below f*, so forcing 5m saves
  const dir = writeCorpus(mixed1h());
  const t = run(dir, ['whatif', 'ttl', '--to', '5m']);
  assert.deepEqual([t.chains, t.changed_chains], [2, 1]);
  near(t.baseline_weight, 86_875, 'baseline');
  near(t.scenario_weight, 69_125, 'scenario');
  near(t.baseline_usd, 0.378375, 'baseline USD');
  near(t.scenario_usd, 0.310625, 'scenario USD');
  near(t.expiry_share, 10_000 / 49_000, 'f');
  // forcing 1 h changes the sidechain alone: 3,000 × 2 + 300 × 2 + 3,000 × 0.1 = 6,900 against 7,875; f = 3,000 / 6,300
  const up = run(dir, ['whatif', 'ttl']);
  near(up.scenario_weight, 86_875 - 975, 'to 1h');
  near(up.expiry_share, 3_000 / 6_300, 'f to 1h');
});

test('§5.2: keepalive pings by hand: pings per gap, bridged gaps, net saving per budget, the best budget', () => {
  // gaps of 5-minute chains (I = 270 s, TTL 300 s; the cold restart after the compaction is no gap):
  //   main 200 s: no ping; 360 s: k = ⌈360/270⌉ − 1 = 1, bridged at m = 1 (360 − 270 ≤ 300), a ping
  //   0.1 × 21,000 + 30 × 1.25 + 10 × 5 = 2,187.5, saves 21,000 × 1.15 = 24,150; 5 s: none;
  //   3,700 s: k = 13, bridged at m = ⌈3,400/270⌉ = 13, a ping 0.1 × 5,000 + 87.5 = 587.5, saves 5,000 × 1.15 = 5,750
  //   subagent 400 s: k = 1, bridged at 1, a ping 0.1 × 3,000 + 87.5 = 387.5, saves 3,000 × 1.15 = 3,450
  // B = 1: 3 pings, 3,162.5 wt, saves 27,600: net 24,437.5 (24.2857% of 100,625; subagent 3,062.5 = 37.69% of 8,125)
  // B = 13 … ∞: 15 pings, 2,187.5 + 13 × 587.5 + 387.5 = 10,212.5, saves 33,350: net 23,137.5 — less: the best B is 1
  const dir = writeCorpus(main5m());
  const k = run(dir, ['whatif', 'keepalive']);
  assert.equal(k.gaps, 5);
  assert.equal(k.best_budget, 1);
  const row = (b: number | 'inf') => k.budgets.find((x: any) => x.budget === b);
  assert.deepEqual([0, 1, 12, 13, 'inf'].map((b) => { const r = row(b as any); return [r.pings, r.gaps_over_ttl, r.bridged, r.expired_after_budget]; }), [
    [0, 3, 0, 3],
    [3, 3, 2, 1],
    [14, 3, 2, 1],
    [15, 3, 3, 0],
    [15, 3, 3, 0],
  ]);
  near(row(1).ping_weight, 3_162.5, 'ping weight');
  near(row(1).net_saving_weight, 24_437.5, 'net B=1');
  near(row(1).net_saving_usd, 24_437.5 * 5e-6, 'net USD B=1');
  near(row(1).net_saving_pct_all, (24_437.5 / 100_625) * 100, '% all');
  near(row(1).net_saving_pct_subagent, (3_062.5 / 8_125) * 100, '% subagent');
  near(row('inf').net_saving_weight, 23_137.5, 'net ∞');
  // a 1-hour chain has no gap to ping; the inline sidechain's 350 s gap is bridged by 1 ping: 0.1 × 3,000 + 87.5
  const h = run(writeCorpus(mixed1h()), ['whatif', 'keepalive', '--budget', '1']);
  assert.deepEqual([h.gaps, h.budgets[0].pings, h.budgets[0].bridged], [1, 1, 1]);
  near(h.budgets[0].net_saving_weight, 3_450 - 387.5, 'sidechain net');
});

test("§5: the report's TTL override and keepalive figures are the JSON's", async () => {
  const dir = writeCorpus(main5m());
  const ttl = run(dir, ['whatif', 'ttl']);
  const ka = run(dir, ['whatif', 'keepalive']);
  const ctx = await openContext({ paths: [dir], db: ':memory:', timezone: 'UTC' });
  try {
    const page = renderReport(await buildReportData(ctx));
    const section = (id: string) => new RegExp(`<section[^>]* id="${id}"[\\s\\S]*?</section>`).exec(page)![0].replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
    // $0.503125 and $0.5695 at four decimals (halves away from zero), 13.19% at one
    assert.equal(ttl.baseline_usd, 0.503125);
    assert.match(section('ttl-override'), /baseline \$0\.5031 \(100,625 wt\) scenario \$0\.5695 \(113,900 wt\) change \+\$0\.0664 \(\+13\.2%\) expiry share f 30\.6% break-even f\* 39\.5%/);
    // budget 1: net $0.1221875 → $0.1222, +37.69% of subagent weight, +24.29% of all, 3 pings, 3 gaps over the TTL, 2 bridged, 1 expired
    assert.equal(ka.budgets[1].net_saving_usd, 0.1221875);
    const keep = section('keepalive');
    assert.match(keep, / 1 \$0\.1222 \+37\.7% \+24\.3% 3 3 2 1 /);
    assert.match(keep, / ∞ \$0\.1157 \+37\.7% \+23\.0% 15 3 3 0 /);
    assert.match(section('headline'), /keepalive pings, budget 1 per gap, would save \$0\.1222 \(24\.3% of cost\)/);
  } finally {
    ctx.store.close();
  }
});

test("whatif ttl's USD delta is the change itself, rounded once as --json writes it, however the amounts above it are rounded", async () => {
  // two Opus 4.1 sessions ($15 / M base), each one cold write: one of 1-hour tokens (n × 2 wt), one of 5-minute tokens
  // (m × 1.25 wt; forced to 1 h, m × 2). The change is m × 0.75 wt: $0.225 for m = 20,000, $0.0225 for m = 2,000.
  // The amounts are rounded to whole dollars from $100 and to cents from $1, so their difference as printed was
  // +$1.00 ($150 to $151), +$0.0200 ($99.98 to $100) and $0.0000 ($150 to $150) for these changes.
  const A = '5bec0000-0000-4000-8000-0000000005e1';
  const B = '5bec0000-0000-4000-8000-0000000005e2';
  const corpus = (n: number, m: number) => writeCorpus({
    [`projects/-work-demo/${A}.jsonl`]: [userPrompt(A, at(-5)), assistant({ session: A, msg: 'a1', t: at(0), model: 'claude-opus-4-1', u: { w1h: n } })],
    [`projects/-work-demo/${B}.jsonl`]: [userPrompt(B, at(-5)), assistant({ session: B, msg: 'b1', t: at(0), model: 'claude-opus-4-1', u: { w5: m } })],
  });
  const cases: Array<[number, number, RegExp, RegExp, RegExp]> = [
    // 10,025,000 wt = $150.375 → $150; 10,040,000 wt = $150.60 → $151; +$0.225 (+0.1496%)
    [5_000_000, 20_000, /^baseline +10,025,000 +\$150$/m, /^scenario +10,040,000 +\$151$/m, /^delta +\+15,000 \(\+0\.15%\) +\+\$0\.2250 \(\+0\.15%\)$/m],
    // 6,665,000 wt = $99.975 → $99.98; 6,680,000 wt = $100.20 → $100
    [3_320_000, 20_000, /^baseline +6,665,000 +\$99\.98$/m, /^scenario +6,680,000 +\$100$/m, /^delta +\+15,000 \(\+0\.23%\) +\+\$0\.2250 \(\+0\.23%\)$/m],
    // 10,002,500 wt = $150.0375 and 10,004,000 wt = $150.06, both $150: the change, +$0.0225, is no $0.0000
    [5_000_000, 2_000, /^baseline +10,002,500 +\$150$/m, /^scenario +10,004,000 +\$150$/m, /^delta +\+1,500 \(\+0\.01%\) +\+\$0\.0225 \(\+0\.01%\)$/m],
  ];
  for (const [n, m, base, scen, delta] of cases) {
    const dir = corpus(n, m);
    const t = run(dir, ['whatif', 'ttl']);
    near(t.scenario_usd - t.baseline_usd, m * 0.75 * 15e-6, `delta USD of ${n} / ${m}`);
    const out = run(dir, ['whatif', 'ttl'], false);
    assert.match(out, base);
    assert.match(out, scen);
    assert.match(out, delta);
    assert.match(out, /forcing 1h costs more/);
  }
  // the report says the one change: its TTL section as whatif ttl, its headline as the saving it is not
  const ctx = await openContext({ paths: [corpus(5_000_000, 20_000)], db: ':memory:', timezone: 'UTC' });
  try {
    const page = renderReport(await buildReportData(ctx));
    const section = (id: string) => new RegExp(`<section[^>]* id="${id}"[\\s\\S]*?</section>`).exec(page)![0].replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
    assert.match(section('ttl-override'), /baseline \$150 \(10,025,000 wt\) scenario \$151 \(10,040,000 wt\) change \+\$0\.2250 \(\+0\.1%\)/);
    assert.match(section('headline'), /−\$0\.2250/);
  } finally {
    ctx.store.close();
  }
  // a small change too is itself rounded once: $0.50295 to $0.80472 is +$0.30177, printed +$0.3018 (the printed
  // amounts, $0.5030 and $0.8047, are 0.3017 apart); --json keeps the unrounded amounts
  const session = '5bec0000-0000-4000-8000-0000000005e0';
  const dir = writeCorpus({
    [`projects/-work-demo/${session}.jsonl`]: [userPrompt(session, at(-5)), assistant({ session, msg: 'd1', t: at(0), u: { w5: 80_472 } })],
  });
  const t = run(dir, ['whatif', 'ttl']);
  near(t.baseline_usd, 0.50295, 'baseline USD');
  near(t.scenario_usd, 0.80472, 'scenario USD');
  const out = run(dir, ['whatif', 'ttl'], false);
  assert.match(out, /^baseline +100,590 +\$0\.5030$/m);
  assert.match(out, /^scenario +160,944 +\$0\.8047$/m);
  assert.match(out, /^delta +\+60,354 \(\+60\.00%\) +\+\$0\.3018 \(\+60\.00%\)$/m);
});
