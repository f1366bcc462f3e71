/**
 * SPEC §1.2 – §1.6 (line types, requests and de-duplication, chains, agent type, attachments), checked by
 * hand on corpora of a few lines each: what `summary --json` counts, and the store's `requests`, `chains`,
 * `attachments` and `line_counts` rows (read with `query FILE.sql`), against what SPEC's words give.
 * Opus 4.6 weights 1 / 1.25 / 2 / 0.1 / 5 at $5 per million.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assistant, cli, summaryJson, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { near } from '../analyses/helpers/fixtures.js';
import { at } from './corpora.js';

const S = '5bec0000-0000-4000-8000-0000000004c1';
const R = '5bec0000-0000-4000-8000-0000000004c2';
const P = 'projects/-work-demo';

/** The rows of `sql` run against the store of `dir`'s logs. */
function rows(dir: string, sql: string): any[] {
  const file = join(tempDir('cachelens-spec-sql-'), 'q.sql');
  writeFileSync(file, sql);
  const r = cli(['query', file, dir, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).rows;
}

const line = (type: string, s: number, more: Record<string, unknown> = {}) => ({ type, sessionId: S, cwd: '/work/demo', timestamp: at(s), uuid: `${type}-${s}`, ...more });

test('§1.2: of every line type SPEC lists, only an assistant line with message.usage is a request; the others are counted per type and subtype, none skipped', () => {
  // 17 lines, 1 request (m1: in 10, w5 1,000, out 20: weight 10 + 1,250 + 100 = 1,360).
  // Not requests: an assistant line without usage, a <synthetic> one (SPEC §1.3: a local error message; summary
  // counts it as synthetic), and every other type. Unknown types and fields are counted, never an error.
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      userPrompt(S, at(-5)),
      assistant({ session: S, msg: 'm1', t: at(0), u: { in: 10, w5: 1_000, out: 20 } }),
      { ...line('assistant', 1), message: { id: 'm-nousage', role: 'assistant', model: 'claude-opus-4-6', content: [{ type: 'text', text: 'x' }] } },
      assistant({ session: S, msg: 'm-syn', t: at(2), model: '<synthetic>', u: {} }),
      line('system', 3, { subtype: 'turn_duration', durationMs: 3000 }),
      line('system', 4, { subtype: 'api_error', level: 'error' }),
      line('system', 5, { subtype: 'local_command', content: '<local-command-stdout>ok</local-command-stdout>' }),
      line('attachment', 6, { attachment: { type: 'hook_success', content: 'ok' } }),
      line('attachment', 7, { attachment: { type: 'budget_usd', used: 1, total: 5 } }),
      line('progress', 8, { data: { type: 'bash_progress', output: '' } }),
      line('progress', 9, { data: { type: 'hook_progress', hookName: 'x' } }),
      { type: 'summary', summary: 'a title', leafUuid: 'x' },
      { type: 'file-history-snapshot', messageId: 'x', snapshot: {} },
      { type: 'queue-operation', operation: 'enqueue', sessionId: S, timestamp: at(10) },
      { type: 'last-prompt', sessionId: S, lastPrompt: 'do the thing' },
      line('hologram', 11, { subtype: 'shimmer', novel: { deep: [1, 2] } }),
      { ...line('system', 12, { subtype: 'turn_duration' }), aFieldNoOneKnows: { x: 1 } },
    ],
  });
  const s = summaryJson([dir]);
  assert.equal(s.totals.requests, 1);
  assert.deepEqual([s.totals.input, s.totals.cache_write_5m, s.totals.output], [10, 1_000, 20]);
  near(s.totals.weight, 1_360, 'weight');
  assert.deepEqual([s.quality.lines, s.quality.skipped_lines, s.quality.synthetic, s.quality.usage_lines], [17, 0, 1, 1]);
  const out = cli(['summary', dir, '--db', ':memory:', '--timezone', 'UTC']);
  assert.match(out.stdout, /^Data quality: 1 file, 17 lines, 0 skipped, 0 duplicate usage lines removed, 1 <synthetic> line ignored$/m);
  const counts = rows(dir, "select type, coalesce(subtype, '') as subtype, sum(n)::int as n from line_counts group by all order by type, subtype");
  assert.deepEqual(
    counts.map((c) => `${c.type}/${c.subtype}=${c.n}`),
    [
      'assistant/=3',
      'attachment/budget_usd=1',
      'attachment/hook_success=1',
      'file-history-snapshot/=1',
      'hologram/shimmer=1',
      'last-prompt/=1',
      'progress/bash_progress=1',
      'progress/hook_progress=1',
      'queue-operation/=1',
      'summary/=1',
      'system/api_error=1',
      'system/local_command=1',
      'system/turn_duration=2',
      'user/=1',
    ],
  );
});

