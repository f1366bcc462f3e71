/**
 * Worker thread: takes tasks from the shared cursor until none are left, posting each file's
 * facts as columns, or its error, as it finishes; waits while AHEAD results are still untaken
 * (pool.ts). The columns' typed arrays are copied, not transferred: a transfer per small array
 * (about a hundred per file) cost twice as much as the copy.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AHEAD, CURSOR, DONE, POSTED, type ReadTask, TAKEN, readOne } from './pool.js';

const { tasks, shared } = workerData as { tasks: ReadTask[]; shared: Int32Array };

for (;;) {
  const i = Atomics.add(shared, CURSOR, 1);
  if (i >= tasks.length) break;
  const m = readOne(tasks[i]);
  for (;;) {
    const taken = Atomics.load(shared, TAKEN);
    if (Atomics.load(shared, POSTED) - taken < AHEAD) break;
    Atomics.wait(shared, TAKEN, taken, 1000);
  }
  Atomics.add(shared, POSTED, 1);
  parentPort?.postMessage(m);
}
parentPort?.postMessage(DONE);
