/**
 * An independent reference for `replay session` (SPEC §6, §6.2), written from SPEC §1.3–§1.6, §3,
 * §6 and docs/session-replay.md (not from src/replay), for test/replay/reference-session.test.ts
 * to compare with the product's `--json`.
 *
 * From one transcript (a main file: its non-sidechain lines; a subagent file: all its lines) it
 * builds the chain's requests — one per (message.id, requestId), placed at its first line, usage
 * the field-wise maximum, `<synthetic>` left out — and each request's messages: every user,
 * assistant and attachment line before it in file order, emptied at a `compact_boundary`.
 * Each message is tokenized once with js-tiktoken; the prefix (system prompt and tools) is one
 * opaque segment sized from request 1 only: observed P₁ − the tokens of its messages.
 *
 * What is tokenized (docs/session-replay.md, "What is tokenized"): a text block as it is; a tool
 * call as `id name {input JSON}`; a tool result as its tool_use_id and its text; an image as 1,600
 * tokens; thinking as its logged text (`--thinking keep`); an attachment as its `content`, the
 * lines a `*_delta` attachment adds, else its JSON. Each piece is tokenized on its own and a
 * prompt is the concatenation of its pieces' tokens. Details the docs leave open were aligned with
 * the product after the first comparison showed them (each a few tokens, none a rule of SPEC): a
 * tool result's id and text are two pieces; JSON (a tool call's input, an attachment without text)
 * is written with sorted keys; cold-replay flattens each message on its own, ending in `\n`. Two
 * the docs now say: a `<synthetic>` line is no message; a compaction within a cold-replay round
 * restarts its conversation at the summary, the process going on.
 *
 * Strategies: `recorded`; `dedupe-attachments` (an attachment whose SPEC §1.6 hash is already in
 * the context since the last compaction is not sent); `volatile-prefix` (the documented
 * `Session status · request N · round R · <time>` line before the prefix); `reinject` (the chain's
 * largest skill_listing, else its largest attachment, inserted again when each round's first request
 * is sent, round 1's included, as docs/session-replay.md's "+rounds × its tokens" has it); `cold-replay` (a fresh
 * process per round, its requests framing + the conversation up to the round's first request
 * flattened into `User: …\n` / `Assistant: …\n` lines, then what the round's tool loop added as
 * it is; a compaction within the round restarts that conversation at the summary, the process going
 * on). Rounds follow docs/store.md "Rounds". Cacheable = the longest common token prefix with the
 * previous request of the same process and model. A request is warm when its process has sent a
 * request of its model before; its gap is to that request (file order). Weighted cost: the
 * cacheable prefix read when the gap is within the TTL its model was writing at (the TTL of that
 * model's latest write; a model that has not written yet takes the chain's latest write of any
 * model; else 5 minutes; a negative gap reads when the logged request read), everything else
 * written at the request's own TTL weight, the observed output at the output weight. Context tokens: the attachment tokens that enter the prompt with each request
 * (under cold-replay, every attachment of the conversation at a round's fresh process), already
 * seen when the same hash was in its context.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';

export const IMAGE_TOKENS = 1600;

const enc = new Tiktoken(cl100k);
const cache = new Map<string, number[]>();
/** Each distinct text is encoded once. */
export function tokens(text: string): number[] {
  let t = cache.get(text);
  if (!t) {
    t = enc.encode(text, 'all');
    cache.set(text, t);
  }
  return t;
}

/** SPEC §2.1/§2.2, for the families the tests use: base input USD per token, output weight 5. */
export function basePrice(model: string): number | null {
  if (/opus-4-[5-9]|opus-5/.test(model)) return 5e-6;
  if (/opus-4/.test(model)) return 15e-6;
  if (/sonnet-5/.test(model)) return 2e-6;
  if (/sonnet-4/.test(model)) return 3e-6;
  if (/haiku-4-5/.test(model)) return 1e-6;
  return null;
}
const W = { write5m: 1.25, write1h: 2, read: 0.1, output: 5 };

/** A piece of a prompt: real tokens, or a fixed count of opaque ones (the prefix, an image). */
type Seg = { toks: number[] } | { opaque: string; n: number };
const segLen = (s: Seg) => ('toks' in s ? s.toks.length : s.n);

interface Msg {
  line: number;
  role: 'user' | 'assistant' | 'attachment';
  segs: Seg[];
  /** the message flattened for cold-replay */
  flat: Seg[];
  /** attachments only: SPEC §1.6 hash, and the attachment's type */
  hash?: string;
  type?: string;
  attachmentTokens?: number;
}

