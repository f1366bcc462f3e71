/**
 * The mix of the sample corpus: eight session recipes, each planting some of the patterns the
 * product must find (SPEC §1, §3). `--scale` repeats the mix with new ids, projects and times.
 *
 *   shopFeature   1h main, 5m subagents, a >5m and a >1h gap, compaction, API error, bad line
 *   planLoop      the field note: lost planner/reviewer (5m) with skill_listing every round
 *   planLoop1h    the other way: 5m main, lost agents on 1h, main gaps over 5m and 1h
 *   spotterV39    2.1.39 lines: Task tool, no meta.json, 251-min gap, compaction, breaks,
 *                 requests without requestId, a half-written last line
 *   pipelineMix   sonnet-5, haiku 1h subagent, unpriced model, workflow agent, model switch
 *   headless      sdk-cli run: queue-operation, budget_usd, task_reminder, last-prompt
 *   longContext   sonnet-4-5 over 200k, resumed agent after an expiry, fork, prompt suggestion
 *   slowHour      1h main with 10–50 min gaps, one >1h gap, two compactions, a planted break
 */
import { Agent, agentPrompt, compact, runAgentTurn, type AgentSpec, type Cycle } from './agents.js';
import type { Ttl } from './cache-sim.js';
import { STYLE_SDK, STYLE_V201, STYLE_V39, type Style } from './lines.js';
import type { Rng } from './prng.js';
import type { Session } from './session.js';
import { coreSkillListing, sentence } from './text.js';
import type { ToolName } from './tools.js';

export const OPUS = 'claude-opus-4-6';
export const SONNET = 'claude-sonnet-4-5-20250929';
export const HAIKU = 'claude-haiku-4-5-20251001';
export const SONNET5 = 'claude-sonnet-5';
export const MYSTERY = 'claude-mystery-9';

const MIN = 60_000;
export const LOST_PINNED_READ = 13_818;

export interface BaseProject {
  cwd: string;
  branch: string;
}

export const PROJECTS: BaseProject[] = [
  { cwd: '/home/USER/projects/shop-api', branch: 'main' },
  { cwd: '/home/USER/projects/plan-loop', branch: 'feature/loop' },
  { cwd: '/home/USER/projects/spotter-lite', branch: 'spotter-x' },
  { cwd: '/home/USER/work/data-pipeline', branch: 'dev' },
];

export interface Recipe {
  name: string;
  project: number;
  style: Style;
  mainModel: string;
  mainTtl: Ttl;
  mainSystemTokens: number;
  progressCopies: boolean;
  run(s: Session): void;
}

function cycles(rng: Rng, n: number, big = false): Cycle[] {
  const tools: ToolName[] = ['Read', 'Grep', 'Bash', 'Read', 'Edit', 'Glob', 'Read'];
  return Array.from({ length: n }, () => {
    const tool = rng.pick(tools);
    const tokens = tool === 'Read' ? rng.int(big ? 8000 : 1500, big ? 30000 : 9000) : tool === 'Bash' ? rng.int(200, 3000) : rng.int(80, 900);
    return { tool, tokens, opts: { think: rng.chance(0.4), text: rng.chance(0.3) } };
  });
}

/** A main-thread round: prompt, tool cycles, final text, end of turn. */
function turn(s: Session, what: string, n: number, between?: () => void): void {
  s.prompt(`${what} ${sentence(s.rng, 6, 20)}`, s.rng.int(40, 600));
  s.wait(s.rng.int(1500, 5000));
  for (const c of cycles(s.rng, n)) s.cycle(s.main, c.tool, c.tokens, c.opts);
  between?.();
  s.final(s.main, s.rng.int(60, 900), { think: s.rng.chance(0.3) });
  s.endTurn();
}

function thinkGap(s: Session): void {
  s.wait(s.rng.int(20_000, 4 * MIN));
}

