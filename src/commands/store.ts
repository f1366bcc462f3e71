/**
 * The store as a product: `query` runs bundled or own SQL against the store (or a Parquet export),
 * `crosstab` puts any two dimensions against each other (SPEC §4), `export` writes the portable
 * tables as Parquet partitioned by day.
 */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve, sep } from 'node:path';
import type { Argv } from 'yargs';
import { parseDay, parseDays, parseTimezone, refuseEmptyFilters } from '../analyses/filters.js';
import { openContext } from '../context.js';
import { UsageError } from '../errors.js';
import { expandHome } from '../ingest/discover.js';
import { crosstab, parseDimension, parseMeasure, requestDays } from '../analyses/crosstab.js';
import { clean, int } from '../format/table.js';
import { formatCrosstab } from '../reporters/crosstab.js';
import { formatRows, toCsv } from '../reporters/rows.js';
import { filtersLine } from '../reporters/units.js';
import { checkExportDir, exportParquet } from '../store/export.js';
import { defaultDbPath } from '../store/location.js';
import { realPlace, refuseInLogs, rootsRead } from '../store/log-dirs.js';
import { PASSED_WORDS, PORTABLE_TABLES, type ParquetSource, type PassedKind, type SqlSource, openParquet, usePortableViews } from '../store/portable.js';
import { isBundledName, listQueries, networkSettings, queryParams, querySql, runQueryTable, writeTargets } from '../store/queries.js';
import { Store } from '../store/store.js';
import { wrap } from '../format/wrap.js';
import { type Command, filtersLineOf, type Io, commonOptions, withContext, withLogOptions } from './command.js';

/**
 * `--param k=v` (repeatable) → {k: 'v'}, names as typed; values stay text (cast in SQL: `$n::INTEGER`).
 * A name is taken in any case, as DuckDB takes `$NAME`: `Project=a` and `project=b` name one parameter.
 */
export function parseParams(raw: unknown): Record<string, string> {
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)];
  // no prototype: `constructor`, `toString` (and `__proto__`) are names as any other, not found on Object.prototype
  const out: Record<string, string> = Object.create(null);
  const typed = new Map<string, string>();
  for (const p of list) {
    const m = /^([a-z_][a-z0-9_]*)=(.*)$/is.exec(p);
    if (!m) throw new UsageError(`--param ${p}: expected NAME=VALUE`);
    // as an option given twice: the first value was dropped without a word
    const first = typed.get(m[1]!.toLowerCase());
    if (first === m[1]) throw new UsageError(`--param ${m[1]} was given more than once (give it once)`);
    if (first !== undefined) throw new UsageError(`--param ${m[1]} was given more than once, as ${first} too (a name in any case is one parameter, as DuckDB takes $${m[1]}: give it once)`);
    typed.set(m[1]!.toLowerCase(), m[1]!);
    out[m[1]!] = m[2]!;
  }
  return out;
}

/**
 * `--param` names (as parseParams returns them) written as the query writes its parameters (`used`,
 * queryParams): `--param Project=x` sets `$project`, as DuckDB binds a name in any case. Names the
 * query does not use are kept as typed.
 * Example: ({ Project: 'x' }, ['project', 'tz']) → { project: 'x' }.
 */
export function paramsAsUsed(given: Record<string, string>, used: string[]): Record<string, string> {
  const spelled = new Map(used.map((u) => [u.toLowerCase(), u]));
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(given)) out[spelled.get(k.toLowerCase()) ?? k] = v;
  return out;
}

/**
 * How the user spelled each `--param` name the query uses (`given` as parseParams returns it), by the
 * query's spelling: the errors about a value name the parameter as it was typed (`--param BY=x` was
 * said as `by=x`, a spelling the user never wrote).
 * Example: ({ BY: 'x', tz: 'UTC' }, ['tz', 'by']) → { by: 'BY', tz: 'tz' }.
 */
