/** The de-dup's memory bound grows with the observations it de-duplicates, from 128 MB to at most 1 GB. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deriveMemoryMb } from '../../src/ingest/ingest.js';

test('128 MB plus 64 bytes per observation, at most 1 GB', () => {
  assert.equal(deriveMemoryMb(0), 128);
  assert.equal(deriveMemoryMb(200_000), 141);
  assert.equal(deriveMemoryMb(1_000_000), 190);
  assert.equal(deriveMemoryMb(2_000_000), 251);
  assert.equal(deriveMemoryMb(14_680_064), 1024);
  assert.equal(deriveMemoryMb(100_000_000), 1024);
});
