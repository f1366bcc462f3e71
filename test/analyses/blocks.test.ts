/** 5-hour blocks and sessions (SPEC §7, §2.2): windows from every request, unknown costs never $0. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TOKEN_FIELDS, formBlocks, type HourRow } from '../../src/analyses/blocks.js';
import { localDayMinute } from '../../src/format/days.js';
import { assistant, cli, tempDir, writeCorpus } from '../helpers/corpus.js';

const H = 3_600_000;
const at = (iso: string) => Date.parse(iso);

/** An hour with one request at `iso`, in scope or not. */
function hour(iso: string, inScope = true, usd: number | null = 1): HourRow {
  const t = at(iso);
  return {
    hour_ms: Math.floor(t / H) * H,
    all_first_ms: t,
    all_last_ms: t,
    first_ms: inScope ? t : null,
    last_ms: inScope ? t : null,
    requests: inScope ? 1 : 0,
    tokens: inScope ? 10 : 0,
    input: inScope ? 1 : 0,
    output: inScope ? 2 : 0,
    cache_write_5m: inScope ? 3 : 0,
    cache_write_1h: 0,
    cache_read: inScope ? 4 : 0,
    weight: inScope && usd !== null ? usd * 1e5 : null,
    usd: inScope ? usd : null,
    unpriced_requests: inScope && usd === null ? 1 : 0,
    models: inScope ? ['m'] : [],
  };
}

test('blocks: the example of blocks.ts (09:12, 11:40 | 14:30, 15:05)', () => {
  const b = formBlocks([hour('2026-03-01T09:12:00Z'), hour('2026-03-01T11:40:00Z'), hour('2026-03-01T14:30:00Z'), hour('2026-03-01T15:05:00Z')], 0);
  assert.deepEqual(b.map((x) => [x.start, x.end, x.requests]), [
    ['2026-03-01T09:00:00.000Z', '2026-03-01T14:00:00.000Z', 2],
    ['2026-03-01T14:00:00.000Z', '2026-03-01T19:00:00.000Z', 2],
  ]);
});

test('blocks: active only while the time of the run is in [start, end): not a window of requests stamped ahead of it, nor after its end', () => {
  // 09:00–14:00 (09:12, 11:40) and 14:00–19:00 (14:30, 15:05), as in the example above
  const hours = [hour('2026-03-01T09:12:00Z'), hour('2026-03-01T11:40:00Z'), hour('2026-03-01T14:30:00Z'), hour('2026-03-01T15:05:00Z')];
  const active = (now: string) => formBlocks(hours, at(now)).map((b) => b.active);
  assert.deepEqual(active('2026-03-01T08:59:59.999Z'), [false, false]); // every request ahead of the clock
  assert.deepEqual(active('2026-03-01T09:00:00Z'), [true, false]); // the start, before its first request (09:12)
  assert.deepEqual(active('2026-03-01T13:59:59.999Z'), [true, false]);
  assert.deepEqual(active('2026-03-01T14:00:00Z'), [false, true]); // the end is the next window's start
  assert.deepEqual(active('2026-03-01T19:00:00Z'), [false, false]);
  // between windows (a request at 20:30 after 10:00 opens 20:00): neither the one before nor the one ahead
  assert.deepEqual(formBlocks([hour('2026-03-01T10:00:00Z'), hour('2026-03-01T20:30:00Z')], at('2026-03-01T17:00:00Z')).map((b) => b.active), [false, false]);
});

test('blocks: a request out of scope still opens its window; blocks with nothing in scope are left out', () => {
  // 22:00 opens 22:00–03:00, which holds 01:00; 04:00 opens the next. Without 22:00 in scope the
  // windows stay where they were (01:00 does not open a window of its own holding 04:00).
  const b = formBlocks([hour('2026-03-01T22:00:00Z', false), hour('2026-03-02T01:00:00Z'), hour('2026-03-02T04:00:00Z')], 0);
  assert.deepEqual(b.map((x) => [x.start, x.first_request, x.requests]), [
    ['2026-03-01T22:00:00.000Z', '2026-03-02T01:00:00.000Z', 1],
    ['2026-03-02T04:00:00.000Z', '2026-03-02T04:00:00.000Z', 1],
  ]);
  assert.deepEqual(formBlocks([hour('2026-03-01T22:00:00Z', false)], 0), []);
});

