/**
 * The bundled SQL analyses in `queries/*.sql`: one analysis a file, each opening with a comment
 * block (purpose, inputs, output columns, example row) that `cachelens query --list` shows.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { shownId } from '../format/table.js';
import type { QueryTable, Row, Store } from './store.js';

export const QUERIES_DIR = fileURLToPath(new URL('../../queries/', import.meta.url));

const cache = new Map<string, string>();

/**
 * Whether `nameOrPath` names one of the bundled queries rather than a file of the user's: a plain
 * name (letters, digits, `_`, `-`), not a path. `query ../../tmp/x` is no bundled query: it would
 * run /tmp/x.sql as one, past what a user's own query must do first (commands/store.ts).
 */
export function isBundledName(nameOrPath: string): boolean {
  return /^[A-Za-z0-9_-]+$/.test(nameOrPath);
}

export function querySql(nameOrPath: string): string {
  const user = nameOrPath.endsWith('.sql');
  if (!user && !isBundledName(nameOrPath)) throw new UsageError(`no such query: ${shownId(nameOrPath)}`, 'cachelens query --list shows the bundled ones; a query of your own is a path ending in .sql');
  const path = user ? nameOrPath : join(QUERIES_DIR, `${nameOrPath}.sql`);
  let sql = cache.get(path);
  if (sql === undefined) {
    if (!existsSync(path)) {
      if (user) throw new UsageError(`no such file: ${nameOrPath}`, 'a query of your own is the path of an existing .sql file');
      throw new UsageError(`no such query: ${shownId(nameOrPath)}`, 'cachelens query --list shows the bundled ones');
    }
    // a directory named x.sql (or a device, a pipe) ended in an internal error and its stack
    if (user && !statSync(path).isFile()) throw new UsageError(`not a file: ${nameOrPath}`, 'a query of your own is the path of an existing .sql file');
    try {
      sql = readFileSync(path, 'utf8');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new UsageError(`cannot read ${nameOrPath}: ${e.code ?? e.message}`);
    }
    cache.set(path, sql);
  }
  return sql;
}

/**
 * What holds no parameter, read left to right: line and block comments, string literals (`E'…'` with
 * its backslash escapes too: `E'it\'s $x'` is one string), quoted
 * identifiers and dollar-quoted strings (`$$…$$`, `$tag$…$tag$`). A `$y` inside one was taken for a
 * parameter: bound, DuckDB failed the whole query ("Failed to retrieve bind parameter index").
 */
const NO_PARAMS = /--[^\n]*|\/\*[\s\S]*?\*\/|\b[Ee]'(?:[^'\\]|\\[\s\S]|'')*'|'(?:[^']|'')*'|"(?:[^"]|"")*"|\$([A-Za-z_][A-Za-z0-9_]*)?\$[\s\S]*?\$\1\$/g;

/**
 * The `$name` parameters a query uses, in order of first use, each as first written. DuckDB takes a
 * parameter's name in any case, as its identifiers: `$Project` and `$project` are one parameter,
 * bound to one value, so they are one name here (both were listed, and one of two values bound to
 * them was dropped without a word).
 * Example: `SELECT $Project, $project, $tz` → ['Project', 'tz'].
 */
export function queryParams(sql: string): string[] {
  const body = sql.replace(NO_PARAMS, ' ');
  const names = new Map<string, string>();
  for (const m of body.matchAll(/\$([a-z_][a-z0-9_]*)/gi)) if (!names.has(m[1]!.toLowerCase())) names.set(m[1]!.toLowerCase(), m[1]!);
  return [...names.values()];
}

