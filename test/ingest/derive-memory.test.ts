/**
 * DuckDB's bounds for the de-dup and for loading staged facts grow with the observations, to at
 * most 1 GB; the load's also with how wide the staged `files` rows are; a derive over a store derived
 * before never falls below 128 MB.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deriveMemoryMb, filesLoadMemoryMb, loadMemoryMb, rederiveMemoryMb } from '../../src/ingest/ingest.js';

test('the de-dup: 68 MB plus 96 bytes per observation, at most 1 GB', () => {
  assert.equal(deriveMemoryMb(0), 68);
  assert.equal(deriveMemoryMb(200_000), 87);
  assert.equal(deriveMemoryMb(1_000_000), 160);
  assert.equal(deriveMemoryMb(2_000_000), 252);
  assert.equal(deriveMemoryMb(10_442_069), 1024);
  assert.equal(deriveMemoryMb(100_000_000), 1024);
});

test('a derive over a store derived before: the de-dup\'s bound, but at least 128 MB', () => {
  assert.equal(rederiveMemoryMb(0), 128);
  // 1 GB of logs: the de-dup's 87 MB ran out in append runs over a log not yet folded in
  assert.equal(rederiveMemoryMb(200_000), 128);
  assert.equal(rederiveMemoryMb(647_000), 128);
  assert.equal(rederiveMemoryMb(700_000), deriveMemoryMb(700_000));
  assert.equal(rederiveMemoryMb(2_000_000), 252);
  assert.equal(rederiveMemoryMb(100_000_000), 1024);
});

test('the load: 88 MB plus 32 bytes per observation, at most 1 GB', () => {
  assert.equal(loadMemoryMb(0), 88);
  assert.equal(loadMemoryMb(200_000), 95);
  assert.equal(loadMemoryMb(2_000_000), 150);
  assert.equal(loadMemoryMb(30_638_080), 1023);
  assert.equal(loadMemoryMb(30_638_081), 1024);
  assert.equal(loadMemoryMb(100_000_000), 1024);
});

test('the load of the files rows: 32 MB plus one row group of them, with 35% to spare, at most 1 GB', () => {
  assert.equal(filesLoadMemoryMb(0, 0), 0);
  assert.equal(filesLoadMemoryMb(1000, 0), 0);
  // fewer rows than a row group: all of them
  assert.equal(filesLoadMemoryMb(11_500_000, 23_478), 59);
  // 10 GB of sample logs, then the same rows with ~1,500 bytes more parser state each
  assert.equal(filesLoadMemoryMb(115_280_092, 234_780), 125);
  assert.equal(filesLoadMemoryMb(348_651_412, 234_780), 290);
  // only the width counts beyond a row group: twice the rows at the same width, the same bound
  assert.equal(filesLoadMemoryMb(2 * 348_651_412, 2 * 234_780), 290);
  assert.equal(filesLoadMemoryMb(5_000_000_000, 234_780), 1024);
  // the sample corpora keep the bound keyed on their observations
  assert.ok(filesLoadMemoryMb(115_280_092, 234_780) < loadMemoryMb(2_000_000));
});
