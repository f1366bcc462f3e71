/**
 * A CLI command: yargs options plus a `run` that returns a result and its text; the CLI layer
 * (cli-main.ts) prints `--json` or the text and sets the exit code. Commands never write to stdout.
 */
import { readFileSync } from 'node:fs';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { expandHome } from '../ingest/discover.js';
import { type AnswerContext, type CommonOptions, type Context, openAnswerContext, openContext } from '../context.js';
import type { Filters } from '../analyses/filters.js';
import type { RememberingStore } from '../store/queries.js';

export interface Io {
  /** colour allowed on stdout */
  color: boolean;
  /** stdout is a terminal (escape sequences in data would act on it) */
  tty?: boolean;
  /** the progress line on stderr (only when stderr is a terminal that can redraw a line) */
  progress?: CommonOptions['progress'];
  /** CommonOptions.whileStaging: Ctrl-C and a kill remove a large ingest's staged files first */
  whileStaging?: CommonOptions['whileStaging'];
  env: NodeJS.ProcessEnv;
  stderr: (line: string) => void;
}

export interface Output {
  json: unknown;
  text: string;
  /**
   * `--json` prints the numbers of `json` as they are: `query`'s, which are DuckDB's values exactly
   * (store/query-values.ts). Otherwise non-integers are rounded to JSON_DIGITS significant digits
   * (format/json-numbers.ts), which removes floating-point noise from weights, dollars and shares.
   */
  exactNumbers?: boolean;
  /**
   * What the command does once its answer is printed (`report --open` hands the page to a browser):
   * the answer is never held back by it, and a Ctrl-C while it runs leaves the answer on screen.
   */
  afterPrint?: () => Promise<void>;
}

export interface Command {
  command: string;
  describe: string;
  options?: (y: Argv) => Argv;
  /** nested commands (`whatif ttl`, `replay channel`) */
  subcommands?: Command[];
  run: (argv: Record<string, unknown>, io: Io) => Promise<Output>;
}

/**
 * The options that are flags (boolean) in every command that has one of them. A command's options
 * exist only once yargs has seen the command, so before it (`cachelens --json summry`, `whatif
 * --json tll`) a flag took the next word as its value and the command went unseen ("name a
 * command"); the CLI declares these above every command too (cli-main.ts).
 */
/**
 * cachelens's version, from package.json: this module sits two directories below the repository
 * compiled (dist/commands/), bundled (dist/bundle/) and as source, as report/build.ts does.
 */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export const FLAG_OPTIONS = ['json', 'rebuild', 'csv', 'list', 'open'] as const;

/** The flags every command takes, declared once above them all (cli-main.ts): `--wide` (tables keep every column). */
export const GLOBAL_FLAGS = ['wide'] as const;

/**
 * The options and positionals that name a file or directory, in every command that has one
 * (`target`: replay session's transcript path, query's FILE.sql; `file`: replay channel's log;
 * `session`: report's, which may be a transcript path as replay session's target may; a session id
 * is hex and `top` has no `~`, so expanding them changes nothing).
 */
export const PATH_OPTIONS = ['paths', 'db', 'pricing', 'out', 'channel', 'parquet', 'file', 'target', 'session'] as const;

/**
 * A leading `~` or `~/` in every path option (PATH_OPTIONS) as the home directory, in place. The
 * shell expands `--db ~/x` but not `--db=~/x` (nor a quoted '~/x'): read as it was given, DuckDB
 * expanded the store's `~` itself while the files kept beside it went to a directory named `~` in
 * the working directory, and `--pricing=~/p.json` was "no such file". `~user` is left as given.
 */
export function expandPathOptions(argv: Record<string, unknown>, home: string): void {
  const expand = (v: unknown) => (typeof v === 'string' ? expandHome(v, home) : v);
  for (const name of PATH_OPTIONS) {
    const v = argv[name];
    if (v !== undefined) argv[name] = Array.isArray(v) ? v.map(expand) : expand(v);
  }
}

/** The options common to every command that reads logs, as yargs parsed them. */
export function commonOptions(argv: Record<string, unknown>, io: Io): CommonOptions {
  return {
    paths: (argv.paths as string[] | undefined)?.map(String),
    db: argv.db as string | undefined,
    pricing: argv.pricing as string | undefined,
    since: argv.since as string | undefined,
    until: argv.until as string | undefined,
    project: argv.project as string | undefined,
    timezone: argv.timezone as string | undefined,
    rebuild: Boolean(argv.rebuild),
    env: io.env,
    progress: io.progress,
    whileStaging: io.whileStaging,
    notice: io.stderr,
  };
}

/** The default roots as --help says them (src/ingest/discover.ts, README): CLAUDE_CONFIG_DIR replaces the other two. */
export const DEFAULT_ROOTS_HELP = 'the roots in CLAUDE_CONFIG_DIR, comma-separated, else $XDG_CONFIG_HOME/claude (~/.config/claude) and ~/.claude';

export function withLogOptions(y: Argv): Argv {
  return y
    .positional('paths', { type: 'string', array: true, describe: `transcript files or directories (default: ${DEFAULT_ROOTS_HELP})` })
    .option('db', { type: 'string', requiresArg: true, describe: 'DuckDB store file (default ~/.cache/cachelens/store.duckdb; :memory: for none)' })
    .option('pricing', { type: 'string', requiresArg: true, describe: 'price table JSON (own format or LiteLLM) that replaces or extends the bundled one' })
    .option('since', { type: 'string', requiresArg: true, describe: 'first day (YYYY-MM-DD or YYYYMMDD, in --timezone)' })
    .option('until', { type: 'string', requiresArg: true, describe: 'last day (YYYY-MM-DD or YYYYMMDD, in --timezone)' })
    .option('project', { type: 'string', requiresArg: true, describe: 'only projects whose path contains this text' })
    .option('timezone', { type: 'string', requiresArg: true, describe: 'IANA time zone for days (default: this machine\'s)' })
    .option('rebuild', { type: 'boolean', describe: 'drop the store and read every log again' })
    .option('json', { type: 'boolean', describe: 'print JSON instead of tables' });
}