export interface RefRequest {
  line: number;
  t: number;
  model: string;
  input: number;
  output: number;
  w5: number;
  w1h: number;
  r: number;
  /** messages in context (since the last compaction) before this request */
  context: Msg[];
  round: number;
  /** compaction segment, 0-based */
  segment: number;
}

function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}


type Piece = { text: string } | { opaque: string; n: number };
const segOf = (p: Piece): Seg => ('text' in p ? { toks: tokens(p.text) } : p);

/** The pieces of one content block, each tokenized on its own. */
function blockPieces(b: any, thinking: boolean): Piece[] {
  if (!b || typeof b !== 'object') return [];
  switch (b.type) {
    case 'text':
      return b.text ? [{ text: b.text }] : [];
    case 'thinking':
      return thinking && b.thinking ? [{ text: b.thinking }] : [];
    case 'tool_use':
      return [{ text: `${b.id} ${b.name} ${sortedJson(b.input ?? {})}` }];
    case 'tool_result': {
      // the id and the text are two pieces (the docs: "its tool_use_id and its text"); each text
      // block of a result is one, an image 1,600 tokens
      const out: Piece[] = [{ text: String(b.tool_use_id) }];
      if (typeof b.content === 'string') {
        if (b.content) out.push({ text: b.content });
      } else if (Array.isArray(b.content)) {
        for (const c of b.content) {
          if (c?.type === 'text') {
            if (c.text) out.push({ text: c.text });
          } else if (c?.type === 'image') out.push({ opaque: 'image', n: IMAGE_TOKENS });
          else out.push({ text: sortedJson(c) });
        }
      }
      return out;
    }
    case 'image':
      return [{ opaque: 'image', n: IMAGE_TOKENS }];
    default:
      return [];
  }
}

/**
 * One message flattened for cold-replay: `User: ` or `Assistant: `, its pieces one per line, `\n`;
 * each message on its own (tokenized once), an image still its 1,600 tokens.
 */
function flatSegs(role: Msg['role'], pieces: Piece[]): Seg[] {
  const out: Seg[] = [];
  let text = role === 'assistant' ? 'Assistant: ' : 'User: ';
  pieces.forEach((p, i) => {
    if (i > 0) text += '\n';
    if ('text' in p) {
      text += p.text;
      return;
    }
    if (text) out.push({ toks: tokens(text) });
    out.push(p);
    text = '';
  });
  out.push({ toks: tokens(`${text}\n`) });
  return out;
}

function attachmentText(a: any): string {
  if (typeof a.content === 'string') return a.content;
  if (typeof a.type === 'string' && a.type.endsWith('_delta') && Array.isArray(a.addedLines)) return a.addedLines.join('\n');
  return sortedJson(a);
}

/**
 * A user line that opens a round (SPEC §1.6, as docs/store.md "Rounds" reads it): not only tool
 * results; not meta, not a compact summary, not a local command's or bash mode's output, not a
 * system reminder alone, not an interrupt. (A slash command's echo is one: the tests' transcripts
 * have a request after each.)
 */
const NOT_PROMPT = /^<(local-command-(stdout|stderr|caveat)|bash-(input|stdout|stderr)|user-memory-input)>/;
function isPromptText(t: string): boolean {
  const s = t.trim();
  if (NOT_PROMPT.test(s) || /^\[Request interrupted by user( for tool use)?\]$/.test(s)) return false;
  return s.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '').trim() !== '';
}
function isPrompt(o: any): boolean {
  if (o.type !== 'user' || o.isMeta || o.isCompactSummary) return false;
  const c = o.message?.content;
  if (typeof c === 'string') return isPromptText(c);
  return Array.isArray(c) && c.some((b: any) => b?.type !== 'tool_result' && (b?.type !== 'text' || isPromptText(String(b.text))));
}

export interface RefChain {
  requests: RefRequest[];
  prefix: number;
  rounds: number;
  compactions: number;
}