/**
 * Copies of responses, every way SPEC §1.3 names:
 *   m1  one response as 3 lines (thinking, text, tool_use) at 0, 1, 2 s, out 4 → 30 → 90:        1 request, out 90, t 0 s
 *   m2  two copies that disagree (r 2,000 w5 500 out 10 / r 2,500 w5 700 out 5): field-wise max r 2,500 w5 700 out 10
 *   m3  two lines without requestId: one identity (message.id alone)
 *   m4  one message.id under two requestIds (rA, rB): two identities, two requests
 *   m5  usage without the 5m/1h split, w 400: w5 400, w1h 0, split_missing
 *   resumed session R's file repeats m1 (its last line, at 2 s) and has its own r1:                m1 once, in S's chain
 *   s1  a subagent's response in its own file and as an agent_progress copy in S's main file:     once, in the subagent's chain
 * lines: 12 in S's file, 2 in the subagent's, 3 in R's = 17.
 * requests: m1 m2 m3 m4·rA m4·rB m5 r1 s1 = 8; usage lines 3 + 2 + 2 + 2 + 1 + 2 (R) + 1 + 1 (progress) = 14; 6 removed.
 * tokens: in 10 (m1); out 90 + 10 + 3 + 2 + 2 + 1 + 7 + 6 = 121; r 2,500; w5 2,000 + 700 + 100 + 100 + 100 + 400 + 300 + 800 = 4,500
 */
function copies(): Record<string, object[]> {
  const m1 = (s: number, out: number, block: string) =>
    assistant({ session: S, msg: 'm1', t: at(s), u: { in: 10, w5: 2_000, out }, content: [{ type: block, ...(block === 'tool_use' ? { id: 'tu', name: 'Bash', input: {} } : { text: 'x' }) }] });
  const s1 = assistant({ session: S, msg: 's1', t: at(40), agentId: 'a1', u: { w5: 800, out: 6 } });
  return {
    [`${P}/${S}.jsonl`]: [
      userPrompt(S, at(-5)),
      m1(0, 4, 'thinking'),
      m1(1, 30, 'text'),
      m1(2, 90, 'tool_use'),
      assistant({ session: S, msg: 'm2', t: at(10), u: { r: 2_000, w5: 500, out: 10 } }),
      assistant({ session: S, msg: 'm2', t: at(11), u: { r: 2_500, w5: 700, out: 5 } }),
      assistant({ session: S, msg: 'm3', req: null, t: at(20), u: { w5: 100, out: 3 } }),
      assistant({ session: S, msg: 'm3', req: null, t: at(21), u: { w5: 100, out: 3 } }),
      assistant({ session: S, msg: 'm4', req: 'rA', t: at(25), u: { w5: 100, out: 2 } }),
      assistant({ session: S, msg: 'm4', req: 'rB', t: at(26), u: { w5: 100, out: 2 } }),
      assistant({ session: S, msg: 'm5', t: at(30), u: { w5: 400, out: 1, split: false } }),
      {
        type: 'progress', sessionId: S, cwd: '/work/demo', timestamp: at(40), uuid: 'pg1', parentToolUseID: 'tu', toolUseID: 'agent_msg_x',
        data: { type: 'agent_progress', agentId: 'a1', prompt: 'sub task', normalizedMessages: [], message: { type: 'assistant', timestamp: at(40), uuid: s1.uuid, requestId: s1.requestId, message: s1.message } },
      },
    ],
    [`${P}/${S}/subagents/agent-a1.jsonl`]: [userPrompt(S, at(39), 'sub task', 'a1'), s1],
    [`${P}/${R}.jsonl`]: [
      { ...m1(2, 90, 'tool_use') },
      userPrompt(R, at(100)),
      assistant({ session: R, msg: 'r1', t: at(101), u: { w5: 300, out: 7 } }),
    ],
  };
}

test('§1.3: the copies of a response (its lines, a disagreeing copy, a resumed session, a progress copy) make one request of the field-wise maximum; a requestId apart makes two', () => {
  const dir = writeCorpus(copies());
  const s = summaryJson([dir]);
  assert.equal(s.totals.requests, 8);
  assert.deepEqual(
    [s.totals.input, s.totals.output, s.totals.cache_read, s.totals.cache_write_5m, s.totals.cache_write_1h],
    [10, 121, 2_500, 4_500, 0],
  );
  assert.deepEqual([s.quality.usage_lines, s.quality.duplicates_removed], [14, 6]);
  assert.match(cli(['summary', dir, '--db', ':memory:', '--timezone', 'UTC']).stdout, /^Data quality: 3 files, 17 lines, 0 skipped, 6 duplicate usage lines removed, 0 <synthetic> lines ignored$/m);
  // weight: in 10 + w5 4,500 × 1.25 + r 2,500 × 0.1 + out 121 × 5 = 10 + 5,625 + 250 + 605 = 6,490 = $0.03245
  near(s.totals.weight, 6_490, 'weight');
  near(s.totals.usd, 0.03245, 'USD');
  const req = rows(
    dir,
    "select message_id, coalesce(request_id, '') as request_id, session_id, chain_id, agent_id, t, output, cache_read, cache_write_5m, split_missing from requests order by message_id, request_id",
  );
  const got = Object.fromEntries(req.map((q) => [`${q.message_id}/${q.request_id}`, q]));
  assert.deepEqual(Object.keys(got), ['m1/req_m1', 'm2/req_m2', 'm3/', 'm4/rA', 'm4/rB', 'm5/req_m5', 'r1/req_r1', 's1/req_s1']);
  // m1: t the first line's (0 s), out the largest snapshot, in S's chain (not the resumed session's)
  assert.deepEqual([Number(got['m1/req_m1'].t), got['m1/req_m1'].output, got['m1/req_m1'].chain_id], [Date.parse(at(0)), 90, S]);
  assert.deepEqual([got['m2/req_m2'].cache_read, got['m2/req_m2'].cache_write_5m, got['m2/req_m2'].output], [2_500, 700, 10]);
  assert.deepEqual([got['m5/req_m5'].cache_write_5m, got['m5/req_m5'].split_missing], [400, true]);
  assert.equal(got['m1/req_m1'].split_missing, false);
  // the subagent file's line beats the main file's progress copy: the subagent's chain
  assert.equal(got['s1/req_s1'].agent_id, 'a1');
  assert.notEqual(got['s1/req_s1'].chain_id, S);
  assert.equal(got['r1/req_r1'].chain_id, R);
});

