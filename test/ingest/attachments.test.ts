/**
 * SPEC §1.6 by hand: an attachment's size and SHA-256 are of its JSON with sorted keys (the
 * canonical text written out below, worked out by hand), the same on the buffer and the streaming
 * path; its round is that of the next user prompt or request after it; a re-attachment is a hash
 * seen earlier in the same chain only.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { roundsBucket } from '../../src/analyses/chain.js';
import { crosstab } from '../../src/analyses/crosstab.js';
import { openContext } from '../../src/context.js';
import { readTranscript } from '../../src/ingest/read-file.js';
import { usePortableViews } from '../../src/store/portable.js';
import { runQuery } from '../../src/store/queries.js';
import { assistant, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';

const S = '5e551011-0000-4000-8000-000000000016';
const at = (s: number) => new Date(Date.UTC(2026, 0, 6, 9, 0, s)).toISOString();
const head = (s: number, extra = '') => `{"type":"attachment","sessionId":"${S}","timestamp":"${at(s)}","uuid":"att-${s}"${extra},"attachment":`;

// Keys out of order at every depth, numbers JSON.parse reads as the same value written otherwise
// (1.0, -0, 1e21), escapes, and keys beyond ASCII: é (U+00E9), ！ (U+FF01), 😀 (U+1F600, UTF-16
// D83D DE00). Sorted by UTF-16 code units, as JavaScript sorts and RFC 8785 orders: 😀 before ！
// (by code points it would come after).
const A1 = '{"type":"hook_success","z":{"b":[1.0,{"y":2,"x":-0}],"a":1e21},"é":"ü","！":1,"😀":2,"content":"caf\\u00e9 \\/ \\u2028"}';
// the same value written another way
const A2 = '{"content":"café / \u2028","😀":2.0,"！":1,"é":"ü","type":"hook_success","z":{"a":1000000000000000000000,"b":[1,{"x":0,"y":2}]}}';
const A_TEXT = '{"content":"café / \u2028","type":"hook_success","z":{"a":1e+21,"b":[1,{"x":0,"y":2}]},"é":"ü","😀":2,"！":1}';
// a key named __proto__ is a key like any other (JSON.parse keeps it as an own property); a
// repeated key keeps its last value; numbers as JavaScript prints them (1e400 is Infinity: null)
const P = '{"type":"hook_success","__proto__":{"a":1},"k":1,"k":2,"n":12345678901234567890,"m":0.000001,"q":1E-7,"big":[1e400]}';
const P_TEXT = '{"__proto__":{"a":1},"big":[null],"k":2,"m":0.000001,"n":12345678901234567000,"q":1e-7,"type":"hook_success"}';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const digest = (s: string) => ({ bytes: Buffer.byteLength(s, 'utf8'), hash: sha(s) });

test('§1.6: size and SHA-256 of the JSON with keys sorted at every depth, on the buffer and the streaming path alike', async () => {
  assert.equal(Buffer.byteLength(A_TEXT, 'utf8'), 112);
  assert.equal(Buffer.byteLength(P_TEXT, 'utf8'), 109);
  const file = join(tempDir(), `${S}.jsonl`);
  writeFileSync(file, [`${head(1)}${A1}}`, `${head(2)}${A2}}`, `${head(3)}${P}}`].join('\n') + '\n');
  const id = { fileId: 1, fileAgentId: null, fileSessionId: null };
  const expected = [digest(A_TEXT), digest(A_TEXT), digest(P_TEXT)];
  for (const opts of [{}, { streamAbove: 0, chunkSize: 64 }]) {
    const r = await readTranscript(file, id, opts);
    assert.deepEqual(r.facts.skipped, []);
    assert.deepEqual(r.facts.attachments.map((a) => ({ bytes: a.bytes, hash: a.hash })), expected, JSON.stringify(opts));
  }
});

const req = (s: number, msg: string, agentId?: string) => assistant({ session: S, msg, t: at(s), u: { in: 3, w5: 100, out: 2 }, agentId });
const results = (s: number, text: boolean) => ({
  type: 'user', sessionId: S, timestamp: at(s), uuid: `tr-${s}`,
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `tu-${s}`, content: 'r' }, ...(text ? [{ type: 'text', text: 'and also' }] : [])] },
});
const listing = (s: number, content: string) => `${head(s)}{"type":"skill_listing","content":"${content}"}}`;
const j = (x: object) => JSON.stringify(x);
const MAIN = `projects/-work-demo/${S}.jsonl`;
const MAIN_LINES = [
  j(userPrompt(S, at(0), 'hi')), //                     round 1
  `${head(1)}${A1}}`, //                                 line 2: before request 1 → round 1
  j(req(2, 'msg_m1')),
  listing(3, 'B'), //                                    line 4: next is a prompt (text beside a tool result) → round 2
  j(results(4, true)),
  j(req(5, 'msg_m2')),
  j(results(6, false)), //                               tool results only: no new round
  listing(7, 'C'), //                                    line 8: next is request 3, of round 2
  j(req(8, 'msg_m3')),
  `${head(9)}${A2}}`, //                                 line 10: A again (same hash) → a re-attachment, round 3
  j(userPrompt(S, at(10), 'next')),
  j(req(11, 'msg_m4')),
  listing(12, 'C'), //                                   line 13: after the last request → the last round (3); C again: a re-attachment
];
/** The session: MAIN_LINES (the first `cut` of them) and a subagent carrying A too (its first, not a re-attachment). */
function roundsCorpus(root: string, cut = MAIN_LINES.length): string {
  return writeCorpus({
    [MAIN]: MAIN_LINES.slice(0, cut).join('\n') + '\n',
    [`projects/-work-demo/${S}/subagents/agent-s1.jsonl`]: [j(userPrompt(S, at(20), 'go', 's1')), `${head(21, ',"agentId":"s1","isSidechain":true')}${A1}}`, j(req(22, 'msg_s1', 's1'))].join('\n') + '\n',
  }, root);
}
const ATTACHMENT_ROWS = `SELECT coalesce(agent_id, '-') AS agent, line, type, bytes, hash, round FROM attachments JOIN chains USING (chain_id) ORDER BY agent, line`;

