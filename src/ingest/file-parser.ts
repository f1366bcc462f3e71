/**
 * Turns the projected lines of one transcript file, in order, into the facts the store keeps:
 * request observations (one per response per file and source, pre-merged), chains with their
 * rounds and compactions, spawns and agent links (to resolve agent types across files),
 * attachments, line counts and skipped lines. Both reading paths (buffer projection and
 * stream-json) feed this same class, so they cannot disagree on what a line means.
 */
import { createHash } from 'node:crypto';
import type { AttachmentRecord, ChainKind, Observation, SkipReason, SkippedLine } from '../types.js';
import { SourceRank } from '../types.js';
import { type Line, TEXT_KEPT, fieldProblem, longText, longTypeName, obj, requestIdOf, requestIdProblem, str, timeOf, typeProblem } from './line.js';
import { LONG_STRING, OTHER_ARRAY, OTHER_OBJECT, SHORT_STRING } from './project.js';
import { identityProblem, mergeWrite, readUsage, usageOffAssistant } from './usage.js';
import { pushAll } from '../arrays.js';

export interface FileIdentity {
  fileId: number;
  /** agent id from an `agent-<id>.jsonl` file name; null for a main transcript */
  fileAgentId: string | null;
  /** session id from a `<uuid>.jsonl` file name (used when lines carry none) */
  fileSessionId: string | null;
}

export interface ChainFacts {
  chainId: string;
  sessionId: string;
  agentId: string | null;
  kind: ChainKind;
  rounds: number;
  compactions: number;
  requests: number;
  firstT: number;
  /**
   * key of the chain's latest request read from this file (not a progress copy): a later line of
   * that response read by an appended read is the same request, not one after the attachments
   * written between (FileParser.observe). Kept in chain_facts, not in parser_state, which the
   * delta base reads whole (delta.ts).
   */
  lastKey: string | null;
}

export interface Spawn {
  sessionId: string;
  toolUseId: string;
  requestedType: string | null;
  spawnName: string | null;
  promptHash: string | null;
}

export interface AgentLink {
  sessionId: string;
  toolUseId: string;
  agentId: string;
}

export interface SidechainRoot {
  chainId: string;
  promptHash: string | null;
}

/**
 * A line of a chain the store keeps for its `uuid`: a compaction (`compact_boundary`), or the line
 * that opens a round (`round`: a prompt, `detail` 'prompt', or the request that opens the chain's
 * first round or a slash command's, 'request'; kept only when the line has a uuid, as only then
 * can it be a copy). A resumed session's transcript repeats such lines, and the store counts
 * each once (schema.ts deriveLineCopies).
 */
export interface ChainEvent {
  chainId: string;
  line: number;
  t: number;
  kind: 'compaction' | 'round';
  detail: string;
  /** the line's `uuid` (null when it has none): a resumed session's transcript repeats it with the line */
  uuid: string | null;
}

export interface FileFacts {
  fileId: number;
  sessionId: string | null;
  cwd: string | null;
  lines: number;
  observations: Observation[];
  chains: ChainFacts[];
  spawns: Spawn[];
  links: AgentLink[];
  sidechainRoots: SidechainRoot[];
  attachments: AttachmentRecord[];
  events: ChainEvent[];
  /** `type\u0000subtype` → count */
  lineCounts: Map<string, number>;
  skipped: SkippedLine[];
  synthetic: number;
  state: ParserState;
}

export interface ParserState {
  /**
   * Not kept in `files.parser_state` (storedParserState): they are the file's `chain_facts` rows,
   * written from here in this order, and Store.fileRows gives them back.
   */
  chains: ChainFacts[];
  sidechainOf: [string, string][];
  /**
   * Attachments still waiting for their round when the read stopped. They were stored with a
   * provisional round (the chain's last, 0 while it has none); an appended read deletes and
   * re-emits them, so they end in the round of the next user prompt or request after them, as a
   * full read would put them.
   */
  pending?: AttachmentRecord[];
  /**
   * Chains whose latest prompt-like line was a slash command's echo (userLineKind): their next
   * request opens the command's round, as it would have on a full read.
   */
  commands?: string[];
  /**
   * Spawns (their tool_use ids) whose tool_result has not come yet, so that an appended read still
   * links the agent a later result names in its text (FileParser.needsWholeContent). Absent: none.
   */
  openSpawns?: string[];
  /** first `cwd` and `sessionId` seen, so an appended read keeps the file's project and session */
  cwd?: string | null;
  sessionId?: string | null;
}

/**
 * A parser state as `files.parser_state` keeps it: without its chains, which `chain_facts` holds
 * (they were ~60% of the column: ~400 of the ~660 bytes of a `files` row on the sample corpus).
 * Example: {chains: [c], sidechainOf: [], pending: [], cwd: "/p", sessionId: "s"} →
 * '{"sidechainOf":[],"pending":[],"cwd":"/p","sessionId":"s"}'.
 */
export function storedParserState(state: ParserState): string {
  const { chains: _chains, ...kept } = state;
  return JSON.stringify(kept);
}

