/**
 * The three tables that `queries/*.sql`, the cross-tab and the Parquet export read — `requests`,
 * `chains` and `attachments` — with the same columns whether they come from a store or from a
 * Parquet export (one person's, or a team's pooled under one directory).
 *
 *   store ──(scoped temp view over attachments)──┐
 *                                                 ├─▶ requests · chains · attachments ─▶ queries/*.sql
 *   export DIR ──(views over read_parquet)───────┘
 *
 * In a store, `requests` and `chains` are already those of this invocation's scope; the raw
 * `attachments` table holds every file ever read, so a temp view of the same name (which shadows
 * it on this connection only) keeps the attachments of the files in scope, less those a resumed
 * session's transcript copies from another (`line_copies`). Queries use only the
 * columns the export keeps (ATTACHMENT_COLUMNS).
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadDuckdb, MACROS, openingOptions } from './duckdb.js';
import { UsageError } from '../errors.js';
import { type QueryTable, type Row, type Store, plainRow, queryTable, readStatements } from './store.js';

/** Anything SQL can be run against: a Store, or a Parquet export opened in memory. */
export interface SqlSource {
  all(sql: string, params?: Record<string, unknown>): Promise<Row[]>;
  /** the result as `cachelens query` prints it (queryTable) */
  table(sql: string, params?: Record<string, unknown>): Promise<QueryTable>;
  close(): void;
}

export const PORTABLE_TABLES = ['requests', 'chains', 'attachments'] as const;

/** The columns of the exported `attachments` (no file ids: they mean nothing outside one store). */
export const ATTACHMENT_COLUMNS = `chain_id, line, t, make_timestamptz(CAST(t AS BIGINT) * 1000) AS ts, type, bytes, hash, round`;

/** Makes `attachments` on this store's connection the portable, scoped one. */
export async function usePortableViews(store: Store): Promise<void> {
  const [{ db }] = await store.all(`SELECT current_database() AS db`);
  const raw = `"${String(db).replace(/"/g, '""')}".main.attachments`;
  // the raw columns, file_id included, so that code written against the raw table still works here
  // without the rows a resumed session's transcript copies from another (DERIVE_LINE_COPIES)
  await store.run(`CREATE OR REPLACE TEMP VIEW attachments AS
    SELECT * FROM ${raw} WHERE file_id IN (SELECT file_id FROM scope) AND NOT EXISTS (
      SELECT 1 FROM line_copies c WHERE c.file_id = ${raw}.file_id AND c.line = ${raw}.line)`);
}

/**
 * Opens a Parquet export (or a directory holding several, e.g. one per person) as an in-memory
 * database with the three portable tables as views. Every `requests/day=…/*.parquet` below `dir` is
 * read (`**` also matches no directory at all); the `day` partition column is dropped again
 * (queries compute days in their own time zone).
 */
export async function openParquet(dir: string): Promise<SqlSource> {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new UsageError(`no such directory: ${dir}`);
  const instance = await (await loadDuckdb()).DuckDBInstance.create(':memory:', openingOptions());
  const db = await instance.connect();
  const close = () => {
    db.closeSync();
    instance.closeSync();
  };
  try {
    await db.run(MACROS);
    for (const t of PORTABLE_TABLES) {
      const glob = `${root}/**/${t}/*/*.parquet`.replace(/'/g, "''");
      await db.run(`CREATE VIEW ${t} AS SELECT * EXCLUDE (day) FROM read_parquet('${glob}', hive_partitioning = true, union_by_name = true)`);
    }
  } catch (err) {
    close();
    throw new UsageError(`${dir} holds no cachelens Parquet export: ${(err as Error).message.split('\n')[0]}`, 'make one with cachelens export --parquet DIR');
  }
  return {
    async all(sql, params) {
      const reader = await db.runAndReadAll(sql, params as never);
      return reader.getRowObjectsJS().map(plainRow);
    },
    async table(sql, params) {
      return queryTable(await readStatements(db, sql, params));
    },
    close,
  };
}
