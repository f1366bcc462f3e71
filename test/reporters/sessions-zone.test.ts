/**
 * `sessions` prints each session's first and last request as local minutes of `--timezone`: the
 * table's title names that zone, as `summary`'s `By day (…)` does, on a cold and a warm run alike.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { cli, tempDir } from '../helpers/corpus.js';

const SAMPLE = join(import.meta.dirname, '..', '..', 'sample-logs');

test('sessions names the zone its first and last columns are in', () => {
  const db = join(tempDir('sessions-zone'), 's.duckdb');
  const kolkata = ['sessions', SAMPLE, '--db', db, '--timezone', 'Asia/Kolkata'];
  for (const run of ['cold', 'warm']) {
    const r = cli(kolkata);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Sessions \(first and last in Asia\/Kolkata\)$/m, run);
  }
  const utc = cli(['sessions', SAMPLE, '--db', db, '--timezone', 'UTC']);
  assert.match(utc.stdout, /^Sessions \(first and last in UTC\)$/m);
  // the times move with the zone: Kolkata is UTC+5:30
  const first = (out: string) => out.split('\n').find((l) => l.startsWith('1f517242'))!.match(/\d{4}-\d\d-\d\d \d\d:\d\d/)![0];
  const k = first(cli(kolkata).stdout);
  const u = first(utc.stdout);
  assert.equal(Date.parse(`${k.replace(' ', 'T')}Z`) - Date.parse(`${u.replace(' ', 'T')}Z`), 5.5 * 3600_000);
});

test('sessions cuts each id at 8 characters, or as many more as tell it from another id of the table', async () => {
  const { formatSessions, shortIds } = await import('../../src/reporters/summary.js');
  assert.deepEqual(shortIds(['4d5611e5-24', '4d5611e5-99', 'a1b2c3d4-00']), ['4d5611e5-2', '4d5611e5-9', 'a1b2c3d4']);
  // an id that is a prefix of another stays whole; repeated ids are one id; short ids stay as they are
  assert.deepEqual(shortIds(['abcdefghij', 'abcdefghijk', 'abcdefghij', 'xy']), ['abcdefghij', 'abcdefghijk', 'abcdefghij', 'xy']);
  // two sessions sharing their first 8 characters were printed as one id
  const row = (id: string) => ({ session_id: id, project: '/p', first: '2026-01-01 10:00', last: '2026-01-01 11:00', chains: 1, requests: 1, input: 1, output: 1, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0, weight: 6, usd: 0.00003, unpriced_requests: 0 });
  const two = (rows: unknown[]) => ({ sessions: rows, totals: { sessions: 2, chains: 2, subagents: 0, requests: 2, input: 2, output: 2, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0, weight: 12, usd: 0.00006, unpriced_requests: 0 } }) as never;
  const text = formatSessions(two([row('44444444-4444-4444-4444-444444444444'), row('44444444-4444-4444-4444-999999999999')]));
  assert.match(text, /^44444444-4444-4444-4444-4 /m);
  assert.match(text, /^44444444-4444-4444-4444-9 /m);
  // cut by --top, a shown id is still told from the ids left out (it is what replay session takes)
  const top = formatSessions(two([row('44444444-4444-4444-4444-444444444444'), row('44444444-4444-4444-4444-999999999999')]), false, undefined, 1);
  assert.match(top, /^44444444-4444-4444-4444-4 /m);
  assert.doesNotMatch(top, /^44444444-4444-4444-4444-9/m);
});

test('sessions --top N lists the N most expensive, its title saying (top N of M); --json keeps them all, as anatomy\'s --top does; a bad N is a one-line error', () => {
  const db = join(tempDir('sessions-top'), 's.duckdb');
  const all = JSON.parse(cli(['sessions', SAMPLE, '--db', db, '--timezone', 'UTC', '--json']).stdout).sessions as { session_id: string }[];
  assert.ok(all.length > 3);
  const r = cli(['sessions', SAMPLE, '--db', db, '--timezone', 'UTC', '--top', '3']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^Sessions \\(top 3 of ${all.length}; first and last in UTC\\)$`, 'm'));
  const listed = r.stdout.split('\n').filter((l) => /^[0-9a-f]{8}/.test(l)).map((l) => l.split(' ')[0]!);
  assert.deepEqual(listed, all.slice(0, 3).map((s) => s.session_id.slice(0, listed[0]!.length)));
  assert.equal(JSON.parse(cli(['sessions', SAMPLE, '--db', db, '--timezone', 'UTC', '--top', '3', '--json']).stdout).sessions.length, all.length);
  // as many as there are, or more: the whole list, its title as without --top
  assert.match(cli(['sessions', SAMPLE, '--db', db, '--timezone', 'UTC', '--top', String(all.length)]).stdout, /^Sessions \(first and last in UTC\)$/m);
  for (const bad of ['0', '-1', '2.5', 'x']) {
    const b = cli(['sessions', SAMPLE, '--db', db, '--top', bad]);
    assert.equal(b.code, 2, bad);
    assert.match(b.stderr, new RegExp(`^cachelens: --top ${bad.replace('.', '\\.')}: expected a whole number of sessions, at least 1\\n$`));
  }
});
