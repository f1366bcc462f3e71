/**
 * An independent reference for the what-ifs, written from SPEC §3 and §5 alone (not from
 * src/analyses): given each chain's requests, it computes `whatif ttl --to 1h|5m` and
 * `whatif keepalive` and returns numbers in the shape of their `--json`, for
 * test/analyses/reference-whatif.test.ts to compare with the product's.
 *
 * The requests come from the product's store (`cachelens query` over `requests` ⋈ `chains`):
 * de-duplication, attribution, segments and per-token price weights are the product's (SPEC §1–§2,
 * checked elsewhere); every what-if rule below is this file's own. Where SPEC leaves a choice,
 * the reference follows the README's "How the what-ifs read SPEC §5 where it leaves room":
 *   - requests of a chain in time order, ties by line; a gap of exactly a TTL is inside it;
 *   - the TTL after a request that wrote 1-hour tokens (even with 5-minute ones) is 1 hour;
 *   - a rewrite at a model switch is saved by neither what-if, and is out of f's numerator;
 *   - a bridged expiry saves rw × (what request i paid per written token − a read), its own
 *     5m/1h mix (SPEC writes 1.25 − 0.1, the all-5-minute case);
 *   - `whatif ttl --scope` restricts every sum to the chains in scope; `whatif keepalive --scope`
 *     pings only those chains, the weights still count all chains;
 *   - a ping is priced with request i−1's per-token weights: right but for Sonnet 4 / 4.5's long
 *     context, where the product rightly prices a ping by its own prompt C_{i−1} + ping-in (no
 *     corpus here has such a gap; reference-whatif-boundaries.test.ts checks it by hand);
 *   - the kind bucket is `main` or `subagent` (v1.x sidechains are subagents); the rounds bucket
 *     is 0, 1, 2-3, 4-9, 10+ (docs/store.md).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, tempDir } from './corpus.js';

export interface RefRequest {
  chain: string;
  t: number;
  line: number;
  segment: number;
  model: string;
  input: number;
  output: number;
  w5: number;
  w1h: number;
  r: number;
  /** per-token weights; null when the model has no price */
  wt: { input: number; w5: number; w1h: number; read: number; output: number; usd: number } | null;
}

export interface RefChain {
  id: string;
  kind: 'main' | 'subagent';
  agentType: string;
  rounds: number;
  requests: RefRequest[];
}

const SQL = `SELECT r.chain_id, r.t, r.line, r.segment, r.model, r.input, r.output, r.cache_write_5m, r.cache_write_1h,
  r.cache_read, r.w_input, r.w_write_5m, r.w_write_1h, r.w_read, r.w_output, r.usd_per_weight,
  c.kind, c.agent_type, c.rounds
FROM requests r JOIN chains c USING (chain_id)`;

/** Every chain under `paths`, its requests in time order (ties: line order), read through the product's store. */
export function loadChains(paths: string[]): RefChain[] {
  const sql = join(tempDir('cachelens-ref-'), 'requests.sql');
  writeFileSync(sql, SQL);
  const res = cli(['query', sql, ...paths, '--db', ':memory:', '--json'], { HOME: tempDir('cachelens-home-') });
  if (res.code !== 0) throw new Error(`cachelens query exited ${res.code}: ${res.stderr}`);
  const chains = new Map<string, RefChain>();
  for (const row of JSON.parse(res.stdout).rows) {
    let c = chains.get(row.chain_id);
    if (!c) {
      c = { id: row.chain_id, kind: row.kind === 'main' ? 'main' : 'subagent', agentType: row.agent_type, rounds: Number(row.rounds), requests: [] };
      chains.set(row.chain_id, c);
    }
    c.requests.push({
      chain: row.chain_id, t: Number(row.t), line: Number(row.line), segment: Number(row.segment), model: row.model,
      input: Number(row.input), output: Number(row.output), w5: Number(row.cache_write_5m), w1h: Number(row.cache_write_1h), r: Number(row.cache_read),
      wt: row.usd_per_weight === null ? null : {
        input: row.w_input, w5: row.w_write_5m, w1h: row.w_write_1h, read: row.w_read, output: row.w_output, usd: row.usd_per_weight,
      },
    });
  }
  for (const c of chains.values()) c.requests.sort((a, b) => a.t - b.t || a.line - b.line);
  return [...chains.values()];
}

const FIVE_MIN = 300_000;
const ONE_HOUR = 3_600_000;

