/**
 * `replay session … --json` held against an independent reference (test/helpers/reference-session.ts,
 * written from SPEC §6.2 and docs/session-replay.md, not from src/replay): per request and strategy
 * the prompt, cacheable prefix, read, attachment tokens, process, gap and weight, the §6.1 totals,
 * and `recorded`'s fidelity, for every strategy (reinject with its default attachment). On small
 * transcripts written here (an attachment repeated across rounds, a gap over 5 minutes, a
 * compaction, a model switch, a subagent writing 1-hour tokens, two models writing at different TTLs) and on
 * three small real sessions.
 * The invariants every real main chain keeps are in session-real.test.ts, which replays them all.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { assistant, cli, REAL_LOGS, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { conversationScale, fidelity, readChain, replay, type RefStrategy } from '../helpers/reference-session.js';

const STRATEGIES: RefStrategy[] = ['recorded', 'dedupe-attachments', 'volatile-prefix', 'reinject', 'cold-replay'];
const SESSION = 'cafe0001-0000-4000-8000-000000000001';

function productReplay(file: string, strategies: string[] = STRATEGIES): any {
  const res = cli(['replay', 'session', file, '--json', '--strategy', strategies.join(',')], { HOME: tempDir('cachelens-home-') });
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout);
}

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)), `${what}: reference ${a}, product ${b}`);

/** Every request and total of `recorded`, `dedupe-attachments` and `cold-replay`, and recorded's fidelity. */
function compare(file: string, subagent = false): any {
  const ref = readChain(file, { subagent });
  const j = productReplay(file);
  const name = file.split('/').pop();
  assert.equal(j.chain.requests, ref.requests.length, `${name}: requests`);
  assert.equal(j.chain.rounds, ref.rounds, `${name}: rounds`);
  assert.equal(j.calibration.prefix_tokens, ref.prefix, `${name}: prefix from request 1 only`);
  for (const s of STRATEGIES) {
    if (s === 'reinject' && !ref.requests.some((q) => q.context.some((m) => m.hash))) {
      assert.deepEqual(j.not_run.map((n: { strategy: string }) => n.strategy), ['reinject'], `${name}: nothing to re-inject`);
      continue;
    }
    const r = replay(ref, s);
    const p = j.strategies[s];
    const turns = j.turns.filter((t: any) => t.strategy === s);
    assert.equal(turns.length, r.turns.length, `${name} ${s}: turns`);
    for (const t of r.turns) {
      const q = turns[t.request - 1];
      const at = `${name} ${s} request ${t.request}`;
      assert.deepEqual(
        { round: q.round, process: q.process, warm: q.warm, input: q.input_tokens, cacheable: q.cacheable_tokens, read: q.read_tokens, context: q.context_tokens, seen: q.already_seen_tokens, gap: q.gap_s, ttl: q.ttl },
        { round: t.round, process: t.process, warm: t.warm, input: t.input_tokens, cacheable: t.cacheable_tokens, read: t.read_tokens, context: t.context_tokens, seen: t.already_seen_tokens, gap: t.gap_s === null ? null : Math.round(t.gap_s), ttl: t.ttl },
        at,
      );
      close(t.weight, q.weight, `${at} weight`);
      close(t.usd, q.usd, `${at} usd`);
    }
    for (const k of ['requests', 'warm_requests', 'processes', 'input_tokens', 'cacheable_tokens', 'context_tokens', 'already_seen_tokens', 'output_tokens'] as const) {
      assert.equal(p[k], r[k], `${name} ${s}: ${k}`);
    }
    for (const k of ['cacheable_ratio', 'weight', 'usd'] as const) close(r[k], p[k], `${name} ${s}: ${k}`);
    if (r.uncached_per_warm_turn === null) assert.equal(p.uncached_per_warm_turn, null, `${name} ${s}: no warm turn`);
    else close(r.uncached_per_warm_turn, p.uncached_per_warm_turn, `${name} ${s}: uncached per warm turn`);
  }
  const f = fidelity(ref, replay(ref, 'recorded'));
  assert.equal(j.fidelity.prompt.n, f.prompt.n, `${name}: fidelity n`);
  assert.equal(j.fidelity.cache_read.n, f.cache_read.n, `${name}: fidelity reads n`);
  if (f.prompt.n) {
    close(f.prompt.median, j.fidelity.prompt.median_rel_error, `${name}: prompt median`);
    close(f.prompt.p90, j.fidelity.prompt.p90_rel_error, `${name}: prompt p90`);
  }
  if (f.cache_read.n) {
    close(f.cache_read.median, j.fidelity.cache_read.median_rel_error, `${name}: read median`);
    close(f.cache_read.p90, j.fidelity.cache_read.p90_rel_error, `${name}: read p90`);
  }
  return j;
}

