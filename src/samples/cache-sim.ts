/**
 * Plans the usage block of each request of one chain from a simple model of the prompt cache:
 * the prompt grows by what was added since the last request, and what is read depends on
 * whether the cached prefix is still alive (gap ≤ TTL), was invalidated on purpose (a planted
 * break), or expired. The class is then re-derived by SPEC §3 (anatomy.ts); the generator
 * checks that the two agree, so a planted expiry is an expiry by the spec's own formula.
 */
import { ttlMs } from './anatomy.js';
import type { Rng } from './prng.js';

export type Ttl = '5m' | '1h';

/** Why the simulator chose this read: the planted cause of a request's class. */
export type Cause = 'cold' | 'continue' | 'jitter' | 'expired' | 'break' | 'pinned';

export interface PlannedTokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cause: Cause;
  segment: number;
}

export interface NextRequest {
  t: number;
  /** tokens added to the conversation since the previous request (user turn, tool results, attachments) */
  added: number;
  output: number;
  /** force the read to this many tokens (a prefix break: a volatile line, a re-inserted attachment, a model switch) */
  breakReadTo?: number;
  /** lost agents: read only the pinned system prompt, however warm the rest is */
  pinned?: boolean;
  /** first request after a compaction: a new segment, prompt = system + added */
  afterCompaction?: boolean;
  /** uncached input tokens (after the last breakpoint); 1–3 by default */
  input?: number;
}

export class CacheSim {
  private lastT = -1;
  private cachedPrefix = 0;
  private prompt = 0;
  private lastOutput = 0;
  private segment = 0;
  private count = 0;

  /**
   * @param systemTokens the system prompt + tools prefix, cached across chains (so a cold or
   *   expired request may still read it when `globalRead` is true)
   * @param pinnedRead reads of a lost agent's round openers (e.g. 13,818)
   */
  constructor(
    readonly ttl: Ttl,
    private readonly systemTokens: number,
    private readonly globalRead: boolean,
    private readonly rng: Rng,
    private readonly pinnedRead = systemTokens,
  ) {}

  get lastPrompt(): number {
    return this.prompt;
  }

  /** The cached prefix after the last request: C = r + w. */
  get prefix(): number {
    return this.cachedPrefix;
  }

  /**
   * Plans the next request. The prompt is the previous prompt + its output + what was added;
   * the read is the whole cached prefix while it is alive, the system prompt (or 0) after an
   * expiry, a planted break point, or the pinned read of a lost agent; the write is the rest.
   *
   * Example (5-minute TTL, system prompt 10,000 read from a warm global cache, input 1):
   *   1. t=0,    added 5,000            → prompt 15,001: read 10,000, write 5,000 (cold)
   *   2. t=30s,  output₁ 200, added 800 → prompt 16,001: read C₁ = 15,000, write 1,000 (continue)
   *   3. t=20m,  output₂ 100, added 50  → prompt 16,151: expired, read 10,000, write 6,150
   *      (SPEC §3: rw = min(6,150, 16,000 − 10,000) = 6,000 expiry, 150 growth)
   */
  next(req: NextRequest): PlannedTokens {
    const input = req.input ?? this.rng.int(1, 3);
    const first = this.count === 0;
    let prompt: number;
    let read: number;
    let cause: Cause;
    if (first || req.afterCompaction) {
      if (req.afterCompaction) this.segment++;
      prompt = this.systemTokens + req.added + input;
      read = req.pinned ? this.pinned() : this.globalRead ? this.systemTokens : 0;
      cause = 'cold';
    } else {
      prompt = this.prompt + this.lastOutput + req.added;
      const expired = req.t - this.lastT > ttlMs(this.ttl);
      if (req.pinned) {
        read = this.pinned();
        cause = expired ? 'expired' : 'pinned';
      } else if (expired) {
        read = this.globalRead ? this.systemTokens : 0;
        cause = 'expired';
      } else if (req.breakReadTo !== undefined) {
        read = req.breakReadTo;
        cause = 'break';
      } else if (this.rng.chance(0.12)) {
        // breakpoint jitter: a few hundred tokens re-written, below the 1,024 tolerance
        read = Math.max(0, this.cachedPrefix - this.rng.int(1, 900));
        cause = 'jitter';
      } else {
        read = this.cachedPrefix;
        cause = 'continue';
      }
    }
    const write = prompt - read - input;
    if (write <= 0) throw new Error(`planned write ${write} ≤ 0 (prompt ${prompt}, read ${read})`);
    this.count++;
    this.lastT = req.t;
    this.prompt = prompt;
    this.lastOutput = req.output;
    this.cachedPrefix = read + write;
    return {
      input,
      output: req.output,
      cacheRead: read,
      cacheWrite5m: this.ttl === '5m' ? write : 0,
      cacheWrite1h: this.ttl === '1h' ? write : 0,
      cause,
      segment: this.segment,
    };
  }

  private pinned(): number {
    // within 1,024 of the median by construction: jitter of a few hundred tokens at most
    return this.rng.chance(0.5) ? this.pinnedRead : this.pinnedRead + this.rng.int(-300, 300);
  }
}
