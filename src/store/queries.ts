/**
 * The bundled SQL analyses in `queries/*.sql`: one analysis a file, each opening with a comment
 * block (purpose, inputs, output columns, example row) that `cachelens query --list` shows.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import type { Row, Store } from './store.js';

export const QUERIES_DIR = fileURLToPath(new URL('../../queries/', import.meta.url));

const cache = new Map<string, string>();

export function querySql(nameOrPath: string): string {
  const path = nameOrPath.endsWith('.sql') ? nameOrPath : join(QUERIES_DIR, `${nameOrPath}.sql`);
  let sql = cache.get(path);
  if (sql === undefined) {
    if (!existsSync(path)) throw new UsageError(`no such query: ${nameOrPath}`, 'cachelens query --list shows the bundled ones');
    sql = readFileSync(path, 'utf8');
    cache.set(path, sql);
  }
  return sql;
}

/** The `$name` parameters a query uses, in order of first use. */
export function queryParams(sql: string): string[] {
  const body = sql.replace(/--[^\n]*/g, '').replace(/'(?:[^']|'')*'/g, "''");
  return [...new Set([...body.matchAll(/\$([a-z_][a-z0-9_]*)/gi)].map((m) => m[1]))];
}

/** Runs a bundled or user query; parameters it uses and the caller did not give are NULL. */
export async function runQuery(store: Pick<Store, 'all'>, nameOrPath: string, params: Record<string, unknown> = {}): Promise<Row[]> {
  const sql = querySql(nameOrPath);
  const used = queryParams(sql);
  const bound: Record<string, unknown> = {};
  for (const p of used) bound[p] = params[p] ?? null;
  try {
    return await store.all(sql, used.length ? bound : undefined);
  } catch (err) {
    throw new UsageError(`query ${nameOrPath} failed: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** What a remembered query asks of a store: a Store, or the answers kept beside one (answers.ts). */
export type RememberingStore = Pick<Store, 'all' | 'remember'>;

/**
 * A bundled query over the derived tables, answered from the store's remembered results when the
 * facts have not changed since it last ran with these parameters (see Store.remember).
 */
export async function rememberedQuery(store: RememberingStore, name: string, params: Record<string, unknown> = {}): Promise<Row[]> {
  const used = queryParams(querySql(name));
  const key = `query:${name}:${JSON.stringify(used.map((p) => params[p] ?? null))}`;
  return store.remember(key, () => runQuery(store, name, params));
}

export interface QueryInfo {
  name: string;
  purpose: string;
}

export function listQueries(): QueryInfo[] {
  return readdirSync(QUERIES_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => {
      const first = readFileSync(join(QUERIES_DIR, f), 'utf8').split('\n')[0] ?? '';
      const name = f.replace(/\.sql$/, '');
      return { name, purpose: first.replace(/^--\s*/, '').replace(new RegExp(`^${name}:\\s*`), '') };
    });
}
