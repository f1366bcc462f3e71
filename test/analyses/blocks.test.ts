/** 5-hour blocks and sessions (SPEC §7, §2.2): windows from every request, unknown costs never $0. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formBlocks, type HourRow } from '../../src/analyses/blocks.js';
import { assistant, cli, writeCorpus } from '../helpers/corpus.js';

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