test('blocks: unpriced requests make a block\'s cost unknown (all) or partial (some), never $0', () => {
  const [all] = formBlocks([hour('2026-03-01T09:00:00Z', true, null)], 0);
  assert.equal(all!.usd, null);
  assert.equal(all!.weight, null);
  assert.equal(all!.unpriced_requests, 1);
  const [some] = formBlocks([hour('2026-03-01T09:00:00Z', true, null), hour('2026-03-01T10:00:00Z', true, 2)], 0);
  assert.equal(some!.usd, 2);
  assert.equal(some!.unpriced_requests, 1);
});

test('blocks and sessions through the CLI: filters keep the windows; unpriced sessions and blocks say unknown', () => {
  const u = { in: 10, out: 50, w5: 1_000 };
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'a1', t: '2026-03-01T22:00:00Z', u }),
      assistant({ session: 's1', msg: 'a2', t: '2026-03-02T01:00:00Z', u }),
      assistant({ session: 's1', msg: 'a3', t: '2026-03-02T04:00:00Z', u }),
      assistant({ session: 's1', msg: 'a4', t: '2026-03-02T04:30:00Z', model: 'claude-mystery-9', u }),
    ],
    'p/s2.jsonl': [assistant({ session: 's2', msg: 'b1', t: '2026-03-05T10:00:00Z', model: 'claude-mystery-9', u })],
  });
  const run = (args: string[]) => {
    const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const since = run(['blocks', '--since', '2026-03-02']).blocks;
  assert.deepEqual(since.map((b: any) => [b.start, b.requests, b.unpriced_requests, b.usd === null]), [
    ['2026-03-01T22:00:00.000Z', 1, 0, false],
    ['2026-03-02T04:00:00.000Z', 2, 1, false],
    ['2026-03-05T10:00:00.000Z', 1, 1, true],
  ]);
  const sessions = run(['sessions']).sessions;
  const s2 = sessions.find((s: any) => s.session_id === 's2');
  assert.equal(s2.usd, null);
  assert.equal(s2.weight, null);
  assert.equal(s2.unpriced_requests, 1);
  assert.equal(sessions.find((s: any) => s.session_id === 's1').unpriced_requests, 1);
  const text = cli(['sessions', dir, '--db', ':memory:', '--timezone', 'UTC']).stdout;
  assert.match(text, /^s2 .*unknown\s+unknown$/m);
  assert.match(text, /^s1 .*\+\?\s+\$\S+ \+\?$/m);
});

test('blocks through the CLI: the window holding the clock is active, a window of requests stamped 6 hours ahead of it is not', () => {
  const now = Date.now();
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'a1', t: new Date(now - 60_000).toISOString(), u: { in: 10 } }),
      assistant({ session: 's1', msg: 'a2', t: new Date(now + 6 * H).toISOString(), u: { in: 10 } }),
    ],
  });
  const r = cli(['blocks', dir, '--db', ':memory:', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).blocks.map((b: any) => [b.requests, b.active]), [[1, true], [1, false]]);
  const text = cli(['blocks', dir, '--db', ':memory:']).stdout;
  assert.equal([...text.matchAll(/\(active\)/g)].length, 1);
});