/**
 * The files and directories a query's statements name to write: the path after `TO` in a `COPY`, the
 * directory of an `EXPORT DATABASE`, the database file an `ATTACH` opens (and creates), and the file or
 * directory `SET`/`PRAGMA profiling_output` or `temp_directory` has DuckDB write, as written, in the
 * order they come. Read by tokens, so a `TO '…'` inside a string, a comment or a quoted name is none.
 * A path is a string literal ('…', E'…', $$…$$) or, where DuckDB takes one for a file (after `TO`,
 * `ATTACH`'s and `EXPORT DATABASE`'s), a double-quoted name.
 * Example: `COPY (SELECT 'TO x') TO 'out.csv' (HEADER); ATTACH 'a.duckdb'` → ['out.csv', 'a.duckdb'].
 */
export function writeTargets(sql: string): string[] {
  return scanStatements(sql).targets;
}

/**
 * The settings a query's `SET`, `RESET` or `PRAGMA` statements name that would let DuckDB reach the
 * network or load an extension: autoinstall/autoload turned back on, another extension repository,
 * unsigned or community extensions, another extension directory. cachelens opens DuckDB with
 * autoinstall and autoload off; a FILE.sql that turns them on is refused before anything runs.
 * Example: `SET autoinstall_known_extensions = true; SELECT 1` → ['autoinstall_known_extensions'].
 */
export function networkSettings(sql: string): string[] {
  return scanStatements(sql).settings;
}

const WRITING_SETTINGS = /^(profiling_output|profile_output|temp_directory|log_query_path)$/i;
const NETWORK_SETTINGS = /^(autoinstall_known_extensions|autoload_known_extensions|autoinstall_extension_repository|custom_extension_repository|allow_unsigned_extensions|allow_community_extensions|allow_extensions_metadata_mismatch|extension_directory)$/i;

function scanStatements(sql: string): { targets: string[]; settings: string[] } {
  const TOKENS = /--[^\n]*|\/\*[\s\S]*?\*\/|\b[Ee]'((?:[^'\\]|\\[\s\S]|'')*)'|'((?:[^']|'')*)'|"((?:[^"]|"")*)"|\$([A-Za-z_][A-Za-z0-9_]*)?\$([\s\S]*?)\$\4\$|([A-Za-z_][A-Za-z0-9_]*)|(;)/g;
  const settings: string[] = [];
  const targets: string[] = [];
  let statement: { kind: string; text?: string }[] = [];
  // a file's name: a string, or a double-quoted name where DuckDB takes one as the file
  const isPath = (t: { kind: string } | undefined) => t?.kind === 'string' || t?.kind === 'quoted';
  const end = () => {
    // `PREPARE p AS COPY …` (run by EXECUTE) and `EXPLAIN ANALYZE COPY …` write as the COPY does
    const words = () => statement.filter((t) => t.kind === 'word').map((t) => t.text!.toUpperCase());
    if (words()[0] === 'PREPARE') statement = statement.slice(statement.findIndex((t) => t.kind === 'word' && /^as$/i.test(t.text!)) + 1);
    while (['EXPLAIN', 'ANALYZE'].includes(words()[0] ?? '')) statement = statement.slice(statement.findIndex((t) => t.kind === 'word') + 1);
    const first = words()[0];
    if (first === 'COPY') {
      statement.forEach((t, i) => {
        const next = statement[i + 1];
        if (t.kind === 'word' && t.text!.toUpperCase() === 'TO' && isPath(next)) targets.push(next!.text!);
      });
    } else if (first === 'ATTACH' || first === 'EXPORT') {
      // EXPORT DATABASE [name TO] 'dir': the directory after TO when a name comes first
      const to = statement.findIndex((t) => t.kind === 'word' && t.text!.toUpperCase() === 'TO');
      const file = first === 'EXPORT' && to >= 0 ? statement.slice(to + 1).find(isPath) : statement.find(isPath);
      if (file) targets.push(file.text!);
    } else if ((first === 'SET' || first === 'PRAGMA') && statement.some((t) => t.kind === 'word' && WRITING_SETTINGS.test(t.text!))) {
      const file = statement.find((t) => t.kind === 'string');
      if (file) targets.push(file.text!);
    }
    if (first === 'SET' || first === 'RESET' || first === 'PRAGMA') {
      for (const t of statement) if (t.kind === 'word' && NETWORK_SETTINGS.test(t.text!)) settings.push(t.text!.toLowerCase());
    }
    statement = [];
  };
  for (const m of sql.matchAll(TOKENS)) {
    if (m[1] !== undefined) statement.push({ kind: 'string', text: m[1].replace(/\\(.)/g, '$1').replace(/''/g, "'") });
    else if (m[2] !== undefined) statement.push({ kind: 'string', text: m[2].replace(/''/g, "'") });
    else if (m[3] !== undefined) statement.push({ kind: 'quoted', text: m[3].replace(/""/g, '"') });
    else if (m[5] !== undefined) statement.push({ kind: 'string', text: m[5] });
    else if (m[6] !== undefined) statement.push({ kind: 'word', text: m[6] });
    else if (m[7] !== undefined) end();
    else if (!m[0].startsWith('--') && !m[0].startsWith('/*')) statement.push({ kind: 'other' });
  }
  end();
  return { targets, settings };
}

