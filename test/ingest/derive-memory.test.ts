/** The de-dup's memory bound grows with the observations it de-duplicates, between 128 MB and 1 GB. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deriveMemoryMb } from '../../src/ingest/ingest.js';

test('128 bytes per observation, at least 128 MB, at most 1 GB', () => {
  assert.equal(deriveMemoryMb(0), 128);
  assert.equal(deriveMemoryMb(200_000), 128);
  assert.equal(deriveMemoryMb(1_048_576), 128);
  assert.equal(deriveMemoryMb(1_572_864), 192);
  assert.equal(deriveMemoryMb(2_000_000), 245);
  assert.equal(deriveMemoryMb(8_388_608), 1024);
  assert.equal(deriveMemoryMb(100_000_000), 1024);
});
