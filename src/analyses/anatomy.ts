/**
 * Cache anatomy of one chain (SPEC §3): every request's cache write split into cold, expiry,
 * break and growth, with the gap, the TTL in force and the cached prefix it was judged against.
 *
 * Decisions where the SPEC leaves room (tested in test/analyses/anatomy.test.ts):
 * - A gap exactly equal to the TTL is still inside it (expiry needs g > TTL).
 * - The TTL in force looks back across compaction segments: a compaction changes the prefix,
 *   not the cache setting.
 * - A cold request (first of the chain or of a segment) has rewriteTokens 0 and all of its w
 *   is cold, even when it reads less than the previous prefix.
 * - A rewrite below the jitter tolerance is growth (gw = w − rw with rw = 0).
 * - A break's causes are the events with t_{i−1} < t ≤ t_i (an event stamped at the same
 *   millisecond as the previous request is taken to precede that request, not this one) and a
 *   model change from request i−1 to i. No cause found → an empty list.
 */
import { DEFAULT_JITTER, TTL_MS, type ChainEvent, type ChainInput, type ChainRequest, type Ttl } from './chain.js';

export type WriteClass = 'cold' | 'expiry' | 'break' | 'growth' | 'none';

export interface RequestAnatomy {
  index: number;
  request: ChainRequest;
  /** t_i − t_{i−1} in ms; null for the chain's first request */
  gapMs: number | null;
  /** TTL_{i−1}: the TTL the previous prefix was cached with; null for the chain's first request */
  ttl: Ttl | null;
  /** C_{i−1} = r_{i−1} + w_{i−1}; 0 for the chain's first request */
  cachedPrefix: number;
  /** first request of the chain or of a compaction segment: all of w is cold */
  coldStart: boolean;
  /**
   * the model differs from request i−1's: its cache is another model's, so no TTL and no
   * keepalive ping would have let it read C_{i−1} (the what-ifs save none of its rewrite)
   */
  modelSwitch: boolean;
  /** rw_i after the jitter tolerance; 0 for cold requests */
  rewriteTokens: number;
  cold: number;
  expiry: number;
  break: number;
  growth: number;
  /** cold for a cold start; else expiry / break when rw > 0; else growth when w > 0; else none */
  class: WriteClass;
  /** for breaks: `attachment:<type>`, `compaction:<detail>`, `model:<from>→<to>` */
  causes: string[];
}

export interface AnatomyOptions {
  /** rewrites below this many tokens count as 0 (default 1,024) */
  jitter?: number;
}

/**
 * Example (5-minute TTL, jitter 1,024):
 *   #1 t=0      r 0      w 10,000 → cold 10,000; C = 10,000
 *   #2 t=1m     r 10,000 w 2,000  → rw = min(2,000, max(0, 10,000 − 10,000)) = 0 → growth 2,000; C = 12,000
 *   #3 t=7m     r 0      w 13,000 → gap 6m > 5m, rw = min(13,000, 12,000) = 12,000 → expiry 12,000, growth 1,000
 *   #4 t=7m30s  r 4,000  w 10,000 → gap 30s ≤ 5m, rw = min(10,000, 13,000 − 4,000) = 9,000 → break 9,000, growth 1,000
 * Had #1–#3 written 1-hour tokens, #3 would be a break (6m ≤ 1h).
 */
export function anatomizeChain(chain: ChainInput, options: AnatomyOptions = {}): RequestAnatomy[] {
  const jitter = options.jitter ?? DEFAULT_JITTER;
  const events = [...(chain.events ?? [])].sort((a, b) => a.t - b.t);
  const out: RequestAnatomy[] = [];
  let lastWriterTtl: Ttl = '5m';
  let prev: ChainRequest | null = null;
  inTimeOrder(chain.requests).forEach((req, index) => {
    const w = req.cacheWrite;
    let a: RequestAnatomy;
    if (prev === null) {
      a = blank(index, req, null, null, 0);
      a.coldStart = true;
      a.cold = w;
    } else {
      const cachedPrefix = prev.cacheRead + prev.cacheWrite;
      a = blank(index, req, req.t - prev.t, lastWriterTtl, cachedPrefix);
      a.modelSwitch = req.model !== prev.model;
      if (req.segment !== prev.segment) {
        a.coldStart = true;
        a.cold = w;
      } else {
        const raw = Math.min(w, Math.max(0, cachedPrefix - req.cacheRead));
        const rw = raw >= jitter ? raw : 0;
        a.rewriteTokens = rw;
        a.growth = w - rw;
        if (a.gapMs! > TTL_MS[lastWriterTtl]) a.expiry = rw;
        else a.break = rw;
        if (a.break > 0) a.causes = causesBetween(events, prev, req);
      }
    }
    a.class = classOf(a);
    out.push(a);
    if (w > 0) lastWriterTtl = req.cacheWrite1h > 0 ? '1h' : '5m';
    prev = req;
  });
  return out;
}

/** Chains arrive sorted by t; a caller that forgot gets a stable-sorted copy, never a negative gap. */
function inTimeOrder(requests: readonly ChainRequest[]): readonly ChainRequest[] {
  for (let i = 1; i < requests.length; i++) {
    if (requests[i]!.t < requests[i - 1]!.t) return [...requests].sort((a, b) => a.t - b.t);
  }
  return requests;
}

function blank(index: number, request: ChainRequest, gapMs: number | null, ttl: Ttl | null, cachedPrefix: number): RequestAnatomy {
  return { index, request, gapMs, ttl, cachedPrefix, coldStart: false, modelSwitch: false, rewriteTokens: 0, cold: 0, expiry: 0, break: 0, growth: 0, class: 'none', causes: [] };
}

function classOf(a: RequestAnatomy): WriteClass {
  if (a.coldStart) return 'cold';
  if (a.expiry > 0) return 'expiry';
  if (a.break > 0) return 'break';
  return a.growth > 0 ? 'growth' : 'none';
}

/** Events in (prev.t, req.t] and a model switch, in time order, without repeats. */
function causesBetween(events: readonly ChainEvent[], prev: ChainRequest, req: ChainRequest): string[] {
  const causes: string[] = [];
  for (let i = firstAfter(events, prev.t); i < events.length && events[i]!.t <= req.t; i++) {
    const e = events[i]!;
    causes.push(`${e.kind}:${e.detail}`);
  }
  if (prev.model !== req.model) causes.push(`model:${prev.model}→${req.model}`);
  return [...new Set(causes)];
}

/** Index of the first event with t > after (events sorted by t). */
function firstAfter(events: readonly ChainEvent[], after: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid]!.t <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
