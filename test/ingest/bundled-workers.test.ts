/**
 * The built CLI starts its workers from dist/bundle/*.cjs (scripts/bundle.mjs): those files, not
 * the sources the other tests run, must walk and read as the sources do. A bundled worker that
 * failed to start would go unnoticed elsewhere: the CLI then walks on its main thread, and small
 * test corpora are read there too.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { discover } from '../../src/ingest/discover.js';
import { type EncodedDiscovery, encodeDiscovery, fileListing, listingDigest, listingNames, walkResult } from '../../src/ingest/early-walk.js';
import { type FileContext, type ReadOutcome, type StartWorker, fileRowOf, readAll } from '../../src/ingest/pool.js';
import { readTranscriptSync } from '../../src/ingest/read-file.js';
import { StagedRows } from '../../src/store/stage.js';
import { REAL_LOGS, REPO, plain, tempDir, transcripts } from '../helpers/corpus.js';

const BUNDLE = join(REPO, 'dist/bundle');

test('the bundled walk worker posts the discovery the sources find, its walk shared with this thread or not', async () => {
  const file = join(BUNDLE, 'walk-worker.cjs');
  assert.ok(existsSync(file), `${file} is missing: run npm run build`);
  const env = { HOME: REPO, CLAUDE_CONFIG_DIR: join(REPO, 'sample-logs') };
  const posted = await new Promise<EncodedDiscovery | { error: string }>((resolve, reject) => {
    const w = new Worker(file, { workerData: { env, sharing: 'none' } });
    w.once('message', resolve);
    w.once('error', reject);
  });
  assert.ok(!('error' in posted), JSON.stringify(posted));
  const found = await discover([], env);
  const expected = encodeDiscovery(found);
  assert.ok(expected.kind.length > 10);
  assert.deepEqual({ ...posted, inOrder: true }, { ...expected, inOrder: true });
  for (const sharing of ['alternate', 'cursor'] as const) {
    const walk = walkResult(new Worker(file, { workerData: { env, sharing } }), env, sharing);
    walk.take();
    const shared = await walk.result;
    assert.deepEqual(shared, found, sharing);
    assert.equal(listingDigest(shared!), expected.digest, sharing);
    assert.equal(listingNames(shared!), expected.names, sharing);
    assert.ok(fileListing(shared!).path(0).buffer instanceof SharedArrayBuffer, `${sharing}: put together from the shared buffer`);
  }
});

test('the bundled read worker gives the facts the sources read on the main thread, posted or staged', async () => {
  const file = join(BUNDLE, 'read-worker.cjs');
  assert.ok(existsSync(file), `${file} is missing: run npm run build`);
  const paths = transcripts(REAL_LOGS).slice(0, 12);
  const context = (i: number): FileContext => ({ root: REAL_LOGS, kind: 'main', size: i, mtimeMs: 1.5 * i, agentId: null, sessionId: `s${i}`, project: 'p"é', synthetic: i % 3 });
  const tasks = paths.map((path, i) => ({ path, id: { fileId: i + 1, fileAgentId: null, fileSessionId: null }, opts: {}, bytes: i, file: context(i) }));
  const collect = async (bytes: number, start?: StartWorker, stage: string | null = null) => {
    const seen = new Map<string, unknown>();
    await readAll(
      tasks,
      bytes,
      (o: ReadOutcome) => {
        // staged: only which files were read, and how many bytes
        if ('seqs' in o) for (const seq of o.seqs) seen.set(tasks[seq].path, { staged: true });
        else seen.set(o.task.path, 'error' in o ? { error: o.error.code } : plain({ result: o.result, columns: o.columns }));
      },
      2,
      start,
      stage,
    );
    return seen;
  };
  const bundled: StartWorker = (options) => new Worker(file, options);
  const onMain = await collect(0);
  // bytes past the pool's threshold: the two workers read every file
  const onBundle = await collect(1e12, bundled);
  assert.equal(onBundle.size, paths.length);
  for (const p of paths) assert.deepEqual(onBundle.get(p), onMain.get(p), p);

  // staged: the workers write the rows the main thread stages, each in files of its own
  const mainStage = tempDir();
  const bundleStage = tempDir();
  const stagedOnMain = await collect(0, undefined, mainStage);
  const stagedOnBundle = await collect(1e12, bundled, bundleStage);
  const everyFile = new Map(paths.map((p) => [p, { staged: true }]));
  assert.deepEqual(stagedOnMain, everyFile, 'staged outcomes carry no rows');
  assert.deepEqual(stagedOnBundle, everyFile);
  assert.deepEqual(readdirSync(mainStage).filter((f) => !f.endsWith('.main.csv')), []);
  // each worker writes files of its own (which worker read what depends on timing)
  const workerFiles = readdirSync(bundleStage);
  assert.ok(workerFiles.length > 0 && workerFiles.every((f) => /\.w[01]\.csv$/.test(f)), workerFiles.join(' '));
  const rows = (dir: string, table: string) =>
    readdirSync(dir)
      .filter((f) => f.startsWith(`${table}.`))
      .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n'))
      .filter((l) => l !== '')
      .sort();
  const observations = rows(mainStage, 'observations');
  assert.ok(observations.length > 100, `only ${observations.length} observation rows`);
  for (const table of ['observations', 'chain_facts', 'attachments', 'line_counts', 'files']) assert.deepEqual(rows(bundleStage, table), rows(mainStage, table), table);
  // the `files` rows are those the main thread writes from a posted result (fileRowOf)
  const posted = tempDir();
  const written = new StagedRows(posted, 'main');
  for (const t of tasks) written.file(fileRowOf(t, readTranscriptSync(t.path, t.id, t.opts)));
  written.close();
  assert.equal(rows(posted, 'files').length, paths.length);
  assert.deepEqual(rows(bundleStage, 'files'), rows(posted, 'files'));
  for (const dir of [mainStage, bundleStage, posted]) rmSync(dir, { recursive: true, force: true });
});