test('§1.6: rounds of attachments (mixed text and tool_result opens one; after the last request: the last round) and re-attachments per chain', async () => {
  const root = roundsCorpus(tempDir());
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const rows = await ctx.store.all(ATTACHMENT_ROWS);
    const a = digest(A_TEXT);
    const listed = (c: string) => digest(`{"content":"${c}","type":"skill_listing"}`);
    assert.deepEqual(rows.map((r) => [r.agent, r.line, r.type, r.bytes, r.hash, r.round]), [
      ['-', 2, 'hook_success', a.bytes, a.hash, 1],
      ['-', 4, 'skill_listing', listed('B').bytes, listed('B').hash, 2],
      ['-', 8, 'skill_listing', listed('C').bytes, listed('C').hash, 2],
      ['-', 10, 'hook_success', a.bytes, a.hash, 3],
      ['-', 13, 'skill_listing', listed('C').bytes, listed('C').hash, 3],
      ['s1', 2, 'hook_success', a.bytes, a.hash, 1],
    ]);
    const rounds = await ctx.store.all(`SELECT coalesce(agent_id, '-') AS agent, rounds FROM chains ORDER BY agent`);
    assert.deepEqual(rounds.map((r) => [r.agent, r.rounds]), [['-', 3], ['s1', 1]]);
    await usePortableViews(ctx.store);
    const r = await crosstab(ctx.store, { rows: 'kind', cols: 'has_skill_listing', measure: 'reattachments', timezone: 'UTC' });
    const cell = (row: string | null, col: string | null) => r.cells.find((c) => c.row === row && c.col === col)?.value;
    assert.equal(cell('main', 'yes'), 2, 'A and C again in the main thread');
    assert.equal(cell('subagent', 'no'), 0, 'A in the subagent is its first');
    // main: 3 skill listings in 3 rounds; the subagent: 0 in 1
    assert.deepEqual(r.attachments_equal_rounds.map((e) => [e.row, e.col, e.chains, e.matching, e.equal]), [['main', 'yes', 1, 1, true], ['subagent', 'no', 1, 0, false]]);
  } finally {
    ctx.store.close();
  }
});

test('§1.6: an append read gives the attachments a cold read gives (rounds of those waiting at the cut, sizes and hashes)', async () => {
  const cold = await openContext({ paths: [roundsCorpus(tempDir())], db: ':memory:', timezone: 'UTC' });
  let expected: unknown;
  try {
    expected = await cold.store.all(ATTACHMENT_ROWS);
  } finally {
    cold.store.close();
  }
  // cuts: A waiting for request 1; B waiting for the prompt beside a tool result; A again waiting for the prompt; before the trailing one
  for (const cut of [2, 4, 10, 12]) {
    const root = roundsCorpus(tempDir(), cut);
    const db = join(tempDir(), 's.duckdb');
    (await openContext({ paths: [root], db, timezone: 'UTC' })).store.close();
    roundsCorpus(root);
    const warm = await openContext({ paths: [root], db, timezone: 'UTC' });
    try {
      assert.equal(warm.stats.appended, 1, `cut after line ${cut}: the main transcript's new lines are read as an append`);
      assert.deepEqual(await warm.store.all(ATTACHMENT_ROWS), expected, `cut after line ${cut}`);
    } finally {
      warm.store.close();
    }
  }
});