let clock = Date.parse('2026-03-01T10:00:00Z');
const at = (advanceS = 2) => new Date((clock += advanceS * 1000)).toISOString();

function attachmentLine(a: object, agentId?: string): object {
  return { type: 'attachment', sessionId: SESSION, timestamp: at(0), cwd: '/work/demo', isSidechain: Boolean(agentId), ...(agentId ? { agentId } : {}), uuid: `a-${clock}-${Math.random()}`, attachment: a };
}
function toolResult(id: string, text: string, agentId?: string): object {
  return {
    type: 'user', sessionId: SESSION, timestamp: at(1), cwd: '/work/demo', isSidechain: Boolean(agentId), ...(agentId ? { agentId } : {}), uuid: `t-${clock}`,
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: text }] },
  };
}

const SKILLS = { type: 'skill_listing', content: '- deep-research: fan out web searches and write a cited report\n- dataviz: charts and plots in any medium', skillCount: 2 };

/** A main chain: a skill listing repeated every round, a 6-minute gap, a compaction, a switch to Haiku and back; and a subagent writing 1-hour tokens. */
function syntheticCorpus(): { main: string; agent: string } {
  clock = Date.parse('2026-03-01T10:00:00Z');
  let n = 0;
  const req = (u: { in?: number; w5?: number; w1h?: number; r?: number; out?: number }, content: object[], model?: string, agentId?: string) =>
    assistant({ session: SESSION, msg: `msg_${++n}`, t: at(3), u: { out: 40, ...u }, content, model, agentId });
  const main: object[] = [
    userPrompt(SESSION, at(), 'Find where the retry budget is set and explain it.'),
    attachmentLine(SKILLS),
    attachmentLine({ type: 'budget_usd', used: 0, total: 5, remaining: 5 }),
    req({ in: 3, w5: 9000 }, [{ type: 'tool_use', id: 'toolu_1', name: 'Grep', input: { pattern: 'retryBudget', path: 'src' } }]),
    toolResult('toolu_1', 'src/net/retry.ts:12: export const retryBudget = 3;\nsrc/net/client.ts:40: if (tries > retryBudget) throw err;'),
    // a screenshot in a tool result: 1,600 tokens, flattened by cold-replay as such
    {
      type: 'user', sessionId: SESSION, timestamp: at(1), cwd: '/work/demo', uuid: `img-${clock}`,
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Screenshot:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo' + 'A'.repeat(200) } }] }] },
    },
    // an API error Claude Code wrote locally: neither a request nor a message
    assistant({ session: SESSION, msg: 'msg_synthetic', t: at(1), model: '<synthetic>', u: {}, content: [{ type: 'text', text: 'API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}' }] }),
    attachmentLine(SKILLS),
    req({ in: 1, w5: 200, r: 9003 }, [{ type: 'text', text: 'The retry budget is 3, set in src/net/retry.ts and enforced in the client loop.' }]),
    // a gap over the 5-minute TTL, a new round, the same listing again
    { ...userPrompt(SESSION, at(400), 'Raise it to 5 and add a test.') },
    attachmentLine(SKILLS),
    req({ in: 2, w5: 9400 }, [{ type: 'tool_use', id: 'toolu_2', name: 'Edit', input: { file_path: 'src/net/retry.ts', old_string: '= 3', new_string: '= 5' } }]),
    toolResult('toolu_2', 'The file src/net/retry.ts has been updated.'),
    // an automatic compaction mid-round: the conversation and the attachments in context start again
    { type: 'system', subtype: 'compact_boundary', sessionId: SESSION, timestamp: at(), content: 'Conversation compacted', uuid: 'cb-1' },
    { type: 'user', isCompactSummary: true, sessionId: SESSION, timestamp: at(), uuid: 'cs-1', message: { role: 'user', content: 'Summary: the retry budget was raised from 3 to 5 in src/net/retry.ts.' } },
    req({ in: 1, w5: 2000, r: 7000 }, [{ type: 'text', text: 'Done: the budget is 5 now.' }]),
    userPrompt(SESSION, at(), 'Now run the tests.'),
    attachmentLine(SKILLS),
    req({ in: 3, w5: 2000, r: 7000 }, [{ type: 'tool_use', id: 'toolu_3', name: 'Bash', input: { command: 'npm test' } }]),
    toolResult('toolu_3', '12 passing\n0 failing'),
    req({ in: 2, w5: 300 }, [{ type: 'text', text: 'Quick check of the output.' }], 'claude-haiku-4-5-20251001'),
    req({ in: 1, w5: 100, r: 9000 }, [{ type: 'text', text: 'All 12 tests pass.' }]),
  ];
  const A = 'a5ub0001';
  const agent: object[] = [
    userPrompt(SESSION, at(), 'List the files under src/net.', A),
    attachmentLine(SKILLS, A),
    req({ in: 3, w1h: 6000 }, [{ type: 'tool_use', id: 'toolu_9', name: 'Glob', input: { pattern: 'src/net/*' } }], 'claude-sonnet-4-6', A),
    toolResult('toolu_9', 'src/net/retry.ts\nsrc/net/client.ts', A),
    req({ in: 1, w1h: 50, r: 6003 }, [{ type: 'text', text: 'Two files: retry.ts and client.ts.' }], 'claude-sonnet-4-6', A),
  ];
  const root = writeCorpus({
    [`projects/-work-demo/${SESSION}.jsonl`]: main,
    [`projects/-work-demo/${SESSION}/subagents/agent-${A}.jsonl`]: agent,
  });
  return { main: join(root, `projects/-work-demo/${SESSION}.jsonl`), agent: join(root, `projects/-work-demo/${SESSION}/subagents/agent-${A}.jsonl`) };
}