/** One request's place in its chain: SPEC §3's quantities for request i against i−1. */
interface Step {
  q: RefRequest;
  /** false for a chain's first request and the first after a compaction (cold: no gap) */
  hasGap: boolean;
  gap: number;
  /** t_i − t_{i−1} even across a compaction (null for the chain's first request) */
  sincePrev: number | null;
  /** TTL_{i−1} in ms */
  ttlPrev: number;
  /** C_{i−1} = r_{i−1} + w_{i−1} */
  cPrev: number;
  rw: number;
  expiry: boolean;
  modelSwitch: boolean;
  prev: RefRequest | null;
}

/** SPEC §3 over one chain. */
export function steps(chain: RefChain, jitter = 1024): Step[] {
  const out: Step[] = [];
  let lastWriteWas1h = false;
  let prev: RefRequest | null = null;
  for (const q of chain.requests) {
    const w = q.w5 + q.w1h;
    const hasGap = prev !== null && prev.segment === q.segment;
    let step: Step = { q, hasGap, gap: 0, sincePrev: prev ? q.t - prev.t : null, ttlPrev: lastWriteWas1h ? ONE_HOUR : FIVE_MIN, cPrev: 0, rw: 0, expiry: false, modelSwitch: false, prev };
    if (hasGap && prev) {
      const cPrev = prev.r + prev.w5 + prev.w1h;
      let rw = Math.min(w, Math.max(0, cPrev - q.r));
      if (rw < jitter) rw = 0;
      const gap = q.t - prev.t;
      step = { ...step, gap, cPrev, rw, expiry: rw > 0 && gap > step.ttlPrev, modelSwitch: q.model !== prev.model };
    }
    out.push(step);
    if (w > 0) lastWriteWas1h = q.w1h > 0;
    prev = q;
  }
  return out;
}

const baseWeight = (q: RefRequest) => {
  const k = q.wt!;
  return q.input * k.input + q.w5 * k.w5 + q.w1h * k.w1h + q.r * k.read + q.output * k.output;
};

export type Scope = 'all' | 'main' | 'subagents';
const inScope = (c: RefChain, scope: Scope) => scope === 'all' || (scope === 'main') === (c.kind === 'main');

export function roundsBucket(rounds: number): string {
  return rounds === 0 ? '0' : rounds === 1 ? '1' : rounds <= 3 ? '2-3' : rounds <= 9 ? '4-9' : '10+';
}

/** The bucket keys ("dimension\tbucket") a request of this chain counts in. */
function bucketsOf(c: RefChain, model: string): string[] {
  return [`kind\t${c.kind}`, `agent_type\t${c.agentType}`, `model\t${model}`, `rounds\t${roundsBucket(c.rounds)}`];
}

export interface TtlSums {
  chains: number;
  changed_chains: number;
  requests: number;
  unpriced_requests: number;
  baseline_weight: number;
  scenario_weight: number;
  baseline_usd: number;
  scenario_usd: number;
  /** f's numerator and denominator, priced requests of changed chains */
  f_num: number;
  f_den: number;
}

export interface TtlResult extends TtlSums {
  delta_pct: number | null;
  delta_usd_pct: number | null;
  expiry_share: number | null;
  break_even_share: number;
  buckets: Map<string, TtlSums & { expiry_share: number | null; delta_pct: number | null; delta_usd_pct: number | null }>;
}

const emptyTtl = (): TtlSums & { chainSet: Set<string>; changedSet: Set<string> } => ({
  chains: 0, changed_chains: 0, requests: 0, unpriced_requests: 0, baseline_weight: 0, scenario_weight: 0,
  baseline_usd: 0, scenario_usd: 0, f_num: 0, f_den: 0, chainSet: new Set(), changedSet: new Set(),
});

const pct = (a: number, b: number) => (b === 0 ? null : ((a - b) / b) * 100);

