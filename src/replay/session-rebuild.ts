/**
 * Rebuilds the requests of one real chain from its transcript (SPEC §6.2): every message and
 * attachment becomes tokenized segments (each text encoded once), every request keeps its
 * observed usage, timestamp, round and TTL, and the prefix the log does not show (system prompt,
 * tool schemas) is sized from the chain's first request only:
 *
 *   prefix = observed P₁ − tokens of the messages before request 1
 *
 * Everything after request 1 is predicted, which is what the `recorded` fidelity measures.
 */
import { UsageError } from '../errors.js';
import { shownId } from '../format/table.js';
import type { Usage } from '../types.js';
import { type Pause, pauses } from './pauses.js';
import { attachmentText, blockPieces, flatLine, type Piece, type ThinkingRule } from './session-render.js';
import type { TranscriptChain } from './session-transcript.js';
import type { Segment, SegmentTokenizer } from './tokenizer.js';

export type Ttl = '5m' | '1h';

/** A message or attachment of the chain, tokenized. */
export interface RebuiltMessage {
  kind: 'message';
  line: number;
  role: 'user' | 'assistant';
  /** opens a round (SPEC §1.6) */
  prompt: boolean;
  /** set for attachment lines */
  attachment: { type: string; hash: string } | null;
  segments: Segment[];
  tokens: number;
  /** the `User:`/`Assistant:` line for the cold-replay flattening (tokenized only when asked for) */
  flat: () => Segment[];
}

export interface RebuiltRequest {
  kind: 'request';
  /** 1-based position in the chain */
  index: number;
  key: string;
  line: number;
  t: number;
  model: string;
  usage: Usage;
  /** observed P = in + w + r */
  observedPrompt: number;
  /** round of the chain (1-based) and compaction segment (0-based) */
  round: number;
  segment: number;
  /** first request after a user prompt: a new turn */
  opensRound: boolean;
  /** TTL of the cache this request could read (SPEC §3: the latest write before it of its own model, the cache being per model; else the chain's latest write of any model; else 5m) */
  readTtl: Ttl;
  /** TTL its own writes are priced at: its own split when it wrote, else readTtl */
  writeTtl: Ttl;
}

export type RebuiltEvent = RebuiltMessage | RebuiltRequest | { kind: 'compaction'; line: number };

export interface RebuiltChain {
  chainId: string;
  sessionId: string;
  agentId: string | null;
  chainKind: TranscriptChain['kind'];
  events: RebuiltEvent[];
  requests: RebuiltRequest[];
  rounds: number;
  compactions: number;
  /** the framing the log does not show, as one segment of the calibrated size */
  prefix: Segment;
  calibration: {
    observed_prompt: number;
    message_tokens: number;
    prefix_tokens: number;
    /** the messages alone were larger than P₁: the prefix was set to 0 */
    clamped: boolean;
  };
}

let opaqueCount = 0;

/**
 * A segment of `n` tokens standing for content that is not in the log (the framing) or is not
 * text (an image). Its token values lie outside every vocabulary and differ per segment, so it
 * matches only itself, and sizing it costs no encoding work.
 */
export function opaqueSegment(n: number, label: string): Segment {
  const fill = 0xf0000000 + (opaqueCount++ % 0x0fffffff);
  return { id: -opaqueCount, text: `[${label}: ${n} tokens]`, tokens: new Uint32Array(n).fill(fill) };
}

/**
 * A message's line in cold-replay's flattening: `flatLine`'s text, one segment, where every
 * piece is text. An image (an opaque piece) stays its 1,600 tokens between the text around it:
 * flattened as `[image]` it cost ~3, so cold-replay dropped ~1,600 tokens per image from every
 * request, the first round's own prompt included.
 */
function flatSegments(role: 'user' | 'assistant', pieces: readonly Piece[], tok: SegmentTokenizer): Segment[] {
  if (pieces.every((p) => 'text' in p)) return [tok.segment(flatLine(role, pieces))];
  const out: Segment[] = [];
  let text = role === 'user' ? 'User: ' : 'Assistant: ';
  pieces.forEach((p, i) => {
    if (i > 0) text += '\n';
    if ('text' in p) {
      text += p.text;
      return;
    }
    if (text) out.push(tok.segment(text));
    out.push(opaqueSegment(p.opaque, p.label));
    text = '';
  });
  out.push(tok.segment(`${text}\n`));
  return out;
}

export interface RebuildOptions {
  thinking?: ThinkingRule;
  /** lets the event loop turn between items (default: pauses()) */
  pause?: Pause;
}

/**
 * Example: a chain whose first request has P₁ = 22,229 after a 300-token prompt and four
 * attachments of 1,900 tokens gets a 20,029-token prefix; request 2 is then predicted as
 * 20,029 + the tokens of every message up to it.
 */
