/**
 * `cachelens whatif ttl`: replay the real requests with their real gaps under a forced cache TTL
 * and re-price them (SPEC §5.1).
 *
 * to 1h (as ENABLE_PROMPT_CACHING_1H=1), for chains that wrote 5-minute tokens: every write is
 * priced at the 1-hour weight; an expiry rewrite whose gap ≤ 1h becomes a read; gaps over 1h
 * still expire (rewritten at the 1-hour weight). Breaks and growth are unchanged.
 * to 5m (as FORCE_PROMPT_CACHING_5M=1), for chains that wrote 1-hour tokens: every write is
 * priced at the 5-minute weight; a request with 5m < gap ≤ 1h that was not already an expiry
 * loses its reads r_i, which become 5-minute writes. This applies to a cold restart after
 * compaction too (its reads of the shared prefix would have expired as well).
 *
 * Readings:
 * - "The chains the override changes" are the in-scope chains with any write of the TTL being
 *   replaced (Σw5 > 0 for to 1h, Σw1h > 0 for to 5m); other chains count in baseline and
 *   scenario unchanged. Under --since/--until that is any write of the chain, those of other
 *   days (context) included: the override changes them too, and with them the TTL in force for
 *   the requests counted (a 5-minute write at 23:58 makes a rewrite at 00:05 an expiry, which
 *   the override turns into a read whatever TTL the 00:05 request wrote with).
 * - expiry_share f is measured in the 5-minute world, so it means the same in both directions:
 *   to 1h: f = (expiry rewrites with gap ≤ 1h) / (all writes of the changed chains, cold incl.);
 *   to 5m: f = (reads that would expire + expiry rewrites with gap ≤ 1h) / (all writes + the
 *   reads that would expire). Forcing 1h pays when f > f*, forcing 5m pays when f < f*.
 * - break_even_share f* = (W1h − W5m) / (W1h − Wread), ≈ 0.395 at 2 / 1.25 / 0.1. When models
 *   with different multipliers mix, it is the mean of those differences weighted by the write
 *   tokens of the changed chains (so delta = 0 exactly at f = f*); without changed writes it
 *   comes from the first priced request; null when nothing is priced, and when the 1-hour write
 *   weights are no more than the read weights (W1h ≤ Wread: no share breaks even).
 * - Unpriced requests are left out of weights and of f, and counted in unpriced_requests (their
 *   models in unpriced_models); a row whose every request is unpriced has weights of 0 that mean
 *   unknown (the text says so).
 * - delta_pct = (scenario − baseline) / baseline × 100: negative means the override saves.
 * - An expiry rewrite at a model switch (request i's model is not request i−1's) stays a write at
 *   the forced TTL's weight and is not in f's numerator: the prompt cache is per model, so no TTL
 *   would have let request i read the prefix request i−1 cached (SPEC §3 still calls it expiry).
 *
 * Example (one 5-minute chain, opus weights 1 / 1.25 / 2 / 0.1 / 5, no input or output):
 *   #1 t=0    r 0  w 3,800   cold              baseline 4,750    scenario 3,800 × 2 = 7,600
 *   #2 t=10m  r 0  w 6,200   expiry 3,800 ≤ 1h baseline 7,750    scenario 2,400 × 2 + 3,800 × 0.1 = 5,180
 *   f = 3,800 / 10,000 = 0.38 < 0.395: baseline 12,500, scenario 12,780, delta +2.24 % (loses).
 *   With w 4,100 then 5,900 (f = 0.41): scenario 8,200 + 3,600 + 410 = 12,210, delta −2.32 % (gains).
 */
import { anatomizeChain, type RequestAnatomy } from './anatomy.js';
import { BucketMap, chainBuckets, type BucketDimension } from './buckets.js';
import { counted, DEFAULT_JITTER, inScope, promptTokens, TTL_MS, type ChainInput, type Scope, type Ttl, type Weights, type WeightsFor } from './chain.js';
import { totalWeight, weigh, type BilledTokens } from './weigh.js';
import { e15Text } from '../ingest/delta.js';
import { E15Sum } from './e15-sum.js';

export interface TtlOptions {
  to: Ttl;
  scope?: Scope;
  weightsFor: WeightsFor;
  jitter?: number;
}

export interface TtlRow {
  chains: number;
  changed_chains: number;
  /** of them, chains with a request without a price: what the override does to them no sum holds */
  changed_unpriced_chains: number;
  requests: number;
  unpriced_requests: number;
  baseline_weight: number;
  scenario_weight: number;
  baseline_usd: number;
  scenario_usd: number;
  /** percent of the baseline weight; negative = the override saves; null when the baseline is 0 */
  delta_pct: number | null;
  /**
   * percent of the baseline USD: the verdict's measure, since weights of models with different
   * base prices do not add up to one cost (with one model it equals delta_pct)
   */
  delta_usd_pct: number | null;
  /** fraction; null when the changed chains wrote nothing */
  expiry_share: number | null;
  /** fraction f*; null when nothing is priced */
  break_even_share: number | null;
}