/**
 * SPEC §5.1. `--to 1h`: in a chain that wrote 5-minute tokens, every write is priced at the 1-hour
 * weight, an expiry rewrite whose gap ≤ 1 h becomes a read, a longer one stays a 1-hour write.
 * f = expiry tokens so saved / all write tokens of the changed chains. `--to 5m`: in a chain that
 * wrote 1-hour tokens, 1-hour writes are priced at the 5-minute weight, and where 5 min < g ≤ 1 h
 * was no expiry the request's reads become 5-minute writes.
 * Aligned with the product's documented readings (README, "How the what-ifs read SPEC §5"), which
 * SPEC leaves open: under `--to 5m` the first request after a compaction loses its reads too (its
 * shared prefix would have expired as well: the gap is measured across the compaction), and f is
 * measured in the 5-minute world, so that it compares with the same f* both ways: (reads that
 * would expire + expiry rewrites with g ≤ 1 h) / (all writes + the reads that would expire).
 *
 * Example (`--to 1h`, Opus weights 1 / 1.25 / 2 / 0.1): writes 10,000 at t=0, reads 10,000 and
 * writes 500 at 10 min: the second request's rw = min(500, 10,000 − 10,000) = 0; at 20 min it reads
 * 0 and writes 11,000: rw = 10,500 expiry. Baseline writes 21,500 × 1.25 = 26,875 + 10,000 × 0.1;
 * scenario: 11,000 × 2 + 10,500 × 0.1 + 10,000 × 0.1 = 24,050; f = 10,500 / 21,500 = 0.488.
 */
export function referenceTtl(chains: RefChain[], to: '1h' | '5m', scope: Scope = 'all', jitter = 1024, inDays: (t: number) => boolean = () => true): TtlResult {
  const total = emptyTtl();
  const buckets = new Map<string, ReturnType<typeof emptyTtl>>();
  for (const c of chains) {
    if (!inScope(c, scope)) continue;
    const changed = c.requests.some((q) => (to === '1h' ? q.w5 : q.w1h) > 0);
    for (const s of steps(c, jitter)) {
      const q = s.q;
      if (!inDays(q.t)) continue;
      const sums = [total, ...bucketsOf(c, q.model).map((k) => buckets.get(k) ?? buckets.set(k, emptyTtl()).get(k)!)];
      for (const x of sums) {
        x.chainSet.add(c.id);
        if (changed) x.changedSet.add(c.id);
        x.requests++;
        if (!q.wt) x.unpriced_requests++;
      }
      if (!q.wt) continue;
      const k = q.wt;
      const base = baseWeight(q);
      let scen = base;
      let fNum = 0;
      let fDen = 0;
      if (changed && to === '1h') {
        scen += q.w5 * (k.w1h - k.w5);
        if (s.hasGap && s.expiry && s.gap <= ONE_HOUR && !s.modelSwitch) {
          scen -= s.rw * (k.w1h - k.read);
          fNum = s.rw;
        }
      } else if (changed && to === '5m') {
        scen += q.w1h * (k.w5 - k.w1h);
        const expires = !s.expiry && s.sincePrev !== null && s.sincePrev > FIVE_MIN && s.sincePrev <= ONE_HOUR ? q.r : 0;
        scen += expires * (k.w5 - k.read);
        fNum = expires + (s.expiry && s.gap <= ONE_HOUR && !s.modelSwitch ? s.rw : 0);
        fDen = expires;
      }
      for (const x of sums) {
        x.baseline_weight += base;
        x.scenario_weight += scen;
        x.baseline_usd += base * k.usd;
        x.scenario_usd += scen * k.usd;
        if (changed) {
          x.f_num += fNum;
          x.f_den += q.w5 + q.w1h + fDen;
        }
      }
    }
  }
  const finish = (x: ReturnType<typeof emptyTtl>) => {
    const { chainSet, changedSet, ...rest } = x;
    return {
      ...rest, chains: chainSet.size, changed_chains: changedSet.size,
      delta_pct: pct(x.scenario_weight, x.baseline_weight), delta_usd_pct: pct(x.scenario_usd, x.baseline_usd),
      expiry_share: x.f_den === 0 ? null : x.f_num / x.f_den,
    };
  };
  return {
    ...finish(total),
    break_even_share: (2 - 1.25) / (2 - 0.1),
    buckets: new Map([...buckets].map(([k, v]) => [k, finish(v)])),
  };
}

export type Budget = number | 'inf';

export interface KeepaliveRow {
  budget: Budget;
  pings: number;
  gaps_over_ttl: number;
  bridged: number;
  expired_after_budget: number;
  ping_weight: number;
  saved_weight: number;
  ping_usd: number;
  saved_usd: number;
  net_saving_weight: number;
  net_saving_usd: number;
  net_saving_weight_subagent: number;
  net_saving_pct_subagent: number | null;
  net_saving_pct_all: number | null;
}

export interface KeepaliveOptions {
  intervalS?: number;
  pingIn?: number;
  pingOut?: number;
  scope?: Scope;
  jitter?: number;
  budgets?: Budget[];
  /** `--since/--until`: only requests (and the gaps before them) on these days count; earlier ones are context */
  inDays?: (t: number) => boolean;
}

