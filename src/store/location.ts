/**
 * Where the store is by default, and how the files kept beside it are read: a module of its own,
 * so that the early walk's worker, which looks for the proof kept beside the store
 * (ingest/unchanged.ts), finds and reads it without loading the store.
 */
import { closeSync, constants, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { xdgDir } from '../ingest/discover.js';

/**
 * The flags the files kept beside the store (its answers, listing snapshot, base and proof) are
 * opened with for reading: not waiting, so that a named pipe left at one of their names reads as
 * empty, which no reader takes for its file, instead of blocking the run for a writer.
 */
export const READ_NOWAIT = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** A file kept beside the store, whole, opened with READ_NOWAIT; throws as readFileSync does. */
export function readBeside(path: string): Buffer;
export function readBeside(path: string, encoding: 'utf8'): string;
export function readBeside(path: string, encoding?: 'utf8'): Buffer | string {
  const fd = openSync(path, READ_NOWAIT);
  try {
    return encoding ? readFileSync(fd, encoding) : readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes the parts of `file` (a file kept beside the store, written as `<file>.<pid>.tmp` and
 * renamed into place) that processes no longer running left behind: a run killed while it wrote
 * one (Ctrl-C, SIGKILL, out of memory) never removed it, and each such run left another (a base
 * file's part is ~6 MB for 1 GB of logs). A part whose process still runs is its own writer's,
 * and is left to it (the answers and the base are also written by runs that do not hold the store).
 * Example: store.duckdb.delta.4701.tmp, pid 4701 gone → removed.
 */
export function removeLeftParts(file: string): void {
  const prefix = `${basename(file)}.`;
  try {
    for (const name of readdirSync(dirname(file))) {
      const pid = /^(\d+)\.tmp$/.exec(name.slice(prefix.length));
      if (!name.startsWith(prefix) || !pid || Number(pid[1]) === process.pid || running(Number(pid[1]))) continue;
      rmSync(join(dirname(file), name), { force: true });
    }
  } catch {
    // they only take room: the file itself is written all the same
  }
}

/** Whether a process with this id runs (one of another user's too: it cannot be signalled, EPERM). */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * The default store: `$XDG_CACHE_HOME/cachelens/store.duckdb`, else under the HOME of `env`, as the
 * log roots are found (discover.ts). os.homedir() alone read this process's HOME whatever `env`
 * said: a walk for a temp HOME checked the proof kept beside the machine's own store.
 */
export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  // a relative XDG_CACHE_HOME is ignored, as the XDG spec asks
  const cache = xdgDir(env.XDG_CACHE_HOME) ?? join(env.HOME || homedir(), '.cache');
  return join(cache, 'cachelens', 'store.duckdb');
}
