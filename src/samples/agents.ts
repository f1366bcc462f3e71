/**
 * Subagents and compaction calls of a planned session (v2.1 layout):
 * `<session>/subagents/agent-<id>.jsonl` beside `agent-<id>.meta.json`, lines with
 * `isSidechain: true`, the parent's `sessionId` and the `agentId`. The parent's Agent/Task
 * `tool_use` spawns the agent, `agent_progress` lines in the main file repeat its responses
 * (the double-count trap of SPEC §1.3) and a `tool_result` naming the agentId ends each turn.
 *
 * Lost definitions (field note 1): the parent asks for `myplugin:planner` with
 * `name: "planner"`, the meta says `planner`, and an ~18 KB skill_listing is re-attached every
 * round, so each round's first request reads only the pinned system prompt and re-writes the
 * rest (the re-purchase pattern of SPEC §3).
 */
import { CacheSim, type Ttl } from './cache-sim.js';
import type { ChainWriter, Response } from './chain-writer.js';
import { usageBlock } from './lines.js';
import type { CycleOptions, Session } from './session.js';
import { paragraph, pluginSkillListing, sentence } from './text.js';
import type { ToolName } from './tools.js';
import type { ChainKind } from './truth.js';

export interface AgentSpec {
  kind: Exclude<ChainKind, 'main'>;
  /** the parent's spawning tool_use; null for agents nothing spawned by tool (fork, workflow, prompt suggestion) */
  spawn: { tool: 'Agent' | 'Task'; subagentType: string; name?: string } | null;
  /** agentType written to the .meta.json; null writes no meta file (as Claude Code 2.1.39 did) */
  metaType: string | null;
  /** whether the meta names the spawning tool_use (otherwise only the tool_result's agentId links them) */
  metaToolUseId?: boolean;
  description: string;
  model: string;
  ttl: Ttl;
  systemTokens: number;
  /** whether a cold or expired request still reads the system prompt from a cache other chains keep warm */
  globalRead: boolean;
  idPrefix?: string;
  workflowRun?: string;
}

export interface Cycle {
  tool: ToolName;
  tokens: number;
  opts?: CycleOptions;
}

export interface AgentTurn {
  prompt: string;
  promptTokens: number;
  cycles: Cycle[];
  finalOutput: number;
  /** tokens the agent's report adds to the parent's prompt */
  reportTokens: number;
}

export class Agent {
  chain: ChainWriter | null = null;
  turns = 0;
  readonly agentId: string;

  constructor(
    readonly session: Session,
    readonly spec: AgentSpec,
  ) {
    const rng = session.rng;
    this.agentId = spec.idPrefix !== undefined ? `${spec.idPrefix}${rng.hex(6)}` : session.style.layout === 'v39' ? `a${rng.hex(6)}` : `a${rng.hex(16)}`;
    if (spec.kind === 'resolved' && spec.metaType !== spec.spawn?.subagentType) throw new Error('a resolved agent needs meta agentType = requested type');
    if (spec.kind === 'lost' && (spec.metaType === null || spec.spawn === null || spec.metaType === spec.spawn.subagentType)) {
      throw new Error('a lost agent needs a meta agentType different from the requested type');
    }
  }

  get lost(): boolean {
    return this.spec.kind === 'lost';
  }

