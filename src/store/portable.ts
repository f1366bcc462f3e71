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
import type { DuckDBConnection } from '@duckdb/node-api';
import { type Dirent, type Stats, closeSync, lstatSync, openSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { unsearchable } from './dirs.js';
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
 * The views over a pool (`root`: the directory `--parquet` names): each table read with read_parquet
 * over every export below it, one copy kept of each request, chain and attachment. The same export
 * copied into the pool twice, two exports of overlapping `--since` ranges, or an export and a later
 * one of the same logs hold the same rows, which were all counted (SPEC §1.3 keys a request by
 * (message.id, requestId): one request is one row however many exports hold it).
 *
 * The newer export wins. `pool_exports` gives each export's age, `newest` (the latest first_t or
 * last_t of its chains: the whole chains, as the logs were when it was made), and the times its
 * requests and attachments span (`lo`, `hi`). Which copy is kept, by key:
 *   chains (chain_id): the copy in the newest export, then the one with the most requests, then the
 *     latest last_t (a later export of logs that have grown since), then the export last in
 *     code-point order of its path (below), ranked once: `chain_exports` names the copy kept (its
 *     export, file and row in it), which the `chains` view keeps;
 *   requests (key: message.id and requestId): the copy in the newest export, then the one in the
 *     export whose chain copy was kept, then the export last in code-point order. A session resumed
 *     between two exports *     (its lines copied into the new one's transcript, its requests the new chain's from then on):
 *     the earlier export's copy under the old chain, whose 5 requests are 0 in the later one, was
 *     kept beside its requests under the new chain;
 *   attachments (chain_id, line, t, type, hash: one attachment line of one chain): the copy in the
 *     export whose chain copy was kept (else the export last in code-point order); another export's
 *     only outside the times that export spans (an older export's days the newer one does not hold),
 *     so that the old chain's attachments, the new chain's in the later export, are not counted twice.
 * Two exports of the same age (the same export copied to two directories and one edited, or two
 * taken of logs whose latest chain is the same) are told apart by their paths, the last in code-point
 * order winning (`pool/b` over `pool/a`, `pool/x-y` over `pool/x`), whole exports compared, not the
 * files' paths (by which `pool/x/…` came after `pool/x-y/…`); the file path last, within one export.
 * An export is a file's path less `<table>/day=…/<file>.parquet`. A row whose key is NULL (no
 * cachelens export writes one) is kept. DUPLICATES counts what each view leaves out.
 *
 * As docs/store.md gives them (`listed` false), each view globs the pool itself; cachelens
 * (`listed`) reads the files listed once at open (poolFiles, which follows links; the variables
 * `<table>_files`, POOL_FILES) and keeps `chain_exports`, one row per chain, as a table: the requests and attachments views read it
 * at every use, and a pool of many files was globbed and its chains read each time.
 * Example: pool/a and pool/b both a copy of one export → each table's rows once.
 */
