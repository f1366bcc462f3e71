/**
 * Worker thread of early-walk.ts: walks the default roots for the environment it was given,
 * sharing the walk with the main thread (shareWalk: the root's units first, then its part of the
 * listing), or alone (the discovery as columns, their buffers transferred); `{ error }` if it
 * failed (the main thread then walks itself).
 *
 * First, when answers are kept beside the store the command will open (`store`, as its arguments
 * say) and a proof beside them (unchanged.ts), it checks the logs against the proof: it posts the
 * proof and the check (`{ proof }`, which the main thread can take part in), then whether its part
 * found every line to hold (`{ checked }`; a file grown or touched holds, ingest.ts makes the listing
 * from what the check found). If one did not hold, it walks; else it walks only once the main
 * thread asks (`'walk'`): a warm run, or one after appends, then needs no walk.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type EarlyProof, type Sharing, shareWalk } from './early-walk.js';
import { keptListing } from '../store/answers.js';
import { defaultRoots } from './discover.js';
import { type Proof, checkChunks, checkFailed, newCheck, readUnchanged } from './unchanged.js';

const { env, sharing, store } = workerData as { env: NodeJS.ProcessEnv; sharing: Sharing; store: string | null };

// a warm run may follow (answers are kept beside the store): the walk keeps the directories it lists,
// for the proof that run keeps (Discovery.dirs: 111,801 of them on 10 GB of logs, whose append runs
// peaked at 299 – 302 MiB with them against 288 without; BENCHMARKS-log.md, Warm, session 39)
let listing: string | null = null;
try {
  listing = store === null ? null : keptListing(store);
} catch {
  // none
}
const kept = listing !== null;

function walk(): void {
  try {
    shareWalk(env, sharing, (m, transfer) => parentPort?.postMessage(m, transfer), kept);
  } catch (err) {
    parentPort?.postMessage({ error: String(err) });
  }
}

let proof: Proof | null = null;
let check: Int32Array | null = null;
try {
  // a proof kept for other answers than these: the logs changed since, and the answers with them
  proof = kept && store !== null ? readUnchanged(store, defaultRoots(env)) : null;
  if (proof && proof.listing !== listing) proof = null;
  if (proof) check = newCheck(proof.files);
} catch {
  // no proof to go by (or no memory for its check's columns): the walk
}
if (proof && check && store !== null) {
  parentPort?.postMessage({ proof: { ...proof, store, check } satisfies EarlyProof });
  checkChunks(store, proof, check);
  const held = !checkFailed(check);
  parentPort?.postMessage({ checked: held });
  if (held) parentPort?.once('message', walk);
  else walk();
} else walk();
