/**
 * Appends the facts of many files: `files` rows one by one, the fact tables either in DuckDB data
 * chunks of up to 2,048 rows (one native call per string and per chunk, where the row appender
 * made one per value: 5 million calls for a 1 GB corpus), or, for a large ingest, staged as CSV
 * in files that DuckDB loads in bulk when the writer closes. Everything is written by close().
 *
 *   FileFacts ─▶ encodeFacts (reader worker) ─▶ columns ─▶ StoreWriter.columns ─▶ chunk ─▶ table
 *                           └▶ csvFacts (reader worker) ─▶ text ─▶ StoreWriter.csv ─▶ file ─▶ read_csv ─▶ table
 *
 * Why stage: rows appended in one transaction stay in DuckDB's memory, outside its bound, until
 * the commit (~90 MB of observations on 1 GB of logs, ~0.9 GB on 10 GB); a bulk INSERT from a file
 * writes row groups out as it goes and stays within the bound.
 */
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { DuckDBAppender, DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';
import type { FileFacts } from '../ingest/file-parser.js';
import { type ColumnKind, FACT_COLUMNS, type FactColumns, type FactCsv, type FactTable, type TableColumns, csvRows, encodeFacts, encodeSkips } from './fact-columns.js';
import type { FileRow } from './store.js';

const CHUNK_ROWS = 2048;

const { DuckDBDataChunk } = duckdb;
const DUCK_TYPE: Record<ColumnKind, DuckDBType> = { int: duckdb.INTEGER, tiny: duckdb.TINYINT, double: duckdb.DOUBLE, bool: duckdb.BOOLEAN, text: duckdb.VARCHAR };

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
        else for (let i = 0; i < n; i++) dst[this.rows + i] = src[from + i];
      }
      this.rows += n;
      from += n;
      if (this.rows === CHUNK_ROWS) this.flush();
    }
  }

  flush(): void {
    if (this.rows === 0) return;
    const chunk = DuckDBDataChunk.create(this.kinds.map((k) => DUCK_TYPE[k]));
    chunk.setColumns(this.values.map((v) => (this.rows === CHUNK_ROWS ? v : v.slice(0, this.rows))) as never);
    this.appender.appendDataChunk(chunk);
    this.rows = 0;
  }
}

const SQL_TYPE: Record<ColumnKind, string> = { int: 'INTEGER', tiny: 'TINYINT', double: 'DOUBLE', bool: 'BOOLEAN', text: 'VARCHAR' };

/** Text gathered before one write to a staged table's file. */
const STAGE_WRITE_CHARS = 1 << 20;

/** A table's rows as CSV (csvRows) in a file, loaded into the table by load(). */
class StagedTable {
  private readonly fd: number;
  private parts: string[] = [];
  private chars = 0;
  private empty = true;

  constructor(
    private readonly table: FactTable,
    private readonly path: string,
  ) {
    this.fd = openSync(path, 'w');
  }

  add(t: TableColumns): void {
    this.text(csvRows(FACT_COLUMNS[this.table], t));
  }

  text(s: string): void {
    if (s === '') return;
    this.parts.push(s);
    this.chars += s.length;
    this.empty = false;
    if (this.chars >= STAGE_WRITE_CHARS) this.write();
  }

  private write(): void {
    if (this.parts.length > 0) writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.chars = 0;
  }

  close(): void {
    this.write();
    closeSync(this.fd);
  }

  async load(db: DuckDBConnection): Promise<void> {
    if (this.empty) return;
    const columns = FACT_COLUMNS[this.table].map((k, i) => `c${i}: '${SQL_TYPE[k]}'`).join(', ');
    // every option spelled out: nothing is sniffed, a quoted "" is an empty string and only an
    // empty unquoted field is NULL
    await db.run(
      `INSERT INTO ${this.table} SELECT * FROM read_csv('${this.path.replaceAll("'", "''")}', header = false, auto_detect = false, ` +
        `delim = ',', quote = '"', escape = '"', new_line = '\\n', allow_quoted_nulls = false, columns = {${columns}})`,
    );
  }
}

export interface WriterOptions {
  /** stage the fact tables' rows in a new directory here (named <prefix>XXXXXX), loaded in bulk by close() */
  stageAs?: string;
}

export class StoreWriter {
  private constructor(
    private readonly db: DuckDBConnection,
    private readonly files: DuckDBAppender,
    private readonly appenders: DuckDBAppender[],
    private readonly chunks: Partial<Record<FactTable, PendingChunk>>,
    private readonly staged: Partial<Record<FactTable, StagedTable>>,
    /** the staging directory, removed by close() and discard() */
    private readonly stage: string | null,
  ) {}

