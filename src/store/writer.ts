/**
 * Appends the facts of many files: `files` rows one by one, the fact tables in DuckDB data chunks
 * of up to 2,048 rows (one native call per string and per chunk, where the row appender made one
 * per value: 5 million calls for a 1 GB corpus). Or, for a large ingest, stages every row as CSV
 * (stage.ts): the readers write their own files into the writer's stage directory, the writer
 * its own, and close() has DuckDB load them all in bulk.
 *
 *   FileFacts ─▶ encodeFacts (reader worker) ─▶ columns ─▶ StoreWriter.columns ─▶ chunk ─▶ table
 *                           └─▶ StagedRows (reader worker) ─▶ <table>.<tag>.csv ─▶ close(): read_csv ─▶ table
 *
 * Why stage: rows appended in one transaction stay in DuckDB's memory, outside its bound, until
 * the commit (~90 MB of observations on 1 GB of logs, most of ~1 GB on 10 GB); a bulk INSERT from
 * files writes row groups out as it goes.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { DuckDBAppender, DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';
import { running } from './location.js';
import type { FileFacts } from '../ingest/file-parser.js';
import { type ColumnKind, FACT_COLUMNS, type FactColumns, type FactTable, type TableColumns, encodeFacts, encodeSkips } from './fact-columns.js';
import { FILE_COLUMNS, STAGED_COLUMNS, type StagedTable, StagedRows, fileValues, longestRow } from './stage.js';
import type { FileRow } from './store.js';

const CHUNK_ROWS = 2048;

/** DuckDB's type of each kind of column (a writer is made only over an open store: DuckDB is loaded) */
function duckType(kind: ColumnKind): DuckDBType {
  const d = duckdb();
  return { int: d.INTEGER, tiny: d.TINYINT, big: d.BIGINT, double: d.DOUBLE, bool: d.BOOLEAN, text: d.VARCHAR }[kind];
}

/** Rows of one table waiting for a full chunk, kept as plain value arrays. */
class PendingChunk {
  private readonly values: unknown[][];
  private rows = 0;

  constructor(
    private readonly kinds: readonly ColumnKind[],
    private readonly appender: DuckDBAppender,
  ) {
    this.values = kinds.map(() => new Array<unknown>(CHUNK_ROWS));
  }

  add(t: TableColumns): void {
    for (let from = 0; from < t.rows; ) {
      const n = Math.min(t.rows - from, CHUNK_ROWS - this.rows);
      for (let c = 0; c < this.kinds.length; c++) {
        const src = t.cols[c];
        const dst = this.values[c];
        if (this.kinds[c] === 'bool') for (let i = 0; i < n; i++) dst[this.rows + i] = src[from + i] === 1;
        else if (this.kinds[c] === 'big') for (let i = 0; i < n; i++) dst[this.rows + i] = BigInt(src[from + i] as number);
        else for (let i = 0; i < n; i++) dst[this.rows + i] = src[from + i];
      }
      this.rows += n;
      from += n;
      if (this.rows === CHUNK_ROWS) this.flush();
    }
  }

  flush(): void {
    if (this.rows === 0) return;
    const chunk = duckdb().DuckDBDataChunk.create(this.kinds.map(duckType));
    chunk.setColumns(this.values.map((v) => (this.rows === CHUNK_ROWS ? v : v.slice(0, this.rows))) as never);
    this.appender.appendDataChunk(chunk);
    this.rows = 0;
  }
}

const SQL_TYPE: Record<ColumnKind, string> = { int: 'INTEGER', tiny: 'TINYINT', big: 'BIGINT', double: 'DOUBLE', bool: 'BOOLEAN', text: 'VARCHAR' };

export interface WriterOptions {
  /** stage every row in a new directory here (named <prefix>XXXXXX), loaded in bulk by close() */
  stageAs?: string;
  /**
   * the files whose `files` rows are there and are written over (INSERT OR REPLACE), not appended:
   * appended files whose rows a user's table refers to, which DuckDB does not let the store delete (Store.prepareAppend)
   */
  replacing?: ReadonlySet<number>;
}

export class StoreWriter {
  private constructor(
    private readonly db: DuckDBConnection,
    /** the `files` appender, when not staging */
    private readonly files: DuckDBAppender | null,
    private readonly appenders: DuckDBAppender[],
    private readonly chunks: Partial<Record<FactTable, PendingChunk>>,
    /** this writer's own staged rows (the `files` rows, and facts given to columns()), when staging */
    private readonly staged: StagedRows | null,
    /** where readers stage their rows too (see stage.ts); removed by close() and discard() */
    readonly stageDir: string | null,
    /** WriterOptions.replacing */
    private readonly replacing: ReadonlySet<number>,
    /** the rows of those files, written by close() when not staging */
    private readonly replaced: (string | number | null)[][] = [],
  ) {}

