/**
 * Reads many transcripts on a pool of worker threads sized to the cores (JSON work is CPU-bound;
 * two cores read ~1.5× faster than one). Small jobs stay on the main thread, where starting a
 * worker would cost more than it saves.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FileIdentity } from './file-parser.js';
import { type ReadOptions, type ReadResult, readTranscript } from './read-file.js';

export interface ReadTask {
  seq: number;
  path: string;
  id: FileIdentity;
  opts: ReadOptions;
}

export type ReadOutcome = { task: ReadTask; result: ReadResult } | { task: ReadTask; error: { code: string | null; message: string } };

const WORKER_THRESHOLD_BYTES = 8 * 1024 * 1024;

export async function readAll(
  tasks: Omit<ReadTask, 'seq'>[],
  bytes: number,
  onDone: (o: ReadOutcome) => void,
  workers = availableParallelism(),
): Promise<void> {
  const queue: ReadTask[] = tasks.map((t, seq) => ({ ...t, seq }));
  const readHere = async (task: ReadTask) => {
    try {
      onDone({ task, result: await readTranscript(task.path, task.id, task.opts) });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      onDone({ task, error: { code: e.code ?? null, message: e.message } });
    }
  };
  if (workers <= 1 || bytes < WORKER_THRESHOLD_BYTES || queue.length < 2) {
    for (const task of queue) await readHere(task);
    return;
  }
  const url = new URL(import.meta.url.endsWith('.ts') ? './read-worker.ts' : './read-worker.js', import.meta.url);
  const n = Math.min(workers, queue.length);
  let next = 0;
  // A worker that dies (it could not start, or ran out of memory) hands its task, and whatever is
  // left, back to the main thread: a file is never lost to a crashed thread.
  const orphans: ReadTask[] = [];
  await Promise.all(
    Array.from({ length: n }, () => new Promise<void>((resolve) => {
      const w = startWorker(url);
      let current: ReadTask | null = null;
      const feed = () => {
        if (next >= queue.length) {
          current = null;
          void w.terminate().then(() => resolve());
          return;
        }
        current = queue[next++];
        w.postMessage(current);
      };
      w.on('message', (m: { seq: number; result?: ReadResult; error?: { code: string | null; message: string } }) => {
        const task = queue[m.seq];
        if (m.error) onDone({ task, error: m.error });
        else onDone({ task, result: m.result! });
        feed();
      });
      w.on('error', () => {
        if (current) orphans.push(current);
        current = null;
        resolve();
      });
      feed();
    })),
  );
  for (const task of orphans) await readHere(task);
  while (next < queue.length) await readHere(queue[next++]);
}

/**
 * From dist/ the worker is plain JS. From the TypeScript sources (tests, scripts under tsx) the
 * worker thread does not inherit tsx's loader, so it registers it before importing the worker.
 */
function startWorker(url: URL): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url);
  const boot = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(boot, { eval: true });
}