export function paramsTyped(given: Record<string, string>, used: string[]): Record<string, string> {
  const spelled = new Map(used.map((u) => [u.toLowerCase(), u]));
  const out: Record<string, string> = Object.create(null);
  for (const k of Object.keys(given)) out[spelled.get(k.toLowerCase()) ?? k] = k;
  return out;
}

/**
 * The bundled queries take $since/$until as 'YYYY-MM-DD' text compared with days, and $tz as an IANA
 * zone: `--param since=20260211` (the form --since takes) or `since=2026-2-11` compared as text
 * chose no day at all and printed no rows. They are checked and written as --since/--until/--timezone
 * are; an empty value leaves the parameter to its default. So does `project=`, trimmed as --project
 * is: an empty one matched every project, over a --project given beside it too, and a blank one none.
 * `typed`: each name as the user spelled it (paramsTyped), for the errors.
 */
export function checkFilterParams(given: Record<string, string>, typed: Record<string, string> = {}): void {
  for (const k of ['since', 'until', 'tz', 'project'] as const) {
    if (!(k in given)) continue;
    const v = given[k]!.trim();
    if (v === '') delete given[k];
    else if (k === 'project') given[k] = v;
    else if (k === 'tz') given[k] = parseTimezone(v, `--param ${typed[k] ?? k}=`);
    else given[k] = parseDay(v, `--param ${typed[k] ?? k}=`)!;
  }
}

/**
 * The values a bundled query's other parameters may take: a value outside them failed in DuckDB,
 * `query cost_by failed: Invalid Input Error: $by must be …` (a user's mistake worded as the tool's
 * failure), or chose no rows (`summary --param group=models` printed nothing). Each value is checked
 * before the store is read, trimmed and, for the names, case-folded as crosstab's dimensions are;
 * an empty value is an error too (there is no empty grouping: leave the parameter out for its default).
 * Example: cost_by `by=Project` → 'project'; `by=` → `--param by=: cost_by takes day, project, model or agent_type`.
 */
export const BUNDLED_CHOICES: Record<string, Record<string, readonly string[]>> = {
  cost_by: { by: ['day', 'project', 'model', 'agent_type'] },
  summary: { group: ['total', 'model', 'project', 'day'] },
  report_components: { group: ['day', 'project', 'model', 'agent_type'] },
  repurchase: { all: ['true', 'false'] },
};
/**
 * Whole-number parameters and their least value: $top keeps that many groups, $jitter is a token count.
 * Each is at most COUNT_MOST (as `anatomy --jitter`): a larger one was refused as if it were no whole
 * number at all, `jitter=10000000000: … takes jitter= a whole number of 0 or more`.
 */
const BUNDLED_COUNTS: Record<string, Record<string, number>> = {
  report_components: { top: 1 },
  repurchase: { jitter: 0 },
};
const COUNT_MOST = 1_000_000_000;
/** What each of those parameters is when left out, as its query's comment says. */
const BUNDLED_DEFAULTS: Record<string, string> = { by: 'day', group: 'every grouping', all: 'false', top: 'every group', jitter: '1024' };

/** `typed`: each name as the user spelled it (paramsTyped): the error names `--param BY=x` as typed. */
export function checkChoiceParams(query: string, given: Record<string, string>, typed: Record<string, string> = {}): void {
  const or = (xs: readonly string[]) => (xs.length > 1 ? `${xs.slice(0, -1).join(', ')} or ${xs.at(-1)}` : xs.join(''));
  for (const [k, allowed] of Object.entries(BUNDLED_CHOICES[query] ?? {})) {
    if (!Object.hasOwn(given, k)) continue;
    const v = given[k]!.trim().toLowerCase();
    if (!allowed.includes(v)) throw new UsageError(`--param ${typed[k] ?? k}=${given[k]}: ${query} takes ${k}= ${or(allowed)}`, `without --param ${typed[k] ?? k}: ${BUNDLED_DEFAULTS[k]}`);
    given[k] = v;
  }
  for (const [k, least] of Object.entries(BUNDLED_COUNTS[query] ?? {})) {
    if (!Object.hasOwn(given, k)) continue;
    const v = given[k]!.trim();
    if (!/^\d+$/.test(v) || Number(v) < least || Number(v) > COUNT_MOST) {
      throw new UsageError(`--param ${typed[k] ?? k}=${given[k]}: ${query} takes ${k}= a whole number from ${least} to ${int(COUNT_MOST)}`, `without --param ${typed[k] ?? k}: ${BUNDLED_DEFAULTS[k]}`);
    }
    given[k] = String(Number(v));
  }
}

