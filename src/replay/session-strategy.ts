/**
 * One context-delivery strategy over a rebuilt chain (SPEC §6.2), request by request:
 *
 *   recorded            the chain as logged
 *   dedupe-attachments  an attachment whose content is already in the context is not sent again
 *   volatile-prefix     a line that changes every request sits before the system prompt
 *   reinject            one attachment is inserted again at the start of every round
 *   cold-replay         every round goes to a fresh process: framing + the whole conversation so
 *                       far flattened into `User:`/`Assistant:` lines; the process then runs the
 *                       round's tool loop itself (warm within the round)
 *
 * A process's history is an append-only SegmentList, so each request is a few runs and the
 * cacheable prefix (the longest common token prefix with the previous request of the same
 * process and model — the prompt cache is kept per model, so a switch to another model and back
 * reads only what that model wrote) is found without re-walking the shared part (request.ts). Weighted cost uses the real
 * gaps: the cacheable prefix is read (×read weight) when the gap is within the TTL its model was
 * writing at (the request's readTtl); everything else is written at the weight of the request's
 * writeTtl (its own write's TTL when it wrote, else readTtl), output at the model's weight.
 *
 * A compaction empties the conversation (the summary that follows is its new start) and the
 * attachments already in context; the process and its framing stay.
 */
import type { Weights } from '../pricing/pricing.js';
import { type Pause, pauses } from './pauses.js';
import { commonPrefixTokens, SegmentList, type RequestView, type Run } from './request.js';
import { scaledTokens } from './session-calibrate.js';
import type { RebuiltChain, RebuiltMessage, RebuiltRequest, Ttl } from './session-rebuild.js';
import type { Segment, SegmentTokenizer } from './tokenizer.js';

import { SESSION_STRATEGIES, type SessionStrategy } from './names.js';

export { SESSION_STRATEGIES, type SessionStrategy };

export const TTL_MS: Record<Ttl, number> = { '5m': 300_000, '1h': 3_600_000 };

/** The attachment the `reinject` strategy inserts every round. */
export interface Reinjected {
  type: string;
  hash: string;
  line: number;
  tokens: number;
  segments: Segment[];
}

/** One request of the chain under one strategy. */
export interface SessionTurn {
  strategy: SessionStrategy;
  /** 1-based request index in the chain */
  request: number;
  line: number;
  at: string;
  round: number;
  model: string;
  /** process number (cold-replay starts one per round) */
  process: number;
  warm: boolean;
  /**
   * `read`: within the TTL; `expired`: gap over the TTL; `none`: first request of its process. A
   * request stamped before the previous one (gap unknown) is `read` when the logged request read
   * the cache, else `expired`.
   */
  cache: 'read' | 'expired' | 'none';
  /** seconds since the previous request of its model; null for the first, and for one stamped before it */
  gap_s: number | null;
  ttl: Ttl;
  input_tokens: number;
  cacheable_tokens: number;
  /** cacheable tokens actually read (0 when the cache expired) */
  read_tokens: number;
  uncached_tokens: number;
  /** attachment tokens first sent with this request (under cold-replay, a round's fresh process is sent every attachment of the conversation again) */
  context_tokens: number;
  /** of which the same content was already in the context */
  already_seen_tokens: number;
  output_tokens: number;
  /** null when the model has no price */
  weight: number | null;
  usd: number | null;
}

export interface SessionStrategySummary {
  requests: number;
  warm_requests: number;
  processes: number;
  expired_requests: number;
  /**
   * of expired_requests, those stamped before the previous request of their model (gap_s null): not
   * past the TTL as far as anyone knows, but the logged request did not read the cache
   */
  expired_unknown_gap_requests: number;
  input_tokens: number;
  cacheable_tokens: number;
  /** null with no input: a ratio of nothing is no number (0 read as input none of which was cacheable) */
  cacheable_ratio: number | null;
  /** null with no warm request: a mean of none is no number (0 read as a warm turn with nothing uncached) */
  uncached_per_warm_turn: number | null;
  context_tokens: number;
  already_seen_tokens: number;
  /** null with no context tokens sent, as cacheable_ratio with no input */
  already_seen_share: number | null;
  attachments_sent: number;
  output_tokens: number;
  weight: number;
  usd: number;
  /** requests left out of weight and usd because their model has no price */
  unpriced_requests: number;
}

