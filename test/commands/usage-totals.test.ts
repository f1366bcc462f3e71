/**
 * `sessions` and `blocks` print a totals row below a rule, as `summary` does, and carry the same
 * totals in `--json` (`totals`): summary's totals of the requests the filters choose, to the last
 * digit, on sample-logs/ and on the real logs, with and without a filter. They are the sums of the
 * rows (every session in scope, every block's counted requests), of all sessions when `--top` cuts
 * the table, which its label says.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { formatBlocks, formatSessions } from '../../src/reporters/summary.js';
import { int, usd } from '../../src/format/table.js';
import { REAL_LOGS, REPO, cli, tempDir } from '../helpers/corpus.js';

const SAMPLE = join(REPO, 'sample-logs');
const SUMMED = ['requests', 'input', 'output', 'cache_write_5m', 'cache_write_1h', 'cache_read', 'unpriced_requests'] as const;

/** One store for each root, read once: the later runs answer from it, as a user's do. */
const stores = new Map<string, string>();
function db(args: string[]): string {
  const root = args[0]!;
  if (!stores.has(root)) stores.set(root, join(tempDir('usage-totals'), 's.duckdb'));
  return stores.get(root)!;
}

function json(command: string, args: string[]): any {
  const r = cli([command, ...args, '--db', db(args), '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function text(command: string, args: string[]): string {
  const r = cli([command, ...args, '--db', db(args)]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

/** The table's last line, below its last rule: the totals row, its cells split on runs of two spaces or more. */
function totalsRow(out: string): string[] {
  const lines = out.trimEnd().split('\n');
  assert.match(lines.at(-2)!, /^─+$/, 'a rule above the totals row');
  return lines.at(-1)!.split(/ {2,}/);
}

/** Weight and USD as summary's table writes a total: `unknown` when nothing is priced, `+?` when some is not. */
function costText(t: { weight: number | null; usd: number | null; unpriced_requests: number }): string[] {
  const partly = t.unpriced_requests > 0 && t.usd !== null ? ' +?' : '';
  return [t.weight === null ? 'unknown' : int(t.weight) + partly, t.usd === null ? 'unknown' : usd(t.usd) + partly];
}

const CASES: [string, string, string[]][] = [
  ['sample-logs/', SAMPLE, ['--timezone', 'UTC']],
  ['sample-logs/ --project data', SAMPLE, ['--timezone', 'UTC', '--project', 'data']],
  ['sample-logs/ --since 2026-02-11 in America/New_York', SAMPLE, ['--timezone', 'America/New_York', '--since', '2026-02-11']],
  ['the real logs', REAL_LOGS, ['--timezone', 'UTC']],
  ['the real logs --project spotter', REAL_LOGS, ['--timezone', 'UTC', '--project', 'spotter']],
  ['the real logs --since 2026-02-12', REAL_LOGS, ['--timezone', 'UTC', '--since', '2026-02-12']],
  ['the real logs --until 2026-02-11 in Asia/Tokyo', REAL_LOGS, ['--timezone', 'Asia/Tokyo', '--until', '2026-02-11']],
];

describe('the totals of sessions and blocks are summary\'s', () => {
  for (const [name, root, filters] of CASES) {
    test(name, () => {
      const s = json('summary', [root, ...filters]).totals;
      assert.ok(s.requests > 0, 'the filters choose some requests');
      const sessions = json('sessions', [root, ...filters]);
      const blocks = json('blocks', [root, ...filters]);
      for (const [what, t] of [['sessions', sessions.totals], ['blocks', blocks.totals]] as const) {
        for (const k of Object.keys(s)) assert.equal(t[k], s[k], `${what} totals.${k}`);
      }
      // the sums of the rows: every session in scope, every block's counted requests
      for (const k of SUMMED) {
        assert.equal(sessions.sessions.reduce((n: number, r: any) => n + r[k], 0), s[k], `sum of sessions' ${k}`);
        assert.equal(blocks.blocks.reduce((n: number, r: any) => n + r[k], 0), s[k], `sum of blocks' ${k}`);
      }
      for (const [rows, t] of [[sessions.sessions, sessions.totals], [blocks.blocks, blocks.totals]]) {
        for (const k of ['weight', 'usd']) {
          const sum = rows.reduce((n: number, r: any) => n + (r[k] ?? 0), 0);
          assert.ok(Math.abs(sum - (t[k] ?? 0)) <= 1e-9 * Math.max(1, Math.abs(sum)), `sum of ${k}: ${sum} against ${t[k]}`);
        }
      }
      assert.equal(sessions.totals.sessions, sessions.sessions.length);
      assert.equal(sessions.totals.chains, sessions.sessions.reduce((n: number, r: any) => n + r.chains, 0));
      assert.equal(sessions.totals.subagents, sessions.sessions.reduce((n: number, r: any) => n + r.subagents, 0));
      assert.equal(blocks.totals.blocks, blocks.blocks.length);
      assert.equal(blocks.totals.tokens, blocks.blocks.reduce((n: number, r: any) => n + r.tokens, 0));
      assert.equal(blocks.totals.tokens, s.input + s.output + s.cache_write_5m + s.cache_write_1h + s.cache_read);

      // the text tables' totals rows say the same, as summary's writes its own
      const t = sessions.totals;
      assert.deepEqual(totalsRow(text('sessions', [root, ...filters])), ['total', int(t.chains), ...SUMMED.slice(0, 6).map((k) => int(t[k])), ...costText(t)]);
      const b = blocks.totals;
      assert.deepEqual(totalsRow(text('blocks', [root, ...filters])), ['total', int(b.requests), int(b.tokens), ...costText(b)]);
    });
  }
});

test('sessions --top N: the totals row sums every session in scope, and its label says so', () => {
  const args = [SAMPLE, '--timezone', 'UTC'];
  const all = json('sessions', args);
  const n = all.sessions.length;
  assert.ok(n > 3);
  const whole = totalsRow(text('sessions', args));
  const top = totalsRow(text('sessions', [...args, '--top', '3']));
  assert.equal(top[0], `total (all ${n} sessions)`);
  assert.deepEqual(top.slice(1), whole.slice(1));
  assert.equal(whole[0], 'total');
  // --json is whole under --top, its totals too
  assert.deepEqual(json('sessions', [...args, '--top', '3']).totals, all.totals);
  // a --top that cuts nothing labels the row as without it
  assert.equal(totalsRow(text('sessions', [...args, '--top', String(n)]))[0], 'total');
});

test('sample-logs: the totals rows mark a sum that leaves unpriced requests out +?', () => {
  for (const command of ['sessions', 'blocks']) {
    const row = totalsRow(text(command, [SAMPLE, '--timezone', 'UTC']));
    assert.match(row.at(-1)!, /^\$[\d.,]+ \+\?$/, command);
    assert.match(row.at(-2)!, /^[\d,]+ \+\?$/, command);
  }
});

test('a totals row of nothing priced says unknown; the blank columns are blank', () => {
  const t = { requests: 2, input: 1, output: 2, cache_write_5m: 3, cache_write_1h: 4, cache_read: 5, weight: null, usd: null, unpriced_requests: 2 };
  const session = { session_id: 'a1b2c3d4-0000', project: '/p', first: '2026-01-01 10:00', last: '2026-01-01 11:00', first_request: '', last_request: '', chains: 1, subagents: 0, ...t };
  const s = formatSessions({ sessions: [session], totals: { sessions: 1, chains: 1, subagents: 0, ...t } });
  assert.deepEqual(totalsRow(s), ['total', '1', '2', '1', '2', '3', '4', '5', 'unknown', 'unknown']);
  // the label's cell alone holds text: session, project, first and last are blank below the rule
  assert.match(s.trimEnd().split('\n').at(-1)!, /^total {20,}1 /);
  const block = { start: '2026-01-01T10:00:00.000Z', end: '2026-01-01T15:00:00.000Z', first_request: '2026-01-01T10:05:00.000Z', last_request: '2026-01-01T10:06:00.000Z', tokens: 15, models: ['m'], active: false, ...t };
  assert.deepEqual(totalsRow(formatBlocks({ blocks: [block], totals: { blocks: 1, tokens: 15, ...t } })), ['total', '2', '15', 'unknown', 'unknown']);
});