/**
 * The days a bundled query runs with, `--param since=`/`until=` over `--since`/`--until`: a range
 * that ends before it starts is a mistake, as parseDays says of --since/--until (it printed empty
 * tables and exit 0). `given` as checkFilterParams left it; `typed`: each name as the user spelled it (paramsTyped).
 * Example: --param since=2026-03-01 --until 2026-02-01 → `--param since=2026-03-01 is after --until 2026-02-01: …`.
 */
export function checkFilterRange(given: Record<string, string>, since: string | undefined, until: string | undefined, typed: Record<string, string> = {}): void {
  if (!('since' in given) && !('until' in given)) return;
  const end = (k: 'since' | 'until', opt: string | undefined) =>
    k in given ? { day: given[k]!, text: `--param ${typed[k] ?? k}=${given[k]}` } : { day: parseDay(opt, `--${k}`), text: `--${k} ${opt}` };
  const s = end('since', since);
  const u = end('until', until);
  if (s.day !== null && u.day !== null && s.day > u.day) throw new UsageError(`${s.text} is after ${u.text}: no day is in that range`);
}

/**
 * A query over a pool that failed on a damaged Parquet file (a page in a column the opening did not
 * read): the error naming that file, or null. It failed as `query cost_by failed: Invalid Error: don't
 * know what type: ?`, naming no file of the pool's.
 */
async function damagedPool(source: SqlSource, err: unknown): Promise<UsageError | null> {
  // a mistake in the SQL (Parser, Binder, Catalog, Conversion) is said as it is, every file not read first
  // (runQueryTable words DuckDB's error `query NAME failed: …`)
  const said = ((err as Error).message ?? '').replace(/^query .*? failed: /, '');
  if (!('damaged' in source) || !/^(Invalid|Invalid Input|IO|Internal) Error/.test(said)) return null;
  return (source as ParquetSource).damaged();
}

/**
 * `--param since=`/`until=`/`project=`/`tz=` beside the option that sets the same parameter
 * (`--since`, `--until`, `--project`, `--timezone`): the option was passed over without a word, the
 * query run with the `--param`'s value (`--since 2026-02-12 --param since=2026-02-11` counted from
 * the 11th), as one name given twice in `--param` is refused. An empty `--param` leaves the option's.
 * `typed`: each name as the user spelled it (paramsTyped): `--param SINCE=x` is named as typed. An
 * option's empty or blank value is shown quoted (`--since ''`), not as nothing.
 * Example: --timezone Asia/Tokyo --param tz=UTC → `--param tz=UTC and --timezone Asia/Tokyo both set $tz`.
 */
function refuseTwoValues(given: Record<string, string>, argv: Record<string, unknown>, typed: Record<string, string> = {}): void {
  const flags = { since: 'since', until: 'until', project: 'project', tz: 'timezone' } as const;
  for (const [k, v] of Object.entries(given)) {
    const flag = flags[k.toLowerCase() as keyof typeof flags];
    if (flag === undefined || v.trim() === '' || argv[flag] === undefined) continue;
    const opt = String(argv[flag]);
    const shown = /^\S+$/.test(opt) ? opt : `'${opt}'`;
    throw new UsageError(`--param ${typed[k] ?? k}=${v} and --${flag} ${shown} both set $${k}`, `give one of them`);
  }
}

