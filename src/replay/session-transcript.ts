/**
 * Reads one Claude Code transcript back into what the session replay needs (SPEC §6.2): per chain,
 * in file order, the messages (user, assistant, attachment lines with their full content), the
 * requests (one per `(message.id, requestId)`, usage the field-wise maximum over its copies, at
 * the position of its first line) and the compaction boundaries.
 *
 * The ingest reader projects only the fields the store keeps; the replay needs every content
 * block, so it re-reads the chain's file here. Lines are assigned to chains by the same rules as
 * the ingest parser (file-parser.ts `chainFor`), so chain ids agree with the store's.
 */
import { constants as bufferConstants } from 'node:buffer';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { agentSessionDir } from '../ingest/discover.js';
import { canonicalJson, sidechainChainOf, userLineKind } from '../ingest/file-parser.js';
import { LINE_SCHEMA, fieldProblem, longText, obj, requestIdOf, str, timeOf, typeProblem } from '../ingest/line.js';
import { SHORT_STRING } from '../ingest/project.js';
import { UTF16_SAID, utf16Text } from '../ingest/read-file.js';
import { StreamProjector } from '../ingest/stream-project.js';
import { identityProblem, mergeWrite, readUsage, usageOffAssistant } from '../ingest/usage.js';
import type { Usage } from '../types.js';

/** One content block of a message as logged (text, tool_use, tool_result, thinking, image, …). */
export type Block = Record<string, unknown>;

export type TranscriptItem =
  | {
      kind: 'message';
      line: number;
      role: 'user' | 'assistant';
      /**
       * a user line that opens a round (SPEC §1.6): not only tool results, not meta, not a compact
       * summary, not a local command's output; a slash command's echo once a request follows it
       * (file-parser.ts userLineKind)
       */
      prompt: boolean;
      blocks: Block[];
      /** the request this assistant line is part of */
      key: string | null;
    }
  | { kind: 'attachment'; line: number; t: number; type: string; hash: string; attachment: Record<string, unknown> }
  | { kind: 'request'; line: number; key: string; t: number; model: string; usage: Usage }
  | { kind: 'compaction'; line: number; t: number };

export type RequestItem = Extract<TranscriptItem, { kind: 'request' }>;
type MessageItem = Extract<TranscriptItem, { kind: 'message' }>;

export interface TranscriptChain {
  chainId: string;
  sessionId: string;
  agentId: string | null;
  kind: 'main' | 'subagent' | 'sidechain';
  items: TranscriptItem[];
  requests: number;
  /** requests left out as copies the store attributes to another chain (readSessionTranscript's `elsewhere`) */
  copied: number;
}

export interface SessionTranscript {
  path: string;
  chains: TranscriptChain[];
  lines: number;
  /**
   * lines skipped, in line order, with ingest's reasons: not JSON objects (invalid_json; a
   * half-written last line incomplete_last_line), too deep to replay (nested_too_deep, the replay's
   * own), or a request line ingest skips too (invalid_usage, with ingest's detail)
   */
  skipped: SkippedTranscriptLine[];
}

export interface SkippedTranscriptLine {
  line: number;
  reason: string;
  detail?: string;
}

/** `agent-<id>.jsonl` → id; a main transcript `<session>.jsonl` → its session id (as discover.ts). */
export function fileIdentity(path: string): { fileAgentId: string | null; fileSessionId: string | null } {
  const name = basename(path);
  const agent = /^agent-(.+?)\.jsonl$/.exec(name);
  if (agent) return { fileAgentId: agent[1]!, fileSessionId: agentSessionDir(path) };
  return { fileAgentId: null, fileSessionId: name.replace(/\.jsonl$/, '') };
}

/** Folds transcript lines, in file order, into chains. */
export class TranscriptCollector {
  private readonly chains = new Map<string, TranscriptChain>();
  private readonly requests = new Map<string, RequestItem>();
  /** assistant blocks already taken, per request: a resumed session repeats whole lines */
  private readonly blocksSeen = new Set<string>();
  private readonly sidechainOf = new Map<string, string>();
  /** the lines skipped here (a request ingest would skip), in line order */
  readonly skipped: SkippedTranscriptLine[] = [];
  /** keys of `elsewhere` met, so each copied request is counted once */
  private readonly copies = new Set<string>();
  /** per chain, a slash command's echo after its latest prompt and request: the next request makes it a prompt */
  private readonly commands = new Map<TranscriptChain, MessageItem>();