test('§1.3: a request seen only as an agent_progress copy is still counted once, in its agent\'s chain', () => {
  // the subagent file is missing: the progress copy is the only line of s1 (w5 800, out 6)
  const files = copies();
  delete files[`${P}/${S}/subagents/agent-a1.jsonl`];
  const dir = writeCorpus(files);
  const s = summaryJson([dir]);
  assert.equal(s.totals.requests, 8);
  const [q] = rows(dir, "select agent_id, chain_id, cache_write_5m, output from requests where message_id = 's1'");
  assert.deepEqual([q.agent_id, q.chain_id, q.cache_write_5m, q.output], ['a1', `${S}:a1`, 800, 6]);
});

test('§1.3: copies that disagree on the 5m/1h split of one write: the write is the largest, its 1-hour part the largest (at most the write), the rest 5-minute', () => {
  // SPEC §1.3 says the usage kept is the field-wise maximum, as "input and cache fields are equal on every line". Copies
  // whose split disagrees (w 1,000 as 5m 1,000 + 1h 0, and as 5m 0 + 1h 1,000) are outside that premise: a maximum of
  // each part would be 5m 1,000 + 1h 1,000, one write of 1,000 tokens billed twice. The product's recorded reading
  // (src/store/schema.ts groupsSelect; README.md, How it works, de-dup and price: the largest write, its largest 1-hour
  // part, the rest 5-minute):
  // w = max 1,000, w1h = min(max w1h, w) = 1,000, w5 = w − w1h = 0. Weight 1,000 × 2 = 2,000, not 1,250 + 2,000.
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      userPrompt(S, at(-5)),
      assistant({ session: S, msg: 'm1', t: at(0), u: { w5: 1_000 } }),
      assistant({ session: S, msg: 'm1', t: at(1), u: { w1h: 1_000 } }),
    ],
  });
  const s = summaryJson([dir]);
  assert.deepEqual([s.totals.requests, s.totals.cache_write_5m, s.totals.cache_write_1h], [1, 0, 1_000]);
  near(s.totals.weight, 2_000, 'weight');
});

test('§1.3: copies in two files that disagree: usage the maximum of each field, time the earliest, attribution the best-ranked copy\'s (subagent file > main file > progress copy) even when it is not the earliest', () => {
  // s2: a2's file (rank 2) at 50 s, w5 500 out 40, round 1 of a2's chain; its agent_progress copy in S's main file
  //   (rank 0) a second earlier, a streaming snapshot with out 8: one request of out 40 (the maximum), t 49 s (the
  //   earliest), in a2's chain and file. m7: S's main-file line (rank 1) at 60 s, w5 300 out 9; an agent_progress copy
  //   of it in R's transcript (rank 0, agent b1) at 59 s with out 3: S's chain and file, out 9, t 59 s.
  const s2 = assistant({ session: S, msg: 's2', t: at(50), agentId: 'a2', u: { w5: 500, out: 40 } });
  const small = assistant({ session: S, msg: 's2', t: at(49), agentId: 'a2', u: { w5: 500, out: 8 } });
  const m7 = assistant({ session: S, msg: 'm7', t: at(60), u: { w5: 300, out: 9 } });
  const m7early = assistant({ session: S, msg: 'm7', t: at(59), u: { w5: 300, out: 3 } });
  const progress = (session: string, s: number, agentId: string, copy: any) => ({
    type: 'progress', sessionId: session, cwd: '/work/demo', timestamp: at(s), uuid: `pg-${s}`,
    data: { type: 'agent_progress', agentId, message: { type: 'assistant', timestamp: copy.timestamp, uuid: copy.uuid, requestId: copy.requestId, message: copy.message } },
  });
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [userPrompt(S, at(0)), progress(S, 49, 'a2', small), m7],
    [`${P}/${S}/subagents/agent-a2.jsonl`]: [userPrompt(S, at(45), 'sub task', 'a2'), s2],
    [`${P}/${R}.jsonl`]: [userPrompt(R, at(58)), progress(R, 59, 'b1', m7early)],
  });
  const got = rows(dir, 'select message_id, chain_id, f.path, round, output, t from requests join files f using (file_id) order by message_id');
  assert.deepEqual(
    got.map((q) => [q.message_id, q.chain_id, q.path.slice(q.path.indexOf('/projects/') + 1), q.round, q.output, Number(q.t)]),
    [
      ['m7', S, `${P}/${S}.jsonl`, 1, 9, Date.parse(at(59))],
      ['s2', `${S}:a2`, `${P}/${S}/subagents/agent-a2.jsonl`, 1, 40, Date.parse(at(49))],
    ],
  );
});