export function poolViews(root: string, o: { listed?: boolean } = {}): string[] {
  const options = `hive_partitioning = false, union_by_name = true, filename = '_file'`;
  const read = (t: string, more = '') => (o.listed ? `read_parquet(getvariable('${t}_files'), ${options}${more})` : `read_parquet('${poolGlob(root, t)}', ${options}${more})`);
  const exportOf = (f: string) => `regexp_replace(${f}, '/[^/]*/[^/]*/[^/]*$', '')`;
  return [
    `CREATE ${o.listed ? 'TEMP TABLE' : 'VIEW'} pool_exports AS SELECT export, max(newest) AS newest, min(lo) AS lo, max(hi) AS hi FROM (
  SELECT ${exportOf('_file')} AS export, greatest(max(first_t), max(last_t)) AS newest FROM ${read('chains')} GROUP BY 1
  UNION ALL BY NAME SELECT ${exportOf('_file')} AS export, min(t) AS lo, max(t) AS hi FROM ${read('requests')} GROUP BY 1
  UNION ALL BY NAME SELECT ${exportOf('_file')} AS export, min(t) AS lo, max(t) AS hi FROM ${read('attachments')} GROUP BY 1) GROUP BY export`,
    `CREATE ${o.listed ? 'TEMP TABLE' : 'VIEW'} chain_exports AS SELECT chain_id, ${exportOf('_file')} AS export, _file AS file, file_row_number AS row FROM ${read('chains', ', file_row_number = true')} x LEFT JOIN pool_exports e ON e.export = ${exportOf('x._file')}
  WHERE chain_id IS NOT NULL
  QUALIFY row_number() OVER (PARTITION BY chain_id ORDER BY e.newest DESC NULLS LAST, requests DESC NULLS LAST, last_t DESC NULLS LAST, e.export DESC, _file DESC, file_row_number) = 1`,
    `CREATE VIEW chains AS SELECT x.* EXCLUDE (_file, file_row_number) FROM ${read('chains', ', file_row_number = true')} x LEFT JOIN chain_exports c ON c.file = x._file AND c.row = x.file_row_number
  WHERE x.chain_id IS NULL OR c.file IS NOT NULL`,
    `CREATE VIEW requests AS SELECT r.* EXCLUDE (_file) FROM ${read('requests')} r LEFT JOIN chain_exports c USING (chain_id) LEFT JOIN pool_exports e ON e.export = ${exportOf('r._file')}
  QUALIFY key IS NULL OR row_number() OVER (PARTITION BY key ORDER BY e.newest DESC NULLS LAST, ${exportOf('r._file')} = c.export DESC NULLS LAST, ${exportOf('r._file')} DESC, r._file DESC) = 1`,
    `CREATE VIEW attachments AS SELECT a.* EXCLUDE (_file) FROM ${read('attachments')} a LEFT JOIN chain_exports c USING (chain_id) LEFT JOIN pool_exports e ON e.export = c.export
  WHERE c.export IS NULL OR ${exportOf('a._file')} = c.export OR coalesce(a.t NOT BETWEEN e.lo AND e.hi, true)
  QUALIFY chain_id IS NULL OR row_number() OVER (PARTITION BY chain_id, line, t, type, hash ORDER BY ${exportOf('a._file')} = c.export DESC NULLS LAST, ${exportOf('a._file')} DESC, a._file DESC) = 1`,
  ];
}

/**
 * The glob of one table's files below `root`, quoted for a SQL literal (`**` also matches no
 * directory). The root's own `*`, `?` and `[` are matched as themselves (`[*]`, `[?]`, `[[]`): a pool
 * `exports [2026]` matched no file ("holds no cachelens Parquet export" of a directory an export
 * had just written), and `team*` read every directory beside it whose name begins so as well.
 * A hidden file (`[!.]`: a macOS AppleDouble `._data_0.parquet`) is no export's, and is not matched: the
 * views as docs/store.md gives them read a pool copied through a macOS share as cachelens does.
 * DuckDB's glob takes a backslash for a `/`, so one in the root is matched by `?` (any one character);
 * nor does its `**` follow a link to a directory (poolFiles, which cachelens reads by, does both).
 * Example: the root `/p [1]` is globbed as `/p [[]1]`, the tables' directories below it as before.
 */