  constructor(
    private readonly id: { fileAgentId: string | null; fileSessionId: string | null },
    private readonly only: string | null = null,
    private readonly elsewhere: ReadonlySet<string> = new Set(),
  ) {}

  add(lineNo: number, l: Record<string, unknown>): void {
    // the line's own ids, as ingest reads them (file-parser.ts longLineTexts): one longer than SHORT_STRING
    // characters by its opening, length and hash, so its chain and request keys are the store's, and the
    // replay never prints (nor writes to --json) a megabyte-long id whole
    for (const name of LONG_CHECKED) {
      const x = l[name];
      if (typeof x === 'string' && x.length > SHORT_STRING) l[name] = this.longField(lineNo, name, x);
    }
    const type = str(l.type);
    const sessionId = str(l.sessionId) ?? this.id.fileSessionId ?? 'unknown-session';
    // as the ingest parser does: every inline sidechain line passes its chain on, whatever its type
    const badType = typeProblem(l);
    if (badType) {
      if (!this.id.fileAgentId && l.isSidechain === true && !str(l.agentId)) this.sidechainChain(l, sessionId);
      this.skip(lineNo, 'invalid_type', badType);
      return;
    }
    const field = fieldProblem(l);
    if (field) this.skip(lineNo, 'invalid_field', field);
    if (!this.id.fileAgentId && l.isSidechain === true && !str(l.agentId)) this.sidechainChain(l, sessionId);
    const offAssistant = type === 'assistant' ? null : usageOffAssistant(l.type, l.message);
    if (offAssistant) this.skip(lineNo, 'invalid_usage', offAssistant);
    if (type !== 'user' && type !== 'assistant' && type !== 'attachment' && !(type === 'system' && l.subtype === 'compact_boundary')) return;
    const t = timeOf(l.timestamp);
    const msg = obj(l.message);
    if (type === 'assistant' && (!msg || str(msg.model) === '<synthetic>')) return;
    const chain = this.chainFor(l, sessionId);
    if (!chain) return;
    if (type === 'system') {
      chain.items.push({ kind: 'compaction', line: lineNo, t });
      return;
    }
    if (type === 'attachment') {
      const a = obj(l.attachment);
      if (!a) return;
      const text = canonicalJson(a);
      // a too long type as the store holds and shows it (line.ts longText): --json and the heading wrote 5,000 characters whole
      let kind = str(a.type) ?? 'unknown';
      if (kind.length > SHORT_STRING) kind = this.longField(lineNo, 'attachment.type', kind);
      chain.items.push({ kind: 'attachment', line: lineNo, t, type: kind, hash: createHash('sha256').update(text).digest('hex'), attachment: a });
      return;
    }
    const content = msg?.content;
    const blocks: Block[] = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content.filter((b): b is Block => obj(b) !== null) : [];
    if (type === 'user') {
      const kind = userLineKind(l);
      const message: MessageItem = { kind: 'message', line: lineNo, role: 'user', prompt: kind === 'prompt', blocks, key: null };
      chain.items.push(message);
      if (kind === 'command') this.commands.set(chain, message);
      else if (kind === 'prompt') this.commands.delete(chain);
      return;
    }
    const key = this.request(lineNo, chain, msg!, requestIdOf(l.requestId), t);
    const fresh = key === null ? blocks : blocks.filter((b) => this.firstTime(`${key}\u0000${canonicalJson(b)}`));
    if (fresh.length) chain.items.push({ kind: 'message', line: lineNo, role: 'assistant', prompt: false, blocks: fresh, key });
  }

  private sidechainChain(l: Record<string, unknown>, sessionId: string): string {
    return sidechainChainOf(this.sidechainOf, str(l.uuid), str(l.parentUuid), sessionId);
  }

  finish(): TranscriptChain[] {
    return [...this.chains.values()];
  }

  /**
   * One skip per line and reason, as ingest keeps them (a line may hold a flag of the wrong type and
   * bad usage); a line too deep to replay whole is already skipped (nested_too_deep) when its request is read.
   */
  private skip(line: number, reason: string, detail: string): void {
    for (let i = this.skipped.length - 1; i >= 0 && this.skipped[i]!.line === line; i--) {
      if (this.skipped[i]!.reason === reason || this.skipped[i]!.reason === 'nested_too_deep') return;
    }
    this.skipped.push({ line, reason, detail });
  }

