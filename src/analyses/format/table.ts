/**
 * Plain-text building blocks for the analysis reporters: aligned columns, thousands separators,
 * units. Locale-independent so output is the same on every machine.
 */

export type Align = 'left' | 'right';

export interface Column {
  header: string;
  align?: Align;
}

/** Columns separated by two spaces; numbers are right-aligned by the caller's choice. */
export function table(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (columns[i]!.align === 'right' ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)].join('\n');
}

/** 1234567.8 → "1,234,568" */
export function int(n: number): string {
  return group(Math.round(n).toString());
}

/** 1234.567, 1 → "1,234.6" */
export function num(n: number, decimals: number): string {
  const [whole, frac] = Math.abs(n).toFixed(decimals).split('.');
  const sign = n < 0 && Number(Math.abs(n).toFixed(decimals)) !== 0 ? '-' : '';
  return sign + group(whole!) + (frac ? `.${frac}` : '');
}

function group(digits: string): string {
  const neg = digits.startsWith('-');
  const d = neg ? digits.slice(1) : digits;
  return (neg ? '-' : '') + d.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A fraction as percent: 0.3947 → "39.5 %"; null → "–" */
export function fraction(x: number | null, decimals = 1): string {
  return x === null ? '–' : `${num(x * 100, decimals)} %`;
}

/** A value already in percent, signed: 2.24 → "+2.24 %" */
export function signedPct(x: number | null, decimals = 2): string {
  if (x === null) return '–';
  return `${x > 0 ? '+' : ''}${num(x, decimals)} %`;
}

/** "$1,234.57", or 4 decimals below one dollar */
export function usd(n: number): string {
  const sign = n < 0 ? '-' : '';
  const a = Math.abs(n);
  return `${sign}$${num(a, a >= 1 || a === 0 ? 2 : 4)}`;
}

/** Seconds as "5s", "19.2m", "4.2h"; null → "–" */
export function duration(s: number | null): string {
  if (s === null) return '–';
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${(s / 60).toFixed(1)}m`;
  return `${(s / 3600).toFixed(1)}h`;
}

/**
 * Transcript text (ids, agent types, models, attachment types) is untrusted: control characters
 * and bidi overrides are shown as \u escapes so they cannot drive the terminal.
 */
export function clean(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