test('§1.3: the 5m/1h split of copies that disagree, in the reader\'s merge of one file\'s copies and in the de-dup\'s of two files\'', () => {
  // one write of 1,000: as 5m 1,000 (no split) and as 1h 1,000. README (How it works, de-dup and price): the largest
  // write, its largest 1-hour part, the rest 5-minute: 5m 0, 1h 1,000. In one file the reader merges the copies
  // (src/ingest/usage.ts mergeWrite: the observation is already split so); in two files the store's de-dup does
  // (src/store/schema.ts groupsSelect). The append run's merge (src/ingest/delta.ts newRequest) is
  // test/ingest/delta.test.ts's, over a store file.
  const noSplit = (s: number) => assistant({ session: S, msg: 'm1', t: at(s), u: { w5: 1_000, split: false } });
  const hour = (s: number) => assistant({ session: S, msg: 'm1', t: at(s), u: { w1h: 1_000 } });
  const one = writeCorpus({ [`${P}/${S}.jsonl`]: [userPrompt(S, at(-5)), noSplit(0), hour(1)] });
  assert.deepEqual(rows(one, 'select cache_write::int as w, cache_write_5m::int as w5, cache_write_1h::int as w1h from observations').map((o) => [o.w, o.w5, o.w1h]), [[1_000, 0, 1_000]]);
  const two = writeCorpus({ [`${P}/${S}.jsonl`]: [userPrompt(S, at(-5)), noSplit(0)], [`${P}/${R}.jsonl`]: [userPrompt(R, at(-5)), hour(1)] });
  assert.deepEqual(rows(two, 'select cache_write::int as w, cache_write_5m::int as w5, cache_write_1h::int as w1h from observations order by w1h').map((o) => [o.w, o.w5, o.w1h]), [[1_000, 1_000, 0], [1_000, 0, 1_000]]);
  const s = summaryJson([two]);
  assert.deepEqual([s.totals.requests, s.totals.cache_write_5m, s.totals.cache_write_1h], [1, 0, 1_000]);
});

const V = '5bec0000-0000-4000-8000-0000000004c3';
/** session ids that sort last and first by path */
const SORTS_LAST = 'ffff0000-0000-4000-8000-0000000004c4';
const SORTS_FIRST = '00000000-0000-4000-8000-0000000004c5';

test('§1.4: a chain per main thread, per subagent (v2.0 and v2.1 files, a workflow run) and per v1.x inline sidechain root; requests ordered by timestamp; a compaction starts a segment', () => {
  // main S, lines written out of time order: m2 (t 100 s, r 1,000 w5 200) before m1 (t 0, w5 1,000). By timestamp
  //   m1 is cold 1,000 and m2 growth 200 (rw = min(200, max(0, 1,000 − 1,000)) = 0); by file order m2 would be cold.
  //   compact_boundary at 150 s, then m3 (t 160 s, r 1,200 w5 300): the first of segment 1, cold 300.
  // v2.0 agent-b20.jsonl at project level, v2.1 S/subagents/agent-b21.jsonl, S/subagents/workflows/run1/agent-bw.jsonl:
  //   three subagent chains of session S (sessionId in a subagent file is the parent's).
  // v1.x session V: main m-v1 → m-v2, and two inline sidechains (isSidechain, no agentId) rooted at sa and sb, each
  //   of two requests linked by parentUuid: 3 chains, the sidechains kind sidechain.
  // chains: S main, 3 subagents, V main, 2 sidechains = 7; requests 3 + 3 + 2 + 4 = 12.
  const sub = (id: string, msg: string, s: number) => [userPrompt(S, at(s - 1), 'sub task', id), assistant({ session: S, msg, t: at(s), agentId: id, u: { w5: 500 } })];
  const v = (uuid: string, parent: string | null, side: boolean, extra: Record<string, unknown>) => ({ sessionId: V, cwd: '/work/v1', isSidechain: side, parentUuid: parent, uuid, ...extra });
  const va = (msg: string, s: number, parent: string, side: boolean) => ({ ...assistant({ session: V, msg, t: at(s), u: { w5: 100 }, cwd: '/work/v1' }), ...v(`uu-${msg}`, parent, side, {}) });
  const vu = (uuid: string, s: number, side: boolean) => v(uuid, null, side, { type: 'user', timestamp: at(s), message: { role: 'user', content: side ? 'sub task' : 'go' } });
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      userPrompt(S, at(-5)),
      assistant({ session: S, msg: 'm2', t: at(100), u: { r: 1_000, w5: 200 } }),
      assistant({ session: S, msg: 'm1', t: at(0), u: { w5: 1_000 } }),
      { type: 'system', subtype: 'compact_boundary', sessionId: S, cwd: '/work/demo', timestamp: at(150), uuid: 'cb', content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: 1_200 } },
      assistant({ session: S, msg: 'm3', t: at(160), u: { r: 1_200, w5: 300 } }),
    ],
    [`${P}/agent-b20.jsonl`]: sub('b20', 'b20-1', 20),
    [`${P}/${S}/subagents/agent-b21.jsonl`]: sub('b21', 'b21-1', 30),
    [`${P}/${S}/subagents/workflows/run1/agent-bw.jsonl`]: sub('bw', 'bw-1', 40),
    [`projects/-work-v1/${V}.jsonl`]: [
      vu('p1', 0, false),
      va('v1', 1, 'p1', false),
      vu('sa', 2, true),
      va('sa1', 3, 'sa', true),
      vu('sb', 4, true),
      va('sb1', 5, 'sb', true),
      va('sa2', 6, 'uu-sa1', true),
      va('sb2', 7, 'uu-sb1', true),
      va('v2', 8, 'uu-v1', false),
    ],
  });
  const chains = rows(dir, 'select chain_id, session_id, kind, requests::int as requests, compactions::int as compactions from chains order by chain_id');
  assert.deepEqual(
    chains.map((c) => [c.chain_id, c.session_id, c.kind, c.requests, c.compactions]),
    [
      [S, S, 'main', 3, 1],
      [`${S}:b20`, S, 'subagent', 1, 0],
      [`${S}:b21`, S, 'subagent', 1, 0],
      [`${S}:bw`, S, 'subagent', 1, 0],
      [V, V, 'main', 2, 0],
      [`${V}:side:sa`, V, 'sidechain', 2, 0],
      [`${V}:side:sb`, V, 'sidechain', 2, 0],
    ],
  );
  const r = cli(['anatomy', dir, '--chain', S, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    JSON.parse(r.stdout).requests.map((q: any) => [q.class, q.cold, q.growth]),
    [['cold', 1_000, 0], ['growth', 0, 200], ['cold', 300, 0]],
  );
});

