/**
 * `cachelens whatif keepalive`: what pinging a 5-minute chain every I seconds would have cost
 * and saved, per ping budget B (SPEC §5.2), replayed over the real gaps.
 *
 * For each gap g between two requests of a chain whose TTL in force is 5 minutes (the first
 * request after a compaction is a cold restart, not a gap; a chain's last request has none):
 *   m = min(B, ⌈g / I⌉ − 1) pings, 0 when g ≤ I;
 *   one ping costs a read of the cached prefix C_{i−1} + pingIn tokens at the 5-minute write
 *   weight + pingOut output tokens, priced with the model of request i−1 at prompt C_{i−1} + pingIn;
 *   the gap is bridged when g − m·I ≤ TTL; a bridged expiry rewrite becomes a read, saving
 *   rw × (W5m − Wread) at the model of request i.
 * Pings on gaps that turn out shorter than the TTL are pure cost (the scheduler cannot know).
 *
 * Readings:
 * - `gaps_over_ttl` counts gaps with g > 5 minutes; `bridged` + `expired_after_budget` split them.
 *   A bridged gap without an expiry rewrite (nothing to re-buy) saves nothing.
 * - net_saving_pct_subagent = net saving on subagent chains / weight of subagent chains;
 *   net_saving_pct_all = net saving on all chains / weight of all chains (both in percent,
 *   null when the denominator is 0). Pings are sent on main chains too.
 * - A gap where request i−1 or i is unpriced is left out and counted in `unpriced_gaps`.
 * - Budgets are ping counts per gap; Infinity is reported as "inf". best_budget is the budget
 *   with the largest net saving weight, ties to the smaller budget.
 *
 * Example (I = 270 s, pingIn 30, pingOut 10, opus weights 1 / 1.25 / 2 / 0.1 / 5):
 *   #1 t=0      w 20,000                 C = 20,000
 *   #2 t=280s   r 20,000  w 1,000        g = 280 s: m = min(B, 1); one ping = 2,000 + 37.5 + 50 = 2,087.5, pure cost
 *   #3 t=1,480s r 0       w 22,000       g = 1,200 s, expiry rw 21,000: m = min(B, 4); one ping = 2,187.5;
 *                                        bridged only when 1,200 − 270·m ≤ 300, i.e. m = 4
 *   B = 0: net 0 (1 gap over TTL expired); B = 1: −2,087.5 − 2,187.5 = −4,275 (expired);
 *   B ≥ 4 or ∞: −2,087.5 − 4 × 2,187.5 + 21,000 × 1.15 = 13,312.5 (bridged, 5 pings); best B = 4.
 */
import { UsageError } from '../errors.js';
import { anatomizeChain } from './anatomy.js';
import { DEFAULT_JITTER, promptTokens, TTL_MS, type ChainInput, type WeightsFor } from './chain.js';
import { totalWeight, weigh } from './weigh.js';

export const DEFAULT_BUDGETS: readonly number[] = [...Array.from({ length: 21 }, (_, b) => b), Infinity];

export interface KeepaliveOptions {
  /** seconds between pings; must be below the 5-minute TTL (default 270) */
  intervalS?: number;
  /** pings per gap: one budget or a list (default 0…20 and Infinity) */
  budgets?: number | readonly number[];
  /** input tokens of one ping, written at the 5-minute weight (default 30) */
  pingIn?: number;
  /** output tokens of one ping (default 10) */
  pingOut?: number;
  weightsFor: WeightsFor;
  jitter?: number;
}

export interface KeepaliveBudgetRow {
  budget: number | 'inf';
  pings: number;
  gaps_over_ttl: number;
  bridged: number;
  expired_after_budget: number;
  ping_weight: number;
  saved_weight: number;
  net_saving_weight: number;
  net_saving_usd: number;
  net_saving_weight_subagent: number;
  net_saving_pct_subagent: number | null;
  net_saving_pct_all: number | null;
}

export interface KeepaliveResult {
  interval_s: number;
  ttl_s: number;
  ping_in: number;
  ping_out: number;
  jitter: number;
  /** gaps of 5-minute chains considered (priced) */
  gaps: number;
  unpriced_gaps: number;
  baseline_weight: number;
  subagent_weight: number;
  budgets: KeepaliveBudgetRow[];
  best_budget: number | 'inf' | null;
}

export function pingsFor(gapMs: number, intervalMs: number, budget: number): number {
  if (gapMs <= intervalMs) return 0;
  return Math.min(budget, Math.ceil(gapMs / intervalMs) - 1);
}

export function whatifKeepalive(chains: readonly ChainInput[], options: KeepaliveOptions): KeepaliveResult {
  const whatif = new KeepaliveWhatIf(options);
  for (const chain of chains) whatif.add(chain);
  return whatif.result();
}

/**
 * whatifKeepalive a chain at a time, for callers that read the chains in batches (the report):
 * add each chain once, then take the result. Each gap is tallied into every budget's row as it
 * is met, in the order the chains come, so nothing per gap is kept.
 */
export class KeepaliveWhatIf {
  private readonly intervalS: number;
  private readonly intervalMs: number;
  private readonly ttlMs = TTL_MS['5m'];
  private readonly pingIn: number;
  private readonly pingOut: number;
  private readonly jitter: number;
  private readonly budgets: BudgetTally[];
  private gaps = 0;
  private unpricedGaps = 0;
  private baselineWeight = 0;
  private subagentWeight = 0;

