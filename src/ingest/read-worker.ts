/** Worker thread: reads transcript files on request and posts their facts back. */
import { parentPort } from 'node:worker_threads';
import { readTranscript } from './read-file.js';
import type { ReadTask } from './pool.js';

parentPort?.on('message', async (task: ReadTask) => {
  try {
    const result = await readTranscript(task.path, task.id, task.opts);
    parentPort?.postMessage({ seq: task.seq, result });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    parentPort?.postMessage({ seq: task.seq, error: { code: e.code ?? null, message: e.message } });
  }
});
