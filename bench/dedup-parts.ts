/**
 * Where the de-dup's time and memory go: runs DERIVE_REQUESTS (schema.ts), or a part of it, alone
 * in this process over a copy of a filled store, inside a transaction it rolls back, and prints
 * its time and the process's peak RSS (VmHWM) against its RSS before.
 *
 *   npx tsx bench/dedup-parts.ts --store /tmp/x.duckdb [--part P] [--memory-limit 192MB] [--threads 1]
 *
 * Parts: `aggregate` (the GROUP BY alone), `joined` (and the row-id join that fetches each best
 * copy), `counted` (everything, priced, only counted), `temp` (written to a temp table), `table`
 * (as ingest runs it), `unordered` (as ingest runs it, without the final ORDER BY).
 * Example (BENCHMARKS.md, Cold): on the 1 GB store, `aggregate` 0.2 – 0.3 s and +110 MB, `table`
 * 1.1 – 1.8 s and +230 – 240 MB at 192 MB on one thread.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { duckdb } from '../src/store/duckdb.js';
import { DERIVE_REQUESTS } from '../src/store/schema.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    part: { type: 'string', default: 'table' },
    'memory-limit': { type: 'string', default: '192MB' },
    threads: { type: 'string', default: '1' },
  },
});
if (!values.store || !existsSync(values.store)) throw new Error('--store: a filled cachelens store (e.g. after a cold `summary --db`)');

/** The de-dup up to (and selecting) one of its CTEs, into a temp table. */
function upTo(cte: string, next: string): string {
  const head = DERIVE_REQUESTS.slice(0, DERIVE_REQUESTS.indexOf(next)).trimEnd().replace(/,$/, '');
  return `${head.replace('CREATE OR REPLACE TABLE requests AS', 'CREATE TEMP TABLE part AS')}\nSELECT * FROM ${cte}`;
}

const PARTS: Record<string, () => string> = {
  aggregate: () => upTo('agg', '-- a session'),
  joined: () => upTo('joined', '-- each distinct'),
  counted: () => DERIVE_REQUESTS.replace('CREATE OR REPLACE TABLE requests AS', 'SELECT count(*), sum(usd) FROM (').replace(/ORDER BY t, key;\s*$/, ');'),
  temp: () => DERIVE_REQUESTS.replace('CREATE OR REPLACE TABLE requests AS', 'CREATE TEMP TABLE part AS'),
  table: () => DERIVE_REQUESTS,
  unordered: () => DERIVE_REQUESTS.replace(/ORDER BY t, key;\s*$/, ';'),
};
const sql = PARTS[values.part!]?.();
if (!sql) throw new Error(`--part: one of ${Object.keys(PARTS).join(', ')}`);

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
await db.run(sql);
await db.run('ROLLBACK');
const ms = performance.now() - started;
console.log(`${values.part}: ${(ms / 1000).toFixed(2)} s, RSS ${before} MiB before, peak ${status('VmHWM')} MiB (${values['memory-limit']}, ${values.threads} thread(s))`);
db.closeSync();
rmSync(dir, { recursive: true, force: true });