test('§1.4: a resumed session\'s copies of the earlier session (under its own sessionId, written later) stay in the earlier chain; its own prompts and requests make its chain', () => {
  // S: P1 (0 s), m1 (1 s, w5 1,000), P2 (10 s), m2 (11 s, r 1,000 w5 200): 2 rounds, 2 requests.
  // R resumes S: the same lines (uuids, message.id and requestId kept) under sessionId R, 600 s later, then P3 (700 s)
  //   and r1 (701 s, r 1,200 w5 100). De-dup keeps m1, m2 once, in S's chain, at their first time (1 s, 11 s) (§1.3);
  //   R's chain holds r1 alone, and its copied prompts are S's rounds (docs/store.md, Resumed sessions' copies): 1 round.
  const lines = [
    { ...userPrompt(S, at(0)), uuid: 'p1' },
    { ...assistant({ session: S, msg: 'm1', t: at(1), u: { w5: 1_000 } }), uuid: 'a1' },
    { ...userPrompt(S, at(10), 'next'), uuid: 'p2' },
    { ...assistant({ session: S, msg: 'm2', t: at(11), u: { r: 1_000, w5: 200 } }), uuid: 'a2' },
  ];
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: lines,
    [`${P}/${R}.jsonl`]: [
      ...lines.map((l) => ({ ...l, sessionId: R, timestamp: at((Date.parse(l.timestamp as string) - Date.parse(at(0))) / 1000 + 600) })),
      { ...userPrompt(R, at(700), 'again'), uuid: 'p3' },
      { ...assistant({ session: R, msg: 'r1', t: at(701), u: { r: 1_200, w5: 100 } }), uuid: 'a3' },
    ],
  });
  assert.equal(summaryJson([dir]).totals.requests, 3);
  const req = rows(dir, 'select message_id, chain_id, t from requests order by message_id');
  assert.deepEqual(req.map((q) => [q.message_id, q.chain_id, Number(q.t)]), [['m1', S, Date.parse(at(1))], ['m2', S, Date.parse(at(11))], ['r1', R, Date.parse(at(701))]]);
  const chains = rows(dir, 'select chain_id, requests::int as requests, rounds::int as rounds from chains order by chain_id');
  assert.deepEqual(chains.map((c) => [c.chain_id, c.requests, c.rounds]), [[S, 2, 2], [R, 1, 1]]);
});

