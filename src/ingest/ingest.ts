/**
 * Ingest: discover → read what changed → store. The only stage that touches the logs.
 *
 *   roots ─▶ discover ─▶ plan (unchanged · appended · re-read · retired) ─▶ worker pool ─▶ store
 *
 * A file whose size and mtime are unchanged is not opened. A file that grew and whose bytes up to
 * where the last read stopped still carry the same fingerprint (first and last KiB before that
 * point) is read from there, with the parser state saved then; a half-written last line was left
 * unread, so it is read once complete. A file that shrank or was replaced, or whose last line was
 * read without its newline and then written on, is read again from the start; a file no longer
 * found under the roots is retired (its facts deleted), and so is one that cannot be read now (the
 * next run tries it afresh). De-dup is SQL over all facts in scope, so it
 * stays global and exact across runs: when few files changed, only the requests and chains they
 * touch are derived again (each from all of its copies); when no file changed and the scope and
 * prices are those of the last run, the derived tables are kept as they are, and when the whole
 * listing hashes as the last one did, not even the stored file table is loaded.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { UsageError, fileErrorDetail } from '../errors.js';
import type { PriceTable } from '../pricing/pricing.js';
import { type AnswerStore, AnsweredStore, type Answers, answersBaseToken, readAnswers, storeIdentity } from '../store/answers.js';
import { type Grown, answerDelta, grownSince, pricesDigest, writeDeltaBase } from './delta.js';
import { type FileRow, Store, outOfMemory, readOnlyReason } from '../store/store.js';
import { refuseInLogs, rootsRead } from '../store/log-dirs.js';
import { rememberedPrefix } from '../store/queries.js';
import type { StoreWriter } from '../store/writer.js';
import type { SkipReason, SkippedLine } from '../types.js';
import { type Discovery, type FoundFile, decodeProjectDir, defaultRoots, discover } from './discover.js';
import { type FileListing, dropEarlyWalk, earlyProof, fileCount, fileListing, kindCode, listingDigest, snapshotDiscovery, takeEarlyWalk } from './early-walk.js';
import { LISTING_SUFFIX, decodeSnapshot, encodeSnapshot, matchSnapshot } from './listing-snapshot.js';
import { readBeside } from '../store/location.js';
import { appendFingerprint } from './fingerprint.js';
import { heapKeeper, releaseHeap } from './heap.js';
import { longText, str } from './line.js';
import { SHORT_STRING } from './project.js';
import { type CheckColumns, type Proof, checkChunks, checkOutcome, checkProof, dropUnchanged, keepChecked, keepUnchanged, linesName, readUnchanged } from './unchanged.js';
import { type FileContext, type TaskList, fileRowOf, readAll } from './pool.js';
import type { ReadOptions } from './read-file.js';
import { pushAll } from '../arrays.js';

/**
 * What an ingest tells its `progress` callback: that it walks the logs (and plans); as files are
 * read, the files and bytes done of those to read (from 0 as the reading starts); that it stores
 * their facts, then de-duplicates them; and that it is done (the store ready for questions). A warm
 * run, which reads nothing, tells only that it walks and is done.
 */
export type Progress =
  | { phase: 'reading'; files: number; filesTotal: number; bytes: number; bytesTotal: number }
  | { phase: 'listing' | 'storing' | 'deriving' | 'done' }
  /** the store is held by another process: `message` says by whom and for how long this run waits */
  | { phase: 'waiting'; message: string };

export interface IngestOptions {
  paths?: string[];
  env?: NodeJS.ProcessEnv;
  dbPath: string;
  rebuild?: boolean;
  prices: PriceTable;
  workers?: number;
  read?: Pick<ReadOptions, 'chunkSize' | 'streamAbove' | 'spillAt' | 'spillKeep'>;
  /** told how the work goes (Progress) */
  progress?: (p: Progress) => void;
  /** how long to wait for another process that holds the store (default 0: fail at once) */
  lockWaitMs?: number;
  /** one-line notices for stderr (e.g. waiting for the store) */
  notice?: (line: string) => void;
  /** the largest share of the scope's files that may change for only the touched requests to be derived (default 0.25) */
  touchedShare?: number;
  /** bytes to read from which the facts are staged in files and loaded in bulk (default STAGE_BYTES) */
  stageBytes?: number;
  /**
   * Called as a large ingest starts staging its facts in files, with what removes them; returns
   * what to call once they are gone. The CLI has Ctrl-C and a kill remove them before the signal
   * ends the run (cli-main.ts): without a handler the run ended at once, and the files (a tenth of
   * the logs read) stayed beside the store until its next large run, or in the temp directory for
   * `--db :memory:`. A library caller's signals stay its own.
   */
  whileStaging?: (unstage: () => void) => () => void;
  /** DuckDB's memory bounds (appending, loading, de-dup) times this (default 1; see ingest) */
  memoryScale?: number;
  /** a reading dominated by one file of `from` bytes or more has its observations loaded in pieces of `bytes` as it goes (default PIECES_FROM, PIECE_BYTES) */
  pieces?: { from?: number; bytes?: number };
  /** ingestOrAnswer: answer an append from the kept `summary` results without the store, when it can (delta.ts); only `summary` asks what they hold */
  delta?: boolean;
  /** false: no proof of unchanged logs is kept beside the store (a read-only store: nothing is written beside it) */
  keepProof?: boolean;
}

/**
 * DuckDB's memory while appending facts (see ingestInto). Cold 10 GB runs peaked at 1040 – 1106 MiB
 * with 96 MB against 1220 – 1249 MiB with 256 MB (64 MB: 1078 MiB), in as long (72 – 78 s against
 * 75 – 79 s); 1 GB runs were the same either way (4 interleaved pairs), their peak being the de-dup's.
 * While the de-dup's bound grew to 611 MB on 10 GB, the de-dup made the peak whatever this was.
 */
const INGEST_MEMORY_MB = 96;

/**
 * DuckDB's memory bound while an ingest plans, which reads the stored rows of the files that grew
 * (their parser states) and their chains: DuckDB keeps what such a scan of `files` read cached up
 * to its bound. Alone over the 10 GB store, the rows of 1,565 files: RSS +61 – 64 MiB unbounded
 * and at 96 MB, +39 – 41 within 32 MB, in as long (BENCHMARKS-log.md, Memory).
 */
const PLAN_MEMORY_MB = 32;

/**
 * Bytes to read from which the facts are staged as CSV beside the store and loaded in bulk
 * (StoreWriter), instead of appended: appended rows stay in memory until the commit. Staging costs
 * ~20 ms more on the 2 MB sample logs (6 runs each: 173 – 224 against 154 – 188 ms) and paid from
 * 100 MB on even in its first form, when the readers posted CSV text for the main thread to write
 * (cold runs ~0.1 s faster, ~15 MiB lower; the bench's cold 100 MB run went from 2.65 s in session
 * 7 to 1.73 – 2.11 s with the final form).
 */
const STAGE_BYTES = 32 * 1024 * 1024;

/**
 * A reading that one file of this many bytes (~0.5 s of reading) or more dominates, holding half
 * its bytes or more, has DuckDB load the staged observations in pieces of PIECE_BYTES on a core
 * the readers leave free (pool.ts PieceOptions): read alone, that file goes to one worker and
 * leaves the other core; with others, once a worker has read its last. One 700 MB transcript's
 * load took 1.5 – 2.0 s after its reading before (BENCHMARKS-log.md, Cold, session 28).
 */
const PIECES_FROM = 64 * 1024 * 1024;

/** Staged observations per piece: ~30,000 rows, each loaded in ~0.2 – 0.5 s. */
const PIECE_BYTES = 8 * 1024 * 1024;

/**
 * Characters of remembered results read ahead while an ingest walks the logs (Store.readAhead),
 * before it knows whether anything changed; more are read only once it knows nothing did. Every
 * run whose logs changed forgets them: on 10 GB of logs (22,360 projects, results of ~16 MB) an
 * append run read them beside its walk and peaked there, at 358 – 380 MiB (BENCHMARKS-log.md, Append,
 * session 31). 1 GB of logs' are ~0.7 MB.
 */
