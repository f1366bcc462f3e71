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
