/**
 * SPEC §3 (cache anatomy), checked by hand: every write of a small session split into cold, growth,
 * expiry and break, its waste, hit ratio and write:read ratio, from `anatomy --json`, and the terminal
 * table's figures against the JSON. Opus 4.6 weights 1 / 1.25 / 2 / 0.1 / 5 at $5 per million;
 * Sonnet 4.6 the same multiples of its $3.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cli, writeCorpus } from '../helpers/corpus.js';
import { near } from '../analyses/helpers/fixtures.js';
import { main5m, mixed1h, S1, S3 } from './corpora.js';

function json(dir: string, args: string[]): any {
  const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function text(dir: string, args: string[]): string {
  const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

test('§3: a 5-minute main chain with an expiry, a break, a compaction and an expiry past an hour, and a subagent with an expiry, split by hand', () => {
  // main (5-minute writes), C = r + w of the request before:
  //   #1 t 0       w 20,000               cold 20,000                                     C 20,000
  //   #2 t 200 s   r 20,000 w 1,000       gap 200 s ≤ 5 min: rw = min(1,000, 0) = 0: growth 1,000 C 21,000
  //   #3 t 560 s   r 0 w 22,000           gap 360 s > 5 min: rw = min(22,000, 21,000) = 21,000 expiry, growth 1,000
  //   #4 t 565 s   r 5,000 w 18,000       gap 5 s: rw = min(18,000, 22,000 − 5,000) = 17,000 break, growth 1,000
  //   compact_boundary at 600 s
  //   #5 t 610 s   w 5,000                first of a new segment: cold 5,000
  //   #6 t 4,310 s w 6,000                gap 3,700 s > 5 min: rw = 5,000 expiry, growth 1,000
  // subagent a1: #1 t 10 s w 3,000 cold; #2 t 410 s w 3,500, gap 400 s: expiry 3,000, growth 500
  // cold 28,000, growth 4,500, expiry 29,000, break 17,000 (1 event)
  // waste = (expiry + break) × (1.25 − 0.1) = 46,000 × 1.15 = 52,900 wt = $0.2645
  // weight: writes 78,500 × 1.25 = 98,125, reads 25,000 × 0.1 = 2,500: 100,625 wt = $0.503125
  // hit ratio Σr / ΣP = 25,000 / (78,500 + 25,000) = 0.241546; write:read weight 98,125 / 2,500 = 39.25
  const dir = writeCorpus(main5m());
  const a = json(dir, ['anatomy']);
  const t = a.totals;
  assert.deepEqual([t.chains, t.requests, t.cold, t.growth, t.expiry, t.break, t.break_events], [2, 8, 28_000, 4_500, 29_000, 17_000, 1]);
  near(t.waste_weight, 52_900, 'waste');
  near(t.waste_usd, 0.2645, 'waste USD');
  near(t.weight, 100_625, 'weight');
  near(t.usd, 0.503125, 'USD');
  near(t.hit_ratio, 25_000 / 103_500, 'hit ratio');
  near(t.write_read_ratio, 39.25, 'write:read');
  near(t.anatomy_weight.expiry, 29_000 * 1.25, 'expiry weight');
  const main = a.chains.find((c: any) => c.chain_id === S1);
  // main: (21,000 + 5,000 + 17,000) × 1.15 = 49,450
  near(main.waste_weight, 49_450, 'main waste');
  const detail = json(dir, ['anatomy', '--chain', S1]);
  assert.deepEqual(
    detail.requests.map((q: any) => [q.class, q.cold, q.growth, q.expiry, q.break, q.gap_s, q.ttl]),
    [
      ['cold', 20_000, 0, 0, 0, null, null],
      ['growth', 0, 1_000, 0, 0, 200, '5m'],
      ['expiry', 0, 1_000, 21_000, 0, 360, '5m'],
      ['break', 0, 1_000, 0, 17_000, 5, '5m'],
      ['cold', 5_000, 0, 0, 0, 45, '5m'],
      ['expiry', 0, 1_000, 5_000, 0, 3_700, '5m'],
    ],
  );
  // the terminal table prints the JSON's figures
  const out = text(dir, ['anatomy']);
  assert.match(out, /^cold +28,000 .* 35,000$/m);
  assert.match(out, /^expiry +29,000 .* 36,250$/m);
  assert.match(out, /^break +17,000 .* 21,250 +1$/m);
  assert.match(out, /^waste \(rewrites beyond a read\) +52,900 +\$0\.2645 +52\.6% of weight$/m);
  assert.match(out, /^hit ratio Σr\/ΣP +24\.2%$/m);
  assert.match(out, /^write:read weight +39\.25 : 1$/m);
});

test("§3: a 1-hour chain's TTL in force, a model switch as a break's cause, and a v1.x inline sidechain as a chain of its own (kind sidechain)", () => {
  // main (1-hour writes):
  //   #1 t 0       w1h 10,000                     cold                                        C 10,000
  //   #2 t 600 s   r 10,000 w1h 2,000             gap 10 min ≤ 1 h (TTL 1 h): growth 2,000    C 12,000
  //   #3 t 4,400 s w1h 13,000                     gap 3,800 s > 1 h: expiry 12,000, growth 1,000
  //   #4 t 4,410 s sonnet-4-6 w1h 14,000          gap 10 s: rw = min(14,000, 13,000) = 13,000 break, cause model switch
  // inline sidechain (root sr1): t 100 s w5 3,000 cold; t 450 s w5 3,300: gap 350 s > 5 min, expiry 3,000, growth 300
  // waste: 12,000 × (2 − 0.1) + 13,000 × (2 − 0.1) + 3,000 × 1.15 = 22,800 + 24,700 + 3,450 = 50,950
  // weight: opus 20,000 + 5,000 + 26,000 + sidechain 7,875 = 58,875 ($0.294375); sonnet 28,000 ($0.084): 86,875, $0.378375
  const dir = writeCorpus(mixed1h());
  const a = json(dir, ['anatomy']);
  const t = a.totals;
  assert.deepEqual([t.cold, t.growth, t.expiry, t.break, t.break_events], [13_000, 4_300, 15_000, 13_000, 1]);
  near(t.waste_weight, 50_950, 'waste');
  near(t.weight, 86_875, 'weight');
  near(t.usd, 0.378375, 'USD');
  const side = a.chains.find((c: any) => c.chain_id === `${S3}:side:sr1`);
  assert.equal(side.kind, 'sidechain', 'docs/json.md names the kinds');
  assert.deepEqual([side.cold, side.expiry, side.growth], [3_000, 3_000, 300]);
  assert.deepEqual(a.break_causes.map((c: any) => [c.cause, c.events, c.tokens]), [['model:claude-opus-4-6→claude-sonnet-4-6', 1, 13_000]]);
  near(a.break_causes[0].waste_weight, 24_700, 'break waste');
});