const EARLY_READ_AHEAD_CHARS = 4 * 2 ** 20;

/** .meta.json files read between two looks at the workers' results (~5 – 10 ms of reading). */
const META_SLICE = 128;

/**
 * The share of the walked files up to which the files a run reads whole are taken out of the
 * walk's listing before it reads, so that the listing can go (ingestInto). A first run reads all
 * of them from the listing itself.
 */
const FEW_WHOLE_READS = 0.05;

/**
 * Files in a listing let go early from which it is collected at once (~300 bytes of text a file:
 * 50,000 files are ~15 MB). 1 GB of logs (23,478 files, 7 MB) is left to V8: a full collection
 * of this thread's heap costs ~20 – 35 ms there (heap.ts).
 */
const COLLECT_LISTING_FILES = 50_000;

/**
 * DuckDB's memory for the de-dup, on one thread (one keeps the peak ~0.2 GB lower than two, for
 * +0.3 s on 1 GB): 72 MB plus 40 bytes per observation, at most 1 GB. What it needs grows with the
 * observations, far slower than they do. Grouped by an MD5 of the key and written in two
 * statements (DERIVE_REQUESTS in schema.ts; bench/dedup-parts.ts alone over a filled store), 1 GB
 * of logs (200,000 observations) ran out of memory at 64 MB and not at 72 MB, 10 GB (2 million) at
 * 112 MB and not at 120 MB. Grouped by the key in one statement (sessions 9 – 21) 10 GB needed
 * more than 195 MB in a cold run and got 68 MB plus 96 bytes per observation (252 MB).
 * Example: 200,000 observations → 80 MB; 1,000,000 → 111 MB; 2,000,000 → 149 MB.
 */
export function deriveMemoryMb(observations: number): number {
  return Math.min(1024, Math.ceil(72 + (observations * 40) / 2 ** 20));
}

/**
 * DuckDB's memory for a whole derive's chains (DERIVE_CHAINS), set once the requests are
 * committed: 64 MB plus 48 bytes per observation, at most 1 GB. Alone over a filled store, one
 * thread: 1 GB of logs ran out of memory at 56 MB and not at 64 MB, 10 GB at 128 MB and not at
 * 136 MB (peak 278 MiB; 297 MiB at 160 MB, 377 MiB at 251 MB); at the de-dup's old bound (252 MB
 * on 10 GB) the chains made the cold run's peak.
 * Example: 200,000 observations → 74 MB; 2,000,000 → 156 MB.
 */
export function chainsMemoryMb(observations: number): number {
  return Math.min(1024, Math.ceil(64 + (observations * 48) / 2 ** 20));
}

/**
 * DuckDB's memory for a derive over a store derived before (any run but a first), from what a
 * first run's would get (`mb`, deriveMemoryMb's or chainsMemoryMb's): at least 128 MB. A touched
 * derive reads few rows, but its statements hold a dozen aggregates and joins at once, each with
 * memory of its own however few its rows: on 1 GB of logs (then 87 MB by the whole derive's
 * bound) the chains of 156 changed files' sessions alone ran out of memory at 72 MB and not at
 * 80 MB, and an append run whose changed files were read whole again (the facts of the last run
 * not yet folded into the store, ~80 MB of DuckDB's memory) ran out at 83 MB and not at 87 MB. A
 * whole derive after a third of the transcripts grew ran out at 87 MB too, where a first run's
 * does not (BENCHMARKS-log.md, Memory).
 * Example: 80 MB (200,000 observations) → 128 MB; 149 MB (2,000,000) → 149 MB.
 */
export function rederiveMemoryMb(mb: number): number {
  return Math.max(128, mb);
}

/**
 * DuckDB's memory for loading staged facts, on one thread: 88 MB plus 12 bytes per observation, at
 * most 1 GB. The load keeps every table's newest row groups in memory until the commit, and what
 * that needs grows with the corpus. Loading a run's own staged files alone into a new store (since
 * `files` lost its index on paths, schema 10): 10 GB of logs (2 million observations) ran out of
 * memory at 88 and 92 MB, in the `files` rows, and finished at 96 MB (filesLoadMemoryMb covers
 * those); without the `files` rows it finished at 88 MB (and ran out at 64 MB); 1 GB (200,000)
 * not even at 56 MB. DuckDB takes more than its bound here, and more the higher the bound: the
 * same load alone (with the CLI's one jemalloc arena) peaked at 272 MiB at 96 MB, 281 – 289 at
 * 100 MB, 302 – 304 at 104 MB, 326 at 125 MB and 327 – 334 at 150 MB, the bound of sessions 17 – 21
 * (88 MB plus 32 bytes; BENCHMARKS-log.md, Memory). Running out here fails the whole run (ingest then
 * tries once more with twice the bounds, reading every file again), so the bound stays ~25%
 * above the observations' need measured on 10 GB.
 * Example: 200,000 observations → 91 MB; 2,000,000 → 111 MB.
 */
export function loadMemoryMb(observations: number): number {
  return Math.min(1024, Math.ceil(88 + (observations * 12) / 2 ** 20));
}

/** Rows in one of DuckDB's row groups (its default). */
const ROW_GROUP_ROWS = 122_880;

/**
 * DuckDB's memory for loading the staged `files` rows, from their CSV bytes and rows: ~36 MB plus
 * one row group of them (their mean width × 122,880 rows, or all of them when fewer), with 15%
 * to spare, at most 1 GB. A `files` row carries its file's parser state, so how wide the rows are,
 * not how many observations the logs hold, sets what their load needs. The staged facts of 10 GB
 * of logs (one thread, a new store; `files` first, 234,780 rows of ~490 bytes, a row group ~60 MB)
 * ran out of memory in `files` at 88 and 92 MB and finished at 96 MB; those `files` rows alone,
 * given ~1,500 bytes more parser state each (a row group ~182 MB), ran out at 200 MB and finished
 * at 224 MB. Until session 22 the margin was 35% over 32 MB plus the row group (125 MB for the
 * 10 GB sample logs); the load's peak rises with its bound (loadMemoryMb).
 * For the 10 GB sample logs this and loadMemoryMb's bound are both 111 MB (1 GB: 11.4 MB of
 * `files` rows → 55 MB against 91 MB); this one keeps logs with much wider parser states from
 * running out and reading everything again.
 * Example: 115 MB in 234,780 rows → 111 MB; 349 MB in 234,780 rows → 252 MB.
 */
export function filesLoadMemoryMb(bytes: number, rows: number): number {
  if (rows <= 0 || bytes <= 0) return 0;
  const rowGroup = (bytes * Math.min(1, ROW_GROUP_ROWS / rows)) / 1e6;
  return Math.min(1024, Math.ceil((36 + rowGroup) * 1.15));
}

export interface IngestStats {
  files: number;
  unchanged: number;
  read: number;
  appended: number;
  retired: number;
  bytesRead: number;
  /** what was derived: nothing (no change), the touched requests only, or all */
  derived: 'none' | 'touched' | 'all';
  /** what the walk was compared with: nothing (a warm run), the listing snapshot, or the stored files */
  planned: 'none' | 'snapshot' | 'files';
  /**
   * how the logs were listed when they were not walked: proven as the answers found them by the
   * proof beside the store, or made from its check (files grown or touched); absent after a walk
   */
  listed?: 'proof' | 'check';
  /** staged observations files DuckDB loaded while the reading went on (PIECES_FROM) */
  pieces: number;
  ms: number;
}

export interface WalkSkip {
  path: string;
  reason: SkipReason;
  detail: string;
}

export interface IngestResult {
  store: Store;
  /** the roots walked (the file list itself is let go during the ingest) */
  roots: string[];
  stats: IngestStats;
  /** problems met while listing or opening files (no file id to hang them on) */
  walkSkips: WalkSkip[];
}