export interface StrategyContext {
  tok: SegmentTokenizer;
  weightsFor: (model: string, promptTokens: number) => Weights | null;
  reinject: Reinjected | null;
  /** conversation tokens count × scale, framing as it is (session-calibrate.ts); default 1 */
  scale?: number;
}

/** A request from runs of fixed length (a run snapshot does not move when its list grows later). */
function viewOf(runs: Run[]): RequestView {
  const kept = runs.filter((r) => r.len > 0);
  return { runs: kept, tokens: kept.reduce((a, r) => a + r.list.tokensBetween(0, r.len), 0) };
}

const run = (list: SegmentList, len = list.length): Run => ({ list, len });

/** The `volatile-prefix` line: a clock and a counter, different on every request. */
export function volatileLine(r: RebuiltRequest): string {
  return `Session status · request ${r.index} · round ${r.round} · ${new Date(r.t).toISOString()}\n`;
}

/**
 * Example (Opus weights, 5-minute TTL, a 10,000-token prefix): request 1 follows a 50-token
 * prompt → input 10,050, cacheable 0 (a new process). Its 30-token reply and a 200-token tool
 * result follow; request 2, 20 s later → input 10,280, cacheable 10,050 (all of request 1), weight
 * 10,050 × 0.1 + 230 × 1.25 + output × 5 = 1,292.5 + output × 5. Under `volatile-prefix` request
 * 2's cacheable is the few tokens the two status lines share (~5); under `cold-replay`, the first
 * request of every round has cacheable 0.
 */
