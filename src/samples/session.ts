/**
 * One planned session: its main thread, its subagents and their files, a shared clock, and
 * the bookkeeping that turns the plan into truth.json rows when the session is finished.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CacheSim, type Ttl } from './cache-sim.js';
import { ChainWriter, iso, type ChainIdentity, type Response, type SessionClock } from './chain-writer.js';
import { ensureDir, FileSink } from './file-sink.js';
import { fileHistorySnapshot, lastPrompt, queueOperation, type Block, type LineCtx, type Style } from './lines.js';
import { Rng } from './prng.js';
import { paragraph, sentence } from './text.js';
import { toolCall, type ToolName } from './tools.js';
import { recordChain } from './plan-truth.js';
import { addTokens, zeroTokens, type TruthSink } from './truth.js';

export interface ProjectSpec {
  cwd: string;
  /** the directory name under projects/ (the cwd with `/` and `.` replaced by `-`) */
  dir: string;
  branch: string;
}

export interface SessionSetup {
  root: string;
  truth: TruthSink;
  rng: Rng;
  project: ProjectSpec;
  style: Style;
  startMs: number;
  mainModel: string;
  mainTtl: Ttl;
  /** system prompt + tools of the main thread, cached across sessions */
  mainSystemTokens: number;
  /** whether subagent responses are repeated as agent_progress lines in the main file */
  progressCopies: boolean;
}

interface FileExtras {
  chain: ChainWriter | null;
  invalid: number;
  incomplete: boolean;
  synthetic: number;
  progressCopyLines: number;
}


export function projectDir(cwd: string): string {
  return cwd.replace(/[/.]/g, '-');
}

export interface CycleOptions {
  think?: boolean;
  text?: boolean;
  output?: number;
  breakReadTo?: number;
  pinned?: boolean;
  noRequestId?: boolean;
}

export class Session implements SessionClock {
  now: number;
  readonly rng: Rng;
  readonly sessionId: string;
  readonly main: ChainWriter;
  readonly chains: ChainWriter[] = [];
  private readonly files = new Map<FileSink, FileExtras>();
  private readonly extraFiles: { path: string; bytes: number }[] = [];
  /** uuid of the user line that opened the current main turn */
  private turnStart = 0;
  private lastPromptText = '';
  /** 2.1.39 names a session with three words (e.g. radiant-floating-music) on every line */
  private readonly slug: string | null;

  constructor(readonly setup: SessionSetup) {
    this.rng = setup.rng;
    this.now = setup.startMs;
    this.sessionId = this.rng.uuid();
    this.slug = setup.style.layout === 'v39' ? slugWords(this.rng) : null;
    const sink = this.sink(`projects/${setup.project.dir}/${this.sessionId}.jsonl`);
    this.main = this.chain(
      {
        chainId: this.sessionId,
        agentId: null,
        kind: 'main',
        definition: null,
        agentType: 'main',
        requestedType: null,
        spawnName: null,
        metaFile: null,
      },
      sink,
      null,
      new CacheSim(setup.mainTtl, setup.mainSystemTokens, true, this.rng.fork('main-sim')),
      setup.mainModel,
    );
  }

  get style(): Style {
    return this.setup.style;
  }

  get cwd(): string {
    return this.setup.project.cwd;
  }

  countLine(_sink: FileSink, type: string): void {
    this.setup.truth.countLine(type);
  }

  sink(relPath: string): FileSink {
    const s = new FileSink(this.setup.root, relPath);
    this.files.set(s, { chain: null, invalid: 0, incomplete: false, synthetic: 0, progressCopyLines: 0 });
    return s;
  }

  chain(id: ChainIdentity, sink: FileSink, agentId: string | null, sim: CacheSim, model: string): ChainWriter {
    const ctx: LineCtx = {
      style: this.setup.style,
      sessionId: this.sessionId,
      cwd: this.setup.project.cwd,
      gitBranch: this.setup.project.branch,
      slug: this.slug,
      isSidechain: agentId !== null,
      agentId,
    };
    const c = new ChainWriter(this, id, sink, ctx, sim, model);
    (this.files.get(sink) as FileExtras).chain = c;
    this.chains.push(c);
    return c;
  }

  writeExtraFile(relPath: string, text: string): void {
    const abs = join(this.setup.root, ...relPath.split('/'));
    ensureDir(dirname(abs));
    writeFileSync(abs, text);
    this.extraFiles.push({ path: relPath, bytes: Buffer.byteLength(text) });
  }

  wait(ms: number): void {
    this.now += ms;
  }

  // ---- main-thread turns ---------------------------------------------------------------