test('§1.6: a chain with attachments but no prompt or request has 0 rounds, its attachments round 0 and rounds bucket 0, everywhere', async () => {
  // a subagent file that only carries attachments (its prompt and requests never written)
  const root = writeCorpus({
    [MAIN]: [j(userPrompt(S, at(0), 'hi')), j(req(1, 'msg_m1'))].join('\n') + '\n',
    [`projects/-work-demo/${S}/subagents/agent-s0.jsonl`]: [listing(2, 'X'), `${head(3, ',"agentId":"s0","isSidechain":true')}${A1}}`].join('\n') + '\n',
  }, tempDir());
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const rows = await ctx.store.all(`SELECT coalesce(agent_id, '-') AS agent, c.rounds, a.round FROM attachments a JOIN chains c USING (chain_id) ORDER BY agent, line`);
    assert.deepEqual(rows.map((r) => [r.agent, r.rounds, r.round]), [['s0', 0, 0], ['s0', 0, 0]]);
    await usePortableViews(ctx.store);
    const r = await crosstab(ctx.store, { rows: 'rounds_bucket', cols: 'kind', timezone: 'UTC' });
    assert.deepEqual(r.rows, ['0', '1']);
    assert.equal(r.cells.find((c) => c.row === '0' && c.col === 'subagent')?.value, 1);
    const byRounds = await crosstab(ctx.store, { rows: 'rounds', cols: 'rounds_bucket', timezone: 'UTC' });
    assert.deepEqual(byRounds.cells.filter((c) => c.row !== null && c.col !== null).map((c) => [c.row, c.col]), [[0, '0'], [1, '1']]);
  } finally {
    ctx.store.close();
  }
  assert.equal(roundsBucket(0), '0');
  assert.equal(roundsBucket(1), '1');
});

test('§4: a chain with 0 rounds and 0 skill listings is not "listings = rounds" — crosstab, attachments_vs_rounds and skill_listing_by_agent_type agree', async () => {
  const root = writeCorpus({
    [MAIN]: [j(userPrompt(S, at(0), 'hi')), j(req(1, 'msg_m1'))].join('\n') + '\n',
    // s0: a hook_success only (0 rounds, 0 listings); s2: one listing in its one round
    [`projects/-work-demo/${S}/subagents/agent-s0.jsonl`]: `${head(2, ',"agentId":"s0","isSidechain":true')}${A1}}\n`,
    [`projects/-work-demo/${S}/subagents/agent-s2.jsonl`]: [listing(3, 'X'), j(userPrompt(S, at(4), 'go', 's2')), j(req(5, 'msg_s2', 's2'))].join('\n') + '\n',
  }, tempDir());
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const skill = await runQuery(ctx.store, 'skill_listing_by_agent_type', { tz: 'UTC', since: null, until: null, project: null });
    const bySkill = skill.reduce((n, x) => n + Number(x.chains_listings_equal_rounds), 0);
    await usePortableViews(ctx.store);
    const vs = await runQuery(ctx.store, 'attachments_vs_rounds', { tz: 'UTC', since: null, until: null, project: null });
    assert.deepEqual(vs.map((x) => [String(x.chain_id).split(':')[1] ?? '-', x.rounds, x.skill_listing, x.skill_listing_equals_rounds]), [
      ['s2', 1, 1, true], ['-', 1, 0, false], ['s0', 0, 0, false],
    ]);
    const r = await crosstab(ctx.store, { rows: 'kind', cols: 'has_skill_listing', timezone: 'UTC' });
    assert.deepEqual(r.attachments_equal_rounds.map((e) => [e.row, e.col, e.chains, e.matching, e.equal]), [
      ['main', 'no', 1, 0, false], ['subagent', 'no', 1, 0, false], ['subagent', 'yes', 1, 1, true],
    ]);
    const byCrosstab = r.attachments_equal_rounds.reduce((n, e) => n + e.matching, 0);
    assert.deepEqual([byCrosstab, vs.filter((x) => x.skill_listing_equals_rounds).length, bySkill], [1, 1, 1]);
  } finally {
    ctx.store.close();
  }
});

