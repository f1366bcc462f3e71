/**
 * What every analysis command starts from: prices loaded, the logs under this invocation's roots
 * ingested into the store (incrementally), and the filters parsed.
 */
import { homedir } from 'node:os';
import { type Filters, parseDays, parseTimezone, refuseEmptyFilters } from './analyses/filters.js';
import { UsageError } from './errors.js';
import { defaultCandidates, defaultRoots, explicitRoots, xdgDir } from './ingest/discover.js';
import { type AnswerResult, type IngestOptions, type IngestResult, type Progress, ingest, ingestOrAnswer } from './ingest/ingest.js';
import { type PriceTable, loadPriceTable } from './pricing/pricing.js';
import { refuseInLogs, rootsRead } from './store/log-dirs.js';
import { refuseMissingDir } from './store/dirs.js';
import { defaultDbPath } from './store/store.js';

export interface CommonOptions {
  paths?: string[];
  db?: string;
  pricing?: string;
  since?: string;
  until?: string;
  project?: string;
  timezone?: string;
  rebuild?: boolean;
  env?: NodeJS.ProcessEnv;
  /** told how the ingest goes (the CLI passes its progress line when stderr is a terminal) */
  progress?: (p: Progress) => void;
  /** IngestOptions.whileStaging: the CLI's clean-up of staged files on Ctrl-C or a kill */
  whileStaging?: IngestOptions['whileStaging'];
  workers?: number;
  /** one-line notices for stderr (the CLI passes its stderr printer) */
  notice?: (line: string) => void;
  /**
   * checks of the price table in force, before any log is read (`report --channel-model`: a model it
   * does not price is a one-line error, not one said after the whole ingest); the file is read once
   */
  checkPrices?: (prices: PriceTable) => void;
}

/** Seconds a run waits for another cachelens process that holds the store (CACHELENS_LOCK_WAIT). */
export const DEFAULT_LOCK_WAIT_S = 10;

export function lockWaitMs(env: NodeJS.ProcessEnv): number {
  const s = Number(env.CACHELENS_LOCK_WAIT ?? DEFAULT_LOCK_WAIT_S);
  return Number.isFinite(s) && s >= 0 ? s * 1000 : DEFAULT_LOCK_WAIT_S * 1000;
}

export interface Context extends IngestResult {
  prices: PriceTable;
  filters: Filters;
}

/** A context whose store may answer from the answers kept beside it (ingestOrAnswer). */
export interface AnswerContext extends AnswerResult {
  prices: PriceTable;
  filters: Filters;
}

export async function openContext(o: CommonOptions): Promise<Context> {
  const { opts, prices, filters } = contextOptions(o);
  return { ...noTranscripts(o, await ingest(opts)), prices, filters };
}

/** `delta`: an append may be answered from the kept `summary` results (IngestOptions.delta). */
export async function openAnswerContext(o: CommonOptions, delta = false): Promise<AnswerContext> {
  const { opts, prices, filters } = contextOptions(o);
  return { ...noTranscripts(o, await ingestOrAnswer({ ...opts, delta })), prices, filters };
}

/**
 * Paths given that hold no transcript (an empty directory, a folder of other files, `summary
 * notes.md`), or default roots whose projects/ holds none: said on stderr, as default roots without
 * a projects/ directory are, so that the empty tables are not taken for no usage (they were said
 * nowhere but in summary's `0 files`).
 */
function noTranscripts<R extends { stats: { files: number }; roots: string[]; walkSkips?: readonly { reason: string }[] }>(o: CommonOptions, r: R): R {
  const where = o.paths?.length ? o.paths : r.roots;
  // a directory that could not be read (permission denied) may hold transcripts: not said to hold none
  const unread = r.walkSkips?.filter((w) => w.reason === 'unreadable_file').length ?? 0;
  const none = unread > 0 ? `no Claude Code transcript (*.jsonl) could be read in ${where.join(', ')} (${unread} unreadable, listed under data quality)` : `no Claude Code transcript (*.jsonl) in ${where.join(', ')}`;
  if (where.length > 0 && r.stats.files === 0) o.notice?.(`cachelens: ${none}`);
  return r;
}

function contextOptions(o: CommonOptions): { opts: IngestOptions; prices: PriceTable; filters: Filters } {
  refuseEmptyFilters(o);
  const prices = loadPriceTable(o.pricing);
  o.checkPrices?.(prices);
  const filters: Filters = {
    ...parseDays(o.since, o.until),
    project: o.project?.trim() || null,
    timezone: parseTimezone(o.timezone, '--timezone', o.notice),
  };
  const env = o.env ?? process.env;
  // a path that is not there is said before the store is opened (its file and WAL were made first)
  if (o.paths?.length) explicitRoots(o.paths, env.HOME || homedir());
  // a store given inside the logs (`--db ~/.claude/projects/x.duckdb`, `--db LOGS/s.duckdb`) was
  // written there, and the files kept beside it (its WAL, answers, listing, staged facts) with it:
  // refused before anything opens it. So is the default store when it lies in Claude Code's own
  // log directories (XDG_CACHE_HOME=~/.claude/cache): it was made there unsaid. Not when logs given
  // hold it: a transcript in the home directory (`summary ~/s.jsonl` stands for ~) or `summary ~`
  // would be refused for ~/.cache, a place the user did not choose;
  // `--db=` is the store's own error (said here too, before the note on logs below), and :memory: is no file.
  if (o.db === '') throw new UsageError('--db: expected a file name (or :memory:)');
  if (o.db !== undefined && o.db !== ':memory:') {
    refuseInLogs(o.db, { flag: '--db', given: o.db, choose: 'PATH', logRoots: rootsRead(o.paths, env) });
    // a store named in a directory not there (a typo: `--db ~/.cahce/s.duckdb`) was made there, the
    // directories above it with it; only the default store's directory is made (store/dirs.ts)
    refuseMissingDir(o.db, { flag: '--db', given: o.db, choose: 'PATH' });
  }
  if (o.db === undefined) {
    const store = defaultDbPath(env);
    const given = xdgDir(env.XDG_CACHE_HOME) ? `${store} ($XDG_CACHE_HOME/cachelens)` : store;
    refuseInLogs(store, { flag: 'the default store', given, choose: 'store with --db PATH (or XDG_CACHE_HOME)', logRoots: rootsRead(undefined, env) });
  }
  // logs looked for where there are none: said, so that an empty answer is not taken for no usage
  if (!o.paths?.length && defaultRoots(env).length === 0) {
    o.notice?.(`cachelens: no Claude Code logs found: none of ${defaultCandidates(env).join(', ')} holds a projects/ directory`);
  }
  const opts: IngestOptions = {
    paths: o.paths,
    env,
    dbPath: o.db ?? defaultDbPath(env),
    rebuild: o.rebuild,
    prices,
    progress: o.progress,
    whileStaging: o.whileStaging,
    workers: o.workers,
    lockWaitMs: lockWaitMs(env),
    notice: o.notice,
  };
  return { opts, prices, filters };
}