  /** Session start lines: SessionStart hooks (2.1.39) or the queue of a headless run (sdk-cli). */
  start(firstPrompt: string): void {
    const m = this.main;
    if (this.style.layout === 'v39') {
      const hookId = this.rng.uuid();
      for (const command of ['~/.claude/hooks/notify.sh clear', 'bd prime']) {
        m.progress({ type: 'hook_progress', hookEvent: 'SessionStart', hookName: 'SessionStart:startup', command }, hookId, hookId);
      }
    }
    if (this.style.entrypoint === 'sdk-cli') {
      m.sink.line(queueOperation('enqueue', iso(this.now), this.sessionId, firstPrompt));
      this.countLine(m.sink, 'queue-operation');
      m.sink.line(queueOperation('dequeue', iso(this.now + 1), this.sessionId));
      this.countLine(m.sink, 'queue-operation');
    }
  }

  /** A user prompt on the main thread (opens a round). */
  prompt(text: string, tokens: number): string {
    const m = this.main;
    this.turnStart = this.now;
    this.lastPromptText = text;
    if (this.style.layout === 'v39') {
      m.sink.line(fileHistorySnapshot(this.rng.uuid(), iso(this.now)));
      this.countLine(m.sink, 'file-history-snapshot');
      return m.userPrompt(text, tokens, {}, { thinkingMetadata: { maxThinkingTokens: 31999 }, todos: [], permissionMode: 'bypassPermissions' });
    }
    m.promptId = this.rng.uuid();
    return m.userPrompt(text, tokens, { promptId: m.promptId }, { permissionMode: 'bypassPermissions' });
  }