interface ChainState extends ChainFacts {
  pending: AttachmentRecord[];
  /** a slash command was echoed after the chain's latest prompt and request: its next request opens a round */
  command: boolean;
}

const SPAWN_TOOLS = new Set(['Task', 'Agent']);

/** How Claude Code's result of a spawn names its agent: a text line `agentId: a9 (for resuming …)`. */
const AGENT_NAMED = /^agentId: ([^\s()]+)/m;

/**
 * The agent the tool_result `toolUseId` of `content` (a line's whole message.content) names in
 * its text, a string or text blocks; null when none does.
 * Example: [{type: 'tool_result', tool_use_id: 'tu9', content: [{type: 'text', text: 'done'},
 * {type: 'text', text: 'agentId: a9 (for resuming to continue this agent's work if needed)'}]}] → 'a9'.
 */
function agentNamedIn(content: unknown, toolUseId: string): string | null {
  if (!Array.isArray(content)) return null;
  for (const block of content) {
    const b = obj(block);
    if (!b || b.type !== 'tool_result' || b.tool_use_id !== toolUseId) continue;
    const texts = typeof b.content === 'string' ? [b.content] : Array.isArray(b.content) ? b.content.map((x) => obj(x)?.text) : [];
    for (const text of texts) {
      const m = typeof text === 'string' ? AGENT_NAMED.exec(text) : null;
      if (m) return m[1]!;
    }
  }
  return null;
}

/**
 * Takes facts a parser has done with before the file ends (FileParser's `spill`): observations
 * and rows of the other lists, with no chains, line counts or state (those come at the end).
 */
export type Spill = (facts: FileFacts) => void;

/**
 * With a `spill`, a parser holding this many observations, or this many rows of its other lists,
 * hands them on, keeping the SPILL_KEEP newest observations to merge later copies into. Memory
 * then stays the same however many requests a file holds: one 700 MB transcript of 274,000
 * requests held ~235 MB of them (BENCHMARKS-log.md, Memory, session 27). Held in smaller batches they
 * cost less to collect: that file read in 4.9 – 5.3 s of CPU at 1,024 against 6.1 – 7.2 at 16,384
 * (interleaved runs; 512 the same, 256 slower; BENCHMARKS-log.md, Cold, session 28).
 *
 * An observation handed on is not merged with a later copy of its key from the same file and
 * rank: that copy becomes a row of its own, as a copy read by a later append run does, and the
 * de-dup (schema.ts) takes the maximum, the earliest time and the copies over both rows, and
 * counts them one source. Copies of a response sit on adjacent lines; here they would have to
 * be SPILL_KEEP responses apart.
 */
export const SPILL_AT = 1_024;
export const SPILL_KEEP = 256;

export class FileParser {
  private readonly id: FileIdentity;
  private readonly facts: FileFacts;
  private readonly chains = new Map<string, ChainState>();
  private readonly merged = new Map<string, Observation>();
  /** v1.x inline sidechains: uuid → chain id of its root */
  private readonly sidechainOf = new Map<string, string>();
  /** the tool_use ids of this file's spawns not yet answered by a tool_result (ParserState.openSpawns) */
  private readonly openSpawns = new Set<string>();
  private readonly spill: Spill | undefined;
  /** whether the line being read may hold a text field longer than SHORT_STRING characters (add) */
  private long = true;
  private readonly spillAt: number;
  private readonly spillKeep: number;

  /** `spill`, `spillAt`, `spillKeep`: see SPILL_AT (tests make them small). */
  constructor(id: FileIdentity, state?: ParserState, spill?: Spill, spillAt = SPILL_AT, spillKeep = SPILL_KEEP) {
    this.id = id;
    this.spill = spill;
    this.spillAt = spillAt;
    this.spillKeep = Math.min(spillKeep, spillAt - 1);
    if (state) {
      for (const c of state.chains) this.chains.set(c.chainId, { ...c, lastKey: c.lastKey ?? null, pending: [], command: false });
      for (const [k, v] of state.sidechainOf) this.sidechainOf.set(k, v);
      for (const id of state.openSpawns ?? []) this.openSpawns.add(id);
      for (const a of state.pending ?? []) this.chains.get(a.chainId)?.pending.push({ ...a, fileId: id.fileId, round: 0 });
      for (const chainId of state.commands ?? []) {
        const c = this.chains.get(chainId);
        if (c) c.command = true;
      }
    }
    this.facts = {
      fileId: id.fileId,
      sessionId: state?.sessionId ?? (id.fileAgentId ? null : id.fileSessionId),
      cwd: state?.cwd ?? null,
      lines: 0,
      observations: [],
      chains: [],
      spawns: [],
      links: [],
      sidechainRoots: [],
      attachments: [],
      events: [],
      lineCounts: new Map(),
      skipped: [],
      synthetic: 0,
      state: { chains: [], sidechainOf: [] },
    };
  }

