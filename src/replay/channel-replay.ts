/**
 * The channel replay (SPEC §6.1): for every @-mention of the agent in a channel log, build the
 * request its provider would see under each context-delivery strategy, and measure it.
 *
 *   channel log ─▶ mentions ─▶ per strategy, per mention:
 *     process pool (cold / warm / reloaded) ─▶ render context (watermark?) ─▶ stage rows
 *     ─▶ request = [status?] + framing + history + (payload, brief, block) ─▶ cacheable prefix
 *     ─▶ run succeeds: reply joins history, commit() │ run fails: discard()
 *
 * A failed run is billed, produces no reply, and its turn stays in the process's history
 * (Claude Code keeps a user message after an API error); the watermark is discarded, so the
 * rows come again next turn — counted as already seen, the price of never leaving a hole.
 */
import { basename, extname } from 'node:path';
import type { ChannelMessage } from '../samples/channel.js';
import { agentAuthor, instantOf, isAgentAuthor, isMention, pairReplies, readChannelLog, threadOf, type SkippedChannelLine } from './channel-log.js';
import { briefText, fallbackReply, framingFor, payloadText, statusLine } from './framing.js';
import { ProcessPool, type Delivery } from './process.js';
import { FETCH_ROWS, renderContext } from './render.js';
import { commonPrefixTokens, requestOf, SegmentList } from './request.js';
import { UsageError } from '../errors.js';
import { shownId } from '../format/table.js';
import { ENCODINGS, SegmentTokenizer, type EncodingName, type Segment, type TokenizerWork } from './tokenizer.js';
import { WatermarkStore, type StagedRows, type WatermarkKey } from './watermark.js';
import { flaggedModelPrice, loadPriceTable, type ModelPrice, type PriceTable } from '../pricing/pricing.js';

import { CHANNEL_STRATEGIES, DEFAULT_CHANNEL_MODEL, DEFAULT_PREFIX_TOKENS, type ChannelStrategy } from './names.js';
import { pushAll } from '../arrays.js';

export { CHANNEL_STRATEGIES, DEFAULT_CHANNEL_MODEL, type ChannelStrategy };

/** Weights per token in base-input-token equivalents (SPEC §2.1); defaults are the Opus family's (DEFAULT_CHANNEL_MODEL's). */
export interface ReplayWeights {
  input: number;
  write5m: number;
  write1h: number;
  read: number;
  output: number;
}
export const OPUS_WEIGHTS: ReplayWeights = { input: 1, write5m: 1.25, write1h: 2, read: 0.1, output: 5 };
/** $5 per million base input tokens (Opus 4.5+). */
export const OPUS_USD_PER_INPUT_TOKEN = 5 / 1_000_000;

export type Ttl = '5m' | '1h';

export interface ChannelReplayOptions {
  /** channel log (JSONL); or pass `messages` */
  file?: string;
  messages?: readonly ChannelMessage[];
  /** channel id in payloads and status lines; default: the file's base name, else `channel` */
  channel?: string;
  /** agent handle, default `@claude`; its own messages have author `claude` */
  agent?: string;
  strategies?: readonly ChannelStrategy[];
  /** evict the process just before these mentions (1-based): cold turn, new native id */
  evictAt?: number | readonly number[];
  /** these mentions' runs fail (1-based): the watermark is discarded */
  failAt?: number | readonly number[];
  /** reap a process idle this many minutes (channel clock); null/undefined = off */
  idleReapMinutes?: number | null;
  /** a reaped process's session is kept and reloaded (default false: the next turn is cold) */
  keepReapedSessions?: boolean;
  /** tokens of framing (system prompt + tool schemas), default 2,120 */
  prefixTokens?: number;
  encoding?: EncodingName;
  ttl?: Ttl;
  /** the model whose prices give the weights and the USD (default DEFAULT_CHANNEL_MODEL) */
  model?: string;
  /** the price table in force (`--pricing`: the bundled one replaced or extended by a file); default the bundled one */
  prices?: PriceTable;
  /** overrides of the model's weights (then used for every turn, long-context tier or not) */
  weights?: Partial<ReplayWeights>;
  usdPerInputToken?: number;
  bindingId?: string;
}