  /**
   * A text field longer than SHORT_STRING characters as ingest stores and shows it (line.ts longText), noted
   * as ingest notes it (an invalid_field, the line still read). The caller compares the length first.
   */
  private longField(line: number, name: string, x: string): string {
    const kept = longText(x);
    this.skip(line, 'invalid_field', `${name} of ${x.length.toLocaleString('en-US')} characters: read as ${kept}`);
    return kept;
  }

  private firstTime(k: string): boolean {
    if (this.blocksSeen.has(k)) return false;
    this.blocksSeen.add(k);
    return true;
  }

  /** The request an assistant line belongs to; the first copy places it, later copies raise its usage. */
  private request(lineNo: number, chain: TranscriptChain, msg: Record<string, unknown>, requestId: string | null, t: number): string | null {
    let messageId = str(msg.id);
    // a too long message id or model as ingest reads them (file-parser.ts observe): the key is the store's,
    // and the model is printed, and written to --json, as its opening, length and hash, not whole
    if (messageId !== null && messageId.length > SHORT_STRING) messageId = this.longField(lineNo, 'message.id', messageId);
    if (msg.usage === undefined) return messageId;
    let model = str(msg.model);
    if (model !== null && model.length > SHORT_STRING) model = this.longField(lineNo, 'message.model', model);
    // as ingest skips it (file-parser.ts observe), counted: no id (or one with a NUL), no valid time,
    // usage that does not read; the line's blocks stay messages
    const bad = identityProblem(messageId, t);
    const usage = bad ?? readUsage(msg.usage);
    if (typeof usage === 'string') {
      this.skip(lineNo, 'invalid_usage', usage);
      return messageId;
    }
    const key = requestId ? `${messageId!}\u0000${requestId}` : messageId!;
    // a copy of another chain's request (a resumed session repeats the earlier one's lines): its
    // blocks stay messages of this chain, the request is not one of its own
    if (this.elsewhere.has(key)) {
      if (!this.copies.has(key)) {
        this.copies.add(key);
        chain.copied++;
        this.asked(chain);
      }
      return key;
    }
    const prev = this.requests.get(key);
    if (prev) {
      const u = prev.usage;
      u.input = Math.max(u.input, usage.input);
      u.output = Math.max(u.output, usage.output);
      mergeWrite(u, usage);
      u.cacheRead = Math.max(u.cacheRead, usage.cacheRead);
      return key;
    }
    const item: RequestItem = {
      kind: 'request', line: lineNo, key, t, model: model ?? 'unknown',
      usage: { input: usage.input, output: usage.output, cacheWrite: usage.cacheWrite, cacheWrite5m: usage.cacheWrite5m, cacheWrite1h: usage.cacheWrite1h, cacheRead: usage.cacheRead, webSearch: usage.webSearch, webFetch: usage.webFetch },
    };
    this.requests.set(key, item);
    chain.items.push(item);
    chain.requests++;
    this.asked(chain);
    return key;
  }

  /** A request of `chain` begins: a slash command echoed since its latest prompt and request asked for it, and opens its round (as ingest counts it). */
  private asked(chain: TranscriptChain): void {
    const command = this.commands.get(chain);
    if (!command) return;
    command.prompt = true;
    this.commands.delete(chain);
  }

  /**
   * Which chain a line belongs to — the ingest parser's rule: the file's agent id or the line's,
   * else an inline v1.x sidechain (one chain per sidechain root, followed through parentUuid),
   * else the session's main chain.
   */
  private chainFor(l: Record<string, unknown>, sessionId: string): TranscriptChain | null {
    const agentId = this.id.fileAgentId ?? str(l.agentId);
    let chainId = agentId ? `${sessionId}:${agentId}` : sessionId;
    let kind: TranscriptChain['kind'] = agentId ? 'subagent' : 'main';
    if (!agentId && l.isSidechain === true) {
      chainId = this.sidechainChain(l, sessionId);
      kind = 'sidechain';
    }
    if (this.only !== null && chainId !== this.only) return null;
    let c = this.chains.get(chainId);
    if (!c) {
      c = { chainId, sessionId, agentId: kind === 'sidechain' ? null : agentId, kind, items: [], requests: 0, copied: 0 };
      this.chains.set(chainId, c);
    }
    return c;
  }
}