/**
 * Where SQL runs: a Parquet export when `--parquet DIR` is given, else the store after an
 * (incremental) ingest of this invocation's logs, with the portable `attachments` view in place.
 * The filters' time zone, days and project are returned as default parameters.
 */
export async function openSource(argv: Record<string, unknown>, io: Io): Promise<{ source: SqlSource; defaults: Record<string, unknown> }> {
  if (argv.parquet !== undefined) {
    const dir = parquetDir(argv);
    // an export is read instead of the logs and the store: logs named beside it were not read, nor
    // --db, --pricing, --rebuild used, without a word (the answer was the export's)
    const paths = (argv.paths as string[] | undefined) ?? [];
    if (paths.length > 0) throw new UsageError(`--parquet ${dir} reads an export, not logs: ${paths[0]} is not read`, 'give the logs or --parquet DIR, not both');
    for (const o of ['db', 'pricing', 'rebuild'] as const) {
      if (argv[o] !== undefined) throw new UsageError(`--${o} has no use with --parquet (an export is read, not the logs or a store)`);
    }
    refuseEmptyFilters(argv);
    const defaults = {
      tz: parseTimezone(argv.timezone as string | undefined, '--timezone', io.stderr),
      ...parseDays(argv.since as string | undefined, argv.until as string | undefined),
      project: (argv.project as string | undefined)?.trim() || null,
    };
    const source = await openParquet(dir);
    // the same rows in several exports below DIR (one copied twice, overlapping --since ranges, a
    // later export beside an earlier one) are read once: said, so that a pool's totals are not a surprise
    const dropped = PORTABLE_TABLES.filter((t) => source.duplicates[t] > 0);
    if (dropped.length > 0) {
      const noun = (t: (typeof PORTABLE_TABLES)[number]) => `${int(source.duplicates[t])} duplicate ${source.duplicates[t] === 1 ? t.slice(0, -1) : t}`;
      const list = dropped.map(noun);
      const listed = list.length > 1 ? `${list.slice(0, -1).join(', ')} and ${list.at(-1)}` : list[0];
      io.stderr(`cachelens: --parquet ${dir}: left out ${listed} (rows another export below it holds too: the same export twice, or overlapping ones); each is counted once`);
    }
    // a link below DIR that leads nowhere, a directory that cannot be read…, may hold an export that
    // is not read: said, not passed over silently, one line for each kind
    for (const kind of Object.keys(PASSED_WORDS) as PassedKind[]) {
      const what = source.passed.filter((p) => p.kind === kind).map((p) => p.path);
      const words = PASSED_WORDS[kind];
      if (what.length > 0) io.stderr(`cachelens: --parquet ${dir}: passed over ${what.length === 1 ? words.one : words.many(int(what.length))}: ${what[0]}${what.length > 1 ? ` and ${int(what.length - 1)} more` : ''}`);
    }
    return { source, defaults };
  }
  const ctx = await openContext(commonOptions(argv, io));
  try {
    await usePortableViews(ctx.store);
  } catch (err) {
    ctx.store.close();
    throw err;
  }
  const f = ctx.filters;
  return { source: ctx.store, defaults: { tz: f.timezone, since: f.since, until: f.until, project: f.project } };
}

/**
 * Refuses a query whose statements name a file or directory to write (writeTargets) inside the logs
 * this run reads (the paths given, else the default roots, as export checks its DIR) or inside any
 * Claude Code `projects/` directory, before anything runs: cachelens never writes into log
 * directories. A path is where DuckDB puts it: `~` is the home directory, a relative one is in the
 * working directory. A path computed in SQL is not seen; DuckDB takes only a literal after `TO`.
 * Example: `COPY t TO '~/.claude/projects/x.csv'` → "query q.sql: write target ~/.claude/projects/x.csv is inside …".
 */
