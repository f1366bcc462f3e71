/**
 * `cachelens anatomy`: the cache anatomy of many chains, priced and rolled up per chain, agent
 * type, model and in total (SPEC §3). The result is the `--json` shape.
 *
 * Readings (tested in test/analyses/anatomy-summary.test.ts):
 * - hit_ratio = Σr / ΣP over every request, priced or not (it is a token ratio).
 * - Weights, USD, waste and write_read_ratio cover priced requests only; an unpriced request is
 *   counted in `unpriced_requests` and `unpriced_models`, never as $0.
 * - waste of a request = (expiry + break) × (write weight per token − read weight): the write
 *   weight per token is the one the request paid, its own 5m/1h mix (2 for 1-hour writes, 1.25
 *   for 5-minute ones), at its own model's weights. It is what the rewrite cost beyond reading the
 *   same tokens. (The TTL in force, TTL_{i−1}, decides whether a rewrite is expiry or break; a
 *   chain that switches TTL pays its rewrite at the new one.)
 * - write_read_ratio = (5m + 1h write weight) / read weight; null when nothing was read.
 * - by_model groups requests by their own model (a chain can span models); `chains` there
 *   counts chains with at least one request of that model. by_project and by_session group
 *   whole chains by their session's project and by session (SPEC §3: per chain / session /
 *   agent type / model / project).
 * - anatomy_weight splits the write weight like the write tokens: each request's cold, growth,
 *   expiry and break tokens at that request's own write price per token (its 5m/1h mix).
 * - Rows are sorted by USD (descending, as summary's and sessions'), unknown USD last, ties by name; `repurchase` is
 *   ranked by waste's USD (byWaste); break
 *   events and their causes by what the rewrite cost in USD (at the write price the request
 *   paid), then weight, unpriced ones last, by tokens.
 */
import { anatomizeChain, type AnatomyOptions, type RequestAnatomy, type WriteClass } from './anatomy.js';
import { counted, DEFAULT_JITTER, promptTokens, roundsOf, type ChainInput, type Ttl, type WeightsFor } from './chain.js';
import { detectRepurchase } from './repurchase.js';
import { jsonNumber } from '../format/json-numbers.js';
import { addComponents, allUnpriced, totalWeight, weigh, zeroComponents, type Components } from './weigh.js';

export interface AnatomyRow {
  chains: number;
  requests: number;
  unpriced_requests: number;
  cold: number;
  growth: number;
  expiry: number;
  break: number;
  break_events: number;
  hit_ratio: number | null;
  write_read_ratio: number | null;
  waste_weight: number;
  waste_usd: number;
  weight: number;
  usd: number;
  /** weight by component */
  components: Components;
  /** write weight split like the write tokens (each request's tokens at its own write price) */
  anatomy_weight: AnatomySplit;
  anatomy_usd: AnatomySplit;
  /**
   * the tokens of the row's requests without a price, by class of write and by billed component: a weight of a
   * component they have tokens of leaves them out (+?), one they have none of is whole (README: one rule for +?)
   */
  unpriced_tokens: AnatomySplit & Record<keyof Components, number>;
  /** of those requests, the ones that wrote expiry or break tokens: their waste is left out of waste_weight (+?) */
  unpriced_waste_requests: number;
}

export interface AnatomySplit {
  cold: number;
  growth: number;
  expiry: number;
  break: number;
}

export interface AnatomyChainRow extends AnatomyRow {
  chain_id: string;
  session_id: string;
  project: string | null;
  agent_id: string | null;
  agent_type: string;
  kind: string;
  /** the model of most of the chain's requests (of those counted: on the days asked for) */
  model: string;
  rounds: number;
  repurchase: boolean;
}

export interface RepurchaseRow {
  chain_id: string;
  session_id: string;
  agent_id: string | null;
  agent_type: string;
  rounds: number;
  read_median: number | null;
  waste_weight: number;
  weight: number;
  /** the USD of waste_weight and weight, as the chain's row gives them */
  waste_usd: number;
  usd: number;
}