export interface TtlResult extends TtlRow {
  to: Ttl;
  scope: Scope;
  jitter: number;
  /** models of the requests left out of the weights, for want of a price */
  unpriced_models: string[];
  buckets: (TtlRow & { dimension: BucketDimension; bucket: string })[];
}

/** Sums over requests; a chain counts once, as its requests are added one after another. */
class TtlTally {
  private chains = 0;
  private changed = 0;
  private changedUnpriced = 0;
  /** whether the last chain is counted in changedUnpriced already */
  private lastCounted = false;
  private requests = 0;
  private unpriced = 0;
  // in units of 10^-15, each request's as DuckDB casts it to DECIMAL(38, 15): summed exactly, as summary sums the
  // store's (a sum of doubles at 2·10^13 was 0.06 off summary's total, …254.81 for …254.75)
  private readonly baselineE15 = new E15Sum();
  private readonly scenarioE15 = new E15Sum();
  private readonly baselineUsdE15 = new E15Sum();
  private readonly scenarioUsdE15 = new E15Sum();
  private expiryTokens = 0;
  private writeTokens = 0;
  private evenNum = 0;
  private evenDen = 0;
  private firstWeights: Weights | null = null;
  /** the chain of the last request added: a chain's requests come one after another */
  private lastChain: string | null = null;

  add(chainId: string, changed: boolean, s: RequestScenario | null): void {
    if (chainId !== this.lastChain) {
      this.lastChain = chainId;
      this.chains++;
      if (changed) this.changed++;
      this.lastCounted = false;
    }
    this.requests++;
    if (!s) {
      this.unpriced++;
      if (changed && !this.lastCounted) {
        this.changedUnpriced++;
        this.lastCounted = true;
      }
      return;
    }
    this.firstWeights ??= s.weights;
    this.baselineE15.add(s.baseline);
    this.scenarioE15.add(s.scenario);
    this.baselineUsdE15.add(s.baseline * s.weights.usdPerWeight);
    this.scenarioUsdE15.add(s.scenario * s.weights.usdPerWeight);
    this.expiryTokens += s.expiryTokens;
    this.writeTokens += s.writeTokens;
    this.evenNum += s.writeTokens * (s.weights.write1h - s.weights.write5m);
    this.evenDen += s.writeTokens * (s.weights.write1h - s.weights.read);
  }

  get baselineWeight(): number {
    return this.baselineE15.value;
  }

  row(): TtlRow {
    const w = this.firstWeights;
    const [baselineE15, scenarioE15, baselineUsdE15, scenarioUsdE15] = [this.baselineE15.e15, this.scenarioE15.e15, this.baselineUsdE15.e15, this.scenarioUsdE15.e15];
    const [baseline, scenario, baselineUsd, scenarioUsd] = [baselineE15, scenarioE15, baselineUsdE15, scenarioUsdE15].map((v) => Number(e15Text(v))) as [number, number, number, number];
    return {
      chains: this.chains,
      changed_chains: this.changed,
      changed_unpriced_chains: this.changedUnpriced,
      requests: this.requests,
      unpriced_requests: this.unpriced,
      baseline_weight: baseline,
      scenario_weight: scenario,
      baseline_usd: baselineUsd,
      scenario_usd: scenarioUsd,
      delta_pct: baseline > 0 ? (Number(scenarioE15 - baselineE15) / Number(baselineE15)) * 100 : null,
      delta_usd_pct: baselineUsd > 0 ? (Number(scenarioUsdE15 - baselineUsdE15) / Number(baselineUsdE15)) * 100 : null,
      expiry_share: this.writeTokens > 0 ? this.expiryTokens / this.writeTokens : null,
      break_even_share:
        this.evenDen > 0 ? this.evenNum / this.evenDen : this.writeTokens > 0 || !w ? null : breakEvenShare(w),
    };
  }
}

/**
 * f* = (W1h − W5m) / (W1h − Wread): the expiry share at which forcing 1h costs the same; null when
 * a 1-hour write costs no more than a read (a price table may say so): the change then does not
 * turn with f, and f* was ±Infinity or NaN ("f* = Infinity%" in the report).
 */
export function breakEvenShare(w: Weights): number | null {
  return w.write1h > w.read ? (w.write1h - w.write5m) / (w.write1h - w.read) : null;
}

/**
 * f* outside 0…1 is no expiry share: the formula's sign says which way every share goes. Below 0
 * (a 1-hour write that costs less than a 5-minute one) forcing 1h saves at any share, forcing 5m
 * never pays; above 1 (a read that costs more than a 5-minute write) the other way round. Null for
 * f* within 0…1, where it is the share to print. The JSON keeps the number (docs/json.md).
 * Example: breakEvenOutside(-0.15, '1h') → { bound: 'below 0', meaning: 'forcing 1h saves at any expiry share' }
 */
