/**
 * @duckdb/node-api, loaded when a store is first opened rather than with the CLI's modules: a warm
 * run answered from the answers file beside the store (answers.ts) never loads it (~45 ms of this
 * thread's time on a warm run, spent while the walk ran on the other core and slowed it).
 *
 * The bundle (scripts/bundle.mjs) carries its JavaScript, as a chunk of its own, so Node reads,
 * resolves and compiles one file instead of the package's ~100 CommonJS files (`require` of the API
 * alone: 85 – 100 → 45 – 55 ms); only the native binding (@duckdb/node-bindings) is loaded from
 * node_modules at run time. Unbundled (tests under tsx), Node imports the package as ESM, which
 * first has cjs-module-lexer parse every re-exported file to learn its export names (~120 ms).
 */
import type * as DuckDB from '@duckdb/node-api';
import { keepStructKeys } from './query-values.js';

let loaded: typeof DuckDB | undefined;

/** The DuckDB API, loaded at the first call. */
export async function loadDuckdb(): Promise<typeof DuckDB> {
  if (!loaded) {
    // a CommonJS package: bundled, its exports are the chunk's default export; imported by Node,
    // they are also named exports
    const m = (await import('@duckdb/node-api')) as unknown as { DuckDBInstance?: unknown; default?: typeof DuckDB };
    const api = m.DuckDBInstance ? (m as unknown as typeof DuckDB) : m.default;
    if (!api?.DuckDBInstance) throw new Error('@duckdb/node-api did not load as expected (no DuckDBInstance among its exports)');
    keepStructKeys(api);
    loaded = api;
  }
  return loaded;
}

/** The DuckDB API, once loadDuckdb has loaded it (every store's open does, before anything else). */
export function duckdb(): typeof DuckDB {
  if (!loaded) throw new Error('DuckDB is used before it is loaded (loadDuckdb)');
  return loaded;
}

/**
 * Options every DuckDB instance is opened with. cachelens never touches the network, and DuckDB
 * would: a query naming `https://…` (a FILE.sql of the user's) had it download and install httpfs,
 * and any known extension not built in is fetched the same way. The built-in ones (parquet, json,
 * icu) need neither option. A user's SQL that would `INSTALL` or `LOAD` one itself is refused
 * (store.ts refuseExtensions); it may still `COPY … TO` a file of its own.
 * Example: openingOptions({ temp_directory: '/tmp/x' }).
 */
export function openingOptions(extra: Record<string, string> = {}): Record<string, string> {
  return { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false', ...extra };
}

/**
 * Macros the bundled queries use, defined on every connection cachelens opens (a TEMP macro is the
 * connection's own), so a `query FILE.sql` of the user's may use them too.
 * iso_year(t): a DATE's or TIMESTAMP's year as days are written, ISO 8601's expanded form beyond
 * 0000 – 9999 (a time of 9999-12-31 in a zone behind UTC) as JavaScript's toISOString writes it:
 * iso_year(DATE '2026-03-01') = '2026', '+010000', '-000001' (strftime's %Y gave '10000' and '-1').
 * fold_case(s): the case fold `--project` matches by, format/fold.ts foldCase in SQL: each
 * character's uppercase, then its lowercase, so the final sigma folds with σ (lower() alone kept ς
 * apart: fold_case('σοφος') = fold_case('ΣΟΦΟΣ') = 'σοφοσ').
 */
export const MACROS = `CREATE OR REPLACE TEMP MACRO iso_year(t) AS
  CASE WHEN year(t) BETWEEN 0 AND 9999 THEN strftime(t, '%Y')
       ELSE (CASE WHEN year(t) < 0 THEN '-' ELSE '+' END) || lpad(abs(year(t))::VARCHAR, 6, '0') END;
CREATE OR REPLACE TEMP MACRO fold_case(s) AS lower(upper(s));`;
