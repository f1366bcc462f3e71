/**
 * The DuckDB store (SPEC §7): one file (default ~/.cache/cachelens/store.duckdb, `--db PATH`,
 * `:memory:` allowed) that ingest fills with the appender and every analysis reads with SQL.
 */
import { accessSync, constants, existsSync, lstatSync, readdirSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { DuckDBConnection, DuckDBInstance, DuckDBValueConverter } from '@duckdb/node-api';
import { dropAnswers, storeIdentity, writeAnswers } from './answers.js';
import { streamChunks, tracked } from './connection.js';
import { duckdb, loadDuckdb, MACROS, openingOptions } from './duckdb.js';
import { makeDirs, unsearchable } from './dirs.js';
import { readBeside, running } from './location.js';
import { printedValue } from './query-values.js';
import { UsageError } from '../errors.js';
import type { ChainFacts, ParserState } from '../ingest/file-parser.js';
import { heapKeeper } from '../ingest/heap.js';
import { LISTING_SUFFIX } from '../ingest/listing-snapshot.js';
import type { PriceTable } from '../pricing/pricing.js';
import {
  CREATE_TABLES,
  DERIVE_CHAINS,
  DERIVE_LINE_COPIES,
  DERIVE_REQUESTS,
  DERIVE_TOUCHED_CHAINS,
  DERIVE_TOUCHED_LINE_COPIES,
  DERIVE_TOUCHED_REQUESTS,
  FACT_TABLES,
  FORMER_TABLES,
  LATER_TABLES,
  SCHEMA_VERSION,
  STORE_COLUMNS,
} from './schema.js';
import { StoreWriter, stagePrefix } from './writer.js';

export interface FileRow {
  fileId: number;
  path: string;
  root: string;
  kind: 'main' | 'subagent' | 'meta';
  size: number;
  mtimeMs: number;
  readTo: number;
  lines: number;
  headHash: string;
  sessionId: string | null;
  agentId: string | null;
  project: string;
  synthetic: number;
  metaAgentType: string | null;
  metaToolUseId: string | null;
  parserState: ParserState | null;
}

/**
 * The stored files as a run first sees them: enough to tell whether each changed since it was
 * read. Columns by position, and each path's position; no object per file (156,520 of them were
 * most of a 10 GB append run's peak, BENCHMARKS-log.md Memory).
 */
export interface KnownFiles {
  /** path → position in the columns */
  at: Map<string, number>;
  fileId: Float64Array;
  /** main 0, subagent 1, meta 2 (early-walk.ts kindCode) */
  kind: Uint8Array;
  size: Float64Array;
  mtimeMs: Float64Array;
}

export type Row = Record<string, unknown>;

export { defaultDbPath } from './location.js';

/** What a connection beside the store's own (Store.beside) can answer. */
export type StoreReader = Pick<Store, 'all' | 'chunks'>;

/**
 * DuckDB's memory bound (MB) while the analyses read every request (the report, anatomy, the
 * what-ifs; Store.boundedMemory): the chains' stream sorts within it, spilling beyond it, beside
 * the report's own queries. 10 GB of sample logs need more than 160 MB (BENCHMARKS-log.md Report).
 */
export const ANALYSIS_MEMORY_MB = 256;

/**
 * DuckDB's memory bound (MB) while `sessions` and `blocks` answer (Store.boundedMemory): after an
 * ingest changed the store they run their bundled queries and keep the results, and the commit of
 * those can fold the write-ahead log into the store file. Unbounded, the 10 GB sample logs' append
 * run peaked there (~400 MiB: the summary query, its 5.3 MB result, the fold); within 128 MB at
 * ~340 MiB (256 MB: no lower), and 1 GB append runs took as long (BENCHMARKS-log.md Memory). `sessions`
 * over 10 GB runs out of memory at 64 MB (and runs again unbounded: 416 MiB).
 * A warm run reads the results remembered and runs no query.
 */
export const QUERY_MEMORY_MB = 128;

/**
 * The same bound for `summary`, whose queries group the requests into a row per day, model and
 * project (~23,000 on 10 GB of sample logs) and need little beyond the blocks they scan, which
 * DuckDB keeps cached up to its bound: 10 GB append runs reached 290 – 291 MiB in their summary at
 * 64 MB, against 326 – 350 at 128 (two runs each, sampled; the summary query alone added nothing
 * to RSS at 64 MB). 1 GB append runs took as long (8 pairs:
 * median 2587 against 2561 ms) with the same output (BENCHMARKS-log.md Memory).
 */
export const SUMMARY_MEMORY_MB = 64;

/** One chunk of a streamed result (DuckDB's, up to 2,048 rows): a column's value at a row by getItem. */
export interface ResultChunk {
  rowCount: number;
  column(c: number): { getItem(row: number): unknown };
}

export class Store {
  /** The remembered results as readAhead found them, by key, while they are known to be current. */
  private ahead: Map<string, string> | undefined;
  /** while the results table holds only what this process kept since it was emptied: those keys (resultsForgotten) */
  private emptied: Set<string> | undefined;
  /** the listing key to keep answers for when this store closes (keepAnswers) */
  private answersFor: string | undefined;
  /** the token of the base file written beside the store for those answers (delta.ts), if one was */
  private baseToken: string | undefined;
  /** DuckDB's memory limit before boundedMemory first bounded it (as DuckDB shows it) */
  private unboundedLimit: string | undefined;
  /** connections opened by `beside`, closed with this one */
  private readonly sides: DuckDBConnection[] = [];
  /** the foreign keys of the user's tables to files and results (RowGuard) */
  private guards: RowGuard[] = [];
  /** appended files whose `files` rows a user's row refers to: written over in place (INSERT OR REPLACE), not deleted (prepareAppend) */
  private replacing = new Set<number>();
  /** files read again whole under their own file id whose `files` rows a user's row refers to: written over in place likewise (deleteFacts) */
  private rereading = new Set<number>();

  private constructor(
    readonly path: string,
    private instance: DuckDBInstance,
    public db: DuckDBConnection,
    /** true when the store was (re)built empty in this open */
    readonly fresh: boolean,
    /**
     * why the store file cannot be written (readOnlyReason: "its file is not writable"), when it
     * cannot: it was opened READ_ONLY, or copied into memory (`copied`) for a run that must write
     */
    readonly readOnly: string | null = null,
    private copied = false,
  ) {}

  /**
   * Whether the files kept beside the store (its answers, listing snapshot, delta base, staged
   * facts) are written there: not for `:memory:`, nor beside a read-only store, which is only read.
   */
  get keepsFiles(): boolean {
    return this.path !== ':memory:' && this.readOnly === null;
  }

  /**
   * A read-only store this run must write (the logs changed since it was written): from here on the
   * store is a copy of it in memory, which this run brings up to date and answers from and which
   * is not kept. `why` ends the note said (`onNote`). Nothing for a writable store or a copy.
   * Example: `the logs changed since it was written`.
   */
  async copyToMemory(why: string, onNote?: (line: string) => void): Promise<void> {
    if (this.readOnly === null || this.copied) return;
    for (const side of this.sides.splice(0)) side.closeSync();
    this.db.closeSync();
    this.instance.closeSync();
    ({ instance: this.instance, db: this.db } = await memoryCopy(this.path, true));
    this.copied = true;
    onNote?.(readOnlyNote(this.path, this.readOnly, why));
  }

  static async open(path: string, opts: StoreOpenOptions = {}): Promise<Store> {
    // DuckDB takes "" for an in-memory database: `--db=` must not silently keep nothing
    if (path === '') throw new UsageError('--db: expected a file name (or :memory:)');
    let readOnly: string | null = null;
    if (path !== ':memory:') {
      makeStoreDir(path);
      refuseUnwritableDir(path);
      readOnly = readOnlyReason(path);
    }
    // a store that cannot be written is opened READ_ONLY: every command but a remembered summary
    // failed on it ("cannot open store …: Permission denied"); one the system refuses to open for
    // writing all the same (a read-only file system, an immutable file) is too
    const opened = await openLocked(path, opts, readOnly !== null);
    readOnly ??= opened.readOnly;
    if (readOnly !== null && opts.rebuild) {
      opened.instance.closeSync();
      throw new UsageError(`store ${path} is read-only (${readOnly}): --rebuild cannot replace it`, 'make it writable, or use --db to choose another store');
    }
    let instance = opened.instance;
    if (path !== ':memory:' && readOnly === null) removeLeftSpill(path);
    let db = tracked(await instance.connect());
    let prepared: Prepared;
    let copied = false;
    try {
      await db.run(DURABILITY + MACROS);
      let ready = await prepare(db, path, opts, readOnly === null);
      if ('mustWrite' in ready) {
        // a read-only store this build must mend or upgrade first: a copy of it in memory (none of
        // its tables for an older layout, which is read again from the logs), which is not kept
        db.closeSync();
        instance.closeSync();
        ({ instance, db } = await memoryCopy(path, ready.copy));
        copied = true;
        opts.onNote?.(readOnlyNote(path, readOnly!, ready.mustWrite));
        ready = await prepare(db, path, opts, true);
        if ('mustWrite' in ready) throw new Error(`the copy in memory of store ${path} cannot be written`);
      }
      prepared = ready;
    } catch (err) {
      db.closeSync();
      instance.closeSync();
      if (err instanceof UsageError) throw err;
      const full = noSpace(path, err);
      if (full !== null) throw full;
      throw new UsageError(`store ${path} is unreadable: ${(err as Error).message.split('\n')[0]}`, 'run with --rebuild, or delete the file');
    }
    // said once the mend is committed: what a query of the user's did to the store, and what became of it
    // (of a copy in memory, its note said it)
    if (!copied) for (const n of prepared.notes) opts.onNote?.(`cachelens: store ${path}: ${n}`);
    const store = new Store(path, instance, db, prepared.fresh, readOnly, copied);
    store.guards = prepared.guards;
    return store;
  }

  close(): void {
    const keep = this.answersFor !== undefined && this.ahead !== undefined && this.keepsFiles && chars(this.ahead) <= READ_AHEAD_CHARS;
    // the store's identity while this process holds it; the answers are kept only if closing leaves
    // it so (DuckDB does not fold its log in at a close here: DURABILITY)
    const held = keep ? storeIdentity(this.path) : null;
    for (const side of this.sides) side.closeSync();
    this.db.closeSync();
    this.instance.closeSync();
    if (held !== null) {
      const base = this.baseToken ? { token: this.baseToken, listing: this.answersFor!, results: this.ahead! } : undefined;
      writeAnswers(this.path, held, this.answersFor!, this.ahead!, base);
    }
  }

  /**
   * Keeps the remembered results, and `listing` as the listing key they answer for, in the answers
   * file beside the store when it closes (answers.ts), so that the next run over the same logs
   * answers from there. For a run that found the store at `listing` and changed nothing (a warm
   * run): what it remembers before it closes is kept too. Nothing is kept when the results were
   * not all read ahead, are more than READ_AHEAD_CHARS in all, or were forgotten since. `baseToken`:
   * the token of the base file written for the store as it is (delta.ts), which the answers name.
   */
  keepAnswers(listing: string, baseToken?: string | null): void {
    this.answersFor = listing;
    this.baseToken = baseToken ?? undefined;
  }

  /**
   * keepAnswers for a run that has just changed the store and committed (resultsForgotten): the
   * results table is empty, so what this process remembers from now on is all of it.
   */
  keepAnswersAfterChange(listing: string, baseToken: string | null): void {
    this.ahead = new Map();
    this.keepAnswers(listing, baseToken);
  }

  async all(sql: string, params?: Record<string, unknown>): Promise<Row[]> {
    return allRows(this.db, this.path, sql, params);
  }

  /** A query's result as `cachelens query` prints it (queryTable): its columns, even without rows. */
  async table(sql: string, params?: Record<string, unknown>): Promise<QueryTable> {
    try {
      return queryTable(await readStatements(this.db, sql, params));
    } catch (err) {
      // a user's query reading or writing a file of its own that is not there is the query's failure:
      // taken for the store's, it said `store … is damaged … (delete it, …)`
      throw ownFileError(this.path, err) ? err : damaged(this.path, err);
    }
  }

  /**
   * A second connection to the store, for reads that run beside this connection's work: DuckDB
   * answers each connection's query on its own threads, so a query sent here while this thread
   * computes in JS costs it no wait. It sees what was committed; it closes with the store, so
   * every query sent on it must have finished by then (closed under a running query, the close
   * waited forever in a test).
   */
  async beside(): Promise<StoreReader> {
    let db: DuckDBConnection;
    try {
      db = tracked(await this.instance.connect());
      await db.run(MACROS);
    } catch (err) {
      throw damaged(this.path, err);
    }
    this.sides.push(db);
    return {
      all: (sql, params) => allRows(db, this.path, sql, params),
      chunks: (sql, params, opts) => chunksOf(db, this.path, sql, params, opts?.keepHeap),
    };
  }

  /**
   * A result read a chunk at a time, for the analyses that read every request without holding
   * them all: DuckDB keeps what is not yet read (a sort spills beyond its memory limit), and this
   * thread holds one chunk. Read it to the end before this connection runs anything else: a new
   * query on it ends the stream. `keepHeap`: the caller lets go of what it made of each chunk, so
   * the heap is collected as it grows (heapKeeper) rather than left to pile up with garbage.
   */
  chunks(sql: string, params?: Record<string, unknown>, opts: { keepHeap?: boolean } = {}): AsyncGenerator<ResultChunk> {
    return chunksOf(this.db, this.path, sql, params, opts.keepHeap);
  }

  /**
   * Runs `work` with DuckDB's memory bounded (`mb`, default ANALYSIS_MEMORY_MB), so that what it
   * queries and sorts spills rather than growing with the logs; DuckDB's bound of before is set
   * back after it. Should it run out of memory within the bound (a DuckDB error, or a result `ranOut`
   * says holds one: it is given outOfMemory to tell), it runs again without the bound: slower,
   * never a lost answer. When DuckDB refuses the bound (it cannot free enough of what it holds
   * to fit it) the work runs once, without it, or `refused` answers in its place (work that must
   * not run unbounded: delta.ts writeDeltaBase).
   * Example: the report over 10 GB of sample logs, within 256 MB.
   */
  async boundedMemory<T>(
    work: () => Promise<T>,
    opts: { mb?: number; ranOut?: (result: T, outOfMemory: (err: unknown) => boolean) => boolean; refused?: () => T } = {},
  ): Promise<T> {
    // DuckDB's bound as this store first found it, set back after (RESET changes the setting DuckDB
    // reports, not its buffer pool's limit; and each read and set of the rounded text, '18.7 GiB',
    // loses a little)
    this.unboundedLimit ??= String((await this.all(`SELECT current_setting('memory_limit') AS l`))[0].l);
    const limit = this.unboundedLimit;
    const unbound = () => this.run(`SET memory_limit = '${limit.replaceAll("'", '')}'`);
    try {
      await this.run(`SET memory_limit = '${Number(opts.mb ?? ANALYSIS_MEMORY_MB)}MB'`);
    } catch (err) {
      if (!outOfMemory(err)) throw err;
      // the failed SET still changed the setting DuckDB reports
      await unbound();
      return opts.refused ? opts.refused() : work();
    }
    let bounded: { result: T } | undefined;
    try {
      bounded = { result: await work() };
    } catch (err) {
      if (!outOfMemory(err)) throw err;
    } finally {
      await unbound();
    }
    if (bounded && !opts.ranOut?.(bounded.result, outOfMemory)) return bounded.result;
    return work();
  }

  async run(sql: string): Promise<void> {
    try {
      await this.db.run(sql);
    } catch (err) {
      throw damaged(this.path, err);
    }
  }

  /**
   * Every stored file's identity and what tells whether it changed (path, kind, size, mtime):
   * what a run needs of all of them, as columns (KnownFiles).
   */
  async knownFiles(): Promise<KnownFiles> {
    try {
      const [[count]] = (await this.db.runAndReadAll(`SELECT count(*)::INTEGER FROM files`)).getRows() as number[][];
      const known: KnownFiles = { at: new Map(), fileId: new Float64Array(count), kind: new Uint8Array(count), size: new Float64Array(count), mtimeMs: new Float64Array(count) };
      // Streamed a chunk at a time: the paths as one string_agg took as long (~1.2 s for 234,780
      // files) and ~130 MiB more memory, returning a 37 MB string from DuckDB (BENCHMARKS-log.md).
      // In the table's order: positions need no order, and sorting by file id cost ~25 ms on 1 GB.
      const chunks = streamChunks(
        this.db,
        `SELECT path, file_id::DOUBLE, CASE kind WHEN 'main' THEN 0 WHEN 'subagent' THEN 1 ELSE 2 END::UTINYINT, size::DOUBLE, mtime_ms::DOUBLE FROM files`,
      );
      let n = 0;
      for await (const chunk of chunks) {
        const [path, fileId, kind, size, mtimeMs] = Array.from({ length: 5 }, (_, c) => chunk.getColumnVector(c));
        for (let i = 0; i < chunk.rowCount && n < count; i++, n++) {
          known.at.set(path.getItem(i) as string, n);
          known.fileId[n] = fileId.getItem(i) as number;
          known.kind[n] = kind.getItem(i) as number;
          known.size[n] = size.getItem(i) as number;
          known.mtimeMs[n] = mtimeMs.getItem(i) as number;
        }
      }
      return known;
    } catch (err) {
      throw damaged(this.path, err);
    }
  }

  /** The whole rows of these files (the few that changed), by file id. */
  async fileRows(fileIds: number[]): Promise<Map<number, FileRow>> {
    const out = new Map<number, FileRow>();
    if (fileIds.length === 0) return out;
    const rows = await this.all(`SELECT * FROM files WHERE file_id IN (SELECT unnest(${intList(fileIds)}))`);
    // a parser state's chains are the file's chain_facts rows, in the order they were written
    // (storedParserState); read only for the files that have a state
    const chains = new Map<number, ChainFacts[]>();
    const stated = rows.filter((r) => r.parser_state !== null).map((r) => r.file_id as number);
    if (stated.length > 0) {
      const facts = await this.all(
        `SELECT file_id, chain_id, session_id, agent_id, kind, rounds, compactions, requests, first_t, last_key FROM chain_facts WHERE file_id IN (SELECT unnest(${intList(stated)})) ORDER BY rowid`,
      );
      for (const c of facts) {
        const list = chains.get(c.file_id as number) ?? [];
        list.push({
          chainId: c.chain_id as string,
          sessionId: c.session_id as string,
          agentId: c.agent_id as string | null,
          kind: c.kind as ChainFacts['kind'],
          rounds: c.rounds as number,
          compactions: c.compactions as number,
          requests: c.requests as number,
          firstT: c.first_t as number,
          lastKey: c.last_key as string | null,
        });
        chains.set(c.file_id as number, list);
      }
    }
    for (const r of rows) {
      let state: ParserState | null | undefined;
      out.set(r.file_id as number, {
        fileId: r.file_id as number,
        path: r.path as string,
        root: r.root as string,
        kind: r.kind as FileRow['kind'],
        size: r.size as number,
        mtimeMs: r.mtime_ms as number,
        readTo: r.read_to as number,
        lines: r.lines as number,
        headHash: r.head_hash as string,
        sessionId: r.session_id as string | null,
        agentId: r.agent_id as string | null,
        project: r.project as string,
        synthetic: r.synthetic as number,
        metaAgentType: r.meta_agent_type as string | null,
        metaToolUseId: r.meta_tool_use_id as string | null,
        // parsed only for the few files that grew: most runs leave most files untouched
        get parserState() {
          return (state ??= r.parser_state ? { ...(JSON.parse(r.parser_state as string) as Omit<ParserState, 'chains'>), chains: chains.get(r.file_id as number) ?? [] } : null);
        },
      });
    }
    return out;
  }

  /**
   * The listing snapshot kept beside the store (ingest/listing-snapshot.ts), with what tells
   * whether it holds: the listing key the store is at now, and the files table's count, largest
   * and summed file id. Null when there is none (or it cannot be read).
   */
  async listingSnapshot(): Promise<{ data: Uint8Array; listed: string | null; files: number; maxId: number; idSum: number } | null> {
    if (this.path === ':memory:') return null;
    let data: Uint8Array;
    try {
      data = readBeside(this.path + LISTING_SUFFIX);
    } catch {
      return null;
    }
    const [r] = await this.all(`SELECT (SELECT value FROM meta WHERE key = 'listing_key') AS listed, count(*)::DOUBLE AS files,
        coalesce(max(file_id), 0)::DOUBLE AS max_id, coalesce(sum(file_id), 0)::DOUBLE AS id_sum FROM files`);
    return { data, listed: r.listed as string | null, files: r.files as number, maxId: r.max_id as number, idSum: r.id_sum as number };
  }

  /**
   * Keeps `data` as the listing snapshot, in a file beside the store (kept in the store, its
   * ~1.3 MB a run on 1 GB of logs filled the write-ahead log, whose fold into the store then came
   * every other append run). It holds only while the store's listing key is the one it carries,
   * so it may be written before the run that planned it commits. Not kept when it cannot be
   * written: it only saves time.
   */
  keepListingSnapshot(data: Uint8Array | null): void {
    if (!this.keepsFiles) return;
    const file = this.path + LISTING_SUFFIX;
    try {
      if (data === null) rmSync(file, { force: true });
      else {
        writeFileSync(file + '.tmp', data);
        renameSync(file + '.tmp', file);
      }
    } catch {
      // e.g. a full disk: the next run reads the stored files instead; the part written goes
      rmSync(file + '.tmp', { force: true });
    }
  }

  async nextFileId(): Promise<number> {
    const [r] = await this.all(`SELECT coalesce(max(file_id), 0) + 1 AS id FROM files`);
    return r.id as number;
  }

  /**
   * Removes every fact of these files (before a full re-read, or when they are retired). `reread`:
   * the files are read again whole under the same file ids, so a `files` row a row of the user's
   * refers to is kept, and written over in place by the writer (INSERT OR REPLACE, as an appended
   * file's: prepareAppend), not deleted; a log touched (same bytes, a new mtime) or rewritten refused
   * every later run. Rows that must go (a log gone, a read that failed) are still refused.
   */
  async deleteFacts(fileIds: number[], alsoFileRows: boolean, reread = false): Promise<void> {
    if (fileIds.length === 0) return;
    await this.db.run(`CREATE OR REPLACE TEMP TABLE doomed AS SELECT unnest(${intList(fileIds)}) AS file_id`);
    const kept = new Set<number>();
    if (alsoFileRows && reread) {
      for (const g of this.guards.filter((x) => x.to === 'files')) {
        const on = g.columns.map((c, i) => `u.${ident(c)} = f.${ident(g.referred[i]!)}`).join(' AND ');
        const rows = await this.all(`SELECT DISTINCT f.file_id AS id FROM ${ident(g.table)} u JOIN files f ON ${on} WHERE f.file_id IN (SELECT file_id FROM doomed)`);
        for (const r of rows) kept.add(Number(r.id));
      }
      for (const id of kept) this.rereading.add(id);
    } else if (alsoFileRows) await this.refuseReferred('files', `f.file_id IN (SELECT file_id FROM doomed)`);
    for (const t of FACT_TABLES) await this.db.run(`DELETE FROM ${t} WHERE file_id IN (SELECT file_id FROM doomed)`);
    if (alsoFileRows) await this.db.run(`DELETE FROM files WHERE file_id IN (SELECT file_id FROM doomed)${kept.size > 0 ? ` AND file_id NOT IN (SELECT unnest(${intList([...kept])}))` : ''}`);
  }

  /**
   * Refuses, in one line naming the user's table, a run that must delete rows of `to` (those
   * `where` picks, the table as `f`) that a row of a table of the user's refers to by a foreign
   * key: DuckDB deletes no such row ("Violates foreign key constraint", an internal error). Each
   * open of such a store was refused, a warm one's too; now only the run that must delete one is.
   * Example: my_notes refers to the files row of a.jsonl, and a.jsonl was rewritten → refused.
   */
  private async refuseReferred(to: 'files', where: string): Promise<void> {
    // (results: never deleted under a row of the user's, see forget)
    for (const g of this.guards.filter((x) => x.to === to)) {
      const on = g.columns.map((c, i) => `u.${ident(c)} = f.${ident(g.referred[i]!)}`).join(' AND ');
      const [hit] = await this.all(`SELECT f.path AS what FROM ${ident(g.table)} u JOIN ${to} f ON ${on} WHERE ${where} LIMIT 1`);
      if (hit === undefined) continue;
      const what = `the row of its table files for ${String(hit.what)}, which this run must delete (that log is gone or could not be read)`;
      throw new UsageError(
        `store ${this.path}: rows of table ${g.name}, not the store's, refer by a foreign key to ${what}, and DuckDB deletes no row another refers to; the store is left as it is`,
        emptyOrDrop(g.name),
      );
    }
  }

  /**
   * Before an appended read: the facts that the re-read replaces (chain facts, the half line's
   * skip, and the attachments stored with a provisional round, at `provisionalLines`).
   */
  async prepareAppend(files: { fileId: number; provisionalLines: number[] }[]): Promise<void> {
    this.replacing = new Set();
    if (files.length === 0) return;
    const fileIds = files.map((f) => f.fileId);
    await this.db.run(`CREATE OR REPLACE TEMP TABLE doomed AS SELECT unnest(${intList(fileIds)}) AS file_id`);
    await this.db.run(`DELETE FROM chain_facts WHERE file_id IN (SELECT file_id FROM doomed)`);
    await this.db.run(`DELETE FROM skipped WHERE reason = 'incomplete_last_line' AND file_id IN (SELECT file_id FROM doomed)`);
    // An appended file keeps its file id: a row of it that a user's row refers to is not deleted (DuckDB
    // refuses, even with the row written again in the same transaction) but written over by the writer,
    // which DuckDB allows (INSERT OR REPLACE)
    for (const g of this.guards.filter((x) => x.to === 'files')) {
      const on = g.columns.map((c, i) => `u.${ident(c)} = f.${ident(g.referred[i]!)}`).join(' AND ');
      const rows = await this.all(`SELECT DISTINCT f.file_id AS id FROM ${ident(g.table)} u JOIN files f ON ${on} WHERE f.file_id IN (SELECT file_id FROM doomed)`);
      for (const r of rows) this.replacing.add(Number(r.id));
    }
    await this.db.run(`DELETE FROM files WHERE file_id IN (SELECT file_id FROM doomed)${this.replacing.size > 0 ? ` AND file_id NOT IN (SELECT unnest(${intList([...this.replacing])}))` : ''}`);
    const lines = files.flatMap((f) => f.provisionalLines.map((line) => ({ f: f.fileId, line })));
    if (lines.length === 0) return;
    await this.db.run(
      `CREATE OR REPLACE TEMP TABLE provisional AS SELECT unnest(${intList(lines.map((x) => x.f))}) AS file_id, unnest(${intList(lines.map((x) => x.line))}) AS line`,
    );
    await this.db.run(`DELETE FROM attachments a USING provisional p WHERE a.file_id = p.file_id AND a.line = p.line`);
  }

  async getMeta(key: string): Promise<string | null> {
    const [r] = await this.all(`SELECT value FROM meta WHERE key = $key`, { key });
    return r ? (r.value as string) : null;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.db.run(`INSERT OR REPLACE INTO meta VALUES ($key, $value)`, { key, value } as never);
  }

  /**
   * A result computed over the derived tables, kept in the store until the facts change (ingest
   * calls forget before it writes any): a warm re-run answers from here instead of querying
   * again. Values go through JSON, so they must be plain (numbers, strings, null, arrays, objects).
   * A store that cannot be written now still answers; the result is only not kept.
   * Example: `summary` twice over unchanged logs queries the requests once.
   */
  async remember<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const ahead = this.ahead;
    // the table is asked unless what was read ahead stands for it, or it cannot hold the key
    const known = ahead !== undefined || (this.emptied !== undefined && !this.emptied.has(key));
    // a value NULL is a result forgotten whose row a row of the user's refers to (forget): not kept
    const kept = ahead ? ahead.get(key) : known ? undefined : (((await this.all(`SELECT value FROM results WHERE key = $key`, { key }))[0]?.value ?? undefined) as string | undefined);
    if (kept !== undefined) return JSON.parse(kept) as T;
    const value = await compute();
    const json = JSON.stringify(value);
    try {
      // not kept, as just seen (this process holds the store): a plain INSERT. INSERT OR REPLACE
      // took 54 ms for the 0.5 MB summary of 1 GB of logs and ~20 ms for each small result after
      // it, ~100 ms in all against ~35 ms (a kept key would fail here, and only not be kept)
      // over a row forgotten but kept for a row of the user's that refers to it (forget): written over in place
      const over = this.guards.some((g) => g.to === 'results') ? ' OR REPLACE' : '';
      await this.db.run(`INSERT${over} INTO results VALUES ($key, $value)`, { key, value: json } as never);
      ahead?.set(key, json);
      this.emptied?.add(key);
    } catch {
      // e.g. a read-only store: answering matters more than keeping the answer
    }
    return value;
  }

  /**
   * Reads every remembered result now, while the caller waits on something else (ingest: the
   * walk), so that remember() answers a warm run without a query after it. Until forget(), they
   * stand for the table: this process holds the store's lock, and only remember() and forget()
   * write it. Results of more than `budget` characters in all are left where they are (each
   * lookup then queries, as without this); results read already are not read again. Example: a
   * warm `summary` on 1 GB ran its seven lookups (~45 ms) after the walk; its results are ~0.7 MB.
   */
  async readAhead(budget = READ_AHEAD_CHARS): Promise<void> {
    if (this.ahead !== undefined) return;
    const [{ size }] = await this.all(`SELECT coalesce(sum(length(value)), 0)::BIGINT AS size FROM results`);
    if (Number(size) > budget) return;
    const rows = await this.all(`SELECT key, value FROM results WHERE value IS NOT NULL`);
    this.ahead = new Map(rows.map((r) => [String(r.key), String(r.value)]));
  }

  /**
   * Says that the results table is empty: the caller has just committed a transaction that ran
   * forget(). Until the next forget(), remember() asks the table only for keys this process kept
   * since, and keeps the others without asking (an append run's four lookups, ~4 ms each on 1 GB
   * of logs). Only their keys are held: the values are not kept in memory for it.
   */
  resultsForgotten(): void {
    this.emptied = new Set();
  }

  /** Drops every remembered result (the facts or the derived tables are about to change). */
  async forget(): Promise<void> {
    // before the DELETE: a transaction rolled back would bring the rows back
    this.ahead = undefined;
    this.emptied = undefined;
    this.answersFor = undefined;
    this.baseToken = undefined;
    if (this.keepsFiles) dropAnswers(this.path);
    // A row a row of the user's refers to (`my_results (k VARCHAR REFERENCES results(key))`) is not deleted
    // (DuckDB deletes no row another refers to) but its value emptied (NULL: not kept, remember), which
    // DuckDB allows; the others are deleted. Every run that changed a fact was refused, and so was every
    // `query FILE.sql` (it forgets before the user's SQL), logs unchanged, saying they had changed.
    const referred = this.guards
      .filter((g) => g.to === 'results')
      .map((g) => `EXISTS (SELECT 1 FROM ${ident(g.table)} u WHERE ${g.columns.map((c, i) => `u.${ident(c)} = results.${ident(g.referred[i]!)}`).join(' AND ')})`);
    if (referred.length === 0) await this.run(`DELETE FROM results`);
    else {
      await this.run(`UPDATE results SET value = NULL WHERE value IS NOT NULL AND (${referred.join(' OR ')})`);
      await this.run(`DELETE FROM results WHERE NOT (${referred.join(' OR ')})`);
    }
  }

  /** A writer for an ingest's rows; with `stage`, every row is staged in files beside the store and loaded in bulk (writer.ts). */
  async writer(stage = false): Promise<StoreWriter> {
    const replacing = this.rereading.size > 0 ? new Set([...this.replacing, ...this.rereading]) : this.replacing;
    return StoreWriter.create(this.db, { ...(stage ? { stageAs: stagePrefix(this.keepsFiles ? this.path : ':memory:') } : {}), replacing });
  }

  async setScope(fileIds: number[]): Promise<void> {
    // unchanged (an append run): rewriting 23,000 ids put 0.28 MB in the write-ahead log for nothing
    const before = await this.derivedScope();
    const now = Int32Array.from(fileIds).sort();
    if (before.length === now.length && now.every((id, i) => id === before[i])) return;
    await this.db.run(`DELETE FROM scope`);
    const app = await this.db.createAppender('scope');
    for (const id of fileIds) {
      app.appendInteger(id);
      app.endRow();
    }
    app.closeSync();
  }

  async setPrices(table: PriceTable): Promise<void> {
    await this.db.run(`DELETE FROM prices`);
    const app = await this.db.createAppender('prices');
    for (const [model, p] of table.entries()) {
      const b = p.input;
      app.appendVarchar(model);
      app.appendDouble(b / 1e6);
      for (const x of [p.input, p.write_5m, p.write_1h, p.read, p.output]) app.appendDouble(x / b);
      const lc = p.long_context;
      if (lc) {
        app.appendBigInt(BigInt(lc.above));
        for (const x of [lc.input, lc.write_5m, lc.write_1h, lc.read, lc.output]) app.appendDouble(x / b);
      } else for (let i = 0; i < 6; i++) app.appendNull();
      app.endRow();
    }
    app.closeSync();
  }

  /**
   * Requests and chains for the files in scope: all of them, or (`touched`) only those of what
   * noteTouched noted. `between` runs after a whole derive's requests and before its chains:
   * ingest commits there, so that the chains are not derived beside 1.5 million uncommitted
   * request rows (10 GB of logs, the derive alone: 636 MiB peak in one transaction, 403 MiB so).
   * `whileDeriving` runs once, right after DuckDB starts the derive (a whole one's requests): the
   * touched derive is sent as one run of statements, so that DuckDB goes from one to the next
   * without waiting for this thread (until session 29 an append run gave its heap back there, ~0.2 s
   * of full collections on 1 GB of logs; sent one by one, each statement waited for them).
   */
  async derive(opts: { touched?: boolean; between?: () => Promise<void>; whileDeriving?: () => void } = {}): Promise<void> {
    await this.forget();
    if (opts.touched) {
      // a touched request may be attributed to a session no changed file belongs to (its best
      // copy is elsewhere), before or after: that session's chains count it, so they are derived too
      const sessionsOfTouched = `INSERT INTO touched_sessions SELECT DISTINCT session_id FROM requests WHERE key IN (SELECT key FROM touched) AND session_id IS NOT NULL;`;
      await meanwhile(
        this.run(`CREATE OR REPLACE TEMP TABLE touched AS
        SELECT key FROM touched_keys UNION SELECT key FROM requests WHERE session_id IN (SELECT session_id FROM project_sessions);
        ${sessionsOfTouched} ${DERIVE_TOUCHED_REQUESTS} ${sessionsOfTouched} ${DERIVE_TOUCHED_LINE_COPIES} ${DERIVE_TOUCHED_CHAINS}`),
        opts.whileDeriving,
      );
      return;
    }
    await meanwhile(this.run(DERIVE_REQUESTS), opts.whileDeriving);
    await opts.between?.();
    await this.run(DERIVE_LINE_COPIES);
    await this.run(DERIVE_CHAINS);
  }

  /**
   * The files whose facts this ingest changes; noteTouched then records what they hold. `whole`
   * are read again, retired or new; `appended` keep their facts and gain lines after `lines`.
   */
  async touchFiles(whole: number[], appended: { fileId: number; lines: number }[] = []): Promise<void> {
    const ids = [...whole, ...appended.map((a) => a.fileId)];
    const after = [...whole.map(() => 0), ...appended.map((a) => a.lines)];
    // after_line: the observations of a file that may change are those past it (0: all of them)
    await this.run(`CREATE OR REPLACE TEMP TABLE changed_files AS SELECT unnest(${intList(ids)}) AS file_id, unnest(${intList(after)}) AS after_line`);
    // what an appended file's row said before, to tell whether its project or session changes
    await this.run(`CREATE OR REPLACE TEMP TABLE appended_rows AS
      SELECT file_id, project, session_id FROM files WHERE file_id IN (SELECT file_id FROM changed_files WHERE after_line > 0)`);
    await this.run(`CREATE OR REPLACE TEMP TABLE touched_keys (key VARCHAR)`);
    await this.run(`CREATE OR REPLACE TEMP TABLE touched_sessions (session_id VARCHAR)`);
    await this.run(`CREATE OR REPLACE TEMP TABLE project_sessions (session_id VARCHAR)`);
  }

  /**
   * Notes the request keys and sessions the changed files hold now: called before their facts are
   * deleted and again after the new ones are written, so both what went and what came are re-derived.
   * A file's sessions are those of its requests, chains, spawns and agent links (a transcript of only
   * user lines has chains but no request), and of its row: their chains are derived again.
   *
   * Every request of a session is derived again only where its project may change (a request
   * takes its session's project, from the session's main transcript): the sessions of the files
   * read again, retired or new, and of appended files whose row now names another project or
   * session (or is gone: a read that failed), which count as read again from then on. An appended
   * file otherwise changes only the requests its new lines name, and its earlier requests that have
   * copies in other files (it ends later now: schema.ts fileLastTimes): appending one response to a
   * session of 274,000 requests derived all of them again (BENCHMARKS-log.md, Append, session 27).
   */
  async noteTouched(): Promise<void> {
    await this.run(`UPDATE changed_files SET after_line = 0 WHERE after_line > 0 AND file_id IN (
      SELECT a.file_id FROM appended_rows a LEFT JOIN files f USING (file_id)
      WHERE f.file_id IS NULL OR f.project IS DISTINCT FROM a.project OR f.session_id IS DISTINCT FROM a.session_id)`);
    await this.run(`INSERT INTO project_sessions SELECT session_id FROM appended_rows
      WHERE session_id IS NOT NULL AND file_id IN (SELECT file_id FROM changed_files WHERE after_line = 0)`);
    await this.run(`INSERT INTO touched_keys SELECT DISTINCT o.key FROM observations o JOIN changed_files c ON o.file_id = c.file_id AND o.line > c.after_line`);
    // an appended file ends later now, and copies of one rank and time go to the file that ends
    // first (schema.ts fileLastTimes): its earlier requests with a copy elsewhere may change hands
    await this.run(`INSERT INTO touched_keys SELECT key FROM requests WHERE sources > 1 AND key IN (
      SELECT o.key FROM observations o JOIN changed_files c ON o.file_id = c.file_id AND c.after_line > 0 AND o.line <= c.after_line)`);
    await this.run(`CREATE OR REPLACE TEMP TABLE noted_sessions AS
      SELECT DISTINCT session_id, file_id FROM observations WHERE file_id IN (SELECT file_id FROM changed_files) AND session_id IS NOT NULL
      UNION SELECT session_id, file_id FROM files WHERE file_id IN (SELECT file_id FROM changed_files) AND session_id IS NOT NULL
      UNION SELECT session_id, file_id FROM chain_facts WHERE file_id IN (SELECT file_id FROM changed_files) AND session_id IS NOT NULL
      UNION SELECT session_id, file_id FROM spawns WHERE file_id IN (SELECT file_id FROM changed_files) AND session_id IS NOT NULL
      UNION SELECT session_id, file_id FROM agent_links WHERE file_id IN (SELECT file_id FROM changed_files) AND session_id IS NOT NULL
      UNION SELECT c.session_id, s.file_id FROM sidechain_roots r JOIN chain_facts c USING (chain_id) JOIN spawns s ON s.prompt_hash = r.prompt_hash
        WHERE s.file_id IN (SELECT file_id FROM changed_files)`);
    await this.run(`INSERT INTO touched_sessions SELECT DISTINCT session_id FROM noted_sessions`);
    await this.run(`INSERT INTO project_sessions SELECT DISTINCT session_id FROM noted_sessions JOIN changed_files USING (file_id) WHERE after_line = 0`);
  }

  /**
   * The file ids the derived tables were last computed for, in order. Read into Sets and compared
   * so, the 234,780 of 10 GB of logs took an append run's main thread 271 ms; as arrays ~100 ms
   * (profiled).
   */
  async derivedScope(): Promise<Int32Array> {
    const [ids] = (await this.db.runAndReadAll(`SELECT file_id FROM scope ORDER BY file_id`)).getColumns();
    return Int32Array.from(ids ?? [], Number);
  }
}

