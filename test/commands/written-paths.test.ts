/**
 * The paths report and export say they wrote are shown as the terminal shows any text: an --out or
 * --parquet whose name holds an escape or a newline was printed raw ("wrote …/a\e[31m\nb.html"
 * recoloured the terminal and broke the line), while every error naming such a path showed it cleaned.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cli, tempDir } from '../helpers/corpus.js';

const SAMPLE = join(import.meta.dirname, '..', '..', 'sample-logs');

test('report and export show the path they wrote with control characters as ?, and write to the path as given', () => {
  const dir = tempDir();
  const out = join(dir, 'a\u001b[31m\nb.html');
  const r = cli(['report', SAMPLE, '--db', ':memory:', '--timezone', 'UTC', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `wrote ${join(dir, 'a?[31m?b.html')}\n`);
  assert.ok(existsSync(out), 'the file is written under its own name');
  // --json keeps the path as it is (JSON escapes it)
  const json = cli(['report', SAMPLE, '--db', ':memory:', '--timezone', 'UTC', '--out', out, '--json']);
  assert.equal(JSON.parse(json.stdout).path, out);
  const parquet = join(dir, 'e\u001b[2J');
  const e = cli(['export', SAMPLE, '--db', ':memory:', '--timezone', 'UTC', '--parquet', parquet]);
  assert.equal(e.code, 0, e.stderr);
  assert.ok(e.stdout.startsWith(`exported to ${join(dir, 'e?[2J')} (days in UTC):\n`), e.stdout);
  assert.doesNotMatch(r.stdout + e.stdout, /\u001b/);
});
