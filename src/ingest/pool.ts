/**
 * Reads many transcripts on a pool of worker threads sized to the cores (JSON work is CPU-bound).
 * Small jobs stay on the main thread, where starting a worker would cost more than it saves.
 *
 *   tasks (largest first) ─▶ shared cursor ─▶ worker 1 … n ─▶ results ─▶ onDone (main thread)
 *
 * Workers take the next task from a cursor in shared memory instead of asking the main thread
 * for it, so they never wait while the main thread is busy storing facts. They may run at most
 * AHEAD results in front of what the main thread has taken, so memory stays bounded however
 * many files there are.
 *
 * Example: 3 tasks of 5, 50 and 1 MB on 2 workers: worker A takes the 50 MB file, worker B the
 * 5 MB one and then the 1 MB one; onDone sees B's two results, then A's.
 */
import { availableParallelism } from 'node:os';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { type FactColumns, encodeFacts } from '../store/fact-columns.js';
import type { FileFacts, FileIdentity } from './file-parser.js';
import { type ReadOptions, type ReadResult, readTranscriptSync } from './read-file.js';

export interface ReadTask {
  seq: number;
  path: string;
  id: FileIdentity;
  opts: ReadOptions;
  /** bytes to read, when known: bigger tasks are started first */
  bytes?: number;
}

/**
 * A file read: its result, whose facts keep only what describes the file (session, cwd, state,
 * counts), and its rows for the fact tables as columns, ready for StoreWriter.columns.
 */
export type ReadOutcome = { task: ReadTask; result: ReadResult; columns: FactColumns } | { task: ReadTask; error: { code: string | null; message: string } };

/** What a worker posts: the task's seq with its result or error. */
export type WorkerMessage = { seq: number; result: ReadResult; columns: FactColumns } | { seq: number; error: { code: string | null; message: string } };

/** A worker's last message: it has no more tasks (messages of one port arrive in order, so all its results came before). */
export const DONE = 'done';

/** Slots of the shared Int32Array. */
export const CURSOR = 0;
export const TAKEN = 1;
export const POSTED = 2;

/** Results the workers may post before the main thread has taken them. */
export const AHEAD = 8;

/**
 * A worker's young generation (MiB). V8's default lets each reader's nursery grow to ~48 MB of
 * short-lived line objects; 8 MB keeps the process ~50 MB smaller at no measurable cost in time.
 */
const YOUNG_GENERATION_MB = 8;

const WORKER_THRESHOLD_BYTES = 8 * 1024 * 1024;

export function readOne(task: ReadTask): WorkerMessage {
  try {
    const result = readTranscriptSync(task.path, task.id, task.opts);
    const columns = encodeFacts(result.facts);
    return { seq: task.seq, result: { ...result, facts: withoutRows(result.facts) }, columns };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { seq: task.seq, error: { code: e.code ?? null, message: e.message } };
  }
}

export async function readAll(
  tasks: Omit<ReadTask, 'seq'>[],
  bytes: number,
  onDone: (o: ReadOutcome) => void,
  workers = availableParallelism(),
): Promise<void> {
  const queue: ReadTask[] = tasks.map((t, seq) => ({ ...t, seq }));
  const outcome = (m: WorkerMessage): ReadOutcome => ('error' in m ? { task: queue[m.seq], error: m.error } : { task: queue[m.seq], result: m.result, columns: m.columns });
  if (workers <= 1 || bytes < WORKER_THRESHOLD_BYTES || queue.length < 2) {
    for (const task of queue) onDone(outcome(readOne(task)));
    return;
  }
  const order = [...queue].sort((a, b) => (b.bytes ?? 0) - (a.bytes ?? 0));
  const shared = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  const n = Math.min(workers, queue.length);
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve, reject) => {
          const w = startWorker({ workerData: { tasks: order, shared }, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
          let done = false;
          w.on('message', (m: WorkerMessage | typeof DONE) => {
            if (m === DONE) {
              done = true;
              resolve();
              return;
            }
            Atomics.add(shared, TAKEN, 1);
            Atomics.notify(shared, TAKEN);
            onDone(outcome(m));
          });
          w.on('error', reject);
          w.on('exit', (code) => {
            if (!done) reject(new Error(`reader worker stopped (exit code ${code}) before its last file`));
          });
        }),
    ),
  );
}

/** Facts without their rows (those travel as columns): what is left describes the file. */
function withoutRows(f: FileFacts): FileFacts {
  return { ...f, observations: [], chains: [], spawns: [], links: [], sidechainRoots: [], attachments: [], events: [], lineCounts: new Map(), skipped: [] };
}

/** The built worker, or under tsx (tests, `npm run bench` from source) the .ts one with tsx loaded in it. */
function startWorker(options: WorkerOptions): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./read-worker.js', import.meta.url), options);
  const url = new URL('./read-worker.ts', import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url)}); });`, { ...options, eval: true });
}
