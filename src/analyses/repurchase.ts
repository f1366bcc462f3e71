/**
 * The re-purchase pattern (SPEC §3, last paragraph): a chain whose reads stay pinned near a
 * constant (system prompt and tools) while its writes grow is re-buying its whole context every
 * round, so its cumulative write weight grows quadratically in rounds.
 */
import type { RequestAnatomy } from './anatomy.js';

/** Fixed by the SPEC, independent of the jitter tolerance. */
export const REPURCHASE_READ_TOLERANCE = 1024;
export const REPURCHASE_MIN_ROUNDS = 3;
export const REPURCHASE_REWRITE_SHARE = 0.8;

export interface RepurchaseCheck {
  flagged: boolean;
  /** rounds seen in the chain's requests (distinct `round` values) */
  rounds: number;
  /** median of the reads of every round's first request; null without requests */
  readMedian: number | null;
}

/**
 * Flagged when the chain has at least 3 rounds, the reads of every round's first request lie
 * within 1,024 tokens of their median (|r − median| ≤ 1,024; the median of an even count is the
 * mean of the middle two), and every round's first request after the first has
 * rw ≥ 0.8 × C_{i−1}. rw is the anatomy's rewriteTokens, so a round that starts with a cold
 * restart after compaction (rw 0) breaks the pattern. A round is a distinct `round` value;
 * its first request is the earliest one carrying it. Round 0 (a request only an agent_progress
 * copy holds) is no round: counted, it made a 2-round chain a 3-round one.
 *
 * Example (one request per round):
 *   round 1: r 13,800  w 120,000                 → C = 133,800
 *   round 2: r 13,818  w 131,000  rw 119,982 ≥ 0.8 × 133,800 = 107,040 → C = 144,818
 *   round 3: r 13,810  w 140,000  rw 131,008 ≥ 0.8 × 144,818 = 115,854.4
 *   median read 13,810, every read within 1,024 of it → flagged.
 */
export function detectRepurchase(anatomy: readonly RequestAnatomy[]): RepurchaseCheck {
  const firsts: RequestAnatomy[] = [];
  const seen = new Set<number>();
  for (const a of anatomy) {
    // round 0 is no round: a request only a parent's agent_progress copy holds, whose prompt is unknown
    if (a.request.round === 0 || seen.has(a.request.round)) continue;
    seen.add(a.request.round);
    firsts.push(a);
  }
  const reads = firsts.map((a) => a.request.cacheRead);
  const readMedian = median(reads);
  const flagged =
    firsts.length >= REPURCHASE_MIN_ROUNDS &&
    reads.every((r) => Math.abs(r - readMedian!) <= REPURCHASE_READ_TOLERANCE) &&
    firsts.slice(1).every((a) => a.rewriteTokens >= REPURCHASE_REWRITE_SHARE * a.cachedPrefix);
  return { flagged, rounds: firsts.length, readMedian };
}

/** The middle value, or the mean of the two middle ones; null for none. */
export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