export function breakEvenOutside(fStar: number | null, to: Ttl): { bound: string; meaning: string } | null {
  if (fStar === null || (fStar >= 0 && fStar <= 1)) return null;
  const saves = (fStar < 0) === (to === '1h');
  return { bound: fStar < 0 ? 'below 0' : 'above 100%', meaning: saves ? `forcing ${to} saves at any expiry share` : `forcing ${to} never pays` };
}

interface RequestScenario {
  weights: Weights;
  baseline: number;
  scenario: number;
  /** expiry-caused write tokens in the 5-minute world (numerator of f) */
  expiryTokens: number;
  /** all write tokens in the 5-minute world (denominator of f); 0 for unchanged chains */
  writeTokens: number;
}

/** Token counts of one request under the forced TTL, and its contribution to f. */
export function scenarioTokens(a: RequestAnatomy, to: Ttl): { tokens: BilledTokens; expiryTokens: number; writeTokens: number } {
  const q = a.request;
  const gap = a.gapMs;
  const withinHour = gap !== null && gap <= TTL_MS['1h'];
  if (to === '1h') {
    // another model's prefix is no read for this one, whatever the TTL
    const toRead = a.expiry > 0 && withinHour && !a.modelSwitch ? a.expiry : 0;
    return {
      tokens: { input: q.input, cacheWrite5m: 0, cacheWrite1h: q.cacheWrite - toRead, cacheRead: q.cacheRead + toRead, output: q.output },
      expiryTokens: toRead,
      writeTokens: q.cacheWrite,
    };
  }
  const expires = a.expiry === 0 && gap !== null && gap > TTL_MS['5m'] && withinHour ? q.cacheRead : 0;
  return {
    tokens: { input: q.input, cacheWrite5m: q.cacheWrite + expires, cacheWrite1h: 0, cacheRead: q.cacheRead - expires, output: q.output },
    // an expiry at a model switch is no read the 1-hour TTL would have made (as to 1h above)
    expiryTokens: expires + (a.expiry > 0 && withinHour && !a.modelSwitch ? a.expiry : 0),
    writeTokens: q.cacheWrite + expires,
  };
}

export function whatifTtl(chains: readonly ChainInput[], options: TtlOptions): TtlResult {
  const whatif = new TtlWhatIf(options);
  for (const chain of chains) whatif.add(chain);
  return whatif.result();
}

/**
 * whatifTtl a chain at a time, for callers that read the chains in batches (the report): add
 * each chain once, then take the result. Holds sums only, whatever the number of chains.
 */
export class TtlWhatIf {
  private readonly scope: Scope;
  private readonly jitter: number;
  private readonly totals = new TtlTally();
  private readonly buckets = new BucketMap(() => new TtlTally());
  private readonly unpricedModels = new Set<string>();

  constructor(private readonly options: TtlOptions) {
    this.scope = options.scope ?? 'all';
    this.jitter = options.jitter ?? DEFAULT_JITTER;
  }

  add(chain: ChainInput): void {
    const options = this.options;
    if (!inScope(chain, this.scope)) return;
    const changed = chain.requests.some((q) => (options.to === '1h' ? q.cacheWrite5m : q.cacheWrite1h) > 0);
    // the chain's buckets, found once it has a request; the model's when the model changes
    let tallies: TtlTally[] | null = null;
    let model: TtlTally | null = null;
    let modelName = '';
    for (const a of anatomizeChain(chain, { jitter: this.jitter })) {
      if (!counted(a.request)) continue;
      const s = scenarioOf(a, changed, options);
      if (!s) this.unpricedModels.add(a.request.model);
      this.totals.add(chain.chainId, changed, s);
      tallies ??= chainBuckets(chain).map(([dimension, bucket]) => this.buckets.get(dimension, bucket));
      if (model === null || a.request.model !== modelName) model = this.buckets.get('model', (modelName = a.request.model));
      for (const t of tallies) t.add(chain.chainId, changed, s);
      model.add(chain.chainId, changed, s);
    }
  }

  result(): TtlResult {
    return {
      to: this.options.to,
      scope: this.scope,
      jitter: this.jitter,
      unpriced_models: [...this.unpricedModels].sort(),
      ...this.totals.row(),
      buckets: this.buckets
        .entries((a, b) => b.baselineWeight - a.baselineWeight)
        .map(({ dimension, bucket, value }) => ({ dimension, bucket, ...value.row() })),
    };
  }
}

function scenarioOf(a: RequestAnatomy, changed: boolean, options: TtlOptions): RequestScenario | null {
  const weights = options.weightsFor(a.request.model, promptTokens(a.request));
  if (!weights) return null;
  const baseline = totalWeight(weigh(a.request, weights));
  if (!changed) return { weights, baseline, scenario: baseline, expiryTokens: 0, writeTokens: 0 };
  const s = scenarioTokens(a, options.to);
  return { weights, baseline, scenario: totalWeight(weigh(s.tokens, weights)), expiryTokens: s.expiryTokens, writeTokens: s.writeTokens };
}