  static async create(db: DuckDBConnection, opts: WriterOptions = {}): Promise<StoreWriter> {
    if (opts.stageAs !== undefined) {
      const dir = mkdtempSync(opts.stageAs);
      return new StoreWriter(db, null, [], {}, new StagedRows(dir, 'writer'), dir, opts.replacing ?? new Set());
    }
    const files = await db.createAppender('files');
    const appenders: DuckDBAppender[] = [files];
    const chunks: Partial<Record<FactTable, PendingChunk>> = {};
    for (const t of Object.keys(FACT_COLUMNS) as FactTable[]) {
      const a = await db.createAppender(t);
      appenders.push(a);
      chunks[t] = new PendingChunk(FACT_COLUMNS[t], a);
    }
    return new StoreWriter(db, files, appenders, chunks, null, null, opts.replacing ?? new Set());
  }

  file(f: FileRow): void {
    const a = this.files;
    if (a === null) {
      this.staged!.file(f);
      return;
    }
    if (this.replacing.has(f.fileId)) {
      this.replaced.push(fileValues(f));
      return;
    }
    for (const [c, v] of fileValues(f).entries()) {
      if (v === null) a.appendNull();
      else if (FILE_COLUMNS[c] === 'int') a.appendInteger(v as number);
      else if (FILE_COLUMNS[c] === 'big') a.appendBigInt(BigInt(v));
      else if (FILE_COLUMNS[c] === 'double') a.appendDouble(v as number);
      else a.appendVarchar(v as string);
    }
    a.endRow();
  }

  /** One file's facts, already in columns (encodeFacts, done by the reader). */
  columns(c: FactColumns): void {
    if (this.staged) this.staged.facts(c);
    else for (const t of Object.keys(c) as FactTable[]) this.chunks[t]!.add(c[t]!);
  }

  facts(x: FileFacts): void {
    this.columns(encodeFacts(x));
  }

  skips(x: Pick<FileFacts, 'fileId' | 'skipped'>): void {
    this.columns(encodeSkips(x));
  }

  /**
   * Writes everything: the appenders' rows, or every staged file (this writer's and the readers',
   * which must be closed by now) loaded table by table; the stage directory is removed either way.
   * `whileLoading` runs once, while DuckDB loads the first staged table (`files`, when there is one).
   */
  async close(whileLoading?: () => void): Promise<void> {
    try {
      for (const p of Object.values(this.chunks)) p.flush();
      for (const a of this.appenders) a.closeSync();
      if (this.stageDir !== null) {
        this.staged!.close();
        await loadStaged(this.db, this.stageDir, whileLoading, this.replacing.size > 0);
      }
      for (const v of this.replaced) {
        await this.db.run(`INSERT OR REPLACE INTO files VALUES (${v.map((_, i) => `$${i + 1}`).join(', ')})`, v.map((x, i) => (x !== null && FILE_COLUMNS[i] === 'big' ? BigInt(x) : x)) as never);
      }
    } finally {
      this.discard();
    }
  }

  /**
   * Loads one staged `observations` file that its reader has closed (stage.ts Pieces) and removes
   * it, so close() does not load it again. One at a time: the caller waits for each.
   */
  async loadPiece(path: string): Promise<void> {
    if (this.stageDir === null || dirname(path) !== this.stageDir || !basename(path).startsWith('observations.')) throw new Error(`not a staged observations file: ${path}`);
    await insertStaged(this.db, 'observations', [path], longestRow(basename(path)));
    rmSync(path, { force: true });
  }

  /** Bytes staged so far for `table` by every writer whose files are closed (0 when not staging). */
  stagedBytes(table: StagedTable): number {
    return this.stageDir === null ? 0 : (stagedFiles(this.stageDir).get(table)?.bytes ?? 0);
  }

  /**
   * Removes the stage directory, if any (close() does; call it when close() is not reached). Again
   * when a reader made a file in it meanwhile (Ctrl-C while they still write: ingest.ts).
   */
  discard(): void {
    if (this.stageDir !== null) rmSync(this.stageDir, { recursive: true, force: true, maxRetries: 2 });
  }
}

/**
 * Loads every non-empty `<table>.<tag>.csv` in `dir` into its table, one INSERT per table. Every
 * read_csv option is spelled out: nothing is sniffed, a quoted "" is an empty string and only an
 * empty unquoted field is NULL.
 */