/** What prepare made of a store: whether it was (re)built empty, and the notes of what it mended. */
interface Prepared {
  fresh: boolean;
  notes: string[];
  /** the foreign keys of the user's tables to the store's files and results, whose rows a run may delete (RowGuard) */
  guards: RowGuard[];
}

/**
 * A foreign key of a table of the user's (`CREATE TABLE my_notes (file_id INTEGER REFERENCES
 * files(file_id))`) to `files` or `results`, whose rows a run deletes as the logs change: DuckDB
 * deletes no row another refers to. The run that must delete such a row is refused then
 * (Store.refuseReferred), not every open.
 */
interface RowGuard {
  /** the user's table as DuckDB names it, and lower-cased */
  table: string;
  name: string;
  /** the store's table referred to */
  to: 'files' | 'results';
  /** the user's columns, and the store's they refer to, in order */
  columns: string[];
  referred: string[];
}

/** A name quoted for DuckDB's SQL. */
const ident = (n: string) => `"${n.replaceAll('"', '""')}"`;

/** The way out of a table of the user's whose rows refer to rows the store must delete. */
const emptyOrDrop = (t: string) =>
  `empty or drop table ${t} with a DuckDB client (DELETE FROM ${t}, or DROP TABLE ${t}: cachelens query opens the store as this run does), or use --db to choose another store`;

