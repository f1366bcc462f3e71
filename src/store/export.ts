/**
 * `cachelens export --parquet DIR`: the portable tables (requests, chains, attachments) as Parquet,
 * partitioned by day, so that a team can pool many people's exports under one directory and run
 * the same `queries/*.sql` and cross-tabs over all of them (`--parquet POOL`, or DuckDB directly).
 *
 *   DIR/requests/day=2026-02-12/data_0.parquet
 *   DIR/chains/day=2026-02-12/data_0.parquet        (day of the chain's first request)
 *   DIR/attachments/day=2026-02-12/data_0.parquet
 *
 * Local file ids are left out (they mean nothing outside one store). Re-exporting into the same
 * DIR replaces those three sub-directories and nothing else; a DIR holding anything else, or lying
 * inside the logs being read, is refused.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { UsageError } from '../errors.js';
import { ATTACHMENT_COLUMNS, PORTABLE_TABLES } from './portable.js';
import type { Store } from './store.js';

export interface ExportedTable {
  table: (typeof PORTABLE_TABLES)[number];
  rows: number;
  days: number;
  files: number;
}

export interface ExportResult {
  dir: string;
  /** the time zone the `day` partitions are in */
  timezone: string;
  tables: ExportedTable[];
}

/** The SELECT each table is written from; `day` is the partition column. */
function selectFor(table: ExportedTable['table']): string {
  const day = (ts: string) => `coalesce(strftime(timezone($tz, ${ts}), '%Y-%m-%d'), 'unknown') AS day`;
  switch (table) {
    case 'requests':
      return `SELECT * EXCLUDE (file_id, row_hash), ${day('ts')} FROM requests`;
    case 'chains':
      return `SELECT * EXCLUDE (file_id), ${day('to_timestamp(first_t / 1000)')} FROM chains`;
    case 'attachments':
      return `SELECT ${ATTACHMENT_COLUMNS}, ${day('to_timestamp(t / 1000)')} FROM attachments`;
  }
}

/** Refuses a DIR inside the logs, or one that holds anything but a previous export. */
export function checkExportDir(dir: string, logRoots: readonly string[]): string {
  const abs = resolve(dir);
  for (const root of logRoots) {
    const r = resolve(root);
    if (abs === r || abs.startsWith(r + sep)) throw new UsageError(`--parquet ${dir} is inside the logs being read (${r})`, 'cachelens never writes into log directories; choose another DIR');
  }
  if (existsSync(abs)) {
    if (!statSync(abs).isDirectory()) throw new UsageError(`--parquet ${dir} is not a directory`);
    const other = readdirSync(abs).filter((e) => !(PORTABLE_TABLES as readonly string[]).includes(e));
    if (other.length > 0) throw new UsageError(`--parquet ${dir} holds other files (${other[0]})`, 'export into an empty directory or a previous export');
  }
  return abs;
}

/** Writes the export; `store` must have the portable views in place (usePortableViews). */
export async function exportParquet(store: Store, dir: string, o: { timezone: string; logRoots: readonly string[] }): Promise<ExportResult> {
  const abs = checkExportDir(dir, o.logRoots);
  mkdirSync(abs, { recursive: true });
  const tables: ExportedTable[] = [];
  for (const table of PORTABLE_TABLES) {
    const sel = selectFor(table);
    const target = join(abs, table).replace(/'/g, "''");
    await store.all(`COPY (${sel}) TO '${target}' (FORMAT parquet, PARTITION_BY (day), OVERWRITE true)`, { tz: o.timezone });
    const [c] = await store.all(`SELECT count(*) AS rows, count(DISTINCT day) AS days FROM (${sel})`, { tz: o.timezone });
    tables.push({ table, rows: c.rows as number, days: c.days as number, files: countParquet(join(abs, table)) });
  }
  return { dir: abs, timezone: o.timezone, tables };
}

function countParquet(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) n += countParquet(join(dir, e.name));
    else if (e.name.endsWith('.parquet')) n++;
  }
  return n;
}
