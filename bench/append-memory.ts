/**
 * Memory of appending facts, without the rest of an ingest: synthetic observation rows go through
 * StoreWriter (as a cold run's reading appends them) into a fresh store, in one transaction or
 * with a commit every `--commit-every` rows, and RSS, DuckDB's own account (duckdb_memory()) and
 * the V8 heap are printed as it goes.
 *
 *   npx tsx bench/append-memory.ts [--rows N] [--strings long|short|null] [--commit-every N]
 *   DUCKDB_JE_MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0 npx tsx bench/append-memory.ts
 *
 * Example (BENCHMARKS-log.md, Memory): 1 million rows of 9 unique ~35-character strings hold ~500 MiB
 * while appending, with duckdb_memory() at 55 – 100 MB; with a commit every 65,000 rows and the
 * jemalloc setting above, ~220 – 260 MiB. With `--rows 2000000 --commit-every 65000 --memory-limit
 * 96MB` and no setting, RSS stays at ~300 – 420 MiB from 0.5 million rows on (commits alone level it).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadDuckdb, openingOptions } from '../src/store/duckdb.js';
import { type Column, FACT_COLUMNS } from '../src/store/fact-columns.js';
import { CREATE_TABLES } from '../src/store/schema.js';
import { StoreWriter } from '../src/store/writer.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    strings: { type: 'string', default: 'long' },
    'commit-every': { type: 'string', default: '0' },
    'memory-limit': { type: 'string', default: '256MB' },
  },
});
const rows = Number(values.rows);
const commitEvery = Number(values['commit-every']);
/** rows per synthetic file: a 1 GB sample corpus has ~13 observations per transcript */
const PER_FILE = 13;

const dir = mkdtempSync(join(tmpdir(), 'cachelens-append-'));
const instance = await (await loadDuckdb()).DuckDBInstance.create(join(dir, 'store.duckdb'), openingOptions());
const db = await instance.connect();
await db.run(CREATE_TABLES);
await db.run(`SET memory_limit = '${values['memory-limit']!.replaceAll("'", '')}'`);

const rssMiB = () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024);
const duckMiB = async () => Math.round(Number((await db.runAndReadAll(`SELECT sum(memory_usage_bytes)::BIGINT FROM duckdb_memory()`)).getRows()[0][0]) / 2 ** 20);

function text(column: number, file: number, i: number): string | null {
  if (values.strings === 'null') return null;
  if (values.strings === 'short') return `${column}${(file * PER_FILE + i) % 1e9}`;
  return `${column}-msg_01ABCDEFGHIJKLMNOPQRSTUV${file}-${i}`;
}

function observations(file: number): Column[] {
  return FACT_COLUMNS.observations.map((kind, c): Column => {
    switch (kind) {
      case 'text':
        return Array.from({ length: PER_FILE }, (_, i) => text(c, file, i));
      case 'double':
        return Float64Array.from({ length: PER_FILE }, (_, i) => file * 1000 + i);
      case 'int':
        return Int32Array.from({ length: PER_FILE }, (_, i) => file + i);
      case 'tiny':
        return Int8Array.from({ length: PER_FILE }, () => 1);
      case 'bool':
        return Uint8Array.from({ length: PER_FILE }, () => 0);
    }
  });
}

const started = performance.now();
const report = async (what: string, n: number) =>
  console.log(`${what.padEnd(10)} rows ${String(n).padStart(9)}  rss ${rssMiB()} MiB  duckdb ${await duckMiB()} MB  heap ${process.memoryUsage().heapUsed >> 20} MB  ${((performance.now() - started) / 1000).toFixed(1)} s`);

await db.run('BEGIN TRANSACTION');
let writer = await StoreWriter.create(db);
let sinceCommit = 0;
for (let file = 0, n = 0; n < rows; file++, n += PER_FILE) {
  writer.columns({ observations: { rows: PER_FILE, cols: observations(file) } });
  sinceCommit += PER_FILE;
  if (commitEvery > 0 && sinceCommit >= commitEvery) {
    writer.close();
    await db.run('COMMIT');
    await db.run('BEGIN TRANSACTION');
    writer = await StoreWriter.create(db);
    sinceCommit = 0;
  }
  if (file % 20000 === 0) await report('appending', n);
}
writer.close();
await report('closed', rows);
await db.run('COMMIT');
await report('committed', rows);
db.closeSync();
rmSync(dir, { recursive: true, force: true });
