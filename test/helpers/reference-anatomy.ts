/**
 * A second opinion on the money numbers: SPEC §1.3/§1.4/§2/§3 re-implemented from the SPEC text
 * alone, over raw JSONL (plain fs + JSON.parse). It shares no code with the product; only the
 * bundled price table is read, as data. Kept short and literal so a reader can check it against
 * the SPEC line by line. `test/analyses/reference-money.test.ts` compares it with the product.
 *
 * Example (one chain, Opus 4.6, 5-minute writes, jitter 1,024):
 *   #1 t=0     r=0      w=10,000          → cold 10,000
 *   #2 t=60s   r=10,000 w=2,000           → C=10,000, rw=0 → growth 2,000
 *   #3 t=400s  r=0      w=13,000 (g>300s) → C=12,000, rw=12,000 → expiry 12,000, growth 1,000;
 *      waste = 12,000 × (1.25 − 0.1) = 13,800
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { REPO } from './corpus.js';

interface Price { input: number; write_5m: number; write_1h: number; read: number; output: number; long_context?: Price & { above: number } }
const PRICES: Record<string, Price> = JSON.parse(readFileSync(join(REPO, 'src/pricing/prices.json'), 'utf8')).models;

/** SPEC §7: exact id, then the id without its date suffix. */
export function priceOf(model: string): Price | undefined {
  return PRICES[model] ?? PRICES[model.replace(/-\d{8}$/, '')];
}

export interface RefRequest {
  key: string;
  t: number;
  model: string;
  chain: string;
  segment: number;
  round: number;
  /** file order of the best copy, to keep same-millisecond requests in transcript order */
  order: number;
  in: number; out: number; w: number; r: number; w5: number; w1h: number;
  splitMissing: boolean;
  p: number;
  longContext: boolean;
  /** null when the model has no price */
  weight: number | null;
  usd: number | null;
  /** per-token weights in force for this request (long context included) */
  m?: { w5: number; w1h: number; r: number; out: number; usdPerWeight: number };
  // anatomy (SPEC §3)
  gapS: number | null;
  ttl: '5m' | '1h' | null;
  cachedPrefix: number;
  rewrite: number;
  cold: number; growth: number; expiry: number; brk: number;
  /** null when the model has no price */
  wasteWeight: number | null;
  anatomyWeight: { cold: number; growth: number; expiry: number; break: number };
}

export interface RefChain {
  id: string;
  requests: RefRequest[];
  rounds: number;
  repurchase: boolean;
  readMedian: number | null;
}

interface Copy {
  key: string; t: number; model: string; usage: any; rank: number; chain: string; segment: number; round: number; order: number;
}

function jsonlFiles(dir: string): string[] {
  if (statSync(dir).isFile()) return dir.endsWith('.jsonl') ? [dir] : [];
  return readdirSync(dir).sort().flatMap((n) => jsonlFiles(join(dir, n)));
}

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

/** A user line that opens a round (SPEC §1.6, with the exclusions docs/store.md "Rounds" lists). */
function promptKind(line: any): 'prompt' | 'command' | null {
  if (line.type !== 'user' || line.isMeta || line.isCompactSummary) return null;
  const c = line.message?.content;
  let text: string | null = null;
  if (typeof c === 'string') text = c;
  else if (Array.isArray(c)) {
    const other = c.filter((b: any) => b?.type !== 'tool_result');
    if (other.length === 0) return null;
    text = other.find((b: any) => b?.type === 'text')?.text ?? '';
  } else return null;
  const s = (text ?? '').trimStart();
  if (/^<(local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr)>/.test(s)) return null;
  if (/^<(command-name|command-message)>/.test(s)) return 'command';
  return 'prompt';
}

