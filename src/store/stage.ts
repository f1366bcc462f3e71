/**
 * Staging a large ingest's rows as CSV files, which the StoreWriter has DuckDB load in bulk when
 * it closes (rows appended in one transaction stay in DuckDB's memory until the commit; a bulk
 * INSERT from a file writes row groups out as it goes). Each writer of rows — a reader worker, the
 * main thread reading small jobs, the StoreWriter itself — has its own file per table, named
 * `<table>.<tag>.csv`, so nothing is handed between threads.
 *
 * This module does not load DuckDB, so reader workers can stage without it.
 *
 * Example: a stage directory after a run on two workers holds observations.w0.csv,
 * observations.w1.csv, files.writer.csv, …; `observations.*.csv` are loaded into `observations`.
 */
import { closeSync, ftruncateSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type ColumnKind, FACT_COLUMNS, type FactColumns, type FactTable, type TableColumns } from './fact-columns.js';
import { storedParserState } from '../ingest/file-parser.js';
import type { FileRow } from './store.js';

/** The `files` table's columns (schema.ts), for staging its rows like the fact tables'. */
export const FILE_COLUMNS = ['int', 'text', 'text', 'text', 'big', 'double', 'big', 'big', 'text', 'text', 'text', 'text', 'int', 'text', 'text', 'text'] as const satisfies readonly ColumnKind[];

export type StagedTable = FactTable | 'files';

/** A `files` row's values, in the order of the table's columns (schema.ts), whose kinds are FILE_COLUMNS. */
export function fileValues(f: FileRow): (string | number | null)[] {
  return [f.fileId, f.path, f.root, f.kind, f.size, f.mtimeMs, f.readTo, f.lines, f.headHash, f.sessionId, f.agentId, f.project, f.synthetic, f.metaAgentType, f.metaToolUseId, f.parserState ? storedParserState(f.parserState) : null];
}

export const STAGED_COLUMNS: Record<StagedTable, readonly ColumnKind[]> = { ...FACT_COLUMNS, files: FILE_COLUMNS };

/** Bytes gathered before one write to a file. */
const WRITE_BYTES = 1 << 20;

/**
 * Rows from this many bytes on are long: DuckDB's CSV reader takes rows of at most 2 MiB unless
 * told otherwise, and a field of a transcript can be longer. A file holding one is renamed on
 * closing to say how long its longest row is (`<table>.<tag>.long-<bytes>.csv`; longestRow), so
 * the loader can make room for it.
 */
const LONG_ROW_BYTES = 1 << 20;

/**
 * A CSV file written from a buffer: each row is built as a string and encoded into it with one
 * call (a call per value took ~40% longer; a string per file was kept by a reader's heap as
 * garbage, ~120 MB per worker on 10 GB of logs). Numbers as JS prints
 * them (which round-trips, NaN and ±Infinity included; -0 spelled out), booleans as true/false,
 * text always quoted with `""` for a quote, NULL as an empty unquoted field (the loader reads a
 * quoted "" as an empty string).
 * Example: rows (7, 'a"b', NULL) and (8, '', 'x') are written as `7,"a""b",\n8,"","x"\n`.
 */