  static async create(db: DuckDBConnection, opts: WriterOptions = {}): Promise<StoreWriter> {
    const files = await db.createAppender('files');
    const appenders: DuckDBAppender[] = [files];
    const chunks: Partial<Record<FactTable, PendingChunk>> = {};
    const staged: Partial<Record<FactTable, StagedTable>> = {};
    const stage = opts.stageAs === undefined ? null : mkdtempSync(opts.stageAs);
    try {
      for (const t of Object.keys(FACT_COLUMNS) as FactTable[]) {
        if (stage !== null) staged[t] = new StagedTable(t, join(stage, `${t}.csv`));
        else {
          const a = await db.createAppender(t);
          appenders.push(a);
          chunks[t] = new PendingChunk(FACT_COLUMNS[t], a);
        }
      }
    } catch (err) {
      if (stage !== null) rmSync(stage, { recursive: true, force: true });
      throw err;
    }
    return new StoreWriter(db, files, appenders, chunks, staged, stage);
  }

  /** Whether the fact tables' rows are staged as CSV (then csv() takes them as the readers encode them). */
  get staging(): boolean {
    return this.stage !== null;
  }

  file(f: FileRow): void {
    const a = this.files;
    a.appendInteger(f.fileId);
    a.appendVarchar(f.path);
    a.appendVarchar(f.root);
    a.appendVarchar(f.kind);
    a.appendBigInt(BigInt(f.size));
    a.appendDouble(f.mtimeMs);
    a.appendBigInt(BigInt(f.readTo));
    a.appendBigInt(BigInt(f.lines));
    a.appendVarchar(f.headHash);
    nullable(a, f.sessionId);
    nullable(a, f.agentId);
    a.appendVarchar(f.project);
    a.appendInteger(f.synthetic);
    nullable(a, f.metaAgentType);
    nullable(a, f.metaToolUseId);
    nullable(a, f.parserState ? JSON.stringify(f.parserState) : null);
    a.endRow();
  }

  /** One file's facts, already in columns (encodeFacts, done by the reader). */
  columns(c: FactColumns): void {
    for (const t of Object.keys(c) as FactTable[]) (this.chunks[t] ?? this.staged[t]!).add(c[t]!);
  }

  /** One file's facts as CSV text (csvFacts, done by the reader); only while staging. */
  csv(c: FactCsv): void {
    for (const t of Object.keys(c) as FactTable[]) {
      const staged = this.staged[t];
      if (!staged) throw new Error('StoreWriter.csv: this writer does not stage its rows');
      staged.text(c[t]!);
    }
  }

  facts(x: FileFacts): void {
    this.columns(encodeFacts(x));
  }

  skips(x: Pick<FileFacts, 'fileId' | 'skipped'>): void {
    this.columns(encodeSkips(x));
  }

  /** Writes everything: the appenders' rows, then the staged tables' (and removes their files). */
  async close(): Promise<void> {
    try {
      for (const p of Object.values(this.chunks)) p.flush();
      for (const a of this.appenders) a.closeSync();
      const staged = Object.values(this.staged);
      for (const s of staged) s.close();
      for (const s of staged) await s.load(this.db);
    } finally {
      this.discard();
    }
  }

  /** Removes the staging directory, if any (close() does; call it when close() is not reached). */
  discard(): void {
    if (this.stage !== null) rmSync(this.stage, { recursive: true, force: true });
  }
}

/**
 * Where a store at `dbPath` stages a large ingest's rows: beside the store file (the temp
 * directory may be memory), or in the temp directory for `:memory:`. Directories left by a run
 * that was killed are removed first: whoever opened the store holds DuckDB's lock on it, so no
 * other run is using them.
 * Example: /home/u/.cache/cachelens/store.duckdb → /home/u/.cache/cachelens/store.duckdb.facts-
 */
export function stagePrefix(dbPath: string): string {
  if (dbPath === ':memory:') return join(tmpdir(), 'cachelens-facts-');
  const prefix = `${basename(dbPath)}.facts-`;
  const dir = dirname(dbPath);
  for (const e of readdirSync(dir)) if (e.startsWith(prefix) && e.length === prefix.length + 6) rmSync(join(dir, e), { recursive: true, force: true });
  return join(dir, prefix);
}

function nullable(a: DuckDBAppender, v: string | null): void {
  if (v === null) a.appendNull();
  else a.appendVarchar(v);
}