  constructor(private readonly options: KeepaliveOptions) {
    this.intervalS = options.intervalS ?? 270;
    if (!(this.intervalS > 0 && this.intervalS * 1000 < this.ttlMs)) throw new UsageError(`keepalive interval must be above 0 and below the 300-second TTL, got ${this.intervalS}`);
    this.intervalMs = this.intervalS * 1000;
    const budgets = options.budgets === undefined ? DEFAULT_BUDGETS : typeof options.budgets === 'number' ? [options.budgets] : options.budgets;
    for (const b of budgets) {
      if (!(b === Infinity || (Number.isInteger(b) && b >= 0))) throw new UsageError(`keepalive budget must be a whole number ≥ 0 or inf, got ${b}`);
    }
    this.budgets = budgets.map((budget) => new BudgetTally(budget));
    this.pingIn = options.pingIn ?? 30;
    this.pingOut = options.pingOut ?? 10;
    this.jitter = options.jitter ?? DEFAULT_JITTER;
  }

  add(chain: ChainInput): void {
    const { weightsFor } = this.options;
    const subagent = chain.kind !== 'main';
    const anatomy = anatomizeChain(chain, { jitter: this.jitter });
    anatomy.forEach((a, i) => {
      const w = weightsFor(a.request.model, promptTokens(a.request));
      if (w) {
        const weight = totalWeight(weigh(a.request, w));
        this.baselineWeight += weight;
        if (subagent) this.subagentWeight += weight;
      }
      if (i === 0 || a.coldStart || a.ttl !== '5m') return;
      const prev = anatomy[i - 1]!.request;
      const pw = weightsFor(prev.model, a.cachedPrefix + this.pingIn);
      if (!w || !pw) {
        this.unpricedGaps++;
        return;
      }
      const pingWeight = a.cachedPrefix * pw.read + this.pingIn * pw.write5m + this.pingOut * pw.output;
      const saving = a.expiry * (w.write5m - w.read);
      this.gaps++;
      for (const b of this.budgets) b.add(a.gapMs!, subagent, pingWeight, pingWeight * pw.usdPerWeight, saving, saving * w.usdPerWeight, this.intervalMs, this.ttlMs);
    });
  }

  result(): KeepaliveResult {
    const rows = this.budgets.map((b) => b.row(this.baselineWeight, this.subagentWeight));
    let best: KeepaliveBudgetRow | null = null;
    for (const row of rows) {
      if (!best || row.net_saving_weight > best.net_saving_weight || (row.net_saving_weight === best.net_saving_weight && budgetValue(row) < budgetValue(best))) best = row;
    }
    return {
      interval_s: this.intervalS,
      ttl_s: this.ttlMs / 1000,
      ping_in: this.pingIn,
      ping_out: this.pingOut,
      jitter: this.jitter,
      gaps: this.gaps,
      unpriced_gaps: this.unpricedGaps,
      baseline_weight: this.baselineWeight,
      subagent_weight: this.subagentWeight,
      budgets: rows,
      best_budget: best ? best.budget : null,
    };
  }
}

function budgetValue(row: KeepaliveBudgetRow): number {
  return row.budget === 'inf' ? Infinity : row.budget;
}

/** One budget's sums over the gaps of 5-minute chains (priced), added in the order they are met. */
class BudgetTally {
  private pings = 0;
  private over = 0;
  private bridged = 0;
  private pingWeight = 0;
  private saved = 0;
  private netUsd = 0;
  private netSubagent = 0;

  constructor(private readonly budget: number) {}

  /** A gap of `gapMs`; one ping's weight and USD, and what bridging the gap would save. */
  add(gapMs: number, subagent: boolean, pingWeight: number, pingUsd: number, saving: number, savingUsd: number, intervalMs: number, ttlMs: number): void {
    const m = pingsFor(gapMs, intervalMs, this.budget);
    this.pings += m;
    let net = -m * pingWeight;
    this.pingWeight += m * pingWeight;
    this.netUsd -= m * pingUsd;
    if (gapMs > ttlMs) {
      this.over++;
      if (gapMs - m * intervalMs <= ttlMs) {
        this.bridged++;
        this.saved += saving;
        net += saving;
        this.netUsd += savingUsd;
      }
    }
    if (subagent) this.netSubagent += net;
  }

  row(all: number, subagentAll: number): KeepaliveBudgetRow {
    const net = this.saved - this.pingWeight;
    return {
      budget: this.budget === Infinity ? 'inf' : this.budget,
      pings: this.pings,
      gaps_over_ttl: this.over,
      bridged: this.bridged,
      expired_after_budget: this.over - this.bridged,
      ping_weight: this.pingWeight,
      saved_weight: this.saved,
      net_saving_weight: net,
      net_saving_usd: this.netUsd,
      net_saving_weight_subagent: this.netSubagent,
      net_saving_pct_subagent: subagentAll > 0 ? (this.netSubagent / subagentAll) * 100 : null,
      net_saving_pct_all: all > 0 ? (net / all) * 100 : null,
    };
  }
}