/** The attachments a 2.1.20x main thread gets right after its first prompt. */
function startAttachments(s: Session, mcp: boolean): void {
  const m = s.main;
  m.attach({ type: 'deferred_tools_delta', addedNames: ['NotebookEdit', 'SendMessage', 'TaskCreate', 'WebFetch', 'WebSearch'], addedLines: ['NotebookEdit', 'SendMessage', 'TaskCreate', 'WebFetch', 'WebSearch'], removedNames: [], readdedNames: [], pendingMcpServers: [], needsAuthMcpServers: [] }, 120);
  m.attach({ type: 'agent_listing_delta', addedTypes: ['Explore', 'general-purpose', 'Plan', 'myplugin:planner', 'myplugin:reviewer'], addedLines: ['- Explore: Fast read-only search agent for locating code. (Tools: Read, Grep, Glob)', '- general-purpose: General-purpose agent for multi-step tasks. (Tools: *)', '- Plan: Software architect agent for implementation plans. (Tools: *)', '- myplugin:planner: Plans a change step by step. (Tools: Read, Grep)', '- myplugin:reviewer: Reviews a plan against the code. (Tools: Read, Grep)'], removedTypes: [] }, 300);
  const l = coreSkillListing();
  m.attach({ type: 'skill_listing', content: l.content, skillCount: l.names.length, isInitial: true, names: l.names }, s.rng.int(1200, 1600));
  if (mcp) m.attach({ type: 'mcp_instructions_delta', addedNames: ['linear'], addedBlocks: ['## linear\nUse the linear tools to read and update issues.'], removedNames: [] }, 200);
}

function agent(s: Session, spec: AgentSpec): Agent {
  return new Agent(s, spec);
}

/**
 * A lost agent's first round reads the code it plans against (large Read results), so its
 * cached prefix is well over 70k tokens; every later round re-buys it (field note: writes grew
 * 131k → 228k over 8 rounds while reads stayed at 13,818).
 */
function lostCycles(rng: Rng, first: boolean): Cycle[] {
  if (first) return Array.from({ length: rng.int(4, 5) }, () => ({ tool: 'Read' as const, tokens: rng.int(18_000, 30_000), opts: { think: rng.chance(0.3) } }));
  return Array.from({ length: rng.int(1, 2) }, () => ({ tool: rng.pick(['Read', 'Grep', 'Read'] as const), tokens: rng.int(1_500, 6_000), opts: { text: rng.chance(0.3) } }));
}

function agentTurn(a: Agent, what: string, n: number, big = false): void {
  const s = a.session;
  const list = a.lost ? lostCycles(s.rng, a.turns === 0) : cycles(s.rng, n, big);
  runAgentTurn(a, { prompt: agentPrompt(s, what), promptTokens: s.rng.int(300, 2500), cycles: list, finalOutput: s.rng.int(300, 2500), reportTokens: s.rng.int(400, 3000) });
}