/** The `requests` and `chains` rows that say who owns what, from the store `db` (':memory:' for a cold run). */
function owners(dir: string, db = ':memory:'): { requests: string[][]; chains: (string | number)[][] } {
  const file = join(tempDir('cachelens-spec-sql-'), 'q.sql');
  const ask = (sql: string) => {
    writeFileSync(file, sql);
    const r = cli(['query', file, dir, '--db', db, '--timezone', 'UTC', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).rows as any[];
  };
  return {
    requests: ask('select message_id, chain_id, f.path from requests join files f using (file_id) order by message_id').map((q) => [q.message_id, q.chain_id, q.path.slice(q.path.lastIndexOf('/') + 1)]),
    chains: ask('select chain_id, requests::int as requests, rounds::int as rounds from chains order by chain_id').map((c) => [c.chain_id, c.requests, c.rounds]),
  };
}

for (const [early, late] of [[SORTS_LAST, SORTS_FIRST], [SORTS_FIRST, SORTS_LAST]]) {
  test(`§1.3/§1.4: a resumed session's copies at the very same time, under its own sessionId, stay the earlier session's whatever the files are called (${early.slice(0, 4)}… resumed as ${late.slice(0, 4)}…), cold and appended`, () => {
    // early: P1 (0 s), m1 (1 s, w5 1,000). late resumes it: copies of P1 and m1 with the same uuid AND the same
    // timestamps under sessionId `late`, then P2 (100 s) and m2 (101 s). The copies tie on rank and time; the file that
    // ends first (early's, at 1 s; late's runs to 101 s) owns them (src/store/schema.ts fileLastTimes), as README and
    // docs/session-replay.md say: m1 and round 1 are early's, late has m2 and 1 round. By path alone one order of names
    // moved m1 and its round into late's chain.
    const p1 = { ...userPrompt(early, at(0)), uuid: 'p1' };
    const m1 = { ...assistant({ session: early, msg: 'm1', t: at(1), u: { w5: 1_000 } }), uuid: 'a1' };
    const copies = [{ ...p1, sessionId: late }, { ...m1, sessionId: late }];
    const own = [{ ...userPrompt(late, at(100), 'again'), uuid: 'p2' }, { ...assistant({ session: late, msg: 'm2', t: at(101), u: { r: 1_000, w5: 100 } }), uuid: 'a2' }];
    const want = {
      requests: [['m1', early, `${early}.jsonl`], ['m2', late, `${late}.jsonl`]],
      chains: [[early, 1, 1], [late, 1, 1]].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    };
    const cold = writeCorpus({ [`${P}/${early}.jsonl`]: [p1, m1], [`${P}/${late}.jsonl`]: [...copies, ...own] });
    assert.deepEqual(owners(cold), want);
    // the append path: a store made while late held only the copies (the two files end at once: by path), then late's
    // own lines appended; the store must say what a cold run says
    const dir = writeCorpus({ [`${P}/${early}.jsonl`]: [p1, m1], [`${P}/${late}.jsonl`]: copies });
    const db = join(tempDir('cachelens-spec-db-'), 'store.duckdb');
    assert.equal(cli(['summary', dir, '--db', db, '--timezone', 'UTC']).code, 0);
    appendFileSync(join(dir, P, `${late}.jsonl`), own.map((l) => JSON.stringify(l) + '\n').join(''));
    assert.equal(cli(['summary', dir, '--db', db, '--timezone', 'UTC']).code, 0);
    assert.deepEqual(owners(dir, db), want);
  });
}

test('§1.5: agent type from the meta, else the spawn its toolUseId names, else the spawn whose result names the agent, else unknown; requested_type, spawn_name and definition', () => {
  // Spawns in S's main file (Agent/Task tool_use): tu1 Explore; tu2 myplugin:planner named planner; tu3 myplugin:reviewer;
  // tu5 general-purpose; tu7 Plan; tu8 general-purpose. Results: tu3's names a3, tu8's names a7.
  //   a1 meta Explore, toolUseId tu1               → Explore; requested Explore                      resolved
  //   a2 meta planner, toolUseId tu2               → planner; requested myplugin:planner, name planner lost
  //   a3 no meta; tu3's result names a3            → myplugin:reviewer (namespaced); meta type unknown  unknown
  //   a4 no meta, no spawn                         → unknown                                           unknown
  //   a5 meta without agentType, toolUseId tu5     → general-purpose (from the spawn)                  unknown
  //   a6 meta fork, no spawn                       → fork                                              unknown
  //   a7 meta Explore, toolUseId tu7; tu8's result names a7: the toolUseId's spawn comes first → requested Plan, lost
  //   main                                         → main                                              main
  const spawn = (id: string, type: string, name?: string) => ({ type: 'tool_use', id, name: id === 'tu2' ? 'Task' : 'Agent', input: { subagent_type: type, description: 'd', prompt: `p ${id}`, ...(name ? { name } : {}) } });
  const result = (s: number, tu: string, agentId: string) => ({
    type: 'user', sessionId: S, cwd: '/work/demo', timestamp: at(s), uuid: `res-${tu}`,
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: tu, content: [{ type: 'text', text: `agentId: ${agentId}` }] }] },
    toolUseResult: { status: 'completed', agentId },
  });
  const agent = (id: string, meta: object | null, s: number): Record<string, object[] | string> => ({
    [`${P}/${S}/subagents/agent-${id}.jsonl`]: [userPrompt(S, at(s - 1), 'sub task', id), assistant({ session: S, msg: `${id}-1`, t: at(s), agentId: id, u: { w5: 100 } })],
    ...(meta ? { [`${P}/${S}/subagents/agent-${id}.meta.json`]: JSON.stringify(meta) } : {}),
  });
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      userPrompt(S, at(-5)),
      assistant({
        session: S, msg: 'm1', t: at(0), u: { w5: 1_000 },
        content: [spawn('tu1', 'Explore'), spawn('tu2', 'myplugin:planner', 'planner'), spawn('tu3', 'myplugin:reviewer'), spawn('tu5', 'general-purpose'), spawn('tu7', 'Plan'), spawn('tu8', 'general-purpose')],
      }),
      result(60, 'tu3', 'a3'),
      result(61, 'tu8', 'a7'),
    ],
    ...agent('a1', { agentType: 'Explore', toolUseId: 'tu1' }, 10),
    ...agent('a2', { agentType: 'planner', toolUseId: 'tu2' }, 11),
    ...agent('a3', null, 12),
    ...agent('a4', null, 13),
    ...agent('a5', { description: 'x', toolUseId: 'tu5' }, 14),
    ...agent('a6', { agentType: 'fork' }, 15),
    ...agent('a7', { agentType: 'Explore', toolUseId: 'tu7' }, 16),
  } as Record<string, object[]>);
  const got = rows(dir, "select coalesce(agent_id, '-') as a, agent_type, requested_type, spawn_name, definition from chains order by a");
  assert.deepEqual(
    got.map((c) => [c.a, c.agent_type, c.requested_type, c.spawn_name, c.definition]),
    [
      ['-', 'main', null, null, 'main'],
      ['a1', 'Explore', 'Explore', null, 'resolved'],
      ['a2', 'planner', 'myplugin:planner', 'planner', 'lost'],
      ['a3', 'myplugin:reviewer', 'myplugin:reviewer', null, 'unknown'],
      ['a4', 'unknown', null, null, 'unknown'],
      ['a5', 'general-purpose', 'general-purpose', null, 'unknown'],
      ['a6', 'fork', null, null, 'unknown'],
      ['a7', 'Explore', 'Plan', null, 'lost'],
    ],
  );
  // namespaced = the type contains ':' — only a3's
  const x = JSON.parse(cli(['crosstab', dir, '--rows', 'agent_type', '--cols', 'namespaced', '--db', ':memory:', '--timezone', 'UTC', '--json']).stdout);
  assert.deepEqual(
    x.cells.filter((c: any) => c.row !== null && c.col !== null).map((c: any) => [c.row, c.col, c.value]).sort(),
    [['Explore', 'no', 2], ['fork', 'no', 1], ['general-purpose', 'no', 1], ['main', 'no', 1], ['myplugin:reviewer', 'yes', 1], ['planner', 'no', 1], ['unknown', 'no', 1]],
  );
});

