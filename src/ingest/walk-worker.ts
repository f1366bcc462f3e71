/**
 * Worker thread of early-walk.ts: walks the default roots for the environment it was given and
 * posts the discovery as columns (their buffers transferred), or `{ error }` (the main thread then walks itself).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { transferList, walkEncoded } from './early-walk.js';

const { env } = workerData as { env: NodeJS.ProcessEnv };

try {
  const e = walkEncoded(env);
  parentPort?.postMessage(e, transferList(e));
} catch (err) {
  parentPort?.postMessage({ error: String(err) });
}