  /**
   * A line's own text fields the reader keeps (sessionId, cwd, agentId, uuid, parentUuid, requestId:
   * a session, a project's cwd, ids that place the line or key its request), on a line that may hold
   * one longer than SHORT_STRING characters (add): each so long is read as its opening, length and
   * hash (longField) before anything reads it. A line no longer than SHORT_STRING bytes cannot hold
   * one and is not looked at: one comparison a line (read-file.ts); a longer line, one a field.
   */
  private longLineTexts(lineNo: number, l: Line): void {
    if (typeof l.sessionId === 'string' && l.sessionId.length > SHORT_STRING) l.sessionId = this.longField(lineNo, 'sessionId', l.sessionId);
    if (typeof l.cwd === 'string' && l.cwd.length > SHORT_STRING) l.cwd = this.longField(lineNo, 'cwd', l.cwd);
    if (typeof l.agentId === 'string' && l.agentId.length > SHORT_STRING) l.agentId = this.longField(lineNo, 'agentId', l.agentId);
    if (typeof l.uuid === 'string' && l.uuid.length > SHORT_STRING) l.uuid = this.longField(lineNo, 'uuid', l.uuid);
    if (typeof l.parentUuid === 'string' && l.parentUuid.length > SHORT_STRING) l.parentUuid = this.longField(lineNo, 'parentUuid', l.parentUuid);
    if (typeof l.requestId === 'string' && l.requestId.length > SHORT_STRING) l.requestId = this.longField(lineNo, 'requestId', l.requestId);
  }

  /**
   * A text field longer than SHORT_STRING characters (`name` as the note says it), as it is stored
   * and shown (line.ts longText), noted as an invalid_field. The caller compares the length first.
   */
  private longField(line: number, name: string, x: string): string {
    const kept = longText(x);
    this.skip(line, 'invalid_field', `${name} of ${x.length.toLocaleString('en-US')} characters: read as ${kept}`);
    return kept;
  }

  skip(line: number, reason: SkipReason, detail: string): void {
    this.facts.lines = Math.max(this.facts.lines, line);
    this.facts.skipped.push({ fileId: this.id.fileId, line, reason, detail: detail.slice(0, 200) });
    if (this.spill) this.spillIfFull();
  }

  /** Counts a line that was only looked at for its type (not needed beyond the count). */
  countOnly(line: number, type: string, subtype: string | null): void {
    this.facts.lines = Math.max(this.facts.lines, line);
    this.bump(type, subtype);
  }

  /**
   * `long`: whether the line may hold a text field longer than SHORT_STRING characters, which only
   * a line longer than SHORT_STRING bytes can (read-file.ts: one comparison per line). Only then are
   * its text fields looked at (longField); a caller that does not know passes true.
   */
  add(lineNo: number, l: Line, long = true): void {
    this.facts.lines = Math.max(this.facts.lines, lineNo);
    this.long = long;
    // the line's own text fields, read in several places below: a too long one by its opening, length and hash, once
    if (long) this.longLineTexts(lineNo, l);
    const badType = typeProblem(l);
    if (badType) {
      // not read (it was counted as a line of no type); an inline sidechain's thread still passes through it
      if (!this.id.fileAgentId && l.isSidechain === true && !str(l.agentId)) this.sidechainChain(l, str(l.sessionId) ?? this.id.fileSessionId ?? 'unknown-session');
      this.skip(lineNo, 'invalid_type', badType);
      return;
    }
    let type = str(l.type) ?? '(none)';
    // a type no name is this long (a damaged line's text): an unknown type by its opening; it was kept whole
    if (type.length > SHORT_STRING) type = longTypeName(type);
    const data = obj(l.data);
    const attachment = obj(l.attachment);
    let subtype = type === 'progress' ? str(data?.type) : type === 'attachment' ? str(attachment?.type) : str(l.subtype);
    // and a subtype (`subtype`, data.type, attachment.type) alike
    if (subtype !== null && subtype.length > SHORT_STRING) subtype = longTypeName(subtype);
    this.bump(type, subtype);

    const sessionId = str(l.sessionId) ?? this.id.fileSessionId ?? 'unknown-session';
    if (!this.facts.sessionId) this.facts.sessionId = str(l.sessionId);
    if (!this.facts.cwd) this.facts.cwd = str(l.cwd);
    const t = timeOf(l.timestamp);
    // a flag that is no boolean is read as absent, and said (its file and agentId still place the line,
    // its content tells a prompt)
    const field = fieldProblem(l);
    if (field) this.skip(lineNo, 'invalid_field', field);
    // v1.x inline sidechains are threads of parentUuid links: every line, tool results included,
    // must pass its chain on, or the thread breaks into one chain per request.
    if (!this.id.fileAgentId && l.isSidechain === true && !str(l.agentId)) this.sidechainChain(l, sessionId);
    // Only an assistant line is a request (SPEC §1.3); usage on a line of another type ('Assistant',
    // an unknown or no type) is counted there by type, but its tokens would vanish unsaid.
    const offAssistant = type === 'assistant' ? null : usageOffAssistant(l.type, l.message);
    if (offAssistant) this.skip(lineNo, 'invalid_usage', offAssistant);

    switch (type) {
      case 'assistant':
        this.assistant(lineNo, l, sessionId, t);
        break;
      case 'user':
        this.user(lineNo, l, sessionId, t);
        break;
      case 'attachment':
        if (attachment) this.attachment(lineNo, l, sessionId, t, attachment);
        break;
      case 'system':
        if (subtype === 'compact_boundary') this.compaction(lineNo, l, sessionId, t);
        break;
      case 'progress':
        if (subtype === 'agent_progress' && data) this.progressCopy(lineNo, data, sessionId, t);
        break;
    }
    if (this.spill) this.spillIfFull();
  }