export class CsvFile {
  private readonly fd: number;
  private readonly buf = Buffer.allocUnsafe(WRITE_BYTES);
  private at = 0;
  /** bytes written to the file so far (the buffer's not counted) */
  private written = 0;
  /** bytes of the longest row so far, its newline included */
  private longest = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'wx');
  }

  rows(kinds: readonly ColumnKind[], t: TableColumns): void {
    const { rows, cols } = t;
    const last = kinds.length - 1;
    for (let i = 0; i < rows; i++) {
      let row = '';
      for (let c = 0; c <= last; c++) {
        const v = cols[c][i];
        const kind = kinds[c];
        if (kind === 'text') {
          if (v !== null) row += (v as string).includes('"') ? `"${(v as string).replaceAll('"', '""')}"` : `"${v as string}"`;
        } else if (kind === 'bool') row += v === 1 ? 'true' : 'false';
        else row += v === 0 && 1 / (v as number) < 0 ? '-0' : String(v);
        row += c === last ? '\n' : ',';
      }
      this.row(row);
    }
  }

  private row(row: string): void {
    // at most 3 bytes per UTF-16 unit (a surrogate pair is 4 bytes for 2)
    const most = row.length * 3;
    if (this.at + most > WRITE_BYTES) this.flush();
    let bytes: number;
    if (most > WRITE_BYTES) {
      bytes = writeSync(this.fd, row, this.written);
      this.written += bytes;
    } else {
      bytes = this.buf.write(row, this.at, 'utf8');
      this.at += bytes;
    }
    this.longest = Math.max(this.longest, bytes);
  }

  private flush(): void {
    if (this.at > 0) this.written += writeSync(this.fd, this.buf, 0, this.at, this.written);
    this.at = 0;
  }

  /** Bytes of rows so far, written or buffered: a mark to truncate back to. */
  position(): number {
    return this.written + this.at;
  }

  /**
   * Drops the rows after `pos` (a position() taken before them). The longest row is not taken
   * back: the loader may then make room for a row that is gone, which costs nothing.
   */
  truncate(pos: number): void {
    if (pos >= this.written) this.at = pos - this.written;
    else {
      ftruncateSync(this.fd, pos);
      this.written = pos;
      this.at = 0;
    }
  }

  /** Writes what is buffered and closes the file; returns its path, which a long row renames. */
  close(): string {
    this.flush();
    closeSync(this.fd);
    if (this.longest < LONG_ROW_BYTES) return this.path;
    const path = this.path.replace(/\.csv$/, `.long-${this.longest}.csv`);
    renameSync(this.path, path);
    return path;
  }
}

/**
 * The bytes of the longest row in a staged file, when it has a long one (CsvFile), else 0.
 * Example: `events.w0.long-3000017.csv` → 3000017; `events.w0.csv` → 0.
 */
export function longestRow(name: string): number {
  const m = /\.long-(\d+)\.csv$/.exec(name);
  return m ? Number(m[1]) : 0;
}

/**
 * Pieces of `observations`: its file is closed once it holds `bytes`, between two calls of
 * StagedRows.add, and handed to `done`, which may load it at once (DuckDB reads it while the rows
 * after it go to the next file, `observations.<tag>-<n>.csv`). A file still open at close() is
 * not handed on: it is loaded with the rest.
 */
export interface Pieces {
  bytes: number;
  done: (path: string) => void;
}

/** One writer's staged rows: a CSV file per table, opened as rows for it first arrive. */
export class StagedRows {
  private readonly open = new Map<StagedTable, CsvFile>();
  /** observations files handed on as pieces so far */
  private pieceCount = 0;

  constructor(
    private readonly dir: string,
    private readonly tag: string,
    private readonly pieces: Pieces | null = null,
  ) {}

  add(table: StagedTable, t: TableColumns): void {
    let f = this.open.get(table);
    if (!f) {
      const tag = table === 'observations' && this.pieceCount > 0 ? `${this.tag}-${this.pieceCount}` : this.tag;
      f = new CsvFile(join(this.dir, `${table}.${tag}.csv`));
      this.open.set(table, f);
    }
    f.rows(STAGED_COLUMNS[table], t);
    if (this.pieces && table === 'observations' && f.position() >= this.pieces.bytes) {
      this.open.delete(table);
      this.pieceCount++;
      this.pieces.done(f.close());
    }
  }

  /** One file's facts (encodeFacts). */
  facts(c: FactColumns): void {
    for (const t of Object.keys(c) as FactTable[]) this.add(t, c[t]!);
  }

  /** Where each table's rows end now, to take back what follows (rollback). */
  mark(): Map<StagedTable, { file: CsvFile; at: number }> {
    return new Map([...this.open].map(([t, file]) => [t, { file, at: file.position() }]));
  }

  /**
   * Drops every row added since `mark` was taken from the files still open: a file opened since
   * is emptied. Rows in pieces handed on since are not taken back (the reader's caller deletes a
   * failed file's facts from the store once loaded: ingest.ts).
   */
  rollback(mark: Map<StagedTable, { file: CsvFile; at: number }>): void {
    for (const [t, f] of this.open) {
      const m = mark.get(t);
      f.truncate(m?.file === f ? m.at : 0);
    }
  }

  /** One `files` row. */
  file(f: FileRow): void {
    this.add('files', { rows: 1, cols: fileValues(f).map((v) => [v]) as TableColumns['cols'] });
  }

  close(): void {
    for (const f of this.open.values()) f.close();
    this.open.clear();
  }
}
