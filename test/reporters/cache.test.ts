import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeAnatomy, chainDetail } from '../../src/analyses/anatomy-summary.js';
import { whatifKeepalive } from '../../src/analyses/keepalive.js';
import { whatifTtl } from '../../src/analyses/ttl.js';
import { int, pct, usd } from '../../src/format/table.js';
import { formatAnatomy, formatChain } from '../../src/reporters/anatomy.js';
import { duration, gapDuration, signedPct, signedUsd } from '../../src/reporters/units.js';
import { formatKeepalive, formatTtl } from '../../src/reporters/whatif.js';
import { tiedBudgets, tiePhrase } from '../../src/report/section-keepalive.js';
import { chain, chainASpecs, SEC, weightsFor } from '../analyses/helpers/fixtures.js';
import { join } from 'node:path';
import { cli } from '../helpers/corpus.js';

const SAMPLE = join(import.meta.dirname, '..', '..', 'sample-logs');

const lineStarting = (text: string, start: string) => text.split('\n').find((l) => l.startsWith(start)) ?? '';

test('units: signed percent and gap durations', () => {
  assert.equal(signedPct(2.2413), '+2.24%');
  assert.equal(signedPct(-10.3667), '-10.37%');
  assert.equal(signedPct(-0.001), '0.00%');
  assert.equal(signedPct(null), '—');
  // grouped in thousands as every other number of a table (a keepalive at a 1 ms interval: -241642.19%)
  assert.equal(signedPct(-241642.1934), '-241,642.19%');
  assert.equal(signedPct(1234.5), '+1,234.50%');
  assert.equal(signedPct(999.994), '+999.99%');
  assert.equal(pct(-2416.421934, 2), '-241,642.19%');
  assert.equal(pct(12.345678), '1,234.6%');
  assert.equal(pct(0.5), '50.0%');
  assert.equal(duration(5), '5s');
  assert.equal(duration(1_152), '19.2m');
  assert.equal(duration(15_060), '4.2h');
  assert.equal(duration(null), '—');
});

test('transcript text cannot drive the terminal', () => {
  const c = chain('A\u001b]0;pwned\u0007', chainASpecs, { agentType: 'x\u001b[2J' });
  const text = formatAnatomy(analyzeAnatomy([c], { weightsFor })) + formatChain(chainDetail(c, { weightsFor }));
  assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(text), 'no control characters but newlines');
  assert.match(text, /A\?\]0;pwned\?/);
});

test('formatAnatomy: writes by cause, the chain table and what preceded the breaks', () => {
  const B = chain(
    'B',
    [
      { t: 0, w: 10_000 },
      { t: 30 * SEC, r: 4_000, w: 8_000 },
    ],
    { kind: 'subagent', agentType: 'Explore', events: [{ t: 20 * SEC, kind: 'attachment', detail: 'skill_listing' }] },
  );
  const text = formatAnatomy(analyzeAnatomy([chain('A', chainASpecs), B], { weightsFor }));
  // writes: cold 20,000, growth 3,500 + 2,000, expiry 12,000, break 6,000 → total 43,500; expiry weight 15,000
  assert.match(lineStarting(text, 'expiry'), /^expiry\s+12,000\s+27\.6%\s+15,000$/);
  assert.match(lineStarting(text, 'break'), /^break\s+6,000\s+13\.8%\s+7,500\s+1$/);
  assert.match(lineStarting(text, 'total'), /^total\s+43,500\s+100\.0%\s+54,375$/);
  assert.match(text, /attachment:skill_listing\s+1\s+6,000/);
  // A: 35,450 weight × $5e-6 = $0.17725; waste 13,800
  assert.match(lineStarting(text, 'A '), /^A\s+main\s+4\s+1\s+10,000\s+3,500\s+12,000\s+0\s+13,800\s+35,450\s+\$0\.177[23]$/);
});

test('formatChain tells a gap at a TTL from one just past it: 300 s (inside 5 m) is 5m00s, 301 s (an expiry) 5m01s, 3,600 s and 3,601 s against 1 h 1h00m00s and 1h00m01s (each pair printed 5.0m and 1.0h)', () => {
  // each request re-writes the prefix after its gap: an expiry when the gap is above the TTL, else a break (the class
  // says which side of it the gap fell)
  const rowsOf = (ttl: '5m' | '1h', gaps: number[]) => {
    let t = 0;
    const specs = [{ t, w: 10_000, ttl }, ...gaps.map((g) => ({ t: (t += g * SEC), r: 0, w: 10_000, ttl }))];
    const text = formatChain(chainDetail(chain(`T${ttl}`, specs), { weightsFor }));
    return text.split('\n').filter((l) => /^\s*\d+\s+1970/.test(l)).slice(1);
  };
  const five = rowsOf('5m', [300, 301, 300.04]);
  assert.match(five[0]!, /\s5m00s\s+5m\s.*\sbreak\s/);
  assert.match(five[1]!, /\s5m01s\s+5m\s.*\sexpiry\s/);
  // a fraction of a second past the TTL is past it, and never printed as at it
  assert.match(five[2]!, /\s5m00\.1s\s+5m\s.*\sexpiry\s/);
  const hour = rowsOf('1h', [3_600, 3_601, 3_599]);
  assert.match(hour[0]!, /\s1h00m00s\s+1h\s.*\sbreak\s/);
  assert.match(hour[1]!, /\s1h00m01s\s+1h\s.*\sexpiry\s/);
  assert.match(hour[2]!, /\s59m59s\s+1h\s.*\sbreak\s/);
  // away from a TTL, a gap is as duration() gives it
  for (const g of [5, 240, 360, 1_152, 3_540, 3_660, 15_060]) assert.equal(gapDuration(g), duration(g));
  assert.deepEqual([299, 299.6, 300.5, 359, 3_541, 3_599.7, 3_600.2, 3_659].map(gapDuration), ['4m59s', '5m00s', '5m01s', '5m59s', '59m01s', '1h00m00s', '1h00m00.2s', '1h00m59s']);
  assert.equal(gapDuration(null), '—');
  // the form is decided on the printed whole seconds: one printed value, one form, at both edges of each window
  const edges = [239.4, 240, 240.4, 240.5, 359.4, 359.5, 359.96, 360, 3_539.4, 3_540, 3_540.4, 3_540.5, 3_659.4, 3_659.5, 3_660];
  assert.deepEqual(edges.map(gapDuration), [duration(239.4), duration(240), duration(240.4), '4m01s', '5m59s', duration(359.5), duration(359.96), duration(360), duration(3_539.4), duration(3_540), duration(3_540.4), '59m01s', '1h00m59s', duration(3_659.5), duration(3_660)]);
  assert.equal(gapDuration(240.4), gapDuration(240));
  assert.equal(gapDuration(359.96), gapDuration(360));
  // a gap past a TTL by a hair is past it, however small the hair (exact comparison, no epsilon)
  for (const g of [300.0000000001, 300 + 2 ** -44, 3_600.000000001, 3_600 + 2 ** -40]) {
    const text = gapDuration(g);
    assert.ok(text === '5m00.1s' || text === '1h00m00.1s', `${g} → ${text}`);
  }
  assert.deepEqual([300.1, 300.3, 300.45, 3_600.2].map(gapDuration), ['5m00.1s', '5m00.3s', '5m00.5s', '1h00m00.2s']);
});

