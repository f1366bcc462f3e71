/**
 * The worker pool gives every file's facts exactly once and the same facts as reading on the
 * main thread, whatever order the workers finish in; errors come back per file.
 */
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { type ReadOutcome, readAll } from '../../src/ingest/pool.js';
import { REAL_LOGS, REPO } from '../helpers/corpus.js';

function transcripts(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return transcripts(p);
    return name.endsWith('.jsonl') ? [p] : [];
  });
}

const plain = (x: unknown) => JSON.parse(JSON.stringify(x, (_k, v) => (v instanceof Map ? [...v] : v)));

async function collect(paths: string[], bytes: number, workers: number): Promise<Map<string, unknown>> {
  const tasks = paths.map((path, i) => ({ path, id: { fileId: i + 1, fileAgentId: null, fileSessionId: null }, opts: {}, bytes: i }));
  const seen = new Map<string, unknown>();
  await readAll(tasks, bytes, (o: ReadOutcome) => {
    assert.ok(!seen.has(o.task.path), `${o.task.path} reported twice`);
    seen.set(o.task.path, 'error' in o ? { error: o.error.code } : plain({ result: o.result, columns: o.columns }));
  }, workers);
  return seen;
}

test('workers and the main thread read the same facts, each file once, errors per file', async () => {
  const paths = [...transcripts(REAL_LOGS), ...transcripts(join(REPO, 'sample-logs')), join(REAL_LOGS, 'no-such-file.jsonl')];
  assert.ok(paths.length > 30);
  const onMain = await collect(paths, 0, 2);
  const onWorkers = await collect(paths, 1e12, 2);
  assert.equal(onWorkers.size, paths.length);
  assert.deepEqual(onWorkers.get(join(REAL_LOGS, 'no-such-file.jsonl')), { error: 'ENOENT' });
  for (const p of paths) assert.deepEqual(onWorkers.get(p), onMain.get(p), p);
});
