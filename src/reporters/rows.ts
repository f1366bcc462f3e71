/**
 * Reporters for arbitrary query rows (`cachelens query`): an aligned table and RFC 4180 CSV.
 * Rows come from user SQL over transcript data, so every text cell is untrusted: the table drops
 * control characters (clean), and CSV quotes what needs quoting (and, printed to a terminal, drops
 * control characters other than tabs and line breaks).
 */
import { type Cell, type Column, clean, cleanKeepingLines, int, table } from '../format/table.js';
import type { Row } from '../store/store.js';

export function columnsOf(rows: readonly Row[]): string[] {
  return rows.length > 0 ? Object.keys(rows[0]!) : [];
}

export function formatRows(rows: readonly Row[], color: boolean): string {
  const cols = columnsOf(rows);
  if (cols.length === 0) return '(no rows)';
  const numeric = cols.map((c) => rows.every((r) => r[c] === null || typeof r[c] === 'number'));
  // a column's name can be transcript text too (`PIVOT requests ON agent_type`): cleaned as the cells are
  const columns: Column[] = cols.map((c, i) => ({ header: clean(c), align: numeric[i] ? 'num' : 'text' }));
  const cells: Cell[][] = rows.map((r) => cols.map((c) => cellText(r[c])));
  return table(columns, cells, { color });
}

/** Numbers: integers with separators; fractions to 4 significant digits (ratios), large ones rounded. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') {
    if (Number.isInteger(v) || Math.abs(v) >= 1000) return int(v);
    return String(Number(v.toPrecision(4)));
  }
  if (typeof v === 'string') return clean(v);
  return clean(JSON.stringify(v));
}

/**
 * `terminal`: the CSV is printed to a terminal, so control characters other than tabs and line breaks become '?'.
 * `columns`: the result's columns, so that a result without rows still has its header line.
 */
export function toCsv(rows: readonly Row[], terminal = false, columns?: readonly string[]): string {
  const cols = columns ?? columnsOf(rows);
  const lines = [cols.map(csvField).join(',')];
  for (const r of rows) lines.push(cols.map((c) => csvCell(r[c])).join(','));
  const text = lines.join('\n');
  return terminal ? cleanKeepingLines(text) : text;
}

/**
 * A value as a CSV field: NULL is an empty field and an empty text `""`, so that the two stay
 * apart (as DuckDB's and PostgreSQL's COPY … CSV write them; PostgreSQL reads them back apart).
 */
function csvCell(v: unknown): string {
  return v === '' ? '""' : csvField(csvValue(v));
}

function csvValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