/** An ingest's result, or a store answered from the answers kept beside it (ingestOrAnswer). */
export interface AnswerResult extends Omit<IngestResult, 'store'> {
  store: AnswerStore;
}

/**
 * For a command that answers from remembered results only (summary, sessions, blocks): when a
 * warm run kept its answers beside the store (answers.ts) and they still hold for it, the logs
 * are walked and, if the walk's listing key is theirs (no log added, grown or removed since), the
 * run answers from them without loading DuckDB; the store is opened only for a result they do not
 * hold. When the logs grew only by appended lines, `summary` adds them to the answers (delta.ts;
 * withBase first writes the base they need, when they name none). Otherwise, `ingest` (over the walk
 * done already: the store then opens only after it).
 * Example: warm `summary --json` runs on 1 GB of logs (12 interleaved each): median 296 → 277 ms,
 * peak RSS 138 → 94 MiB. The cost: an append run after a warm one opens the store only after the
 * walk (6 interleaved: median 795 → 836 ms; BENCHMARKS-log.md, Warm, session 29).
 */
export async function ingestOrAnswer(opts: IngestOptions): Promise<AnswerResult> {
  const answers = opts.rebuild || opts.dbPath === ':memory:' ? null : readAnswers(opts.dbPath);
  if (!answers) return ingest(opts);
  // nothing is written beside a store that may not be written (no proof, no base, no answers of an append)
  if (readOnlyReason(opts.dbPath) !== null) opts = { ...opts, delta: false, keepProof: false };
  const started = performance.now();
  const env = opts.env ?? process.env;
  // The logs of the default roots checked against the proof kept beside the store by a walk that
  // found them as the answers did: when nothing changed, no walk (unchanged.ts). The early walk's
  // worker checks before it walks; without one, this thread does.
  const roots = opts.paths && opts.paths.length > 0 ? null : defaultRoots(env);
  const proven = roots && (await provenFiles(opts, env, roots, answers.listing));
  if (roots && proven && 'files' in proven) {
    dropEarlyWalk();
    return answered(opts, answers, answers, answers.listing, roots, [], { ...unchangedStats(proven.files, started), listed: 'proof' });
  }
  // Only files grown or touched since the proof: the walk's listing is made from the listing
  // snapshot and the check (a 1 GB append run's walk took ~0.3 s of its ~0.75, the check ~0.15;
  // BENCHMARKS-log.md, Append, session 57)
  const checked = proven && 'discovery' in proven ? proven : null;
  if (checked) dropEarlyWalk();
  // The walk is held in this object alone, not in a variable (an async function keeps its
  // variables across awaits): withBase takes it out before DuckDB writes the base.
  opts.progress?.({ phase: 'listing' });
  const walked: { discovery?: Discovery; started: number } = { discovery: checked?.discovery ?? (await takeEarlyWalk(opts.paths, env)) ?? (await discover(opts.paths, env, roots !== null)), started };
  // the listing from the check, when it is the one this run goes by
  const byCheck = checked && walked.discovery === checked.discovery ? checked : null;
  const summary = walkSummary(walked.discovery!, opts.prices);
  const { listing, files } = summary;
  // What the next run checks instead of walking: the proof made over for this listing, whatever
  // answers it (the delta, or the store); or kept for this walk, when it answers appended lines
  // (before withBase lets the walk go) or found the logs as the answers did. A proof names the
  // listing it holds for, and is checked only while the answers are of that listing: one kept
  // for a run that then fails is never checked.
  const keepProof = (d: Discovery | undefined) => {
    if (!roots || opts.keepProof === false) return;
    if (byCheck) keepChecked(opts.dbPath, byCheck.proof, byCheck.columns, listingDigest(d!), listing);
    else if (d) keepUnchanged(opts.dbPath, d, listingDigest(d), listing);
  };
  if (byCheck) keepProof(walked.discovery);
  let stats: IngestStats;
  let held = answers;
  if (listing !== answers.listing) {
    if (!byCheck && opts.delta) keepProof(walked.discovery);
    // lines appended to transcripts the store holds: added to its results here when they can be (delta.ts)
    let delta = opts.delta ? answerDelta(opts.dbPath, answers, walked.discovery!, listing, opts.prices) : null;
    if (!delta && opts.delta) {
      const based = await withBase(opts, answers, walked);
      if (based) {
        // what writing the base left (its hashes, rows and sessions: ~30 MB on 10 GB of logs) goes
        // before the delta's own work, not beside it
        releaseHeap(2, 0);
        delta = answerDelta(opts.dbPath, based.answers, null, listing, opts.prices, based.grown);
      }
    }
    if (!delta) {
      const r = await ingest(opts, walked);
      if (byCheck) r.stats.listed = 'check';
      return r;
    }
    held = delta.answers;
    stats = { ...unchangedStats(files, started), unchanged: delta.unchanged, appended: delta.appended, bytesRead: delta.bytesRead, planned: 'snapshot' };
  } else {
    stats = unchangedStats(files, started);
    // what the next run checks instead of walking, if nothing changes meanwhile (a proof kept
    // before did not hold, or there was none)
    if (!byCheck) keepProof(walked.discovery);
  }
  if (byCheck) stats.listed = 'check';
  opts.progress?.({ phase: 'done' });
  return answered(opts, answers, held, listing, summary.roots, summary.walkSkips, stats);
}

/**
 * What the proof kept beside the store shows of the logs under `roots` (unchanged.ts), for the
 * answers of `listing`: that a walk would find them as the walk named by `listing` did (how many
 * files it found), or that it would find the same files with only some grown or touched (its
 * listing, made without walking: snapshotDiscovery, with the proof and what its check found, to
 * keep it made over: keepChecked); else null.
 */
async function provenFiles(opts: IngestOptions, env: NodeJS.ProcessEnv, roots: string[], listing: string): Promise<{ files: number } | { discovery: Discovery; proof: Proof; columns: CheckColumns } | null> {
  const fits = (p: Proof) => JSON.stringify(p.roots) === JSON.stringify(roots) && listingKeyOf(roots, p.digest, opts.prices) === listing;
  const early = earlyProof(opts.paths, env);
  const checking = early && (await early);
  let proof: Proof | null;
  let found: ReturnType<typeof checkOutcome>;
  if (checking && resolve(checking.proof.store) === resolve(opts.dbPath)) {
    proof = checking.proof;
    if (!fits(proof)) return null;
    // this thread takes part in the worker's check, then waits for the worker's part to end
    checkChunks(opts.dbPath, proof, checking.proof.check);
    found = (await checking.done) ? checkOutcome(proof, checking.proof.check) : null;
  } else {
    // no early walk, or its worker checked no proof beside this store (it found none, or took
    // another store from the arguments): this thread checks the one there, if it fits
    proof = readUnchanged(opts.dbPath, roots);
    if (!proof || !fits(proof)) return null;
    found = checkProof(opts.dbPath, proof);
  }
  if (found === 'held') return { files: proof.files };
  const discovery = found && roots.length === 1 ? checkedDiscovery(opts.dbPath, proof, roots[0], found) : null;
  if (found && discovery) return { discovery, proof, columns: found };
  dropUnchanged(opts.dbPath);
  return null;
}

/**
 * The listing a walk of `root` would make now, from the listing snapshot beside the store at
 * `dbPath` and what the check of `proof` found (`columns`), when the snapshot lists the files of the
 * walk the proof was kept after (snapshotDiscovery); else null.
 */
function checkedDiscovery(dbPath: string, proof: Proof, root: string, columns: CheckColumns): Discovery | null {
  try {
    const snap = decodeSnapshot(readBeside(dbPath + LISTING_SUFFIX));
    if (!snap || snap.count !== proof.files || JSON.stringify(snap.roots) !== JSON.stringify(proof.roots) || columns.met.includes(0)) return null;
    const d = snapshotDiscovery(snap, root, new Float64Array(columns.size), new Float64Array(columns.mtimeMs), proof.names);
    // the files whose sizes or mtimes the listing gives otherwise than the snapshot: each named by its line
    const differ: number[] = [];
    for (let i = 0; i < snap.count; i++) if (columns.size[i] !== snap.size[i] || columns.mtimeMs[i] !== snap.mtimeMs[i]) differ.push(i);
    return d && linesName(dbPath, proof, columns, differ, (i) => fileListing(d).path(i)) ? d : null;
  } catch {
    return null;
  }
}