export async function rebuildChain(chain: TranscriptChain, tok: SegmentTokenizer, opts: RebuildOptions = {}): Promise<RebuiltChain> {
  const thinking = opts.thinking ?? 'keep';
  const pause = opts.pause ?? pauses();
  const segOf = (p: Piece): Segment => ('text' in p ? tok.segment(p.text) : opaqueSegment(p.opaque, p.label));
  const events: RebuiltEvent[] = [];
  const requests: RebuiltRequest[] = [];
  let round = 0;
  let segment = 0;
  let newRound = false;
  /** per model (the replay keeps a prompt cache per model): the TTL of its latest write */
  const latestWrite = new Map<string, Ttl>();
  /** the TTL of the chain's latest write of any model */
  let chainWrite: Ttl | null = null;
  let messageTokens = 0;

  for (const it of chain.items) {
    await pause();
    if (it.kind === 'compaction') {
      segment++;
      // request 1's prompt starts at the summary after it (a resumed session compacted before its own
      // first request, its copies left out): what came before is no part of it, so not in the prefix's sizing
      if (requests.length === 0) messageTokens = 0;
      events.push({ kind: 'compaction', line: it.line });
      continue;
    }
    if (it.kind === 'request') {
      // a chain's first request before any prompt opens its first round, and a prompt after it the
      // second, as the store numbers them (file-parser.ts observe)
      if (round === 0) round = 1;
      const u = it.usage;
      // the cache this request can read is its model's, written at that model's latest TTL: after
      // Opus wrote at 1 h and Haiku at 5 m, Opus's next request reads within the hour. A model that
      // has not written yet takes the chain's latest write of any model (SPEC §3's rule: the TTL is
      // the session's setting, a Haiku request after Opus's 1-hour writes is sent with 1 h), else 5 m
      const readTtl = latestWrite.get(it.model) ?? chainWrite ?? '5m';
      const ownTtl: Ttl = u.cacheWrite1h > 0 ? '1h' : '5m';
      if (u.cacheWrite > 0) {
        latestWrite.set(it.model, ownTtl);
        chainWrite = ownTtl;
      }
      const r: RebuiltRequest = {
        kind: 'request',
        index: requests.length + 1,
        key: it.key,
        line: it.line,
        t: it.t,
        model: it.model,
        usage: u,
        observedPrompt: u.input + u.cacheWrite + u.cacheRead,
        round,
        segment,
        opensRound: newRound || requests.length === 0,
        readTtl,
        writeTtl: u.cacheWrite > 0 ? ownTtl : readTtl,
      };
      newRound = false;
      requests.push(r);
      events.push(r);
      continue;
    }
    const pieces =
      it.kind === 'attachment' ? [{ text: attachmentText(it.attachment) }] : it.blocks.flatMap((b) => blockPieces(b, thinking));
    const role = it.kind === 'message' ? it.role : 'user';
    const prompt = it.kind === 'message' && it.prompt;
    if (prompt) {
      round++;
      newRound = true;
    }
    const segments = pieces.map(segOf);
    const tokens = segments.reduce((a, s) => a + s.tokens.length, 0);
    if (requests.length === 0) messageTokens += tokens;
    let flat: Segment[] | undefined;
    events.push({
      kind: 'message',
      line: it.line,
      role,
      prompt,
      attachment: it.kind === 'attachment' ? { type: it.type, hash: it.hash } : null,
      segments,
      tokens,
      flat: () => (flat ??= flatSegments(role, pieces, tok)),
    });
  }

  const first = requests[0];
  if (!first && chain.copied > 0) {
    // a resumed session that sent nothing of its own: every request it repeats is another chain's
    const them = chain.copied === 1 ? 'its 1 request is a copy' : `its ${chain.copied} requests are copies`;
    throw new UsageError(
      `chain ${shownId(chain.chainId)} has no requests of its own to replay: ${them} of another chain's (a resumed session), where the store counts them`,
      'replay the session it resumes, or give this transcript\'s path alone to replay every request in it',
    );
  }
  if (!first) throw new UsageError(`chain ${shownId(chain.chainId)} has no requests to replay`);
  const prefixTokens = Math.max(0, first.observedPrompt - messageTokens);
  return {
    chainId: chain.chainId,
    sessionId: chain.sessionId,
    agentId: chain.agentId,
    chainKind: chain.kind,
    events,
    requests,
    rounds: Math.max(round, 1),
    compactions: segment,
    prefix: opaqueSegment(prefixTokens, 'system prompt and tool schemas'),
    calibration: { observed_prompt: first.observedPrompt, message_tokens: messageTokens, prefix_tokens: prefixTokens, clamped: first.observedPrompt < messageTokens },
  };
}