test('formatChain prints one aligned row per request', () => {
  const text = formatChain(chainDetail(chain('A', chainASpecs), { weightsFor }));
  const rows = text.split('\n').filter((l) => /^\s*\d+\s+1970/.test(l));
  assert.equal(rows.length, 4);
  assert.match(rows[2]!, /6\.0m\s+5m\s+13,005\s+0\s+13,000\s+12,000\s+12,000\s+expiry\s+16,505\s+opus/);
  assert.match(rows[0]!, /—\s+—\s+10,010/);
  const ends = rows.map((r) => r.indexOf('opus'));
  assert.ok(ends.every((e) => e === ends[0]), 'model column aligned');
});

test('formatTtl and formatKeepalive print the headline numbers', () => {
  const ttl = formatTtl(whatifTtl([chain('A', chainASpecs)], { to: '1h', weightsFor }));
  assert.match(ttl, /^TTL override: force 1h on 5-minute chains \(scope all\); 1 of 1 chain writes 5-minute tokens$/m);
  assert.match(ttl, /baseline\s+35,450\s+\$0\.177[23]/);
  assert.match(ttl, /scenario\s+31,775\s+\$0\.1589/);
  assert.match(ttl, /delta\s+-3,675 \(-10\.37%\)/);
  assert.match(ttl, /expiry share f 47\.1%, break-even f\* 39\.5%: forcing 1h saves/);
  const ka = formatKeepalive(whatifKeepalive([chain('A', chainASpecs)], { weightsFor, budgets: [0, 1, Infinity] }));
  // budget 1: 1 ping of 1,287.5, saved 13,800, net 12,512.5 = 35.30 % of 35,450
  assert.match(ka, /^\s+1\s+1\s+1\s+1\s+0\s+1,288\s+13,800\s+12,51[23]\s+\$0\.0626\s+—\s+\+35\.30%$/m);
  assert.match(ka, /^\s+∞\s+1\s+/m);
  assert.match(ka, /best budget: 1 ping per gap/);
});

test('what-ifs over unpriced models only: costs are unknown, never $0; gaps are still counted', () => {
  const U = chain('U', [
    { t: 0, w: 5_000, model: 'mystery' },
    { t: 600 * SEC, r: 0, w: 5_000, model: 'mystery' },
  ]);
  const ttl = formatTtl(whatifTtl([U], { to: '1h', weightsFor }));
  assert.match(ttl, /baseline\s+unknown\s+unknown/);
  assert.match(ttl, /unknown \(no request in scope has a price\)/);
  assert.match(ttl, /2 requests of an unpriced model \(mystery\) left out/);
  assert.doesNotMatch(ttl, /\$0\.0000|no change/);
  const ka = formatKeepalive(whatifKeepalive([U], { weightsFor, budgets: [0, Infinity] }));
  // (it said "1 gaps; 1 of them touch")
  assert.match(ka, /; 1 gap; 1 of them touches an unpriced model \(mystery\)/);
  assert.match(ka, /^\s+∞\s+2\s+1\s+1\s+0\s+unknown\s+unknown\s+unknown\s+unknown/m);
  assert.match(ka, /best budget: unknown/);
  assert.doesNotMatch(ka, /\$0\.0000/);
});

