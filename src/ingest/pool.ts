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
  if (workers <= 1 || bytes < WORKER_THRESHOLD_BYTES || queue.length < 2) {
    for (const task of queue) {
      try {
        onDone({ task, result: await readTranscript(task.path, task.id, task.opts) });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        onDone({ task, error: { code: e.code ?? null, message: e.message } });
      }
    }
    return;
  }
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const url = new URL(`./read-worker${ext}`, import.meta.url);
  const n = Math.min(workers, queue.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, () => new Promise<void>((resolve, reject) => {
      const w = new Worker(url);
      const feed = () => {
        if (next >= queue.length) {
          void w.terminate().then(() => resolve());
          return;
        }
        w.postMessage(queue[next++]);
      };
      w.on('message', (m: { seq: number; result?: ReadResult; error?: { code: string | null; message: string } }) => {
        const task = queue[m.seq];
        if (m.error) onDone({ task, error: m.error });
        else onDone({ task, result: m.result! });
        feed();
      });
      w.on('error', reject);
      feed();
    })),
  );
}
