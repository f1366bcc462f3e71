/**
 * Worker thread of early-walk.ts: walks the default roots for the environment it was given,
 * sharing the walk with the main thread (shareWalk), and posts the discovery as columns (their
 * buffers transferred), or `{ error }` (the main thread then walks itself).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type Sharing, shareWalk } from './early-walk.js';

const { env, sharing } = workerData as { env: NodeJS.ProcessEnv; sharing: Sharing };

try {
  shareWalk(env, sharing, (m, transfer) => parentPort?.postMessage(m, transfer));
} catch (err) {
  parentPort?.postMessage({ error: String(err) });
}