test('synthetic main chain: repeated attachments, a gap over the TTL, a compaction mid-round, a model switch, an image and a <synthetic> line agree with the reference', () => {
  const { main } = syntheticCorpus();
  const j = compare(main);
  // the fixture does what it says: the listing is re-sent, the gap expires, dedupe sends less
  assert.ok(j.strategies.recorded.already_seen_tokens > 0);
  assert.equal(j.strategies['dedupe-attachments'].already_seen_tokens, 0);
  assert.ok(j.strategies['dedupe-attachments'].input_tokens < j.strategies.recorded.input_tokens);
  assert.ok(j.turns.some((t: any) => t.strategy === 'recorded' && t.cache === 'expired'));
  assert.equal(j.chain.compactions, 1);
});

test('synthetic subagent writing 1-hour tokens agrees with the reference', () => {
  const { agent } = syntheticCorpus();
  const j = compare(agent, true);
  assert.ok(j.turns.filter((t: any) => t.strategy === 'recorded').slice(1).every((t: any) => t.ttl === '1h'));
});

test('--calibrate K: the scale is fitted on requests 2…K+1 (the window crossing the compaction), every recorded prompt is framing + conversation × scale, fidelity from K+2', () => {
  const { main } = syntheticCorpus();
  const ref = readChain(main);
  const K = 3; // requests 2–4: request 4 is the first after the compaction
  const scale = conversationScale(ref, K)!;
  const res = cli(['replay', 'session', main, '--json', '--strategy', 'recorded', '--calibrate', String(K)], { HOME: tempDir('cachelens-home-') });
  assert.equal(res.code, 0, res.stderr);
  const j = JSON.parse(res.stdout);
  close(scale, j.calibration.conversation.scale, 'scale');
  assert.equal(j.fidelity.from, K + 2);
  const rec = replay(ref, 'recorded');
  const turns = j.turns.filter((t: any) => t.strategy === 'recorded');
  rec.turns.forEach((t, i) => assert.equal(turns[i].input_tokens, Math.round(ref.prefix + (t.input_tokens - ref.prefix) * scale), `request ${i + 1}`));
});