/** Reads every transcript below the paths and returns its chains with every request priced and classed. */
export function referenceAnatomy(paths: string[], jitter = 1024): RefChain[] {
  const copies: Copy[] = [];
  let order = 0;
  for (const file of paths.flatMap(jsonlFiles)) {
    const isAgentFile = basename(file).startsWith('agent-');
    const fileAgent = isAgentFile ? basename(file, '.jsonl').slice('agent-'.length) : null;
    const lines: any[] = [];
    for (const text of readFileSync(file, 'utf8').split('\n')) {
      try {
        const v = JSON.parse(text);
        if (v && typeof v === 'object') lines.push(v);
      } catch { /* not a line we can read; the product reports these */ }
    }
    // v1.x inline sidechains: one chain per sidechain root (the first sidechain line of its thread)
    const byUuid = new Map<string, any>();
    for (const l of lines) if (typeof l.uuid === 'string') byUuid.set(l.uuid, l);
    const rootOf = (l: any): string => {
      let cur = l;
      for (let n = 0; n < 1e6; n++) {
        const parent = byUuid.get(cur.parentUuid);
        if (!parent || !parent.isSidechain) return cur.uuid;
        cur = parent;
      }
      return cur.uuid;
    };
    const chainOf = (l: any): string => {
      const session = l.sessionId ?? basename(file, '.jsonl');
      if (fileAgent) return `${session}:${l.agentId ?? fileAgent}`;
      if (l.isSidechain && !l.agentId) return `${session}:sidechain:${rootOf(l)}`;
      if (l.isSidechain && l.agentId) return `${session}:${l.agentId}`;
      return session;
    };
    const segments = new Map<string, number>();
    const rounds = new Map<string, number>();
    const pendingCommand = new Set<string>();
    for (const l of lines) {
      order++;
      const chain = chainOf(l);
      if (l.type === 'system' && l.subtype === 'compact_boundary') segments.set(chain, (segments.get(chain) ?? 0) + 1);
      const kind = promptKind(l);
      if (kind === 'prompt') { rounds.set(chain, (rounds.get(chain) ?? 0) + 1); pendingCommand.delete(chain); }
      if (kind === 'command') pendingCommand.add(chain);
      let msgLine: any = null;
      let rank = 0;
      let copyChain = chain;
      if (l.type === 'assistant') { msgLine = l; rank = isAgentFile ? 2 : 1; }
      else if (l.type === 'progress' && l.data?.type === 'agent_progress' && l.data.message?.type === 'assistant') {
        msgLine = l.data.message;
        rank = 0;
        copyChain = `${l.sessionId}:${l.data.agentId}`;
      }
      const m = msgLine?.message;
      if (!m || !m.usage || typeof m.usage !== 'object' || m.model === '<synthetic>' || typeof m.id !== 'string') continue;
      // a slash command's echo opens a round only when a request follows it (docs/store.md "Rounds"),
      // and a request before any prompt is in round 1 (the product's reading; SPEC §1.6 is silent)
      if (rank > 0 && (pendingCommand.has(chain) || !rounds.get(chain))) { rounds.set(chain, (rounds.get(chain) ?? 0) + 1); pendingCommand.delete(chain); }
      const t = Date.parse(msgLine.timestamp ?? l.timestamp);
      if (!Number.isFinite(t)) continue;
      // a requestId written as a whole number is its decimal text (docs/faults.md)
      const rid = typeof msgLine.requestId === 'number' && Number.isSafeInteger(msgLine.requestId) ? String(msgLine.requestId) : msgLine.requestId;
      const key = typeof rid === 'string' ? `${m.id}\u0000${rid}` : m.id;
      // a copy's segment counts the compactions of its own chain before it in its file: a subagent's
      // progress copy in the main file sits after the main thread's compactions, not its own
      copies.push({
        key, t, model: m.model, usage: m.usage, rank, chain: copyChain,
        segment: segments.get(copyChain) ?? 0, round: rank > 0 ? rounds.get(chain) ?? 0 : -1, order,
      });
    }
  }

  // SPEC §1.3: one request per identity, usage the field-wise maximum, attribution by the best copy
  const byKey = new Map<string, Copy[]>();
  for (const c of copies) byKey.set(c.key, [...(byKey.get(c.key) ?? []), c]);
  const requests: RefRequest[] = [];
  for (const [key, cs] of byKey) {
    const best = cs.reduce((a, b) => (b.rank > a.rank ? b : a));
    const max = (f: (u: any) => unknown) => Math.max(...cs.map((c) => num(f(c.usage))));
    const split = cs.some((c) => c.usage.cache_creation && typeof c.usage.cache_creation === 'object' && Object.keys(c.usage.cache_creation).length > 0);
    const w = max((u) => u.cache_creation_input_tokens);
    // w (what ccusage counts too) is the written total; should a split not add up to it, the product
    // takes the 1-hour part from the split and the rest as 5-minute writes (SPEC §1.3 is silent; real
    // logs always add up), and so does this reference
    const w1h = split ? Math.min(w, max((u) => u.cache_creation?.ephemeral_1h_input_tokens)) : 0;
    const w5 = w - w1h;
    const inp = max((u) => u.input_tokens);
    const r = max((u) => u.cache_read_input_tokens);
    const out = max((u) => u.output_tokens);
    const p = inp + w + r;
    const base = priceOf(best.model);
    const lc = base?.long_context && p > base.long_context.above ? base.long_context : undefined;
    const price = lc ?? base;
    let weight: number | null = null;
    let usd: number | null = null;
    let m: RefRequest['m'];
    if (price && base) {
      // weight stays in the model's own base-input tokens (SPEC §2.1: USD = weight × the model's base
      // input price), so a long-context request weighs price/base more per token: 2× on Sonnet 4.5
      const k = 1 / base.input;
      m = { w5: price.write_5m * k, w1h: price.write_1h * k, r: price.read * k, out: price.output * k, usdPerWeight: base.input / 1e6 };
      const inW = price.input * k;
      weight = inp * inW + w5 * m.w5 + w1h * m.w1h + r * m.r + out * m.out;
      usd = weight * m.usdPerWeight;
    }
    requests.push({
      key, t: Math.min(...cs.map((c) => c.t)), model: best.model, chain: best.chain, segment: best.segment, round: best.round, order: best.order,
      in: inp, out, w, r, w5, w1h, splitMissing: !split, p, longContext: Boolean(lc), weight, usd, m,
      gapS: null, ttl: null, cachedPrefix: 0, rewrite: 0, cold: 0, growth: 0, expiry: 0, brk: 0, wasteWeight: null,
      anatomyWeight: { cold: 0, growth: 0, expiry: 0, break: 0 },
    });
  }

  // SPEC §1.4 and §3, chain by chain
  const byChain = new Map<string, RefRequest[]>();
  for (const q of requests) byChain.set(q.chain, [...(byChain.get(q.chain) ?? []), q]);
  const chains: RefChain[] = [];
  for (const [id, qs] of byChain) {
    qs.sort((a, b) => a.t - b.t || a.order - b.order);
    let lastWriteWas1h = false;
    qs.forEach((q, i) => {
      const prev = qs[i - 1];
      if (prev) {
        q.gapS = (q.t - prev.t) / 1000;
        q.ttl = lastWriteWas1h ? '1h' : '5m';
        q.cachedPrefix = prev.r + prev.w;
      }
      if (!prev || q.segment !== prev.segment) {
        q.cold = q.w;
      } else {
        const rw = Math.min(q.w, Math.max(0, q.cachedPrefix - q.r));
        q.rewrite = rw >= jitter ? rw : 0;
        q.growth = q.w - q.rewrite;
        if (q.gapS! > (q.ttl === '1h' ? 3600 : 300)) q.expiry = q.rewrite;
        else q.brk = q.rewrite;
      }
      if (q.w > 0) lastWriteWas1h = q.w1h > 0;
      if (q.m) {
        // a written token costs this request's own 5m/1h mix (README: waste "as anatomy prices" it)
        const perWrite = q.w > 0 ? (q.w5 * q.m.w5 + q.w1h * q.m.w1h) / q.w : 0;
        q.anatomyWeight = { cold: q.cold * perWrite, growth: q.growth * perWrite, expiry: q.expiry * perWrite, break: q.brk * perWrite };
        q.wasteWeight = (q.expiry + q.brk) * (perWrite - q.m.r);
      }
    });
    // re-purchase (SPEC §3): ≥ 3 rounds, first-request reads within 1,024 of their median, rw ≥ 0.8·C
    const firsts: RefRequest[] = [];
    for (const q of qs) if (q.round > 0 && !firsts.some((f) => f.round === q.round)) firsts.push(q);
    const reads = firsts.map((f) => f.r).sort((a, b) => a - b);
    const mid = reads.length >> 1;
    const readMedian = reads.length === 0 ? null : reads.length % 2 ? reads[mid]! : (reads[mid - 1]! + reads[mid]!) / 2;
    const repurchase = firsts.length >= 3
      && firsts.every((f) => Math.abs(f.r - readMedian!) <= 1024)
      && firsts.slice(1).every((f) => f.cold === 0 && f.rewrite >= 0.8 * f.cachedPrefix);
    chains.push({ id, requests: qs, rounds: firsts.length, repurchase, readMedian });
  }
  return chains;
}

