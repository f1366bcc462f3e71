/**
 * Long work on the CLI's thread lets its event loop turn now and then. A session replay tokenizes
 * every message of its chain and then replays it under each strategy, all on this thread (3.8 s
 * for the top chain of ../shared/real-logs), and until the loop turns nothing else runs: the
 * progress line's `analysing…` gets no seconds (its redraw is a timer), and Ctrl-C's handler,
 * which erases the line, waits.
 *
 *   const pause = pauses();
 *   for (const item of items) {
 *     await pause(); // a turn of the loop once 100 ms of work went by since the last; else nothing
 *     …
 *   }
 *
 * A call costs one clock read; a pause, one turn of the loop (setImmediate: timers that are due,
 * and signals, are seen within two pauses).
 */
export type Pause = () => Promise<void> | undefined;

/** How long the work goes on between two turns of the loop. */
const EVERY_MS = 100;

export function pauses(everyMs = EVERY_MS, now: () => number = () => performance.now()): Pause {
  let last = now();
  return () => {
    const t = now();
    if (t - last < everyMs) return undefined;
    last = t;
    return new Promise((resolve) => setImmediate(resolve));
  };
}