export interface BreakEvent {
  chain_id: string;
  /** the request's identity: message.id, NUL, requestId (null when the chains were loaded without keys) */
  key: string | null;
  /** the key's two parts, as the store's requests table splits them (request_id null when the line had none) */
  message_id: string | null;
  request_id: string | null;
  time: string;
  gap_s: number | null;
  tokens: number;
  /** what the rewrite cost (its tokens at the write price the request paid), and beyond a read of them; null when unpriced */
  weight: number | null;
  usd: number | null;
  waste_weight: number | null;
  waste_usd: number | null;
  causes: string[];
}

export interface BreakCauseRow {
  /** `attachment:<type>`, `compaction:<detail>`, `model:<from>→<to>`, or `unknown` */
  cause: string;
  events: number;
  tokens: number;
  /** of the priced events */
  weight: number;
  usd: number;
  waste_weight: number;
  waste_usd: number;
  unpriced_events: number;
}

export interface AnatomyResult {
  jitter: number;
  totals: AnatomyRow;
  by_agent_type: (AnatomyRow & { agent_type: string })[];
  by_model: (AnatomyRow & { model: string })[];
  /** by the project of the chain's session ('unknown' when none is known) */
  by_project: (AnatomyRow & { project: string })[];
  /** every session's sums (empty when the analysis keeps sums only: `lists: false`) */
  by_session: (AnatomyRow & { session_id: string; project: string | null })[];
  chains: AnatomyChainRow[];
  repurchase: RepurchaseRow[];
  break_causes: BreakCauseRow[];
  breaks: BreakEvent[];
  unpriced_models: { model: string; requests: number }[];
}

export interface AnatomySummaryOptions extends AnatomyOptions {
  weightsFor: WeightsFor;
}

/** A request's anatomy with its price; `priced` is null for an unpriced model. */
interface Priced {
  a: RequestAnatomy;
  priced: { components: Components; weight: number; usd: number; waste: number; wasteUsd: number; usdPerWeight: number; writePerToken: number; readWeight: number } | null;
}

/**
 * Weight, USD and waste of one request.
 * Example: a 5-minute chain's request with in 5, r 0, w5 13,000, out 50 and expiry 12,000 weighs
 * 5 + 16,250 + 250 = 16,505 with waste 12,000 × (1.25 − 0.1) = 13,800; had the chain written
 * 1-hour tokens, the same 12,000 would be a break (a 6-minute gap) with waste 12,000 × (2 − 0.1) = 22,800.
 * A 1-hour chain whose rewrite is written at 5 minutes pays 1.25 a token: waste 12,000 × 1.15.
 */
export function priceAnatomy(a: RequestAnatomy, weightsFor: WeightsFor): Priced {
  const w = weightsFor(a.request.model, promptTokens(a.request));
  if (!w) return { a, priced: null };
  const components = weigh(a.request, w);
  const weight = totalWeight(components);
  // the write price this request paid per token: its own 5m/1h mix
  const writePerToken = a.request.cacheWrite > 0 ? (components.write5m + components.write1h) / a.request.cacheWrite : 0;
  const waste = (a.expiry + a.break) * (writePerToken - w.read);
  return { a, priced: { components, weight, usd: weight * w.usdPerWeight, waste, wasteUsd: waste * w.usdPerWeight, usdPerWeight: w.usdPerWeight, writePerToken, readWeight: w.read } };
}

/**
 * Sums of request anatomies. Chains are counted as the tally sees a new chain id: analyzeAnatomy
 * adds a chain's requests one after another and never comes back to a chain, so counting changes
 * of id counts distinct chains without a set of 150,000 ids (hashing each id cost ~0.5 s).
 */
class Tally {
  private chains = 0;
  private lastChain: string | null = null;
  private requests = 0;
  private unpriced = 0;
  private unpricedWaste = 0;
  private cold = 0;
  private growth = 0;
  private expiry = 0;
  private brk = 0;
  private breakEvents = 0;
  private read = 0;
  private prompt = 0;
  private waste = 0;
  private wasteUsd = 0;
  private usd = 0;
  private readonly components = zeroComponents();
  private readonly split = zeroSplit();
  private readonly splitUsd = zeroSplit();
  // one literal, not { ...zeroSplit(), ...zeroComponents() }: V8 builds an object of two spreads in its slow
  // path, a Tally a chain cost the 1 GB report ~0.15 s (BENCHMARKS-log.md, Report, session 56)
  private readonly unpricedTokens: AnatomyRow['unpriced_tokens'] = { cold: 0, growth: 0, expiry: 0, break: 0, input: 0, write5m: 0, write1h: 0, read: 0, output: 0 };

