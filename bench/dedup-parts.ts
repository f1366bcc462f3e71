/**
 * Where the de-dup's time and memory go: runs the whole derive of requests (deriveRequests in store.ts,
 * schema.ts), or a part of it, alone in this process over a copy of a filled store, inside a
 * transaction it rolls back, and prints its time and the process's peak RSS (VmHWM) against its
 * RSS before.
 *
 *   npx tsx bench/dedup-parts.ts --store /tmp/x.duckdb [--part P] [--memory-limit 100MB] [--threads 1] [--per-part N]
 *
 * Parts: `groups` (the GROUP BY alone, into its temp table), `counted` (the groups, then every
 * request priced, only counted), `table` (the groups, then every request written in one sorted
 * part), `parts` (as ingest runs it: deriveRequests in store.ts), `unordered`
 * (one part without the ORDER BY).
 * Example (BENCHMARKS.md, Memory): on the 1 GB store at 80 MB, `parts` peaks at ~234 MiB, while
 * `table` runs out of memory at 110 MB.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { DuckDBConnection } from '@duckdb/node-api';
import { duckdb } from '../src/store/duckdb.js';
import { DERIVE_REQUEST_GROUPS, deriveRequestsPart } from '../src/store/schema.js';
import { deriveRequests } from '../src/store/store.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    part: { type: 'string', default: 'parts' },
    'memory-limit': { type: 'string', default: '100MB' },
    threads: { type: 'string', default: '1' },
    'per-part': { type: 'string' },
  },
});
if (!values.store || !existsSync(values.store)) throw new Error('--store: a filled cachelens store (e.g. after a cold `summary --db`)');

const PARTS: Record<string, (db: DuckDBConnection) => Promise<void>> = {
  groups: async (db) => void (await db.run(DERIVE_REQUEST_GROUPS)),
  counted: async (db) => {
    await db.run(DERIVE_REQUEST_GROUPS);
    await db.run(`SELECT count(*), sum(usd) FROM (${deriveRequestsPart('true', true).replace('CREATE OR REPLACE TABLE requests AS', '').replace(/ORDER BY t, key;\s*$/, ')')}`);
  },
  table: async (db) => {
    await db.run(DERIVE_REQUEST_GROUPS);
    await db.run(deriveRequestsPart('true', true));
  },
  parts: (db) => deriveRequests(db, values['per-part'] ? Number(values['per-part']) : undefined),
  unordered: async (db) => {
    await db.run(DERIVE_REQUEST_GROUPS);
    await db.run(deriveRequestsPart('true', true).replace(/ORDER BY t, key;\s*$/, ';'));
  },
};
const part = PARTS[values.part!];
if (!part) throw new Error(`--part: one of ${Object.keys(PARTS).join(', ')}`);

// a copy: the store itself is left as it is
const dir = mkdtempSync(join(tmpdir(), 'cachelens-dedup-'));
const copy = join(dir, 'store.duckdb');
copyFileSync(values.store, copy);
if (existsSync(`${values.store}.wal`)) copyFileSync(`${values.store}.wal`, `${copy}.wal`);

const status = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024);
const instance = await duckdb.DuckDBInstance.create(copy);
const db = await instance.connect();
await db.run(`SET memory_limit = '${values['memory-limit']!.replaceAll("'", '')}'`);
await db.run(`SET threads = ${Number(values.threads)}`);
const before = status('VmRSS');
const started = performance.now();
await db.run('BEGIN TRANSACTION');
await part(db);
await db.run('ROLLBACK');
const ms = performance.now() - started;
console.log(`${values.part}: ${(ms / 1000).toFixed(2)} s, RSS ${before} MiB before, peak ${status('VmHWM')} MiB (${values['memory-limit']}, ${values.threads} thread(s))`);
db.closeSync();
rmSync(dir, { recursive: true, force: true });
