/**
 * Reporters for arbitrary query rows (`cachelens query`): an aligned table and RFC 4180 CSV.
 * Rows come from user SQL over transcript data, so every text cell is untrusted: the table drops
 * control characters (clean), and CSV quotes what needs quoting (and, printed to a terminal, drops
 * control characters other than tabs and line breaks).
 */
import { type Cell, type Column, clean, cleanKeepingLines, fitTable, int, table } from '../format/table.js';
import type { Row } from '../store/store.js';

export function columnsOf(rows: readonly Row[]): string[] {
  return rows.length > 0 ? Object.keys(rows[0]!) : [];
}

/**
 * `order`: the result's columns, in their order: a row's keys put a column named as an integer
 * (`1`, `2`: a PIVOT over rounds names them so) before the others, so `name, 2, 1` showed as `1, 2, name`.
 * A result without rows shows its header above `(no rows)`, as `--csv` prints its header line (it showed
 * `(no rows)` alone, the columns unsaid). On a terminal too narrow for the result its last columns are
 * left out, its first always shown, and named on a line under it (Column.drop). `free`: columns of free
 * text (`query --list`'s purpose), shown whole off a terminal and cut at their end on one too narrow for
 * them (Column.cut, Column.prose); a query's own result is the user's data, every cell shown whole.
 */
export function formatRows(rows: readonly Row[], color: boolean, order?: readonly string[], free: readonly string[] = []): string {
  const cols = order ? [...order] : columnsOf(rows);
  if (cols.length === 0) return '(no rows)';
  // a result without rows is fit to its terminal as one with rows is: its header's last columns left out and named
  if (rows.length === 0) {
    const drops = dropsOf(cols, cols.map(() => false));
    const { text, left } = fitTable(cols.map((c, i) => ({ header: clean(c), align: 'text', whole: true, ...drops[i] })), [], { color, see: '--wide, --json or --csv' });
    // `(no rows)` under the header, the note naming the columns left out below it (it came between them)
    const at = left.length > 0 ? text.lastIndexOf('\n(not shown: ') : -1;
    return at < 0 ? `${text}\n(no rows)` : `${text.slice(0, at)}\n(no rows)${text.slice(at)}`;
  }
  const numeric = cols.map((c) => rows.every((r) => r[c] === null || typeof r[c] === 'number'));
  // a column's name can be transcript text too (`PIVOT requests ON agent_type`): cleaned as the cells are
  // on a terminal too narrow for the result, its last columns are left out first, its first always stays (named under it)
  const drops = dropsOf(cols, numeric);
  const columns: Column[] = cols.map((c, i) => ({
    header: clean(c),
    align: numeric[i] ? 'num' : 'text',
    whole: true,
    ...(free.includes(c) ? { cut: true, prose: true } : {}),
    ...drops[i],
  }));
  const plain = cols.map(namesTimeOrId);
  const cells: string[][] = rows.map((r) => cols.map((c, i) => (plain[i] && typeof r[c] === 'number' && Number.isInteger(r[c]) ? String(r[c]) : cellText(r[c]))));
  cols.forEach((_, i) => numeric[i] && alignPoints(cells, i));
  return table(columns, cells as Cell[][], { color, see: '--wide, --json or --csv' });
}

/**
 * The bundled queries' headline columns (queries/*.sql: cost_by, sessions, hourly, repurchase,
 * write_read_ratio …): what a row costs, or the ratio it is about. A result's column of one of these
 * names (any case) is left out on a narrow terminal after its other numbers, before its text.
 */
const HEADLINE = /^(weight|usd|waste_weight|waste_usd|[a-z_]*ratio)$/i;