  add(chainId: string, p: Priced): void {
    const { a } = p;
    if (chainId !== this.lastChain) {
      this.chains++;
      this.lastChain = chainId;
    }
    this.requests++;
    this.cold += a.cold;
    this.growth += a.growth;
    this.expiry += a.expiry;
    this.brk += a.break;
    if (a.break > 0) this.breakEvents++;
    this.read += a.request.cacheRead;
    this.prompt += promptTokens(a.request);
    if (!p.priced) {
      this.unpriced++;
      const u = this.unpricedTokens;
      const r = a.request;
      u.cold += a.cold;
      u.growth += a.growth;
      u.expiry += a.expiry;
      u.break += a.break;
      if (a.expiry + a.break > 0) this.unpricedWaste++;
      u.input += r.input;
      u.write5m += r.cacheWrite5m;
      u.write1h += r.cacheWrite1h;
      u.read += r.cacheRead;
      u.output += r.output;
      return;
    }
    addComponents(this.components, p.priced.components);
    const perToken = p.priced.writePerToken;
    const usdPerWeight = p.priced.usdPerWeight;
    const split = this.split;
    const splitUsd = this.splitUsd;
    split.cold += a.cold * perToken;
    split.growth += a.growth * perToken;
    split.expiry += a.expiry * perToken;
    split.break += a.break * perToken;
    splitUsd.cold += a.cold * perToken * usdPerWeight;
    splitUsd.growth += a.growth * perToken * usdPerWeight;
    splitUsd.expiry += a.expiry * perToken * usdPerWeight;
    splitUsd.break += a.break * perToken * usdPerWeight;
    this.usd += p.priced.usd;
    this.waste += p.priced.waste;
    this.wasteUsd += p.priced.wasteUsd;
  }

  row(): AnatomyRow {
    const c = this.components;
    return {
      chains: this.chains,
      requests: this.requests,
      unpriced_requests: this.unpriced,
      cold: this.cold,
      growth: this.growth,
      expiry: this.expiry,
      break: this.brk,
      break_events: this.breakEvents,
      hit_ratio: this.prompt > 0 ? this.read / this.prompt : null,
      write_read_ratio: c.read > 0 ? (c.write5m + c.write1h) / c.read : null,
      waste_weight: this.waste,
      waste_usd: this.wasteUsd,
      weight: totalWeight(c),
      usd: this.usd,
      components: { ...c },
      anatomy_weight: { ...this.split },
      anatomy_usd: { ...this.splitUsd },
      unpriced_tokens: { ...this.unpricedTokens },
      unpriced_waste_requests: this.unpricedWaste,
    };
  }
}

function zeroSplit(): AnatomySplit {
  return { cold: 0, growth: 0, expiry: 0, break: 0 };
}

function tallyFor<K>(map: Map<K, Tally>, key: K): Tally {
  let t = map.get(key);
  if (!t) map.set(key, (t = new Tally()));
  return t;
}

/**
 * Most expensive first, by USD as `summary`, `sessions`, the report's cost by project / model and the break causes
 * here rank (weights of models with different base prices do not compare: 125,000 wt of Sonnet cost less than
 * 87,500 wt of Opus), ties by name in UTF-8 byte order as summary's; a row with no priced request (USD unknown) last.
 * Sorted by weight, a project of Sonnet stood above one of Opus here and below it in summary's table.
 * The USD is compared as --json writes it, so a sum's last bits do not order two equal costs apart from summary's.
 */
function byCost<T extends { usd: number; requests: number; unpriced_requests: number }>(name: (r: T) => string): (a: T, b: T) => number {
  // unknown last, as sessions puts them: usd 0 of a row with no priced request tied a priced $0 row by name
  return (a, b) => Number(allUnpriced(a)) - Number(allUnpriced(b)) || jsonNumber(b.usd) - jsonNumber(a.usd) || byText(name(a), name(b));
}