/**
 * ingestOrAnswer's answer: the answers `held` for the logs as `listing` names them (`answers`:
 * those read beside the store), and the store behind them, opened for a question they do not hold.
 */
function answered(opts: IngestOptions, answers: Answers, held: Answers, listing: string, roots: string[], walkSkips: WalkSkip[], stats: IngestStats): AnswerResult {
  // A question the answers do not hold goes to the store, whose answers, read ahead, are kept again
  // when it closes. If it has changed since the answers were read (another process wrote it), this
  // run's logs are ingested into it first, as any run's are; the question is then asked again.
  const open = async () => {
    const store = await Store.open(opts.dbPath, { lockWaitMs: opts.lockWaitMs, onWait: waitingNote(opts), onNote: opts.notice });
    let same: boolean;
    try {
      same = (await store.getMeta('listing_key')) === listing;
    } catch (err) {
      store.close();
      throw err;
    }
    if (same) {
      await store.readAhead().catch(() => undefined);
      // the base the answers name holds for the store as they did (delta.ts), while it is that store
      const base = answers.base?.listing === listing && storeIdentity(opts.dbPath) === answers.store ? answers.base.token : undefined;
      store.keepAnswers(listing, base);
      return store;
    }
    store.close();
    // the problems are this ingest's walk's (the work runs again over its store, and reads them then)
    const again = await ingest(opts);
    walkSkips.splice(0, walkSkips.length, ...again.walkSkips);
    return again.store;
  };
  return { store: new AnsweredStore(held, open), roots, stats, walkSkips };
}

/**
 * `walked`: the logs' walk, done already when the run started (ingestOrAnswer); its discovery is
 * taken out of that object.
 */
export async function ingest(opts: IngestOptions, walked?: { discovery?: Discovery; started: number }): Promise<IngestResult> {
  const started = walked?.started ?? performance.now();
  // The store opens on DuckDB's threads while this one walks the logs (~60 ms of a warm run), and
  // reads the last listing key and the remembered results, which a warm run answers from (this
  // run has changed neither yet; a failed read only means the queries run later, as they would).
  // Reading every stored file's identity then too, which any run but a warm one needs first, cost
  // warm runs more than it saved append runs (BENCHMARKS-log.md, Append). After ingestOrAnswer's walk,
  // it opens only now.
  const env = opts.env ?? process.env;
  if (!walked) opts.progress?.({ phase: 'listing' });
  // this thread opens the store meanwhile: the worker walks alone (takeEarlyWalk)
  let early = walked ? null : takeEarlyWalk(opts.paths, env, false);
  // What ingestInto plans from, handed over in this object rather than kept in a variable here:
  // it lets go of the file list once it has planned (Listing).
  const lists: Listing = {};
  const opening = Store.open(opts.dbPath, { rebuild: opts.rebuild, lockWaitMs: opts.lockWaitMs, onWait: waitingNote(opts), onNote: opts.notice }).then(async (store) => {
    const listed = await store.getMeta('listing_key').catch(() => undefined);
    // After ingestOrAnswer's walk the logs are known to have changed since the answers: nothing
    // is read ahead for a run that will forget it all. Otherwise results of up to
    // EARLY_READ_AHEAD_CHARS are read while the walk runs; larger ones only once the run is known
    // to be warm (ingestInto).
    if (!walked) await store.readAhead(EARLY_READ_AHEAD_CHARS).catch(() => undefined);
    return { store, listed };
  });
  opening.catch(() => undefined); // seen below, after the walk
  try {
    lists.discovery = walked?.discovery ?? (await early) ?? (await discover(opts.paths, env));
    if (walked) walked.discovery = undefined;
    early = null;
  } catch (err) {
    await opening.then(({ store }) => store.close(), () => undefined);
    throw err;
  }
  const { store, listed } = await opening;
  try {
    try {
      return done(opts, await ingestInto(store, lists, opts, started, listed));
    } catch (err) {
      // DuckDB's bounds are measured, not guaranteed (logs unlike any measured may need more):
      // the failed run rolled back, or committed its facts and left them to be derived again.
      // The first walk's list is gone: the logs are walked again, and the store's listing key,
      // which the failed run may have emptied, is read again.
      if (!outOfMemory(err)) throw err;
      const memoryScale = 2 * Math.max(1, opts.memoryScale ?? 1);
      opts.notice?.(`cachelens: DuckDB ran out of memory (${firstLine(err)}); trying once more with ${memoryScale} times its bounds`);
      return done(opts, await ingestInto(store, { discovery: await discover(opts.paths, env) }, { ...opts, memoryScale }, started));
    }
  } catch (err) {
    store.close();
    throw outOfMemory(err) ? new UsageError(`DuckDB ran out of memory twice: ${firstLine(err)}`, 'free some memory (or close other programs) and run again') : err;
  }
}

/**
 * The walk's file list, handed to ingestInto, which takes it out once it has planned: the early
 * walk's columns, or every found file as an object. Kept to the end of the run, it and the stored
 * files' identities were most of this thread's heap while DuckDB loads and de-duplicates, and
 * ~0.3 GB of it on 10 GB of logs (BENCHMARKS-log.md, Memory).
 */
interface Listing {
  discovery?: Discovery;
}

/**
 * A wait for the store held by another process, as progress: on a terminal the line says it (with
 * its seconds), and the run's next line, or the timeout's one-line error, replaces it. Without a
 * progress line (stderr no terminal) it is not said, as no progress is: the timeout's error says
 * the wait. It was a notice line of its own, and a timeout printed two lines saying the same.
 */
function waitingNote(opts: IngestOptions): ((message: string) => void) | undefined {
  const progress = opts.progress;
  return progress && ((message) => progress({ phase: 'waiting', message }));
}

/** An ingest's result, once its `progress` is told that it is done (not when it failed). */
function done(opts: IngestOptions, r: IngestResult): IngestResult {
  opts.progress?.({ phase: 'done' });
  return r;
}

function firstLine(err: unknown): string {
  return String((err as Error).message ?? err).split('\n')[0];
}

/**
 * Answers that hold for the store but name no base (a first run's, a warm run's: delta.ts), with a
 * base written from the store as it is (and the transcripts that grew), so that an append run adds its new lines to them without
 * the store's ingest; null when they cannot have one: they hold no summary, the walk found more
 * than grown transcripts or met a problem (delta.ts grownSince: no base is written for nothing), the
 * store is held by another process, is not at their listing, was priced with other prices than
 * this run's (its ingest prices everything again), or the base could not be written. Only reads the
 * store (a checkpoint aside, when the base runs out of memory: the answers then no longer hold, and
 * the next run goes to the store).
 * Example: 1 GB of logs, the first append run after a cold one: 0.73 – 0.81 s instead of 1.21 – 1.32
 * s through the store's ingest (BENCHMARKS-log.md, Append, session 33).
 */
