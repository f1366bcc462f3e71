/**
 * Giving the main thread's JS heap back while DuckDB works.
 *
 * A large ingest grows V8's young generation on this thread to its largest (two 16 MiB
 * semi-spaces) while it plans and starts the reading: long-lived file lists survive the
 * scavenges. V8 shrinks it again only at a full collection that finds the thread's allocation
 * rate low over the samples it keeps (one per collection, the last dozen or so, or the last 5 s
 * of them), and an idle thread collects nothing. After the reading this thread only waits on DuckDB's
 * load and de-dup, so a few full collections with nothing allocated between them meet that rule:
 * the young generation drops to 1 MiB and the old one is compacted. Measured on 1 GB: the heap
 * 67 → 28 MiB, the run's peak RSS ~305 → ~270 MiB.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's full collection, for this isolate; null where it cannot be had. */
let collector: (() => void) | null | undefined;

function fullCollection(): (() => void) | null {
  if (collector !== undefined) return collector;
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return (collector = exposed as () => void);
  try {
    // the flag takes effect for contexts made after it, so a new one carries `gc`; it is set back
    // at once, so that no later worker or context gets a global `gc`
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    collector = typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    collector = null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return collector;
}

/** Bytes V8 has reserved for this thread's young generation (both semi-spaces). */
export function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

export interface HeapRelease {
  /** full collections run */
  collections: number;
  /** the young generation's bytes before and after */
  youngBefore: number;
  youngAfter: number;
}

/**
 * Runs `collections` full collections on this thread, back to back, when its young generation
 * holds at least `worth` bytes: V8 judges the allocation rate by bytes over time between
 * collections, so anything allocated between them (even the promise of an `await`) keeps the
 * young generation as it is. Each costs ~20 – 35 ms on 1 GB's main heap (~14 ms on 100 MB's, whose
 * young generation is 8 MiB: not worth 0.2 s); the caller runs this while DuckDB works on its own
 * threads and this one would only wait.
 *
 * Example: with a 32 MiB young generation, `releaseHeap()` returns
 * `{ collections: 16, youngBefore: 33554432, youngAfter: 1048576 }` (12 collections were too few
 * in one measurement, 13 – 15 enough); called again, `{ collections: 0, youngBefore: 1048576, … }`.
 */
export function releaseHeap(collections = 16, worth = 16 * 2 ** 20): HeapRelease {
  const youngBefore = youngGenerationBytes();
  const gc = youngBefore >= worth ? fullCollection() : null;
  let n = 0;
  if (gc) for (; n < collections; n++) gc();
  return { collections: n, youngBefore, youngAfter: youngGenerationBytes() };
}