/** One mention under one strategy. */
export interface ChannelTurn {
  strategy: ChannelStrategy;
  /** 1-based mention index */
  mention: number;
  message_id: string;
  at: string;
  delivery: Delivery;
  native: string;
  /** `read`: cached prefix within the TTL; `expired`: gap over the TTL; `none`: new process */
  cache: 'read' | 'expired' | 'none';
  gap_s: number | null;
  input_tokens: number;
  cacheable_tokens: number;
  uncached_tokens: number;
  context_tokens: number;
  /** tokens of rows shown earlier to this native process, in any block (a thread root the top-level block showed, sent again in its thread, counts) */
  already_seen_tokens: number;
  /** rows an earlier process of this binding had seen, sent to a new one (correct, not waste) */
  reshown_tokens: number;
  rows: number;
  header: 'first_contact' | 'watermark' | null;
  output_tokens: number;
  failed: boolean;
  weight: number;
  /** weight × the USD of an input token, as a session replay's turns give it */
  usd: number;
}

export interface StrategySummary {
  turns: number;
  warm_turns: number;
  cold_turns: number;
  reloaded_turns: number;
  failed_turns: number;
  expired_turns: number;
  processes: number;
  input_tokens: number;
  cacheable_tokens: number;
  /** null with no input: a ratio of nothing is no number (0 read as input none of which was cacheable) */
  cacheable_ratio: number | null;
  /** null with no warm turn: a mean of none is no number (0 read as a warm turn with nothing uncached) */
  uncached_per_warm_turn: number | null;
  context_tokens: number;
  already_seen_tokens: number;
  /** null with no channel context sent, as cacheable_ratio with no input */
  already_seen_share: number | null;
  reshown_tokens: number;
  rows_sent: number;
  /** per stream (top level, each thread): rows between its first and last mention that no block carried */
  rows_never_shown: number;
  output_tokens: number;
  weight: number;
  usd: number;
}

export interface ChannelReplayResult {
  channel: {
    file: string | null;
    channel_id: string;
    agent: string;
    messages: number;
    mentions: number;
    replies_from_log: number;
    first_at: string | null;
    last_at: string | null;
    skipped_lines: SkippedChannelLine[];
  };
  settings: {
    strategies: ChannelStrategy[];
    evict_at: number[];
    fail_at: number[];
    idle_reap_minutes: number | null;
    /** the same in seconds, as every other duration of the JSON */
    idle_reap_s: number | null;
    prefix_tokens: number;
    brief_tokens: number;
    encoding: EncodingName;
    ttl: Ttl;
    weights: ReplayWeights;
    usd_per_input_token: number;
    /** the model whose prices give weights and usd_per_input_token (--model), in the table in force (--pricing) */
    model: string;
    /** the --pricing file that replaces or extends the bundled table; null without one */
    pricing_file: string | null;
    /** where `model`'s prices are from: the --pricing file, or the bundled table (no --pricing, or a file that does not price it) */
    model_prices_from: 'pricing_file' | 'bundled';
    /** its prompt size above which a turn is weighed at its long-context rates; null when it has none */
    long_context_above: number | null;
  };
  strategies: Partial<Record<ChannelStrategy, StrategySummary>>;
  turns: ChannelTurn[];
  /** tokenizer work: setup (framing, brief) and the whole replay */
  work: { setup: TokenizerWork; total: TokenizerWork };
}

interface Mention {
  index: number;
  message: ChannelMessage;
  at: number;
  thread: string | null;
  /** the 30 most recent rows of its thread up to and including it, oldest first */
  fetched: ChannelMessage[];
  payload: Segment;
  reply: Segment;
  /** when the agent's answer in the log was posted (its process is busy until then), else null */
  replyAt: number | null;
}

interface Prepared {
  channel: string;
  agent: string;
  author: string;
  bindingId: string;
  tok: SegmentTokenizer;
  /** the framing: system prompt and tool schemas */
  lead: SegmentList;
  brief: Segment;
  messages: readonly ChannelMessage[];
  mentions: Mention[];
  ttlMs: number;
  weights: ReplayWeights;
  /** a turn's weights by its prompt size (the model's long-context tier), or the fixed weights */
  weightsAt: (promptTokens: number) => ReplayWeights;
  usd: number;
  model: string;
  price: ModelPrice;
  /** the --pricing file in force; null without one */
  pricingFile: string | null;
  /** `price` is the --pricing file's, not the bundled one */
  priceFromFile: boolean;
  evictAt: Set<number>;
  failAt: Set<number>;
  idleMs: number | null;
  keepReaped: boolean;
}

