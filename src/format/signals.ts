/**
 * Ctrl-C and a kill while something is to be undone first: the progress line shown is erased, a
 * staged ingest's files are removed (both cli-main.ts); then the same signal, its handler gone,
 * ends the process as it would have without one (130, 143). Each watch does so on its own, so
 * several may be on at once: the last one's signal ends the process.
 *
 *   const watch = signalWatch(() => line.clear());
 *   watch(true);  // the line came: SIGINT and SIGTERM erase it first
 *   watch(false); // it went: the handlers go once the event loop has turned (twice)
 *
 * Why a turn: a signal that comes while the thread is busy (reading files, replaying a session)
 * is handed to its handler only when the loop turns. A handler taken off before then, as the line
 * is cleared for the answer, lost it: the run went on and ended 0 as if no key had been pressed.
 */
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export function signalWatch(beforeExit: () => void): (shown: boolean) => void {
  let on = false;
  let off: NodeJS.Immediate | undefined;
  const stop = () => {
    if (off !== undefined) clearImmediate(off);
    off = undefined;
    if (!on) return;
    on = false;
    for (const signal of SIGNALS) process.removeListener(signal, signalled);
  };
  const signalled = (signal: NodeJS.Signals) => {
    try {
      beforeExit();
    } catch {
      // a failure to undo (a file that would not go) does not keep the run from ending as signalled
    }
    stop();
    process.kill(process.pid, signal);
  };
  return (shown) => {
    if (shown) {
      if (off !== undefined) clearImmediate(off);
      off = undefined;
      if (on) return;
      on = true;
      for (const signal of SIGNALS) process.on(signal, signalled);
    } else if (on && off === undefined) {
      // two turns: the first may end the very turn whose busy work the signal came in (its
      // poll had begun before), the second comes after a poll that sees the signal
      off = setImmediate(() => (off = setImmediate(stop)));
    }
  };
}
