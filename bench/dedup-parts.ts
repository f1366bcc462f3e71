/**
 * Where the de-dup's time and memory go: runs the whole derive of requests (DERIVE_REQUESTS in
 * schema.ts, as ingest runs it), or a form of it, alone in this process over a copy of a filled
 * store, inside a transaction it rolls back, and prints its time and the process's peak RSS
 * (VmHWM) against its RSS before. Rolled back, an unbounded run never writes the new table out
 * (DuckDB keeps its rows in memory until a commit), where a bounded one writes as it goes: compare
 * bounded runs with each other (BENCHMARKS-log.md, Cold, session 26: committed, 80 MB and unbounded
 * took about as long).
 *
 *   npx tsx bench/dedup-parts.ts --store /tmp/x.duckdb [--part P] [--memory-limit 100MB] [--threads 1]
 *
 * Parts: `derive` (as ingest runs it), `counted` (every request de-duplicated and priced, only
 * counted: what writing the table costs is the difference), `sorted` (the table written sorted by
 * time and identity in one statement, as before session 9: on 1 GB it runs out of memory below
 * ~110 MB, where `derive` fits 72 MB).
 * Example (BENCHMARKS-log.md, Cold): on the 10 GB store at 252 MB, `derive` (then one statement grouped
 * by the key) took 17.7 s and peaked at 407 MiB; the sorted form sessions 9 – 14 wrote in 5 parts
 * took 28.5 s and peaked at 696 MiB. Grouped by the key's MD5 (session 22) it finished at 120 MB.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { DuckDBConnection } from '@duckdb/node-api';
import { loadDuckdb, openingOptions } from '../src/store/duckdb.js';
import { DERIVE_REQUESTS } from '../src/store/schema.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    part: { type: 'string', default: 'derive' },
    'memory-limit': { type: 'string', default: '100MB' },
    threads: { type: 'string', default: '1' },
  },
});
if (!values.store || !existsSync(values.store)) throw new Error('--store: a filled cachelens store (e.g. after a cold `summary --db`)');

// DERIVE_REQUESTS: the groups into a temp table, the requests from them, the temp table dropped
const [groups, create] = DERIVE_REQUESTS.split(';\n');
const select = create.replace('CREATE OR REPLACE TABLE requests AS', '');
if (!groups.includes('request_groups') || select === create) throw new Error('DERIVE_REQUESTS changed its form: update this script');
const PARTS: Record<string, (db: DuckDBConnection) => Promise<void>> = {
  derive: async (db) => void (await db.run(DERIVE_REQUESTS)),
  counted: async (db) => {
    await db.run(groups);
    await db.run(`SELECT count(*), sum(usd) FROM (${select})`);
  },
  sorted: async (db) => {
    await db.run(groups);
    await db.run(`CREATE OR REPLACE TABLE requests AS ${select} ORDER BY t, key`);
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
const instance = await (await loadDuckdb()).DuckDBInstance.create(copy, openingOptions());
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