const toSet = (x: number | readonly number[] | undefined): Set<number> => new Set(x === undefined ? [] : typeof x === 'number' ? [x] : x);

/** Every thread's rows in order, so a mention's 30-row fetch is a slice, not a scan. */
function threadRows(messages: readonly ChannelMessage[]): { rows: Map<string | null, number[]>; pos: Map<number, number> } {
  const rows = new Map<string | null, number[]>();
  const byId = new Map(messages.map((m, i) => [m.id, i]));
  const add = (t: string | null, i: number) => {
    let r = rows.get(t);
    if (!r) {
      r = [];
      const root = t === null ? undefined : byId.get(t);
      if (root !== undefined && root < i) r.push(root);
      rows.set(t, r);
    }
    r.push(i);
  };
  messages.forEach((m, i) => add(threadOf(m), i));
  // A thread's root also heads its thread's list; its own position is the one in the channel's.
  const pos = new Map<number, number>();
  for (const [t, r] of rows) r.forEach((i, p) => threadOf(messages[i]!) === t && pos.set(i, p));
  return { rows, pos };
}

/** Known bad options are UsageErrors (one line, exit 2), never a silently odd replay. */
/** The largest framing a replay builds: a million tokens, the largest context window offered. */
export const MAX_PREFIX_TOKENS = 1_000_000;

function validate(opts: ChannelReplayOptions): void {
  const mentions = (x: number | readonly number[] | undefined, flag: string) => {
    for (const k of toSet(x)) if (!Number.isInteger(k) || k < 1) throw new UsageError(`${flag} must be a mention number ≥ 1, got ${k}`);
  };
  mentions(opts.evictAt, '--evict-at');
  mentions(opts.failAt, '--fail-at');
  const prefix = opts.prefixTokens ?? DEFAULT_PREFIX_TOKENS;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > MAX_PREFIX_TOKENS) throw new UsageError(`--prefix-tokens must be a whole number from 0 to ${MAX_PREFIX_TOKENS}, got ${prefix}`);
  if (opts.ttl !== undefined && opts.ttl !== '5m' && opts.ttl !== '1h') throw new UsageError(`--ttl must be 5m or 1h, got ${String(opts.ttl)}`);
  if (opts.encoding !== undefined && !ENCODINGS.includes(opts.encoding)) {
    throw new UsageError(`--encoding must be ${ENCODINGS.join(' or ')}, got ${String(opts.encoding)}`);
  }
  for (const s of opts.strategies ?? []) {
    if (!CHANNEL_STRATEGIES.includes(s)) throw new UsageError(`unknown strategy ${String(s)}`, `use ${CHANNEL_STRATEGIES.join(', ')}`);
  }
  // '' or '@' made every lone "@" in a text a mention, and a message with an empty author the agent's
  if (opts.agent !== undefined && !/^@?[^\s@]+$/.test(opts.agent)) throw new UsageError(`--agent ${shownId(opts.agent)}: expected a handle such as @claude (no spaces, one @)`);
  if (opts.model !== undefined) flaggedModelPrice(opts.prices ?? loadPriceTable(), opts.model, '--model');
  const idle = opts.idleReapMinutes;
  if (idle !== undefined && idle !== null && !(idle > 0 && Number.isFinite(idle * 60_000))) throw new UsageError(`--idle-reap must be a positive, finite duration, got ${idle}`);
}

/** Per-token weights of a model's rates, as multiples of its standard input price. */
function weightsOf(rates: Omit<ModelPrice, 'long_context'>, base: number): ReplayWeights {
  return { input: rates.input / base, write5m: rates.write_5m / base, write1h: rates.write_1h / base, read: rates.read / base, output: rates.output / base };
}