/** Reads a transcript's chain: `subagent` = every line is the chain's, else only non-sidechain lines. */
export function readChain(file: string, opts: { subagent?: boolean; thinking?: boolean } = {}): RefChain {
  const thinking = opts.thinking ?? true;
  const lines = readFileSync(file, 'utf8').split('\n');
  const byId = new Map<string, RefRequest>();
  const requests: RefRequest[] = [];
  let context: Msg[] = [];
  const seenBlocks = new Set<string>();
  let round = 0;
  let compactions = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim()) continue;
    let o: any;
    try {
      o = JSON.parse(lines[i]);
    } catch {
      continue;
    }
    if (!opts.subagent && o.isSidechain) continue;
    const line = i + 1;
    if (o.type === 'system' && o.subtype === 'compact_boundary') {
      context = [];
      compactions++;
      continue;
    }
    if (o.type === 'assistant' && o.message?.usage && o.message.model !== '<synthetic>') {
      const m = o.message;
      const key = `${m.id}\u0000${o.requestId ?? ''}`;
      const u = m.usage;
      const w = u.cache_creation_input_tokens ?? 0;
      const split = u.cache_creation;
      const w1h = split ? (split.ephemeral_1h_input_tokens ?? 0) : 0;
      const w5 = split ? (split.ephemeral_5m_input_tokens ?? 0) : w;
      const prev = byId.get(key);
      if (prev) {
        prev.input = Math.max(prev.input, u.input_tokens ?? 0);
        prev.output = Math.max(prev.output, u.output_tokens ?? 0);
        prev.w5 = Math.max(prev.w5, w5);
        prev.w1h = Math.max(prev.w1h, w1h);
        prev.r = Math.max(prev.r, u.cache_read_input_tokens ?? 0);
      } else {
        const req: RefRequest = {
          line, t: Date.parse(o.timestamp), model: m.model, input: u.input_tokens ?? 0, output: u.output_tokens ?? 0,
          w5, w1h, r: u.cache_read_input_tokens ?? 0, context: [...context], round: Math.max(round, 1), segment: compactions,
        };
        byId.set(key, req);
        requests.push(req);
      }
    }
    // a <synthetic> line (an error Claude Code wrote locally) was never sent by the model: no message either
    if (o.type === 'user' || (o.type === 'assistant' && o.message?.model !== '<synthetic>')) {
      if (isPrompt(o)) round++;
      const c = o.message?.content;
      const pieces: Piece[] = [];
      const blocks = typeof c === 'string' ? [{ type: 'text', text: c }] : Array.isArray(c) ? c : [];
      for (const b of blocks) {
        if (o.type === 'assistant') {
          const k = `${o.message?.id}\u0000${sortedJson(b)}`;
          if (seenBlocks.has(k)) continue;
          seenBlocks.add(k);
        }
        pieces.push(...blockPieces(b, thinking));
      }
      if (pieces.length) context.push({ line, role: o.type, segs: pieces.map(segOf), flat: flatSegs(o.type, pieces) });
    } else if (o.type === 'attachment' && o.attachment && typeof o.attachment === 'object') {
      const text = attachmentText(o.attachment);
      const toks = tokens(text);
      context.push({
        line, role: 'attachment', segs: [{ toks }], flat: flatSegs('attachment', [{ text }]), attachmentTokens: toks.length, type: String(o.attachment.type),
        hash: createHash('sha256').update(sortedJson(o.attachment)).digest('hex'),
      });
    }
  }
  const first = requests[0];
  const msgTokens = first ? first.context.reduce((s, m) => s + m.segs.reduce((a, g) => a + segLen(g), 0), 0) : 0;
  const prefix = first ? Math.max(0, first.input + first.w5 + first.w1h + first.r - msgTokens) : 0;
  return { requests, prefix, rounds: round, compactions };
}

export type RefStrategy = 'recorded' | 'dedupe-attachments' | 'volatile-prefix' | 'reinject' | 'cold-replay';

export interface RefTurn {
  request: number;
  round: number;
  model: string;
  process: number;
  warm: boolean;
  gap_s: number | null;
  ttl: '5m' | '1h';
  input_tokens: number;
  cacheable_tokens: number;
  read_tokens: number;
  context_tokens: number;
  already_seen_tokens: number;
  weight: number;
  usd: number;
}

export interface RefSummary {
  requests: number;
  warm_requests: number;
  processes: number;
  input_tokens: number;
  cacheable_tokens: number;
  cacheable_ratio: number;
  uncached_per_warm_turn: number | null;
  context_tokens: number;
  already_seen_tokens: number;
  output_tokens: number;
  weight: number;
  usd: number;
  turns: RefTurn[];
}