/** The line's own text fields ingest reads as their opening, length and hash when too long (file-parser.ts longLineTexts), those the replay reads. */
const LONG_CHECKED = ['sessionId', 'agentId', 'uuid', 'parentUuid', 'requestId'] as const;

/** Nesting no real transcript line comes near; canonicalJson and JSON.stringify go past 1,000. */
const MAX_DEPTH = 500;

/** Whether a parsed value nests arrays and objects more than `limit` levels deep (no recursion). */
export function nestedDeeperThan(x: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[x, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > limit) return true;
    for (const c of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)) if (c !== null && typeof c === 'object') stack.push([c, d + 1]);
  }
  return false;
}

/**
 * `v` at most `limit` levels deep: an object deeper than that keeps its fields, each pruned the same
 * way one level down; a list deeper still becomes the text `(nested too deep)`, which a field the
 * replay ignores stays ignored as, and a field it reads refuses as ingest refuses a list there (a
 * usage count: invalid_usage). Example: a usage `{"input_tokens": 1, "x": [[[…5,000 levels…]]]}`
 * keeps `input_tokens` and its `x` is that text.
 */
function pruned(v: unknown, limit: number): unknown {
  if (v === null || typeof v !== 'object' || !nestedDeeperThan(v, limit)) return v;
  if (limit <= 1 || Array.isArray(v)) return '(nested too deep)';
  const out: Record<string, unknown> = {};
  for (const [k, c] of Object.entries(v as Record<string, unknown>)) out[k] = pruned(c, limit - 1);
  return out;
}

/**
 * Reads a transcript file line by line (split at "\n" only, as ingest splits it, so line numbers
 * agree). `chainId` keeps only that chain's items (memory stays at one chain). A line that is not
 * a JSON object is skipped with its line number and ingest's reason.
 *
 * A line longer than REPLAY_STREAM_ABOVE bytes (~512 MiB: a pasted log, a giant tool result)
 * cannot be one string: V8 ends strings at 2^29 − 24 characters, and readline ended the replay
 * with an uncaught "RangeError: Invalid string length". It is projected while streamed, as
 * ingest reads it (stream-project.ts): its ids, usage and block types are kept, its text is not
 * replayed. Shorter lines, however long, are parsed whole and replayed with their text.
 */
/**
 * Lines longer than this many bytes are streamed, not parsed whole: the longest string V8 makes
 * (a line of n bytes decodes to at most n characters). Ingest streams from 64 MiB (STREAM_ABOVE),
 * since it needs no text; the replay needs the text, so it streams only what cannot be a string.
 */
export const REPLAY_STREAM_ABOVE = bufferConstants.MAX_STRING_LENGTH;

/**
 * `streamAbove`: REPLAY_STREAM_ABOVE unless a test streams shorter lines. `elsewhere`: request keys
 * the store attributes to other chains (session-locate.ts): left out of the requests, counted in
 * each chain's `copied`.
 */