/**
 * A main chain whose two models write at different TTLs, alternating: Opus at 1 hour, Haiku at 5 minutes, the gaps
 * between them (10 and 15 minutes) past 5 minutes and within the hour. Each model's cache lives by its own latest
 * write, so Opus reads after each gap and Haiku expires; the chain's latest write (the other model's) would turn
 * both around. Haiku's first request writes nothing: it takes the chain's latest write (Opus's 1 hour).
 */
function ttlCorpus(): string {
  clock = Date.parse('2026-03-02T10:00:00Z');
  let n = 0;
  const OPUS = 'claude-opus-4-6';
  const HAIKU = 'claude-haiku-4-5-20251001';
  const req = (advanceS: number, model: string, u: { in?: number; w5?: number; w1h?: number; r?: number }, text: string) =>
    assistant({ session: SESSION, msg: `msg_ttl_${++n}`, t: at(advanceS), model, u: { out: 30, ...u }, content: [{ type: 'text', text }] });
  const main: object[] = [
    userPrompt(SESSION, at(), 'Summarise the open incidents, then triage the new one.'),
    attachmentLine(SKILLS),
    req(3, OPUS, { in: 3, w1h: 9000 }, 'Two incidents are open: the payments flake and the orders timeout.'),
    req(30, HAIKU, { in: 9100 }, 'Triage: the orders timeout is a P2.'),
    req(20, HAIKU, { in: 2, w5: 9150 }, 'Labelled the issue P2.'),
    userPrompt(SESSION, at(600), 'Any news on the payments flake?'),
    req(3, OPUS, { in: 2, r: 9000, w1h: 300 }, 'It failed again at 10:09; the retry did not help.'),
    req(10, HAIKU, { in: 2, w5: 9500 }, 'Triage: payments flake raised to P1.'),
    userPrompt(SESSION, at(900), 'And the orders timeout?'),
    req(3, OPUS, { in: 2, r: 9300, w1h: 250 }, 'Fixed by the pool size change; closing it.'),
    req(10, HAIKU, { in: 2, w5: 9800 }, 'Closed the orders issue.'),
  ];
  const root = writeCorpus({ [`projects/-work-demo/${SESSION}.jsonl`]: main });
  return join(root, `projects/-work-demo/${SESSION}.jsonl`);
}

test("models writing at different TTLs (Opus 1 h, Haiku 5 m, alternating): each request's cache lives by its model's latest write, else the chain's; agrees with the reference", () => {
  const j = compare(ttlCorpus());
  const rec = j.turns.filter((t: any) => t.strategy === 'recorded');
  // the fixture does what it says: gaps past 5 minutes and within the hour, Opus read at 1 h, Haiku expired at 5 m,
  // Haiku's first two requests (before its own write) at the chain's 1 h
  assert.deepEqual(rec.map((t: any) => [t.model.includes('haiku') ? 'haiku' : 'opus', t.ttl, t.cache]), [
    ['opus', '5m', 'none'], ['haiku', '1h', 'none'], ['haiku', '1h', 'read'],
    ['opus', '1h', 'read'], ['haiku', '5m', 'expired'],
    ['opus', '1h', 'read'], ['haiku', '5m', 'expired'],
  ]);
  assert.ok(rec.filter((t: any) => t.gap_s !== null && t.gap_s > 30).every((t: any) => t.gap_s > 300 && t.gap_s < 3600));
});

const REAL = [
  'condense-chat-minmax-bench/projects/-app/21e0d696-d7a8-4fdf-b1b8-2b63a9e1b314.jsonl',
  'chiphuyen-sniffly/projects/-Users-chip-dev-ai-music/d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl',
];
const REAL_AGENT = 'marot-spotter/projects/-home-USER-projects-spotter-worktrees-spotter-fum/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl';

test('small real sessions agree with the reference', () => {
  for (const f of REAL) compare(join(REAL_LOGS, f));
  compare(join(REAL_LOGS, REAL_AGENT), true);
});