  /**
   * Hands the spill what this parser is done with once it holds `spillAt` observations or rows of
   * its other lists: the oldest observations (all but `spillKeep`) and every row of the others.
   * Example: at 1,024 observations, the first 768 go, in the order they were first seen.
   */
  private spillIfFull(): void {
    const f = this.facts;
    const listed = f.attachments.length + f.spawns.length + f.links.length + f.sidechainRoots.length + f.events.length + f.skipped.length;
    if (this.merged.size < this.spillAt && listed < this.spillAt) return;
    const observations: Observation[] = [];
    if (this.merged.size >= this.spillAt) {
      let n = this.merged.size - this.spillKeep;
      for (const [k, o] of this.merged) {
        if (n-- === 0) break;
        observations.push(o);
        this.merged.delete(k);
      }
    }
    this.spill!({
      fileId: f.fileId,
      sessionId: f.sessionId,
      cwd: f.cwd,
      lines: f.lines,
      observations,
      chains: [],
      spawns: f.spawns,
      links: f.links,
      sidechainRoots: f.sidechainRoots,
      attachments: f.attachments,
      events: f.events,
      lineCounts: new Map(),
      skipped: f.skipped,
      synthetic: 0,
      state: { chains: [], sidechainOf: [] },
    });
    f.spawns = [];
    f.links = [];
    f.sidechainRoots = [];
    f.attachments = [];
    f.events = [];
    f.skipped = [];
  }

  /** What a later read of the same file's appended bytes needs to go on where this one stopped. */
  state(): ParserState {
    return {
      chains: [...this.chains.values()].map(({ pending: _p, command: _c, ...c }) => c),
      sidechainOf: [...this.sidechainOf.entries()],
      pending: [...this.chains.values()].flatMap((c) => c.pending.map((a) => ({ ...a }))),
      commands: [...this.chains.values()].filter((c) => c.command).map((c) => c.chainId),
      ...(this.openSpawns.size > 0 ? { openSpawns: [...this.openSpawns] } : {}),
      cwd: this.facts.cwd,
      sessionId: this.facts.sessionId,
    };
  }

  finish(): FileFacts {
    this.facts.state = this.state();
    for (const c of this.chains.values()) {
      // after the last prompt or request: the chain's last round (0 when it has none)
      for (const a of c.pending) a.round = c.rounds;
      pushAll(this.facts.attachments, c.pending);
      const { pending: _pending, command: _command, ...facts } = c;
      this.facts.chains.push(facts);
    }
    this.facts.observations = [...this.merged.values()];
    return this.facts;
  }

  private bump(type: string, subtype: string | null): void {
    const k = subtype ? `${type}\u0000${subtype}` : type;
    this.facts.lineCounts.set(k, (this.facts.lineCounts.get(k) ?? 0) + 1);
  }

  /** Which chain a line of this file belongs to (SPEC §1.1 layouts, §1.4). */
  private chainFor(l: Line, sessionId: string, t: number): ChainState {
    let agentId = this.id.fileAgentId ?? str(l.agentId);
    let kind: ChainKind = agentId ? 'subagent' : 'main';
    let chainId = agentId ? `${sessionId}:${agentId}` : sessionId;
    if (!agentId && l.isSidechain === true) {
      // v1.x: sidechain lines inline in the main file; one chain per sidechain root.
      chainId = this.sidechainChain(l, sessionId);
      kind = 'sidechain';
      agentId = null;
      if (!this.chains.has(chainId)) {
        const msg = obj(l.message);
        const content = msg?.content;
        this.facts.sidechainRoots.push({ chainId, promptHash: typeof content === 'string' ? hashText(content) : null });
      }
    }
    let c = this.chains.get(chainId);
    if (!c) {
      c = { chainId, sessionId, agentId, kind, rounds: 0, compactions: 0, requests: 0, firstT: Number.isFinite(t) ? t : 0, pending: [], lastKey: null, command: false };
      this.chains.set(chainId, c);
    }
    return c;
  }

  private sidechainChain(l: Line, sessionId: string): string {
    return sidechainChainOf(this.sidechainOf, str(l.uuid), str(l.parentUuid), sessionId);
  }

