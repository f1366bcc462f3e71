/**
 * Worker thread: takes positions from the shared cursor until none are left, posting each file's
 * facts as columns, or its error, as it finishes (or writing the facts and the `files` row to its
 * own files in the stage directory, stage.ts, and reporting STAGED_PER_MESSAGE files at a time);
 * waits while AHEAD messages are still untaken (pool.ts). The tasks arrive
 * in batches on its port, read synchronously; batches behind its position (taken by other
 * workers) are dropped, so it holds a few batches, not the whole list.
 * The columns' typed arrays are copied, not transferred: a transfer per small array (about a
 * hundred per file) cost twice as much as the copy.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { StagedRows } from '../store/stage.js';
import { AHEAD, CURSOR, DONE, POSTED, type PieceMessage, READING, type ReaderData, type ReadTask, SENT, STAGED_PER_MESSAGE, type Staged, TAKEN, type TaskBatch, type WorkerMessage, readOne } from './pool.js';

const { shared, port, slot, total, stage, pieceBytes } = workerData as ReaderData;
const pieces = pieceBytes > 0 ? { bytes: pieceBytes, done: (path: string) => parentPort?.postMessage({ piece: path } satisfies PieceMessage) } : null;
const staged = stage === null ? null : new StagedRows(stage, `w${slot}`, pieces);

/** Batches from the one holding the position last claimed, in order. */
const batches: TaskBatch[] = [];

/**
 * The task at position i of the order, dropping the batches before it.
 * Example: holding batches from 0 and 64 (BATCH 64), taskAt(70) drops the first and returns the
 * second's 7th task.
 */
function taskAt(i: number): ReadTask {
  for (;;) {
    while (batches.length > 0 && batches[0].from + batches[0].tasks.length <= i) batches.shift();
    if (batches.length > 0) return batches[0].tasks[i - batches[0].from];
    batches.push(nextBatch());
  }
}

/** The next batch on the port; the main thread sends batches ahead, so waiting here is rare. */
function nextBatch(): TaskBatch {
  for (;;) {
    // read SENT before looking, so a batch posted in between ends the wait at once
    const sent = Atomics.load(shared, SENT);
    const m = receiveMessageOnPort(port);
    if (m) return m.message as TaskBatch;
    Atomics.wait(shared, SENT, sent, 1000);
  }
}

/** Posts a message once fewer than AHEAD are untaken. */
function post(m: WorkerMessage): void {
  for (;;) {
    const taken = Atomics.load(shared, TAKEN);
    if (Atomics.load(shared, POSTED) - taken < AHEAD) break;
    Atomics.wait(shared, TAKEN, taken, 1000);
  }
  Atomics.add(shared, POSTED, 1);
  parentPort?.postMessage(m);
}

/** Files staged since the last message, reported STAGED_PER_MESSAGE at a time. */
let unreported: Staged | null = null;

for (;;) {
  const i = Atomics.add(shared, CURSOR, 1);
  if (i >= total) break;
  Atomics.store(shared, READING + slot, i);
  const m = readOne(taskAt(i), staged);
  if ('seqs' in m) {
    if (unreported === null) unreported = m;
    else {
      unreported.seqs.push(...m.seqs);
      unreported.bytesRead += m.bytesRead;
    }
    if (unreported.seqs.length >= STAGED_PER_MESSAGE) {
      post(unreported);
      unreported = null;
    }
  } else post(m);
  Atomics.store(shared, READING + slot, -1);
}
if (unreported !== null) post(unreported);
port.close();
// the staged files are complete before DONE: the main thread loads them once every worker is done
staged?.close();
parentPort?.postMessage(DONE);