async function prepare(opts: ChannelReplayOptions): Promise<{ p: Prepared; file: string | null; skipped: SkippedChannelLine[]; setup: TokenizerWork }> {
  validate(opts);
  let messages: readonly ChannelMessage[];
  let skipped: SkippedChannelLine[] = [];
  if (opts.messages) messages = opts.messages;
  else if (opts.file) ({ messages, skipped } = await readChannelLog(opts.file));
  else throw new TypeError('runChannelReplay needs a file or messages');
  const file = opts.file ?? null;
  const channel = opts.channel ?? (file ? basename(file, extname(file)) : 'channel');
  const agent = opts.agent ?? '@claude';
  const handle = agent.startsWith('@') ? agent : `@${agent}`;
  const author = agentAuthor(handle);
  const tok = await SegmentTokenizer.load(opts.encoding ?? 'cl100k_base');
  const framing = framingFor(tok, opts.prefixTokens ?? DEFAULT_PREFIX_TOKENS);
  const brief = tok.segment(briefText(channel, handle) + '\n');
  const setup = tok.stats;
  const ttl = opts.ttl ?? '5m';
  const model = opts.model ?? DEFAULT_CHANNEL_MODEL;
  const prices = opts.prices ?? loadPriceTable();
  const price = flaggedModelPrice(prices, model, '--model');
  const weights = { ...weightsOf(price, price.input), ...opts.weights };
  const lc = price.long_context;
  const longWeights = lc && !opts.weights ? weightsOf(lc, price.input) : null;
  const weightsAt = (promptTokens: number): ReplayWeights => (longWeights && promptTokens > lc!.above ? longWeights : weights);

  const { rows, pos } = threadRows(messages);
  const mentionIdx = messages.flatMap((m, i) => (isMention(m, handle) ? [i] : []));
  // an event at a mention the channel does not have would change nothing: say so, not run as asked
  for (const [flag, at] of [['--evict-at', opts.evictAt], ['--fail-at', opts.failAt]] as const) {
    for (const k of toSet(at)) {
      if (k > mentionIdx.length) throw new UsageError(`${flag} ${k}: the channel has ${mentionIdx.length} mention${mentionIdx.length === 1 ? '' : 's'} of ${handle}`);
    }
  }
  const replies = pairReplies(messages, mentionIdx, handle);
  const bindingId = opts.bindingId ?? `binding-${author}-${channel}`;
  const mentions = mentionIdx.map((index, k): Mention => {
    const message = messages[index]!;
    const thread = threadOf(message);
    const list = rows.get(thread)!;
    const p = pos.get(index)!;
    const fetched = list.slice(Math.max(0, p + 1 - FETCH_ROWS), p + 1).map((i) => messages[i]!);
    const payload = payloadText({ channel, mention: message, runId: `run-${k + 1}`, bindingId, agents: [handle], maxRecipients: 3 });
    const reply = replies[k]?.text ?? fallbackReply(message);
    const answer = replies[k];
    return {
      index,
      message,
      at: instantOf(message.created_at),
      thread,
      fetched,
      payload: tok.segment(payload + '\n'),
      reply: tok.segment(reply + '\n'),
      replyAt: answer ? instantOf(answer.created_at) : null,
    };
  });
  const p: Prepared = {
    channel,
    agent: handle,
    author,
    bindingId,
    tok,
    lead: new SegmentList(framing),
    brief,
    messages,
    mentions,
    ttlMs: ttl === '1h' ? 3_600_000 : 300_000,
    weights,
    weightsAt,
    usd: opts.usdPerInputToken ?? price.input / 1_000_000,
    model,
    price,
    pricingFile: prices.file,
    priceFromFile: prices.pricedByFile(model),
    evictAt: toSet(opts.evictAt),
    failAt: toSet(opts.failAt),
    idleMs: opts.idleReapMinutes ? opts.idleReapMinutes * 60_000 : null,
    keepReaped: opts.keepReapedSessions ?? false,
  };
  return { p, file, skipped, setup };
}

function onlineCount(rows: readonly ChannelMessage[]): number {
  return new Set(rows.map((m) => m.author)).size;
}