async function loadStaged(db: DuckDBConnection, dir: string, whileLoading?: () => void, replacing = false): Promise<void> {
  const staged = stagedFiles(dir);
  // `files` first: with each file's parser state it is the second largest (~0.25 s of a 1 GB
  // load), long enough to hide what runs beside it, and that is best done before the others grow
  // DuckDB's memory
  const order = [...staged].sort(([a], [b]) => (a === 'files' ? -1 : b === 'files' ? 1 : 0));
  for (const [table, { files, longest }] of order) {
    // the statement is under way once insertStaged returns its promise
    const loading = insertStaged(db, table, files, longest, replacing && table === 'files');
    if (whileLoading) {
      const during = whileLoading;
      whileLoading = undefined;
      try {
        during();
      } catch (err) {
        await loading.catch(() => undefined); // DuckDB is done with the staged files before they go
        throw err;
      }
    }
    await loading;
  }
}

/** One INSERT of staged files into their table (`longest`: their longest row, or 0 when none is long). */
function insertStaged(db: DuckDBConnection, table: StagedTable, files: string[], longest: number, replacing = false): Promise<unknown> {
  const columns = STAGED_COLUMNS[table].map((k, i) => `c${i}: '${SQL_TYPE[k]}'`).join(', ');
  const list = files.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ');
  // room for the longest row, in a buffer that holds two (DuckDB wants it larger than a row)
  const line = Math.max(DEFAULT_MAX_LINE, longest + 1024);
  const long = longest > 0 ? `max_line_size = ${line}, buffer_size = ${2 * line}, ` : '';
  return db.run(
    `INSERT${replacing ? ' OR REPLACE' : ''} INTO ${table} SELECT * FROM read_csv([${list}], header = false, auto_detect = false, ` +
      `delim = ',', quote = '"', escape = '"', new_line = '\\n', allow_quoted_nulls = false, ${long}columns = {${columns}})`,
  );
}

/** DuckDB's CSV reader's default longest row (max_line_size). */
const DEFAULT_MAX_LINE = 2 * 2 ** 20;

/** The non-empty `<table>.<tag>.csv` files in `dir`, by table, with their bytes and their longest row if long (longestRow). */
function stagedFiles(dir: string): Map<StagedTable, { files: string[]; bytes: number; longest: number }> {
  const byTable = new Map<StagedTable, { files: string[]; bytes: number; longest: number }>();
  for (const e of readdirSync(dir).sort()) {
    const table = e.slice(0, e.indexOf('.')) as StagedTable;
    if (!Object.hasOwn(STAGED_COLUMNS, table) || !e.endsWith('.csv')) continue;
    const path = join(dir, e);
    const { size } = statSync(path);
    if (size === 0) continue;
    const t = byTable.get(table) ?? { files: [], bytes: 0, longest: 0 };
    t.files.push(path);
    t.bytes += size;
    t.longest = Math.max(t.longest, longestRow(e));
    byTable.set(table, t);
  }
  return byTable;
}

/**
 * Where a store at `dbPath` stages a large ingest's rows: beside the store file (the temp
 * directory may be memory), or in the temp directory for `:memory:`. Directories left by a run
 * that was killed are removed first: whoever opened the store holds DuckDB's lock on it, so no
 * other run is using them. In-memory stores hold no lock and share the temp directory, so there
 * the directory's name carries the run's pid and only those of runs no longer running are removed
 * (without the pid none was ever removed: a `--db :memory:` run killed while it read left its
 * staged rows in the temp directory for good, ~0.1 of the logs' size).
 * Example: /home/u/.cache/cachelens/store.duckdb → /home/u/.cache/cachelens/store.duckdb.facts-;
 * :memory: → /tmp/cachelens-facts-4242-
 */
export function stagePrefix(dbPath: string): string {
  if (dbPath === ':memory:') {
    const dir = tmpdir();
    try {
      for (const e of readdirSync(dir)) {
        const pid = /^cachelens-facts-(\d+)-.{6}$/.exec(e)?.[1];
        if (pid && Number(pid) !== process.pid && !running(Number(pid))) rmSync(join(dir, e), { recursive: true, force: true });
      }
    } catch {
      // they only take room
    }
    return join(dir, `cachelens-facts-${process.pid}-`);
  }
  const prefix = `${basename(dbPath)}.facts-`;
  const dir = dirname(dbPath);
  for (const e of readdirSync(dir)) if (e.startsWith(prefix) && e.length === prefix.length + 6) rmSync(join(dir, e), { recursive: true, force: true });
  return join(dir, prefix);
}