test('blocks: each token field is summed over the hours of its block, and they sum to tokens', () => {
  const h1 = { ...hour('2026-03-01T09:12:00Z'), input: 5, output: 7, cache_write_5m: 100, cache_write_1h: 30, cache_read: 1_000, tokens: 1_142 };
  const h2 = { ...hour('2026-03-01T11:40:00Z'), input: 1, output: 2, cache_write_5m: 0, cache_write_1h: 60, cache_read: 500, tokens: 563 };
  const [b] = formBlocks([h1, h2, hour('2026-03-01T22:00:00Z', false)], 0);
  assert.deepEqual({ input: b!.input, output: b!.output, cache_write_5m: b!.cache_write_5m, cache_write_1h: b!.cache_write_1h, cache_read: b!.cache_read, tokens: b!.tokens },
    { input: 6, output: 9, cache_write_5m: 100, cache_write_1h: 90, cache_read: 1_500, tokens: 1_705 });
});

/**
 * Requests of the fixture below: the same usage as the lines written (each written `copies` times,
 * as Claude Code repeats a response's usage on each content block's line), so a block's token
 * fields can be summed here without cachelens.
 */
interface Req { session: string; msg: string; t: string; u: { in: number; out: number; w5: number; w1h: number; r: number }; copies: number }

const fixtureRequests: Req[] = [
  { session: 's1', msg: 'm1', t: '2026-03-01T09:12:00Z', u: { in: 3, out: 410, w5: 12_000, w1h: 0, r: 0 }, copies: 2 },
  { session: 's1', msg: 'm2', t: '2026-03-01T09:40:00Z', u: { in: 5, out: 220, w5: 800, w1h: 0, r: 12_000 }, copies: 3 },
  { session: 's2', msg: 'm3', t: '2026-03-01T11:05:00Z', u: { in: 9, out: 1_030, w5: 0, w1h: 20_500, r: 0 }, copies: 1 },
  { session: 's1', msg: 'm4', t: '2026-03-01T14:30:00Z', u: { in: 2, out: 95, w5: 300, w1h: 4_000, r: 12_800 }, copies: 2 },
  { session: 's2', msg: 'm5', t: '2026-03-01T15:05:00Z', u: { in: 1, out: 60, w5: 0, w1h: 0, r: 24_500 }, copies: 1 },
];

/** The lines of one request, its copies apart by their content. */
const linesOf = (q: Req) => Array.from({ length: q.copies }, (_, i) => ({ ...assistant({ session: q.session, msg: q.msg, t: q.t, u: q.u, content: [{ type: 'text', text: `part ${i}` }] }), uuid: `${q.msg}-${i}` }));

/** The fields each 5-hour block should hold, summed from the fixture's requests (windows as SPEC §7 forms them). */
function expectedBlocks(reqs: Req[]) {
  const H = 3_600_000;
  const out: { start: string; requests: number; tokens: number; input: number; output: number; cache_write_5m: number; cache_write_1h: number; cache_read: number }[] = [];
  let start = -Infinity;
  for (const q of [...reqs].sort((a, b) => at(a.t) - at(b.t))) {
    if (at(q.t) >= start + 5 * H) {
      start = Math.floor(at(q.t) / H) * H;
      out.push({ start: new Date(start).toISOString(), requests: 0, tokens: 0, input: 0, output: 0, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0 });
    }
    const b = out[out.length - 1]!;
    b.requests++;
    b.input += q.u.in;
    b.output += q.u.out;
    b.cache_write_5m += q.u.w5;
    b.cache_write_1h += q.u.w1h;
    b.cache_read += q.u.r;
    b.tokens += q.u.in + q.u.out + q.u.w5 + q.u.w1h + q.u.r;
  }
  return out;
}

