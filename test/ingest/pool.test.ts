/**
 * The worker pool gives every file's facts exactly once and the same facts as reading on the
 * main thread, whatever order the workers finish in, however many batches the tasks take; errors
 * come back per file; a worker that stops, or an onDone that throws, fails the run cleanly.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { BATCH, type ReadOutcome, type ReaderData, STAGED_PER_MESSAGE, type StartWorker, largestFirst, readAll, startWorker } from '../../src/ingest/pool.js';
import { REAL_LOGS, REPO, plain, tempDir, transcripts } from '../helpers/corpus.js';

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

/** Tasks that fail at once (no such file), each with its own path: cheap, and told apart by path. */
function missing(count: number, bytes: (i: number) => number) {
  return Array.from({ length: count }, (_, i) => ({ path: join(REAL_LOGS, `no-such-dir/${i}.jsonl`), id: { fileId: i + 1, fileAgentId: null, fileSessionId: null }, opts: {}, bytes: bytes(i) }));
}

const READ_WORKER = new URL('../../src/ingest/read-worker.ts', import.meta.url).href;

/** A worker from `prelude` followed by the real reader (under tsx, as startWorker does). */
function withPrelude(prelude: string): StartWorker {
  return (options) => new Worker(`${prelude}\nimport('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(READ_WORKER)}); });`, { ...options, eval: true });
}

/**
 * `count` tasks over the `kinds` smallest real transcripts, the ones `unreadable` picks naming no
 * file; sizes vary so the order of reading is not the tasks' order.
 */
function mixedTasks(count: number, kinds: number, unreadable: (i: number) => boolean) {
  const files = transcripts(REAL_LOGS)
    .map((path) => ({ path, size: statSync(path).size }))
    .sort((a, b) => a.size - b.size)
    .slice(0, kinds);
  return Array.from({ length: count }, (_, i) => ({
    path: unreadable(i) ? join(REAL_LOGS, `no-such-dir/${i}.jsonl`) : files[i % files.length].path,
    id: { fileId: i + 1, fileAgentId: null, fileSessionId: null },
    opts: {},
    bytes: (i * 7919) % 1000,
  }));
}

test('many more tasks than a batch: each once, with the facts read on the main thread, errors among them', async () => {
  const count = 5 * BATCH + 7;
  // every 9th task cannot be read
  const tasks = mixedTasks(count, 12, (i) => i % 9 === 4);
  const run = async (bytes: number) => {
    const bySeq = new Map<number, unknown>();
    await readAll(tasks, bytes, (o) => {
      assert.ok(!bySeq.has(o.task.seq), `task ${o.task.seq} reported twice`);
      assert.equal(o.task.path, tasks[o.task.seq].path);
      assert.equal(o.task.id.fileId, o.task.seq + 1);
      bySeq.set(o.task.seq, 'error' in o ? { error: o.error.code } : plain({ result: o.result, columns: o.columns }));
    }, 2);
    return bySeq;
  };
  const onMain = await run(0);
  const onWorkers = await run(1e12);
  assert.equal(onWorkers.size, count);
  assert.deepEqual(onWorkers.get(4), { error: 'ENOENT' });
  for (let seq = 0; seq < count; seq++) assert.deepEqual(onWorkers.get(seq), onMain.get(seq), `task ${seq}`);
});

