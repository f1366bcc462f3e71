/**
 * The built CLI starts its workers from dist/bundle/*.cjs (scripts/bundle.mjs): those files, not
 * the sources the other tests run, must walk and read as the sources do. A bundled worker that
 * failed to start would go unnoticed elsewhere: the CLI then walks on its main thread, and small
 * test corpora are read there too.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { discover } from '../../src/ingest/discover.js';
import { type EncodedDiscovery, encodeDiscovery } from '../../src/ingest/early-walk.js';
import { type ReadOutcome, type RowsAs, type StartWorker, readAll } from '../../src/ingest/pool.js';
import { csvFacts } from '../../src/store/fact-columns.js';
import { REAL_LOGS, REPO, plain, transcripts } from '../helpers/corpus.js';

const BUNDLE = join(REPO, 'dist/bundle');

test('the bundled walk worker posts the discovery the sources find', async () => {
  const file = join(BUNDLE, 'walk-worker.cjs');
  assert.ok(existsSync(file), `${file} is missing: run npm run build`);
  const env = { HOME: REPO, CLAUDE_CONFIG_DIR: join(REPO, 'sample-logs') };
  const posted = await new Promise<EncodedDiscovery | { error: string }>((resolve, reject) => {
    const w = new Worker(file, { workerData: { env } });
    w.once('message', resolve);
    w.once('error', reject);
  });
  assert.ok(!('error' in posted), JSON.stringify(posted));
  const expected = encodeDiscovery(await discover([], env));
  assert.ok(expected.kind.length > 10);
  assert.deepEqual(posted, expected);
});

test('the bundled read worker gives the facts the sources read on the main thread, as columns and as CSV', async () => {
  const file = join(BUNDLE, 'read-worker.cjs');
  assert.ok(existsSync(file), `${file} is missing: run npm run build`);
  const paths = transcripts(REAL_LOGS).slice(0, 12);
  const tasks = paths.map((path, i) => ({ path, id: { fileId: i + 1, fileAgentId: null, fileSessionId: null }, opts: {}, bytes: i }));
  const collect = async (bytes: number, start: StartWorker | undefined, rowsAs: RowsAs) => {
    const seen = new Map<string, unknown>();
    const raw = new Map<string, ReadOutcome>();
    const rows = (o: ReadOutcome & { result: unknown }) => ('csv' in o ? { csv: o.csv } : { columns: o.columns });
    await readAll(tasks, bytes, (o: ReadOutcome) => {
      seen.set(o.task.path, 'error' in o ? { error: o.error.code } : plain({ result: o.result, ...rows(o) }));
      raw.set(o.task.path, o);
    }, 2, start, rowsAs);
    return { seen, raw };
  };
  const onMain = await collect(0, undefined, 'columns');
  const bundled: StartWorker = (options) => new Worker(file, options);
  // bytes past the pool's threshold: the two workers read every file
  const onBundle = await collect(1e12, bundled, 'columns');
  const csvOnBundle = await collect(1e12, bundled, 'csv');
  assert.equal(onBundle.seen.size, paths.length);
  let observations = 0;
  for (const p of paths) {
    assert.deepEqual(onBundle.seen.get(p), onMain.seen.get(p), p);
    // the CSV is the main thread's columns as csvFacts writes them
    const main = onMain.raw.get(p)!;
    const bundle = csvOnBundle.raw.get(p)!;
    assert.ok('columns' in main && 'csv' in bundle, p);
    const csv = csvFacts(main.columns);
    assert.deepEqual(bundle.csv, csv, p);
    assert.deepEqual(plain(bundle.result), plain(main.result), p);
    observations += csv.observations?.split('\n').length ?? 0;
  }
  assert.ok(observations > 100, `only ${observations} observation rows compared`);
});
