/**
 * How `--json` (and the HTML report's embedded data) writes a number that is not an integer: rounded
 * to JSON_DIGITS significant digits, then as the shortest text that reads back as that number.
 *
 * Why: weights and dollars are sums and products of doubles (weights 1.25, 2, 0.1 × tokens, USD =
 * weight × a per-token price), so their last bits are noise: 1475294.5999999999 for 1475294.6,
 * 12.340000000000002 for 12.34. Rounding each printed number to 12 significant digits removes it
 * (measured on the sample corpus and the real logs: 14 digits was the most that left none, 15 left
 * some, and the error of a sum grows with its terms) and changes a number by at most half a unit in
 * its 12th digit, 5·10⁻¹² of it: less than $0.000001 on $100,000, 0.05 token-equivalents below
 * 10¹⁰ (where weights, multiples of 0.05, stay exact). Significant digits rather than fixed
 * decimals: the same rule holds for $0.00000008 (one cache-read token of Haiku 3.5) and for a
 * weight of 10⁹, and for shares and ratios, whose digits past the 12th no one reads.
 *
 * From 10¹⁰ (11 whole digits) a number keeps its whole part and two decimals (JSON_LARGE_DECIMALS):
 * 12 digits left it one decimal there (12345678901.234 was 12345678901.2, a weight's 0.05 lost) and
 * rounded the units of a weight in a corpus of 10¹² tokens. Integers (token counts, request counts, epoch milliseconds) are never changed, a number never
 * becomes null (NaN and ±Infinity are null in JSON as they were), and the rule is a function of
 * the number alone, so equal results still print byte-identical JSON (cold, warm and append runs).
 *
 * Example: jsonNumber(1475294.5999999999) === 1475294.6; jsonNumber(0.1 + 0.2) === 0.3;
 * jsonNumber(2 / 3) === 0.666666666667; jsonNumber(13748195) === 13748195.
 */

/** Significant digits kept of a non-integer number in `--json`. */
export const JSON_DIGITS = 12;

/**
 * Decimals kept beyond the whole part of a number too large for JSON_DIGITS to reach its units
 * (from 10¹⁰, 11 whole digits): two, a weight's (a multiple of 0.05). Those numbers' sums come from the store's
 * DECIMAL(38, 15) (exact, then one rounding to a double: under 0.001 off below 2⁵³) or from a
 * few thousand double additions, whose error is far below 0.005 up to 10¹³.
 */
export const JSON_LARGE_DECIMALS = 2;

/**
 * `x` as `--json` prints it (see the module's comment): JSON_DIGITS significant digits, and never
 * fewer than its whole part and JSON_LARGE_DECIMALS: a weight of 8,827,349,978,442.05 (tokens in a
 * corpus of 10¹² of them) was 8827349978440, 12 digits, in --json and every table.
 * Example: jsonNumber(8827349978442.05) === 8827349978442.05; jsonNumber(1234567890123.4999) === 1234567890123.5;
 * jsonNumber(12345678901.234) === 12345678901.23; jsonNumber(9876543210.123) === 9876543210.12 (12 digits).
 */
export function jsonNumber(x: number): number {
  if (Number.isInteger(x) || !Number.isFinite(x)) return x;
  const whole = Math.abs(x) < 1 ? 0 : Math.floor(Math.log10(Math.abs(x))) + 1;
  const digits = Math.max(JSON_DIGITS, whole + JSON_LARGE_DECIMALS);
  // past 17 digits every double reads back as itself: x is written as it is
  return digits >= 17 ? x : Number(x.toPrecision(digits));
}

/** A JSON.stringify replacer that writes every number as jsonNumber does. */
export function roundNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' ? jsonNumber(value) : value;
}

/**
 * `x` as text, as `--json` writes it: for a number the page carries outside its data block (an
 * attribute such as `data-value` or `data-sort`). Example: jsonNumberText(0.1 + 0.2) === '0.3';
 * jsonNumberText(null) === 'null'; jsonNumberText(NaN) === 'null'
 */
export function jsonNumberText(x: number | null): string {
  return JSON.stringify(x === null ? null : jsonNumber(x));
}

/**
 * A copy of `value` (JSON-like) with every number as jsonNumber writes it: for data that is not
 * written through roundNumbers, such as the charts' rows beside their specs.
 * Example: roundedJson({ usd: [12.340000000000002, 7] }) deep-equals { usd: [12.34, 7] }
 */
export function roundedJson<T>(value: T): T {
  if (typeof value === 'number') return jsonNumber(value) as T;
  if (Array.isArray(value)) return value.map(roundedJson) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roundedJson(v)])) as T;
  }
  return value;
}