/** Runs a bundled or user query; parameters it uses and the caller did not give are NULL. */
export async function runQuery(store: Pick<Store, 'all'>, nameOrPath: string, params: Record<string, unknown> = {}): Promise<Row[]> {
  return bindAndRun(nameOrPath, params, (sql, bound) => store.all(sql, bound));
}

/** runQuery for printing (`cachelens query`): the columns too, values as queryTable makes them. */
export async function runQueryTable(store: Pick<Store, 'table'>, nameOrPath: string, params: Record<string, unknown> = {}): Promise<QueryTable> {
  return bindAndRun(nameOrPath, params, (sql, bound) => store.table(sql, bound));
}

async function bindAndRun<T>(nameOrPath: string, params: Record<string, unknown>, run: (sql: string, bound: Record<string, unknown> | undefined) => Promise<T>): Promise<T> {
  const sql = querySql(nameOrPath);
  const used = queryParams(sql);
  // no prototype: a parameter named __proto__ is set as any other
  const bound: Record<string, unknown> = Object.create(null);
  for (const p of used) bound[p] = (Object.hasOwn(params, p) ? params[p] : null) ?? null;
  try {
    return await run(sql, used.length ? bound : undefined);
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`query ${nameOrPath}: ${err.message}`, err.hint);
    throw new UsageError(`query ${nameOrPath} failed: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** What a remembered query asks of a store: a Store, or the answers kept beside one (answers.ts). */
export type RememberingStore = Pick<Store, 'all' | 'remember'>;

/**
 * A bundled query over the derived tables, answered from the store's remembered results when the
 * facts have not changed since it last ran with these parameters (see Store.remember) and the
 * query's text is the same: a result is keyed by a digest of its SQL too, so that a cachelens
 * whose bundled query changed does not answer with what the old one gave.
 * Example key: `query:summary:1f0c9a3e52b7:[null,"UTC",null,null,null]`.
 */
export async function rememberedQuery(store: RememberingStore, name: string, params: Record<string, unknown> = {}): Promise<Row[]> {
  return store.remember(rememberedKey(name, params), () => runQuery(store, name, params));
}

/** The key a bundled query's result is remembered under (rememberedQuery). */
export function rememberedKey(name: string, params: Record<string, unknown> = {}): string {
  const sql = querySql(name);
  return `${rememberedPrefix(name)}${JSON.stringify(queryParams(sql).map((p) => params[p] ?? null))}`;
}

/** What every remembered key of a bundled query begins with: `query:<name>:<digest of its SQL>:`. */
export function rememberedPrefix(name: string): string {
  return `query:${name}:${sqlDigest(querySql(name))}:`;
}

const digests = new Map<string, string>();

function sqlDigest(sql: string): string {
  let d = digests.get(sql);
  if (d === undefined) digests.set(sql, (d = createHash('sha1').update(sql).digest('hex').slice(0, 12)));
  return d;
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
