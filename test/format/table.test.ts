import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clean, int, usd } from '../../src/format/table.js';
import { formatQuality } from '../../src/reporters/summary.js';
import { cli } from '../helpers/corpus.js';

test('int and usd format with their own digits, whichever formatter was made first', () => {
  // usd's formats are made before int's, each kept by its digits: none may answer for another
  assert.equal(usd(0.01234), '$0.0123');
  assert.equal(usd(12.344), '$12.34');
  assert.equal(usd(-5), '-$5.00');
  assert.equal(usd(1234.5), '$1,235');
  assert.equal(int(1234567.6), '1,234,568');
  assert.equal(usd(0.5), '$0.5000');
  assert.equal(int(-0.4), '0');
  assert.equal(int(null), '—');
  assert.equal(usd(Number.NaN), 'unknown');
});

/** No byte a terminal acts on: C0 (but for the newlines between lines), DEL, C1, bidi controls. */
const ACTIVE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

test('clean: control characters and bidi overrides from transcript text become ?', () => {
  assert.equal(clean('a\u001b[2Jb\u202e'), 'a?[2Jb?');
  assert.equal(clean('x\u001b]0;title\u0007y\rz\u009b1m\u2066'), 'x?]0;title?y?z?1m?');
  assert.equal(clean('é✓😀 plain'), 'é✓😀 plain');
});

test('the data-quality lines quote transcripts\' paths and models cleaned', () => {
  const hostile = 'p\u001b]0;PWNED\u0007\u001b[2J\u202e\r';
  const text = formatQuality({
    files: 1,
    lines: 2,
    skipped_lines: 1,
    skipped: [{ reason: 'invalid_json', count: 1, examples: [{ file: `/logs/${hostile}/s.jsonl`, line: 3, detail: 'x' }] }],
    duplicates_removed: 0,
    usage_lines: 1,
    synthetic: 0,
    unknown_models: [{ model: `claude-${hostile}`, requests: 1, tokens: 5 }],
  });
  assert.doesNotMatch(text, ACTIVE);
  assert.match(text, /unpriced model claude-p\?\]0;PWNED\?\?\[2J\?\?/);
});

test('an error that quotes what it was given is printed cleaned', () => {
  const r = cli(['summary', '/nowhere/\u001b[2J\u202e', '--db', ':memory:']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no such file or directory: \/nowhere\/\?\[2J\?/);
  assert.doesNotMatch(r.stderr, ACTIVE);
});