/**
 * Most waste first, by the USD of the waste (SPEC §3 ranks chains "by waste"; weights of models with different base
 * prices do not compare: 17,250 wt of Sonnet waste cost less than 11,500 wt of Opus); a chain with no priced request
 * (its waste's USD unknown) last; ties by waste weight, then weight, then chain id in UTF-8 byte order. The order of
 * anatomy's re-purchase list and the report's top chains (and its "most wasteful chain").
 */
export function byWaste(
  a: { waste_usd: number; waste_weight: number; weight: number; chain_id: string; unknown: boolean },
  b: { waste_usd: number; waste_weight: number; weight: number; chain_id: string; unknown: boolean },
): number {
  return (
    Number(a.unknown) - Number(b.unknown) ||
    jsonNumber(b.waste_usd) - jsonNumber(a.waste_usd) ||
    b.waste_weight - a.waste_weight ||
    b.weight - a.weight ||
    byText(a.chain_id, b.chain_id)
  );
}

function byText(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));
}

export function analyzeAnatomy(chains: readonly ChainInput[], options: AnatomySummaryOptions): AnatomyResult {
  const analysis = new AnatomyAnalysis(options);
  for (const chain of chains) analysis.add(chain);
  return analysis.result();
}

/**
 * analyzeAnatomy a chain at a time, for callers that read the chains in batches (the report): add
 * each chain once, then take the result. `lists: false` keeps sums only: the result's chains,
 * re-purchase chains and breaks are left empty, and a caller keeps what it needs of each chain's
 * row, which add() returns (the report: the chains with the most waste).
 */
export class AnatomyAnalysis {
  private readonly jitter: number;
  private readonly lists: boolean;
  private readonly totals = new Tally();
  private readonly byAgentType = new Map<string, Tally>();
  private readonly byModel = new Map<string, Tally>();
  private readonly byProject = new Map<string, Tally>();
  private readonly bySession = new Map<string, Tally>();
  private readonly sessionProject = new Map<string, string | null>();
  private readonly unpricedModels = new Map<string, number>();
  private readonly causes = new Map<string, BreakCauseRow>();
  private readonly chainRows: AnatomyChainRow[] = [];
  /** with whether the chain has no priced request (its waste's USD unknown), for byWaste */
  private readonly repurchase: { row: RepurchaseRow; unknown: boolean }[] = [];
  private readonly breaks: BreakEvent[] = [];

  constructor(
    private readonly options: AnatomySummaryOptions,
    opts: { lists?: boolean } = {},
  ) {
    this.jitter = options.jitter ?? DEFAULT_JITTER;
    this.lists = opts.lists ?? true;
  }

  add(chain: ChainInput): AnatomyChainRow {
    const anatomy = anatomizeChain(chain, { jitter: this.jitter });
    const chainTally = new Tally();
    const project = chain.project ?? null;
    const chainTallies = [this.totals, chainTally, tallyFor(this.byAgentType, chain.agentType), tallyFor(this.byProject, project ?? 'unknown')];
    if (this.lists) {
      chainTallies.push(tallyFor(this.bySession, chain.sessionId));
      this.sessionProject.set(chain.sessionId, project);
    }
    for (const a of anatomy) {
      if (!counted(a.request)) continue;
      const p = priceAnatomy(a, this.options.weightsFor);
      for (const t of chainTallies) t.add(chain.chainId, p);
      tallyFor(this.byModel, a.request.model).add(chain.chainId, p);
      if (!p.priced) this.unpricedModels.set(a.request.model, (this.unpricedModels.get(a.request.model) ?? 0) + 1);
      if (a.break > 0) {
        if (this.lists) this.breaks.push(breakEvent(chain.chainId, p));
        const priced = p.priced;
        const weight = priced ? a.break * priced.writePerToken : 0;
        for (const cause of a.causes.length > 0 ? a.causes : ['unknown']) {
          let row = this.causes.get(cause);
          if (!row) this.causes.set(cause, (row = { cause, events: 0, tokens: 0, weight: 0, usd: 0, waste_weight: 0, waste_usd: 0, unpriced_events: 0 }));
          row.events++;
          row.tokens += a.break;
          if (!priced) row.unpriced_events++;
          else {
            row.weight += weight;
            row.usd += weight * priced.usdPerWeight;
            const waste = a.break * (priced.writePerToken - priced.readWeight);
            row.waste_weight += waste;
            row.waste_usd += waste * priced.usdPerWeight;
          }
        }
      }
    }
    const check = detectRepurchase(anatomy);
    const row: AnatomyChainRow = {
      chain_id: chain.chainId,
      session_id: chain.sessionId,
      project,
      agent_id: chain.agentId,
      agent_type: chain.agentType,
      kind: chain.kind,
      model: mainModel(chain),
      rounds: roundsOf(chain),
      repurchase: check.flagged,
      ...chainTally.row(),
    };
    if (this.lists) this.chainRows.push(row);
    if (check.flagged && this.lists) {
      this.repurchase.push({
        unknown: allUnpriced(row),
        row: {
          chain_id: chain.chainId,
          session_id: chain.sessionId,
          agent_id: chain.agentId,
          agent_type: chain.agentType,
          rounds: check.rounds,
          read_median: check.readMedian,
          waste_weight: row.waste_weight,
          weight: row.weight,
          waste_usd: row.waste_usd,
          usd: row.usd,
        },
      });
    }
    return row;
  }