export interface KeepaliveResult {
  gaps: number;
  unpriced_gaps: number;
  baseline_weight: number;
  baseline_usd: number;
  subagent_weight: number;
  budgets: KeepaliveRow[];
  best_budget: Budget | null;
  /** the best budget's row per bucket ("dimension\tbucket"); a gap counts in its chain's buckets and request i−1's model (whose cache the pings keep) */
  buckets: Map<string, KeepaliveBucket>;
}

export interface KeepaliveBucket {
  chains: number;
  requests: number;
  unpriced_requests: number;
  gaps: number;
  unpriced_gaps: number;
  baseline_weight: number;
  baseline_usd: number;
  pings: number;
  gaps_over_ttl: number;
  bridged: number;
  expired_after_budget: number;
  ping_weight: number;
  saved_weight: number;
  ping_usd: number;
  saved_usd: number;
  net_saving_weight: number;
  net_saving_usd: number;
  net_saving_pct: number | null;
}

export const SWEEP: Budget[] = [...Array.from({ length: 21 }, (_, b) => b), 'inf'];

/**
 * SPEC §5.2. On each gap g of a 5-minute chain (TTL in force 5 min, not after a compaction, not
 * after the last request) a policy pinging every I seconds sends m = min(B, ⌈g/I⌉ − 1) pings
 * (0 when g ≤ I), each costing a read of C_{i−1} plus ping-in tokens at the 5-minute write weight
 * and ping-out output tokens, priced with request i−1's model. g > TTL is a gap over the TTL; it
 * is bridged when g − m·I ≤ TTL, and a bridged expiry rewrite becomes a read.
 *
 * Example (I = 270 s, Opus): C = 20,000, g = 800 s, rw = 20,000. ⌈800/270⌉ − 1 = 2, so B = 1 sends
 * one ping (2,000 + 37.5 + 50 = 2,087.5) and 800 − 270 = 530 > 300 still expires; B = 2 sends two
 * (4,175) and 800 − 540 = 260 ≤ 300 is bridged, saving 20,000 × 1.15 = 23,000: net 18,825.
 */