  /** Creates the agent's file and meta once the spawning tool_use id is known. */
  open(spawnToolUseId: string | null): ChainWriter {
    const s = this.session;
    const spec = this.spec;
    const dir = `projects/${s.setup.project.dir}/${s.sessionId}/subagents/${spec.workflowRun !== undefined ? `workflows/${spec.workflowRun}/` : ''}`;
    const base = `${dir}agent-${this.agentId}`;
    let metaFile: string | null = null;
    if (spec.metaType !== null) {
      metaFile = `${base}.meta.json`;
      const meta =
        spec.workflowRun !== undefined
          ? { agentType: spec.metaType }
          : { agentType: spec.metaType, description: spec.description, ...(spec.metaToolUseId && spawnToolUseId !== null ? { toolUseId: spawnToolUseId } : {}) };
      s.writeExtraFile(metaFile, JSON.stringify(meta));
    }
    const definition = spec.kind === 'resolved' || spec.kind === 'lost' || spec.kind === 'unknown' ? spec.kind : 'unknown';
    this.chain = s.chain(
      {
        chainId: `${s.sessionId}:${this.agentId}`,
        agentId: this.agentId,
        kind: spec.kind,
        definition,
        agentType: spec.metaType ?? spec.spawn?.subagentType ?? (spec.kind === 'compaction' || spec.kind === 'prompt_suggestion' ? spec.kind : 'unknown'),
        requestedType: spec.spawn?.subagentType ?? null,
        spawnName: spec.spawn?.name ?? null,
        metaFile,
      },
      s.sink(`${base}.jsonl`),
      this.agentId,
      new CacheSim(spec.ttl, spec.systemTokens, spec.globalRead, s.rng.fork('agent-sim', this.agentId)),
      spec.model,
    );
    return this.chain;
  }
}

let listing: Record<string, unknown> | null = null;

/** The skill listing attachment re-attached to lost agents every round (one shared object). */
function skillListingAttachment(): Record<string, unknown> {
  if (listing) return listing;
  const l = pluginSkillListing();
  listing = { type: 'skill_listing', content: l.content, skillCount: l.names.length, isInitial: true, names: l.names };
  return listing;
}

/**
 * One turn (round) of an agent. With a spawning tool, the parent's response carries the
 * tool_use (spawn on the first turn; `resume` or, for named team members, `SendMessage` later)
 * and a tool_result closes the turn; while the agent runs, its responses are copied into the
 * main file as agent_progress lines when the session keeps progress copies.
 */
export function runAgentTurn(agent: Agent, turn: AgentTurn): void {
  const s = agent.session;
  const rng = s.rng;
  const m = s.main;
  const spec = agent.spec;
  let parentToolUseId: string | null = null;
  let parentMsgId = '';
  let parentLineUuid = '';
  if (spec.spawn !== null) {
    const sp = spec.spawn;
    let name: string;
    let input: Record<string, unknown>;
    if (agent.turns === 0) {
      name = sp.tool;
      input = { subagent_type: sp.subagentType, description: spec.description, prompt: turn.prompt, ...(sp.name !== undefined ? { name: sp.name } : {}) };
    } else if (sp.name !== undefined) {
      name = 'SendMessage';
      input = { to: sp.name, message: turn.prompt };
    } else {
      name = sp.tool;
      input = { subagent_type: sp.subagentType, description: spec.description, prompt: turn.prompt, resume: agent.agentId };
    }
    parentToolUseId = rng.toolUseId();
    const resp = m.respond(s.blocks({ text: rng.chance(0.5) }, [{ type: 'tool_use', id: parentToolUseId, name, input, caller: { type: 'direct' } }]), {
      output: rng.int(80, 400),
    });
    parentMsgId = resp.plan.messageId;
    parentLineUuid = (resp.lines[resp.lines.length - 1] as { uuid: string }).uuid;
    s.now += rng.int(200, 1200);
  }
  const c = agent.chain ?? agent.open(parentToolUseId);
  const copies = parentToolUseId !== null && s.setup.progressCopies;
  const progress = (data: Record<string, unknown>, ts: string): void => {
    m.progress({ message: data, normalizedMessages: [], type: 'agent_progress', prompt: turn.prompt, agentId: agent.agentId }, `agent_msg_${parentMsgId}`, parentToolUseId as string, ts);
    s.noteProgressCopy(m.sink);
  };
  if (copies) {
    s.copier = (chain: ChainWriter, resp: Response) => {
      if (chain !== c) return;
      resp.lines.forEach((line, k) => {
        const block = (line.message['content'] as { type: string }[])[0] as { type: string };
        if (block.type === 'thinking' && k < resp.lines.length - 1) return;
        progress({ type: 'assistant', timestamp: line.ts, message: line.message, ...(line.requestId !== null ? { requestId: line.requestId } : {}), uuid: line.uuid }, line.ts);
        resp.plan.progressFiles.add(m.sink.relPath);
        resp.plan.progressLines++;
      });
    };
  }
  const promptUuid = c.userPrompt(turn.prompt, turn.promptTokens);
  if (copies) {
    const ts = new Date(s.now).toISOString();
    progress({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: turn.prompt }] }, uuid: promptUuid, timestamp: ts }, ts);
  }
  if (agent.lost) c.attach(skillListingAttachment(), rng.int(4500, 4700));
  s.now += rng.int(800, 3000);
  turn.cycles.forEach((cy, k) => {
    s.cycle(c, cy.tool, cy.tokens, { ...cy.opts, ...(k === 0 && agent.lost ? { pinned: true } : {}) });
  });
  const last = s.final(c, turn.finalOutput, turn.cycles.length === 0 && agent.lost ? { pinned: true } : {});
  s.copier = null;
  agent.turns++;
  if (parentToolUseId === null) return;
  s.now += rng.int(200, 900);
  const report = paragraph(rng, rng.int(2, 5));
  const totals = c.requests.reduce((n, r) => n + r.tokens.output, 0);
  if (spec.spawn?.name !== undefined && agent.turns > 1) {
    m.toolResult(parentToolUseId, report, { success: true, message: `Message delivered to ${spec.spawn.name}`, reply: report }, turn.reportTokens, parentLineUuid);
  } else {
    const content = [
      { type: 'text', text: report },
      { type: 'text', text: `agentId: ${agent.agentId} (for resuming to continue this agent's work if needed)\n<usage>total_tokens: ${totals}\ntool_uses: ${turn.cycles.length}</usage>` },
    ];
    const t = last.plan.tokens;
    m.toolResult(
      parentToolUseId,
      content,
      {
        status: 'completed',
        prompt: turn.prompt,
        agentId: agent.agentId,
        content: content.slice(0, 1),
        totalDurationMs: rng.int(20_000, 180_000),
        totalTokens: totals,
        totalToolUseCount: turn.cycles.length,
        usage: usageBlock(s.style, t),
      },
      turn.reportTokens,
      parentLineUuid,
    );
  }
  s.now += rng.int(1500, 5000);
}

