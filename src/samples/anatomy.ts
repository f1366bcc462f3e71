/**
 * The cache anatomy of SPEC §3, applied to the generator's own planned requests, so the class
 * and rewrite tokens written to truth.json follow the spec's formulas exactly (not the intent).
 */

export type AnatomyClass = 'cold' | 'growth' | 'expiry' | 'break';

export interface PlannedUsage {
  /** epoch ms of the request (its first line) */
  t: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  /** compaction segment; a request that opens a segment is cold */
  segment: number;
}

export interface Anatomy {
  cls: AnatomyClass;
  /** rw_i: the part of w_i that re-buys the previous cached prefix (0 for cold and growth) */
  rewriteTokens: number;
  /** gw_i = w_i − rw_i (0 for cold) */
  growthTokens: number;
  /** w_1 of a cold request */
  coldTokens: number;
  /** g_i in ms; null for the first request of the chain */
  gapMs: number | null;
  /** TTL_{i−1}; null for the first request of the chain */
  ttlPrev: '5m' | '1h' | null;
}

export const JITTER_TOLERANCE = 1024;
const TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;

/**
 * Classifies the requests of one chain (in time order).
 *
 * Example (5-minute TTL):
 *   1. t=0s,   r=0,      w=20,000            → cold, 20,000
 *   2. t=30s,  r=20,000, w=3,000             → growth (r = C₁ = 20,000)
 *   3. t=20m,  r=0,      w=24,000            → expiry, rw = min(24,000, 23,000) = 23,000; growth 1,000
 *   4. t=20m5s, r=23,500, w=2,000 (C₃=24,000) → growth: rw = 500 < 1,024 is breakpoint jitter
 */
export function classifyChain(requests: readonly PlannedUsage[], tolerance = JITTER_TOLERANCE): Anatomy[] {
  const out: Anatomy[] = [];
  let lastWriteTtl: '5m' | '1h' = '5m';
  for (let i = 0; i < requests.length; i++) {
    const cur = requests[i] as PlannedUsage;
    const w = cur.cacheWrite5m + cur.cacheWrite1h;
    const prev = i > 0 ? (requests[i - 1] as PlannedUsage) : null;
    const ttlPrev = prev ? lastWriteTtl : null;
    const gapMs = prev ? cur.t - prev.t : null;
    if (!prev || cur.segment !== prev.segment) {
      out.push({ cls: 'cold', rewriteTokens: 0, growthTokens: 0, coldTokens: w, gapMs, ttlPrev });
    } else {
      const cachedPrefix = prev.cacheRead + prev.cacheWrite5m + prev.cacheWrite1h;
      let rw = Math.min(w, Math.max(0, cachedPrefix - cur.cacheRead));
      if (rw < tolerance) rw = 0;
      const expired = (gapMs as number) > TTL_MS[lastWriteTtl];
      const cls: AnatomyClass = rw === 0 ? 'growth' : expired ? 'expiry' : 'break';
      out.push({ cls, rewriteTokens: rw, growthTokens: w - rw, coldTokens: 0, gapMs, ttlPrev });
    }
    if (w > 0) lastWriteTtl = cur.cacheWrite1h > 0 ? '1h' : '5m';
  }
  return out;
}

export function ttlMs(ttl: '5m' | '1h'): number {
  return TTL_MS[ttl];
}