export async function replayStrategy(rc: RebuiltChain, strategy: SessionStrategy, ctx: StrategyContext, pause: Pause = pauses()): Promise<{ turns: SessionTurn[]; attachmentsSent: number }> {
  const lead = new SegmentList([rc.prefix]);
  let history = new SegmentList();
  // cold-replay: the flattened conversation, and what the current fresh process added after it
  let flat = new SegmentList();
  let flatStart = 0;
  let own = new SegmentList();
  // the prompt cache is per model: a request reads what the last request of its model left
  const last = new Map<string, { view: RequestView; t: number }>();
  let processes = 1;
  const inContext = new Set<string>();
  let pending = { context: 0, seen: 0, count: 0 };
  let attachmentsSent = 0;
  const turns: SessionTurn[] = [];
  const scale = ctx.scale ?? 1;

  const sendAttachment = (hash: string, tokens: number) => {
    pending.count++;
    pending.context += tokens;
    if (inContext.has(hash)) pending.seen += tokens;
    inContext.add(hash);
  };

  // cold-replay: the attachments in the flattened conversation, which every fresh process is sent again
  let flatAttachments: { hash: string; tokens: number }[] = [];

  const append = (m: RebuiltMessage) => {
    if (m.attachment) {
      if (strategy === 'dedupe-attachments' && inContext.has(m.attachment.hash)) return;
      sendAttachment(m.attachment.hash, m.tokens);
    }
    if (strategy === 'cold-replay') {
      if (m.attachment) flatAttachments.push({ hash: m.attachment.hash, tokens: m.tokens });
      flat.pushAll(m.flat());
      own.pushAll(m.segments);
    } else history.pushAll(m.segments);
  };

  for (const ev of rc.events) {
    await pause();
    if (ev.kind === 'message') {
      append(ev);
      continue;
    }
    if (ev.kind === 'compaction') {
      history = new SegmentList();
      flat = new SegmentList();
      own = new SegmentList();
      flatStart = 0;
      flatAttachments = [];
      inContext.clear();
      continue;
    }
    const r = ev;
    if (strategy === 'cold-replay' && r.opensRound) {
      if (last.size) {
        processes++;
        // the fresh process is sent every attachment of the conversation again, none of which it has
        // seen (as §6.1 counts rows re-sent to a new process): they were counted once, at the first process
        pending = { context: 0, seen: 0, count: 0 };
        inContext.clear();
        for (const a of flatAttachments) sendAttachment(a.hash, a.tokens);
      }
      last.clear();
      flatStart = flat.length;
      own = new SegmentList();
    }
    if (strategy === 'reinject' && r.opensRound && ctx.reinject) {
      history.pushAll(ctx.reinject.segments);
      sendAttachment(ctx.reinject.hash, ctx.reinject.tokens);
    }
    let view: RequestView;
    let framing: SegmentList = lead;
    if (strategy === 'cold-replay') view = viewOf([run(lead), run(flat, flatStart), run(own)]);
    else if (strategy === 'volatile-prefix') view = viewOf([run((framing = new SegmentList([ctx.tok.segment(volatileLine(r)), rc.prefix]))), run(history)]);
    else view = viewOf([run(lead), run(history)]);

    const prev = last.get(r.model);
    // the framing leads every view, so a token position past it is conversation: scaled alike
    const scaled = (n: number) => scaledTokens(n, framing.tokens, scale);
    const input = scaled(view.tokens);
    const cacheable = prev ? scaled(commonPrefixTokens(prev.view, view)) : 0;
    const gap = prev ? r.t - prev.t : null;
    // stamped before the previous request of its model (the clock stepped back): the time between
    // them is unknown, and the log says whether the cache was still warm: the request read it or not
    const warm = gap === null ? null : gap >= 0 ? gap <= TTL_MS[r.readTtl] : r.usage.cacheRead > 0;
    const cache = warm === null ? 'none' : warm ? 'read' : 'expired';
    const read = cache === 'read' ? cacheable : 0;
    const output = r.usage.output;
    const w = ctx.weightsFor(r.model, input);
    const weight = w ? read * w.read + (input - read) * (r.writeTtl === '1h' ? w.write1h : w.write5m) + output * w.output : null;
    turns.push({
      strategy,
      request: r.index,
      line: r.line,
      at: new Date(r.t).toISOString(),
      round: r.round,
      model: r.model,
      process: processes,
      warm: prev !== undefined,
      cache,
      gap_s: gap === null || gap < 0 ? null : Math.round(gap / 1000),
      ttl: r.readTtl,
      input_tokens: input,
      cacheable_tokens: cacheable,
      read_tokens: read,
      uncached_tokens: input - cacheable,
      context_tokens: Math.round(pending.context * scale),
      already_seen_tokens: Math.round(pending.seen * scale),
      output_tokens: output,
      weight,
      usd: w && weight !== null ? weight * w.usdPerWeight : null,
    });
    attachmentsSent += pending.count;
    pending = { context: 0, seen: 0, count: 0 };
    last.set(r.model, { view, t: r.t });
  }
  return { turns, attachmentsSent };
}

export function summarize(turns: readonly SessionTurn[], attachmentsSent: number): SessionStrategySummary {
  const sum = (f: (t: SessionTurn) => number, of: readonly SessionTurn[] = turns) => of.reduce((a, t) => a + f(t), 0);
  const warm = turns.filter((t) => t.warm);
  const input = sum((t) => t.input_tokens);
  const cacheable = sum((t) => t.cacheable_tokens);
  const context = sum((t) => t.context_tokens);
  const seen = sum((t) => t.already_seen_tokens);
  return {
    requests: turns.length,
    warm_requests: warm.length,
    processes: new Set(turns.map((t) => t.process)).size,
    expired_requests: turns.filter((t) => t.cache === 'expired').length,
    expired_unknown_gap_requests: turns.filter((t) => t.cache === 'expired' && t.gap_s === null).length,
    input_tokens: input,
    cacheable_tokens: cacheable,
    cacheable_ratio: input ? cacheable / input : null,
    uncached_per_warm_turn: warm.length ? sum((t) => t.uncached_tokens, warm) / warm.length : null,
    context_tokens: context,
    already_seen_tokens: seen,
    already_seen_share: context ? seen / context : null,
    attachments_sent: attachmentsSent,
    output_tokens: sum((t) => t.output_tokens),
    weight: sum((t) => t.weight ?? 0),
    usd: sum((t) => t.usd ?? 0),
    unpriced_requests: turns.filter((t) => t.weight === null).length,
  };
}
