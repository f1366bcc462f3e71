/**
 * DuckDB's memory bounds are measured, not guaranteed: a run in which DuckDB runs out of memory
 * says so on stderr and tries once more with twice the bounds, and ends with the same store as a
 * run that never ran out (ingest.ts).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { ingest } from '../../src/ingest/ingest.js';
import { outOfMemory } from '../../src/store/store.js';
import { MAROT_DOV, corpus, dump, prices, runAndDump, tmp } from '../store/helpers.js';

for (const [name, stageBytes] of [
  ['appended', undefined],
  ['staged and loaded', 0],
] as const) {
  test(`facts ${name}: out of memory at a tiny bound, the run tries once more and gives the usual store`, async () => {
    const root = corpus([MAROT_DOV]);
    const expected = await runAndDump([root], path.join(tmp(), 'usual.duckdb'));
    const notices: string[] = [];
    // bounds of ~1 MB: DuckDB cannot even hold the facts of this session
    const r = await ingest({ paths: [root], dbPath: path.join(tmp(), 'tiny.duckdb'), prices, workers: 1, stageBytes, memoryScale: 0.01, notice: (l) => notices.push(l) });
    try {
      assert.equal(notices.length, 1, notices.join('\n'));
      assert.match(notices[0], /^cachelens: DuckDB ran out of memory \(.*(could not allocate|failed to pin) block.*\); trying once more with 2 times its bounds$/);
      assert.deepEqual(await dump(r.store), expected.dump);
    } finally {
      r.store.close();
    }
  });
}

test('only DuckDB running out of memory counts as such', () => {
  assert.equal(outOfMemory(new Error('Out of Memory Error: could not allocate block of size 256.0 KiB (91.3 MiB/91.5 MiB used)')), true);
  assert.equal(outOfMemory(new Error('Failed to append: could not allocate block of size 32.0 KiB (976.0 KiB/976.5 KiB used)')), true);
  assert.equal(outOfMemory(new Error('IO Error: No space left on device')), false);
  assert.equal(outOfMemory('Out of Memory Error'), false);
});