  result(): AnatomyResult {
    return {
      jitter: this.jitter,
      totals: this.totals.row(),
      by_agent_type: [...this.byAgentType].map(([agent_type, t]) => ({ agent_type, ...t.row() })).sort(byCost((r) => r.agent_type)),
      by_model: [...this.byModel].map(([model, t]) => ({ model, ...t.row() })).sort(byCost((r) => r.model)),
      by_project: [...this.byProject].map(([project, t]) => ({ project, ...t.row() })).sort(byCost((r) => r.project)),
      by_session: [...this.bySession]
        .map(([session_id, t]) => ({ session_id, project: this.sessionProject.get(session_id) ?? null, ...t.row() }))
        .sort(byCost((r) => r.session_id)),
      chains: this.chainRows.sort(byCost((r) => r.chain_id)),
      repurchase: this.repurchase.sort((a, b) => byWaste({ ...a.row, unknown: a.unknown }, { ...b.row, unknown: b.unknown })).map((r) => r.row),
      // by what they cost, in USD (weights of models with different base prices do not compare)
      break_causes: [...this.causes.values()].sort((a, b) => b.usd - a.usd || b.weight - a.weight || b.tokens - a.tokens || (a.cause < b.cause ? -1 : 1)),
      breaks: this.breaks.sort((a, b) => (b.usd ?? -1) - (a.usd ?? -1) || (b.weight ?? -1) - (a.weight ?? -1) || b.tokens - a.tokens),
      unpriced_models: [...this.unpricedModels].map(([model, requests]) => ({ model, requests })).sort((a, b) => b.requests - a.requests),
    };
  }
}

/**
 * The model of most of the chain's counted requests: under --since/--until those of the days asked
 * for, as the row's measures and crosstab's `model` are (requests of other days are context only).
 */
function mainModel(chain: ChainInput): string {
  const counts = new Map<string, number>();
  for (const q of chain.requests) if (counted(q)) counts.set(q.model, (counts.get(q.model) ?? 0) + 1);
  let best = '';
  let most = 0;
  for (const [model, n] of counts) if (n > most) [best, most] = [model, n];
  return best;
}

function breakEvent(chainId: string, { a, priced }: Priced): BreakEvent {
  const weight = priced ? a.break * priced.writePerToken : null;
  const key = a.request.key;
  const nul = key === null ? -1 : key.indexOf('\u0000');
  return {
    chain_id: chainId,
    key,
    message_id: key === null ? null : nul < 0 ? key : key.slice(0, nul),
    request_id: key === null || nul < 0 ? null : key.slice(nul + 1),
    time: new Date(a.request.t).toISOString(),
    gap_s: a.gapMs === null ? null : a.gapMs / 1000,
    tokens: a.break,
    weight,
    usd: priced ? weight! * priced.usdPerWeight : null,
    waste_weight: priced ? a.break * (priced.writePerToken - priced.readWeight) : null,
    waste_usd: priced ? a.break * (priced.writePerToken - priced.readWeight) * priced.usdPerWeight : null,
    causes: a.causes,
  };
}