test('formatAnatomy and formatChain over unpriced models only: every weight and the waste are unknown, never 0 or $0, but for what they have no token of', () => {
  const U = chain('U', [
    { t: 0, w: 5_000, model: 'mystery' },
    { t: 600 * SEC, r: 0, w: 5_000, model: 'mystery' },
  ]);
  const text = formatAnatomy(analyzeAnatomy([U], { weightsFor }));
  // one chain is "1 chain" (it said "1 chains")
  assert.match(text, /^Cache anatomy: 1 chain, 2 requests \(/);
  assert.match(lineStarting(text, 'expiry'), /^expiry\s+5,000\s+50\.0%\s+unknown$/);
  assert.match(lineStarting(text, 'total'), /^total\s+10,000\s+100\.0%\s+unknown$/);
  assert.match(lineStarting(text, 'all requests'), /^all requests\s+unknown\s+unknown$/);
  // no request read a token: 0 is whole, as README's one rule for +? has it (a component they have none of)
  assert.match(lineStarting(text, '  reads'), /^  reads\s+0$/);
  assert.match(lineStarting(text, 'waste'), /^waste \(rewrites beyond a read\)\s+unknown\s+unknown\s+—$/);
  assert.match(lineStarting(text, 'main '), /\s+unknown\s+unknown\s+unknown$/);
  assert.doesNotMatch(text, /\$0\.0000/);
  const head = formatChain(chainDetail(U, { weightsFor })).split('\n')[1]!;
  // the USD named, as the weights beside it are (it read a bare 'unknown')
  assert.match(head, /waste unknown {2}weight unknown {2}USD unknown$/);
  // a chain priced nowhere that wrote no expiry or break token wasted nothing: 0, as its --json says (it read 'unknown'; review)
  const warm = chain('W', [
    { t: 0, w: 5_000, model: 'mystery' },
    { t: 60 * SEC, r: 5_000, w: 100, model: 'mystery' },
  ]);
  assert.match(formatChain(chainDetail(warm, { weightsFor })).split('\n')[1]!, /waste 0 wt {2}weight unknown {2}USD unknown$/);
  assert.match(lineStarting(formatAnatomy(analyzeAnatomy([warm], { weightsFor })), 'waste'), /^waste \(rewrites beyond a read\)\s+0\s+\$0\.0000/);
  // one priced chain beside it: the totals are known, the waste's USD says what it leaves out
  const mixed = formatAnatomy(analyzeAnatomy([chain('A', chainASpecs), U], { weightsFor }));
  // and so do the weights beside it, as summary's do (they read as whole: `all requests 11,961,559` beside `$41.94 +?`)
  assert.match(lineStarting(mixed, 'waste'), /^waste \(rewrites beyond a read\)\s+13,800 \+\?\s+\$0\.0690 \+\?/);
  assert.match(lineStarting(mixed, 'all requests'), /^all requests\s+[\d,]+ \+\?\s+\$[\d.]+ \+\?$/);
  assert.match(lineStarting(mixed, '  5m writes'), /^  5m writes\s+[\d,]+ \+\?$/);
  assert.match(lineStarting(mixed, 'cold'), /^cold\s+[\d,]+\s+[\d.]+%\s+[\d,]+ \+\?$/);
  assert.match(lineStarting(mixed, 'A '), /\s+[\d,]+\s+\$[\d.]+\s*$/, 'a chain with every request priced has no +?');
  // the share beside the dollars is of the weight (as the report's headline says), not of the USD: with models
  // of different base prices the two differ
  assert.match(lineStarting(mixed, 'waste'), /\d\.\d% of weight$/);
  assert.match(lineStarting(mixed, 'U '), /^U\s+main\s+2\s+1\s+5,000\s+0\s+5,000\s+0\s+unknown\s+unknown\s+unknown$/);
});

test('formatKeepalive: the best budget per bucket, and an interval with a fraction as given', () => {
  const ka = formatKeepalive(whatifKeepalive([chain('A', chainASpecs)], { weightsFor, intervalS: 128.2 }));
  assert.match(ka, /every 128\.2 s/);
  // the 360 s gap: one ping of 128.2 s leaves 231.8 s ≤ 300: bridged at budget 1
  assert.match(ka, /By bucket, at the best budget \(1\)/);
  assert.match(ka, /^kind\s+main\s+1\s+3\s+1\s+1\s+1\s+35,450\s+12,51[23]\s+\$0\.0626\s+\+35\.30%$/m);
});

test('formatKeepalive: a budget of a million (--budget 1000000) has thousands separators, as every count, in its table and lines; tiePhrase too', () => {
  const specs = { weightsFor, budgets: [1_000_000] };
  const ka = formatKeepalive(whatifKeepalive([chain('A', chainASpecs)], specs));
  // it read 1000000 in the budget column, 'at 1000000 pings per gap' and 'By bucket, at budget 1000000'
  assert.doesNotMatch(ka, /1000000/);
  assert.match(ka, /^1,000,000\s/m);
  assert.match(ka, /^at 1,000,000 pings per gap: /m);
  assert.match(ka, /^By bucket, at budget 1,000,000$/m);
  const many = formatKeepalive(whatifKeepalive([chain('A', chainASpecs)], { weightsFor, budgets: [0, 1_000, 1_000_000] }));
  assert.doesNotMatch(many, /1000000|\b1000\b/);
  // a tie names its budgets so too, in the lines above and in the report
  const b = (budget: number | null) => ({ budget, netSavingUsd: 1, netSavingWeight: 1, pings: 1 });
  const budgets = [b(0), b(1_000), b(2_000), b(5_000)];
  assert.equal(tiePhrase(budgets.slice(0, 3), budgets[1]!, [budgets[2]!]), ' (every larger budget nets the same)');
  assert.match(tiePhrase(budgets, budgets[0]!, [budgets[1]!, budgets[3]!]), /budgets 1,000 and 5,000 net the same/);
});

test('TTL verdict by USD: weights of models with different base prices do not add up to one cost', () => {
  // S (sonnet, $3/M): a cold write of 8,000 → +6,000 wt (+$0.018) at 1 hour.
  // O (opus, $5/M): 10,000 written, re-written 10 minutes later (expiry) → read at 1 hour: −4,000 wt (−$0.020).
  const S = chain('S', [{ t: 0, w: 8_000, model: 'sonnet' }]);
  const O = chain('O', [{ t: 0, w: 10_000 }, { t: 10 * 60 * SEC, r: 0, w: 10_000 }]);
  const r = whatifTtl([S, O], { to: '1h', weightsFor });
  assert.ok(r.delta_pct! > 0, 'the weight rises');
  assert.ok(r.delta_usd_pct! < 0, 'the cost falls');
  assert.ok(Math.abs(r.scenario_usd - r.baseline_usd + 0.002) < 1e-12);
  assert.match(formatTtl(r), /: forcing 1h saves/);
});

test('formatKeepalive: priced chains without 5-minute gaps show 0, not unknown; an unpriced bucket\'s weight is unknown', () => {
  const H = chain('H', [{ t: 0, w: 10_000, ttl: '1h' }, { t: 10 * 60 * SEC, r: 10_000, w: 1_000, ttl: '1h' }]);
  const none = formatKeepalive(whatifKeepalive([H], { weightsFor, budgets: [0, 1] }));
  assert.doesNotMatch(none, /unknown/);
  assert.match(none, /best budget: none \(no gaps between requests of 5-minute chains\)/);
  // of the chains the scope pings: a main chain's gaps under --scope subagents are no gaps of those (it said '5-minute chains')
  const M = chain('M', [{ t: 0, w: 10_000 }, { t: 400 * SEC, r: 10_000, w: 1_000 }]);
  const scoped = formatKeepalive(whatifKeepalive([M], { weightsFor, budgets: [2], scope: 'subagents' }));
  assert.match(scoped, /^budget 2: none \(no gaps between requests of 5-minute subagent chains\)$/m);
  const U = chain('U', [{ t: 0, w: 5_000, model: 'mystery' }, { t: 100 * SEC, r: 5_000, w: 10, model: 'mystery' }]);
  const mixed = formatKeepalive(whatifKeepalive([chain('A', chainASpecs), U], { weightsFor, budgets: [1] }));
  assert.match(mixed, /^model\s+mystery\s+1\s+1\s+0\s+0\s+0\s+unknown\s+unknown\s+unknown/m);
});

test('formatKeepalive: budgets that net the same as the best are said to tie with it, as the report says; best_budget stays the smallest', () => {
  // chain A's one gap over the TTL needs 1 ping: every budget from 1 up sends it and nets the same
  const sweep = whatifKeepalive([chain('A', chainASpecs)], { weightsFor });
  assert.equal(sweep.best_budget, 1);
  assert.match(formatKeepalive(sweep), /^best budget: 1 ping per gap \(every larger budget, unbounded included, nets the same\), net saving 12,51[23] wt/m);
  // no unbounded budget among them: not said to be included
  assert.match(formatKeepalive(whatifKeepalive([chain('A', chainASpecs)], { weightsFor, budgets: [0, 1, 2] })), /^best budget: 1 ping per gap \(every larger budget nets the same\), net/m);
  // one budget: no tie, and no best of one
  assert.match(formatKeepalive(whatifKeepalive([chain('A', chainASpecs)], { weightsFor, budgets: [1] })), /^at 1 ping per gap: net saving/m);
});

test('formatKeepalive: larger budgets whose sums equal the best\'s but that ping more, only on gaps of unpriced models, are not said to net the same: their pings are not free', () => {
  // chain A's priced gap needs 1 ping; U's gap of an unpriced model needs 5: budgets 2 and up ping it more, and no sum holds those pings
  const U = chain('U', [{ t: 0, w: 5_000, model: 'mystery' }, { t: 1500 * SEC, r: 5_000, w: 10, model: 'mystery' }]);
  const sweep = whatifKeepalive([chain('A', chainASpecs), U], { weightsFor, budgets: [0, 1, 2, 3, 8] });
  assert.equal(sweep.best_budget, 1);
  const pings = sweep.budgets.map((b) => b.pings);
  assert.ok(pings[2]! > pings[1]! && new Set(sweep.budgets.slice(1).map((b) => b.net_saving_usd)).size === 1, `the same USD, more pings: ${pings}`);
  const text = formatKeepalive(sweep);
  assert.doesNotMatch(text, /net the same|nets the same/);
  assert.match(text, /^best budget: 1 ping per gap \(every larger budget pings more only on gaps of unpriced models: the same priced net, those pings' cost and savings unknown\), net saving 12,51[23] wt \+\?/m);
  // a tie of the same pings is still said as one, the budgets that ping more apart from it
  const nets = [0, 1, 2, 3, 4, null].map((budget) => ({ budget, netSavingUsd: budget === 0 ? 0 : 1, netSavingWeight: budget === 0 ? 0 : 5, pings: budget === 0 ? 0 : budget === null || budget > 2 ? 9 : 2 }));
  assert.equal(tiePhrase(nets, nets[1]!, tiedBudgets(nets, nets[1]!)), " (budget 2 nets the same; every budget from 3 up, unbounded included, pings more only on gaps of unpriced models: the same priced net, those pings' cost and savings unknown)");
  // no pings known (older callers): a tie as before
  const bare = nets.map(({ pings: _, ...n }) => n);
  assert.equal(tiePhrase(bare, bare[1]!, tiedBudgets(bare, bare[1]!)), ' (every larger budget, unbounded included, nets the same)');
});

test('anatomy --top N cuts the re-purchase list too, saying so in its title as the chain list does; --top 0 is a usage error', () => {
  const all = cli(['anatomy', SAMPLE, '--db', ':memory:', '--json']);
  assert.equal(all.code, 0, all.stderr);
  const repurchase: { chain_id: string }[] = JSON.parse(all.stdout).repurchase;
  assert.ok(repurchase.length >= 2, 'the sample has re-purchase chains to cut');
  const r = cli(['anatomy', SAMPLE, '--db', ':memory:', '--top', '1']);
  assert.equal(r.code, 0, r.stderr);
  // the section runs from its title to the blank line after its table
  const section = /^Re-purchase pattern .*\n(?:.+\n)*/m.exec(r.stdout)![0];
  assert.match(section, new RegExp(`^Re-purchase pattern \\(reads pinned, whole context re-bought every round\\), by waste \\(top 1 of ${repurchase.length}\\)$`, 'm'));
  // it listed every re-purchase chain whatever --top said
  assert.ok(section.includes(repurchase[0]!.chain_id), section);
  for (const c of repurchase.slice(1)) assert.ok(!section.includes(c.chain_id), section);
  // --top 0 printed every list as an empty table
  const zero = cli(['anatomy', SAMPLE, '--db', ':memory:', '--top', '0']);
  assert.deepEqual([zero.code, zero.stdout, zero.stderr.trim()], [2, '', 'cachelens: --top 0: expected a whole number of chains, at least 1']);
});

test('formatKeepalive of one budget (--budget 1) gives that budget\'s result, not "best budget: 1" of a choice of one', () => {
  const one = whatifKeepalive([chain('A', chainASpecs)], { weightsFor, intervalS: 128.2, budgets: 1 });
  const row = one.budgets[0]!;
  const ka = formatKeepalive(one);
  assert.doesNotMatch(ka, /best budget/);
  assert.ok(ka.split('\n').includes(`at 1 ping per gap: net saving ${int(Math.round(row.saved_weight) - Math.round(row.ping_weight))} wt (${usd(row.net_saving_usd)}, ${signedPct(row.net_saving_pct_all)} of all weight)`), ka);
  assert.match(ka, /^By bucket, at budget 1$/m);
  // several budgets still name the best of them
  assert.match(formatKeepalive(whatifKeepalive([chain('A', chainASpecs)], { weightsFor, intervalS: 128.2, budgets: [0, 1] })), /^best budget: 1 ping per gap/m);
});

test('formatKeepalive: the % columns are of weight and the best budget is by USD; when another budget nets more weight (a higher % all wt), the text says so', () => {
  // opus ($5 per million) and sonnet ($3), both 1 / 1.25 / 2 / 0.1 / 5; a ping = 0.1 × C + 87.5.
  // O (opus): w 100,000, then 570 s later r 0 w 100,000: expiry 100,000; ⌈570/270⌉ − 1 = 2 pings of
  //   10,087.5, bridged by the first (570 − 270 = 300 ≤ 300), saving 100,000 × 1.15 = 115,000.
  // S (sonnet): w 12,500, then 840 s later r 0 w 12,500: expiry 12,500; ⌈840/270⌉ − 1 = 3 pings of
  //   1,337.5, bridged from the second (840 − 540 = 300), saving 12,500 × 1.15 = 14,375.
  // B = 1: 115,000 − 10,087.5 − 1,337.5 = 103,575 wt; USD 104,912.5 × 5e-6 − 1,337.5 × 3e-6 = $0.52055
  // B = 2: 115,000 − 20,175 + 14,375 − 2,675 = 106,525 wt; USD 94,825 × 5e-6 + 11,700 × 3e-6 = $0.509225
  // Baseline 250,000 + 31,250 = 281,250 wt ($1.25 + $0.09375): B = 2 has the higher % all wt
  // (37.88 % against 36.83 %), B = 1 the higher net USD, so B = 1 is best.
  const O = chain('O', [{ t: 0, w: 100_000 }, { t: 570 * SEC, w: 100_000 }]);
  const S = chain('S', [{ t: 0, w: 12_500, model: 'sonnet' }, { t: 840 * SEC, w: 12_500, model: 'sonnet' }], { sessionId: 's2' });
  const res = whatifKeepalive([O, S], { weightsFor, budgets: [0, 1, 2, 3] });
  assert.equal(res.best_budget, 1);
  const [b1, b2] = [res.budgets[1]!, res.budgets[2]!];
  assert.ok(Math.abs(b1.net_saving_weight - 103_575) < 1e-6 && Math.abs(b2.net_saving_weight - 106_525) < 1e-6);
  assert.ok(Math.abs(b1.net_saving_usd - 0.52055) < 1e-12 && Math.abs(b2.net_saving_usd - 0.509225) < 1e-12);
  assert.ok(b2.net_saving_pct_all! > b1.net_saving_pct_all!);
  const text = formatKeepalive(res);
  assert.match(text, /% subagent wt\s+% all wt\n/);
  assert.match(text, /^% subagent wt: net saving on subagent chains over their weight \(none\); % all wt: net saving over all weight \(281,250 wt, \$1\.34\); best budget: the largest net USD$/m);
  assert.match(text, /^best budget: 1 ping per gap, net saving 103,575 wt \(\$0\.5206, \+36\.83% of all weight\)$/m);
  assert.match(text, /^budget 2 nets more weight, 106,525 wt \(\+37\.88% of all weight\), but less USD, \$0\.5092: the gaps' models have different prices per weight/m);
  // one model: the budget that nets the most weight is the best one, and nothing more is said
  assert.doesNotMatch(formatKeepalive(whatifKeepalive([O], { weightsFor, budgets: [0, 1, 2, 3] })), /nets more weight/);
});

test('formatTtl of an empty window (no request in scope) says there is nothing to re-price, not "no change", and prints no bucket table of headers alone', () => {
  const empty = formatTtl(whatifTtl([], { to: '1h', weightsFor }));
  assert.match(empty, /: nothing to re-price \(no request in scope\)\n$/);
  assert.doesNotMatch(empty, /no change|By bucket/);
  // a window with requests and no change still says "no change", with its buckets
  const H = chain('H', [{ t: 0, w: 10_000, ttl: '1h' }]);
  const same = formatTtl(whatifTtl([H], { to: '1h', weightsFor }));
  assert.match(same, /: no change/);
  assert.match(same, /By bucket/);
  // the only chain it changes is of a model without a price: no priced change, and its effect there unknown, not "no change"
  const M = chain('M', [{ t: 0, w: 10_000, model: 'mystery' }, { t: 6 * 60 * SEC, w: 10_500, model: 'mystery' }]);
  const unknown = whatifTtl([H, M], { to: '1h', weightsFor });
  assert.equal(unknown.changed_unpriced_chains, 1);
  assert.match(formatTtl(unknown), /: no change to priced requests; its effect on 1 chain of unpriced models is unknown/);
});

test('formatChain counts in the singular for one: `(1 event)`, `1 round` (it said `(1 events)`)', () => {
  // a re-write of the whole prefix a minute later: one break
  const B = chain('B1', [{ t: 0, w: 10_000 }, { t: 1 * 60 * SEC, r: 0, w: 10_000 }]);
  const detail = chainDetail(B, { weightsFor });
  assert.equal(detail.summary.break_events, 1);
  const [head, classes] = formatChain(detail).split('\n');
  assert.match(classes!, /break 10,000 \(1 event\)/);
  assert.match(head!, new RegExp(`: 2 requests, ${detail.rounds} rounds?`));
  if (detail.rounds === 1) assert.match(head!, /, 1 round$/);
});

test('formatKeepalive: budget 0 alone the best says that no ping pays, not "0 pings per gap, net saving 0 wt ($0.0000)"', () => {
  // a gap of 280 s: one ping at 270 s costs a read of the prefix, and the cache had not expired anyway
  const P = chain('P', [{ t: 0, w: 10_000 }, { t: 280 * SEC, r: 10_000, w: 100 }]);
  const r = whatifKeepalive([P], { weightsFor });
  assert.equal(r.best_budget, 0);
  const text = formatKeepalive(r);
  assert.match(text, /^best budget: 0, no pings: every budget above 0 costs more than it saves$/m);
  assert.doesNotMatch(text, /0 pings per gap/);
});

test('formatTtl counts one chain in the singular: "1 of 1 chain writes 5-minute tokens" (it said "1 of 1 chains change")', () => {
  const one = formatTtl(whatifTtl([chain('A', chainASpecs)], { to: '1h', weightsFor }));
  assert.match(one, /; 1 of 1 chain writes 5-minute tokens$/m);
  const two = formatTtl(whatifTtl([chain('A', chainASpecs), chain('B', chainASpecs)], { to: '1h', weightsFor }));
  assert.match(two, /; 2 of 2 chains write 5-minute tokens$/m);
});

test('what-ifs count one unpriced request or model in the singular: "1 request of an unpriced model (m)" (it said "1 requests of unpriced models (m)")', () => {
  const U = chain('U', [{ t: 0, w: 5_000, model: 'mystery' }]);
  const one = formatTtl(whatifTtl([chain('A', chainASpecs), U], { to: '1h', weightsFor }));
  assert.match(one, /^1 request of an unpriced model \(mystery\) left out$/m);
  const V = chain('V', [{ t: 0, w: 5_000, model: 'enigma' }, { t: 10 * SEC, r: 5_000, w: 10, model: 'enigma' }]);
  const two = formatTtl(whatifTtl([chain('A', chainASpecs), U, V], { to: '1h', weightsFor }));
  assert.match(two, /^3 requests of unpriced models \((enigma, mystery|mystery, enigma)\) left out$/m);
  const ka = formatKeepalive(whatifKeepalive([chain('A', chainASpecs), V], { weightsFor, budgets: [1] }));
  assert.match(ka, /; 1 of them touches an unpriced model \(enigma\): counted/);
});

test('formatTtl signs its USD delta as it signs the percentages: a rise is "+$0.0180 (+60.00%)", not "$0.0180 (+60.00%)"', () => {
  // S (sonnet, $3/M): a cold write of 8,000 at 1.25 → 10,000 wt, at 2 → 16,000 wt: +6,000 wt, +$0.018
  const up = formatTtl(whatifTtl([chain('S', [{ t: 0, w: 8_000, model: 'sonnet' }])], { to: '1h', weightsFor }));
  assert.match(lineStarting(up, 'delta'), /^delta\s+\+6,000 \(\+60\.00%\)\s+\+\$0\.0180 \(\+60\.00%\)$/);
  const down = formatTtl(whatifTtl([chain('A', chainASpecs)], { to: '1h', weightsFor }));
  assert.match(lineStarting(down, 'delta'), /^delta\s+-3,675 \(-10\.37%\)\s+-\$0\.0184 \(-10\.37%\)$/);
  const same = formatTtl(whatifTtl([chain('H', [{ t: 0, w: 10_000, ttl: '1h' }])], { to: '1h', weightsFor }));
  assert.match(lineStarting(same, 'delta'), /^delta\s+0 \(0\.00%\)\s+\$0\.0000 \(0\.00%\)$/);
  assert.equal(signedUsd(7.92), '+$7.92');
  assert.equal(signedUsd(-3.02), '-$3.02');
  assert.equal(signedUsd(0.00001), '+<$0.0001');
});

test('formatTtl marks the sums that leave unpriced requests out +?, as summary and anatomy mark them (it printed them as whole)', () => {
  const U = chain('U', [{ t: 0, w: 5_000, model: 'mystery' }], { kind: 'subagent', agentType: 'Explore' });
  const mixed = formatTtl(whatifTtl([chain('A', chainASpecs), U], { to: '1h', weightsFor }));
  assert.match(lineStarting(mixed, 'baseline'), /^baseline\s+35,450 \+\?\s+\$0\.177[23] \+\?$/);
  assert.match(lineStarting(mixed, 'scenario'), /^scenario\s+31,775 \+\?\s+\$0\.1589 \+\?$/);
  // the change leaves out what forcing 1h does to U (a chain of an unpriced model writing 5-minute tokens): +?, as the
  // report's TTL section marks it (it was printed whole here, and +? on the report's page)
  assert.match(lineStarting(mixed, 'delta'), /^delta\s+-3,675 \(-10\.37%\) \+\?\s+-\$0\.0184 \(-10\.37%\) \+\?$/);
  // the bucket of the unpriced chain alone is unknown; a bucket of priced chains alone is whole; one of both is +?
  assert.match(lineStarting(mixed, 'agent_type  Explore'), /\s+unknown\s+unknown\s+unknown\s+unknown\s+/);
  assert.match(lineStarting(mixed, 'kind        main'), /\s+35,450\s+31,775\s+\$0\.177[23]\s+\$0\.1589\s+/);
  assert.match(lineStarting(mixed, 'rounds      1 '), /\s+35,450 \+\?\s+31,775 \+\?\s+\$0\.177[23] \+\?\s+\$0\.1589 \+\?\s+/);
  // its shares leave out the change to U (its chain of an unpriced model the override changes), +? as the delta line;
  // the priced bucket's are whole, the unknown bucket's none
  assert.match(lineStarting(mixed, 'rounds      1 '), /\s-10\.37% \+\?\s+-10\.37% \+\?\s/);
  assert.match(lineStarting(mixed, 'kind        main'), /\s-10\.37%\s+-10\.37%\s/);
  assert.match(lineStarting(mixed, 'agent_type  Explore'), /\s—\s+—\s/);
  assert.doesNotMatch(formatTtl(whatifTtl([chain('A', chainASpecs)], { to: '1h', weightsFor })), /\+\?/);
});

test('formatKeepalive marks the weights that leave unpriced requests out +?, with the counts in --json (it printed them as whole)', () => {
  const U = chain('U', [{ t: 0, w: 5_000, model: 'mystery' }, { t: 100 * SEC, r: 5_000, w: 10, model: 'mystery' }], { kind: 'subagent', agentType: 'Explore' });
  const S = chain('S', [{ t: 0, w: 8_000 }, { t: 100 * SEC, r: 8_000, w: 10 }], { kind: 'subagent', agentType: 'Explore' });
  const r = whatifKeepalive([chain('A', chainASpecs), S, U], { weightsFor, budgets: [1] });
  assert.equal(r.unpriced_requests, 2);
  assert.equal(r.subagent_unpriced_requests, 2);
  const text = formatKeepalive(r);
  assert.match(text, /over their weight \([\d,]+ wt \+\?\); % all wt: net saving over all weight \([\d,]+ wt \+\?, \$[\d.]+ \+\?\)/);
  assert.match(lineStarting(text, 'kind        subagent'), /\s+[\d,]+ \+\?\s+/);
  assert.match(lineStarting(text, 'kind        main'), /\s+35,450\s+/);
  assert.match(lineStarting(text, 'agent_type  Explore'), /\s+[\d,]+ \+\?\s+/);
  // the unpriced chain alone in its bucket: unknown, not +?
  assert.match(lineStarting(text, 'model       mystery'), /\s+unknown\s+unknown\s+unknown/);
  // a main chain's unpriced requests leave the subagent weight whole
  const main = whatifKeepalive([chain('A', chainASpecs), S, chain('M', [{ t: 0, w: 5_000, model: 'mystery' }])], { weightsFor, budgets: [1] });
  assert.equal(main.subagent_unpriced_requests, 0);
  assert.match(formatKeepalive(main), /over their weight \([\d,]+ wt\); % all wt: net saving over all weight \([\d,]+ wt \+\?, \$[\d.]+ \+\?\)/);
  assert.doesNotMatch(formatKeepalive(whatifKeepalive([chain('A', chainASpecs), S], { weightsFor, budgets: [1] })), /\+\?/);
});

test('whatif ttl gives the weight\'s change as an amount and a share, as it gives the USD\'s, and the amount is scenario − baseline as printed', () => {
  // the sample's weights are 11,961,558.55 and 14,580,698.05: their difference, 2,619,139.5, would print 2,619,140
  // under 11,961,559 and 14,580,698; the weight column held '+21.90%' alone
  const r = cli(['whatif', 'ttl', SAMPLE, '--db', ':memory:']);
  assert.equal(r.code, 0, r.stderr);
  const n = (s: string) => Number(s.replace(/,/g, ''));
  const base = /^baseline\s+([\d,]+)/m.exec(r.stdout)!;
  const scen = /^scenario\s+([\d,]+)/m.exec(r.stdout)!;
  // (+? on each: the sample's override changes a chain of an unpriced model too)
  const delta = /^delta\s+([+-][\d,]+) \(([+-][\d.]+)%\) \+\?\s+[+-]\$[\d.,]+ \([+-][\d.]+%\) \+\?$/m.exec(r.stdout);
  assert.ok(base && scen && delta, r.stdout);
  assert.equal(n(delta[1]!), n(scen[1]!) - n(base[1]!));
  assert.ok(Math.abs((n(delta[1]!) / n(base[1]!)) * 100 - Number(delta[2])) < 0.01);
});

test('formatKeepalive: when no gap is longer than the interval, no budget sends a ping, and it says so; not "0 pings per gap (every larger budget … nets the same), net saving 0 wt"', () => {
  // gaps of 100 s and 200 s: under the 270 s interval, no ping at any budget
  const Q = chain('Q', [{ t: 0, w: 10_000 }, { t: 100 * SEC, r: 10_000, w: 100 }, { t: 300 * SEC, r: 10_100, w: 100 }]);
  const r = whatifKeepalive([Q], { weightsFor });
  assert.ok(r.budgets.every((b) => b.pings === 0) && r.gaps === 2);
  assert.equal(r.best_budget, 0);
  const text = formatKeepalive(r);
  assert.match(text, /^best budget: 0, no budget sends a ping: no gap between requests of the pinged chains is longer than the 270 s interval$/m);
  assert.doesNotMatch(text, /nets the same|net saving 0 wt/);
  // one budget asked for says so too, as its result (it read 'at 3 pings per gap: net saving 0 wt ($0.0000, 0.00% of all weight)')
  assert.match(formatKeepalive(whatifKeepalive([Q], { weightsFor, budgets: [3] })), /^at 3 pings per gap: no ping sent, net saving 0: no gap between requests of the pinged chains is longer than the 270 s interval$/m);
  // budget 0 sends none whatever the gaps: its result as it is
  assert.match(formatKeepalive(whatifKeepalive([Q], { weightsFor, budgets: [0] })), /^at 0 pings per gap: net saving 0 wt/m);
});

test('formatTtl: the bucket table\'s delta columns say they hold shares ("delta wt %", "delta USD %"), as the keepalive buckets\' "net %" does', () => {
  const text = formatTtl(whatifTtl([chain('A', chainASpecs)], { to: '1h', weightsFor }));
  const header = lineStarting(text, 'dimension');
  assert.match(header, /\sdelta wt %\s+delta USD %\s/);
  assert.match(lineStarting(text, 'kind '), /\s-10\.37%\s+-10\.37%\s/);
});

test('formatChain marks its heading\'s weight +? when some of its requests have no price, as its USD is (they read as whole), its waste when those requests wrote expiry or break tokens', () => {
  // one chain whose model switches to an unpriced one and back: 4 requests, 1 without a price
  const M = chain('M', [
    { t: 0, w: 10_000 },
    { t: 10 * SEC, r: 10_000, w: 1_000 },
    { t: 20 * SEC, r: 11_000, w: 500, model: 'mystery' },
    { t: 30 * SEC, r: 0, w: 11_500 },
  ]);
  const detail = chainDetail(M, { weightsFor });
  assert.equal(detail.summary.unpriced_requests, 1);
  const head = formatChain(detail).split('\n')[1]!;
  // the request without a price grew the prefix: the waste (the priced break's) is whole, as anatomy's waste line is
  assert.match(head, /waste [\d,]+ wt {2}weight [\d,]+ wt \+\? {2}\$[\d.]+ \+\?$/);
  // the break re-written by a request without a price: the waste leaves it out, +?
  const B = chain('B', [
    { t: 0, w: 10_000 },
    { t: 10 * SEC, r: 10_000, w: 1_000 },
    { t: 20 * SEC, r: 0, w: 11_000, model: 'mystery' },
  ]);
  assert.match(formatChain(chainDetail(B, { weightsFor })).split('\n')[1]!, /waste [\d,]+ wt \+\? {2}weight [\d,]+ wt \+\? {2}\$[\d.]+ \+\?$/);
  const whole = formatChain(chainDetail(chain('A', chainASpecs), { weightsFor })).split('\n')[1]!;
  assert.match(whole, /waste [\d,]+ wt {2}weight [\d,]+ wt {2}\$[\d.]+$/);
});

test('formatChain names a main thread as one in its heading, "(main thread)"; it read "(main, main)"', () => {
  const main = formatChain(chainDetail(chain('A', chainASpecs), { weightsFor })).split('\n')[0]!;
  assert.match(main, /^Chain A \(main thread\) of session /);
  const sub = formatChain(chainDetail(chain('A:x', chainASpecs, { kind: 'subagent', agentType: 'reviewer' }), { weightsFor })).split('\n')[0]!;
  assert.match(sub, /^Chain A:x \(reviewer, subagent\) of session /);
});

test('whatif keepalive\'s net saving wt is saved wt − ping cost wt as printed, every row, and the line under it says the same; --json stays unrounded', () => {
  // the sample's budget 1 read 469,124 − 105,796 beside 363,329: each rounded apart from 363,328.5
  const r = cli(['whatif', 'keepalive', SAMPLE, '--db', ':memory:']);
  assert.equal(r.code, 0, r.stderr);
  const n = (s: string) => Number(s.replace(/[,+?\s]/g, ''));
  const rows = r.stdout.split('\n').filter((l) => /^\s+(\d+|∞)\s+\d/.test(l));
  assert.equal(rows.length, 22, r.stdout);
  const nets = new Map<string, number>();
  for (const row of rows) {
    const cells = row.trim().split(/\s{2,}/);
    const [budget, , , , , ping, saved, net] = cells;
    assert.equal(n(net!), n(saved!) - n(ping!), row);
    nets.set(budget!, n(net!));
  }
  const best = /best budget: (\d+|∞) pings? per gap.*?, net saving ([\d,-]+) wt/.exec(r.stdout);
  assert.ok(best, r.stdout);
  assert.equal(n(best[2]!), nets.get(best[1]!));
  const j = cli(['whatif', 'keepalive', SAMPLE, '--db', ':memory:', '--budget', '1', '--json']);
  const b1 = (JSON.parse(j.stdout) as { budgets: { saved_weight: number; ping_weight: number; net_saving_weight: number }[] }).budgets[0]!;
  assert.ok(Math.abs(b1.net_saving_weight - (b1.saved_weight - b1.ping_weight)) < 1e-6);
  assert.notEqual(b1.net_saving_weight, Math.round(b1.net_saving_weight), 'the sample\'s budget 1 nets a fraction: the case the rounding was about');
});

test('formatKeepalive marks ping cost, saved and net +? when gaps touching unpriced models are left out of them, as summary marks its sums; a budget of no ping is whole', () => {
  // only the heading said '1 of them touches an unpriced model: counted, their weights unknown'
  const U = chain('U', [{ t: 0, w: 5_000, model: 'mystery' }, { t: 400 * SEC, r: 5_000, w: 10, model: 'mystery' }]);
  const text = formatKeepalive(whatifKeepalive([chain('A', chainASpecs), U], { weightsFor, budgets: [0, 1] }));
  assert.match(text, /1 of them touches an unpriced model \(mystery\)/);
  // budget 1: 2 pings, one of them U's; A's ping of 1,287.5 (1,288), saved 13,800, net 12,512 as printed, $0.0626
  assert.match(text, /^\s+1\s+2\s+2\s+2\s+0\s+1,288 \+\?\s+13,800 \+\?\s+12,512 \+\?\s+\$0\.0626 \+\?\s+—\s+\+[\d.]+% \+\?$/m);
  // budget 0 sends no ping: it costs and saves exactly 0, whatever the prices
  assert.match(text, /^\s+0\s+0\s+2\s+0\s+2\s+0\s+0\s+0\s+\$0\.0000\s+/m);
  assert.match(text, /best budget: 1 ping per gap.*, net saving 12,512 wt \+\? \(\$0\.0626 \+\?, /);
  // the bucket of both chains' gaps leaves the unpriced one out; the priced model's bucket is whole
  assert.match(lineStarting(text, 'kind        main'), /\s+12,512 \+\?\s+\$0\.0626 \+\?\s+/);
  assert.match(lineStarting(text, 'model       opus'), /\s+12,512\s+\$0\.0626\s+/);
  assert.doesNotMatch(formatKeepalive(whatifKeepalive([chain('A', chainASpecs)], { weightsFor, budgets: [0, 1] })), /\+\?/);
});

test('formatKeepalive: an unpriced gap no longer than the interval gets no ping and adds exactly 0 at any price, so it marks no sum +? (the sample\'s three short gaps of an unpriced model marked every budget)', () => {
  const U = chain('U', [{ t: 0, w: 5_000, model: 'mystery' }, { t: 100 * SEC, r: 5_000, w: 10, model: 'mystery' }]);
  const r = whatifKeepalive([chain('A', chainASpecs), U], { weightsFor, budgets: [0, 1] });
  assert.deepEqual([r.unpriced_gaps, r.unpriced_pinged_gaps], [1, 0]);
  const text = formatKeepalive(r);
  assert.match(text, /1 of them touches an unpriced model \(mystery\)/, 'the heading still counts it');
  // the budget rows and the best budget's line are whole; the bucket's net too (its weight, of U's unpriced requests, is not)
  const budgetRows = text.split('\n').filter((l) => /^\s+[01]\s+[01]\s/.test(l));
  assert.equal(budgetRows.length, 2);
  for (const row of budgetRows) assert.doesNotMatch(row, /\+\?/, row);
  assert.match(text, /best budget: 1 ping per gap.*, net saving 12,512 wt \(\$0\.0626, /);
  assert.match(lineStarting(text, 'kind        main'), /\+\?\s+12,512\s+\$0\.0626\s+/);
});

test('formatTtl marks the delta +? and says the effect unknown when the override changes chains of unpriced models beside priced ones, as the report does', () => {
  const A = chain('A', chainASpecs);
  const M = chain('M', [{ t: 0, w: 10_000, model: 'mystery' }, { t: 6 * 60 * SEC, w: 10_500, model: 'mystery' }]);
  const r = whatifTtl([A, M], { to: '1h', weightsFor });
  assert.equal(r.changed_unpriced_chains, 1);
  assert.notEqual(r.baseline_usd, r.scenario_usd, 'a priced change');
  const text = formatTtl(r);
  assert.match(text, /^delta +\S+ \([^)]*\) \+\? +\S+ \([^)]*\) \+\?$/m);
  assert.match(text, /: forcing 1h (saves|costs more); its effect on 1 chain of unpriced models is unknown$/m);
  // no chain of an unpriced model changed: the delta is whole, nothing more said
  const whole = formatTtl(whatifTtl([A], { to: '1h', weightsFor }));
  assert.match(whole, /^delta +\S+ \([^)]*\) +\S+ \([^)]*\)$/m);
  assert.doesNotMatch(whole, /unknown/);
});

test('formatKeepalive marks the shares of a net saving +? when its budget pings gaps of unpriced models, as the net saving and the report\'s reading are', () => {
  // gaps of 280 s: a ping at 270 s costs, and bridges nothing; one of them of a model without a price
  const P = chain('P', [{ t: 0, w: 10_000 }, { t: 280 * SEC, r: 10_000, w: 100 }]);
  const Q = chain('Q', [{ t: 0, w: 10_000, model: 'mystery' }, { t: 280 * SEC, r: 10_000, w: 100, model: 'mystery' }]);
  const r = whatifKeepalive([P, Q], { weightsFor, budgets: [0, 1] });
  assert.ok(r.unpriced_pinged_gaps > 0);
  const rows = formatKeepalive(r).split('\n').filter((l) => /^ +[01] /.test(l));
  assert.equal(rows.length, 2, formatKeepalive(r));
  assert.doesNotMatch(rows[0]!, /\+\?/, 'budget 0 sends no ping');
  assert.match(rows[1]!, /\$[\d.]+ \+\? +\S+ +-[\d.]+% \+\?$/, 'budget 1: its % all wt');
});