  /** Blocks of one response: optional thinking and text, then the given tool_use blocks. */
  blocks(opts: CycleOptions, toolUses: Block[]): Block[] {
    const out: Block[] = [];
    if (opts.think) out.push({ type: 'thinking', thinking: paragraph(this.rng, this.rng.int(2, 8)), signature: this.rng.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 96) });
    if (opts.text || (out.length === 0 && toolUses.length === 0)) out.push({ type: 'text', text: paragraph(this.rng, this.rng.int(1, 4)) });
    return out.concat(toolUses);
  }

  /**
   * One tool cycle on a chain: a response ending in a tool_use, the tool running, its
   * tool_result (adding `resultTokens` to the prompt), and the latency before the next request.
   */
  cycle(c: ChainWriter, tool: ToolName, resultTokens: number, opts: CycleOptions = {}): Response {
    const call = toolCall(this.rng, tool, this.cwd);
    const id = this.rng.toolUseId();
    const resp = c.respond(this.blocks(opts, [{ type: 'tool_use', id, name: call.name, input: call.input, caller: { type: 'direct' } }]), {
      output: opts.output ?? this.rng.int(40, 700),
      ...(opts.breakReadTo !== undefined ? { breakReadTo: breakPoint(c, opts.breakReadTo) } : {}),
      ...(opts.pinned ? { pinned: true } : {}),
      ...(opts.noRequestId ? { noRequestId: true } : {}),
    });
    this.afterRequest(c, resp);
    const lastUuid = (resp.lines[resp.lines.length - 1] as { uuid: string }).uuid;
    if (c === this.main && tool === 'Bash' && call.durationMs > 3000) {
      const ticks = Math.min(3, Math.floor(call.durationMs / 3000));
      for (let i = 1; i <= ticks; i++) {
        this.now += 3000;
        c.progress({ type: 'bash_progress', output: sentence(this.rng), fullOutput: sentence(this.rng), elapsedTimeSeconds: i * 3, totalLines: i * 4 }, `bash-progress-${i - 1}`, id);
      }
      this.now += call.durationMs - ticks * 3000;
    } else {
      this.now += call.durationMs;
    }
    if (c === this.main && this.style.layout === 'v39') {
      c.progress({ type: 'hook_progress', hookEvent: 'PostToolUse', hookName: `PostToolUse:${tool}`, command: '~/.claude/hooks/format.sh' }, id, id);
    }
    c.toolResult(id, call.result, call.toolUseResult, resultTokens, lastUuid);
    if (c === this.main && tool === 'Edit' && this.style.layout === 'v200' && this.rng.chance(0.5)) {
      c.attach({ type: 'edited_text_file', filename: call.input['file_path'], snippet: sentence(this.rng) }, this.rng.int(60, 300));
    }
    this.now += this.rng.int(1500, 6000);
    return resp;
  }

  /** A response that ends the turn with text. */
  final(c: ChainWriter, output: number, opts: CycleOptions = {}): Response {
    const resp = c.respond(this.blocks({ think: opts.think ?? false, text: true }, []), {
      output,
      ...(opts.breakReadTo !== undefined ? { breakReadTo: breakPoint(c, opts.breakReadTo) } : {}),
      ...(opts.pinned ? { pinned: true } : {}),
      ...(opts.noRequestId ? { noRequestId: true } : {}),
    });
    this.afterRequest(c, resp);
    this.now += this.rng.int(200, 900);
    return resp;
  }

  /** Set while a subagent runs: repeats its responses as agent_progress lines in the main file. */
  copier: ((c: ChainWriter, resp: Response) => void) | null = null;

  private afterRequest(c: ChainWriter, resp: Response): void {
    if (this.copier) this.copier(c, resp);
  }

  /** End of a main turn: stop-hook summary (2.1.39), turn_duration, last-prompt (2.1.20x). */
  endTurn(): void {
    const m = this.main;
    if (this.style.layout === 'v39') {
      m.system('stop_hook_summary', { hookCount: 1, hookInfos: [{ command: '~/.claude/hooks/notify.sh mark' }], hookErrors: [], preventedContinuation: false, stopReason: '', hasOutput: true, level: 'suggestion' });
    }
    m.system('turn_duration', { durationMs: this.now - this.turnStart }, { isMeta: false });
    if (this.style.layout === 'v200' && m.lastUuid !== null) {
      m.sink.line(lastPrompt(this.lastPromptText, m.lastUuid, this.sessionId));
      this.countLine(m.sink, 'last-prompt');
    }
  }

  // ---- data-quality faults -------------------------------------------------------------

  invalidLine(c: ChainWriter, text: string): void {
    c.sink.line(text);
    this.countLine(c.sink, 'invalid');
    (this.files.get(c.sink) as FileExtras).invalid++;
  }

  synthetic(c: ChainWriter, text: string, apiError: boolean): void {
    c.synthetic(text, apiError);
    (this.files.get(c.sink) as FileExtras).synthetic++;
  }

  noteProgressCopy(sink: FileSink): void {
    (this.files.get(sink) as FileExtras).progressCopyLines++;
  }

  /** The file stops mid-line: Claude Code was writing the first block of the next response. */
  halfWrittenLine(c: ChainWriter): void {
    const line = JSON.stringify({
      parentUuid: c.lastUuid,
      isSidechain: false,
      userType: 'external',
      cwd: this.cwd,
      sessionId: this.sessionId,
      version: this.style.version,
      gitBranch: this.setup.project.branch,
      message: { model: c.model, id: this.rng.messageId(), type: 'message', role: 'assistant', content: [{ type: 'text', text: sentence(this.rng) }] },
    });
    c.sink.partial(line.slice(0, Math.floor(line.length * 0.6)));
    this.countLine(c.sink, 'incomplete');
    (this.files.get(c.sink) as FileExtras).incomplete = true;
  }

  // ---- truth ---------------------------------------------------------------------------

  /** Closes every file and hands the session's plan to the truth sink. */
  finish(): void {
    const truth = this.setup.truth;
    for (const c of this.chains) recordChain(truth, c, this.sessionId, this.cwd);
    for (const [sink, extra] of this.files) {
      sink.close();
      const tokens = zeroTokens();
      const chain = extra.chain;
      if (chain) {
        for (const r of chain.requests) {
          addTokens(tokens, { input: r.tokens.input, output: r.tokens.output, cache_write_5m: r.tokens.cacheWrite5m, cache_write_1h: r.tokens.cacheWrite1h, cache_read: r.tokens.cacheRead });
        }
      }
      truth.addFile({
        path: sink.relPath,
        kind: chain && chain.id.kind === 'main' ? 'main' : 'subagent',
        session_id: this.sessionId,
        chain_id: chain ? chain.id.chainId : null,
        lines: sink.lines,
        bytes: sink.bytes,
        requests: chain ? chain.requests.length : 0,
        tokens,
        progress_copy_lines: extra.progressCopyLines,
        invalid_lines: extra.invalid,
        incomplete_last_line: extra.incomplete,
        synthetic_lines: extra.synthetic,
      });
    }
    for (const f of this.extraFiles) {
      truth.addFile({
        path: f.path,
        kind: 'meta',
        session_id: this.sessionId,
        chain_id: null,
        lines: 1,
        bytes: f.bytes,
        requests: 0,
        tokens: zeroTokens(),
        progress_copy_lines: 0,
        invalid_lines: 0,
        incomplete_last_line: false,
        synthetic_lines: 0,
      });
    }
  }
}

const SLUG_WORDS = [
  ['radiant', 'quiet', 'amber', 'copper', 'gentle', 'silver'],
  ['floating', 'drifting', 'tumbling', 'humming', 'winding', 'glowing'],
  ['music', 'whisper', 'river', 'lantern', 'meadow', 'harbor'],
] as const;

function slugWords(rng: Rng): string {
  return SLUG_WORDS.map((words) => rng.pick(words)).join('-');
}

/**
 * Where a planted break reads up to: the preferred point (e.g. the system prompt) when it lies
 * well inside the cached prefix, else 40% of the prefix, so the break always re-writes more than
 * the 1,024-token jitter tolerance.
 */
function breakPoint(c: ChainWriter, preferred: number): number {
  return preferred < c.sim.prefix - 2048 ? preferred : Math.floor(c.sim.prefix * 0.4);
}