/**
 * Ingests the logs of this invocation, runs `f` on the store, and always closes the store.
 * `checkPrices`: checks of the price table in force before the logs are read (CommonOptions).
 */
export function withContext<T>(argv: Record<string, unknown>, io: Io, f: (ctx: Context) => Promise<T> | T, checkPrices?: CommonOptions['checkPrices']): Promise<T> {
  return using(openContext({ ...commonOptions(argv, io), checkPrices }), f);
}

/**
 * withContext for a command that answers from remembered results only: its store may be the answers
 * kept beside it. `delta`: the command is `summary`, whose results an append may be added to (delta.ts).
 */
export function withAnswers<T>(argv: Record<string, unknown>, io: Io, f: (ctx: AnswerContext) => Promise<T> | T, delta = false): Promise<T> {
  return using(openAnswerContext(commonOptions(argv, io), delta), f);
}

async function using<C extends { store: { close(): void } }, T>(opening: Promise<C>, f: (ctx: C) => Promise<T> | T): Promise<T> {
  const ctx = await opening;
  try {
    return await f(ctx);
  } finally {
    ctx.store.close();
  }
}

/**
 * A numeric option as typed (declared `type: 'string'`, so an error quotes what was given, not
 * yargs' NaN): `fallback` when absent; a usage error naming `expect` unless it is a finite number
 * that `ok` accepts. An empty value is no number (Number('') is 0).
 */
/**
 * The line that heads a filtered command's text (reporters/units.ts filtersLine), one helper for
 * every command that takes the filters. `counted`: the command counted something in scope, so
 * --project matched; only when it counted nothing is the store asked whether --project matches
 * any project on any day (the days may have chosen nothing).
 */
export async function filtersLineOf(ctx: { store: RememberingStore; filters: Filters }, counted: boolean): Promise<string> {
  const { daysChoose, daysRead, projectMatches } = await import('../analyses/summary.js');
  const { filtersLine } = await import('../reporters/units.js');
  if (counted) return filtersLine(ctx.filters);
  const matches = await projectMatches(ctx.store, ctx.filters);
  // days that chose nothing (a future --since, a range before the logs) are said, with the days there are
  // (when the days hold requests, another option emptied the answer: --scope subagent of a run without one)
  const dated = matches && (ctx.filters.since !== null || ctx.filters.until !== null);
  const days = dated && !(await daysChoose(ctx.store, ctx.filters)) ? await daysRead(ctx.store, ctx.filters) : undefined;
  return filtersLine(ctx.filters, matches, days);
}

export function numberOption(argv: Record<string, unknown>, name: string, fallback: number, expect: string, ok: (n: number) => boolean = () => true): number {
  const v = argv[name];
  if (v === undefined) return fallback;
  const n = decimal(v);
  if (!Number.isFinite(n) || !ok(n)) throw new UsageError(`--${name} ${String(v)}: expected ${expect}`);
  return n;
}

/**
 * A flag's value read as a decimal number (`12`, `2.5`, `1e3`), else NaN. Number() alone also
 * reads `0x10` as 16, `0b11` as 3 and '' as 0: a typo in a flag should be an error, not a number.
 */
export function decimal(v: unknown): number {
  const text = String(v).trim();
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text) ? Number(text) : Number.NaN;
}

/** A string flag's value; `--chain=` (empty) is a usage error, not the flag left out. */
export function nonEmpty(v: unknown, flag: string, what: string): string | undefined {
  if (v === undefined) return undefined;
  const s = String(v);
  if (s.trim() === '') throw new UsageError(`${flag}: expected ${what}`);
  return s;
}

/** A whole number ≥ 0 (tokens, counts). */
export const wholeNumber = (n: number): boolean => Number.isInteger(n) && n >= 0;

/**
 * `--calibrate K` (replay session, report): a whole number of requests, 0 (off) to CALIBRATE_MAX
 * (yargs' number type would turn `abc` into NaN silently; 1e23 was printed as "requests 2–1e+23").
 */
export function calibrateOf(v: unknown): number {
  const s = String(v).trim();
  // an empty value (`--calibrate "$K"` with K unset) said "…, got " and nothing after it
  if (s === '') throw new UsageError(`--calibrate: expected a whole number of requests from 0 (off) to ${CALIBRATE_MAX.toLocaleString('en-US')}`);
  if (!/^\d+$/.test(s) || Number(s) > CALIBRATE_MAX) {
    throw new UsageError(`--calibrate must be a whole number of requests from 0 (off) to ${CALIBRATE_MAX.toLocaleString('en-US')}, got ${s}`);
  }
  return Number(s);
}

/** The most requests `--calibrate` fits on: more than a chain holds (the bench's 700 MB session has ~274,000). */
export const CALIBRATE_MAX = 1_000_000;

/** A repeatable string option as a list (absent → []). */
export function listOption(v: unknown): string[] {
  return v === undefined ? [] : ([] as unknown[]).concat(v).map(String);
}