export async function readSessionTranscript(path: string, opts: { chainId?: string; streamAbove?: number; elsewhere?: ReadonlySet<string> } = {}): Promise<SessionTranscript> {
  const streamAbove = opts.streamAbove ?? REPLAY_STREAM_ABOVE;
  const collector = new TranscriptCollector(fileIdentity(path), opts.chainId ?? null, opts.elsewhere);
  // one list, in line order: the reader's skips and the collector's
  const skipped = collector.skipped;
  let lineNo = 0;
  let parts: Buffer[] = [];
  let held = 0;
  let stream: StreamProjector | null = null;
  // the opening bytes of the line being streamed, looked at for UTF-16 text only should it fail (as ingest)
  let streamHead: Buffer | null = null;
  let failed: string | null = null;
  // the last line that failed and looks like UTF-16 text (read-file.ts utf16Text)
  let utf16Line = -1;

  const feed = (b: Buffer) => {
    if (!b.length) return;
    if (stream) {
      if (failed === null) {
        try {
          stream.write(b);
        } catch (err) {
          failed = (err as Error).message;
        }
      }
      return;
    }
    parts.push(b);
    held += b.length;
    if (held > streamAbove) {
      stream = new StreamProjector(LINE_SCHEMA);
      const all = parts;
      parts = [];
      held = 0;
      // a byte-order mark before the first line is no part of its JSON, streamed or not (as ingest reads it)
      if (lineNo === 0 && all[0]![0] === 0xef && all[0]![1] === 0xbb && all[0]![2] === 0xbf) all[0] = all[0]!.subarray(3);
      // a copy of its first bytes only: the parts held are ~512 MiB
      const head: Buffer[] = [];
      for (let n = 0, i = 0; n < 4096 && i < all.length; n += all[i]!.length, i++) head.push(all[i]!);
      streamHead = Buffer.from(Buffer.concat(head).subarray(0, 4096));
      for (const p of all) feed(p);
    }
  };

  // reasons as ingest names them (read-file.ts): a line that is not JSON or not an object is
  // invalid_json; a last line without a newline that is not one is incomplete_last_line
  const endLine = (last = false) => {
    lineNo++;
    const unread = last ? 'incomplete_last_line' : 'invalid_json';
    if (stream) {
      const sp = stream;
      stream = null;
      let l: Record<string, unknown> | null = null;
      if (failed === null) {
        try {
          l = sp.end();
        } catch {
          // not JSON, or not an object: either way not a line to replay
        }
      }
      failed = null;
      const head = streamHead;
      streamHead = null;
      if (!l) {
        const utf16 = head !== null && utf16Text(head, 0, head.length);
        if (utf16) utf16Line = lineNo;
        skipped.push({ line: lineNo, reason: unread, ...(utf16 ? { detail: UTF16_SAID } : {}) });
      } else collector.add(lineNo, l);
      return;
    }
    const bytes = held === 0 ? null : parts.length === 1 ? parts[0]! : Buffer.concat(parts, held);
    const text = bytes ? bytes.toString('utf8') : '';
    parts = [];
    held = 0;
    if (!text.trim()) return;
    let l: unknown;
    try {
      l = JSON.parse(lineNo === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch {
      // a lone NUL at the end after UTF-16 text is the rest of its last newline (0A 00), as ingest reads it
      if (last && bytes!.length === 1 && bytes![0] === 0 && utf16Line === lineNo - 1) {
        lineNo--;
        return;
      }
      const utf16 = utf16Text(bytes!, 0, bytes!.length);
      if (utf16) utf16Line = lineNo;
      skipped.push({ line: lineNo, reason: unread, ...(utf16 ? { detail: UTF16_SAID } : {}) });
      return;
    }
    const o = obj(l);
    if (!o) {
      skipped.push({ line: lineNo, reason: unread });
      return;
    }
    // JSON.parse reads any depth, but the canonical text of a block or attachment (and the
    // tokenizer's text of it) recurses, and overflowed the stack on a line ~2,000 levels deep:
    // the whole replay ended in an internal error. Such a line's content is skipped (counted),
    // but a request on it still counts, as ingest counts it: its ids, usage and kind are kept,
    // with no content blocks, as a streamed line's.
    if (nestedDeeperThan(o, MAX_DEPTH)) {
      // a user line's toolUseResult is Claude Code's own copy of a tool's output (a parsed JSON
      // file can be any depth); of it the replay reads only what ingest does, agentId and status.
      // A line too deep only there is replayed whole: its tool result's text was dropped with it.
      const copy = obj(o.toolUseResult);
      if (copy) {
        const scalar = (v: unknown) => (v !== null && typeof v === 'object' ? undefined : v);
        const read = { ...o, toolUseResult: { agentId: scalar(copy.agentId), status: scalar(copy.status) } };
        if (!nestedDeeperThan(read, MAX_DEPTH)) {
          collector.add(lineNo, read);
          return;
        }
      }
      skipped.push({ line: lineNo, reason: 'nested_too_deep' });
      const msg = obj(o.message);
      if (msg && o.type === 'assistant') {
        // the depth may be anywhere: in the content, or in a field the replay never reads (an
        // unknown top-level, message or usage field); such a field goes with the content, so the
        // request stays (it was lost, `no such chain in this transcript`, while ingest counted it)
        collector.add(lineNo, pruned({ ...o, message: { ...msg, content: [] }, toolUseResult: undefined }, MAX_DEPTH) as Record<string, unknown>);
      }
      return;
    }
    collector.add(lineNo, o);
  };

  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      feed(chunk.subarray(start, nl));
      endLine();
      start = nl + 1;
    }
    if (start < chunk.length) feed(chunk.subarray(start));
  }
  if (held > 0 || stream) endLine(true);
  return { path, chains: collector.finish(), lines: lineNo, skipped };
}
