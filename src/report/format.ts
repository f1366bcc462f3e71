/** Number formatting for the report's text: units and thousands separators, always en-US. */

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const usd2 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** `$1,234.57`; `unknown` when the price is unknown. Example: fmtUsd(-0.5) === '−$0.50' */
export function fmtUsd(usd: number | null): string {
  if (usd === null) return 'unknown';
  const s = usd2.format(Math.abs(usd));
  return usd < 0 ? '−' + s : s;
}

/** `1,234,567` */
export function fmtInt(n: number): string {
  const s = int.format(Math.abs(n));
  return n < 0 ? '−' + s : s;
}

/** Tokens with a unit: `1,234 tokens`. */
export function fmtTokens(n: number): string {
  return `${fmtInt(n)} tokens`;
}

/** Weight with its unit (base-input-token equivalents). */
export function fmtWeight(n: number): string {
  return `${fmtInt(n)} wt`;
}

/** A share 0..1 as a percentage. Example: fmtPct(0.3951) === '39.5%' */
export function fmtPct(share: number, digits = 1): string {
  const s = (Math.abs(share) * 100).toFixed(digits) + '%';
  return share < 0 ? '−' + s : s;
}

/** A signed share: `+18.0%` / `−5.2%`. */
export function fmtSignedPct(share: number, digits = 1): string {
  return share > 0 ? '+' + fmtPct(share, digits) : fmtPct(share, digits);
}

/** UTC time `2026-01-05 14:03 UTC`. */
export function fmtTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}