export interface ChainDetailRow {
  index: number;
  key: string | null;
  time: string;
  round: number;
  segment: number;
  model: string;
  gap_s: number | null;
  ttl: Ttl | null;
  p: number;
  input: number;
  r: number;
  w: number;
  w5m: number;
  w1h: number;
  output: number;
  cached_prefix: number;
  rewrite: number;
  class: WriteClass;
  cold: number;
  growth: number;
  expiry: number;
  break: number;
  /** null when the model is unpriced */
  weight: number | null;
  waste_weight: number | null;
  causes: string[];
}

export interface ChainDetail {
  chain_id: string;
  session_id: string;
  agent_id: string | null;
  agent_type: string;
  kind: string;
  rounds: number;
  jitter: number;
  repurchase: boolean;
  summary: AnatomyRow;
  requests: ChainDetailRow[];
  /** per round, in order of first appearance: sums over the round's requests (null weight if any is unpriced) */
  by_round: RoundRow[];
}

export interface RoundRow {
  round: number;
  requests: number;
  read: number;
  write: number;
  rewrite: number;
  weight: number | null;
}

/** `cachelens anatomy --chain ID`: one row per request of the chain, in time order. */
export function chainDetail(chain: ChainInput, options: AnatomySummaryOptions): ChainDetail {
  const jitter = options.jitter ?? DEFAULT_JITTER;
  const anatomy = anatomizeChain(chain, { jitter });
  const tally = new Tally();
  const rows = anatomy.filter((a) => counted(a.request)).map((a): ChainDetailRow => {
    const p = priceAnatomy(a, options.weightsFor);
    tally.add(chain.chainId, p);
    const q = a.request;
    return {
      index: a.index,
      key: q.key,
      time: new Date(q.t).toISOString(),
      round: q.round,
      segment: q.segment,
      model: q.model,
      gap_s: a.gapMs === null ? null : a.gapMs / 1000,
      ttl: a.ttl,
      p: promptTokens(q),
      input: q.input,
      r: q.cacheRead,
      w: q.cacheWrite,
      w5m: q.cacheWrite5m,
      w1h: q.cacheWrite1h,
      output: q.output,
      cached_prefix: a.cachedPrefix,
      rewrite: a.rewriteTokens,
      class: a.class,
      cold: a.cold,
      growth: a.growth,
      expiry: a.expiry,
      break: a.break,
      weight: p.priced ? p.priced.weight : null,
      waste_weight: p.priced ? p.priced.waste : null,
      causes: a.causes,
    };
  });
  return {
    chain_id: chain.chainId,
    session_id: chain.sessionId,
    agent_id: chain.agentId,
    agent_type: chain.agentType,
    kind: chain.kind,
    rounds: roundsOf(chain),
    jitter,
    repurchase: detectRepurchase(anatomy).flagged,
    summary: tally.row(),
    requests: rows,
    by_round: byRound(rows),
  };
}

function byRound(rows: readonly ChainDetailRow[]): RoundRow[] {
  const out = new Map<number, RoundRow>();
  for (const q of rows) addToRound(out, q.round, q.r, q.w, q.rewrite, q.weight);
  return [...out.values()];
}

function addToRound(out: Map<number, RoundRow>, round: number, read: number, write: number, rewrite: number, weight: number | null): void {
  let r = out.get(round);
  if (!r) out.set(round, (r = { round, requests: 0, read: 0, write: 0, rewrite: 0, weight: 0 }));
  r.requests++;
  r.read += read;
  r.write += write;
  r.rewrite += rewrite;
  r.weight = r.weight === null || weight === null ? null : r.weight + weight;
}

/**
 * A chain's ChainDetail.by_round without its rows (the report's top chains): the detail of a
 * chain of 89,152 requests held 29 MiB, and the report made them for 8 chains at once.
 */
export function roundTotals(chain: ChainInput, options: AnatomySummaryOptions): RoundRow[] {
  const out = new Map<number, RoundRow>();
  for (const a of anatomizeChain(chain, { jitter: options.jitter ?? DEFAULT_JITTER })) {
    if (!counted(a.request)) continue;
    const p = priceAnatomy(a, options.weightsFor);
    addToRound(out, a.request.round, a.request.cacheRead, a.request.cacheWrite, a.rewriteTokens, p.priced ? p.priced.weight : null);
  }
  return [...out.values()];
}