function refuseWritesInLogs(target: string, paths: readonly string[], argv: Record<string, unknown>, io: Io): void {
  if (paths.length === 0) return;
  const logRoots = rootsRead(argv.paths as string[] | undefined, io.env);
  const home = io.env.HOME || homedir();
  for (const p of paths) {
    // ATTACH 'duckdb:x.duckdb' (or sqlite:) opens the file after the prefix
    const local = p.replace(/^file:\/\//, '').replace(/^(duckdb|sqlite3?):(?!\/\/)/i, '');
    // a URL is no local path (and DuckDB reads none: no httpfs); `:memory:` is a database in memory
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(local) || /^:memory:/.test(local) || local === '') continue;
    refuseInLogs(expandHome(local, home), { flag: `query ${target}: write target`, given: p, choose: 'path', logRoots });
  }
}

/**
 * `--parquet DIR` as given: an empty value (`--parquet=`, `--parquet ""`) is no directory, as `--db=`
 * is no file (it resolved to the working directory: read as an export, or written into).
 */
export function parquetDir(argv: Record<string, unknown>): string {
  const dir = String(argv.parquet);
  if (dir.trim() === '') throw new UsageError('--parquet: expected a directory name');
  return dir;
}

function withParquet(y: Argv): Argv {
  return y.option('parquet', { type: 'string', requiresArg: true, describe: 'read a Parquet export (cachelens export --parquet DIR; several pooled below one DIR) instead of the logs' });
}

export interface QueryResult {
  query: string;
  params: Record<string, unknown>;
  columns: string[];
  rows: Record<string, unknown>[];
}

/** Whether `path` is logs (a directory, or a .jsonl transcript) rather than a query. */
function isLogs(path: string): boolean {
  try {
    const st = statSync(path);
    return st.isDirectory() || (st.isFile() && path.endsWith('.jsonl'));
  } catch {
    return false;
  }
}