/**
 * Makes the store on `db` one this build reads: refuses someone else's DuckDB file and a store of
 * a newer cachelens; rebuilds an older layout (or on --rebuild); mends a table a query dropped or
 * altered, or put a view in place of. When that needs writing and the store may not be written (`writable` false), returns
 * what needs it (`mustWrite`, as the note says it) and whether a copy of the store's tables is
 * worth making (`copy`: not for a layout that is read again from the logs), having written nothing.
 */
async function prepare(db: DuckDBConnection, path: string, opts: StoreOpenOptions, writable: boolean): Promise<Prepared | { mustWrite: string; copy: boolean }> {
  let fresh = false;
  const notes: string[] = [];
  // One query for the tables and their columns: DuckDB's CREATE text of each (duckdb_columns, or
  // information_schema.columns, took ~30 – 50 ms more at each open: they list every system view's columns too)
  // DuckDB's names ignore case (`CREATE VIEW Chains …` takes the name chains), so they are compared
  // lower-cased: compared as written, a view Chains was not seen in place of chains (every later
  // command failed "Existing object chains is of type View", --rebuild too) and a table META with
  // the store's version was taken for a lost meta (every later run rebuilt the store, and failed)
  const listed = (
    await db.runAndReadAll(`SELECT table_name, sql FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'
      UNION ALL SELECT view_name, NULL FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'main'`)
  )
    .getRows()
    .map(([n, sql]) => [String(n).toLowerCase(), sql === null ? null : String(sql)] as const);
  const tables = listed.map(([n]) => n);
  /** the store's own tables as they are: a table → what differs from what this build writes, '' for nothing */
  const own = new Map<string, string>();
  /** the store's own tables as they are: a table → DuckDB's CREATE text of it */
  const created = new Map<string, string>();
  for (const [name, sql] of listed) {
    const want = STORE_COLUMNS.get(name);
    if (want !== undefined && sql !== null) {
      own.set(name, columnsDiffer(sql, want));
      created.set(name, sql);
    }
  }
  const altered = [...own].filter(([, d]) => d !== '').map(([t]) => t);
  const has = (t: string) => own.get(t) === '';
  // A view (any DuckDB client's, or a query's `CREATE VIEW chains AS …`) under the name of one of
  // the store's tables: the name is the store's, so the view is dropped and the table made again.
  // It failed every later command, --rebuild too ("Existing object chains is of type View").
  // (in the order of the store's tables, as the notes name them)
  const displaced = [...STORE_COLUMNS.keys()].filter((t) => listed.some(([n, sql]) => n === t && sql === null));
  const v = has('meta') ? (await db.runAndReadAll(`SELECT value FROM meta WHERE key = 'schema_version'`)).getRows()[0]?.[0] : undefined;
  const version = v === undefined || v === null ? undefined : String(v);
  // A store of a newer cachelens is refused, not dropped: a user with two versions installed had
  // each one rebuild the other's store at every switch. --rebuild replaces it, as asked.
  if (version !== undefined && Number(version) > SCHEMA_VERSION && !opts.rebuild) {
    throw new UsageError(
      `store ${path} was written by a newer cachelens (store version ${version}; this cachelens writes version ${SCHEMA_VERSION}) and is left as it is`,
      'run with --rebuild to replace it with one of this version, or use --db to choose another store',
    );
  }
  const current = version === String(SCHEMA_VERSION);
  // Someone else's DuckDB file: never drop what we did not write. Any file that is not a store of
  // this version (meta lost, altered, a view, or holding no version; or an older version) is taken
  // for a store only when it holds the tables of facts every layout of a store has held, each a
  // table with most of the columns this build writes for it (every older layout's have all but one
  // or two) or a view in its place, at least one a table. So a store that lost its meta (a query's
  // `DROP TABLE meta`) is rebuilt, not refused for good; and another program's file with a
  // key/value `meta` of its own and a `files` table was taken for a store without a version and
  // its tables dropped (a table of any columns under one of the store's names counted).
  const core = KEPT_TABLES.filter((t) => !LATER_TABLES.includes(t!));
  const like = (t: string) => created.has(t) && resembles(created.get(t)!, STORE_COLUMNS.get(t)!);
  const ours = core.every((t) => like(t!) || displaced.includes(t!)) && core.some((t) => like(t!));
  const newer = version !== undefined && Number(version) > SCHEMA_VERSION;
  if (tables.length > 0 && !newer && !ours) {
    // A store that lacks a table of facts and is not of this version (an older store a query or a
    // DuckDB client dropped one from, or one that lost its meta too) is refused, not rebuilt
    // unasked: nothing but its tables says it is ours. It was refused as "not a cachelens store",
    // --rebuild too, so a user's own old store could not be rebuilt at all. When it resembles a
    // store, --rebuild rebuilds it, and the refusal without it says so: more than half of the
    // tables of facts are the store's (each with most of its columns), every table under a name of
    // the store's has most of its columns, and its meta, if any, is the store's and holds only keys
    // cachelens writes (META_KEYS). Another program's file with a key/value `meta` of its own
    // (`schema_version` 3 beside an `owner`) and one table of facts' likeness (`skipped (line,
    // reason, detail)`) was taken for an older store, and --rebuild dropped its meta and skipped.
    // Of this version, the same but the tables of facts: one that lost most of them is rebuilt.
    const named = listed.filter(([t, sql]) => sql !== null && STORE_COLUMNS.has(t) && t !== 'meta');
    const kin =
      (await metaIsOurs(db, created.get('meta'))) &&
      named.every(([t]) => like(t)) &&
      (current || core.filter((t) => like(t!)).length * 2 > core.length);
    if (!kin) throw new UsageError(`${path} is a DuckDB file but not a cachelens store`, 'choose another --db');
    if (!current && !opts.rebuild) {
      const missing = core.filter((t) => !like(t!) && !displaced.includes(t!));
      const by = storeVersion(version) ? `a cachelens store by its meta (store version ${version})` : 'a cachelens store by its tables';
      throw new UsageError(
        `store ${path}, ${by}, lacks ${missing.length === 1 ? 'table' : 'tables'} ${missing.join(', ')}, which every cachelens store holds, and is left as it is`,
        'run with --rebuild to rebuild it from the logs, or use --db to choose another store',
      );
    }
  }
  /** the store's version is lost: meta dropped, altered, a view, or its version deleted */
  const versionless = tables.length > 0 && version === undefined;
  // A store of this layout that lacks one of its kept tables (a query's `DROP TABLE observations`),
  // or holds one whose columns are not those this build writes (`ALTER TABLE files DROP COLUMN
  // root`), is rebuilt too: a missing fact table was made again empty, so the next derive lost
  // every file not read again. One that lacks a derived table (`DROP TABLE chains`), or holds one
  // altered (`ALTER TABLE requests DROP COLUMN model`), is derived again from its facts, below: it
  // failed every later command ("internal error: … Table with name chains does not exist",
  // "Referenced column "model" not found") until --rebuild, and a run stopped before its first
  // derive (which leaves the same) must not read every file again. So is one that lacks a table
  // every derive writes whole (REMADE_TABLES), or holds one altered: it is made again empty.
  const lacking = KEPT_TABLES.filter((t) => !has(t));
  const remade = [...DERIVED_TABLES, ...REMADE_TABLES].filter((t) => !has(t));
  /** what became of a table: "table chains is missing", "table requests was altered (no column model)" (`dropping` false: nothing is dropped from the file) */
  const item = (t: string, dropping: boolean) =>
    t === 'meta' && has('meta')
      ? 'table meta holds no store version'
      : own.has(t)
        ? `table ${t} was altered (${own.get(t)})`
        : displaced.includes(t)
          ? `${t} is a view, not the store's table${dropping ? " (dropped, as the name is the store's)" : ''}`
          : `table ${t} is missing`;
  /** what became of these tables, and of every view in place of one of the store's: "table meta is missing, chains is a view, not the store's table (…)" */
  const what = (ts: readonly string[], dropping = true) => [...new Set([...ts, ...displaced])].map((t) => item(t, dropping)).join(', ');
  // A store that lost its version and whose tables are an older layout's (no line_copies, or the
  // attachment_copies of versions 22 – 23): each difference from this layout was named, a note of
  // up to seven items (for version 4), every table of facts that layout wrote said to be altered
  // A store of this layout that lost both meta and line_copies (each table of facts it holds as this
  // build writes it) is no older layout: it was said to be one, of a store that had lost two tables.
  const older =
    versionless &&
    (tables.some((t) => FORMER_TABLES.includes(t)) || (!tables.some((t) => LATER_TABLES.includes(t)) && core.some((t) => own.has(t!) && own.get(t!) !== '')));
  /** what the store was found to be, when it lost its version */
  const lost = (dropping = true) =>
    older ? [`${item('meta', dropping)}, and its tables are an older cachelens layout's`, ...displaced.filter((t) => t !== 'meta').map((t) => item(t, dropping))].join(', ') : what(['meta', ...lacking], dropping);
  const rebuild = opts.rebuild || !current || lacking.length > 0;
  /** a run stopped before its first derive left the derived tables missing, nothing else amiss: no damage */
  const unfinished = async () =>
    altered.length === 0 && displaced.length === 0 && !(await db.runAndReadAll(`SELECT value FROM meta WHERE key = 'derived_for'`)).getRows()[0]?.[0];
  if (!writable && (rebuild || remade.length > 0 || displaced.length > 0)) {
    const why = current
      ? lacking.length === 0 && (await unfinished())
        ? 'a run stopped before it finished writing it'
        : what(lacking.length > 0 ? lacking : remade, false)
      : versionless
        ? lost(false)
        : tables.length === 0
          ? 'it holds no store yet'
          : 'it was written by an older cachelens';
    return { mustWrite: why, copy: current && lacking.length === 0 };
  }
  // The tables this open drops: the store's (and an older layout's) for a rebuild, else those
  // altered of the ones made again.
  const dropped = rebuild
    ? listed.filter(([t, sql]) => sql !== null && (STORE_COLUMNS.has(t) || FORMER_TABLES.includes(t))).map(([t]) => t)
    : remade.length > 0
      ? altered
      : [];
  // A table of the user's own with a foreign key to one of the store's (`CREATE TABLE my_notes
  // (file_id INTEGER REFERENCES files(file_id))`): DuckDB drops no table another refers to, even an
  // empty one, and deletes no row one of its rows refers to. A rebuild, an upgrade or a mend failed
  // "store … is unreadable: Catalog Error: Could not drop the table because this table is main key
  // table of the table my_notes (run with --rebuild …)", --rebuild the same way; a run that read a
  // changed or a gone log again failed "internal error: … Violates foreign key constraint" (rows
  // of files and results are deleted as the logs change; meta's are only written over, which
  // DuckDB allows). Refused at the open, saying so, only where it must be: a table referred to that
  // must be dropped (altered: its columns are not this build's), or rows referred to that a rebuild
  // deletes (every row); rows of files and results referred to are refused by the run that must
  // delete one (Store.refuseReferred), not at the open. A table of this build's
  // columns that a rebuild would drop is emptied in its place (`kept`): an empty table of the user's,
  // or one whose rows refer to nothing (NULL), refused every writing open, and every rebuild.
  const mine = (t: string) => !STORE_COLUMNS.has(t) && !FORMER_TABLES.includes(t);
  /** the store's tables a rebuild empties rather than drops: a table of the user's has a foreign key to each */
  const kept: string[] = [];
  const guards: RowGuard[] = [];
  if (listed.some(([t, sql]) => sql !== null && mine(t))) {
    const keys = (
      await db.runAndReadAll(`SELECT table_name, lower(referenced_table), constraint_column_names, referenced_column_names FROM duckdb_constraints()
        WHERE database_name = current_database() AND schema_name = 'main' AND constraint_type = 'FOREIGN KEY' ORDER BY ALL`)
    )
      .getRowsJS()
      .map(([t, r, c, rc]) => ({ table: String(t), name: String(t).toLowerCase(), to: String(r), columns: (c as unknown[]).map(String), referred: (rc as unknown[]).map(String) }))
      .filter((k) => mine(k.name) && STORE_COLUMNS.has(k.to));
    /** whether a row of the user's table refers to a row of the store's (a NULL in a key's column refers to none) */
    const refers = async (k: (typeof keys)[number]) => {
      const where = k.columns.map((c) => `"${c.replaceAll('"', '""')}" IS NOT NULL`).join(' AND ');
      const [[n]] = (await db.runAndReadAll(`SELECT count(*)::INTEGER FROM (SELECT 1 FROM "${k.table.replaceAll('"', '""')}" WHERE ${where} LIMIT 1)`)).getRows() as number[][];
      return n > 0;
    };
    const why = () =>
      opts.rebuild
        ? 'is to be rebuilt (--rebuild)'
        : current
          ? `must be mended (${what(lacking.length > 0 ? lacking : remade, false)})`
          : versionless
            ? `must be rebuilt from the logs (${lost(false)})`
            : 'must be rebuilt from the logs (it was written by an older cachelens)';
    for (const k of keys) {
      if (dropped.includes(k.to) && own.get(k.to) !== '') {
        throw new UsageError(
          `store ${path} ${why()}, but table ${k.name}, not the store's, has a foreign key to its table ${k.to}, which must be dropped (${own.get(k.to)}), and DuckDB drops no table another refers to; the store is left as it is`,
          `drop table ${k.name} with a DuckDB client (DROP TABLE ${k.name}: cachelens query opens the store as this run does), or use --db to choose another store`,
        );
      }
    }
    for (const k of keys) {
      if (dropped.includes(k.to)) {
        if (await refers(k)) {
          throw new UsageError(
            `store ${path} ${why()}, but rows of table ${k.name}, not the store's, refer to rows of its table ${k.to} by a foreign key, and DuckDB deletes no row another refers to; the store is left as it is`,
            emptyOrDrop(k.name),
          );
        }
        if (!kept.includes(k.to)) kept.push(k.to);
      } else if (k.to === 'files' || k.to === 'results') {
        // rows of files and results are deleted as the logs change: refused by the run that must delete
        // one referred to (Store.refuseReferred), not at the open (each open was refused, a warm run's too)
        guards.push({ ...k, to: k.to });
      }
    }
  }
  // One transaction: each DROP on its own committed, a run stopped among them (Ctrl-C during
  // `--rebuild`, or the first run after an upgrade) left a store without `meta`, refused from
  // then on as not a cachelens store (with --rebuild too), or without `chains` but with its
  // listing key, where the next warm `anatomy` failed with "Table with name chains does not exist".
  await db.run('BEGIN TRANSACTION');
  for (const t of displaced) await db.run(`DROP VIEW "${t}"`);
  if (rebuild) {
    // An older layout is never misread: drop the store's tables and read the logs again. The
    // store's are those of the names this build writes and those an older layout wrote
    // (FORMER_TABLES); any other table is a user's own, and is left, as views are (any DuckDB
    // client may add either to the store: a DROP TABLE of a view failed the rebuild, "Existing
    // object my_costs is of type View", so a store with one could never be rebuilt nor upgraded).
    // DuckDB binds a view when it is queried, so one over `requests` answers again once the logs
    // are read. A store that lost its version and has a fact table altered was taken for an older
    // layout, whose every table was dropped, the user's own too: by their names, neither needs
    // telling from the other.
    for (const t of dropped) await db.run(kept.includes(t) ? `DELETE FROM "${t}"` : `DROP TABLE IF EXISTS "${t}" CASCADE`);
    fresh = true;
    if (!opts.rebuild && current) notes.push(`${what(lacking)}; the store is rebuilt from the logs`);
    else if (!opts.rebuild && versionless) notes.push(`${lost()}; the store is rebuilt from the logs`);
  } else if (remade.length > 0) {
    // an altered table of those derived or made again goes, and is made again below
    for (const t of dropped) await db.run(`DROP TABLE "${t}"`);
    // A run stopped before its first derive (Ctrl-C, a kill) leaves the derived tables missing and
    // no derived_for: the next run derives, as it would have, and says nothing of it.
    if (!(await unfinished())) notes.push(`${what(remade)}; ${remade.length > 1 ? 'they are' : 'it is'} made again from the stored facts`);
  }
  // A store of this layout with every table is left as it is: a warm run then writes nothing
  // (each open used to run both again, ~9 ms, and log the version, growing the log that the
  // next open replays).
  if (fresh || altered.length > 0 || !STORE_TABLES.every((t) => own.has(t!))) {
    await db.run(CREATE_TABLES);
    await db.run(`INSERT OR REPLACE INTO meta VALUES ('schema_version', '${SCHEMA_VERSION}')`);
  }
  // the next run derives (ingest derives when derived_for is not this scope's), whatever changed
  if (!fresh && remade.length > 0) await db.run(`INSERT OR REPLACE INTO meta VALUES ('derived_for', ''), ('listing_key', '')`);
  await db.run('COMMIT');
  return { fresh, notes, guards };
}

