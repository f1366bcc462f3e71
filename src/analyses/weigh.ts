/**
 * Weight of token counts by component (SPEC §2.1). Every ranking in cachelens is by weight,
 * never by raw tokens, because a write costs 12.5–20 reads.
 */
import type { Weights } from './chain.js';

/** Token counts as billed: the 5m/1h split decides the write price. */
export interface BilledTokens {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

/** Weight per component, in base-input-token equivalents. */
export interface Components {
  input: number;
  write5m: number;
  write1h: number;
  read: number;
  output: number;
}

export function zeroComponents(): Components {
  return { input: 0, write5m: 0, write1h: 0, read: 0, output: 0 };
}

/** Example: in 3, w5 15,005, r 11,442, out 9 at (1, 1.25, 2, 0.1, 5) → 3 + 18,756.25 + 1,144.2 + 45 = 19,948.45. */
export function weigh(t: BilledTokens, w: Weights): Components {
  return {
    input: t.input * w.input,
    write5m: t.cacheWrite5m * w.write5m,
    write1h: t.cacheWrite1h * w.write1h,
    read: t.cacheRead * w.read,
    output: t.output * w.output,
  };
}

export function totalWeight(c: Components): number {
  return c.input + c.write5m + c.write1h + c.read + c.output;
}

export function addComponents(into: Components, c: Components): void {
  into.input += c.input;
  into.write5m += c.write5m;
  into.write1h += c.write1h;
  into.read += c.read;
  into.output += c.output;
}

/**
 * Whether every request of a row (a group, a chain, a bucket) is of a model without a price: its
 * weights and USD, 0 in the analyses' sums, are then unknown, never 0 or $0.
 */
export function allUnpriced(r: { requests: number; unpriced_requests: number }): boolean {
  return r.requests > 0 && r.unpriced_requests === r.requests;
}

/**
 * Whether a row's requests without a price wrote expiry or break tokens: the waste they leave out of its
 * sums (marked +?, or unknown when nothing in the row is priced); when they wrote none, its waste is whole,
 * 0 in a row priced nowhere (README's one rule for +?).
 */
export function wasteLeftOut(r: { unpriced_tokens: { expiry: number; break: number } }): boolean {
  return r.unpriced_tokens.expiry + r.unpriced_tokens.break > 0;
}