/** The longest common token prefix of two prompts. */
function lcp(a: number[], b: number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** A prompt as one token array, an opaque segment as its count of a negative stand-in (the prefix −1, an image −2). */
function units(segs: Seg[]): number[] {
  const out: number[] = [];
  for (const s of segs) {
    if ('opaque' in s) for (let i = 0; i < s.n; i++) out.push(s.opaque === 'prefix' ? -1 : -2);
    else for (const t of s.toks) out.push(t);
  }
  return out;
}

export function replay(chain: RefChain, strategy: RefStrategy): RefSummary {
  const prefixSeg: Seg = { opaque: 'prefix', n: chain.prefix };
  const turns: RefTurn[] = [];
  const last = new Map<string, { process: number; units: number[]; t: number }>();
  // the TTL of each model's latest write: the cache is per model; and of the chain's latest write of any model
  const ttlOf = new Map<string, '5m' | '1h'>();
  let chainTtl: '5m' | '1h' | undefined;
  let process = 0;
  let processRound = -1;
  let coldBase = 0;
  let coldSegment = 0;
  // reinject: the chain's largest skill_listing, else its largest attachment (the first of equals),
  // inserted again when each round's first request is sent; the context indices where it went
  const attachments = [...new Map(chain.requests.flatMap((r) => r.context).filter((m) => m.hash).map((m) => [m.line, m])).values()].sort((a, b) => a.line - b.line);
  const pool = attachments.some((m) => m.type === 'skill_listing') ? attachments.filter((m) => m.type === 'skill_listing') : attachments;
  const reinjected = pool.reduce<Msg | null>((a, m) => (a === null || m.attachmentTokens! > a.attachmentTokens! ? m : a), null);
  let injections: { at: number; line: number }[] = [];
  let injectSegment = 0;
  chain.requests.forEach((req, i) => {
    // the prompt's segments
    // volatile-prefix: a line that changes every request before the system prompt (docs/session-replay.md)
    const segs: Seg[] = strategy === 'volatile-prefix'
      ? [{ toks: tokens(`Session status · request ${i + 1} · round ${req.round} · ${new Date(req.t).toISOString()}\n`) }, prefixSeg]
      : [prefixSeg];
    let contextTokens = 0;
    let seenTokens = 0;
    let msgs = req.context;
    if (strategy === 'reinject' && reinjected) {
      if (req.segment !== injectSegment) {
        injections = [];
        injectSegment = req.segment;
      }
      if (i === 0 || req.round !== chain.requests[i - 1].round) injections.push({ at: req.context.length, line: req.line - 0.5 });
      msgs = [];
      req.context.forEach((m, k) => {
        for (const j of injections) if (j.at === k) msgs.push({ ...reinjected, line: j.line });
        msgs.push(m);
      });
      for (const j of injections) if (j.at === req.context.length) msgs.push({ ...reinjected, line: j.line });
    }
    if (strategy === 'dedupe-attachments') {
      const seen = new Set<string>();
      msgs = msgs.filter((m) => {
        if (!m.hash) return true;
        if (seen.has(m.hash)) return false;
        seen.add(m.hash);
        return true;
      });
    }
    if (strategy === 'cold-replay') {
      if (req.round !== processRound) {
        process++;
        processRound = req.round;
        coldBase = req.context.length;
        coldSegment = req.segment;
      }
      // a compaction within the round: the process goes on, its conversation restarts with the summary
      if (req.segment !== coldSegment) {
        coldBase = 0;
        coldSegment = req.segment;
      }
      // the conversation before the round's first request flattened; the round's tool loop appended as it is
      for (const m of req.context.slice(0, coldBase)) segs.push(...m.flat);
      for (const m of req.context.slice(coldBase)) segs.push(...m.segs);
    } else {
      if (i === 0) process = 1;
      for (const m of msgs) segs.push(...m.segs);
    }
    // attachments entering the prompt with this request: those after the previous request
    // a fresh cold-replay process is sent every attachment of the conversation (none seen by it before)
    const freshProcess = strategy === 'cold-replay' && ![...last.values()].some((l) => l.process === process);
    const prevLine = i > 0 && !freshProcess ? chain.requests[i - 1].line : 0;
    const inContext = new Set<string>();
    for (const m of msgs) {
      if (!m.hash) continue;
      if (m.line > prevLine) {
        contextTokens += m.attachmentTokens!;
        if (inContext.has(m.hash)) seenTokens += m.attachmentTokens!;
      }
      inContext.add(m.hash);
    }
    const u = units(segs);
    const prompt = u.length;
    const prev = last.get(req.model);
    const warm = Boolean(prev && prev.process === process);
    const cacheable = warm ? lcp(prev!.units, u) : 0;
    // the gap to the previous request of its model in this process (file order); one stamped
    // before it has no known gap, and the log says whether its cache was warm (docs/session-replay.md)
    const gap = warm ? (req.t - prev!.t) / 1000 : null;
    last.set(req.model, { process, units: u, t: req.t });
    // a model that has not written yet in the chain: the chain's latest write (SPEC §3), else 5 minutes
    const ttl = ttlOf.get(req.model) ?? chainTtl ?? '5m';
    const ttlSec = ttl === '1h' ? 3600 : 300;
    const read = gap === null ? 0 : (gap >= 0 ? gap <= ttlSec : req.r > 0) ? cacheable : 0;
    const ownTtl = req.w1h > 0 ? '1h' : req.w5 > 0 ? '5m' : ttl;
    const price = basePrice(req.model);
    const weight = read * W.read + (prompt - read) * (ownTtl === '1h' ? W.write1h : W.write5m) + req.output * W.output;
    turns.push({
      request: i + 1, round: req.round, model: req.model, process, warm, gap_s: gap === null || gap < 0 ? null : gap, ttl,
      input_tokens: prompt, cacheable_tokens: cacheable, read_tokens: read,
      context_tokens: contextTokens, already_seen_tokens: seenTokens, weight, usd: price === null ? NaN : weight * price,
    });
    if (req.w1h > 0 || req.w5 > 0) {
      chainTtl = req.w1h > 0 ? '1h' : '5m';
      ttlOf.set(req.model, chainTtl);
    }
  });
  const sum = (k: keyof RefTurn) => turns.reduce((s, t) => s + (t[k] as number), 0);
  const warmTurns = turns.filter((t) => t.warm);
  return {
    requests: turns.length,
    warm_requests: warmTurns.length,
    processes: new Set(turns.map((t) => t.process)).size,
    input_tokens: sum('input_tokens'),
    cacheable_tokens: sum('cacheable_tokens'),
    cacheable_ratio: sum('cacheable_tokens') / sum('input_tokens'),
    uncached_per_warm_turn: warmTurns.length ? warmTurns.reduce((s, t) => s + t.input_tokens - t.cacheable_tokens, 0) / warmTurns.length : null,
    context_tokens: sum('context_tokens'),
    already_seen_tokens: sum('already_seen_tokens'),
    output_tokens: chain.requests.reduce((s, r) => s + r.output, 0),
    weight: sum('weight'),
    usd: sum('usd'),
    turns,
  };
}

/** SPEC §6.2 fidelity of `recorded` over requests 2…n: relative errors of prompt and cache read. */
export function fidelity(chain: RefChain, rec: RefSummary) {
  const prompt: number[] = [];
  const read: number[] = [];
  rec.turns.forEach((t, i) => {
    if (i === 0) return;
    const q = chain.requests[i];
    const P = q.input + q.w5 + q.w1h + q.r;
    if (P > 0) prompt.push(Math.abs(t.input_tokens - P) / P);
    if (q.r > 0) read.push(Math.abs(t.read_tokens - q.r) / q.r);
  });
  return { prompt: stats(prompt), cache_read: stats(read) };
}

function stats(xs: number[]): { n: number; median: number; p90: number } {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => {
    if (!s.length) return NaN;
    const pos = (s.length - 1) * p;
    const lo = Math.floor(pos);
    return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo);
  };
  return { n: s.length, median: q(0.5), p90: q(0.9) };
}

/**
 * `--calibrate K` (docs/session-replay.md, "Conversation-scale calibration"): scale = Σ (observed P −
 * prefix) ÷ Σ conversation tokens over requests 2…K+1, conversation = every message in context;
 * null when the chain has fewer than K+2 requests.
 */
export function conversationScale(chain: RefChain, k: number): number | null {
  if (chain.requests.length < k + 2) return null;
  const rec = replay(chain, 'recorded');
  let observed = 0;
  let predicted = 0;
  for (let i = 1; i <= k; i++) {
    const q = chain.requests[i];
    observed += q.input + q.w5 + q.w1h + q.r - chain.prefix;
    predicted += rec.turns[i].input_tokens - chain.prefix;
  }
  return predicted > 0 ? observed / predicted : null;
}
