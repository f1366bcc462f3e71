/**
 * Worker thread of early-walk.ts: walks the default roots for the environment it was given,
 * sharing the walk with the main thread (shareWalk: the root's units first, then its part of the
 * listing), or alone (the discovery as columns, their buffers transferred); `{ error }` if it
 * failed (the main thread then walks itself).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type Sharing, shareWalk } from './early-walk.js';

const { env, sharing } = workerData as { env: NodeJS.ProcessEnv; sharing: Sharing };

try {
  shareWalk(env, sharing, (m, transfer) => parentPort?.postMessage(m, transfer));
} catch (err) {
  parentPort?.postMessage({ error: String(err) });
}
