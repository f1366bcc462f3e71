/**
 * Temp directories for tests, removed when the test file's process ends: at exit, and on SIGINT,
 * SIGTERM or SIGHUP (a run stopped by Ctrl-C or a kill left them all behind), so that a test run
 * leaves nothing in the system temp dir (each made a store or a corpus of a few MB; thousands were
 * left behind before). CACHELENS_KEEP_TEST_TMP=1 keeps them, to look at after a failure.
 *
 * The guard (`guardTempDir`, run in each test file's process by `npm test` through
 * test/helpers/tmp-guard.mjs) gives the file a TMPDIR of its own, inherited by the CLI it spawns;
 * what is left there when the file ends, besides the dirs tempDir removes, fails the file:
 *
 *   # test/x.test.ts left in its temp dir: cachelens-foo-Ab12Cd, playwright-artifacts-Xy98Zw
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** CACHELENS_KEEP_TEST_TMP set: nothing is removed (a test that keeps something prints its path). */
export const keepingTemp = Boolean(process.env.CACHELENS_KEEP_TEST_TMP);

const made: string[] = [];
/** The file's own TMPDIR, when the guard is on. */
let guarded: string | undefined;
/**
 * tsx's compile cache, which every `node --import tsx` a test starts makes in its TMPDIR (as tsx
 * names it): in the guarded TMPDIR a link to the one outside, shared by all runs, so that the runs
 * a file starts do not compile everything again; not counted as left.
 */
const TSX_CACHE = `tsx-${process.geteuid?.() ?? userInfo().username}`;
let hooked = false;

/** A fresh directory under the system temp dir whose name starts with `prefix`, removed when the process ends. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  hookEnd();
  return dir;
}

/**
 * In a test file's process (node --test runs each file in a child): TMPDIR becomes a fresh dir of
 * its own, and what a test leaves in it fails the file (exit code 1, the names on stderr) and is
 * removed. Elsewhere (the runner itself, or a file run with node directly) it does nothing.
 */
export function guardTempDir(): void {
  if (guarded !== undefined || !process.env.NODE_TEST_CONTEXT?.startsWith('child')) return;
  const outer = tmpdir();
  guarded = mkdtempSync(join(outer, 'cachelens-tmpguard-'));
  try {
    mkdirSync(join(outer, TSX_CACHE), { recursive: true });
    symlinkSync(join(outer, TSX_CACHE), join(guarded, TSX_CACHE));
  } catch {
    // without the link each run compiles afresh, and its cache goes with the guarded dir
  }
  process.env.TMPDIR = guarded;
  hookEnd();
}

function hookEnd(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', atExit);
  if (keepingTemp) return;
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function onSignal(signal: NodeJS.Signals): void {
  // the handlers stay on while the dirs are removed: a second signal (the runner passes a kill of
  // the process group on to its files, which got it too) then waits; taken off first (process.once),
  // it ended the process half-way through, and the rest was left
  removeAll();
  // ended by the same signal, as it would have been without this handler
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  process.kill(process.pid, signal);
}

function atExit(): void {
  if (keepingTemp) {
    if (guarded !== undefined) process.stderr.write(`temp dir kept: ${guarded}\n`);
    return;
  }
  const left = removeAll();
  if (left.length > 0) {
    const file = process.argv.slice(1).find((a) => a.endsWith('.test.ts')) ?? process.argv[1];
    process.stderr.write(`${file} left in its temp dir: ${left.join(', ')}\n`);
    process.exitCode = 1;
  }
}

/** Removes tempDir's dirs, then the guarded TMPDIR; returns what else was in it. */
function removeAll(): string[] {
  for (const dir of made.splice(0)) remove(dir);
  if (guarded === undefined) return [];
  let left: string[] = [];
  try {
    left = readdirSync(guarded)
      .filter((e) => e !== TSX_CACHE)
      .sort();
  } catch {
    // already gone
  }
  remove(guarded);
  return left;
}

function remove(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    process.stderr.write(`# could not remove ${dir}: ${(err as Error).message}\n`);
  }
}
