/**
 * DuckDB's bounds for the de-dup, the chains and for loading staged facts grow with the
 * observations, to at most 1 GB; the load's also with how wide the staged `files` rows are; a
 * derive over a store derived before never falls below 128 MB.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chainsMemoryMb, deriveMemoryMb, filesLoadMemoryMb, loadMemoryMb, rederiveMemoryMb } from '../../src/ingest/ingest.js';

test('the de-dup: 72 MB plus 40 bytes per observation, at most 1 GB', () => {
  assert.equal(deriveMemoryMb(0), 72);
  // 1 GB and 10 GB of sample logs: alone over their stores they needed 72 and 120 MB
  assert.equal(deriveMemoryMb(200_000), 80);
  assert.equal(deriveMemoryMb(1_000_000), 111);
  assert.equal(deriveMemoryMb(2_000_000), 149);
  assert.equal(deriveMemoryMb(24_929_894), 1023);
  assert.equal(deriveMemoryMb(24_929_895), 1024);
  assert.equal(deriveMemoryMb(100_000_000), 1024);
});

test('the chains: 64 MB plus 48 bytes per observation, at most 1 GB', () => {
  assert.equal(chainsMemoryMb(0), 64);
  // 1 GB and 10 GB of sample logs: alone over their stores they needed 64 and 136 MB
  assert.equal(chainsMemoryMb(200_000), 74);
  assert.equal(chainsMemoryMb(2_000_000), 156);
  assert.equal(chainsMemoryMb(100_000_000), 1024);
});

test('a derive over a store derived before: a first run\'s bound, but at least 128 MB', () => {
  // 1 GB of logs: the de-dup's 87 MB of sessions 9 – 21 ran out in append runs over a log not yet folded in
  assert.equal(rederiveMemoryMb(deriveMemoryMb(200_000)), 128);
  assert.equal(rederiveMemoryMb(chainsMemoryMb(200_000)), 128);
  assert.equal(rederiveMemoryMb(128), 128);
  assert.equal(rederiveMemoryMb(129), 129);
  assert.equal(rederiveMemoryMb(deriveMemoryMb(2_000_000)), 149);
  assert.equal(rederiveMemoryMb(deriveMemoryMb(100_000_000)), 1024);
});

test('the load: 88 MB plus 12 bytes per observation, at most 1 GB', () => {
  assert.equal(loadMemoryMb(0), 88);
  assert.equal(loadMemoryMb(200_000), 91);
  // 10 GB of sample logs: without the files rows their load needed 88 MB
  assert.equal(loadMemoryMb(2_000_000), 111);
  assert.equal(loadMemoryMb(81_701_546), 1023);
  assert.equal(loadMemoryMb(81_701_547), 1024);
  assert.equal(loadMemoryMb(100_000_000), 1024);
});

test('the load of the files rows: 36 MB plus one row group of them, with 15% to spare, at most 1 GB', () => {
  assert.equal(filesLoadMemoryMb(0, 0), 0);
  assert.equal(filesLoadMemoryMb(1000, 0), 0);
  // fewer rows than a row group: all of them
  assert.equal(filesLoadMemoryMb(11_500_000, 23_478), 55);
  // 10 GB of sample logs (they needed 96 MB), then the same rows with ~1,500 bytes more parser state each (224 MB)
  assert.equal(filesLoadMemoryMb(115_280_092, 234_780), 111);
  assert.equal(filesLoadMemoryMb(348_651_412, 234_780), 252);
  // only the width counts beyond a row group: twice the rows at the same width, the same bound
  assert.equal(filesLoadMemoryMb(2 * 348_651_412, 2 * 234_780), 252);
  assert.equal(filesLoadMemoryMb(5_000_000_000, 234_780), 1024);
  // the sample corpora's bound is keyed on their observations as much as on their files rows
  assert.ok(filesLoadMemoryMb(115_280_092, 234_780) <= loadMemoryMb(2_000_000));
});