test('§1.5: a spawn whose result names the agent only in its text (no toolUseResult) types the agent, in one read and when the result is appended later', () => {
  // S spawns tu9 (Plan) at 1 s; a9's file has no meta. The tool_result of tu9 (50 s) carries no toolUseResult: its
  // second text block says `agentId: a9 (for resuming …)`, as Claude Code writes it. SPEC §1.5: a9's spawn is the one
  // whose result names it, so a9 is Plan (requested Plan), not unknown. Appended: the result comes in a later run,
  // after the store read the spawn (files.parser_state keeps the open spawn).
  const head = [
    userPrompt(S, at(0)),
    assistant({ session: S, msg: 'm1', t: at(1), u: { w5: 1_000 }, content: [{ type: 'tool_use', id: 'tu9', name: 'Task', input: { subagent_type: 'Plan', description: 'd', prompt: 'p' } }] }),
  ];
  const tail = [
    {
      type: 'user', sessionId: S, cwd: '/work/demo', timestamp: at(50), uuid: 'res',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu9', content: [{ type: 'text', text: 'done' }, { type: 'text', text: "agentId: a9 (for resuming to continue this agent's work if needed)" }] }] },
    },
    assistant({ session: S, msg: 'm2', t: at(60), u: { r: 1_000, w5: 10 } }),
  ];
  const sub = { [`${P}/${S}/subagents/agent-a9.jsonl`]: [userPrompt(S, at(10), 'p', 'a9'), assistant({ session: S, msg: 'a9-1', t: at(11), agentId: 'a9', u: { w5: 100 } })] };
  const typed = (dir: string, db = ':memory:') => {
    const file = join(tempDir('cachelens-spec-sql-'), 'q.sql');
    writeFileSync(file, "select agent_type, requested_type, definition from chains where agent_id = 'a9'");
    const r = cli(['query', file, dir, '--db', db, '--timezone', 'UTC', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).rows.map((c: any) => [c.agent_type, c.requested_type, c.definition]);
  };
  assert.deepEqual(typed(writeCorpus({ [`${P}/${S}.jsonl`]: [...head, ...tail], ...sub })), [['Plan', 'Plan', 'unknown']]);
  const dir = writeCorpus({ [`${P}/${S}.jsonl`]: head, ...sub });
  const db = join(tempDir('cachelens-spec-db-'), 'store.duckdb');
  assert.equal(cli(['summary', dir, '--db', db, '--timezone', 'UTC']).code, 0);
  appendFileSync(join(dir, P, `${S}.jsonl`), tail.map((l) => JSON.stringify(l) + '\n').join(''));
  assert.equal(cli(['summary', dir, '--db', db, '--timezone', 'UTC']).code, 0);
  assert.deepEqual(typed(dir, db), [['Plan', 'Plan', 'unknown']]);
});