export function poolGlob(root: string, table: string): string {
  return `${root.replace(/[*?[]/g, (c) => `[${c}]`).replace(/\\/g, '?')}/**/${table}/*/[!.]*.parquet`.replace(/'/g, "''");
}

/** One file of a pool: its path, the path as messages show it (shown), and the pattern read_parquet reads it by (globPattern). */
interface PoolFile {
  path: string;
  shown: string;
  pattern: string;
}

/**
 * What the walk of a pool passed over, to be said: a link that leads nowhere (`dangling`), a link
 * that loops (to the pool, a directory above it or one holding the link, or links that lead to each
 * other: `loop`), a directory that cannot be read (`unreadable`: a `lost+found`), a link whose end
 * cannot be reached (`unreadable-link`: into a directory this user may not search), and a name that
 * is not UTF-8 (`not-utf8`: DuckDB takes paths as UTF-8 text, and cannot open it).
 */
export type PassedKind = 'dangling' | 'loop' | 'unreadable' | 'unreadable-link' | 'not-utf8';
export interface PassedOver {
  kind: PassedKind;
  /** as messages show it: below the directory `--parquet` named, as it was given */
  path: string;
}

/** How one entry passed over is said: `passed over a link that leads nowhere: pool/bob`. */
export const PASSED_WORDS: Record<PassedKind, { one: string; many: (n: string) => string }> = {
  dangling: { one: 'a link that leads nowhere', many: (n) => `${n} links that lead nowhere` },
  loop: { one: 'a link loop', many: (n) => `${n} link loops` },
  unreadable: { one: 'a directory that cannot be read', many: (n) => `${n} directories that cannot be read` },
  'unreadable-link': { one: 'a link that cannot be read', many: (n) => `${n} links that cannot be read` },
  'not-utf8': { one: 'a name that is not UTF-8 (DuckDB cannot open it)', many: (n) => `${n} names that are not UTF-8 (DuckDB cannot open them)` },
};

/** A directory to read, and what is known of it on the way there. */
interface Pending {
  path: string;
  /** path as a Buffer: directories are read in code-point order of their paths */
  key: Buffer;
  /** the names from the pool down to it */
  depth: string[];
  /** its real path */
  real: string;
  /** the export it is inside of (a directory holding requests/, chains/ or attachments/ above it), if any */
  inside: string | null;
}

/**
 * Each table's files below `dir` (`<table>/<day>/<name>.parquet` at any depth, as the glob `**`
 * matches), listed here rather than by DuckDB's glob, whose `**` does not follow a link: a pool made of links to each
 * person's export (`pool/alice -> /shares/alice/export`) read none of them, without a word. A link to
 * a directory is followed; each directory is read once, by the first path to it in code-point order
 * (all paths to it compared: the directories are read least path first), so a link to a directory
 * beside it is not read again, and which of two paths names an export (which decides a tie between
 * two exports of the same age) does not depend on the order the walk met them. A link to the pool,
 * to a directory above it, or to one holding the link (a loop) is not followed: `pool/up -> ..` read
 * every directory beside the pool.
 * What cannot be read is passed over and returned in `passed`, to be said (PassedOver) — unless it is
 * inside an export (below a directory holding requests/, chains/ or attachments/): a day that cannot
 * be read left that day's requests out with exit 0, so the pool is refused, in one line naming it, as
 * for a file that cannot be read. Hidden entries are no export's and are not read, nor said when they
 * cannot be (an Emacs lock `.#notes.md` is a link that leads nowhere): a pool copied through a macOS
 * share or a FAT drive holds an AppleDouble `._data_0.parquet` beside each file, which failed the
 * whole pool as a damaged Parquet file. Paths in `passed` and in messages are shown below `dir` as
 * given (`pool/bob`, not `/home/me/pool/bob`). Each list is in code-point order.
 * Example: pool/a -> /x/export, pool/b/requests/… → both exports' files.
 */
export function poolFiles(dir: string): { files: Record<(typeof PORTABLE_TABLES)[number], PoolFile[]>; passed: PassedOver[] } {
  const root = resolve(dir);
  const show = (p: string) => (p === root ? dir : join(dir, relative(root, p)));
  const files = { requests: [] as PoolFile[], chains: [] as PoolFile[], attachments: [] as PoolFile[] };
  const passed: PassedOver[] = [];
  const code = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  let rootReal: string;
  try {
    rootReal = realpathSync(root);
  } catch (err) {
    throw dirError(dir, err);
  }
  // an entry that cannot be read: passed over and said, or inside an export the pool refused
  const cannot = (path: string, kind: PassedKind, why: string, inside: string | null) => {
    if (inside !== null) {
      const what = {
        dangling: 'is a link that leads nowhere',
        loop: 'is a link loop',
        unreadable: `cannot be read (${why})`,
        'unreadable-link': `is a link that cannot be read (${why})`,
        'not-utf8': 'has a name that is not UTF-8, which DuckDB cannot open',
      }[kind];
      throw new UsageError(
        `--parquet ${dir}: ${show(path)} ${what}; it is part of the export ${show(inside)}, which cannot be read whole`,
        kind === 'not-utf8' ? 'rename it, or take that export out of the pool' : 'make it readable to this user, or take that export out of the pool',
      );
    }
    passed.push({ kind, path: show(path) });
  };
  const isUnder = (p: string, above: string) => p === above || above === sep || p.startsWith(`${above}${sep}`);
  const queue = new Heap<Pending>((a, b) => Buffer.compare(a.key, b.key));
  queue.push({ path: root, key: Buffer.from(root), depth: [], real: rootReal, inside: null });
  const seen = new Set<string>();
  for (let d = queue.pop(); d !== undefined; d = queue.pop()) {
    if (seen.has(d.real)) continue;
    seen.add(d.real);
    let entries: Dirent<Buffer>[];
    try {
      entries = readdirSync(d.path, { withFileTypes: true, encoding: 'buffer' });
    } catch (err) {
      if (d.path === root) throw dirError(dir, err);
      cannot(d.path, 'unreadable', code(err), d.inside);
      continue;
    }
    // a directory holding a table's directory is an export: its tables' directories, and what is below
    // them, hold its data (what is beside them, none)
    const isTable = (name: Buffer) => (PORTABLE_TABLES as readonly string[]).includes(name.toString('latin1'));
    const exportHere = d.inside === null && entries.some((e) => isTable(e.name)) ? d.path : null;
    for (const e of entries.sort((x, y) => Buffer.compare(x.name, y.name))) {
      // hidden: no export's, and neither read nor said, a directory as a file (a drive's `.Trashes` or
      // `.Spotlight-V100`, which this user may not read, was said to be passed over; a `.git` was read)
      if (e.name[0] === 0x2e) continue;
      const name = utf8(e.name);
      const inside = d.inside ?? (isTable(e.name) ? exportHere : null);
      if (name === null) {
        // the name as bytes (\xff): DuckDB takes a path as UTF-8 text, so no path names it
        cannot(join(d.path, shownBytes(e.name)), 'not-utf8', '', inside);
        continue;
      }
      const full = join(d.path, name);
      let st: Stats;
      let real: string | undefined;
      try {
        st = statSync(full);
        if (st.isDirectory()) real = realpathSync(full);
      } catch (err) {
        const c = code(err);
        if (c === 'ENOENT' && !e.isSymbolicLink()) continue; // gone since the directory was listed
        if (c === 'ELOOP') cannot(full, 'loop', c, inside);
        else if (c === 'ENOENT' || c === 'ENOTDIR') cannot(full, 'dangling', c, inside);
        else if (!e.isSymbolicLink() || !lstatOk(full)) {
          // the directory read can be listed but not searched (mode 744): none of its entries can be reached
          // (DIR itself so: refused as unreadable; it was said to hold no export, "passed over … DIR")
          if (d.path === root) throw dirError(dir, err);
          cannot(d.path, 'unreadable', c, d.inside ?? exportHere);
          break;
        } else cannot(full, 'unreadable-link', c, inside);
        continue;
      }
      if (real !== undefined) {
        // a link to the pool or above it, or to a directory holding the link, would read it again
        if (e.isSymbolicLink() && (isUnder(rootReal, real) || isUnder(d.real, real))) cannot(full, 'loop', '', null);
        else queue.push({ path: full, key: Buffer.from(full), depth: [...d.depth, name], real, inside });
      } else if (st.isFile() && d.depth.length >= 2 && name.endsWith('.parquet') && Object.hasOwn(files, d.depth.at(-2)!)) {
        try {
          closeSync(openSync(full, 'r'));
        } catch (err) {
          // a file this user may not read was called damaged or cut short
          throw new UsageError(`--parquet ${dir}: ${show(full)} cannot be read (${code(err)})`, 'make it readable to this user, or take that export out of the pool');
        }
        files[d.depth.at(-2) as keyof typeof files].push({ path: full, shown: show(full), pattern: globPattern(full, show) });
      }
    }
  }
  for (const t of PORTABLE_TABLES) files[t].sort((x, y) => codePointOrder(x.path, y.path));
  passed.sort((x, y) => codePointOrder(x.path, y.path));
  return { files, passed };
}

/**
 * The error for `--parquet DIR` (as given) that cannot be looked at or listed (`err`, from stat,
 * realpath or readdir): not there (ENOENT, or a file on its way: ENOTDIR), this user may not read
 * it, or may not search a directory above it (EACCES, EPERM: named, the first from the top, as the
 * user cannot tell which it is), or another error by its code.
 * Example: /a/b/pool with /a mode 000 → `--parquet /a/b/pool cannot be read (permission denied): /a cannot be searched`.
 */
function dirError(dir: string, err: unknown): UsageError {
  const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  if (code === 'ENOENT' || code === 'ENOTDIR') return new UsageError(`--parquet ${dir}: no such directory`);
  if (code !== 'EACCES' && code !== 'EPERM') return new UsageError(`--parquet ${dir} cannot be read (${code})`);
  const blocked = unsearchable(dir);
  return new UsageError(
    `--parquet ${dir} cannot be read (permission denied)${blocked !== null ? `: ${blocked} cannot be searched` : ''}`,
    'make it readable to this user, or name another directory',
  );
}

/** True when `path` itself (a link) can be looked at: its directory can be searched. */
function lstatOk(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The name as text, or null when it is not UTF-8. */
function utf8(name: Buffer): string | null {
  try {
    return UTF8.decode(name);
  } catch {
    return null;
  }
}

/** A name that is not UTF-8 as messages show it: its UTF-8 runs as text, each other byte as `\xff`. */
function shownBytes(name: Buffer): string {
  let out = '';
  for (let i = 0; i < name.length; ) {
    const n = [4, 3, 2, 1].find((k) => i + k <= name.length && utf8(name.subarray(i, i + k)) !== null);
    if (n === undefined) {
      out += `\\x${name[i]!.toString(16).padStart(2, '0')}`;
      i += 1;
    } else {
      out += name.subarray(i, i + n).toString();
      i += n;
    }
  }
  return out;
}

/** A binary heap, least (by `less`) first. */
class Heap<T> {
  private items: T[] = [];
  constructor(private readonly cmp: (a: T, b: T) => number) {}
  push(x: T): void {
    const a = this.items;
    a.push(x);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (this.cmp(a[i]!, a[p]!) >= 0) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): T | undefined {
    const a = this.items;
    if (a.length <= 1) return a.pop();
    const top = a[0];
    a[0] = a.pop()!;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.cmp(a[l]!, a[m]!) < 0) m = l;
      if (r < a.length && this.cmp(a[r]!, a[m]!) < 0) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
    return top;
  }
}

/** Compares two strings by code point (as DuckDB orders VARCHARs), not by UTF-16 unit as sort() does. */
function codePointOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * The pattern read_parquet reads exactly the file `path` by: it globs each path of a list, so its `*`,
 * `?` and `[` are matched as themselves in brackets (`[*]`, `[?]`, `[[]`; `exports [2]` read
 * `exports 2` beside it instead, and `team*` every directory whose name begins so). DuckDB's glob
 * takes a backslash for a path separator (`/tmp/a\b/pool` was read as `/tmp/a/b/pool`), and a path
 * without `*`, `?` or `[` is not globbed: a backslash is kept as it is in one; in a path that must be
 * globbed it is matched by `?` (one byte), and refused when that matches another name beside it too
 * (no pattern can then name that one file; names compared as bytes, as DuckDB does: `c\d [1]` beside
 * `céd [1]` is read, é being two bytes), or when the directory beside which it is matched cannot be
 * listed (DuckDB's glob lists it). `show` gives a path as messages show it.
 * Example: '/p [1]/x.parquet' → '/p [[]1]/x.parquet'; '/a\b/x.parquet' as it is.
 */
function globPattern(path: string, show: (p: string) => string = (p) => p): string {
  if (!/[*?[]/.test(path)) return path;
  const pattern = path.replace(/[*?[]/g, (c) => `[${c}]`);
  if (!path.includes('\\')) return pattern;
  const parts = path.split('/');
  parts.forEach((name, i) => {
    if (!name.includes('\\')) return;
    const bytes = Buffer.from(name).toString('latin1');
    const like = new RegExp(`^${bytes.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '\\' ? '.' : `\\${c}`))}$`, 's');
    const parent = parts.slice(0, i).join('/') || '/';
    const why = 'DuckDB reads a path holding *, ? or [ as a pattern, in which a backslash is matched only by ?';
    let names: Buffer[];
    try {
      names = readdirSync(parent, { encoding: 'buffer' });
    } catch (err) {
      throw new UsageError(
        `--parquet: ${show(path)} cannot be read alone: ${why}, and ${show(parent)}, where it is matched, cannot be listed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        'make that directory readable, or rename the directory with the backslash',
      );
    }
    const other = names.find((n) => n.toString('latin1') !== bytes && like.test(n.toString('latin1')));
    if (other !== undefined) {
      throw new UsageError(
        `--parquet: ${show(path)} cannot be read alone: ${why}, which matches ${show(join(parent, utf8(other) ?? shownBytes(other)))} too`,
        'rename the directory with the backslash, or the one beside it',
      );
    }
  });
  return pattern.replace(/\\/g, '?');
}

/** Sets `<table>_files` (poolViews' `listed`) to the read_parquet patterns of the table's files (poolFiles). */
const POOL_FILES = (table: string, files: PoolFile[]) => `SET VARIABLE ${table}_files = [${files.map((f) => `'${f.pattern.replace(/'/g, "''")}'`).join(', ')}]::VARCHAR[]`;

/**
 * The rows each view of poolViews leaves out: of requests and chains the copies of one key, counted in
 * one read of each table's files; of attachments every row the view does not keep (a stale copy under
 * a resumed session's old chain has no copy of its key).
 */
const DUPLICATES = `SELECT
  (SELECT count(key) - count(DISTINCT key) FROM read_parquet(getvariable('requests_files'), hive_partitioning = false, union_by_name = true)) AS requests,
  (SELECT count(chain_id) - count(DISTINCT chain_id) FROM read_parquet(getvariable('chains_files'), hive_partitioning = false, union_by_name = true)) AS chains,
  (SELECT count(*) FROM read_parquet(getvariable('attachments_files'), hive_partitioning = false, union_by_name = true)) - (SELECT count(*) FROM attachments) AS attachments`;

/**
 * The first file of the pool (POOL_FILES' lists) that cannot be read whole, with DuckDB's word,
 * or null when each can: a pool failed on one damaged file (a copy cut short) with "holds no
 * cachelens Parquet export: Invalid Error: don't know what type: ?", which named no file.
 * Only run once opening the pool failed.
 */
async function unreadableFile(db: DuckDBConnection, pool: ReturnType<typeof poolFiles>['files']): Promise<{ file: string; error: string } | null> {
  for (const t of PORTABLE_TABLES) {
    for (const file of pool[t]) {
      try {
        // every value of every row: a damaged page is found only when it is read
        await db.runAndReadAll(`SELECT count(hash(f)) FROM read_parquet('${file.pattern.replace(/'/g, "''")}', hive_partitioning = false) f`);
      } catch (err) {
        return { file: file.shown, error: (err as Error).message.split('\n')[0]! };
      }
    }
  }
  return null;
}

function damagedFile(dir: string, d: { file: string; error: string }): UsageError {
  return new UsageError(`--parquet ${dir}: ${d.file} cannot be read, a damaged or cut-short Parquet file: ${d.error}`, 'export it again, or take it out of the pool');
}

/** A Parquet export (or a pool of them) opened as a SqlSource. */
export interface ParquetSource extends SqlSource {
  /** the rows of each table that another copy in the pool stood for (poolViews), not read */
  duplicates: Record<(typeof PORTABLE_TABLES)[number], number>;
  /**
   * After a query failed: the UsageError naming the pool's first file that cannot be read whole
   * (a page damaged in a column the opening did not read), or null when each can be read.
   */
  damaged(): Promise<UsageError | null>;
  /** what the walk of the pool passed over (poolFiles: a link that leads nowhere, a directory that cannot be read…), to be said */
  passed: PassedOver[];
}

/**
 * Opens a Parquet export (or a directory holding several, e.g. one per person) as an in-memory
 * database with the three portable tables as views (poolViews: each row once however many exports
 * below `dir` hold it). Every `requests/day=…/*.parquet` below `dir` is read (`**` also matches no
 * directory at all), without hive partitioning: the `day` partition is not read (queries compute days
 * in their own time zone), nor is any other `NAME=VALUE` directory on the way a column (a pool kept
 * under `project=team/` read every request's project as `team`, one under `x=1/` had a column `x`).
 */
export async function openParquet(dir: string): Promise<ParquetSource> {
  const root = resolve(dir);
  let st: Stats;
  try {
    st = statSync(root);
  } catch (err) {
    // a directory above DIR that this user may not search was read as DIR not being there ("no such directory")
    throw dirError(dir, err);
  }
  // a file (one export's data_0.parquet, a .duckdb store) was said not to exist
  if (!st.isDirectory()) throw new UsageError(`--parquet ${dir} is not a directory`, 'name the directory an export was written to (cachelens export --parquet DIR), or one holding several');
  const pool = poolFiles(dir);
  const instance = await (await loadDuckdb()).DuckDBInstance.create(':memory:', openingOptions());
  const db = await instance.connect();
  const close = () => {
    db.closeSync();
    instance.closeSync();
  };
  const duplicates = { requests: 0, chains: 0, attachments: 0 };
  try {
    await db.run(MACROS);
    for (const t of PORTABLE_TABLES) {
      if (pool.files[t].length === 0) throw new Error(`no ${t}/day=…/*.parquet below it`);
      await db.run(POOL_FILES(t, pool.files[t]));
    }
    for (const view of poolViews(root, { listed: true })) await db.run(view);
    const [counts] = (await db.runAndReadAll(DUPLICATES)).getRowObjectsJS();
    for (const t of PORTABLE_TABLES) duplicates[t] = Number(counts![t]);
  } catch (err) {
    const damaged = await unreadableFile(db, pool.files).catch(() => null);
    close();
    if (damaged) throw damagedFile(dir, damaged);
    // what was passed over may have held the export: said beside the reason
    const first = pool.passed[0];
    const passed = first ? `; passed over ${PASSED_WORDS[first.kind].one}: ${first.path}${pool.passed.length > 1 ? ` and ${pool.passed.length - 1} more` : ''}` : '';
    throw new UsageError(`${dir} holds no cachelens Parquet export: ${(err as Error).message.split('\n')[0]}${passed}`, 'make one with cachelens export --parquet DIR');
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
    duplicates,
    passed: pool.passed,
    async damaged() {
      const found = await unreadableFile(db, pool.files).catch(() => null);
      return found && damagedFile(dir, found);
    },
  };
}