/**
 * Column.drop of each of a result's columns: its first always stays; its other columns of numbers are
 * left out first, from the right; then its headline columns (HEADLINE), from the right; then, only
 * where the table still does not fit, its columns of text, which say what a row is (`grp`, `component`):
 * a row that cannot be told from the next says nothing. Left out from the right with weight and usd
 * kept, `query summary` at 80 columns lost `grp` and showed rows `day 62 …`, `model 369 …`.
 * Example: dropsOf(['grp', 'name', 'requests', 'weight', 'chains'], [false, false, true, true, true])
 * → [{}, { drop: 4 }, { drop: 2 }, { drop: 3 }, { drop: 1 }].
 */
export function dropsOf(cols: readonly string[], numeric: readonly boolean[]): { drop?: number }[] {
  const out: { drop?: number }[] = cols.map(() => ({}));
  let next = 1;
  const tiers = [
    (i: number) => numeric[i]! && !HEADLINE.test(cols[i]!),
    (i: number) => HEADLINE.test(cols[i]!),
    (i: number) => !numeric[i]! && !HEADLINE.test(cols[i]!),
  ];
  for (const inTier of tiers) {
    for (let i = cols.length - 1; i > 0; i--) if (inTier(i)) out[i] = { drop: next++ };
  }
  return out;
}

/**
 * Whether a column's name says its integers are a time, a count of a unit of time or an id, which the
 * table prints without thousands separators, as they are written elsewhere and pasted into other tools:
 * `t`, `ts`, `id`, `line`, `epoch`, or a name ending in `_t`, `_ts`, `_id`, `_line`, `_epoch` or a time
 * unit, `_ms`, `_us`, `_ns`, `_s`, `_h` (any case). hourly's hour_ms, 1770714000000, printed as
 * 1,770,714,000,000, and zone_days' from_h as 483,081. Other integers keep their separators.
 * Example: 'hour_ms', 'first_t', 'file_id', 'line', 'from_h' → true; 'lines', 'requests', 'cache_write_1h' → false.
 */
export function namesTimeOrId(name: string): boolean {
  return /^(t|ts|id|line|epoch)$|_(t|ts|id|line|epoch|ms|us|ns|s|h)$/i.test(name);
}

/**
 * A query's numbers as its table shows them: integers exactly, with separators (1,234,567); other
 * numbers to 15 significant digits, or to the cent (2 decimals) where that is more, so no cent and no
 * digit a person typed is lost and the noise summing doubles leaves is: 1234.5678 → '1,234.5678' (it
 * was '1235', to 4 significant digits), 12.340000000000002 → '12.34', 12345678901234.56 →
 * '12,345,678,901,234.56'; below 0.000001 in exponent form ('6.5e-7'), not 0.00000065.
 * `--json` and `--csv` print every value exactly.
 */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') {
    if (Number.isInteger(v)) return int(v);
    if (Math.abs(v) < 1e-6) return String(Number(v.toPrecision(15)));
    // from 10^13 on, 15 significant digits leave fewer than 2 decimals
    if (Math.abs(v) >= 1e13) return (cents ??= new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 })).format(v);
    return (digits15 ??= new Intl.NumberFormat('en-US', { maximumSignificantDigits: 15 })).format(v);
  }
  if (typeof v === 'string') return clean(v);
  return clean(JSON.stringify(v));
}

/** Made on first use (as format/table.ts's formats): a query without fractions need not pay for them. */
let digits15: Intl.NumberFormat | undefined;
let cents: Intl.NumberFormat | undefined;

/**
 * Lines up a number column's decimal points: spaces after a number with fewer decimals than the
 * column's most (and after an integer, one for the point), so that right-aligned cells put units under units.
 * Example: ['1,234.5678', '0.3', '12'] → ['1,234.5678', '0.3   ', '12     '].
 */
function alignPoints(cells: string[][], i: number): void {
  const decimals = (t: string) => {
    const point = t.indexOf('.');
    return point < 0 ? -1 : t.length - point - 1;
  };
  let most = -1;
  for (const r of cells) most = Math.max(most, decimals(r[i]!));
  if (most < 0) return;
  for (const r of cells) if (r[i] !== '') r[i] += ' '.repeat(most - decimals(r[i]!));
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
