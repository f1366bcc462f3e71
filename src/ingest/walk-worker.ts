/**
 * Worker thread of early-walk.ts: walks the default roots for the environment it was given and
 * posts the discovery as columns (their buffers transferred), or `{ error }` (the main thread then walks itself).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { discover } from './discover.js';
import { encodeDiscovery, transferList } from './early-walk.js';

const { env } = workerData as { env: NodeJS.ProcessEnv };

discover([], env).then(
  (d) => {
    const e = encodeDiscovery(d);
    parentPort?.postMessage(e, transferList(e));
  },
  (err: unknown) => parentPort?.postMessage({ error: String(err) }),
);