test('staged: every task reported once, in messages of at most STAGED_PER_MESSAGE, errors per file; a files row per file read', async () => {
  const count = 3 * BATCH + 5;
  const file = { root: REAL_LOGS, kind: 'main' as const, size: 0, mtimeMs: 0, agentId: null, sessionId: null, project: 'p', synthetic: 0 };
  const tasks = mixedTasks(count, 6, (i) => i % 11 === 3).map((t) => ({ ...t, file }));
  const stage = tempDir();
  const seen = new Map<number, string>();
  const sizes: number[] = [];
  let bytesRead = 0;
  await readAll(tasks, 1e12, (o) => {
    const at = 'seqs' in o ? o.seqs : [o.task.seq];
    if ('seqs' in o) {
      sizes.push(o.seqs.length);
      bytesRead += o.bytesRead;
    }
    for (const seq of at) {
      assert.ok(!seen.has(seq), `task ${seq} reported twice`);
      seen.set(seq, 'seqs' in o ? 'staged' : 'error' in o ? o.error.code! : 'posted');
    }
  }, 2, undefined, stage);
  assert.equal(seen.size, count);
  for (let seq = 0; seq < count; seq++) assert.equal(seen.get(seq), seq % 11 === 3 ? 'ENOENT' : 'staged', `task ${seq}`);
  assert.ok(sizes.every((n) => n >= 1 && n <= STAGED_PER_MESSAGE), sizes.join(' '));
  assert.ok(sizes.filter((n) => n === STAGED_PER_MESSAGE).length >= 10, 'files are reported many to a message');
  const read = tasks.filter((_, i) => i % 11 !== 3);
  assert.equal(bytesRead, read.reduce((n, t) => n + statSync(t.path).size, 0));
  const fileRows = readdirSync(stage)
    .filter((f) => f.startsWith('files.'))
    .flatMap((f) => readFileSync(join(stage, f), 'utf8').split('\n').filter((l) => l !== ''));
  assert.deepEqual(fileRows.map((l) => Number(l.split(',')[0])).sort((a, b) => a - b), read.map((t) => t.id.fileId));
  rmSync(stage, { recursive: true, force: true });
});

test('one worker alone takes every task largest first, across batches', async () => {
  const tasks = missing(3 * BATCH + 5, (i) => (i * 7919) % 500);
  const sizes: number[] = [];
  // the second worker says it is done before taking anything
  const start: StartWorker = (options) =>
    (options.workerData as ReaderData).slot === 1 ? new Worker(`require('node:worker_threads').parentPort.postMessage('done')`, { ...options, eval: true }) : startWorker(options);
  await readAll(tasks, 1e12, (o) => sizes.push(o.task.bytes!), 2, start);
  assert.equal(sizes.length, tasks.length);
  assert.deepEqual(sizes, tasks.map((t) => t.bytes).sort((a, b) => b - a));
});

test('a worker that stops half-way fails the run, names the file it held, and no outcome follows', async () => {
  const tasks = missing(4 * BATCH, () => 1);
  const seen: string[] = [];
  // the first worker takes every task (the second is done at once) and dies in its second batch,
  // as it is about to post its (BATCH + 3)th result
  const dies = withPrelude(`const { parentPort } = require('node:worker_threads');
const post = parentPort.postMessage.bind(parentPort);
let results = 0;
parentPort.postMessage = (m) => { if (m !== 'done' && ++results === ${BATCH + 3}) process.exit(7); post(m); };`);
  const start: StartWorker = (options) =>
    (options.workerData as ReaderData).slot === 0 ? dies(options) : new Worker(`require('node:worker_threads').parentPort.postMessage('done')`, { ...options, eval: true });
  await assert.rejects(
    readAll(tasks, 1e12, (o) => seen.push(o.task.path), 2, start),
    (err: Error) => err.message === `reader worker stopped (exit code 7) with ${tasks[BATCH + 2].path} unfinished`,
  );
  assert.deepEqual(seen, tasks.slice(0, BATCH + 2).map((t) => t.path));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(seen.length, BATCH + 2);
});

test('onDone throwing mid-run fails the run with its error and stops the workers', async () => {
  const tasks = missing(4 * BATCH, () => 1);
  let calls = 0;
  const run = readAll(tasks, 1e12, () => {
    if (++calls === 100) throw new Error('store is gone');
  }, 2);
  await assert.rejects(run, /^Error: store is gone$/);
  assert.equal(calls, 100);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(calls, 100);
});

test('largestFirst: biggest first, ties in the tasks order', () => {
  const sizes = (b: (number | undefined)[]) => ({ length: b.length, bytes: (i: number) => b[i] ?? 0 });
  assert.deepEqual([...largestFirst(sizes([5, 50, 1]))], [1, 0, 2]);
  assert.deepEqual([...largestFirst(sizes([2, undefined, 2, 3]))], [3, 0, 2, 1]);
});