export const queryCommand: Command = {
  command: 'query [target] [paths..]',
  describe: 'run a SQL file, or a bundled query by NAME (queries/NAME.sql), against the store',
  options: (y) =>
    // target first, as the usage line orders them (--help listed paths above it)
    withParquet(withLogOptions(y.positional('target', { type: 'string', describe: 'FILE.sql, or the NAME of a bundled query' })))
      .option('param', { type: 'string', array: true, nargs: 1, describe: 'NAME=VALUE for $NAME in the SQL (repeatable; text: cast in SQL)' })
      .option('list', { type: 'boolean', describe: 'list the bundled queries with their purpose' })
      .option('csv', { type: 'boolean', describe: 'print CSV instead of a table' })
      .conflicts('csv', 'json'),
  async run(argv, io) {
    if (argv.list) {
      // `query --list summary` listed them all, the name passed over without a word
      if (argv.target !== undefined) {
        const target = String(argv.target);
        // logs given (`query --list ~/logs`: the first word is taken for the query) are said as logs, not
        // with a `cachelens query ~/logs runs it` that then found no such query
        if (isLogs(expandHome(target))) throw new UsageError(`--list lists the bundled queries and reads no logs: ${target} is not read`);
        throw new UsageError(`--list lists every query: ${target} is not read`, `cachelens query ${target} runs it`);
      }
      // so were the logs, --parquet, --param and the filters: nothing is read or run (`query --list --parquet POOL`
      // listed the bundled queries as if they had been looked for in the pool)
      const paths = (argv.paths as string[] | undefined) ?? [];
      if (paths.length > 0) throw new UsageError(`--list lists the bundled queries and reads no logs: ${paths[0]} is not read`);
      const unused = ['parquet', 'param', 'db', 'pricing', 'rebuild', 'since', 'until', 'project', 'timezone'].find((o) => argv[o] !== undefined);
      if (unused !== undefined) throw new UsageError(`--${unused} has no use with --list (it lists the bundled queries, and runs none)`);
      const list = listQueries() as unknown as Record<string, unknown>[];
      // --csv was passed over without a word: the table came instead
      return { json: list, text: argv.csv ? toCsv(list, Boolean(io.tty), ['name', 'purpose']) : formatRows(list, io.color, undefined, ['purpose']), exactNumbers: true };
    }
    const target = argv.target as string | undefined;
    if (!target) throw new UsageError('name a query: a FILE.sql or a bundled NAME', 'cachelens query --list shows the bundled ones');
    const used = queryParams(querySql(target));
    const raw = parseParams(argv.param);
    const given = paramsAsUsed(raw, used);
    // the errors about a value name the parameter as it was typed (`--param BY=x`), not as the query spells it
    const typed = paramsTyped(raw, used);
    const unknown = Object.keys(given).filter((k) => !used.includes(k));
    const takes = used.length ? `it takes ${used.map((u) => '$' + u).join(', ')}` : 'it takes no parameters';
    if (unknown.length > 0) throw new UsageError(`--param ${unknown[0]}: ${target} has no $${unknown[0]}`, takes);
    refuseTwoValues(given, argv, typed);
    // a filter the query has no parameter for was passed over without a word: `query quality --since D`
    // printed every day's counts, as if they were D's on
    const unfiltered = (['since', 'until', 'project'] as const).find((k) => argv[k] !== undefined && !used.some((u) => u.toLowerCase() === k));
    if (unfiltered !== undefined) throw new UsageError(`--${unfiltered}: ${target} has no $${unfiltered}, so it would not choose what is counted`, takes);
    // a FILE.sql's COPY … TO, EXPORT DATABASE or ATTACH wrote into the logs as readily as anywhere
    if (!isBundledName(target)) refuseWritesInLogs(target, writeTargets(querySql(target)), argv, io);
    // a SET that turns autoinstall back on had DuckDB download httpfs for a read_csv('https://…')
    const network = isBundledName(target) ? [] : networkSettings(querySql(target));
    if (network.length > 0) throw new UsageError(`query ${target}: setting ${network[0]} is refused: cachelens never touches the network and loads no extension`, 'parquet, json and icu are built in; run DuckDB itself to use another');
    if (isBundledName(target)) {
      checkChoiceParams(target, given, typed);
      checkFilterParams(given, typed);
      checkFilterRange(given, argv.since as string | undefined, argv.until as string | undefined, typed);
    }
    const { source, defaults } = await openSource(argv, io);
    try {
      const params: Record<string, unknown> = Object.create(null);
      // own entries only: `$constructor` without --param was bound to Object (`Cannot create values of type ANY`)
      // `$Since` in a FILE.sql is `$since` (DuckDB's names are in any case): it takes --since as well
      for (const p of used) params[p] = Object.hasOwn(given, p) ? given[p] : Object.hasOwn(defaults, p.toLowerCase()) ? (defaults[p.toLowerCase()] ?? null) : null;
      // A query of the user's own may change tables (even one that then fails): remembered results
      // (and the answers kept beside the store) no longer hold, and the next ingest compares the
      // walk with the stored files themselves, not with the listing the last one kept (an unchanged
      // store is then only planned again, not derived).
      // A read-only store is left as it is (its answers too): a query that writes fails on it, in one line.
      if (!isBundledName(target) && source instanceof Store && source.readOnly === null) {
        await source.forget();
        await source.setMeta('listing_key', '');
      }
      const { columns, rows } = await runQueryTable(source, target, params).catch(async (err: unknown) => {
        // a store's own table (files, skipped, scope…) over an export, which holds the three portable ones
        const missing = /Catalog Error: Table with name (\S+) does not exist/.exec((err as Error).message ?? '');
        if (!(source instanceof Store) && missing && !(PORTABLE_TABLES as readonly string[]).includes(missing[1]!)) {
          throw new UsageError((err as Error).message, `a Parquet export holds only ${PORTABLE_TABLES.join(', ')}; run ${target} over a store, without --parquet`);
        }
        throw (await damagedPool(source, err)) ?? err;
      });
      const result: QueryResult = { query: target, params, columns, rows };
      return { json: result, text: argv.csv ? toCsv(rows, Boolean(io.tty), columns) : formatRows(rows, io.color, columns), exactNumbers: true };
    } finally {
      source.close();
    }
  },
};

