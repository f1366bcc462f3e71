/** Shared by the store tests: temp corpora built from ../shared/real-logs, ingest, and a comparable dump of a store. */
import { cpSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type IngestResult, ingest } from '../../src/ingest/ingest.js';
import { loadPriceTable } from '../../src/pricing/pricing.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/temp.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const realLogs = path.resolve(repoRoot, '../shared/real-logs');
export const prices = loadPriceTable();

export const CONDENSE = 'condense-chat-minmax-bench/projects/-app';
export const CONDENSE_61 = `${CONDENSE}/61d12533-17ec-4bbe-8876-6cdec3eb838c.jsonl`;
export const MAROT_DOV = 'marot-spotter/projects/-home-USER-projects-spotter-worktrees-spotter-dov';
export const MAROT_DOV_MAIN = `${MAROT_DOV}/4d5611e5-241a-462a-8d15-5122611a9569.jsonl`;

export function tmp(prefix = 'cachelens-store-'): string {
  return tempDir(prefix);
}

/** Copies parts of the real logs (paths relative to real-logs) into a fresh temp root; returns the root. */
export function corpus(parts: string[]): string {
  const root = tmp('cachelens-logs-');
  for (const p of parts) cpSync(path.join(realLogs, p), path.join(root, p), { recursive: true });
  return root;
}

export function realBytes(rel: string): Buffer {
  return readFileSync(path.join(realLogs, rel));
}

/**
 * One ingest on one thread (tests run under tsx, which worker threads do not inherit). Whenever
 * it can, it derives only what changed (touchedShare 1), so that every comparison with a rebuilt
 * store below also checks that incremental derive. A first run into a new store, and a rebuild,
 * stage their facts as CSV (stageBytes 0, as a large ingest does) where later runs append them, so
 * those comparisons check the staging writer against the appending one too.
 */
export function run(paths: string[], dbPath: string, extra: { rebuild?: boolean; notice?: (line: string) => void; stageBytes?: number } = {}): Promise<IngestResult> {
  return ingest({ paths, dbPath, prices, workers: 1, touchedShare: 1, stageBytes: extra.rebuild || !existsSync(dbPath) ? 0 : undefined, ...extra });
}

/** Runs an ingest, dumps the store and closes it. */
export async function runAndDump(paths: string[], dbPath: string, extra: { rebuild?: boolean; notice?: (line: string) => void; stageBytes?: number } = {}): Promise<{ stats: IngestResult['stats']; dump: Dump }> {
  const r = await run(paths, dbPath, extra);
  try {
    return { stats: r.stats, dump: await dump(r.store) };
  } finally {
    r.store.close();
  }
}

export interface Dump {
  requests: Record<string, unknown>[];
  chains: Record<string, unknown>[];
  attachments: Record<string, unknown>[];
  events: Record<string, unknown>[];
  skipped: Record<string, unknown>[];
  files: Record<string, unknown>[];
  totals: Record<string, unknown>;
}

/**
 * What a store holds for the files in scope, with file ids replaced by paths (ids depend on the
 * order files were first seen, which differs between an incremental store and a rebuilt one);
 * an attachment's or a compaction's `copy` says whether line_copies names it.
 * A request's row_hash covers its file id, so it is not compared; `totals.stale_hashes` counts the
 * requests whose row_hash is not the hash of the row they hold (0 in any store), and
 * `totals.duplicate_paths` the `files` rows beyond one per path (0 in any store: nothing but the
 * ingest keeps it so, since the table has no UNIQUE constraint on paths).
 */
export async function dump(store: Store): Promise<Dump> {
  const requests = await store.all(
    `SELECT r.* EXCLUDE (file_id, ts, row_hash), f.path AS file FROM requests r JOIN files f USING (file_id) ORDER BY key`,
  );
  const chains = await store.all(`SELECT c.* EXCLUDE (file_id), f.path AS file FROM chains c LEFT JOIN files f USING (file_id) ORDER BY chain_id`);
  const attachments = await store.all(
    `SELECT f.path AS file, a.* EXCLUDE (file_id),
            EXISTS (SELECT 1 FROM line_copies c WHERE c.file_id = a.file_id AND c.line = a.line) AS copy
     FROM attachments a JOIN scope USING (file_id) JOIN files f USING (file_id) ORDER BY file, line`,
  );
  const events = await store.all(
    `SELECT f.path AS file, e.* EXCLUDE (file_id),
            EXISTS (SELECT 1 FROM line_copies c WHERE c.file_id = e.file_id AND c.line = e.line) AS copy
     FROM chain_events e JOIN scope USING (file_id) JOIN files f USING (file_id) ORDER BY file, line`,
  );
  const skipped = await store.all(
    `SELECT f.path AS file, s.line, s.reason FROM skipped s JOIN scope USING (file_id) JOIN files f USING (file_id) ORDER BY file, line, reason`,
  );
  const files = await store.all(`SELECT path, kind, size, read_to, lines, project, session_id FROM files JOIN scope USING (file_id) ORDER BY path`);
  const [totals] = await store.all(
    `SELECT count(*) AS requests, sum(input) AS input, sum(output) AS output, sum(cache_write) AS cache_write,
            sum(cache_read) AS cache_read, round(sum(weight), 6) AS weight,
            (SELECT count(*) FROM requests q JOIN (SELECT key, hash(request_row) AS h FROM (SELECT * EXCLUDE (row_hash) FROM requests) request_row) USING (key)
             WHERE q.row_hash IS DISTINCT FROM h) AS stale_hashes,
            (SELECT count(*) - count(DISTINCT path) FROM files) AS duplicate_paths
     FROM requests`,
  );
  return { requests, chains, attachments, events, skipped, files, totals };
}
