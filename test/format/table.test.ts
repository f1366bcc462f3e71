import assert from 'node:assert/strict';
import { test } from 'node:test';
import { int, usd } from '../../src/format/table.js';

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