/** Runs `fn` (if any) while `work` goes on, then waits for `work`; if `fn` throws, still waits for it. */
async function meanwhile(work: Promise<void>, fn?: () => void): Promise<void> {
  try {
    fn?.();
  } catch (err) {
    await work.catch(() => undefined); // no statement is left running behind the caller's failure
    throw err;
  }
  await work;
}

/**
 * The keys cachelens has ever written to meta, in every layout (`git log -p -- src`: the
 * `INSERT … INTO meta` and setMeta calls): a meta holding any other is another program's.
 */
const META_KEYS = ['schema_version', 'derived_for', 'derived_prices', 'listing_key'];

/**
 * Whether a file's `meta`, by DuckDB's CREATE text of it (undefined: it has none, or a view in its
 * place), is one cachelens could have written: the store's two columns and no key but META_KEYS.
 */
async function metaIsOurs(db: DuckDBConnection, sql: string | undefined): Promise<boolean> {
  if (sql === undefined) return true;
  if (columnsDiffer(sql, STORE_COLUMNS.get('meta')!) !== '') return false;
  const [[n]] = (await db.runAndReadAll(`SELECT count(*)::INTEGER FROM meta WHERE key IS NULL OR key NOT IN (${META_KEYS.map((k) => `'${k}'`).join(', ')})`)).getRows() as number[][];
  return n === 0;
}