// One response split over two lines (thinking, then tool_use: one message.id and requestId), an
// attachment between them, then a prompt. The second line is a copy of request 1, whose time is
// its first line's (SPEC §1.3): not a request after the attachment, so the attachment is the
// next prompt's (round 2), on a cold read and on an append read cut between the two lines alike.
const SPLIT_LINES = [
  j(userPrompt(S, at(0), 'hi')), //                                                         round 1
  j(assistant({ session: S, msg: 'msg_m1', t: at(1), u: { in: 3, w5: 100, out: 2 }, content: [{ type: 'thinking', thinking: 'hm' }] })),
  listing(2, 'X'), //                                                                       line 3
  j(assistant({ session: S, msg: 'msg_m1', t: at(3), u: { in: 3, w5: 100, out: 9 }, content: [{ type: 'tool_use', id: 'tu-1', name: 'Read', input: {} }] })),
  j(userPrompt(S, at(4), 'next')), //                                                       round 2
  j(req(5, 'msg_m2')),
];
const SPLIT_ROWS = `SELECT 'a' AS what, line, round FROM attachments UNION ALL SELECT 'r', line, round FROM requests UNION ALL SELECT 'c', requests, rounds FROM chains ORDER BY what, line`;

test('§1.6 with §1.3: an attachment between two lines of one response, then a prompt, is in the prompt\'s round — cold or appended between the lines', async () => {
  const cold = await openContext({ paths: [writeCorpus({ [MAIN]: SPLIT_LINES.join('\n') + '\n' }, tempDir())], db: ':memory:', timezone: 'UTC' });
  try {
    assert.deepEqual((await cold.store.all(SPLIT_ROWS)).map((r) => [r.what, r.line, r.round]), [['a', 3, 2], ['c', 2, 2], ['r', 2, 1], ['r', 6, 2]]);
  } finally {
    cold.store.close();
  }
  for (const cut of [2, 3]) {
    const root = writeCorpus({ [MAIN]: SPLIT_LINES.slice(0, cut).join('\n') + '\n' }, tempDir());
    const db = join(tempDir(), 's.duckdb');
    (await openContext({ paths: [root], db, timezone: 'UTC' })).store.close();
    writeCorpus({ [MAIN]: SPLIT_LINES.join('\n') + '\n' }, root);
    const warm = await openContext({ paths: [root], db, timezone: 'UTC' });
    try {
      assert.equal(warm.stats.appended, 1, `cut after line ${cut}: read as an append`);
      assert.deepEqual((await warm.store.all(SPLIT_ROWS)).map((r) => [r.what, r.line, r.round]), [['a', 3, 2], ['c', 2, 2], ['r', 2, 1], ['r', 6, 2]], `cut after line ${cut}`);
      const facts = await warm.store.all(`SELECT sum(requests)::INTEGER AS n FROM chain_facts`);
      assert.equal(facts[0]!.n, 2, `cut after line ${cut}: the second line of request 1 is not a request of its own`);
    } finally {
      warm.store.close();
    }
  }
});

test('§4: a chain that never got to its first request (a prompt, a skill listing) counts in skill_listing_by_agent_type as crosstab counts it', async () => {
  const root = writeCorpus({
    [MAIN]: [j(userPrompt(S, at(0), 'hi')), j(req(1, 'msg_m1'))].join('\n') + '\n',
    // s3: one round, one listing, no request; s2: the same with its request
    [`projects/-work-demo/${S}/subagents/agent-s3.jsonl`]: [listing(2, 'X'), j(userPrompt(S, at(3), 'go', 's3'))].join('\n') + '\n',
    [`projects/-work-demo/${S}/subagents/agent-s2.jsonl`]: [listing(4, 'X'), j(userPrompt(S, at(5), 'go', 's2')), j(req(6, 'msg_s2', 's2'))].join('\n') + '\n',
  }, tempDir());
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    for (const days of [{ since: null, until: null }, { since: '2026-01-06', until: '2026-01-06' }, { since: '2026-01-07', until: null }]) {
      const skill = await runQuery(ctx.store, 'skill_listing_by_agent_type', { tz: 'UTC', project: null, ...days });
      await usePortableViews(ctx.store);
      const r = await crosstab(ctx.store, { rows: 'agent_type', cols: 'definition', timezone: 'UTC', ...days });
      const what = JSON.stringify(days);
      assert.deepEqual(
        skill.map((x) => [x.agent_type, x.definition, Number(x.chains), Number(x.chains_listings_equal_rounds)]).sort(),
        r.attachments_equal_rounds.map((e) => [e.row, e.col, e.chains, e.matching]).sort(),
        what,
      );
      if (days.since === null) assert.deepEqual(skill.map((x) => [x.agent_type, Number(x.chains), Number(x.skill_listings), Number(x.rounds), x.weight !== null]), [['main', 1, 0, 1, true], ['unknown', 2, 2, 2, true]], what);
    }
  } finally {
    ctx.store.close();
  }
});