const shopFeature: Recipe = {
  name: 'shopFeature',
  project: 0,
  style: STYLE_V201,
  mainModel: OPUS,
  mainTtl: '1h',
  mainSystemTokens: 21_000,
  progressCopies: true,
  run(s) {
    const rng = s.rng;
    s.start('Add pagination');
    s.prompt('Add cursor pagination to the orders endpoint and cover it with tests.', 420);
    startAttachments(s, false);
    s.main.attach({ type: 'hook_success', hookName: 'SessionStart:startup', hookEvent: 'SessionStart', content: '', stdout: 'ready', stderr: '', exitCode: 0, command: '~/.claude/hooks/notify.sh', durationMs: 41 }, 20);
    s.wait(3000);
    for (const c of cycles(rng, 3)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    const explore = agent(s, { kind: 'resolved', spawn: { tool: 'Agent', subagentType: 'Explore' }, metaType: 'Explore', metaToolUseId: true, description: 'Find the order routes', model: HAIKU, ttl: '5m', systemTokens: 9_200, globalRead: true });
    agentTurn(explore, 'Find every route that lists orders and how it paginates.', 4);
    for (const c of cycles(rng, 2)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    s.final(s.main, rng.int(200, 800));
    s.endTurn();
    thinkGap(s);
    turn(s, 'Now write the tests.', 3, () => {
      const gp = agent(s, { kind: 'resolved', spawn: { tool: 'Agent', subagentType: 'general-purpose' }, metaType: 'general-purpose', metaToolUseId: false, description: 'Draft pagination tests', model: SONNET, ttl: '5m', systemTokens: 12_400, globalRead: true });
      agentTurn(gp, 'Draft tests for cursor pagination edge cases.', 3);
    });
    s.invalidLine(s.main, '{"parentUuid":"' + rng.uuid() + '","isSidechain":false,"type":"progress","data":{"type":"hook_progress","hookEvent":"PostToolUse","hookName":"PostTo');
    s.wait(rng.int(12, 45) * MIN); // over 5 minutes, under the 1-hour TTL: no expiry
    s.prompt('Run the whole suite again.', 60);
    s.wait(2000);
    s.main.system('api_error', { level: 'error', error: { status: 529, headers: {}, requestID: null, error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }, retryInMs: 1200, retryAttempt: 1, maxRetries: 10 });
    s.synthetic(s.main, 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', true);
    s.wait(4000);
    for (const c of cycles(rng, 3)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    s.final(s.main, rng.int(100, 500));
    s.endTurn();
    s.wait(rng.int(70, 160) * MIN); // over 1 hour: the 1h cache expired
    s.prompt('Back again: also handle an empty page.', 120);
    s.wait(2500);
    for (const c of cycles(rng, 4)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    compact(s);
    for (const c of cycles(rng, 2)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    s.final(s.main, rng.int(200, 700));
    s.endTurn();
    thinkGap(s);
    s.prompt('Summarise the change for the PR description.', 40);
    s.main.attach({ type: 'hook_additional_context', content: ['Branch main is protected; open a PR.'], hookName: 'UserPromptSubmit', toolUseID: rng.uuid(), hookEvent: 'UserPromptSubmit' }, 30);
    s.main.attach({ type: 'todo_reminder', content: [{ content: 'Open the PR', status: 'pending', activeForm: 'Opening the PR' }], itemCount: 1 }, 40);
    s.wait(2000);
    s.final(s.main, rng.int(300, 900));
    s.endTurn();
  },
};

function loopAgents(s: Session, ttl: Ttl, model: string): { planner: Agent; reviewer: Agent } {
  const planner = agent(s, { kind: 'lost', spawn: { tool: 'Agent', subagentType: 'myplugin:planner', name: 'planner' }, metaType: 'planner', metaToolUseId: true, description: 'Plan the fix', model, ttl, systemTokens: LOST_PINNED_READ, globalRead: true });
  const reviewer = agent(s, { kind: 'lost', spawn: { tool: 'Agent', subagentType: 'myplugin:reviewer', name: 'reviewer' }, metaType: 'reviewer', metaToolUseId: false, description: 'Review the plan', model, ttl, systemTokens: LOST_PINNED_READ, globalRead: true });
  return { planner, reviewer };
}

const planLoop: Recipe = {
  name: 'planLoop',
  project: 1,
  style: STYLE_V201,
  mainModel: OPUS,
  mainTtl: '1h',
  mainSystemTokens: 21_000,
  progressCopies: true,
  run(s) {
    const rng = s.rng;
    s.start('Run the loop');
    s.prompt('Run the plan → review → fix loop on issue #212 until the reviewer approves.', 380);
    startAttachments(s, true);
    s.wait(2500);
    s.cycle(s.main, 'TodoWrite', 200);
    const { planner, reviewer } = loopAgents(s, '5m', SONNET);
    const fixer = agent(s, { kind: 'resolved', spawn: { tool: 'Agent', subagentType: 'myplugin:fixer' }, metaType: 'myplugin:fixer', metaToolUseId: true, description: 'Apply the plan', model: SONNET, ttl: '5m', systemTokens: 11_900, globalRead: true });
    agentTurn(planner, 'Plan the fix for issue #212.', rng.int(4, 5), true);
    agentTurn(reviewer, 'Review the plan against the code.', rng.int(3, 4), true);
    for (let round = 2; round <= 8; round++) {
      agentTurn(planner, `Revise the plan (round ${round}) with the review notes.`, rng.int(1, 3));
      agentTurn(reviewer, `Review plan revision ${round}.`, rng.int(1, 2));
      if (round === 4) {
        s.final(s.main, rng.int(100, 400));
        s.endTurn();
        s.wait(rng.int(40, 150) * 1000);
        s.prompt('Keep going.', 10);
        s.wait(2000);
      }
      if (round % 3 === 0) s.cycle(s.main, 'Bash', rng.int(300, 2000));
    }
    agentTurn(reviewer, 'Final review before the fix.', 1);
    agentTurn(fixer, 'Apply the approved plan.', 4);
    if (rng.chance(0.5)) agentTurn(fixer, 'Fix the failing test the reviewer found.', 2);
    s.final(s.main, rng.int(300, 900));
    s.endTurn();
  },
};

const planLoop1h: Recipe = {
  name: 'planLoop1h',
  project: 1,
  style: STYLE_V201,
  mainModel: SONNET,
  mainTtl: '5m',
  mainSystemTokens: 18_000,
  progressCopies: false,
  run(s) {
    const rng = s.rng;
    s.start('Loop again');
    s.prompt('Plan and review the migration of the billing tables.', 260);
    startAttachments(s, false);
    s.wait(2000);
    const { planner, reviewer } = loopAgents(s, '1h', OPUS);
    const tester = agent(s, { kind: 'resolved', spawn: { tool: 'Agent', subagentType: 'myplugin:tester' }, metaType: 'myplugin:tester', metaToolUseId: true, description: 'Test the migration', model: HAIKU, ttl: '1h', systemTokens: 10_300, globalRead: false });
    agentTurn(planner, 'Plan the billing migration.', 4, true);
    agentTurn(reviewer, 'Review the migration plan.', 3, true);
    s.final(s.main, rng.int(100, 500));
    s.endTurn();
    s.wait(rng.int(12, 40) * MIN); // main (5m) expires; the lost agents (1h) would not — but they re-buy anyway
    s.prompt('Address the review.', 90);
    s.wait(2000);
    agentTurn(planner, 'Revise the plan with the review notes.', 2);
    agentTurn(reviewer, 'Review the revision.', 1);
    s.final(s.main, rng.int(100, 500));
    s.endTurn();
    s.wait(rng.int(65, 120) * MIN); // over 1 hour: even the 1h agents expire
    s.prompt('One more pass, then test it.', 40);
    s.wait(2000);
    agentTurn(planner, 'Final revision of the plan.', 2);
    agentTurn(tester, 'Run the migration against a copy of the billing data.', 3);
    agentTurn(planner, 'Fold the test results into the plan.', 1);
    s.final(s.main, rng.int(200, 600));
    s.endTurn();
  },
};

const spotterV39: Recipe = {
  name: 'spotterV39',
  project: 2,
  style: STYLE_V39,
  mainModel: OPUS,
  mainTtl: '5m',
  mainSystemTokens: 11_442,
  progressCopies: true,
  run(s) {
    const rng = s.rng;
    s.start('');
    s.prompt('Work on bead spotter-x. Run bd show spotter-x and start with the first ready task.', 150);
    s.wait(2400);
    for (const c of cycles(rng, 2)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    const explore = agent(s, { kind: 'unknown', spawn: { tool: 'Task', subagentType: 'Explore' }, metaType: null, description: 'Explore transcript rendering', model: SONNET, ttl: '5m', systemTokens: 13_522, globalRead: false });
    runAgentTurn(explore, { prompt: agentPrompt(s, 'Very thorough exploration of the transcript renderer.'), promptTokens: 900, cycles: [...cycles(rng, 3), { tool: 'Read', tokens: 4000, opts: { noRequestId: true } }, ...cycles(rng, 2)], finalOutput: 5100, reportTokens: 4800 });
    for (const c of cycles(rng, 3)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    s.cycle(s.main, 'Bash', 1200, { noRequestId: true });
    s.cycle(s.main, 'Bash', 900, { breakReadTo: s.main.sim.prefix > 30_000 ? 21_478 : 11_442 }); // a volatile line near the front: reads fall inside the TTL
    s.final(s.main, rng.int(200, 900));
    s.endTurn();
    s.wait(251 * MIN); // the 251-minute gap of the real session
    s.prompt('Continue with the next task.', 30);
    s.wait(2200);
    for (const c of cycles(rng, 4)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    compact(s);
    for (const c of cycles(rng, 3)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    s.final(s.main, rng.int(100, 600), { noRequestId: true });
    s.endTurn();
    s.wait(19 * MIN + 12_000); // 19.2 minutes: expiry
    s.prompt('Run the tests.', 20);
    s.wait(2000);
    s.cycle(s.main, 'Bash', 2500);
    s.wait(5000);
    s.cycle(s.main, 'Bash', 800, { breakReadTo: 21_478 }); // five seconds later the reads fall: a break
    for (const c of cycles(rng, 2)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    s.final(s.main, rng.int(100, 500));
    s.endTurn();
    s.wait(40_000);
    s.prompt('Commit it.', 15);
    s.wait(1800);
    s.cycle(s.main, 'Bash', 300);
    s.halfWrittenLine(s.main);
  },
};

const pipelineMix: Recipe = {
  name: 'pipelineMix',
  project: 3,
  style: STYLE_V201,
  mainModel: SONNET5,
  mainTtl: '1h',
  mainSystemTokens: 16_000,
  progressCopies: true,
  run(s) {
    const rng = s.rng;
    s.start('Pipeline');
    s.prompt('Profile the nightly pipeline and find the slow stage.', 200);
    startAttachments(s, true);
    s.wait(2000);
    for (const c of cycles(rng, 2)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    const gp = agent(s, { kind: 'resolved', spawn: { tool: 'Agent', subagentType: 'general-purpose' }, metaType: 'general-purpose', metaToolUseId: true, description: 'Profile stage timings', model: HAIKU, ttl: '1h', systemTokens: 9_800, globalRead: true });
    agentTurn(gp, 'Collect the stage timings from the last ten runs.', 4);
    const analyst = agent(s, { kind: 'resolved', spawn: { tool: 'Agent', subagentType: 'data-analyst' }, metaType: 'data-analyst', metaToolUseId: false, description: 'Analyse timings', model: MYSTERY, ttl: '5m', systemTokens: 8_700, globalRead: false });
    runAgentTurn(analyst, { prompt: agentPrompt(s, 'Find the outlier stage.'), promptTokens: 700, cycles: [{ tool: 'Bash', tokens: 2000 }, { tool: 'Read', tokens: 3000, opts: { noRequestId: true } }, { tool: 'Grep', tokens: 300, opts: { noRequestId: true } }], finalOutput: 900, reportTokens: 800 });
    s.invalidLine(analyst.chain as NonNullable<typeof analyst.chain>, '{"type":"progress","data":{"type":"hook_progress"}}{"type":"progress","data":{"type":"hook_progress"}}');
    s.final(s.main, rng.int(200, 800));
    s.endTurn();
    thinkGap(s);
    s.prompt('/model opus — now fix it properly.', 30);
    s.wait(2000);
    s.main.model = OPUS;
    s.cycle(s.main, 'Read', 2500, { breakReadTo: 0 }); // a model switch: the new model has no cache
    for (const c of cycles(rng, 3)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    const wf = agent(s, { kind: 'unknown', spawn: null, metaType: 'workflow-subagent', description: 'workflow step', model: HAIKU, ttl: '5m', systemTokens: 7_500, globalRead: false, workflowRun: `wf-${rng.hex(8)}` });
    agentTurn(wf, 'Run the lint step of the release workflow.', 2);
    s.final(s.main, rng.int(200, 700));
    s.endTurn();
  },
};

const headless: Recipe = {
  name: 'headless',
  project: 3,
  style: STYLE_SDK,
  mainModel: HAIKU,
  mainTtl: '5m',
  mainSystemTokens: 15_594,
  progressCopies: false,
  run(s) {
    const rng = s.rng;
    const task = 'You need to build a small KV store server over gRPC that records number values for string keys.';
    s.start(task);
    s.prompt(task, 700);
    startAttachments(s, false);
    let used = 0;
    const budget = (): void => {
      s.main.attach({ type: 'budget_usd', used: Math.round(used * 1e6) / 1e6, total: 5, remaining: Math.round((5 - used) * 1e6) / 1e6 }, 15);
      used += rng.int(8000, 25000) / 1e6;
    };
    budget();
    s.wait(1500);
    const n = rng.int(4, 7);
    for (let i = 0; i < n; i++) {
      const c = cycles(rng, 1)[0] as Cycle;
      s.cycle(s.main, c.tool, c.tokens, c.opts);
      budget();
      if (i === 1) s.main.attach({ type: 'task_reminder', content: [{ id: '1', subject: 'Install grpcio', description: 'Install grpcio system-wide', status: 'completed', blocks: [], blockedBy: [] }], itemCount: 1 }, 60);
    }
    s.final(s.main, rng.int(150, 400));
    s.endTurn();
  },
};

const longContext: Recipe = {
  name: 'longContext',
  project: 0,
  style: STYLE_V201,
  mainModel: SONNET,
  mainTtl: '5m',
  mainSystemTokens: 20_000,
  progressCopies: true,
  run(s) {
    const rng = s.rng;
    s.start('Audit');
    s.prompt('Audit every handler for missing auth checks; read them all.', 300);
    startAttachments(s, false);
    s.wait(2000);
    // big reads push the prompt past 200k tokens: long-context pricing for Sonnet 4.5
    for (let i = 0; i < 9; i++) s.cycle(s.main, 'Read', rng.int(18_000, 26_000));
    const gp = agent(s, { kind: 'resolved', spawn: { tool: 'Agent', subagentType: 'general-purpose' }, metaType: 'general-purpose', metaToolUseId: true, description: 'Check the admin routes', model: SONNET, ttl: '5m', systemTokens: 12_400, globalRead: true });
    agentTurn(gp, 'Check the admin routes for auth.', 3, true);
    s.final(s.main, rng.int(400, 1200));
    s.endTurn();
    s.wait(rng.int(7, 20) * MIN); // both the main thread and the agent expire
    s.prompt('Resume the agent on the reporting routes.', 50);
    s.wait(2000);
    agentTurn(gp, 'Now the reporting routes.', 2);
    s.final(s.main, rng.int(200, 500));
    s.endTurn();
    const suggest = agent(s, { kind: 'prompt_suggestion', spawn: null, metaType: null, description: 'prompt suggestion', model: HAIKU, ttl: '5m', systemTokens: 3_100, globalRead: false, idPrefix: 'aprompt_suggestion-' });
    runAgentTurn(suggest, { prompt: 'Suggest the next prompt.', promptTokens: 1500, cycles: [], finalOutput: 40, reportTokens: 0 });
    thinkGap(s);
    s.prompt('Stop.', 5);
    s.synthetic(s.main, 'No response requested.', false);
    s.endTurn();
    thinkGap(s);
    s.prompt('Fork a copy to try the middleware approach.', 40);
    s.wait(1500);
    const fork = agent(s, { kind: 'unknown', spawn: null, metaType: 'fork', description: 'middleware approach', model: SONNET, ttl: '5m', systemTokens: 20_000, globalRead: true });
    agentTurn(fork, 'Try the middleware approach.', 2);
    s.final(s.main, rng.int(100, 400));
    s.endTurn();
  },
};

const slowHour: Recipe = {
  name: 'slowHour',
  project: 2,
  style: STYLE_V201,
  mainModel: OPUS,
  mainTtl: '1h',
  mainSystemTokens: 21_000,
  progressCopies: true,
  run(s) {
    const rng = s.rng;
    s.start('Slow');
    s.prompt('Refactor the session store into smaller modules.', 180);
    startAttachments(s, false);
    s.wait(2000);
    for (const c of cycles(rng, 3)) s.cycle(s.main, c.tool, c.tokens, c.opts);
    const plan = agent(s, { kind: 'resolved', spawn: { tool: 'Agent', subagentType: 'Plan' }, metaType: 'Plan', metaToolUseId: true, description: 'Plan the split', model: SONNET, ttl: '5m', systemTokens: 11_000, globalRead: true });
    agentTurn(plan, 'Plan how to split the session store.', 3);
    s.final(s.main, rng.int(200, 700));
    s.endTurn();
    for (let k = 0; k < 3; k++) {
      s.wait(rng.int(10, 50) * MIN); // over 5 minutes but within the 1-hour TTL
      turn(s, 'Next module.', rng.int(2, 4));
    }
    compact(s);
    s.wait(rng.int(2, 4) * MIN);
    turn(s, 'Continue after the compaction.', 3);
    s.wait(rng.int(61, 200) * MIN);
    s.prompt('Morning. Where were we?', 20);
    s.main.attach({ type: 'hook_additional_context', content: [`Session resumed at ${new Date(s.now).toISOString()}`], hookName: 'UserPromptSubmit', toolUseID: rng.uuid(), hookEvent: 'UserPromptSubmit' }, 40);
    s.wait(2000);
    s.cycle(s.main, 'Read', 2000);
    s.cycle(s.main, 'Grep', 300, { breakReadTo: 21_000 }); // the re-inserted hook context invalidates the prefix
    s.final(s.main, rng.int(100, 400));
    s.endTurn();
    s.invalidLine(s.main, '{"type":"system","subtype":"turn_duration","durationMs":');
    s.wait(rng.int(3, 9) * MIN);
    compact(s);
    turn(s, 'Finish the last module.', 2);
  },
};

export const RECIPES: readonly Recipe[] = [shopFeature, planLoop, planLoop1h, spotterV39, pipelineMix, headless, longContext, slowHour];
