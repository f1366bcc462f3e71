/**
 * Writes the lines of one chain (a main thread or one subagent) into its file and plans the
 * usage of each of its requests. One API response becomes one assistant line per content
 * block, each repeating message.id, requestId and the whole usage, with output_tokens rising
 * to the final value on the last line (SPEC §1.3).
 */
import type { CacheSim, PlannedTokens } from './cache-sim.js';
import type { FileSink } from './file-sink.js';
import { assistantMessage, envelope, usageBlock, type Block, type LineCtx } from './lines.js';
import type { Rng } from './prng.js';
import type { ChainKind } from './truth.js';

/** What a chain needs from its session: the shared clock, ids and line accounting. */
export interface SessionClock {
  readonly rng: Rng;
  now: number;
  countLine(sink: FileSink, type: string): void;
}

export interface ChainIdentity {
  chainId: string;
  agentId: string | null;
  kind: ChainKind;
  definition: 'resolved' | 'lost' | 'unknown' | null;
  agentType: string;
  requestedType: string | null;
  spawnName: string | null;
  metaFile: string | null;
}

export interface RequestPlan {
  messageId: string;
  requestId: string | null;
  model: string;
  t: number;
  tokens: PlannedTokens;
  round: number;
  lines: number;
  /** files holding agent_progress copies of this request */
  progressFiles: Set<string>;
  progressLines: number;
}

export interface WrittenLine {
  uuid: string;
  ts: string;
  message: Record<string, unknown>;
  requestId: string | null;
}

export interface Response {
  plan: RequestPlan;
  lines: WrittenLine[];
  toolUses: Extract<Block, { type: 'tool_use' }>[];
}

export interface RespondOptions {
  output: number;
  breakReadTo?: number;
  pinned?: boolean;
  afterCompaction?: boolean;
  input?: number;
  noRequestId?: boolean;
  stopReason?: 'tool_use' | 'end_turn';
}

const keys = new WeakMap<object, string>();