/** Whether a meta's schema_version reads as a store's: a whole number from 1 to this build's. */
function storeVersion(version: string | undefined): boolean {
  return version !== undefined && /^[1-9][0-9]*$/.test(version) && Number(version) <= SCHEMA_VERSION;
}

/** The tables CREATE_TABLES makes. */
const STORE_TABLES = [...CREATE_TABLES.matchAll(/CREATE TABLE IF NOT EXISTS (\w+)/g)].map((m) => m[1]);
/** The tables derive() makes from the facts (DERIVE_REQUESTS, DERIVE_CHAINS): every store of this layout has them once its first run ends. */
const DERIVED_TABLES = ['requests', 'chains'];
/** The tables every derive writes whole again (setScope, setPrices, forget): one missing is made again empty, the store kept. */
const REMADE_TABLES = ['meta', 'prices', 'scope', 'results'];
/** The tables a store keeps from run to run (its facts, `files`, `line_copies`): every store of this layout holds them all. */
const KEPT_TABLES = STORE_TABLES.filter((t) => !REMADE_TABLES.includes(t!));

/** The columns of DuckDB's CREATE text of a table, as STORE_COLUMNS lists them: 'CREATE TABLE "scope"(file_id INTEGER);' → 'file_id INTEGER'. */
function columnsOf(sql: string): string {
  return sql.slice(sql.indexOf('(') + 1, sql.lastIndexOf(')')).replaceAll('"', '');
}