  private assistant(lineNo: number, l: Line, sessionId: string, t: number): void {
    const msg = obj(l.message);
    if (!msg) return;
    const model = str(msg.model);
    if (model === '<synthetic>') {
      this.facts.synthetic++;
      return;
    }
    const chain = this.chainFor(l, sessionId, t);
    this.collectSpawns(lineNo, msg, sessionId);
    if (msg.usage === undefined) return;
    this.observe(lineNo, chain, msg, requestIdOf(l.requestId), t, this.id.fileAgentId ? SourceRank.SubagentFile : SourceRank.MainFile, sessionId, l);
  }

  private observe(
    lineNo: number,
    chain: ChainState,
    msg: Record<string, unknown>,
    requestId: string | null,
    t: number,
    rank: SourceRank,
    sessionId: string,
    /** the line itself (not for a progress copy, which opens no round): its uuid, should it open one */
    l?: Line,
  ): void {
    let messageId = str(msg.id);
    // the store keeps only the key and splits it at its first NUL (schema.ts)
    const bad = identityProblem(messageId, t);
    if (bad) return this.skip(lineNo, 'invalid_usage', bad);
    const usage = readUsage(msg.usage);
    if (typeof usage === 'string') return this.skip(lineNo, 'invalid_usage', usage);
    // a too long text (line.ts longText): an id stays distinct by its hash
    const at = rank === SourceRank.Progress ? 'data.message.message.' : 'message.';
    if (this.long && messageId!.length > SHORT_STRING) messageId = this.longField(lineNo, `${at}id`, messageId!);
    let model = str(msg.model);
    if (this.long && model !== null && model.length > SHORT_STRING) model = this.longField(lineNo, `${at}model`, model);
    if (this.long && usage.serviceTier !== null && usage.serviceTier.length > SHORT_STRING) usage.serviceTier = this.longField(lineNo, `${at}usage.service_tier`, usage.serviceTier);
    if (this.long && usage.speed !== null && usage.speed.length > SHORT_STRING) usage.speed = this.longField(lineNo, `${at}usage.speed`, usage.speed);
    const key = requestId ? `${messageId!}\u0000${requestId}` : messageId!;
    const mk = `${key}\u0000${rank}`;
    const prev = this.merged.get(mk);
    if (prev) {
      prev.input = Math.max(prev.input, usage.input);
      prev.output = Math.max(prev.output, usage.output);
      mergeWrite(prev, usage); // as schema.ts groupsSelect
      prev.cacheRead = Math.max(prev.cacheRead, usage.cacheRead);
      prev.webSearch = Math.max(prev.webSearch, usage.webSearch);
      prev.webFetch = Math.max(prev.webFetch, usage.webFetch);
      prev.splitMissing &&= usage.splitMissing;
      prev.serviceTier ??= usage.serviceTier;
      prev.speed ??= usage.speed;
      if (t < prev.t) prev.t = t;
      prev.copies++;
      return;
    }
    // A later line of the chain's latest response that is not merged above (read by an appended
    // read, or after a spill) is that request again (SPEC §1.3: its time is its first line's), not
    // a request after the attachments written between: they wait for the next prompt or request
    // (docs/store.md, Rounds). One comparison per response, not per line. The first request after
    // a slash command's echo is that command's: a local command sends none, and opens no round.
    if (rank !== SourceRank.Progress && key !== chain.lastKey) {
      chain.requests++;
      if (chain.rounds === 0 || chain.command) {
        chain.rounds++;
        this.roundOpened(chain, lineNo, t, 'request', l);
      }
      chain.command = false;
      chain.lastKey = key;
      this.flushPending(chain);
    }
    this.merged.set(mk, {
      fileId: this.id.fileId,
      line: lineNo,
      key,
      t,
      model: model ?? 'unknown',
      rank,
      sessionId,
      chainId: chain.chainId,
      agentId: chain.agentId,
      splitMissing: usage.splitMissing,
      serviceTier: usage.serviceTier,
      speed: usage.speed,
      copies: 1,
      segment: chain.compactions,
      round: rank === SourceRank.Progress ? 0 : chain.rounds,
      input: usage.input,
      output: usage.output,
      cacheWrite: usage.cacheWrite,
      cacheWrite5m: usage.cacheWrite5m,
      cacheWrite1h: usage.cacheWrite1h,
      cacheRead: usage.cacheRead,
      webSearch: usage.webSearch,
      webFetch: usage.webFetch,
    });
  }

  private collectSpawns(lineNo: number, msg: Record<string, unknown>, sessionId: string): void {
    if (!Array.isArray(msg.content)) return;
    for (const block of msg.content) {
      const b = obj(block);
      if (!b || b.type !== 'tool_use' || !SPAWN_TOOLS.has(str(b.name) ?? '')) continue;
      let toolUseId = str(b.id);
      const input = obj(b.input);
      if (!toolUseId) continue;
      this.openSpawns.add(toolUseId);
      const prompt = input?.prompt;
      let requestedType = str(input?.subagent_type);
      let spawnName = str(input?.name);
      if (this.long && toolUseId.length > SHORT_STRING) toolUseId = this.longField(lineNo, 'tool_use.id', toolUseId);
      if (this.long && requestedType !== null && requestedType.length > SHORT_STRING) requestedType = this.longField(lineNo, 'tool_use.input.subagent_type', requestedType);
      if (this.long && spawnName !== null && spawnName.length > SHORT_STRING) spawnName = this.longField(lineNo, 'tool_use.input.name', spawnName);
      this.facts.spawns.push({
        sessionId,
        toolUseId,
        requestedType,
        spawnName,
        promptHash: typeof prompt === 'string' ? hashText(prompt) : null,
      });
    }
  }