export const crosstabCommand: Command = {
  command: 'crosstab [paths..]',
  describe: 'any two chain dimensions against each other, any measure, with totals (SPEC §4)',
  options: (y) =>
    withParquet(withLogOptions(y))
      .option('rows', { type: 'string', requiresArg: true, defaultDescription: 'definition', describe: 'dimension of the rows (agent_type, namespaced, model, project, session, day, ttl, has_skill_listing, skill_listing, rounds_bucket, definition, rounds, kind)' })
      .option('cols', { type: 'string', requiresArg: true, defaultDescription: 'has_skill_listing', describe: 'dimension of the columns (definition when --rows is has_skill_listing)' })
      .option('measure', { type: 'string', requiresArg: true, default: 'chains', defaultDescription: 'chains', describe: 'chains, requests, weight, usd, write_read_ratio, hit_ratio, reattachments' })
      .option('kind', { requiresArg: true, choices: ['all', 'main', 'subagent', 'subagents'], default: 'all', defaultDescription: 'all', describe: 'which chains: all, main threads, or subagents (v1.x sidechains included; subagent and subagents are one)' }),
  async run(argv, io) {
    // a misspelt dimension or measure is said before the logs are read (it was said after a whole ingest)
    // one dimension given: the other is the SPEC §4 table's other one (--rows has_skill_listing alone
    // is that table transposed; it was an error, the default --cols being has_skill_listing too)
    const given = (v: unknown, flag: string) => (v === undefined ? null : parseDimension(String(v), flag));
    const rowsGiven = given(argv.rows, '--rows');
    const colsGiven = given(argv.cols, '--cols');
    const rows = rowsGiven ?? (colsGiven === 'definition' ? 'has_skill_listing' : 'definition');
    const cols = colsGiven ?? (rows === 'has_skill_listing' ? 'definition' : 'has_skill_listing');
    if (rows === cols) throw new UsageError(`--rows and --cols are both ${rows}`, 'a cross-tab needs two different dimensions');
    parseMeasure(String(argv.measure));
    const { source, defaults } = await openSource(argv, io);
    try {
      const result = await crosstab(source, {
        rows,
        cols,
        measure: String(argv.measure),
        timezone: defaults.tz as string,
        since: defaults.since as string | null,
        until: defaults.until as string | null,
        project: defaults.project as string | null,
        // the what-ifs' --scope spells it subagents: both are taken
        kind: argv.kind === 'subagents' ? 'subagent' : (argv.kind as 'all' | 'main' | 'subagent'),
      });
      // the filters in force head the table and are echoed, as summary's are (crosstab said neither);
      // with no row (a lone total of 0), whether --project matches is asked of the same source
      // (a store or an export) without the days or --kind
      const filters = { since: defaults.since as string | null, until: defaults.until as string | null, project: defaults.project as string | null, timezone: defaults.tz as string };
      const matches =
        result.rows.length > 0 ||
        filters.project === null ||
        (await crosstab(source, { rows: 'kind', cols: 'model', timezone: filters.timezone, project: filters.project })).rows.length > 0;
      // days that chose no chain are said, with the days there are, as summary's filters line says them
      // (not when --kind alone chose none: the days hold chains of another kind)
      const dated = result.rows.length === 0 && matches && (filters.since !== null || filters.until !== null);
      const otherKinds = async () =>
        (await crosstab(source, { rows: 'kind', cols: 'model', timezone: filters.timezone, since: filters.since, until: filters.until, project: filters.project })).rows.length > 0;
      const days = dated && !(await otherKinds()) ? await requestDays(source, { timezone: filters.timezone, project: filters.project }) : undefined;
      return { json: { ...result, filters }, text: filtersLine(filters, matches, days) + formatCrosstab(result, io.color, filters.timezone, filters.since !== null || filters.until !== null) };
    } catch (err) {
      // Parquet files that are not a cachelens export's (other columns, other types) under DIR: the
      // cross-tab's SQL does not bind, which was an internal error and its stack
      const msg = (err as Error).message ?? '';
      const damaged = await damagedPool(source, err);
      if (damaged) throw damaged;
      if (argv.parquet !== undefined && !(err instanceof UsageError) && /^(Binder|Conversion|Invalid Input) Error/.test(msg)) {
        throw new UsageError(`${String(argv.parquet)} holds no cachelens Parquet export: ${msg.split('\n')[0]}`, 'make one with cachelens export --parquet DIR');
      }
      throw err;
    } finally {
      source.close();
    }
  },
};