/** Columns "name TYPE …, …" → name → "TYPE …" (a type such as DECIMAL(38, 15) holds a comma too: split only before a name). */
function cols(s: string): Map<string, string> {
  return new Map(s.split(/, (?=[A-Za-z_][\w]* )/).map((c) => [c.slice(0, c.indexOf(' ')), c.slice(c.indexOf(' ') + 1)] as const));
}

/**
 * Whether a table, by DuckDB's CREATE text of it, has most of the columns `want` (STORE_COLUMNS)
 * names: more than half of them, by name, case aside. Every older layout of the store has all but
 * one or two of each table's (schema.ts history: observations of versions 3 – 8 had 23 of 23, and
 * two more; chain_events until 23, 6 of 7); a table of another program's under the same name
 * (`files (id INT, name VARCHAR)`) has none or few.
 */
export function resembles(sql: string, want: string): boolean {
  const have = new Set([...cols(columnsOf(sql)).keys()].map((n) => n.toLowerCase()));
  const names = [...cols(want).keys()];
  return names.filter((n) => have.has(n.toLowerCase())).length * 2 > names.length;
}

/**
 * How a table's columns, as DuckDB's CREATE text of it gives them, differ from `want` (STORE_COLUMNS):
 * '' when they do not, else the first difference in a few words.
 * Example: 'CREATE TABLE "scope"(file_id INTEGER);' against 'file_id INTEGER' → '';
 * requests without `model` → 'no column model'; `model` made an INTEGER → 'model is INTEGER, not VARCHAR'.
 */
export function columnsDiffer(sql: string, want: string): string {
  const have = columnsOf(sql);
  if (have === want) return '';
  const a = cols(have);
  const w = cols(want);
  for (const [name, type] of w) {
    if (!a.has(name)) return `no column ${name}`;
    if (a.get(name) !== type) return `${name} is ${a.get(name)}, not ${type}`;
  }
  const extra = [...a.keys()].find((n) => !w.has(n));
  return extra !== undefined ? `a column ${extra} this cachelens does not write` : 'its columns in another order';
}

/** The listing snapshot's file: the store's name and this. */

/** What readAhead reads at most (characters of remembered results), and what the answers file keeps at most. */
const READ_AHEAD_CHARS = 16 * 2 ** 20;

/** The characters of the results' values. */
function chars(results: ReadonlyMap<string, string>): number {
  let n = 0;
  for (const v of results.values()) n += v.length;
  return n;
}

/**
 * When DuckDB folds its write-ahead log into the store file. By default every close does it
 * (~0.3 s on a 1 GB store after an append, rewriting the row groups the run touched) and a
 * commit does once the log passes 16 MiB. Closing without it keeps a small log that the next open
 * replays (a few ms); a 4 MiB threshold keeps that replay small, and big writes (a first ingest)
 * are folded in at their commit as before. Durability is the same: a committed run is in the log.
 */
const DURABILITY = `SET checkpoint_threshold = '4MB'; PRAGMA disable_checkpoint_on_shutdown;`;

export interface StoreOpenOptions {
  rebuild?: boolean;
  /** how long to wait for another process that holds the store (default 0: fail at once) */
  lockWaitMs?: number;
  /**
   * told once, with a one-line message (no `cachelens:` in front), when this open starts waiting for
   * that process; the CLI shows it as its progress line, which the timeout's error then replaces
   */
  onWait?: (message: string) => void;
  /**
   * told each one-line note (with `cachelens:` in front) of what the open mended: a table a query
   * dropped or altered, made again, derived again or rebuilt from the logs
   */
  onNote?: (line: string) => void;
}

const LOCK_POLL_MS = 250;

/**
 * DuckDB lets one process write a store at a time and refuses a second one with a lock error.
 * Two cachelens runs on one store therefore never interleave their writes: the second polls for
 * up to `lockWaitMs` (saying so once), then gives up with a one-line UsageError naming the holder.
 */