/** One strategy over every mention of the channel. */
function replayStrategy(p: Prepared, strategy: ChannelStrategy): { summary: StrategySummary; turns: ChannelTurn[] } {
  const pool = new ProcessPool({ maxAlive: 4, idleMs: p.idleMs, keepReapedSessions: p.keepReaped });
  const store = new WatermarkStore();
  // rows shown to any process of this binding, and the mentions (delivered in their payloads)
  const everShown = new Set<string>();
  const mentionIds = new Set(p.mentions.map((m) => m.message.id));
  const natives = new Set<string>();
  const turns: ChannelTurn[] = [];
  const processKey = `${p.channel}\u0000${p.bindingId}`;

  p.mentions.forEach((mn, k) => {
    const number = k + 1;
    if (p.evictAt.has(number)) pool.evict(processKey);
    const { delivery, process } = pool.acquire(processKey, mn.at);
    const session = process.session;
    natives.add(session.native);
    const key: WatermarkKey = { sessionKey: p.bindingId, channel: p.channel, thread: mn.thread };
    const usesWatermark = strategy !== 'window';
    const watermark = usesWatermark ? store.lookup(key, session.native) : undefined;
    const rendered = renderContext({ fetched: mn.fetched, mentionId: mn.message.id, watermark, agentAuthor: p.author });
    const staged: StagedRows | null = usesWatermark ? store.stage(key, session.native, rendered.rows) : null;

    const rowSegs = rendered.lines.map((l) => p.tok.segment(l + '\n'));
    const turn = new SegmentList([mn.payload, p.brief]);
    if (rendered.header) turn.push(p.tok.segment(rendered.header + '\n'), ...rowSegs);
    const lead =
      strategy === 'unstable'
        ? new SegmentList([p.tok.segment(statusLine(p.channel, onlineCount(mn.fetched), mn.message.created_at) + '\n'), ...p.lead.segments])
        : p.lead;
    const request = requestOf(lead, session.history, turn);
    const cacheable = session.lastRequest ? commonPrefixTokens(session.lastRequest, request) : 0;

    let context = 0;
    let seen = 0;
    let reshown = 0;
    rendered.rows.forEach((m, i) => {
      const n = rowSegs[i]!.tokens.length;
      context += n;
      if (session.shownIds.has(m.id)) seen += n;
      else if (everShown.has(m.id)) reshown += n;
    });

    const gap = session.lastAt === null ? null : mn.at - session.lastAt;
    const cache = gap === null ? 'none' : gap <= p.ttlMs ? 'read' : 'expired';
    const read = cache === 'read' ? cacheable : 0;
    const failed = p.failAt.has(number);
    const output = failed ? 0 : mn.reply.tokens.length;
    const w = p.weightsAt(request.tokens);
    const weight = read * w.read + (request.tokens - read) * (p.ttlMs === 3_600_000 ? w.write1h : w.write5m) + output * w.output;

    session.history.pushAll(turn.segments);
    if (failed) staged?.discard();
    else {
      session.history.push(mn.reply);
      staged?.commit();
    }
    for (const m of rendered.rows) {
      session.shownIds.add(m.id);
      everShown.add(m.id);
    }
    session.lastRequest = request;
    session.lastAt = mn.at;
    // idle (for --idle-reap) from when it answered: a process is busy until its reply is posted
    if (!failed && mn.replyAt !== null && mn.replyAt > process.lastActiveAt) process.lastActiveAt = mn.replyAt;

    turns.push({
      strategy,
      mention: number,
      message_id: mn.message.id,
      at: mn.message.created_at,
      delivery,
      native: session.native,
      cache,
      gap_s: gap === null ? null : Math.round(gap / 1000),
      input_tokens: request.tokens,
      cacheable_tokens: cacheable,
      uncached_tokens: request.tokens - cacheable,
      context_tokens: context,
      already_seen_tokens: seen,
      reshown_tokens: reshown,
      rows: rendered.rows.length,
      header: rendered.header === null ? null : watermark ? 'watermark' : 'first_contact',
      output_tokens: output,
      failed,
      weight,
      usd: weight * p.usd,
    });
  });

  return { summary: summarize(p, turns, neverShown(p, everShown, mentionIds), natives.size), turns };
}

/**
 * Rows never shown: messages of a stream (the channel's top level, or one thread) between that
 * stream's first and last mention, other than the mentions and the agent's own messages, that no
 * context block ever carried (bursts of more than 12 between mentions, or rows the watermark's
 * last_at skipped past). A mention reads only its own stream (SPEC §6.1: watermarks are keyed by
 * thread), so a reply in a thread the agent was never mentioned in, or after its last mention
 * there, is not a row any turn could have carried: it is not counted.
 *
 * Example: mentions at the top level at 09:03 and 09:20, and in thread R at 09:07 and 09:17 →
 * replies in an unmentioned thread U, and R's reply at 09:19, are not counted.
 */