/** Sums over requests, as SPEC §3 derives them per chain / session / model. */
export function referenceTotals(qs: RefRequest[]) {
  const priced = qs.filter((q) => q.weight !== null);
  const sum = (f: (q: RefRequest) => number, over = qs) => over.reduce((s, q) => s + f(q), 0);
  const readWeight = sum((q) => q.r * q.m!.r, priced);
  const writeWeight = sum((q) => q.w5 * q.m!.w5 + q.w1h * q.m!.w1h, priced);
  const prompt = sum((q) => q.p);
  return {
    requests: qs.length,
    input: sum((q) => q.in), output: sum((q) => q.out), cache_write_5m: sum((q) => q.w5), cache_write_1h: sum((q) => q.w1h), cache_read: sum((q) => q.r),
    cold: sum((q) => q.cold), growth: sum((q) => q.growth), expiry: sum((q) => q.expiry), break: sum((q) => q.brk),
    break_events: qs.filter((q) => q.brk > 0).length,
    weight: sum((q) => q.weight!, priced), usd: sum((q) => q.usd!, priced),
    waste_weight: sum((q) => q.wasteWeight!, priced), waste_usd: sum((q) => q.wasteWeight! * q.m!.usdPerWeight, priced),
    hit_ratio: prompt > 0 ? sum((q) => q.r) / prompt : null,
    write_read_ratio: readWeight > 0 ? writeWeight / readWeight : null,
  };
}
