import assert from 'node:assert/strict';
import { test } from 'node:test';
import { against } from '../../bench/markdown.js';

test('a figure judged against a limit never prints as the limit', () => {
  // session 36's warm run: 0.38 s against ccusage's 3.74 s, over the 0.1× target
  assert.equal(against(0.38 / 3.74, 0.1), '0.102×');
  assert.equal(against(0.0996, 0.1), '0.0996×');
  assert.equal(against(0.09996, 0.1), '0.09996×');
  // far from the limit: two decimals, as before
  assert.equal(against(1.713, 1), '1.71×');
  assert.equal(against(0.14, 0.15), '0.14×');
  assert.equal(against(0.28, 1.5, ' s'), '0.28 s');
  // on the limit itself, which meets it
  assert.equal(against(0.1, 0.1), '0.10×');
});