async function openLocked(path: string, opts: StoreOpenOptions, readOnly: boolean): Promise<{ instance: DuckDBInstance; readOnly: string | null }> {
  const waitMs = opts.lockWaitMs ?? 0;
  const deadline = Date.now() + waitMs;
  let told = false;
  let refused: string | null = null;
  for (;;) {
    // the store file this attempt would make, if none is there (looked at before each attempt: one
    // another process made while this one waited for its lock is not this run's)
    const making = path === ':memory:' ? null : fileToMake(path);
    const wal = making !== null && fileToMake(`${path}.wal`) === resolve(`${path}.wal`) ? `${path}.wal` : null;
    try {
      // an in-memory store spills beyond its bounds into a directory of the system's temp dir,
      // not DuckDB's default `.tmp` in the working directory (which may hold the logs)
      const options: Record<string, string> = path === ':memory:' ? { temp_directory: spillDir() } : readOnly || refused !== null ? { access_mode: 'READ_ONLY' } : {};
      return { instance: await (await loadDuckdb()).DuckDBInstance.create(path, openingOptions(options)), readOnly: refused };
    } catch (err) {
      const msg = (err as Error).message;
      // a store this open began, cut short for want of room, is removed: nothing of it was the user's,
      // and the next run, with room again, refused it ("Could not read enough bytes from file")
      if (making !== null && NO_SPACE.test(msg)) removeCutShort(making, wal);
      // the system refuses to open for writing a store file that is there (a read-only file system,
      // an immutable file, a mode access() did not tell): opened READ_ONLY instead, once
      const denied = /Read-only file system|Operation not permitted|Permission denied/.exec(msg)?.[0];
      if (denied && !readOnly && refused === null && path !== ':memory:' && existsSync(path)) {
        refused = `opening it for writing failed: ${denied}`;
        continue;
      }
      // a word: DuckDB's corruption messages say "in block at location …"
      if (!/\block\b/i.test(msg)) {
        // the advice was `delete it or run with --rebuild --db <new path>`: deleting is no advice for a
        // file that may be the user's own (notes.txt), and --rebuild adds nothing to a new path
        const full = noSpace(path, err);
        if (full !== null) throw full;
        if (/not a valid DuckDB database file/.test(msg)) {
          throw new UsageError(`cannot open store ${path}: not a DuckDB file, so no cachelens store; it is left as it is`, 'choose another --db path');
        }
        // nothing there (a store DuckDB could not make): nothing is left as it is
        throw new UsageError(`cannot open store ${path}: ${msg.split('\n')[0]}`, `${fileToMake(path) === null ? 'it is left as it is; ' : ''}choose another --db path`);
      }
      const holder = /PID (\d+)/.exec(msg)?.[1];
      const who = holder ? `another process (pid ${holder})` : 'another process';
      // the error says the wait too: it is the one line left of it (the note was the progress line)
      if (Date.now() >= deadline) {
        throw new UsageError(`store ${path} is in use by ${who}${waitMs > 0 ? `; waited ${Math.ceil(waitMs / 1000)} s for it` : ''}`, 'run again when it has finished, or use --db to choose another store');
      }
      if (!told) {
        told = true;
        opts.onWait?.(`store ${path} is in use by ${who}; waiting up to ${Math.ceil((deadline - Date.now()) / 1000)} s for it`);
      }
      await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
    }
  }
}

/**
 * Why the store at `path` cannot be written, as the note says it, or null when it can (or is not
 * there yet): its file, or its directory (where DuckDB writes the store's log and cachelens the
 * files it keeps beside it), or its log file (`<store>.wal`) if there is one, is not writable for
 * this process. Root may write any of them whatever their modes say: so it does, as with any file
 * (a test drops root's override to check this).
 * Example: a store chmod 0444 → "its file is not writable".
 */
export function readOnlyReason(path: string): string | null {
  if (!existsSync(path)) return null;
  // its log (`<store>.wal`), when there is one: a run as root leaves it root's, 0644, and a run as
  // another user then failed its first commit ("internal error: … Failed to commit: Cannot open
  // file …wal: Permission denied"), --rebuild too
  const log = `${path}.wal`;
  for (const [file, what] of [[path, 'its file'], [dirname(path), 'its directory'], [log, 'its log file']] as const) {
    try {
      accessSync(file, constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (file === log && code === 'ENOENT') continue;
      return code === 'EROFS' ? `${what} is on a read-only file system` : `${what} is not writable`;
    }
  }
  return null;
}

/**
 * A store in memory holding the tables and views of the store file at `path` (`withTables`), or
 * none, for a run that must write a store it may not: it spills into the temp dir as `--db :memory:` does.
 */
async function memoryCopy(path: string, withTables: boolean): Promise<{ instance: DuckDBInstance; db: DuckDBConnection }> {
  const instance = await (await loadDuckdb()).DuckDBInstance.create(':memory:', openingOptions({ temp_directory: spillDir() }));
  const db = tracked(await instance.connect());
  try {
    if (withTables) {
      await db.run(`ATTACH '${path.replaceAll("'", "''")}' AS stored (READ_ONLY); COPY FROM DATABASE stored TO memory (SCHEMA);`);
      // The rows table by table, each after the tables it refers to: COPY FROM DATABASE copied a table of
      // the user's with a foreign key to files (my_notes) before files, and failed "internal error: …
      // Violates foreign key constraint because key "file_id: 1" does not exist" (a read-only store, logs changed)
      const tables = await db.runAndReadAll(`SELECT table_name AS t FROM duckdb_tables() WHERE database_name = 'stored' AND schema_name = 'main' ORDER BY t`);
      const refs = await db.runAndReadAll(`SELECT table_name AS t, referenced_table AS r FROM duckdb_constraints()
        WHERE database_name = 'stored' AND schema_name = 'main' AND constraint_type = 'FOREIGN KEY'`);
      const needs = new Map<string, Set<string>>();
      for (const r of tables.getRowObjects()) needs.set(String(r.t), new Set());
      for (const r of refs.getRowObjects()) if (String(r.r) !== String(r.t)) needs.get(String(r.t))?.add(String(r.r));
      const done = new Set<string>();
      while (done.size < needs.size) {
        const ready = [...needs.keys()].filter((t) => !done.has(t) && [...needs.get(t)!].every((r) => done.has(r) || !needs.has(r)));
        // none ready (cannot be: DuckDB refers only to a table made before) — the rest in name order
        for (const t of ready.length > 0 ? ready : [...needs.keys()].filter((x) => !done.has(x))) {
          await db.run(`INSERT INTO memory.main.${ident(t)} SELECT * FROM stored.main.${ident(t)}`);
          done.add(t);
        }
      }
      await db.run(`DETACH stored`);
    }
    await db.run(MACROS);
  } catch (err) {
    db.closeSync();
    instance.closeSync();
    throw err;
  }
  return { instance, db };
}

/** The note of a run that answers from a copy in memory of a read-only store (Store.copyToMemory). */
function readOnlyNote(path: string, readOnly: string, why: string): string {
  return `cachelens: store ${path} is read-only (${readOnly}) and ${why}: this run answers from a copy of it in memory, which is not kept (make it writable, or use --db to choose another store)`;
}

/**
 * An INTEGER[] literal. Inlined rather than bound: the node API cannot bind a plain JS array
 * (it has no element type to give it), and these are our own ids, checked to be integers.
 */
function intList(xs: number[]): string {
  for (const x of xs) if (!Number.isSafeInteger(x)) throw new Error(`not an integer id: ${x}`);
  return `[${xs.join(',')}]::INTEGER[]`;
}

/**
 * Where an in-memory store spills: `cachelens-<pid>.tmp` in the temp dir. DuckDB removes it when
 * the store closes; a run ended while it spilled (Ctrl-C, a kill) left it there for good, spill
 * files and all, so those of runs no longer running are removed first, as their staged facts are
 * (writer.ts stagePrefix). One whose process still runs, or is another user's, is left to it.
 * Example: /tmp/cachelens-4701.tmp, pid 4701 gone → removed; returns /tmp/cachelens-<own pid>.tmp
 */
export function spillDir(): string {
  const dir = tmpdir();
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // they only take room
  }
  for (const e of names) {
    const pid = /^cachelens-(\d+)\.tmp$/.exec(e)?.[1];
    if (!pid || Number(pid) === process.pid || running(Number(pid))) continue;
    try {
      rmSync(join(dir, e), { recursive: true, force: true });
    } catch {
      // another user's: theirs to remove
    }
  }
  return join(dir, `cachelens-${process.pid}.tmp`);
}

/**
 * DuckDB spills a store beyond its memory bound into `<store>.tmp` beside it, and removes that
 * directory when the store closes only if it made it: one left by a run stopped while it spilled
 * (Ctrl-C, a kill) stayed for good, spill files and all, as DuckDB took it for the user's own.
 * Called once the store is open: DuckDB's lock on it says no other run is spilling there. A
 * directory that holds anything but DuckDB's spill files is left as it is.
 * Example: store.duckdb.tmp holding duckdb_temp_storage_DEFAULT-0.tmp → removed.
 */
function removeLeftSpill(path: string): void {
  const dir = `${path}.tmp`;
  try {
    const names = readdirSync(dir);
    if (names.every((n) => /^duckdb_temp_(storage|block)/.test(n))) rmSync(dir, { recursive: true, force: true });
  } catch {
    // none, not a directory, or not ours to remove: it only takes room
  }
}

function makeStoreDir(path: string): void {
  try {
    makeDirs(dirname(path));
    // the store's own directory there but not searchable (mode 000, 600): DuckDB's `IO Error: Cannot open file …:
    // Permission denied` named neither it nor the way out, and said a store not there was left as it is
    const blocked = unsearchable(path);
    if (blocked !== null) throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // a directory above it that this user may not search: the store's directory may well be there
    // (it was said to be one that cannot be created)
    const blocked = e.code === 'EACCES' || e.code === 'EPERM' ? unsearchable(path) : null;
    if (blocked !== null) throw new UsageError(`cannot open store ${path}: ${blocked} cannot be searched (permission denied)`, 'make it searchable to this user, or use --db to choose another store');
    // a file (or a link that leads nowhere) where a directory of the path should be: named, not mkdir's EEXIST
    if (e.code === 'EEXIST' || e.code === 'ENOTDIR') {
      for (let d = dirname(path); dirname(d) !== d; d = dirname(d)) {
        let st;
        try {
          st = lstatSync(d);
        } catch {
          continue; // not there, or below a file (ENOTDIR)
        }
        if (st.isDirectory()) break;
        const what = st.isSymbolicLink() ? (existsSync(d) ? 'a link to a file' : 'a link that leads nowhere') : 'a file';
        throw new UsageError(`cannot create the directory of store ${path}: ${d} is ${what}, not a directory`, 'use --db to choose another store');
      }
    }
    throw new UsageError(`cannot create the directory of store ${path}: ${e.code ?? e.message}`, 'use --db to choose another store');
  }
}

/**
 * Whether `err` is DuckDB running out of the memory it was allowed: a query's error, or an
 * appender's, which names only the block it could not get.
 * Example: "Out of Memory Error: failed to pin block of size 256.0 KiB (184.7 MiB/185.0 MiB used)",
 * "Failed to append: could not allocate block of size 32.0 KiB (976.0 KiB/976.5 KiB used)".
 */
export function outOfMemory(err: unknown): boolean {
  return err instanceof Error && /Out of Memory Error|could not allocate block|failed to pin block/.test(err.message);
}

/** Store.chunks on a connection: the store's own, or one beside it. */
async function* chunksOf(db: DuckDBConnection, path: string, sql: string, params?: Record<string, unknown>, keepHeap = false): AsyncGenerator<ResultChunk> {
  const keep = keepHeap ? heapKeeper() : undefined;
  const chunks = streamChunks(db, sql, params);
  for (;;) {
    let next;
    try {
      next = await chunks.next();
    } catch (err) {
      throw damaged(path, err);
    }
    if (next.done) return;
    const chunk = next.value;
    keep?.();
    const vectors = new Map<number, { getItem(row: number): unknown }>();
    yield {
      rowCount: chunk.rowCount,
      column(c) {
        let v = vectors.get(c);
        if (!v) vectors.set(c, (v = chunk.getColumnVector(c)));
        return v;
      },
    };
  }
}