export function referenceKeepalive(chains: RefChain[], o: KeepaliveOptions = {}): KeepaliveResult {
  const I = (o.intervalS ?? 270) * 1000;
  const pingIn = o.pingIn ?? 30;
  const pingOut = o.pingOut ?? 10;
  const scope = o.scope ?? 'all';
  const budgets = o.budgets ?? SWEEP;
  let baseline = 0;
  let baselineUsd = 0;
  let subagentWeight = 0;
  interface Gap { g: number; rw: number; expiry: boolean; ping: number | null; pingUsd: number | null; save: number | null; saveUsd: number | null; sub: boolean; keys: string[] }
  const gaps: Gap[] = [];
  const buckets = new Map<string, { chains: Set<string>; requests: number; unpriced_requests: number; baseline_weight: number; baseline_usd: number }>();
  for (const c of chains) {
    const ss = steps(c, o.jitter ?? 1024);
    for (const s of ss) {
      if (o.inDays && !o.inDays(s.q.t)) continue;
      for (const key of bucketsOf(c, s.q.model)) {
        const b = buckets.get(key) ?? buckets.set(key, { chains: new Set(), requests: 0, unpriced_requests: 0, baseline_weight: 0, baseline_usd: 0 }).get(key)!;
        b.chains.add(c.id);
        b.requests++;
        if (!s.q.wt) b.unpriced_requests++;
        else {
          b.baseline_weight += baseWeight(s.q);
          b.baseline_usd += baseWeight(s.q) * s.q.wt.usd;
        }
      }
      if (s.q.wt) {
        const w = baseWeight(s.q);
        baseline += w;
        baselineUsd += w * s.q.wt.usd;
        if (c.kind === 'subagent') subagentWeight += w;
      }
      if (!inScope(c, scope) || !s.hasGap || s.ttlPrev !== FIVE_MIN) continue;
      const p = s.prev!;
      const priced = p.wt !== null && s.q.wt !== null;
      const ping = priced ? s.cPrev * p.wt!.read + pingIn * p.wt!.w5 + pingOut * p.wt!.output : null;
      const w = s.q.w5 + s.q.w1h;
      const perWritten = priced && w > 0 ? (s.q.w5 * s.q.wt!.w5 + s.q.w1h * s.q.wt!.w1h) / w : 0;
      const save = priced ? (s.expiry && !s.modelSwitch ? s.rw * (perWritten - s.q.wt!.read) : 0) : null;
      // request i−1 may be of a day not asked for and of a model no request of those days has: its
      // bucket then holds the gap's pings and no request (they are that model's pings, at its price)
      for (const key of bucketsOf(c, p.model)) (buckets.get(key) ?? buckets.set(key, { chains: new Set(), requests: 0, unpriced_requests: 0, baseline_weight: 0, baseline_usd: 0 }).get(key)!).chains.add(c.id);
      gaps.push({
        g: s.gap, rw: s.rw, expiry: s.expiry, sub: c.kind === 'subagent', keys: bucketsOf(c, p.model),
        ping, pingUsd: ping === null ? null : ping * p.wt!.usd, save, saveUsd: save === null ? null : save * s.q.wt!.usd,
      });
    }
  }
  type Tally = { pings: number; gaps_over_ttl: number; bridged: number; expired_after_budget: number; ping_weight: number; saved_weight: number; ping_usd: number; saved_usd: number; gaps: number; unpriced_gaps: number };
  const tally = (budget: Budget, only: (g: Gap) => boolean) => {
    const row: Tally & { budget: Budget } = { budget, pings: 0, gaps_over_ttl: 0, bridged: 0, expired_after_budget: 0, ping_weight: 0, saved_weight: 0, ping_usd: 0, saved_usd: 0, gaps: 0, unpriced_gaps: 0 };
    let netSub = 0;
    for (const gap of gaps) {
      if (!only(gap)) continue;
      row.gaps++;
      if (gap.ping === null) row.unpriced_gaps++;
      const natural = gap.g <= I ? 0 : Math.ceil(gap.g / I) - 1;
      const m = budget === 'inf' ? natural : Math.min(budget, natural);
      row.pings += m;
      const over = gap.g > FIVE_MIN;
      const bridged = over && gap.g - m * I <= FIVE_MIN;
      if (over) {
        row.gaps_over_ttl++;
        if (bridged) row.bridged++;
        else row.expired_after_budget++;
      }
      if (gap.ping === null) continue;
      const pingW = m * gap.ping;
      const saved = bridged && gap.expiry ? gap.save! : 0;
      row.ping_weight += pingW;
      row.saved_weight += saved;
      row.ping_usd += m * gap.pingUsd!;
      row.saved_usd += bridged && gap.expiry ? gap.saveUsd! : 0;
      if (gap.sub) netSub += saved - pingW;
    }
    return { row, netSub };
  };
  const rows: KeepaliveRow[] = budgets.map((budget) => {
    const { row: full, netSub } = tally(budget, () => true);
    const { gaps: _g, unpriced_gaps: _u, ...row } = full;
    const net = row.saved_weight - row.ping_weight;
    return {
      ...row, net_saving_weight: net, net_saving_usd: row.saved_usd - row.ping_usd, net_saving_weight_subagent: netSub,
      net_saving_pct_subagent: subagentWeight === 0 ? null : (netSub / subagentWeight) * 100,
      net_saving_pct_all: baseline === 0 ? null : (net / baseline) * 100,
    };
  });
  const pricedGaps = gaps.filter((g) => g.ping !== null).length;
  let best: KeepaliveRow | null = null;
  for (const r of rows) if (!best || r.net_saving_usd > best.net_saving_usd) best = r;
  const bestBudget = pricedGaps === 0 || !best ? null : best.budget;
  const bucketRows = new Map<string, KeepaliveBucket>();
  if (bestBudget !== null) {
    for (const [key, b] of buckets) {
      const { row } = tally(bestBudget, (g) => g.keys.includes(key));
      const { budget: _b, ...t } = row;
      const net = t.saved_weight - t.ping_weight;
      bucketRows.set(key, {
        chains: b.chains.size, requests: b.requests, unpriced_requests: b.unpriced_requests, baseline_weight: b.baseline_weight, baseline_usd: b.baseline_usd,
        ...t, net_saving_weight: net, net_saving_usd: t.saved_usd - t.ping_usd, net_saving_pct: b.baseline_weight === 0 ? null : (net / b.baseline_weight) * 100,
      });
    }
  }
  return {
    gaps: gaps.length, unpriced_gaps: gaps.length - pricedGaps, baseline_weight: baseline, baseline_usd: baselineUsd,
    subagent_weight: subagentWeight, budgets: rows, best_budget: bestBudget, buckets: bucketRows,
  };
}
