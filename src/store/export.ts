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
 *
 * Each table is written as `DIR/<table>.<pid>.tmp` (a name the readers' glob, `<table>/day=…/*.parquet`
 * at any depth, does not match) and renamed into place once all three are written: a run killed
 * mid-COPY left a short table that read as complete, or a new `requests` beside the previous
 * `chains`. The swap moves each previous table to `<table>.<pid>.old` first (a directory cannot be
 * renamed over a full one); what a killed run left, the next export tidies (cleanLeftStaging).
 * Only a kill among the final renames (microseconds) can leave tables of both exports, each whole.
 * Two exports into DIR at once: one whose table's place the other took between its renames fails
 * in one line (UsageError), its staged tables removed.
 *
 * --since/--until/--project choose what is written: the requests of those days (in the time zone)
 * and projects; the chains of those projects whose first day is within, and every chain one of
 * those requests belongs to (so no exported request lacks its chain); the attachments of those
 * days of the exported chains. A table with no rows is written as one Parquet file of no rows
 * (`DIR/<table>/day=none/data_0.parquet`), so that the export can still be read (read_parquet finds
 * no columns without a file).
 */
import { type Dirent, accessSync, constants, existsSync, lstatSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { UsageError } from '../errors.js';
import { makeDirs, refuseMissingDir, unmakeDirs, unsearchable } from './dirs.js';
import { logDirOf, realPlace, refuseInLogs } from './log-dirs.js';
import { running } from './location.js';
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

/** A day (a DATE, NULL when the time is unknown) within $since..$until; with neither, every row. */
function inDays(d: string): string {
  return `(($since IS NULL AND $until IS NULL) OR (${d} IS NOT NULL AND ($since IS NULL OR ${d} >= CAST($since AS DATE)) AND ($until IS NULL OR ${d} <= CAST($until AS DATE))))`;
}

const IN_PROJECT = `($project IS NULL OR contains(fold_case(project), fold_case($project)))`;
const UNFILTERED = `($since IS NULL AND $until IS NULL AND $project IS NULL)`;

/** The SELECT each table is written from; `day` is the partition column. Parameters: $tz, $since, $until, $project. */
function selectFor(table: ExportedTable['table']): string {
  // the partition's text, as days are written everywhere (iso_year: `day=+010000-01-01`, `day=-000001-12-31`;
  // strftime's %Y made them `day=10000-01-01` and `day=-1-12-31`), and the day as a DATE for the filters
  // (as text, '10000-01-01' sorted before '2026-01-01')
  const day = (ts: string) => `iso_year(timezone($tz, ${ts})) || strftime(timezone($tz, ${ts}), '-%m-%d') AS d, CAST(timezone($tz, ${ts}) AS DATE) AS dd`;
  const requests = `SELECT * EXCLUDE (file_id, row_hash, d, dd), coalesce(d, 'unknown') AS day
    FROM (SELECT *, ${day('ts')} FROM requests) WHERE ${inDays('dd')} AND ${IN_PROJECT}`;
  const chains = `SELECT * EXCLUDE (file_id, d, dd), coalesce(d, 'unknown') AS day
    FROM (SELECT *, ${day('to_timestamp(first_t / 1000)')} FROM chains)
    WHERE ${UNFILTERED} OR (${inDays('dd')} AND ${IN_PROJECT}) OR chain_id IN (SELECT chain_id FROM (${requests}))`;
  switch (table) {
    case 'requests':
      return requests;
    case 'chains':
      return chains;
    case 'attachments':
      return `SELECT * EXCLUDE (d, dd), coalesce(d, 'unknown') AS day
        FROM (SELECT ${ATTACHMENT_COLUMNS}, ${day('to_timestamp(t / 1000)')} FROM attachments)
        WHERE ${UNFILTERED} OR (${inDays('dd')} AND chain_id IN (SELECT chain_id FROM (${chains})))`;
  }
}

/** Refuses a DIR inside the logs, or one that holds anything but a previous export. */
export function checkExportDir(dir: string, logRoots: readonly string[]): string {
  // inside the logs being read, or inside any Claude Code projects/ directory (log-dirs.ts)
  const { abs, real } = refuseInLogs(dir, { flag: '--parquet', given: dir, choose: 'DIR', logRoots });
  // DIR is made, not the directories above it: a typo (`--parquet ~/exprots/2026/pq`) made a tree wherever it pointed
  refuseMissingDir(abs, { flag: '--parquet', given: dir, choose: 'DIR', makes: 'DIR, not the directories above it' });
  for (const root of logRoots) {
    // logs in one of the directories an export replaces whole (`export L/requests --parquet L`
    // removed them, the export's tables in their place)
    const rr = realPlace(logDirOf(root));
    const given = realPlace(resolve(root));
    for (const t of PORTABLE_TABLES) {
      const replaced = join(real, t);
      if (given === replaced || given.startsWith(replaced + sep) || rr === replaced || rr.startsWith(replaced + sep)) {
        throw new UsageError(`--parquet ${dir} holds the logs being read in ${t}/ (${root}), which an export replaces`, 'cachelens never writes into log directories; choose another DIR');
      }
    }
  }
  // below a directory this user may not search: DIR may well be there (it was said `cannot create the directory: EACCES`)
  const blocked = unsearchable(abs);
  if (blocked !== null) {
    throw new UsageError(`--parquet ${dir} cannot be read (permission denied): ${blocked} cannot be searched`, 'make it searchable to this user, or choose another DIR');
  }
  if (existsSync(abs)) {
    if (!statSync(abs).isDirectory()) throw new UsageError(`--parquet ${dir} is not a directory`);
    const other = listed(abs, dir, dir).filter((e) => !(PORTABLE_TABLES as readonly string[]).includes(e) && !STAGED.test(e) && !finderFile(e));
    other.push(...PORTABLE_TABLES.flatMap((t) => notExported(abs, t, dir)));
    if (other.length > 0) throw new UsageError(`--parquet ${dir} holds other files (${other[0]})`, 'export into an empty directory or a previous export');
  }
  return abs;
}

/**
 * The entries of `at` (`shown` as messages show it), or a UsageError when it cannot be listed: what
 * DIR holds must be told before an export replaces it. A DIR (or a table of it) this user may not
 * read failed `internal error: EACCES: permission denied, scandir …` with a stack trace.
 */
function listed(at: string, shown: string, dir: string): string[];
function listed(at: string, shown: string, dir: string, types: true): Dirent[];
function listed(at: string, shown: string, dir: string, types?: true): string[] | Dirent[] {
  try {
    return types ? readdirSync(at, { withFileTypes: true }) : readdirSync(at);
  } catch (err) {
    return unreadable(err, shown, dir);
  }
}

/** The error for `shown` (DIR, or a table of it) that cannot be listed or looked into: `err` is the system's. */
function unreadable(err: unknown, shown: string, dir: string): never {
  const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code;
  throw new UsageError(
    `--parquet ${shown === dir ? dir : `${dir}: ${shown}`} cannot be read (${why}): an export must see what it holds first`,
    'make it readable to this user, or choose another DIR',
  );
}

/**
 * What `DIR/<table>` holds that no export wrote (an export replaces the table whole): the table
 * itself when it is no directory (a file, a link), else any entry other than `day=…/*.parquet`.
 * A user's file named `chains`, or a `requests/` of their own beside nothing else, was removed
 * without a word. Example: DIR/requests/notes.txt → ['requests/notes.txt'].
 */
function notExported(abs: string, table: string, dir: string): string[] {
  const at = join(abs, table);
  let st;
  try {
    st = lstatSync(at, { throwIfNoEntry: false });
  } catch (err) {
    // DIR listed but not searchable (mode 644): what its entries are cannot be told; it was an internal error with a stack
    return unreadable(err, dir, dir);
  }
  if (!st) return [];
  if (!st.isDirectory()) return [table];
  const out: string[] = [];
  for (const day of listed(at, join(dir, table), dir, true)) {
    if (finderFile(day.name)) continue;
    if (!day.isDirectory() || !day.name.startsWith('day=')) {
      out.push(`${table}/${day.name}`);
      continue;
    }
    for (const f of listed(join(at, day.name), join(dir, table, day.name), dir, true)) {
      if (!finderFile(f.name) && (!f.isFile() || !f.name.endsWith('.parquet'))) out.push(`${table}/${day.name}/${f.name}`);
    }
  }
  return out;
}

/**
 * What macOS writes into any directory it shows or copies (Finder's `.DS_Store`, AppleDouble `._name`
 * on a share or a FAT drive): a previous export looked at in Finder was refused as holding other
 * files (`.DS_Store`). Those beside the tables are left; those inside go with the table they describe.
 */
function finderFile(name: string): boolean {
  return name === '.DS_Store' || name.startsWith('._');
}

/** A table being written (`.tmp`) or a previous one being replaced (`.old`) by the process `<pid>`. */
const STAGED = /^(requests|chains|attachments)\.(\d+)\.(tmp|old)$/;

/**
 * Tidies what exports killed in DIR left (their process is gone; a running one's are its own), run
 * before this export stages anything: entries under this process's own pid are a killed run's too
 * (a pid reused, as a container's CLI gets the same one each run), and left in place they made the
 * swap's rename aside fail (ENOTEMPTY onto a full `.old`). A
 * table written but not renamed into place is removed; a previous table moved aside is put back
 * when nothing took its place (killed between the swap's two renames), else removed.
 * Example: requests.4701.tmp (pid 4701 gone) → removed; chains.4701.old and no chains → chains.
 */
function cleanLeftStaging(dir: string): void {
  for (const name of readdirSync(dir)) {
    const m = STAGED.exec(name);
    if (!m || (Number(m[2]) !== process.pid && running(Number(m[2])))) continue;
    const table = join(dir, m[1]);
    if (m[3] === 'old' && !lstatSync(table, { throwIfNoEntry: false })) renameSync(join(dir, name), table);
    else rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/** Writes the export; `store` must have the portable views in place (usePortableViews). */
export async function exportParquet(
  store: Store,
  dir: string,
  o: { timezone: string; logRoots: readonly string[]; since?: string | null; until?: string | null; project?: string | null },
): Promise<ExportResult> {
  const abs = checkExportDir(dir, o.logRoots);
  let made: string[];
  try {
    made = makeDirs(abs);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new UsageError(`--parquet ${dir}: cannot create the directory: ${e.code ?? e.message}`, 'choose another DIR');
  }
  try {
    return await exportInto(store, dir, abs, o);
  } catch (err) {
    // nothing exported (DIR not writable, a full disk): the directories made for it go too
    unmakeDirs(made);
    throw err;
  }
}

/** exportParquet's work once DIR (`abs`, as given `dir`) is there. */
async function exportInto(store: Store, dir: string, abs: string, o: Parameters<typeof exportParquet>[2]): Promise<ExportResult> {
  // a DIR this user may not write into: DuckDB's COPY failed there and the error said the store was
  // damaged ("delete it"); said of DIR instead, before anything is staged
  try {
    accessSync(abs, constants.W_OK | constants.X_OK);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new UsageError(`--parquet ${dir}: cannot write into the directory: ${e.code ?? e.message}`, 'choose another DIR');
  }
  cleanLeftStaging(abs);
  const params = { tz: o.timezone, since: o.since ?? null, until: o.until ?? null, project: o.project ?? null };
  const counts: { table: ExportedTable['table']; rows: number; days: number }[] = [];
  const staged = (table: string) => join(abs, `${table}.${process.pid}.tmp`);
  try {
    for (const table of PORTABLE_TABLES) {
      const sel = selectFor(table);
      const tableDir = staged(table);
      rmSync(tableDir, { recursive: true, force: true });
      const target = tableDir.replace(/'/g, "''");
      await store.all(`COPY (${sel}) TO '${target}' (FORMAT parquet, PARTITION_BY (day), OVERWRITE true)`, params);
      const [c] = await store.all(`SELECT count(*) AS rows, count(DISTINCT day) AS days FROM (${sel})`, params);
      if (c.rows === 0) {
        makeDirs(join(tableDir, 'day=none'));
        const file = join(tableDir, 'day=none', 'data_0.parquet').replace(/'/g, "''");
        await store.all(`COPY (SELECT * EXCLUDE (day) FROM (${sel}) LIMIT 0) TO '${file}' (FORMAT parquet)`, params);
      }
      counts.push({ table, rows: c.rows as number, days: c.days as number });
    }
  } catch (err) {
    for (const table of PORTABLE_TABLES) rmSync(staged(table), { recursive: true, force: true });
    // a write into DIR that failed part-way (disk full, a table's directory not writable) is DIR's
    // failure, not the store's: DuckDB's message names the staged path
    const msg = (err as Error).message ?? '';
    if (msg.includes(`${abs}${sep}`)) throw new UsageError(`--parquet ${dir}: cannot write the export: ${msg.replace(/^store .*? is damaged: /, '').split('\n')[0]}`, 'check the directory and the free space');
    throw err;
  }
  // the previous export's tables go whole, their days with them
  const aside = (table: string) => join(abs, `${table}.${process.pid}.old`);
  const at = (table: string) => lstatSync(join(abs, table), { throwIfNoEntry: false });
  try {
    for (const { table } of counts) {
      const tableDir = join(abs, table);
      if (at(table)) renameSync(tableDir, aside(table));
      renameSync(staged(table), tableDir);
      rmSync(aside(table), { recursive: true, force: true });
    }
  } catch (err) {
    // another export into DIR put its table in place between this one's two renames (a directory
    // cannot be renamed over a full one): this export's staged tables go, and a table moved aside
    // goes back where nothing took its place; one line, not a stack
    for (const table of PORTABLE_TABLES) {
      rmSync(staged(table), { recursive: true, force: true });
      if (lstatSync(aside(table), { throwIfNoEntry: false }) && !at(table)) renameSync(aside(table), join(abs, table));
      else rmSync(aside(table), { recursive: true, force: true });
    }
    const e = err as NodeJS.ErrnoException;
    const taken = e.code === 'ENOTEMPTY' || e.code === 'EEXIST';
    throw new UsageError(`--parquet ${dir}: cannot put the tables in place: ${e.code ?? e.message}`, taken ? 'another export into it ran at the same time; export again' : 'check the directory');
  }
  const tables = counts.map((c) => ({ ...c, files: countParquet(join(abs, c.table)) }));
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