test('blocks --json gives each block its token fields, the same from a cold run, a warm run, an append run and a store built afresh', () => {
  const dir = writeCorpus({
    'projects/-work-demo/s1.jsonl': fixtureRequests.filter((q) => q.session === 's1').flatMap(linesOf),
    'projects/-work-demo/s2.jsonl': fixtureRequests.filter((q) => q.session === 's2').flatMap(linesOf),
  });
  const db = join(tempDir(), 'store.duckdb');
  const stamp = () => statSync(db).mtimeMs;
  const run = (command: string, dbPath = db) => {
    const r = cli([command, dir, '--db', dbPath, '--timezone', 'UTC', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const check = (out: any, reqs: Req[], what: string) => {
    const blocks = out.blocks as any[];
    assert.deepEqual(blocks.map((b) => ({ start: b.start, requests: b.requests, tokens: b.tokens, ...Object.fromEntries(TOKEN_FIELDS.map((k) => [k, b[k]])) })), expectedBlocks(reqs), what);
    for (const b of blocks) assert.equal(TOKEN_FIELDS.reduce((s, k) => s + b[k], 0), b.tokens, `${what}: fields sum to tokens (${b.start})`);
  };

  const cold = run('blocks');
  check(cold, fixtureRequests, 'cold');
  assert.equal(cold.blocks.length, 2);
  assert.ok(existsSync(db + '.answers'), 'the cold run kept its answers');
  const before = stamp();
  const warm = run('blocks');
  assert.deepEqual(warm, cold, 'warm');
  assert.equal(stamp(), before, 'the warm run answered without writing the store');

  // summary's answers are kept too, and an append is added to them without the store (delta.ts);
  // blocks then asks what those answers do not hold, and the store reads the appended line
  run('summary');
  const appended: Req[] = [...fixtureRequests, { session: 's2', msg: 'm6', t: '2026-03-01T16:20:00Z', u: { in: 4, out: 333, w5: 1_500, w1h: 2_500, r: 25_000 }, copies: 2 }];
  appendFileSync(join(dir, 'projects/-work-demo/s2.jsonl'), linesOf(appended[5]!).map((l) => JSON.stringify(l)).join('\n') + '\n');
  const beforeDelta = stamp();
  const summed = run('summary');
  assert.equal(summed.totals.requests, appended.length);
  assert.ok(existsSync(db + '.delta'), 'the append was added to the kept answers');
  assert.equal(stamp(), beforeDelta, 'without writing the store');
  const afterDelta = run('blocks');
  check(afterDelta, appended, 'blocks after an append run answered without DuckDB');
  assert.deepEqual(afterDelta, run('blocks', ':memory:'), 'as a store built afresh');
  assert.deepEqual(run('blocks'), afterDelta, 'warm after the append');

  // an append blocks reads itself (the store's appended read); m7 opens a third block
  const more: Req[] = [...appended, { session: 's1', msg: 'm7', t: '2026-03-01T19:45:00Z', u: { in: 7, out: 88, w5: 640, w1h: 0, r: 30_100 }, copies: 3 }];
  appendFileSync(join(dir, 'projects/-work-demo/s1.jsonl'), linesOf(more[6]!).map((l) => JSON.stringify(l)).join('\n') + '\n');
  const append = run('blocks');
  check(append, more, 'append run');
  assert.equal(append.blocks.length, 3);
  assert.deepEqual(append, run('blocks', ':memory:'), 'the append run as a store built afresh');
  assert.deepEqual(run('blocks'), append, 'warm after it');
});

test('blocks through the CLI: --timezone moves the times the table shows, not the windows; --json stays in UTC', () => {
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'a1', t: '2026-03-01T21:10:00Z', u: { in: 10 } }),
      assistant({ session: 's1', msg: 'a2', t: '2026-03-02T02:00:00Z', u: { in: 10 } }),
    ],
  });
  const text = (tz: string) => {
    const r = cli(['blocks', dir, '--db', ':memory:', '--timezone', tz]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  // the windows are 21:00–02:00 and 02:00–07:00 UTC; Kolkata is UTC+5:30, so they show a day later at 02:30 and 07:30
  // an end on a later day than its start shows that day's month and day: a bare 02:00 read as 03-01's
  assert.match(text('UTC'), /^block start \(UTC\)/m);
  assert.match(text('UTC'), /^2026-03-01 21:00 +03-02 02:00 /m);
  assert.match(text('UTC'), /^2026-03-02 02:00 +07:00 /m);
  const k = text('Asia/Kolkata');
  assert.match(k, /^block start \(Asia\/Kolkata\)/m);
  assert.match(k, /^2026-03-02 02:30 +07:30 /m);
  assert.match(k, /^2026-03-02 07:30 +12:30 /m);
  // New York (UTC−5) moves the second window across midnight, and the first off it
  const ny = text('America/New_York');
  assert.match(ny, /^2026-03-01 16:00 +21:00 /m);
  assert.match(ny, /^2026-03-01 21:00 +03-02 02:00 /m);
  const j = JSON.parse(cli(['blocks', dir, '--db', ':memory:', '--timezone', 'Asia/Kolkata', '--json']).stdout);
  assert.deepEqual(j.blocks.map((b: any) => [b.start, b.end]), [
    ['2026-03-01T21:00:00.000Z', '2026-03-02T02:00:00.000Z'],
    ['2026-03-02T02:00:00.000Z', '2026-03-02T07:00:00.000Z'],
  ]);
  // the day as sessions write theirs, a year past 9999 too
  assert.deepEqual(localDayMinute(Date.parse('9999-12-31T23:00:00Z'), 'Asia/Tokyo'), ['+010000-01-01', '08:00']);
});

