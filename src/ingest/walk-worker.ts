/**
 * Worker thread of early-walk.ts: walks the default roots for the environment it was given,
 * sharing the walk with the main thread (shareWalk: the root's units first, then its part of the
 * listing), or alone (the discovery as columns, their buffers transferred); `{ error }` if it
 * failed (the main thread then walks itself).
 *
 * First, when answers are kept beside the store the command will open (`store`, as its arguments
 * say), it checks the logs against the proof kept beside them (unchanged.ts) and posts what it
 * found (`{ proof }`); when the logs are as the proof says, it walks only once the main thread
 * asks (`'walk'`): a warm run then needs no walk.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type EarlyProof, type Sharing, shareWalk } from './early-walk.js';
import { checkEarly } from './unchanged.js';

const { env, sharing, store } = workerData as { env: NodeJS.ProcessEnv; sharing: Sharing; store: string | null };

function walk(): void {
  try {
    shareWalk(env, sharing, (m, transfer) => parentPort?.postMessage(m, transfer));
  } catch (err) {
    parentPort?.postMessage({ error: String(err) });
  }
}

let checked: ReturnType<typeof checkEarly> = null;
try {
  checked = store === null ? null : checkEarly(store, env);
} catch {
  // no proof to go by: the walk
}
if (checked && store !== null) {
  parentPort?.postMessage({ proof: { store, ...checked } satisfies EarlyProof });
  if (checked.holds) parentPort?.once('message', walk);
  else walk();
} else walk();