/** Identity of an attachment's content, computed once per object (the skill listing is ~18 KB). */
function attachmentKey(a: Record<string, unknown>): string {
  let k = keys.get(a);
  if (k === undefined) {
    k = JSON.stringify(a);
    keys.set(a, k);
  }
  return k;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class ChainWriter {
  lastUuid: string | null = null;
  round = 0;
  compactions = 0;
  pendingAdd = 0;
  readonly requests: RequestPlan[] = [];
  readonly attachments = new Map<string, number>();
  readonly roundFirstReads: number[] = [];
  reAttachments = 0;
  /** set by a compaction: the next request opens a new segment and is cold */
  compactPending = false;
  /** 2.1.20x tags the lines of a main-thread turn with the id of the prompt that opened it */
  promptId: string | null = null;
  private readonly seenAttachments = new Set<string>();
  private roundHasRequest = false;

  constructor(
    private readonly session: SessionClock,
    readonly id: ChainIdentity,
    readonly sink: FileSink,
    readonly ctx: LineCtx,
    readonly sim: CacheSim,
    public model: string,
  ) {}

  get rng(): Rng {
    return this.session.rng;
  }

  /**
   * A user line with string content. A prompt opens a new round (SPEC §1.6); the compaction
   * summary (`isCompactSummary`) is written by Claude Code, not the user, and does not.
   */
  userPrompt(text: string, tokens: number, extra: Record<string, unknown> = {}, tail: Record<string, unknown> = {}, opensRound = true): string {
    if (opensRound) {
      this.round++;
      this.roundHasRequest = false;
    }
    this.pendingAdd += tokens;
    return this.write('user', { ...extra, message: { role: 'user', content: text } }, tail);
  }

  /** One user line per tool_result, as Claude Code writes them. */
  toolResult(toolUseId: string, content: string | Record<string, unknown>[], toolUseResult: Record<string, unknown>, tokens: number, sourceUuid: string): string {
    this.pendingAdd += tokens;
    const block = { tool_use_id: toolUseId, type: 'tool_result', content };
    const head = this.promptId !== null ? { promptId: this.promptId } : {};
    return this.write('user', { ...head, message: { role: 'user', content: [block] } }, { toolUseResult, sourceToolAssistantUUID: sourceUuid });
  }

  attach(attachment: Record<string, unknown>, tokens: number): string {
    this.pendingAdd += tokens;
    const type = String(attachment['type']);
    this.attachments.set(type, (this.attachments.get(type) ?? 0) + 1);
    const key = attachmentKey(attachment);
    if (this.seenAttachments.has(key)) this.reAttachments++;
    else this.seenAttachments.add(key);
    return this.write('attachment', { attachment }, {}, `attachment:${type}`);
  }

  system(subtype: string, body: Record<string, unknown>, tail: Record<string, unknown> = {}, parentUuid?: string | null): string {
    return this.write('system', { subtype, ...body }, tail, `system:${subtype}`, parentUuid);
  }

  progress(data: Record<string, unknown>, toolUseID: string, parentToolUseID: string, ts?: string): string {
    return this.write('progress', { data }, { toolUseID, parentToolUseID }, `progress:${String(data['type'])}`, undefined, ts);
  }

  /**
   * One API response: plans its usage at the current time, then writes one line per block.
   * The clock advances while the blocks stream.
   */
  respond(blocks: Block[], opts: RespondOptions): Response {
    const rng = this.rng;
    const t = this.session.now;
    const tokens = this.sim.next({
      t,
      added: this.pendingAdd,
      output: opts.output,
      ...(opts.breakReadTo !== undefined ? { breakReadTo: opts.breakReadTo } : {}),
      ...(opts.pinned ? { pinned: true } : {}),
      ...(opts.afterCompaction || this.compactPending ? { afterCompaction: true } : {}),
      ...(opts.input !== undefined ? { input: opts.input } : {}),
    });
    this.pendingAdd = 0;
    this.compactPending = false;
    if (!this.roundHasRequest) {
      this.roundFirstReads.push(tokens.cacheRead);
      this.roundHasRequest = true;
    }
    const plan: RequestPlan = {
      messageId: rng.messageId(),
      requestId: opts.noRequestId ? null : rng.requestId(),
      model: this.model,
      t,
      tokens,
      round: this.round,
      lines: blocks.length,
      progressFiles: new Set(),
      progressLines: 0,
    };
    this.requests.push(plan);
    const stop = opts.stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
    const lines: WrittenLine[] = [];
    blocks.forEach((block, k) => {
      if (k > 0) this.session.now += rng.int(200, 1500);
      // output_tokens is a streaming snapshot: it rises line by line to the final count
      const output = k === blocks.length - 1 ? tokens.output : Math.max(1, Math.floor((tokens.output * (k + 1)) / (blocks.length + 1)));
      const usage = usageBlock(this.ctx.style, { ...tokens, output });
      const message = assistantMessage(this.ctx.style, this.model, plan.messageId, block, stop, usage);
      const ts = iso(this.session.now);
      const body = { message, ...(plan.requestId !== null ? { requestId: plan.requestId } : {}) };
      const uuid = this.write('assistant', body, {}, 'assistant', undefined, ts);
      lines.push({ uuid, ts, message, requestId: plan.requestId });
    });
    const toolUses = blocks.filter((b): b is Extract<Block, { type: 'tool_use' }> => b.type === 'tool_use');
    return { plan, lines, toolUses };
  }

  /** A `<synthetic>` assistant line: a local error message, not a request. */
  synthetic(text: string, apiError: boolean): string {
    const message = {
      id: this.rng.uuid(),
      container: null,
      model: '<synthetic>',
      role: 'assistant',
      stop_reason: 'stop_sequence',
      stop_sequence: '',
      type: 'message',
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
        service_tier: null,
        cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
      },
      content: [{ type: 'text', text }],
      context_management: null,
    };
    return this.write('assistant', { message }, apiError ? { isApiErrorMessage: true } : {}, 'assistant:<synthetic>');
  }

  /** Writes one enveloped line; returns its uuid. */
  write(
    type: string,
    body: Record<string, unknown>,
    tail: Record<string, unknown> = {},
    countAs = type,
    parentUuid?: string | null,
    ts?: string,
  ): string {
    const uuid = this.rng.uuid();
    // lines written back to back are still a few milliseconds apart, as in real logs
    if (ts === undefined) this.session.now += this.rng.int(1, 40);
    const parent = parentUuid === undefined ? this.lastUuid : parentUuid;
    this.sink.line(envelope(this.ctx, parent, uuid, ts ?? iso(this.session.now), type, body, tail));
    this.session.countLine(this.sink, countAs);
    this.lastUuid = uuid;
    return uuid;
  }
}
