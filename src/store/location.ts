/**
 * Where the store is by default: a module of its own, so that the early walk's worker, which looks
 * for the proof kept beside the store (ingest/unchanged.ts), finds it without loading the store.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'cachelens', 'store.duckdb');
}
