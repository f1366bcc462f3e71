/**
 * The progress line on stderr (SPEC §7): one line redrawn in place while an ingest reads the logs,
 * stores their facts and de-duplicates them, and cleared before anything else is written (and as
 * Ctrl-C or a kill stops the run: cli-main.ts).
 *
 *   ingest ─▶ Progress events ─▶ progressLine ─▶ "\r<line>\e[K" on stderr ─▶ clear() before output
 *
 * The CLI makes one only when stderr is a terminal that can redraw a line (cli-main.ts); otherwise
 * the ingest is handed no callback at all and pays nothing.
 * Example (80 columns, 1.4 s into reading 179 MB):
 *   reading 1424/2800 files, 165/179 MB, 108 MB/s, reading ETA 1 s
 * then `storing…`, `de-duplicating…`, `analysing…` until the command prints its answer (the CLI
 * clears the line first), each with its seconds once it has lasted one (`storing… 3 s`). Before the
 * reading, `listing logs…` once the walk has lasted a second, or, while another process holds the
 * store, `store … is in use by another process (pid N); waiting up to 10 s for it… 3 s`, which the
 * reading, or the timeout's one-line error, replaces. The seconds are a timer's: work that
 * holds the thread long lets the event loop turn now and then (a session replay: replay/pauses.ts).
 */
import type { Progress } from '../ingest/ingest.js';
import { clean } from './table.js';

/** Where the line is drawn: stderr (its width read at each draw, as a resized terminal changes it). */
export interface Terminal {
  write(s: string): unknown;
  columns?: number;
}

export interface ProgressLine {
  update(p: Progress): void;
  /** erases the line, if one is shown (before stdout output, a notice or an error) */
  clear(): void;
}

/** Redraws of the reading line at most this often: a file's end is an event, and 10 GB hold 234,780. */
const REDRAW_MS = 200;

/** Reading time before a rate (and so an ETA) is shown: the first files' rate says little. */
const RATE_AFTER_MS = 500;

const PHASE_WORDS: Record<Exclude<Progress['phase'], 'reading' | 'waiting'>, string> = {
  listing: 'listing logs…',
  storing: 'storing…',
  deriving: 'de-duplicating…',
  done: 'analysing…',
};

/**
 * A phase word's seconds are redrawn this often: no event comes while DuckDB loads or de-duplicates
 * (each ~10 s on 10 GB of logs), and a line that does not move looks like a hung run. It is also
 * how long the walk goes unshown: a warm run's (~0.2 s) shows nothing.
 */
const TICK_MS = 1000;

/** Calls `f` every `ms` until stopped, without keeping the process alive (the line's seconds). */
export type Ticker = (f: () => void, ms: number) => () => void;

const intervalTicker: Ticker = (f, ms) => {
  const id = setInterval(f, ms);
  id.unref();
  return () => clearInterval(id);
};

/**
 * `onShown`: told when the line comes on the terminal (true) and when it is erased (false), once
 * each way: the CLI handles Ctrl-C only while there is a line to erase (cli-main.ts).
 */
export function progressLine(term: Terminal, now: () => number = () => performance.now(), ticker: Ticker = intervalTicker, onShown: (shown: boolean) => void = () => {}): ProgressLine {
  let shown = false;
  let lastDraw = -Infinity;
  // when the reading began, and what had been read then (its first event: 0 files)
  let reading: { at: number; bytes: number } | null = null;
  // the phase a word stands for, since when, and what stops its ticking seconds
  let phase: { word: string; since: number; stop: () => void } | null = null;

  const draw = (text: string) => {
    // a line wider than the terminal wraps, and a carriage return then goes back to its last row
    // only: every redraw would leave a row behind
    const cols = term.columns ?? 0;
    term.write(`\r${cols > 1 ? text.slice(0, cols - 1) : text}\u001b[K`);
    if (shown) return;
    shown = true;
    onShown(true);
  };
  const drawPhase = (t: number) => {
    const s = Math.floor((t - phase!.since) / 1000);
    draw(s >= 1 ? `${phase!.word} ${s} s` : phase!.word);
  };
  const endPhase = () => {
    phase?.stop();
    phase = null;
  };
  const clear = () => {
    endPhase();
    if (!shown) return;
    term.write('\r\u001b[K');
    shown = false;
    onShown(false);
  };

  return {
    clear,
    update(p) {
      const t = now();
      endPhase();
      if (p.phase === 'reading') {
        // (a reading begins with 0 files read: an ingest tried again after running out of memory reads anew)
        if (reading === null || p.files === 0) reading = { at: t, bytes: p.bytes };
        // the first and last events are always drawn: the line then says what is to read, and that all was read
        if (t - lastDraw < REDRAW_MS && p.files > 0 && p.files < p.filesTotal) return;
        lastDraw = t;
        return draw(readingText(p, t - reading.at, p.bytes - reading.bytes));
      }
      // the command's own work on the store follows (a report: ~1 s on 180 MB of logs); a run that
      // showed nothing (a warm one) shows nothing then either
      if (p.phase === 'done' && !shown) return;
      // a wait for the store held by another process says whose and how long, with its seconds (the
      // store's path cleaned, as the error that may replace it cleans it)
      const current = { word: p.phase === 'waiting' ? `${clean(p.message)}…` : PHASE_WORDS[p.phase], since: t, stop: () => {} };
      phase = current;
      current.stop = ticker(() => {
        if (phase === current) drawPhase(now());
      }, TICK_MS);
      // the walk is shown only once it has lasted a tick
      if (p.phase !== 'listing') drawPhase(t);
    },
  };
}

/**
 * The reading line: files and MB read of those to read, then, once the reading has gone on for
 * RATE_AFTER_MS, its rate and the time left at that rate.
 * Example: 1424 of 2800 files, 165 of 179 MB, 150 MB in 1.4 s → "reading 1424/2800 files, 165/179 MB, 107 MB/s, reading ETA 1 s".
 * The ETA is the reading's, and says so: storing and de-duplicating follow, as long again on large
 * logs (1.8 GB: `reading ETA 1 s`, then 6 s storing, 6 s de-duplicating and a report's 8 s analysing).
 */
export function readingText(p: Extract<Progress, { phase: 'reading' }>, ms: number, bytesSince: number): string {
  // below 10 MB whole megabytes say little (0/2 MB): one decimal
  const digits = p.bytesTotal < 10e6 ? 1 : 0;
  const mb = (b: number) => (b / 1e6).toFixed(digits);
  let text = `reading ${p.files}/${p.filesTotal} files, ${mb(p.bytes)}/${mb(p.bytesTotal)} MB`;
  if (ms >= RATE_AFTER_MS && bytesSince > 0) {
    const perMs = bytesSince / ms;
    const rate = (perMs * 1000) / 1e6;
    // a slow disk or network share (under 10 MB/s) is not "0 MB/s"
    text += `, ${rate.toFixed(rate < 10 ? 1 : 0)} MB/s`;
    if (p.bytes < p.bytesTotal) text += `, reading ETA ${duration((p.bytesTotal - p.bytes) / perMs / 1000)}`;
  }
  return text;
}

/** Seconds left as the line shows them: rounded up (never "0 s" while bytes are left), minutes from 90 s. */
function duration(s: number): string {
  return s < 90 ? `${Math.ceil(s)} s` : `${Math.round(s / 60)} min`;
}