function neverShown(p: Prepared, everShown: Set<string>, mentionIds: Set<string>): number {
  const span = new Map<string | null, { first: number; last: number }>();
  for (const mn of p.mentions) {
    const s = span.get(mn.thread);
    if (s) s.last = mn.index;
    else span.set(mn.thread, { first: mn.index, last: mn.index });
  }
  let n = 0;
  p.messages.forEach((m, i) => {
    const s = span.get(threadOf(m));
    if (s && i > s.first && i < s.last && !isAgentAuthor(m.author, p.author) && !mentionIds.has(m.id) && !everShown.has(m.id)) n++;
  });
  return n;
}

function summarize(p: Prepared, turns: ChannelTurn[], rowsNeverShown: number, processes: number): StrategySummary {
  const sum = (f: (t: ChannelTurn) => number, ts = turns) => ts.reduce((a, t) => a + f(t), 0);
  const warm = turns.filter((t) => t.delivery === 'warm');
  const input = sum((t) => t.input_tokens);
  const cacheable = sum((t) => t.cacheable_tokens);
  const context = sum((t) => t.context_tokens);
  const seen = sum((t) => t.already_seen_tokens);
  const weight = sum((t) => t.weight);
  return {
    turns: turns.length,
    warm_turns: warm.length,
    cold_turns: turns.filter((t) => t.delivery === 'cold').length,
    reloaded_turns: turns.filter((t) => t.delivery === 'reloaded').length,
    failed_turns: turns.filter((t) => t.failed).length,
    expired_turns: turns.filter((t) => t.cache === 'expired').length,
    processes,
    input_tokens: input,
    cacheable_tokens: cacheable,
    cacheable_ratio: input === 0 ? null : cacheable / input,
    uncached_per_warm_turn: warm.length === 0 ? null : sum((t) => t.uncached_tokens, warm) / warm.length,
    context_tokens: context,
    already_seen_tokens: seen,
    already_seen_share: context === 0 ? null : seen / context,
    reshown_tokens: sum((t) => t.reshown_tokens),
    rows_sent: sum((t) => t.rows),
    rows_never_shown: rowsNeverShown,
    output_tokens: sum((t) => t.output_tokens),
    weight,
    usd: weight * p.usd,
  };
}

/**
 * Replays a channel under each strategy and returns the per-strategy table and per-turn series.
 *
 * Example: the sample channel (200 messages, 30 mentions, 2,120-token framing) gives window and
 * watermark cacheable ratios of about 0.94, 0 already-seen tokens for watermark against roughly
 * half of window's context tokens, and an `unstable` ratio near 0.
 */
export async function runChannelReplay(options: ChannelReplayOptions): Promise<ChannelReplayResult> {
  const { p, file, skipped, setup } = await prepare(options);
  const strategies = [...(options.strategies ?? CHANNEL_STRATEGIES)];
  const out: ChannelReplayResult['strategies'] = {};
  const turns: ChannelTurn[] = [];
  for (const s of strategies) {
    const r = replayStrategy(p, s);
    out[s] = r.summary;
    pushAll(turns, r.turns);
  }
  return {
    channel: {
      file,
      channel_id: p.channel,
      agent: p.agent,
      messages: p.messages.length,
      mentions: p.mentions.length,
      replies_from_log: pairReplies(p.messages, p.mentions.map((m) => m.index), p.agent).filter(Boolean).length,
      first_at: p.messages[0]?.created_at ?? null,
      last_at: p.messages[p.messages.length - 1]?.created_at ?? null,
      skipped_lines: skipped,
    },
    settings: {
      strategies,
      evict_at: [...p.evictAt].sort((a, b) => a - b),
      fail_at: [...p.failAt].sort((a, b) => a - b),
      idle_reap_minutes: p.idleMs === null ? null : p.idleMs / 60_000,
      idle_reap_s: p.idleMs === null ? null : p.idleMs / 1000,
      prefix_tokens: p.lead.tokens,
      brief_tokens: p.brief.tokens.length,
      encoding: p.tok.encoding,
      ttl: p.ttlMs === 3_600_000 ? '1h' : '5m',
      weights: p.weights,
      usd_per_input_token: p.usd,
      model: p.model,
      long_context_above: p.price.long_context && !options.weights ? p.price.long_context.above : null,
      pricing_file: p.pricingFile,
      model_prices_from: p.priceFromFile ? 'pricing_file' : 'bundled',
    },
    strategies: out,
    turns,
    work: { setup, total: p.tok.stats },
  };
}
