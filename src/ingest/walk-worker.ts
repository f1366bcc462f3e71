/**
 * Worker thread of early-walk.ts: walks the default roots for the environment it was given and
 * posts the discovery as columns, or `{ error }` (the main thread then walks itself).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { discover } from './discover.js';
import { encodeDiscovery } from './early-walk.js';

const { env } = workerData as { env: NodeJS.ProcessEnv };

discover([], env).then(
  (d) => parentPort?.postMessage(encodeDiscovery(d)),
  (err: unknown) => parentPort?.postMessage({ error: String(err) }),
);