export const exportCommand: Command = {
  command: 'export [paths..]',
  describe: 'write requests, chains and attachments as Parquet partitioned by day (to pool with others)',
  options: (y) =>
    withLogOptions(y).option('parquet', { type: 'string', requiresArg: true, demandOption: 'name the directory: --parquet DIR', describe: 'directory to write (empty, or a previous export)' }),
  async run(argv, io) {
    const dir = parquetDir(argv);
    // said before the store is opened: a store inside DIR (`--db DIR/s.duckdb`) was made there, its
    // side files with it, and then refused as files an export does not hold; so was a DIR that holds
    // other files, after a whole ingest
    const db = argv.db === undefined ? defaultDbPath(io.env) : String(argv.db);
    // by real paths, as checkExportDir compares them: DIR reached through a link holds the store all the same
    if (db !== ':memory:' && realPlace(resolve(db)).startsWith(realPlace(resolve(dir)) + sep)) {
      throw new UsageError(`--parquet ${dir} would hold the store ${db}`, 'an export directory holds the export alone; keep the store elsewhere (--db)');
    }
    checkExportDir(dir, rootsRead(argv.paths as string[] | undefined, io.env));
    return withContext(argv, io, async (ctx) => {
      await usePortableViews(ctx.store);
      const f = ctx.filters;
      // the roots as read, then as given (all of a directory given; the Claude Code directory of a default root)
      const logRoots = [...ctx.roots, ...rootsRead(argv.paths as string[] | undefined, io.env)];
      const result = await exportParquet(ctx.store, dir, { timezone: f.timezone, since: f.since, until: f.until, project: f.project, logRoots });
      // the filters in force head the text and are echoed, as summary's are (export said neither)
      const line = await filtersLineOf(ctx, result.tables.some((t) => t.rows > 0));
      // the first line wrapped to a terminal's width (format/wrap.ts), never inside the directory, not at
      // its own spaces either; the counts are a table of their own
      const text = line + [
        wrap(`exported to ${clean(result.dir)} (days in ${result.timezone}):`, undefined, [clean(result.dir)]),
        // counts as every table writes them (148,213, not 148213), and 1 day, 1 file (it said 1 days, 1 files)
        ...result.tables.map((t) => `  ${t.table.padEnd(12)} ${counted(t.rows, 'row', 11)}  ${counted(t.days, 'day', 5)}  ${counted(t.files, 'file', 5)}`.trimEnd()),
      ].join('\n');
      return { json: { ...result, filters: f }, text };
    });
  },
};

/** `n` with thousands separators right-aligned in `width`, then its noun, singular for 1 (padded to the plural's width). */
function counted(n: number, noun: string, width: number): string {
  return `${int(n).padStart(width)} ${n === 1 ? noun + ' ' : noun + 's'}`;
}
