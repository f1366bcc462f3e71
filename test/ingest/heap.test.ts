/**
 * releaseHeap gives the young generation back: a thread that allocated survivors fast has it at
 * its largest, and back-to-back full collections shrink it, as a large ingest needs while it waits
 * on DuckDB; a small one is left alone. `gc` is not left exposed to later contexts. heapKeeper
 * collects the old generation's garbage as the reading goes, once it passes its floor and twice
 * what was left live.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runInNewContext } from 'node:vm';
import { getHeapStatistics } from 'node:v8';
import { heapKeeper, releaseHeap, youngGenerationBytes } from '../../src/ingest/heap.js';

/** Survivors allocated fast, then dropped: V8 grows the young generation to its largest. Returns its bytes. */
function grow(): number {
  let keep: { i: number; s: string }[] = [];
  for (let i = 0; i < 3_000_000; i++) {
    keep.push({ i, s: `x${i}` });
    if (keep.length > 200_000) keep = keep.slice(100_000);
  }
  keep.length = 0;
  const bytes = youngGenerationBytes();
  assert.ok(bytes >= 16 * 2 ** 20, `young generation ${bytes} B`);
  return bytes;
}

test('releaseHeap shrinks a grown young generation, and leaves no gc behind', () => {
  const grown = grow();

  const r = releaseHeap();
  assert.equal(r.collections, 16);
  assert.equal(r.youngBefore, grown);
  assert.ok(r.youngAfter <= 2 * 2 ** 20, `young generation still ${r.youngAfter} B after ${r.collections} collections`);
  assert.equal(runInNewContext('typeof gc'), 'undefined', 'gc is not exposed to new contexts');
  // a small young generation is not worth the collections
  assert.deepEqual(releaseHeap(), { collections: 0, youngBefore: r.youngAfter, youngAfter: r.youngAfter });

  // two collections leave it as it is: the shrink above comes from the collections, not from V8 on its own
  const again = grow();
  assert.equal(releaseHeap(2).youngAfter, again);
});

test('heapKeeper collects the garbage the heap holds once it passes its floor and twice what was live', () => {
  const used = () => getHeapStatistics().used_heap_size;
  // every 4th call looks; a floor far above this heap: nothing is collected however often it is called
  const idle = heapKeeper(used() + 256 * 2 ** 20, 4);
  for (let i = 0; i < 12; i++) assert.equal(idle(), 0);

  // ~48 MB of objects that survive into the old generation, then dropped: garbage V8 has not collected yet
  let old: string[][] = [];
  for (let i = 0; i < 600; i++) old.push(Array.from({ length: 2000 }, (_, j) => `garbage ${i} ${j}`));
  const live = used();
  old = [];
  const keep = heapKeeper(16 * 2 ** 20, 4);
  assert.equal(keep(), 0);
  assert.equal(keep(), 0);
  assert.equal(keep(), 0);
  const before = used();
  assert.equal(keep(), 1, 'the 4th call looks, and collects');
  assert.ok(used() < before - 32 * 2 ** 20, `heap ${before} → ${used()} B (with the garbage live: ${live} B)`);
  // just collected: the heap holds about what is live, under twice that
  for (let i = 0; i < 8; i++) assert.equal(keep(), 1);
  assert.equal(runInNewContext('typeof gc'), 'undefined', 'gc is not exposed to new contexts');
});
