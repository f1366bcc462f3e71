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
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
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

/**
 * Keeps this thread's heap near what it holds live while the reader workers read: call the
 * function returned once per result taken (or file read here); it returns the full collections
 * it has run so far. Every `every` calls it looks at the heap, and runs one full collection when
 * the heap uses `floor` bytes or more and over twice what the last one left live. Left to itself
 * V8 let this thread's old generation fill with the results' and the .meta.json files' garbage
 * through a whole 10 GB reading (heap 58 → 121 MB, RSS ~300 → 388 MiB at the reading's end); two
 * collections early in it held the heap at ~63 MB for the rest, V8 collecting on its own from
 * then on, and RSS at ~320 MiB (BENCHMARKS-log.md, Memory). Each costs ~20 – 50 ms of this thread; on
 * 1 GB the heap stays below the floor.
 * Example: with 23 MB live after a collection, the next runs once the heap uses 46 MB.
 */
export function heapKeeper(floor = 40 * 2 ** 20, every = 16): () => number {
  let calls = 0;
  let limit = floor;
  let collections = 0;
  return () => {
    if (++calls % every !== 0 || getHeapStatistics().used_heap_size < limit) return collections;
    const gc = fullCollection();
    if (!gc) return collections;
    gc();
    collections++;
    limit = Math.max(floor, 2 * getHeapStatistics().used_heap_size);
    return collections;
  };
}