  /**
   * Whether `l` is a user line answering a spawn of this file (a tool_result whose tool_use_id is an
   * open spawn's) without toolUseResult.agentId: the reader then sets its whole content
   * (Line.wholeContent), read again from the line, for the agent its text names. One look at a set
   * for the lines that hold a tool_result while a spawn is open; no text is read otherwise.
   */
  needsWholeContent(l: Line): boolean {
    if (this.openSpawns.size === 0 || l.type !== 'user' || str(obj(l.toolUseResult)?.agentId)) return false;
    const content = obj(l.message)?.content;
    if (!Array.isArray(content)) return false;
    for (const block of content) {
      const id = str(obj(block)?.tool_use_id);
      if (id !== null && this.openSpawns.has(id)) return true;
    }
    return false;
  }

  private user(lineNo: number, l: Line, sessionId: string, t: number): void {
    const msg = obj(l.message);
    const content = msg?.content;
    const result = obj(l.toolUseResult);
    let agentId = str(result?.agentId);
    if (agentId && Array.isArray(content)) {
      if (this.long && agentId.length > SHORT_STRING) agentId = this.longField(lineNo, 'toolUseResult.agentId', agentId);
      for (const block of content) {
        let toolUseId = str(obj(block)?.tool_use_id);
        if (this.long && toolUseId !== null && toolUseId.length > SHORT_STRING) toolUseId = this.longField(lineNo, 'tool_result.tool_use_id', toolUseId);
        if (toolUseId) this.facts.links.push({ sessionId, toolUseId, agentId });
      }
    }
    // the result of a spawn of this file: without toolUseResult.agentId, the agent it names in its
    // text (`agentId: a9 (for resuming …)`, SPEC §1.5), which the reader gave whole (needsWholeContent)
    if (this.openSpawns.size > 0 && Array.isArray(content)) {
      for (const block of content) {
        const raw = str(obj(block)?.tool_use_id);
        if (raw === null || !this.openSpawns.delete(raw) || agentId) continue;
        let named = agentNamedIn(l.wholeContent, raw);
        if (!named) continue;
        if (this.long && named.length > SHORT_STRING) named = this.longField(lineNo, 'tool_result.agentId', named);
        const toolUseId = this.long && raw.length > SHORT_STRING ? this.longField(lineNo, 'tool_result.tool_use_id', raw) : raw;
        this.facts.links.push({ sessionId, toolUseId, agentId: named });
      }
    }
    const kind = userLineKind(l);
    if (kind === 'none') return;
    const chain = this.chainFor(l, sessionId, t);
    if (kind === 'command') {
      chain.command = true;
      return;
    }
    chain.rounds++;
    this.roundOpened(chain, lineNo, t, 'prompt', l);
    chain.command = false;
    this.flushPending(chain);
  }

  /**
   * Keeps the line that opened a round, when it has a uuid: a resumed session's transcript copies
   * it, and the copy's round is the earlier chain's (docs/store.md, Resumed sessions' copies).
   * One row per round, not per line.
   */
  private roundOpened(chain: ChainState, lineNo: number, t: number, detail: 'prompt' | 'request', l: Line | undefined): void {
    const uuid = l ? str(l.uuid) : null;
    if (uuid !== null) this.facts.events.push({ chainId: chain.chainId, line: lineNo, t: Number.isFinite(t) ? t : 0, kind: 'round', detail, uuid });
  }

  private attachment(lineNo: number, l: Line, sessionId: string, t: number, attachment: Record<string, unknown>): void {
    const chain = this.chainFor(l, sessionId, t);
    const { bytes, hash } = attachmentDigest(attachment);
    // (its own type, not the line's subtype: that is counted by longTypeName)
    let type = str(attachment.type);
    if (this.long && type !== null && type.length > SHORT_STRING) type = this.longField(lineNo, 'attachment.type', type);
    chain.pending.push({
      chainId: chain.chainId,
      fileId: this.id.fileId,
      line: lineNo,
      t: Number.isFinite(t) ? t : 0,
      type: type ?? 'unknown',
      bytes,
      hash,
      round: 0,
      uuid: str(l.uuid),
    });
  }

  private compaction(lineNo: number, l: Line, sessionId: string, t: number): void {
    const chain = this.chainFor(l, sessionId, t);
    chain.compactions++;
    this.facts.events.push({ chainId: chain.chainId, line: lineNo, t: Number.isFinite(t) ? t : 0, kind: 'compaction', detail: 'compact_boundary', uuid: str(l.uuid) });
  }