/**
 * Compaction: the summary call runs as its own chain (`agent-acompact-*`, reading the main
 * thread's cached prefix), then the main file gets `system/compact_boundary` and a user line
 * with `isCompactSummary: true`; the main thread's next request is cold (SPEC §1.4, §3).
 */
export function compact(s: Session): void {
  const rng = s.rng;
  const m = s.main;
  const spec: AgentSpec = {
    kind: 'compaction',
    spawn: null,
    metaType: null,
    description: 'compaction',
    model: m.model,
    ttl: m.sim.ttl,
    systemTokens: m.sim.prefix,
    globalRead: true,
    idPrefix: 'acompact-',
  };
  const agent = new Agent(s, spec);
  const c = agent.open(null);
  s.now += rng.int(500, 2000);
  c.userPrompt('Your task is to create a detailed summary of the conversation so far, paying close attention to the user\'s explicit requests and your previous actions.', rng.int(1500, 9000));
  s.now += rng.int(1500, 4000);
  const summaryTokens = rng.int(3000, 9000);
  s.final(c, summaryTokens);
  s.now += rng.int(300, 2000);
  const preTokens = m.sim.lastPrompt;
  m.system('compact_boundary', { logicalParentUuid: m.lastUuid, content: 'Conversation compacted', isMeta: false }, { level: 'info', compactMetadata: { trigger: 'auto', preTokens } }, null);
  m.compactions++;
  m.pendingAdd = 0;
  m.compactPending = true;
  const summary = `This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n${paragraph(rng, 6)}`;
  m.userPrompt(summary, summaryTokens, {}, { isCompactSummary: true, isVisibleInTranscriptOnly: true }, false);
  s.now += rng.int(2000, 5000);
}

export function agentPrompt(s: Session, what: string): string {
  return `${what} ${sentence(s.rng, 8, 18)}`;
}