async function withBase(opts: IngestOptions, answers: Answers, walked: { discovery?: Discovery }): Promise<{ answers: Answers; grown: Grown } | null> {
  const summaryPrefix = rememberedPrefix('summary');
  if (!walked.discovery || answers.base || walked.discovery.problems.length > 0 || ![...answers.results.keys()].some((k) => k.startsWith(summaryPrefix))) return null;
  let store: Store;
  let grown: Grown | null;
  try {
    grown = grownSince(opts.dbPath, answers.listing, walked.discovery);
    if (!grown) return null;
    store = await Store.open(opts.dbPath);
  } catch {
    return null; // (held by another process: the ingest that follows says so, or waits)
  }
  try {
    // the store as the answers have it, priced with this run's prices (the answers' results were
    // priced as the store is: other prices make the ingest price everything again)
    if ((await store.getMeta('listing_key')) !== answers.listing || storeIdentity(opts.dbPath) !== answers.store) return null;
    if ((await store.getMeta('derived_prices')) !== pricesDigest(opts.prices)) return null;
    // The walk's listing goes before DuckDB writes the base: the delta needs only the grown
    // transcripts, and an ingest after it (the base not written, or the delta refusing) walks the
    // logs again. Kept, it made this run's peak on 10 GB of logs (its ~66 MB of text beside
    // DuckDB's memory: 353 – 369 MiB; BENCHMARKS-log.md, Append, session 34).
    const files = grown.files;
    walked.discovery = undefined;
    if (files >= COLLECT_LISTING_FILES) releaseHeap(2, 0);
    const token = await writeDeltaBase(store, answers.listing, opts.prices);
    // (the grown transcripts, found here against the same snapshot, are not looked for again)
    return token ? { answers: { ...answers, base: { token, listing: answers.listing, results: answers.results } }, grown } : null;
  } catch {
    return null;
  } finally {
    try {
      store.close();
    } catch {
      // the ingest that follows opens it again, and says what is wrong
    }
  }
}