  /** `progress`/`agent_progress` lines repeat a subagent's messages in the parent: the lowest-ranked copy. */
  private progressCopy(lineNo: number, data: Record<string, unknown>, sessionId: string, t: number): void {
    const outer = obj(data.message);
    const msg = obj(outer?.message);
    let agentId = str(data.agentId);
    if (!outer || !msg || outer.type !== 'assistant' || msg.usage === undefined) return;
    if (str(msg.model) === '<synthetic>') return;
    // a copy that names no subagent has no chain to stand in: a located skip, not usage lost unseen
    if (!agentId) return this.skip(lineNo, 'invalid_usage', 'agent_progress copy without data.agentId');
    if (this.long && agentId.length > SHORT_STRING) agentId = this.longField(lineNo, 'data.agentId', agentId);
    const inner = timeOf(outer.timestamp);
    const chainId = `${sessionId}:${agentId}`;
    // A copy only names its chain; it never opens rounds or counts in the chain's facts.
    const chain: ChainState = this.chains.get(chainId) ?? {
      chainId, sessionId, agentId, kind: 'subagent', rounds: 0, compactions: 0, requests: 0, firstT: 0, pending: [], lastKey: null, command: false,
    };
    // a copy's requestId that is no string is read as its line's is (requestIdOf), and said so
    const idProblem = requestIdProblem(outer.requestId, 'data.message.requestId');
    if (idProblem) this.skip(lineNo, 'invalid_field', idProblem);
    let requestId = requestIdOf(outer.requestId);
    if (this.long && requestId !== null && requestId.length > SHORT_STRING) requestId = this.longField(lineNo, 'data.message.requestId', requestId);
    this.observe(lineNo, chain, msg, requestId, Number.isFinite(inner) ? inner : t, SourceRank.Progress, sessionId);
  }

  private flushPending(chain: ChainState): void {
    if (chain.pending.length === 0) return;
    for (const a of chain.pending) a.round = chain.rounds;
    pushAll(this.facts.attachments, chain.pending);
    chain.pending = [];
  }
}

/**
 * The chain of a v1.x inline sidechain line (uuid → chain id, kept in `threads`): its parent's, or
 * a new one rooted at this line. Every sidechain line must pass through here, tool results too.
 * Example: root u1 (no parent) → `S:side:u1`; u2 (parent u1) → `S:side:u1`; u3 (parent u2) too.
 */
export function sidechainChainOf(threads: Map<string, string>, uuid: string | null, parent: string | null, sessionId: string): string {
  const known = uuid ? threads.get(uuid) : undefined;
  if (known) return known;
  const chain = (parent && threads.get(parent)) || `${sessionId}:side:${uuid ?? 'unknown'}`;
  if (uuid) threads.set(uuid, chain);
  return chain;
}

/**
 * Digests of attachments the projector shared (project.ts SHARED_MIN): a repeated attachment is
 * the same object, so its canonical text is built and hashed once. Weak, so entries go when the
 * projector lets the object go.
 */
const digests = new WeakMap<object, { bytes: number; hash: string }>();

/** SPEC §1.6: an attachment's size and SHA-256, both of its canonical JSON. */
function attachmentDigest(attachment: Record<string, unknown>): { bytes: number; hash: string } {
  const known = digests.get(attachment);
  if (known) return known;
  const text = canonicalJson(attachment);
  const digest = { bytes: Buffer.byteLength(text, 'utf8'), hash: createHash('sha256').update(text).digest('hex') };
  digests.set(attachment, digest);
  return digest;
}

/** JSON with object keys sorted at every level: the text an attachment's size and hash are taken of. */
export function canonicalJson(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonicalJson).join(',')}]`;
  if (x && typeof x === 'object') {
    const o = x as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(x) ?? 'null';
}

function hashText(s: string): string {
  return createHash('sha1').update(s).digest('hex');
}

/**
 * Text Claude Code writes as a `user` line for what ran on the user's side without asking the
 * model, or that it adds itself: a local command's output and the caveat before it, bash mode's
 * input and output, the `#` memory shortcut's note (older versions: it goes to CLAUDE.md). None of
 * them opens a round (docs/store.md, Rounds).
 */
const LOCAL_OUTPUT = [
  '<local-command-stdout>',
  '<local-command-stderr>',
  '<local-command-caveat>',
  '<bash-input>',
  '<bash-stdout>',
  '<bash-stderr>',
  '<user-memory-input>',
];

/**
 * Text Claude Code injects: no round when that is all of the text. Told from the whole text when
 * the reader keeps it (SHORT_STRING characters of a string, TEXT_KEPT of a text block), else by
 * the opening tag, the only part kept: the replay, which has the whole text, goes by the same bounds.
 * Example: "<system-reminder>a.ts is open</system-reminder>" → none; "<system-reminder>…</system-reminder>\nfix it" → prompt.
 */
const REMINDER = '<system-reminder>';
const REMINDER_END = '</system-reminder>';