/** Store.all on a connection: the store's own, or one beside it. */
async function allRows(db: DuckDBConnection, path: string, sql: string, params?: Record<string, unknown>): Promise<Row[]> {
  try {
    const reader = await db.runAndReadAll(sql, params as never);
    return reader.getRowObjectsJS().map(plainRow);
  } catch (err) {
    throw damaged(path, err);
  }
}

/**
 * A DuckDB IO error met after the store opened (a block whose checksum fails when a query first
 * reads it, a full disk) means a damaged store, not a bug: one line and exit 2, like a store that
 * fails to open. Any other error is returned as it is and keeps its stack.
 */
function damaged(path: string, err: unknown): unknown {
  const msg = err instanceof Error ? err.message : '';
  const full = noSpace(path, err);
  if (full !== null) return full;
  if (!msg.startsWith('IO Error:')) return err;
  return new UsageError(`store ${path} is damaged: ${msg.split('\n')[0]}`, 'delete it, or use --db to choose another store');
}

/**
 * A new store (nothing at `path`) in a directory this user may list and search but not write
 * (mode 555, a read-only file system): refused in one line naming that directory, before DuckDB
 * tries (it said `cannot open store …: IO Error: Cannot open file "…": Permission denied`). A store
 * that is there is opened READ_ONLY instead (readOnlyReason). Root writes there whatever the mode.
 * Example: --db /srv/ro/x.duckdb, /srv/ro mode 555 → `cannot create store …: its directory /srv/ro is not writable by this user`.
 */
function refuseUnwritableDir(path: string): void {
  const making = fileToMake(path);
  if (making === null) return;
  const dir = dirname(making);
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return; // DuckDB says what else it is
    const why = code === 'EROFS' ? 'is on a read-only file system' : 'is not writable by this user';
    throw new UsageError(`cannot create store ${path}: its directory ${dir} ${why}`, 'use --db to choose a store in a directory you may write');
  }
}

/**
 * The file opening `path` would make, when nothing is there: `path` itself, or, when `path` is a
 * link (or a chain of them) leading nowhere, the file the last one names, which DuckDB makes
 * through it; null when a file (or anything else) is there. The link is the user's, never this run's.
 */
export function fileToMake(path: string): string | null {
  let p = resolve(path);
  for (let hops = 0; hops < 40; hops++) {
    let st;
    try {
      st = lstatSync(p);
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT' ? p : null;
    }
    if (!st.isSymbolicLink()) return null;
    p = resolve(dirname(p), readlinkSync(p));
  }
  return null;
}

/** Less than DuckDB's headers (three blocks of 4 KiB): what a creation cut short leaves, and no store of anyone's. */
const HEADER_BYTES = 3 * 4096;

/**
 * Removes what an open that made `file` (fileToMake's, absent before it) left when the disk was
 * full: a regular file (never a link) of less than DuckDB's headers, so no store, of this run's or
 * another process's, is removed, and `wal` (the store's log beside the path given, if it was not
 * there before the open either, a regular file) with it. A file of more is left as it is. Returns whether it removed the file.
 */
export function removeCutShort(file: string, wal: string | null): boolean {
  const small = (f: string) => {
    try {
      const st = lstatSync(f);
      return st.isFile() && st.size < HEADER_BYTES;
    } catch {
      return false;
    }
  };
  if (!small(file)) return false;
  rmSync(file, { force: true });
  if (wal !== null && small(wal)) rmSync(wal, { force: true });
  return true;
}

/** What DuckDB's error says when the disk is full (ENOSPC, EDQUOT). */
const NO_SPACE = /No space left on device|Disk quota exceeded/i;

/**
 * The error for DuckDB failing to write for want of room (its commit, its log, its spill files:
 * `TransactionContext Error: Failed to commit: Could not write file "….wal": No space left on
 * device`), or null for any other: a full disk was an internal error, or said the store was damaged
 * or unreadable, with deleting it as the advice. Nothing of the run is committed: a store there
 * before is as the last run left it; a new one whose first commit failed is left as far as it was
 * made (with its .wal and .listing), and the next run with room reads and fills it.
 */
function noSpace(path: string, err: unknown): UsageError | null {
  const msg = err instanceof Error ? err.message.split('\n')[0]! : '';
  if (!NO_SPACE.test(msg)) return null;
  // a file of someone else's that DuckDB names (an export's, a query's COPY TO): its writer says so (export.ts)
  const mine = path === ':memory:' ? [join(tmpdir(), `cachelens-${process.pid}.tmp`)] : [resolve(path), resolve(`${path}.wal`), resolve(`${path}.tmp`)];
  const named = [...msg.matchAll(/"([^"]+)"/g)].map((m) => resolve(m[1]!));
  if (named.length > 0 && !named.some((f) => mine.some((m) => f === m || f.startsWith(`${m}/`)))) return null;
  const what = path === ':memory:' ? 'the store in memory could not spill into the temp dir' : `store ${path} could not be written`;
  return new UsageError(`${what}: no space left on the device (${msg})`, 'free some space, or use --db to choose another store');
}

/**
 * Whether `err` is an IO Error about files other than the store's own: each file DuckDB names in it
 * (in double quotes) is neither the store nor its WAL. Example: `IO Error: No files found that match
 * the pattern "/tmp/x.csv"` over the store /tmp/s.duckdb.
 */
function ownFileError(path: string, err: unknown): boolean {
  const msg = err instanceof Error ? err.message : '';
  if (!msg.startsWith('IO Error:')) return false;
  const named = [...msg.split('\n')[0]!.matchAll(/"([^"]+)"/g)].map((m) => resolve(m[1]!));
  const store = path === ':memory:' ? [] : [resolve(path), resolve(`${path}.wal`)];
  return named.length > 0 && named.every((f) => !store.includes(f));
}

/** A result as `cachelens query` prints it: the columns (even when there are no rows) and the rows. */
export interface QueryTable {
  columns: string[];
  rows: Row[];
}

/**
 * Runs `sql` — one statement or several (`CREATE TEMP TABLE …; SELECT …`) — and reads the last one's
 * result whole: each statement in turn, bound to the parameters it names (a statement names only
 * some of them). Run as one text, several statements printed the first one's result (the others'
 * dropped without a word) or, with a parameter in any but the last, failed with "Values were not
 * provided". SQL without a statement (empty, only comments) is a usage error.
 */
export async function readStatements(db: DuckDBConnection, sql: string, params?: Record<string, unknown>): Promise<ResultReader> {
  // what extractStatements fails on without a word of why ("Error in native callback")
  if (sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').replace(/[\s;]/g, '') === '') throw new UsageError('it holds no SQL statement');
  let statements;
  try {
    statements = await db.extractStatements(sql);
  } catch (err) {
    // DuckDB's own error, as running the text gives it (`Parser Error: syntax error at or near …`)
    throw new Error(String((err as Error).message).replace(/^Failed to extract statements: /, ''));
  }
  if (statements.count === 1) {
    // prepared only to be checked: a statement that does not prepare fails below as it runs
    const prepared = await statements.prepare(0).catch(() => undefined);
    if (prepared) refuseExtensions(prepared.statementType, 1, 1);
    return db.runAndReadAll(sql, params as never);
  }
  let last: ResultReader | undefined;
  for (let i = 0; i < statements.count; i++) {
    const prepared = await statements.prepare(i);
    refuseExtensions(prepared.statementType, i + 1, statements.count);
    const bound: Record<string, unknown> = Object.create(null);
    for (let p = 1; p <= prepared.parameterCount; p++) {
      const name = prepared.parameterName(p);
      // `$1` or `?` takes no --param (names only): as one statement fails on it, not bound to NULL
      if (/^\d+$/.test(name)) throw new Error(`Invalid Input Error: Expected ${prepared.parameterCount} parameters, but none were supplied (statement ${i + 1})`);
      bound[name] = (params && Object.hasOwn(params, name) ? params[name] : null) ?? null;
    }
    if (prepared.parameterCount > 0) prepared.bind(bound as never);
    last = await prepared.runAndReadAll();
  }
  return last!;
}

/**
 * cachelens never touches the network: `INSTALL httpfs` (and `FORCE INSTALL`, `UPDATE EXTENSIONS`)
 * downloaded from extensions.duckdb.org, whatever the autoinstall options say, and `LOAD` of an
 * extension installed before could give a query `https://…` to read. Refused before the statement
 * runs (those before it have run, as when a statement fails); parquet, json and icu are built in.
 */
function refuseExtensions(type: number, n: number, count: number): void {
  const { StatementType } = duckdb();
  if (type !== StatementType.LOAD && type !== StatementType.UPDATE_EXTENSIONS) return;
  const which = count > 1 ? ` (statement ${n})` : '';
  throw new UsageError(`INSTALL, LOAD and UPDATE EXTENSIONS are refused${which}: cachelens never touches the network and loads no extension`, 'parquet, json and icu are built in; run DuckDB itself to use another');
}

/** What queryTable reads of a DuckDB result. */
interface ResultReader {
  columnNames(): string[];
  convertRows<T>(converter: DuckDBValueConverter<T>): (T | null)[][];
}

/**
 * A user's query may return any type: values are made what JSON and CSV hold exactly, at any depth
 * of lists, structs and maps (printedValue: an integer beyond 2^53 as its decimal text, a DATE as
 * YYYY-MM-DD, a timestamp as ISO 8601 in UTC, a TIME as HH:MM:SS, an INTERVAL or a BLOB as DuckDB's text).
 * Rows by position: two columns of the same name keep both (uniqueNames: `n`, `n:1`).
 */
export function queryTable(reader: ResultReader): QueryTable {
  const columns = uniqueNames(reader.columnNames());
  const rows = reader.convertRows(printedValue).map((values) => {
    const out: Row = {};
    // defined, not assigned: a column named `__proto__` (a PIVOT over transcript text can name one)
    // set the row's prototype instead, and the column was missing from --json and the table, `{}` in --csv
    columns.forEach((c, i) => Object.defineProperty(out, c, { value: values[i] ?? null, enumerable: true, writable: true, configurable: true }));
    return out;
  });
  return { columns, rows };
}

/**
 * Column names made unique, each column keeping its own: a name seen before gets `:1`, `:2`, … (the
 * first free suffix that no column is named). DuckDB's deduplicatedColumnNames gave `x, x:1, x:1`
 * for the columns `x, x, "x:1"`, and the second `x`'s value was lost under the third's.
 * Example: ['x', 'x', 'x:1'] → ['x', 'x:2', 'x:1'].
 */
export function uniqueNames(names: readonly string[]): string[] {
  const taken = new Set(names);
  const seen = new Set<string>();
  return names.map((name) => {
    if (!seen.has(name)) {
      seen.add(name);
      return name;
    }
    let k = 1;
    while (taken.has(`${name}:${k}`)) k++;
    taken.add(`${name}:${k}`);
    return `${name}:${k}`;
  });
}

/** DuckDB BIGINT/HUGEINT/DECIMAL come back as bigint or objects; analyses want plain numbers. */
export function plainRow(r: Record<string, unknown>): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(r)) out[k] = plain(v);
  return out;
}

function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Date) return v.getTime();
  return v;
}
