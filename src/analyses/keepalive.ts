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
 *   rw × (W5m − Wread) at the model of request i (SPEC §5.2's rw × (1.25 − 0.1)); a request i that
 *   wrote 1-hour tokens too paid its own 5m/1h mix per written token, and that mix is what its
 *   rewrite would not have cost, as `anatomy` prices waste (priceAnatomy).
 * Pings on gaps that turn out shorter than the TTL are pure cost (the scheduler cannot know).
 *
 * Readings:
 * - `gaps_over_ttl` counts gaps with g > 5 minutes; `bridged` + `expired_after_budget` split them.
 *   A bridged gap without an expiry rewrite (nothing to re-buy) saves nothing.
 *   Nor does one that ends in a model switch: the pings (priced with request i−1's model) keep
 *   that model's cache, which request i, of another model, cannot read.
 * - net_saving_pct_subagent = net saving on subagent chains / weight of subagent chains;
 *   net_saving_pct_all = net saving on all chains / weight of all chains (both in percent,
 *   null when the denominator is 0). Pings are sent on main chains too, unless `scope` says
 *   otherwise.
 * - `scope` (main or subagents; default all) is which chains are pinged, as the field note pinged
 *   subagents only. Unlike `whatif ttl --scope`, the chains out of scope stay in every weight
 *   (baseline, subagent weight, their buckets) with no gaps of their own, so net_saving_pct_all is
 *   still the saving over the whole bill. `gaps` and every gap count are of the chains in scope.
 * - A gap where request i−1 or i is unpriced counts in the pings, gaps over the TTL, bridged and
 *   expired (they need no price) and in `unpriced_gaps`; its weights are unknown and left out of
 *   every weight and USD sum (`unpriced_models` names the models).
 * - Budgets are ping counts per gap; Infinity is reported as "inf". best_budget is the budget
 *   with the largest net saving in USD (weights of models with different base prices do not add
 *   up to one cost; with one model the order is the weight's), ties to the smaller budget (rows
 *   come in ascending order); null when no gap is priced.
 * - The interval is taken in whole milliseconds, so a gap of exactly k·I needs k − 1 pings
 *   (128.2 s × 1000 is 128199.99999999999 in floating point).
 * - `buckets` repeat the best budget's row per bucket (SPEC §5: main vs subagent, agent type,
 *   model, rounds bucket); a gap is in the buckets of its chain and the model of request i−1,
 *   whose cache its pings keep and whose price they pay (at a model switch request i's model
 *   would mix another model's weights into its own; the gap saves nothing there anyway);
 *   net_saving_pct is of the bucket's own weight.
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
import { BucketMap, chainBuckets, type BucketDimension } from './buckets.js';
import { DEFAULT_INTERVAL_S, DEFAULT_PING_IN, DEFAULT_PING_OUT } from './defaults.js';
import { counted, DEFAULT_JITTER, inScope, promptTokens, TTL_MS, type ChainInput, type ChainRequest, type Scope, type Weights, type WeightsFor } from './chain.js';
import { totalWeight, weigh } from './weigh.js';
import { E15Sum } from './e15-sum.js';

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
  /** which chains are pinged (default all); the others still count in every weight */
  scope?: Scope;
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
  /** the USD of ping_weight and saved_weight: net_saving_usd = saved_usd − ping_usd */
  ping_usd: number;
  saved_usd: number;
  net_saving_weight: number;
  net_saving_usd: number;
  net_saving_weight_subagent: number;
  net_saving_pct_subagent: number | null;
  net_saving_pct_all: number | null;
}

/** What a bucket's row repeats of the best budget's row. */
type BucketBudgetFields = 'pings' | 'gaps_over_ttl' | 'bridged' | 'expired_after_budget' | 'ping_weight' | 'saved_weight' | 'ping_usd' | 'saved_usd' | 'net_saving_weight' | 'net_saving_usd';

/** The best budget's row over one bucket's chains and gaps. */
export type KeepaliveBucketRow = Pick<KeepaliveBudgetRow, BucketBudgetFields> & {
  dimension: BucketDimension;
  bucket: string;
  /** the best budget (best_budget), whose row this is */
  budget: number | 'inf';
  chains: number;
  requests: number;
  /** of them, requests without a price: baseline_weight and baseline_usd leave them out */
  unpriced_requests: number;
  gaps: number;
  unpriced_gaps: number;
  /** of them, longer than the interval: pinged at a budget above 0 (KeepaliveResult's) */
  unpriced_pinged_gaps: number;
  baseline_weight: number;
  baseline_usd: number;
  /** net saving / the bucket's weight, in percent; null when the bucket has no priced weight */
  net_saving_pct: number | null;
};

export interface KeepaliveResult {
  interval_s: number;
  ttl_s: number;
  ping_in: number;
  ping_out: number;
  /** which chains were pinged: all, main or subagents */
  scope: Scope;
  jitter: number;
  /** gaps of 5-minute chains in scope (a chain's last request and cold restarts have none) */
  gaps: number;
  /** of them, gaps where request i−1 or i has no price: counted, not weighed */
  unpriced_gaps: number;
  /**
   * of those, the gaps longer than the interval: a budget above 0 pings them (and may bridge them),
   * so its sums leave their weights out; a shorter gap gets no ping and adds exactly 0 at any price
   */
  unpriced_pinged_gaps: number;
  unpriced_models: string[];
  baseline_weight: number;
  baseline_usd: number;
  subagent_weight: number;
  /** requests without a price, left out of baseline_weight and baseline_usd */
  unpriced_requests: number;
  /** of them, those of subagent chains, left out of subagent_weight */
  subagent_unpriced_requests: number;
  budgets: KeepaliveBudgetRow[];
  best_budget: number | 'inf' | null;
  /** the best budget, per bucket (empty when there is no best budget) */
  buckets: KeepaliveBucketRow[];
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
 * The weights of one gap as the tallies take them, beside its length, its chain's kind and whether
 * it is priced (a report adds ~150,000 gaps to five tallies: one object, reused): one ping's weight
 * and USD and the saving's weight and USD (0 when unpriced).
 */
interface GapWeights {
  pingWeight: number;
  pingUsd: number;
  saving: number;
  savingUsd: number;
}

/**
 * whatifKeepalive a chain at a time, for callers that read the chains in batches (the report):
 * add each chain once, then take the result. Each gap is added to the totals' and its buckets'
 * sums as it is met (KeepaliveTally), so nothing per gap is kept.
 */
export class KeepaliveWhatIf {
  private readonly intervalS: number;
  private readonly intervalMs: number;
  private readonly ttlMs = TTL_MS['5m'];
  private readonly pingIn: number;
  private readonly pingOut: number;
  private readonly scope: Scope;
  private readonly jitter: number;
  private readonly totals: KeepaliveTally;
  private readonly buckets: BucketMap<KeepaliveTally>;
  private readonly unpricedModels = new Set<string>();
  /** the weights of the gap being added: one object, reused for every gap */
  private readonly gap: GapWeights = { pingWeight: 0, pingUsd: 0, saving: 0, savingUsd: 0 };

  constructor(private readonly options: KeepaliveOptions) {
    this.intervalS = options.intervalS ?? DEFAULT_INTERVAL_S;
    this.intervalMs = Math.round(this.intervalS * 1000);
    if (!(this.intervalMs > 0 && this.intervalMs < this.ttlMs)) throw new UsageError(`keepalive interval must be above 0 and below the 300-second TTL, got ${this.intervalS}`);
    const budgets = options.budgets === undefined ? DEFAULT_BUDGETS : typeof options.budgets === 'number' ? [options.budgets] : options.budgets;
    for (const b of budgets) {
      if (!(b === Infinity || (Number.isInteger(b) && b >= 0))) throw new UsageError(`keepalive budget must be a whole number ≥ 0 or inf, got ${b}`);
    }
    this.pingIn = options.pingIn ?? DEFAULT_PING_IN;
    this.pingOut = options.pingOut ?? DEFAULT_PING_OUT;
    for (const [name, v] of [['ping input', this.pingIn], ['ping output', this.pingOut]] as const) {
      if (!(Number.isInteger(v) && v >= 0)) throw new UsageError(`keepalive ${name} must be a whole number of tokens ≥ 0, got ${v}`);
    }
    this.scope = options.scope ?? 'all';
    if (!['all', 'main', 'subagents'].includes(this.scope)) throw new UsageError(`keepalive scope must be all, main or subagents, got ${String(this.scope)}`);
    this.jitter = options.jitter ?? DEFAULT_JITTER;
    this.totals = new KeepaliveTally(budgets);
    this.buckets = new BucketMap(() => new KeepaliveTally(budgets));
  }

  add(chain: ChainInput): void {
    const { weightsFor } = this.options;
    const subagent = chain.kind !== 'main';
    const pinged = inScope(chain, this.scope);
    const anatomy = anatomizeChain(chain, { jitter: this.jitter });
    if (!anatomy.some((a) => counted(a.request))) return;
    const chainTallies = [this.totals, ...chainBuckets(chain).map(([dimension, bucket]) => this.buckets.get(dimension, bucket))];
    for (const t of chainTallies) t.meet(chain.chainId);
    let modelName = '';
    let model: KeepaliveTally | null = null;
    anatomy.forEach((a, i) => {
      // a request outside the days asked for is the context of those after it, no gap of its own
      if (!counted(a.request)) return;
      if (model === null || a.request.model !== modelName) {
        model = this.buckets.get('model', (modelName = a.request.model));
        model.meet(chain.chainId);
      }
      const modelTally: KeepaliveTally = model;
      const w = weightsFor(a.request.model, promptTokens(a.request));
      const weight = w ? totalWeight(weigh(a.request, w)) : null;
      const usd = w ? weight! * w.usdPerWeight : 0;
      for (const t of chainTallies) t.weigh(weight, usd, subagent);
      modelTally.weigh(weight, usd, subagent);
      if (!w) this.unpricedModels.add(a.request.model);
      if (!pinged || i === 0 || a.coldStart || a.ttl !== '5m') return;
      const prev = anatomy[i - 1]!.request;
      const pw = weightsFor(prev.model, a.cachedPrefix + this.pingIn);
      if (!pw) this.unpricedModels.add(prev.model);
      const priced = pw !== null && w !== null;
      const g = this.gap;
      g.pingWeight = priced ? a.cachedPrefix * pw.read + this.pingIn * pw.write5m + this.pingOut * pw.output : 0;
      g.pingUsd = priced ? g.pingWeight * pw.usdPerWeight : 0;
      // the pings keep request i−1's model's cache: a request of another model cannot read it
      g.saving = priced && !a.modelSwitch ? a.expiry * (writePerToken(a.request, w) - w.read) : 0;
      g.savingUsd = priced ? g.saving * w.usdPerWeight : 0;
      for (const t of chainTallies) t.add(a.gapMs!, subagent, priced, g, this.intervalMs, this.ttlMs);
      // the gap's pings keep request i−1's model's cache at its price: in request i's model bucket
      // (at a model switch) they would add another model's weights to that bucket's own
      const pingModel = prev.model === modelName ? modelTally : this.buckets.get('model', prev.model);
      pingModel.meet(chain.chainId);
      pingModel.add(a.gapMs!, subagent, priced, g, this.intervalMs, this.ttlMs);
    });
  }

  result(): KeepaliveResult {
    const totals = this.totals;
    const rows = totals.rows();
    let best: KeepaliveBudgetRow | null = null;
    if (totals.pricedGaps > 0) {
      // by USD: weights of models with different base prices do not add up to one cost
      for (const row of rows) if (!best || row.net_saving_usd > best.net_saving_usd + 1e-12 * Math.abs(best.net_saving_usd)) best = row;
    }
    const at = best ? rows.indexOf(best) : -1;
    return {
      // the interval the pings were counted at, in whole milliseconds: --interval 0.0006 pinged every 0.001 s
      interval_s: this.intervalMs / 1000,
      ttl_s: this.ttlMs / 1000,
      ping_in: this.pingIn,
      ping_out: this.pingOut,
      scope: this.scope,
      jitter: this.jitter,
      gaps: totals.gaps,
      unpriced_gaps: totals.gaps - totals.pricedGaps,
      unpriced_pinged_gaps: totals.unpricedPingedGaps,
      unpriced_models: [...this.unpricedModels].sort(),
      baseline_weight: totals.weight,
      baseline_usd: totals.usd,
      subagent_weight: totals.subagentWeight,
      unpriced_requests: totals.unpricedRequests,
      subagent_unpriced_requests: totals.unpricedSubagentRequests,
      budgets: rows,
      best_budget: best ? best.budget : null,
      buckets:
        !best
          ? []
          : this.buckets
              .entries((a, b) => b.weight - a.weight)
              .map(({ dimension, bucket, value }) => ({ dimension, bucket, budget: best.budget, ...value.bucketRow(at) })),
    };
  }
}

/**
 * The chains, gaps and weights of one set of chains (all, or a bucket's), and what every budget
 * would send and save on its gaps, tallied in O(1) per gap whatever the budgets: a gap that needs
 * k pings to last until the next request (⌈g/I⌉ − 1) sends min(B, k) under budget B, and one over
 * the TTL is bridged when B reaches kb = ⌈(g − TTL)/I⌉ (kb ≤ k, since k pings leave at most I <
 * TTL). So the gaps are summed by k and by kb (a few distinct values: the gaps' lengths in
 * intervals), and each budget's row is summed from those at the end, in the same order for every
 * budget (a row is the same alone as in a sweep).
 */
class KeepaliveTally {
  chains = 0;
  /** the chain met last: a chain counts once, even when its model changes back */
  private lastChain: string | null = null;
  requests = 0;
  unpricedRequests = 0;
  /** of unpricedRequests, those of subagent chains (left out of subagentWeight) */
  unpricedSubagentRequests = 0;
  gaps = 0;
  pricedGaps = 0;
  /** unpriced gaps longer than the interval: a budget above 0 pings them */
  unpricedPingedGaps = 0;
  // the baseline in units of 10^-15, each request's as DuckDB casts it to DECIMAL(38, 15): summed exactly, as
  // summary sums the store's, so the same requests' total prints the same in both (doubles drifted by 0.06 at 2·10^13)
  private readonly weightE15 = new E15Sum();
  private readonly usdE15 = new E15Sum();
  get weight(): number {
    return this.weightE15.value;
  }
  get usd(): number {
    return this.usdE15.value;
  }
  subagentWeight = 0;
  /** by k: gaps, and the weight, USD and subagent weight of one of their pings */
  private readonly byNeed = new Map<number, Float64Array>();
  /** gaps over the TTL by kb: count, saving weight, USD, subagent saving */
  private readonly byBridge = new Map<number, Float64Array>();
  private over = 0;

  constructor(private readonly budgets: readonly number[]) {}

  meet(chainId: string): void {
    if (chainId === this.lastChain) return;
    this.lastChain = chainId;
    this.chains++;
  }

  /** A request's weight; null when it is unpriced. */
  weigh(weight: number | null, usd: number, subagent: boolean): void {
    this.requests++;
    if (weight === null) {
      this.unpricedRequests++;
      if (subagent) this.unpricedSubagentRequests++;
      return;
    }
    this.weightE15.add(weight);
    this.usdE15.add(usd);
    if (subagent) this.subagentWeight += weight;
  }

  /** A gap: its pings and whether they bridge it count always; its weights when it is priced. */
  add(gapMs: number, subagent: boolean, priced: boolean, gap: GapWeights, intervalMs: number, ttlMs: number): void {
    this.gaps++;
    if (priced) this.pricedGaps++;
    const needed = pingsFor(gapMs, intervalMs, Infinity);
    if (!priced && needed > 0) this.unpricedPingedGaps++;
    const need = slot(this.byNeed, needed);
    need[0]! += 1;
    if (priced) {
      need[1]! += gap.pingWeight;
      need[2]! += gap.pingUsd;
      if (subagent) need[3]! += gap.pingWeight;
    }
    if (gapMs <= ttlMs) return;
    this.over++;
    const bridge = slot(this.byBridge, Math.ceil((gapMs - ttlMs) / intervalMs));
    bridge[0]! += 1;
    if (priced) {
      bridge[1]! += gap.saving;
      bridge[2]! += gap.savingUsd;
      if (subagent) bridge[3]! += gap.saving;
    }
  }

  rows(): KeepaliveBudgetRow[] {
    return this.budgets.map((b) => this.row(b));
  }

  private row(budget: number): KeepaliveBudgetRow {
    let pings = 0;
    let pingWeight = 0;
    let pingUsd = 0;
    let pingSub = 0;
    for (const [k, v] of this.byNeed) {
      const m = Math.min(budget, k);
      if (m === 0) continue;
      pings += m * v[0]!;
      pingWeight += m * v[1]!;
      pingUsd += m * v[2]!;
      pingSub += m * v[3]!;
    }
    let bridged = 0;
    let saved = 0;
    let savedUsd = 0;
    let savedSub = 0;
    for (const [kb, v] of this.byBridge) {
      if (kb > budget) continue;
      bridged += v[0]!;
      saved += v[1]!;
      savedUsd += v[2]!;
      savedSub += v[3]!;
    }
    const net = saved - pingWeight;
    const netSub = savedSub - pingSub;
    return {
      budget: budget === Infinity ? 'inf' : budget,
      pings,
      gaps_over_ttl: this.over,
      bridged,
      expired_after_budget: this.over - bridged,
      ping_weight: pingWeight,
      saved_weight: saved,
      ping_usd: pingUsd,
      saved_usd: savedUsd,
      net_saving_weight: net,
      net_saving_usd: savedUsd - pingUsd,
      net_saving_weight_subagent: netSub,
      net_saving_pct_subagent: this.subagentWeight > 0 ? (netSub / this.subagentWeight) * 100 : null,
      net_saving_pct_all: this.weight > 0 ? (net / this.weight) * 100 : null,
    };
  }

  bucketRow(budgetAt: number): Omit<KeepaliveBucketRow, 'dimension' | 'bucket' | 'budget'> {
    const { pings, gaps_over_ttl, bridged, expired_after_budget, ping_weight, saved_weight, ping_usd, saved_usd, net_saving_weight, net_saving_usd, net_saving_pct_all } =
      this.row(this.budgets[budgetAt]!);
    return {
      chains: this.chains,
      requests: this.requests,
      unpriced_requests: this.unpricedRequests,
      gaps: this.gaps,
      unpriced_gaps: this.gaps - this.pricedGaps,
      unpriced_pinged_gaps: this.unpricedPingedGaps,
      baseline_weight: this.weight,
      baseline_usd: this.usd,
      pings,
      gaps_over_ttl,
      bridged,
      expired_after_budget,
      ping_weight,
      saved_weight,
      ping_usd,
      saved_usd,
      net_saving_weight,
      net_saving_usd,
      net_saving_pct: net_saving_pct_all,
    };
  }

}

/** The write weight request `r` paid per written token: its own 5m/1h mix (W5m when it wrote nothing). */
function writePerToken(r: ChainRequest, w: Weights): number {
  return r.cacheWrite > 0 ? (r.cacheWrite5m * w.write5m + r.cacheWrite1h * w.write1h) / r.cacheWrite : w.write5m;
}

/** The sums kept under `key`, made when first met. */
function slot(map: Map<number, Float64Array>, key: number): Float64Array {
  let v = map.get(key);
  if (!v) map.set(key, (v = new Float64Array(4)));
  return v;
}