/** Whether text is `<system-reminder>…</system-reminder>` blocks and white space only: one pass, no backtracking on untrusted text. */
function remindersOnly(text: string): boolean {
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i === text.length) return true;
    if (!text.startsWith(REMINDER, i)) return false;
    const end = text.indexOf(REMINDER_END, i + REMINDER.length);
    if (end < 0) return false;
    i = end + REMINDER_END.length;
  }
}

/**
 * What Claude Code writes when the user presses Esc (the second when a tool's permission was
 * refused), a text block on its own line: no request follows from it, so it opens no round.
 */
const INTERRUPTS = new Set(['[Request interrupted by user]', '[Request interrupted by user for tool use]']);

/** A background task's completion, which wakes the chain when a request answers it (userLineKind). */
const TASK_NOTIFICATION = '<task-notification>';

/**
 * What a user line is to rounds (SPEC §1.6). `prompt` opens a round: not meta, not a compact
 * summary, and its content text or a list with a block other than a tool result. `command` is a
 * slash command's echo (`<command-name>…` or `<command-message>…`) or a background task's
 * `<task-notification>` (meta or not): a local command (`/model`, `/compact`) asks the model
 * nothing, a prompt command (a custom or skill command, expanded by the `isMeta` line after it) or
 * a notification answered from idle does, so it opens a round only with its first request
 * (FileParser.observe). `none`: tool results, meta lines, a compact summary (the chain goes on
 * with the round it was in), a local command's output, bash mode, a memory note, text of system
 * reminders only (remindersOnly), an interrupt (INTERRUPTS; alone, or as the only text beside tool results), content of
 * another kind (the projection reads an object where a list was expected as OTHER_OBJECT, a
 * string, which counted as a prompt; a number did not). A text block counts by its text as a
 * string does; the projection keeps TEXT_KEPT characters of it, else its opening tag. The replay
 * reads the same lines with this rule.
 * Example: "fix the bug" → prompt; "<command-name>/model</command-name>…" → command;
 * "<local-command-stdout>Set model to opus</local-command-stdout>" → none;
 * [{type: "text", text: "[Request interrupted by user]"}] → none.
 */
export function userLineKind(l: { isMeta?: unknown; isCompactSummary?: unknown; message?: unknown }): 'prompt' | 'command' | 'none' {
  if (l.isCompactSummary === true) return 'none';
  const content = obj(l.message)?.content;
  if (l.isMeta === true) return notifies(content) ? 'command' : 'none';
  if (typeof content === 'string') return textKind(content, SHORT_STRING);
  if (!Array.isArray(content)) return 'none';
  let kind: 'command' | 'none' = 'none';
  for (const b of content) {
    const block = obj(b);
    if (block?.type === 'tool_result') continue;
    const text = block?.type === 'text' ? block.text : undefined;
    // a block that is no text (an image), or whose text is no string, is the user's
    if (typeof text !== 'string' || text === OTHER_OBJECT || text === OTHER_ARRAY) return 'prompt';
    const k = textKind(text, TEXT_KEPT);
    if (k === 'prompt') return 'prompt';
    if (k === 'command') kind = k;
  }
  return kind;
}

/**
 * Whether a meta line's content is a background task's `<task-notification>`: a string, or a list
 * with a text block that is one (a list read as none: its request, which answers it, opened no round).
 * Example: "<task-notification>…" → true; [{type: "text", text: "<task-notification>…"}] → true; [] → false.
 */
function notifies(content: unknown): boolean {
  if (typeof content === 'string') return unmarked(content).startsWith(TASK_NOTIFICATION);
  if (!Array.isArray(content)) return false;
  return content.some((b) => {
    const block = obj(b);
    return block?.type === 'text' && typeof block.text === 'string' && unmarked(block.text).startsWith(TASK_NOTIFICATION);
  });
}

/** A string's text, or a long string's opening tag (project.ts longStringOf). */
function unmarked(content: string): string {
  return content.startsWith(LONG_STRING) ? content.slice(LONG_STRING.length) : content;
}

/** What user text is to rounds (userLineKind), a content string or a text block's text, of which the reader keeps `kept` characters. */
function textKind(content: string, kept: number): 'prompt' | 'command' | 'none' {
  // one comparison for nearly every prompt: only text opening with '<', '[' or a marker is looked at further
  const c = content.charCodeAt(0);
  if (c !== 0x3c && c !== 0 && c !== 0x5b) return 'prompt';
  if (content === OTHER_OBJECT || content === OTHER_ARRAY || INTERRUPTS.has(content)) return 'none';
  // a long string's marker keeps its opening tag (project.ts longStringOf)
  const text = unmarked(content);
  if (text.startsWith('<command-name>') || text.startsWith('<command-message>') || text.startsWith(TASK_NOTIFICATION)) return 'command';
  if (text.startsWith(REMINDER)) return text !== content || text.length > kept || remindersOnly(text) ? 'none' : 'prompt';
  return LOCAL_OUTPUT.some((tag) => text.startsWith(tag)) ? 'none' : 'prompt';
}
