/**
 * Worker thread of early-walk.ts: walks the default roots for the environment it was given,
 * sharing the walk with the main thread (shareWalk: the root's units first, then its part of the
 * listing), or alone (the discovery as columns, their buffers transferred); `{ error }` if it
 * failed (the main thread then walks itself).
 *
 * First, when answers are kept beside the store the command will open (`store`, as its arguments
 * say) and a proof beside them (unchanged.ts), it checks the logs against the proof: it posts the
 * proof and the check (`{ proof }`, which the main thread can take part in), then whether its part
 * found every line to hold (`{ checked }`). If one did not hold, it walks; else it walks only once
 * the main thread asks (`'walk'`): a warm run then needs no walk.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type EarlyProof, type Sharing, shareWalk } from './early-walk.js';
import { type Proof, checkChunks, checkFailed, earlyProofOf, newCheck } from './unchanged.js';

const { env, sharing, store } = workerData as { env: NodeJS.ProcessEnv; sharing: Sharing; store: string | null };

function walk(): void {
  try {
    shareWalk(env, sharing, (m, transfer) => parentPort?.postMessage(m, transfer));
  } catch (err) {
    parentPort?.postMessage({ error: String(err) });
  }
}

let proof: Proof | null = null;
try {
  proof = store === null ? null : earlyProofOf(store, env);
} catch {
  // no proof to go by: the walk
}
if (proof && store !== null) {
  const check = newCheck();
  parentPort?.postMessage({ proof: { ...proof, store, check } satisfies EarlyProof });
  checkChunks(store, proof, check);
  const held = !checkFailed(check);
  parentPort?.postMessage({ checked: held });
  if (held) parentPort?.once('message', walk);
  else walk();
} else walk();
