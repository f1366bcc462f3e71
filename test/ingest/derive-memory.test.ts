/** The de-dup's memory bound grows with the observations it de-duplicates, between 192 MB and 1 GB. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deriveMemoryMb } from '../../src/ingest/ingest.js';

test('320 bytes per observation, at least 192 MB, at most 1 GB', () => {
  assert.equal(deriveMemoryMb(0), 192);
  assert.equal(deriveMemoryMb(200_000), 192);
  assert.equal(deriveMemoryMb(1_000_000), 306);
  assert.equal(deriveMemoryMb(2_000_000), 611);
  assert.equal(deriveMemoryMb(3_355_443), 1024);
  assert.equal(deriveMemoryMb(100_000_000), 1024);
});
