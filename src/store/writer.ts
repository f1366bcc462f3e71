/**
 * Appends the facts of many files: `files` rows one by one, the fact tables in DuckDB data chunks
 * of up to 2,048 rows (one native call per string and per chunk, where the row appender made one
 * per value: 5 million calls for a 1 GB corpus, the largest cost left on the main thread).
 * Everything is flushed by close().
 *
 *   FileFacts ─▶ encodeFacts (reader worker) ─▶ columns ─▶ StoreWriter.columns ─▶ chunk ─▶ table
 */
import type { DuckDBAppender, DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';
import type { FileFacts } from '../ingest/file-parser.js';
import { type Column, type ColumnKind, FACT_COLUMNS, type FactColumns, type FactTable, encodeFacts, encodeSkips } from './fact-columns.js';
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

  add(t: { rows: number; cols: Column[] }): void {
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

export class StoreWriter {
  private constructor(
    private readonly files: DuckDBAppender,
    private readonly appenders: DuckDBAppender[],
    private readonly pending: Record<FactTable, PendingChunk>,
  ) {}

  static async create(db: DuckDBConnection): Promise<StoreWriter> {
    const files = await db.createAppender('files');
    const appenders: DuckDBAppender[] = [files];
    const pending = {} as Record<FactTable, PendingChunk>;
    for (const t of Object.keys(FACT_COLUMNS) as FactTable[]) {
      const a = await db.createAppender(t);
      appenders.push(a);
      pending[t] = new PendingChunk(FACT_COLUMNS[t], a);
    }
    return new StoreWriter(files, appenders, pending);
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
    for (const t of Object.keys(c) as FactTable[]) this.pending[t].add(c[t]!);
  }

  facts(x: FileFacts): void {
    this.columns(encodeFacts(x));
  }

  skips(x: Pick<FileFacts, 'fileId' | 'skipped'>): void {
    this.columns(encodeSkips(x));
  }

  close(): void {
    for (const p of Object.values(this.pending)) p.flush();
    for (const a of this.appenders) a.closeSync();
  }
}

function nullable(a: DuckDBAppender, v: string | null): void {
  if (v === null) a.appendNull();
  else a.appendVarchar(v);
}
