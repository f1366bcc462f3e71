/** Number formatting for the report's text: units and thousands separators, always en-US. */
import { localDayMinute } from '../format/days.js';
import { jsonNumber } from '../format/json-numbers.js';
import { rounded, usdParts } from '../format/table.js';
import type { ReportMeta } from './data.js';

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** Puts a minus sign (U+2212) before `s` unless the value rounds to zero in print. */
function signed(n: number, s: string): string {
  return n < 0 && /[1-9]/.test(s) ? '−' + s : s;
}

/**
 * A USD amount by the terminal tables' rule (usdParts in format/table.ts, one rule for both): `$1,235`
 * from $100, `$12.35` from a dollar, four decimals under it (`$0.0039`, and `$0.0000` for 0), and
 * `<$0.0001` for a priced amount above 0 too small for those; the minus sign is U+2212, as every
 * number on the page writes it; `unknown` when the price is unknown. Example: fmtUsd(-0.5) === '−$0.5000'
 */
export function fmtUsd(usd: number | null): string {
  if (usd === null || !Number.isFinite(usd)) return 'unknown';
  const { negative, text } = usdParts(usd);
  return `${negative ? '−' : ''}${text}`;
}

/** `1,234,567` */
export function fmtInt(n: number): string {
  // rounded as --json and the terminal tables round it first: one weight summed in two orders,
  // 8,734,583.5 and 8,734,583.4999999, is one number, 8,734,584, on the page too
  n = jsonNumber(n);
  return signed(n, int.format(Math.abs(n)));
}

/** A count and its noun, singular for 1: `1 request`, `2 requests`. Example: fmtCount(1, 'chain') === '1 chain' */
export function fmtCount(n: number, noun: string, plural = noun + 's'): string {
  return `${fmtInt(n)} ${n === 1 ? noun : plural}`;
}

/** Tokens with a unit: `1,234 tokens`. */
export function fmtTokens(n: number): string {
  return `${fmtInt(n)} tokens`;
}

/** Weight with its unit (base-input-token equivalents). */
export function fmtWeight(n: number): string {
  return `${fmtInt(n)} wt`;
}

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** Short form for big headline numbers. Example: fmtCompact(82_474_000) === '82.5M' */
export function fmtCompact(n: number): string {
  return signed(n, compact.format(Math.abs(n)));
}

/** A share 0..1 as a percentage; `n/a` when there is nothing to divide by. Example: fmtPct(0.3951) === '39.5%' */
export function fmtPct(share: number | null, digits = 1): string {
  if (share === null) return 'n/a';
  // the whole part grouped in thousands, as the tables' (-241,642.2%, not -241642.2%)
  // rounded as --json writes the share, halves away from zero, as the tables' pct() (format/table.ts rounded())
  return signed(share, rounded(Math.abs(jsonNumber(share)) * 100, digits) + '%');
}

/** A signed share: `+18.0%` / `−5.2%`. */
export function fmtSignedPct(share: number | null, digits = 1): string {
  const s = fmtPct(share, digits);
  return share !== null && share > 0 && /[1-9]/.test(s) ? '+' + s : s;
}

const size = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/**
 * Bytes in the largest unit that keeps the number at 1 or more, chosen by the number as shown
 * (rounded to a tenth): 999,960 bytes are "1 MB", not "1,000 kB".
 * Example: fmtBytes(4_200) === '4.2 kB'
 */
export function fmtBytes(n: number): string {
  // below the next unit once rounded as shown
  const below = (unit: number) => Math.round((n / unit) * 10) < 10_000;
  if (Math.round(n) < 1e3) return `${int.format(n)} bytes`;
  if (below(1e3)) return `${size.format(n / 1e3)} kB`;
  return below(1e6) ? `${size.format(n / 1e6)} MB` : `${size.format(n / 1e9)} GB`;
}

/**
 * A time in `timezone` (the run's `--timezone`), the zone named: `2026-01-05 23:03 Asia/Tokyo`;
 * without one, or UTC, `2026-01-05 14:03 UTC` (`+010000-01-01 04:00 UTC` past year 9999).
 */
export function fmtTime(ms: number, timezone?: string): string {
  return `${localDayMinute(ms, timezone ?? 'UTC').join(' ')} ${timezone ?? 'UTC'}`;
}

/** The filters of a report, as given on the command line. Example: { since: '2026-02-02', until: null, project: 'my app' } → '--since 2026-02-02 --project "my app"' */
export function fmtFilters(f: NonNullable<ReportMeta['filters']>): string {
  const project = f.project === null ? null : /\s/.test(f.project) ? `"${f.project}"` : f.project;
  return [f.since === null ? '' : `--since ${f.since}`, f.until === null ? '' : `--until ${f.until}`, project === null ? '' : `--project ${project}`].filter(Boolean).join(' ');
}

/**
 * The mark of a priced sum that leaves requests without a price out (` +?`, as `summary`, `blocks`
 * and `anatomy` mark theirs), else ''; none on an unknown value (null), which says `unknown` itself.
 * Example: leftOutMark(0.66, 1) === ' +?'; leftOutMark(0.66, 0) === ''; leftOutMark(null, 3) === ''
 */
export function leftOutMark(value: number | null, unpriced: number | undefined): string {
  return value !== null && (unpriced ?? 0) > 0 ? ' +?' : '';
}
