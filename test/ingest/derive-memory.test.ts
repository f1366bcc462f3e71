/** DuckDB's bounds for the de-dup and for loading staged facts grow with the observations, to at most 1 GB. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deriveMemoryMb, loadMemoryMb } from '../../src/ingest/ingest.js';

test('the de-dup: 68 MB plus 96 bytes per observation, at most 1 GB', () => {
  assert.equal(deriveMemoryMb(0), 68);
  assert.equal(deriveMemoryMb(200_000), 87);
  assert.equal(deriveMemoryMb(1_000_000), 160);
  assert.equal(deriveMemoryMb(2_000_000), 252);
  assert.equal(deriveMemoryMb(10_442_069), 1024);
  assert.equal(deriveMemoryMb(100_000_000), 1024);
});

test('the load: 88 MB plus 32 bytes per observation, at most 1 GB', () => {
  assert.equal(loadMemoryMb(0), 88);
  assert.equal(loadMemoryMb(200_000), 95);
  assert.equal(loadMemoryMb(2_000_000), 150);
  assert.equal(loadMemoryMb(30_638_080), 1023);
  assert.equal(loadMemoryMb(30_638_081), 1024);
  assert.equal(loadMemoryMb(100_000_000), 1024);
});