/** `listed`: the store's listing key as read before anything was written, if it was. */
async function ingestInto(store: Store, lists: Listing, opts: IngestOptions, started: number, listed?: string | null): Promise<IngestResult> {
  // what is needed of the walk besides its files, taken without keeping the walk in this frame
  const { roots, walkSkips, problems, listing, files } = walkSummary(lists.discovery!, opts.prices);
  if ((listed === undefined ? await store.getMeta('listing_key') : listed) === listing) {
    // nothing changed: the next run over the same logs may answer from what this one remembers
    // (read ahead during the walk, or now: larger results, or a run after ingestOrAnswer's walk)
    await store.readAhead().catch(() => undefined);
    // with the base the answers beside it name, while they hold for it (a report between two append runs)
    store.keepAnswers(listing, answersBaseToken(store.path, listing));
    return { store, roots, stats: unchangedStats(files, started), walkSkips };
  }
  // a store that may not be written answers from an up-to-date copy of it in memory (said on stderr)
  await store.copyToMemory('the logs changed since it was written', opts.notice);
  const stats: IngestStats = { files, unchanged: 0, read: 0, appended: 0, retired: 0, bytesRead: 0, derived: 'none', planned: 'none', pieces: 0, ms: 0 };
  // DuckDB may take most of the machine's memory for one big transaction; while facts are being
  // appended a bound keeps it small (DuckDB writes full row groups out and spills beyond it). The
  // plan before it runs within a smaller one (PLAN_MEMORY_MB).
  const [{ limit, threads }] = await store.all(`SELECT current_setting('memory_limit') AS limit, current_setting('threads') AS threads`);
  // set back as they were (RESET left the buffer pool's limit in place inside a transaction)
  const unbound = async () => {
    await store.run(`SET memory_limit = '${String(limit).replaceAll("'", '')}'`);
    await store.run(`SET threads = ${Number(threads)}`);
  };
  const scale = opts.memoryScale ?? 1;
  await store.run(`SET memory_limit = '${Math.ceil(PLAN_MEMORY_MB * scale)}MB'`);
  try {
    // the walk's listing (planned.found) is let go by the plan, or once every file is read
    const planned = await plan(store, lists, stats, listing);
    const { scope, full, appends, metas, retired } = planned;
    stats.planned = planned.fromSnapshot ? 'snapshot' : 'files';
    const pricesKey = pricesDigest(opts.prices);
    const derivedFor = createHash('sha1').update(JSON.stringify([scope, [...opts.prices.entries()]])).digest('hex');
    const changed = full.length + appends.length + metas.length + retired.length > 0;
    const lastDerivedFor = await store.getMeta('derived_for');
    if (!changed && lastDerivedFor === derivedFor) {
      await store.setMeta('listing_key', listing);
      stats.ms = performance.now() - started;
      return { store, roots, stats, walkSkips };
    }

    const changedIds = [...full.map((x) => x.id), ...appends.map((a) => a.row.fileId), ...metas.map((m) => m.id), ...retired];
    // how many files' facts change: an appended file counts as the share of its bytes that is new
    const changedWeight = full.length + metas.length + retired.length + appends.reduce((s, a) => s + (a.f.size - a.row.readTo) / Math.max(1, a.f.size), 0);
    const few =
      changed && !!lastDerivedFor && (await store.getMeta('derived_prices')) === pricesKey && (await fewChanged(store, scope, changedIds, changedWeight, opts.touchedShare ?? 0.25));
    const touched = few !== false;
    stats.derived = touched ? 'touched' : 'all';

    await store.run(`SET memory_limit = '${Math.ceil(INGEST_MEMORY_MB * scale)}MB'`);
    await store.run('BEGIN TRANSACTION');
    let writer: StoreWriter | undefined;
    let staging = false;
    let staged: (() => void) | undefined;
    try {
      if (touched) {
        await store.touchFiles(
          [...full.map((x) => x.id), ...metas.map((m) => m.id), ...retired],
          appends.map((a) => ({ fileId: a.row.fileId, lines: a.row.lines })),
        );
        await store.noteTouched();
      }
      await store.deleteFacts(retired, true);
      // read again whole under their own ids: a files row a table of the user's refers to is written over, not deleted
      await store.deleteFacts(full.filter((x) => x.stored).map((x) => x.id), true, true);
      await store.deleteFacts(metas.filter((x) => x.stored).map((x) => x.id), true, true);
      await store.prepareAppend(appends.map((a) => ({ fileId: a.row.fileId, provisionalLines: (a.row.parserState?.pending ?? []).map((x) => x.line) })));

      // one options object for every whole-file read: a copy per task was ~50 B × 156,520 on 10 GB
      const whole: ReadOptions = { ...opts.read };
      // The file a task reads (with its stored row when it is an appended read), by the task's
      // position, made when its task is sent and kept until its outcome is taken.
      const reading = new Map<number, { f: FoundFile; row?: FileRow }>();
      const source = (seq: number): { f: FoundFile; row?: FileRow } => {
        let s = reading.get(seq);
        if (!s) reading.set(seq, (s = seq < full.length ? { f: full[seq].f ?? planned.found!.file(full[seq].pos) } : appends[seq - full.length]));
        return s;
      };
      const tasks: TaskList = {
        length: full.length + appends.length,
        get(seq) {
          const { f, row } = source(seq);
          const id = { fileId: row?.fileId ?? full[seq].id, fileAgentId: f.agentId, fileSessionId: f.sessionId };
          const file: FileContext = {
            root: f.root,
            kind: f.kind,
            size: f.size,
            mtimeMs: f.mtimeMs,
            agentId: f.agentId,
            sessionId: row?.sessionId ?? f.sessionId,
            project: decodeProjectDir(f.projectDir),
            synthetic: row?.synthetic ?? 0,
          };
          return row
            ? { path: f.path, id, opts: { ...opts.read, from: row.readTo, linesBefore: row.lines, state: row.parserState ?? undefined }, bytes: f.size - row.readTo, file }
            : { path: f.path, id, opts: whole, bytes: f.size, file };
        },
        bytes: (seq) => (seq < full.length ? (full[seq].f?.size ?? planned.found!.size(full[seq].pos)) : appends[seq - full.length].f.size - appends[seq - full.length].row.readTo),
      };
      let bytesTotal = 0;
      for (let seq = 0; seq < tasks.length; seq++) bytesTotal += tasks.bytes(seq);
      staging = bytesTotal >= (opts.stageBytes ?? STAGE_BYTES);
      // an in-memory store stages in the temp directory (stagePrefix), which the --db check never saw:
      // a TMPDIR inside the logs read is refused before anything is staged (or an old stage removed) there
      if (staging && !store.keepsFiles) {
        refuseInLogs(tmpdir(), { flag: 'the temp directory (TMPDIR)', given: tmpdir(), choose: 'TMPDIR, or a --db PATH', logRoots: rootsRead(opts.paths, opts.env ?? process.env) });
      }
      const w = await store.writer(staging);
      writer = w;
      if (w.stageDir !== null) staged = opts.whileStaging?.(() => w.discard());
      let done = 0;
      let bytes = 0;
      const failed: number[] = [];
      const readSkips: WalkSkip[] = [];
      // this thread's garbage (results taken, .meta.json files read) collected as the reading goes (heap.ts)
      const keepHeap = heapKeeper();
      // observations loaded as the readers hand them on (PIECES_FROM), one after another
      let pieces: Promise<void> = Promise.resolve();
      let piecesLoaded = 0;
      const loadPiece = (path: string) => {
        pieces = pieces.then(async () => {
          if (piecesLoaded === 0) await store.run('SET threads = 1');
          // the load's bound (below) for the observations loaded so far, with ~270 bytes a row
          piecesLoaded += statSync(path).size;
          await store.run(`SET memory_limit = '${Math.ceil(loadMemoryMb(Math.ceil(piecesLoaded / 270)) * scale)}MB'`);
          await w.loadPiece(path);
          stats.pieces++;
        });
        // a failure is taken where the chain is awaited, after the reading
        pieces.catch(() => undefined);
      };
      const inPieces = w.stageDir === null ? null : { from: opts.pieces?.from ?? PIECES_FROM, bytes: opts.pieces?.bytes ?? PIECE_BYTES, done: loadPiece };
      if (tasks.length > 0) opts.progress?.({ phase: 'reading', files: 0, filesTotal: tasks.length, bytes: 0, bytesTotal });

      const read = readAll(tasks, bytesTotal, (o) => {
        keepHeap();
        if ('seqs' in o) {
          // read and staged whole by the reader, `files` rows included
          for (const seq of o.seqs) {
            reading.delete(seq);
            if (seq < full.length) stats.read++;
            else stats.appended++;
          }
          done += o.seqs.length;
          bytes += o.bytesRead;
          stats.bytesRead += o.bytesRead;
          opts.progress?.({ phase: 'reading', files: done, filesTotal: tasks.length, bytes, bytesTotal });
          return;
        }
        const { f, row } = source(o.task.seq);
        reading.delete(o.task.seq);
        done++;
        if ('error' in o) {
          const reason: SkipReason = o.error.code === 'ENOENT' ? 'vanished_file' : 'unreadable_file';
          readSkips.push({ path: f.path, reason, detail: fileErrorDetail(o.error) });
          // a file we cannot read now keeps no row and no facts, so the next run tries it afresh
          failed.push(o.task.id.fileId);
          // (told too: were it the last file, the line would stop short of all files read)
          opts.progress?.({ phase: 'reading', files: done, filesTotal: tasks.length, bytes, bytesTotal });
          return;
        }
        const r = o.result;
        bytes += r.bytesRead;
        stats.bytesRead += r.bytesRead;
        if (row) stats.appended++;
        else stats.read++;
        w.columns(o.columns);
        // written at once: a file's row (with its parser state) is not kept until every file is read
        w.file(fileRowOf({ path: f.path, file: o.task.file! }, r));
        opts.progress?.({ phase: 'reading', files: done, filesTotal: tasks.length, bytes, bytesTotal });
      }, opts.workers, undefined, w.stageDir, inPieces);
      // Subagents' .meta.json files are read here, on this thread, while the workers read the
      // transcripts (7,800 of them are ~0.16 – 0.3 s of a 1 GB cold run); their problems come
      // first. Every META_SLICE files this thread lets the workers' results in: read in one go, it
      // left both workers waiting with AHEAD results untaken for ~0.1 – 0.25 s (pool.ts).
      try {
        for (const [i, m] of metas.entries()) {
          if (i > 0 && i % META_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
          keepHeap();
          const meta = metaRow(m.f ?? planned.found!.file(m.pos), m.id);
          if ('error' in meta) walkSkips.push(meta.error);
          else {
            w.file(meta.row);
            if (meta.skip) w.skips({ fileId: m.id, skipped: [meta.skip] });
          }
        }
      } catch (err) {
        await read.catch(() => undefined); // no worker is left writing behind the rollback
        await pieces.catch(() => undefined); // nor a piece loading
        throw err;
      }
      await read.catch(async (err: unknown) => {
        await pieces.catch(() => undefined);
        throw err;
      });
      await pieces;
      pushAll(walkSkips, readSkips);
      opts.progress?.({ phase: 'storing' });
      // every file is read: the walk's listing and the lists of files (all of them in a first run)
      // go before DuckDB loads
      planned.found = null;
      const fileRows = full.length + appends.length + metas.length;
      full.length = 0;
      appends.length = 0;
      metas.length = 0;
      if (w.stageDir !== null) {
        // bounded for as many observations as the staged files hold (~270 bytes a row in the sample
        // corpus), or for the staged `files` rows, whichever needs more
        const bound = Math.max(loadMemoryMb(Math.ceil(w.stagedBytes('observations') / 270)), filesLoadMemoryMb(w.stagedBytes('files'), fileRows));
        await store.run(`SET memory_limit = '${Math.ceil(bound * scale)}MB'`);
        await store.run('SET threads = 1');
      }
      // This thread only waits from here on: its heap, whose file lists are garbage by now, is given
      // back while DuckDB loads the staged `files` table, the first (heap.ts, writer.ts). Given back
      // during `observations`, after the other tables had grown DuckDB's memory, the cold 10 GB run
      // peaked at ~800 MiB; so, at 560 MiB (1 GB: the same).
      await w.close(() => {
        releaseHeap();
      });
      staging = false; // the staged files are loaded (and removed): later failures are not theirs
      // what a failed appended read held is noted before it goes (its row is gone: read again, then)
      if (touched && failed.length > 0) await store.noteTouched();
      // (with the rows a failed file's reader had handed on in pieces, loaded already)
      await store.deleteFacts(failed, true);
      if (touched) await store.noteTouched();
      // The facts are committed first and de-duplicated in a second transaction: over uncommitted
      // facts the de-dup cannot spill, and a 10 GB corpus ran out of memory at 256 MB.
      // A run stopped between the two leaves derived_for empty, so the next run derives.
      await store.setMeta('derived_for', '');
      await store.setMeta('listing_key', '');
      await store.forget();
      await store.run('COMMIT');
      opts.progress?.({ phase: 'deriving' });
      const [{ n }] = await store.all(`SELECT count(*) AS n FROM observations`);
      const boundDerive = (mb: number) => store.run(`SET memory_limit = '${Math.ceil((lastDerivedFor ? rederiveMemoryMb(mb) : mb) * scale)}MB'`);
      await boundDerive(deriveMemoryMb(n as number));
      await store.run('SET threads = 1');
      await store.run('BEGIN TRANSACTION');
      // the scope as the derived tables have it already (an append run) is not read again: 10 GB of
      // logs' 234,780 ids took 46 – 73 ms to read (7 reads in one process, median 61)
      if (few !== 'same scope') await store.setScope(scope);
      await store.setPrices(opts.prices);
      // A whole derive commits its requests before it derives the chains (Store.derive); derived_for,
      // emptied with the facts, is set only at the end, so a run stopped in between derives again.
      const commit = async () => {
        await store.run('COMMIT');
        await boundDerive(chainsMemoryMb(n as number));
        await store.run('BEGIN TRANSACTION');
      };
      // A whole derive gives this thread's heap back as DuckDB starts it, when it is worth it: a run
      // that appended to a third of 1 GB's transcripts (not staged, so no heap given back during a
      // load) derived with ~69 MB of heap. A touched derive (an append run) does not: its 16 full
      // collections, run beside DuckDB's one thread on a two-core machine, slowed 1 GB append runs:
      // without them a median 897 → 838 ms (8 interleaved pairs), for a peak of 211 → 225 MiB
      // there; on 10 GB they changed neither wall time nor peak (337 against 331 MiB, 3
      // interleaved; BENCHMARKS-log.md, Append, session 30). Until session 29
      // they ran: 1 GB append runs peaked at ~279 instead of ~302 MiB then, and a 10 GB one at 440
      // against 513, before the walk's listing was let go after planning (Memory, session 24).
      await store.derive({ touched, between: commit, whileDeriving: touched ? undefined : () => void releaseHeap() });
      await store.setMeta('derived_for', derivedFor);
      await store.setMeta('derived_prices', pricesKey);
      // a file that could not be read keeps no row and is tried again: the next run is not warm
      const complete = failed.length === 0 && walkSkips.length === problems;
      if (complete) await store.setMeta('listing_key', listing);
      await store.run('COMMIT');
      // derive() began by forgetting every remembered result, in the transaction just committed
      store.resultsForgotten();
      // A run keeps what it is asked next as answers, so that the next run over the same logs
      // answers from them. A run that derived only what its changes touched (an append run, as a
      // rule) keeps them with the base that the next append run adds its new lines to without
      // DuckDB (delta.ts): appended logs tend to grow again. A whole derive (a first run, or one
      // after many changes) keeps them without one (on 10 GB of logs writing one took ~1 s, and
      // ~75 MiB more than such a run's peak: BENCHMARKS-log.md, Append, session 32).
      if (complete) store.keepAnswersAfterChange(listing, touched ? await writeDeltaBase(store, listing, opts.prices) : null);
    } catch (err) {
      await store.run('ROLLBACK').catch(() => undefined);
      throw staging ? stagingFailure(err, store.path) : err;
    } finally {
      writer?.discard();
      staged?.();
    }
  } finally {
    await unbound().catch(() => undefined);
  }
  stats.ms = performance.now() - started;
  return { store, roots, stats, walkSkips };
}

/** System errors that say the staged facts could not be written where the store stages them. */
const STAGING_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO', 'EMFILE', 'ENFILE']);

/**
 * A failure to write the staged facts (a full disk, a read-only directory), thrown by the main
 * thread or by a reader worker (as the cause of the pool's error), as one line rather than a bug;
 * any other error as it is. It happens before the facts' commit, so nothing of the run is kept.
 * Example: ENOSPC while a worker writes → "cannot stage the facts in /home/u/.cache/cachelens:
 * ENOSPC: no space left on device, write".
 */
function stagingFailure(err: unknown, dbPath: string): unknown {
  const e = err as Error & { cause?: unknown };
  const sys = [e, e?.cause].find((x): x is NodeJS.ErrnoException => typeof (x as NodeJS.ErrnoException | undefined)?.code === 'string' && STAGING_ERRORS.has((x as NodeJS.ErrnoException).code!));
  if (!sys) return err;
  const where = dbPath === ':memory:' ? tmpdir() : dirname(dbPath);
  return new UsageError(
    `cannot stage the facts in ${where}: ${sys.message.split('\n')[0]}`,
    'reading many logs at once stages their facts beside the store (about a tenth of their size); free disk there, or choose another --db',
  );
}

/**
 * Whether re-deriving only what the changed files touch is both exact and worth it: the derived
 * tables are those of the last scope, every file that entered or left the scope is among the
 * changed ones (files of other roots left the scope otherwise: derive all), and they are few
 * (a quarter of the scope or more, e.g. a first run, is derived faster as a whole). When it is,
 * 'same scope' says no file entered or left it (an append run's usual case).
 * `weight` counts the changed files, an appended one as the share of its bytes that is new
 * (Store.noteTouched notes only the requests its new lines name): counted whole, one response
 * appended to the only transcript, a session of 274,000 requests, derived all of them again
 * (BENCHMARKS-log.md, Append, session 27).
 */
async function fewChanged(store: Store, scope: number[], changedIds: number[], weight: number, share: number): Promise<false | 'few' | 'same scope'> {
  if (weight > share * scope.length) return false;
  const before = await store.derivedScope();
  const now = Int32Array.from(scope).sort();
  const changed = new Set(changedIds);
  // both in order: an id in one of them only must be a changed file's
  let i = 0;
  let j = 0;
  let same = true;
  while (i < before.length || j < now.length) {
    if (j === now.length || (i < before.length && before[i] < now[j])) {
      if (!changed.has(before[i++])) return false;
      same = false;
    } else if (i === before.length || now[j] < before[i]) {
      if (!changed.has(now[j++])) return false;
      same = false;
    } else {
      i++;
      j++;
    }
  }
  return same ? 'same scope' : 'few';
}

/** The stats of a run that found every one of its `files` unchanged. */
function unchangedStats(files: number, started: number): IngestStats {
  return { files, unchanged: files, read: 0, appended: 0, retired: 0, bytesRead: 0, derived: 'none', planned: 'none', pieces: 0, ms: performance.now() - started };
}

/** What ingestInto needs of a walk besides its files. */
function walkSummary(d: Discovery, prices: PriceTable) {
  return {
    roots: d.roots,
    walkSkips: d.problems.map((p): WalkSkip => ({ path: p.path, reason: p.reason, detail: p.detail })),
    problems: d.problems.length,
    listing: listingKey(d, prices),
    files: fileCount(d),
  };
}

/**
 * A file to read (again) from its start, by its position in the walk's listing (its object is made
 * when it is read); `stored`: it has a row and facts in the store, to be replaced.
 */
interface FullRead {
  pos: number;
  id: number;
  stored: boolean;
  /** the file, once taken out of the walk's listing (a run that reads few files whole, and a grown file read whole again: plan) */
  f?: FoundFile;
}

/**
 * What changed between the walk's files and the store's, with a file id for every found file in
 * walk order (`scope`). It takes the file list out of `lists` and finds the stored one itself
 * (storedFiles: the listing snapshot, or the files table). Both are compared as columns, position
 * by position, and the files to read whole come back as positions
 * in the walk's listing (`found`), each made an object only when it is read: an object for every
 * found and every stored file made the peaks of 10 GB runs, append and cold (BENCHMARKS-log.md, Memory).
 * It keeps the next run's listing snapshot (`listing`: the walk's listing key), and in a run that
 * reads few files whole it lets the walk's listing go (`found` null) before DuckDB reads anything
 * more: every file it hands on is then an object.
 */
async function plan(store: Store, lists: Listing, stats: IngestStats, listing: string) {
  const roots = lists.discovery!.roots;
  let found: FileListing | null = fileListing(lists.discovery!);
  lists.discovery = undefined;
  let stored: StoredFiles | null = await storedFiles(store, found, roots);
  let nextId = stored.nextId;
  const scope: number[] = [];
  const full: FullRead[] = [];
  const metas: FullRead[] = [];
  // changed transcripts read before, by position: appended to, or to be read again (their whole rows decide)
  const grown: number[] = [];
  const grownIds: number[] = [];
  const seen = new Uint8Array(stored.fileId.length);
  for (let pos = 0; pos < found.count; pos++) {
    const at = stored.at[pos];
    const kind = found.kind(pos);
    const id = at < 0 ? nextId++ : stored.fileId[at];
    scope.push(id);
    if (at >= 0) {
      seen[at] = 1;
      if (stored.size[at] === found.size(pos) && stored.mtimeMs[at] === found.mtimeMs(pos) && stored.kind[at] === kind) {
        stats.unchanged++;
        continue;
      }
    }
    if (kind === META) metas.push({ pos, id, stored: at >= 0 });
    else if (at >= 0 && stored.kind[at] === kind) {
      grown.push(pos);
      grownIds.push(id);
    } else full.push({ pos, id, stored: at >= 0 });
  }
  const retired = stored.retired(seen);
  stats.retired = retired.length;
  const fromSnapshot = stored.snapshot;
  stored = null;
  // The next run's listing snapshot, made and kept while the walk's listing is at hand: it holds
  // once the store's listing key is this one, which only a run that ends whole sets.
  store.keepListingSnapshot(encodeSnapshot(found, scope, roots, listing));
  const grownFiles = grown.map(found.file);
  // A run that reads few files whole (an append run: the files changed beyond an append, and
  // .meta.json files) takes them out of the walk's listing here and lets the listing go before
  // DuckDB reads the grown files' rows and notes what the changed files touch, rather than once
  // every file is read: on 10 GB of logs that is 69 MB of text, and the append run peaked in
  // its plan (BENCHMARKS-log.md, Memory, session 24; Append, session 31). A large one is collected
  // here: left to V8, it was collected before the noting in one traced 10 GB append run (peak
  // 315 MiB) and held through it in another (353). By two collections: one that finds V8's
  // incremental marking under way (the plan's JavaScript allocates) finishes it, and what that
  // marking had reached survives it; with one, 10 GB append runs kept the listing to their end in
  // ~1 of 4 runs (401 – 419 MiB against 318 – 350), with two in none of 8 (323 – 339).
  if (full.length + metas.length <= FEW_WHOLE_READS * found.count) {
    for (const x of full) x.f = found.file(x.pos);
    for (const x of metas) x.f = found.file(x.pos);
    const files = found.count;
    found = null;
    if (files >= COLLECT_LISTING_FILES) releaseHeap(2, 0);
  }

  const appends: { f: FoundFile; row: FileRow }[] = [];
  const rows = await store.fileRows(grownIds);
  grownFiles.forEach((f, k) => {
    const row = rows.get(grownIds[k])!;
    // an append only when the file grew: one of the same size with another mtime was rewritten
    // (an edit the head-and-tail fingerprint cannot see), and is read again whole
    if (f.size > row.readTo && row.parserState) {
      const fp = tryFingerprint(f.path, row.readTo);
      if (fp !== null && fp === row.headHash) {
        appends.push({ f, row });
        return;
      }
    }
    full.push({ pos: grown[k], id: grownIds[k], stored: true, f });
  });
  return { scope, found, full, appends, metas, retired, fromSnapshot };
}

/**
 * The stored files a plan compares the walk with: their ids, kinds (kindCode), sizes and mtimes,
 * which of them each walked file is (by position; −1 for none), the next free file id, and which
 * unseen ones this walk's roots hold (gone, to be retired).
 */
interface StoredFiles {
  fileId: ArrayLike<number>;
  kind: ArrayLike<number>;
  size: ArrayLike<number>;
  mtimeMs: ArrayLike<number>;
  at: Int32Array;
  nextId: number;
  retired(seen: Uint8Array): number[];
  snapshot: boolean;
}

/**
 * The stored files (StoredFiles): from the listing snapshot when it holds (listing-snapshot.ts),
 * else from the files table, every path read as a string into a map.
 */
async function storedFiles(store: Store, found: FileListing, roots: string[]): Promise<StoredFiles> {
  const kept = await store.listingSnapshot();
  const snap = kept && decodeSnapshot(kept.data);
  // The files table holds exactly the snapshot's files (none of other roots, ingested before),
  // and every one of them was walked under these roots.
  const holds = kept && snap && kept.listed && snap.key === kept.listed && JSON.stringify(snap.roots) === JSON.stringify(roots);
  const at = holds && snap.count === kept.files && snap.maxId === kept.maxId && snap.idSum === kept.idSum ? matchSnapshot(found, snap) : null;
  if (snap && at) {
    const { fileId, kind, size, mtimeMs, maxId } = snap;
    return { fileId, kind, size, mtimeMs, at, nextId: maxId + 1, retired: (seen) => [...fileId.filter((_, k) => !seen[k])], snapshot: true };
  }
  const known = await store.knownFiles();
  const atKnown = new Int32Array(found.count);
  found.each((path, _kind, _size, _mtimeMs, pos) => {
    atKnown[pos] = known.at.get(path) ?? -1;
  });
  // files under this invocation's roots that are gone, by id
  const retired = (seen: Uint8Array) => {
    const out: number[] = [];
    for (const [path, k] of known.at) if (!seen[k] && roots.some((root) => path === root || path.startsWith(root + '/'))) out.push(known.fileId[k]);
    return out;
  };
  const { fileId, kind, size, mtimeMs } = known;
  // the files' largest id was read with the snapshot's checks, when there is a snapshot file
  return { fileId, kind, size, mtimeMs, at: atKnown, nextId: kept ? kept.maxId + 1 : await store.nextFileId(), retired, snapshot: false };
}

const META = kindCode('meta');

/**
 * What a warm run compares: the roots, every found file's path, kind, size and mtime, and the
 * prices. The last ingest that left the store whole stores its key (an ingest that changes the
 * store clears it first); the same key now means there is nothing to read, retire or derive, and
 * the stored files need not be loaded (~0.1 s on 23,000 files). The files are hashed as columns
 * (listingDigest), by the early walk on its own thread: one hash of 23,000 files took ~55 ms here.
 * Example: appending a line to one transcript changes its size, so its key and this one's change.
 */
export function listingKey(discovery: Discovery, prices: PriceTable): string {
  return listingKeyOf(discovery.roots, listingDigest(discovery), prices);
}

/** listingKey of a walk of `roots` whose listing digest is `digest`. */
function listingKeyOf(roots: string[], digest: string, prices: PriceTable): string {
  return createHash('sha1')
    .update(JSON.stringify([roots, digest, [...prices.entries()]]))
    .digest('hex');
}

/** The fingerprint of a file's bytes up to readTo (appendFingerprint), or null when it cannot be read now or is no append. */
function tryFingerprint(path: string, readTo: number): string | null {
  try {
    return appendFingerprint(path, readTo);
  } catch {
    return null;
  }
}

/**
 * A subagent's .meta.json. One that cannot be read now keeps no row (like a transcript, so the next
 * run tries it afresh); one that is not a JSON object is stored and its skip reported. Either way
 * only the agent type is lost: the chain falls back to its spawning tool_use. Read synchronously:
 * they are a few hundred bytes each, and a promise per file made 7,800 of them take ~2 s.
 */
function metaRow(f: FoundFile, id: number): { row: FileRow; skip?: SkippedLine } | { error: WalkSkip } {
  let text: string;
  try {
    text = readFileSync(f.path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { error: { path: f.path, reason: e.code === 'ENOENT' ? 'vanished_file' : 'unreadable_file', detail: fileErrorDetail(e) } };
  }
  let agentType: string | null = null;
  let toolUseId: string | null = null;
  let skip: SkippedLine | undefined;
  try {
    // a byte-order mark is no fault (transcripts and --pricing files are read past one too)
    const m = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) skip = { fileId: id, line: 1, reason: 'not_an_object', detail: 'meta.json is not a JSON object' };
    else {
      const o = m as Record<string, unknown>;
      // an empty agentType names no type (as an empty subagent_type does): the spawn's stands
      agentType = str(o.agentType);
      toolUseId = str(o.toolUseId);
      // a too long one (line.ts longText) by its opening, length and hash, and said, as a transcript's
      const long: string[] = [];
      if (agentType !== null && agentType.length > SHORT_STRING) {
        long.push(`agentType of ${agentType.length.toLocaleString('en-US')} characters`);
        agentType = longText(agentType);
      }
      if (toolUseId !== null && toolUseId.length > SHORT_STRING) {
        long.push(`toolUseId of ${toolUseId.length.toLocaleString('en-US')} characters`);
        toolUseId = longText(toolUseId);
      }
      if (long.length) skip = { fileId: id, line: 1, reason: 'invalid_field', detail: `${long.join(', ')}: read as its first characters, its length and a hash` };
    }
  } catch (err) {
    skip = { fileId: id, line: 1, reason: 'invalid_json', detail: (err as Error).message.slice(0, 200) };
  }
  const row: FileRow = {
    fileId: id,
    path: f.path,
    root: f.root,
    kind: 'meta',
    size: f.size,
    mtimeMs: f.mtimeMs,
    readTo: f.size,
    lines: 0,
    headHash: '',
    sessionId: f.sessionId,
    agentId: f.agentId,
    project: decodeProjectDir(f.projectDir),
    synthetic: 0,
    metaAgentType: agentType,
    metaToolUseId: toolUseId,
    parserState: null,
  };
  return { row, skip };
}
