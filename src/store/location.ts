/**
 * Where the store is by default, and how the files kept beside it are read: a module of its own,
 * so that the early walk's worker, which looks for the proof kept beside the store
 * (ingest/unchanged.ts), finds and reads it without loading the store.
 */
import { closeSync, constants, openSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

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

export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'cachelens', 'store.duckdb');
}