test('blocks through the CLI: on a day the clocks change, an end on the next day shows that day, one on the same day its time alone', () => {
  const dir = writeCorpus({
    'p/s1.jsonl': [
      // Europe/Berlin goes back from 03:00 CEST to 02:00 CET at 2026-10-25T01:00Z: the window 20:00–01:00 UTC is 22:00 – 02:00 the next day
      assistant({ session: 's1', msg: 'a1', t: '2026-10-24T20:10:00Z', u: { in: 10 } }),
      // New York goes forward from 02:00 EST to 03:00 EDT at 2026-03-08T07:00Z: 03:00–08:00 UTC is 22:00 (03-07) – 04:00,
      // and 08:00–13:00 UTC 04:00 – 09:00 the same day
      assistant({ session: 's1', msg: 'b1', t: '2026-03-08T03:30:00Z', u: { in: 10 } }),
      assistant({ session: 's1', msg: 'b2', t: '2026-03-08T08:30:00Z', u: { in: 10 } }),
    ],
  });
  const text = (tz: string) => {
    const r = cli(['blocks', dir, '--db', ':memory:', '--timezone', tz]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  const berlin = text('Europe/Berlin');
  assert.match(berlin, /^2026-10-24 22:00 +10-25 02:00 /m);
  const ny = text('America/New_York');
  assert.match(ny, /^2026-03-07 22:00 +03-08 04:00 /m);
  assert.match(ny, /^2026-03-08 04:00 +09:00 /m);
  // in UTC the March windows stay on their day, the October one crosses midnight too
  const utc = text('UTC');
  assert.match(utc, /^2026-03-08 03:00 +08:00 /m);
  assert.match(utc, /^2026-03-08 08:00 +13:00 /m);
  assert.match(utc, /^2026-10-24 20:00 +10-25 01:00 /m);
});

test('endText: a block\'s end is its time on the start\'s day, its month, day and time on a later one (a year past 9999 too)', async () => {
  const { endText } = await import('../../src/reporters/summary.js');
  assert.equal(endText(['2026-02-10', '09:00'], ['2026-02-10', '14:00']), '14:00');
  assert.equal(endText(['2026-02-10', '21:00'], ['2026-02-11', '02:00']), '02-11 02:00');
  assert.equal(endText(['2026-12-31', '22:00'], ['2027-01-01', '03:00']), '01-01 03:00');
  assert.equal(endText(['9999-12-31', '23:00'], ['+010000-01-01', '04:00']), '01-01 04:00');
});