/** The attachment as SPEC §1.6 serialises it: JSON with keys sorted at every depth (these objects are plain ASCII keys). */
function canonical(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonical).join(',')}]`;
  if (x !== null && typeof x === 'object') {
    return `{${Object.keys(x).sort().map((k) => `${JSON.stringify(k)}:${canonical((x as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(x);
}

test('§1.6: attachment rows: chain, type, UTF-8 bytes and SHA-256 of the sorted-key JSON, the round of the next prompt or request, re-attachments within a chain only', () => {
  // main S: P1 (0 s) opens round 1; A skill_listing (1 s) → next is m1 (2 s), round 1; tool_result (3 s) opens no round;
  //   B todo_reminder (4 s) → next is m2 (5 s), round 1; P2 (10 s) opens round 2; A again (11 s) → m3 (12 s), round 2:
  //   a re-attachment (its hash was in this chain before). H hook_success (8 s), after m2 and before P2: the next
  //   prompt's round, 2. H again (13 s), after m3 with nothing after it: SPEC names no next prompt or request; the
  //   recorded reading (docs/store.md, Rounds: "one after the chain's last request and prompt belongs to the last
  //   round") puts it in round 2, a re-attachment of H.
  // subagent c1: the same A (21 s) → its request (22 s), round 1 of c1: not a re-attachment (another chain).
  // A = {type, content: 'skills: café', zeta: {b: 1, a: [true, null]}}: sorted
  //   {"content":"skills: café","type":"skill_listing","zeta":{"a":[true,null],"b":1}}, 'é' 2 bytes in UTF-8.
  const A = { type: 'skill_listing', zeta: { b: 1, a: [true, null] }, content: 'skills: café' };
  const B = { type: 'todo_reminder', itemCount: 0, content: [] };
  const H = { type: 'hook_success', hookName: 'Stop', content: '' };
  const aText = '{"content":"skills: café","type":"skill_listing","zeta":{"a":[true,null],"b":1}}';
  assert.equal(canonical(A), aText);
  const att = (s: number, attachment: object, agentId?: string) => ({
    type: 'attachment', sessionId: S, cwd: '/work/demo', timestamp: at(s), uuid: `att-${s}`, isSidechain: Boolean(agentId), ...(agentId ? { agentId } : {}), attachment,
  });
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      userPrompt(S, at(0)),
      att(1, A),
      assistant({ session: S, msg: 'm1', t: at(2), u: { w5: 1_000 }, content: [{ type: 'tool_use', id: 'tb', name: 'Bash', input: {} }] }),
      { type: 'user', sessionId: S, cwd: '/work/demo', timestamp: at(3), uuid: 'tr', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tb', content: 'ok' }] } },
      att(4, B),
      assistant({ session: S, msg: 'm2', t: at(5), u: { r: 1_000, w5: 100 } }),
      att(8, H),
      userPrompt(S, at(10), 'next'),
      att(11, A),
      assistant({ session: S, msg: 'm3', t: at(12), u: { r: 1_100, w5: 100 } }),
      att(13, H),
    ],
    [`${P}/${S}/subagents/agent-c1.jsonl`]: [userPrompt(S, at(20), 'sub task', 'c1'), att(21, A, 'c1'), assistant({ session: S, msg: 'c1-1', t: at(22), agentId: 'c1', u: { w5: 500 } })],
  });
  const sha = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');
  const aBytes = Buffer.byteLength(aText, 'utf8');
  assert.equal(aBytes, aText.length + 1);
  const got = rows(dir, 'select chain_id, type, bytes::int as bytes, hash, round::int as round from attachments order by t');
  assert.deepEqual(
    got.map((a) => [a.chain_id, a.type, a.bytes, a.hash, a.round]),
    [
      [S, 'skill_listing', aBytes, sha(aText), 1],
      [S, 'todo_reminder', Buffer.byteLength(canonical(B)), sha(canonical(B)), 1],
      [S, 'hook_success', Buffer.byteLength(canonical(H)), sha(canonical(H)), 2],
      [S, 'skill_listing', aBytes, sha(aText), 2],
      [S, 'hook_success', Buffer.byteLength(canonical(H)), sha(canonical(H)), 2],
      [`${S}:c1`, 'skill_listing', aBytes, sha(aText), 1],
    ],
  );
  const rounds = rows(dir, 'select chain_id, rounds::int as rounds from chains order by chain_id');
  assert.deepEqual(rounds.map((c) => [c.chain_id, c.rounds]), [[S, 2], [`${S}:c1`, 1]]);
  // re-attachments (the bundled query): 1 of skill_listing, A's bytes again; none of todo_reminder
  const q = cli(['query', 'reattachments', dir, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(q.code, 0, q.stderr);
  assert.deepEqual(
    JSON.parse(q.stdout).rows.map((r: any) => [r.type, Number(r.attachments), Number(r.reattachments), Number(r.reattachment_bytes), Number(r.chains_with_reattachments)]).sort(),
    [['hook_success', 2, 1, Buffer.byteLength(canonical(H)), 1], ['skill_listing', 3, 1, aBytes, 1], ['todo_reminder', 1, 0, 0, 0]],
  );
});
