/**
 * Text fields of absurd length (SPEC §8: a damaged line's text where an id or a name should be):
 * every text the reader keeps from a line, or from a subagent's .meta.json, that is longer than
 * 4,096 characters is stored and shown by its opening, its length and a short hash of the whole
 * (ingest/line.ts longText), and noted; kept whole, a 20 MB one in 12 files ran DuckDB out of memory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { readTranscript } from '../../src/ingest/read-file.js';
import { removeDir, runCli, skipsByReason, summary, tempDir, usage, writeLog } from './helpers.js';

function setup(t: { after: (fn: () => void) => void }) {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  return { dir, logs: path.join(dir, 'logs'), db: path.join(dir, 's.duckdb') };
}

/** A text of `n` characters: `head`, then x, then `end` (so two such texts differ only at their ends). */
const long = (head: string, end: string, n = 5_000) => head + 'x'.repeat(n - head.length - end.length) + end;

/** The stored form of a long text (line.ts longText): its first 64 characters, '…', its length and a hash. */
const SHORTENED = /^.{64}… \((\d{1,3}(,\d{3})*) characters, sha256 [0-9a-f]{16}\)$/su;

const T = '2025-03-01T10:00:00.000Z';

/** One transcript whose every text field the reader keeps is 5,000 characters long somewhere, and the number of such fields. */
function transcript(): { lines: string[]; fields: number } {
  const sid = long('<b>session', 's');
  const u = (extra: object) => JSON.stringify({ type: 'user', sessionId: sid, timestamp: T, ...extra });
  const a = (id: string, extra: object, msg: object = {}) =>
    JSON.stringify({
      type: 'assistant',
      sessionId: sid,
      timestamp: T,
      requestId: 'req_1',
      ...extra,
      message: { id, model: 'claude-opus-4-6', role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: usage(1, 2, 3, 4), ...msg },
    });
  const usageTiered = { ...usage(1, 0, 0, 0), service_tier: long('tier', '1'), speed: long('speed', '1') };
  const lines = [
    // sessionId on every line (9), cwd (1), uuid (1)
    u({ cwd: long('/home/<i>project', '1'), uuid: long('uuid', '1'), message: { role: 'user', content: 'hi' } }),
    // two different long message.ids opening alike: two requests; the first again (a copy): still one
    a(long('msg', 'A'), {}),
    a(long('msg', 'B'), {}),
    a(long('msg', 'A'), {}),
    // a long requestId (with a short id), a long parentUuid, a long model, service tier and speed
    a('m2', { requestId: long('req', '1'), parentUuid: long('parent', '1') }, { model: long('<script>alert(1)</script>claude', '1'), usage: usageTiered }),
    // a spawn whose tool_use id, subagent_type and name are long; its result links it by the same long id
    a('m3', {}, { content: [{ type: 'tool_use', id: long('toolu', '1'), name: 'Task', input: { subagent_type: long('type', '1'), name: long('name', '1'), prompt: 'p' } }] }),
    u({ toolUseResult: { agentId: long('agent', '1') }, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: long('toolu', '1'), content: 'r' }] } }),
    // an attachment whose own type is long (the line's subtype too: counted by longTypeName)
    JSON.stringify({ type: 'attachment', sessionId: sid, timestamp: T, attachment: { type: long('att', '1'), content: 'c' } }),
    // a progress copy whose agentId, requestId, message id and model are long
    JSON.stringify({
      type: 'progress',
      sessionId: sid,
      timestamp: T,
      data: { type: 'agent_progress', agentId: long('pagent', '1'), message: { type: 'assistant', timestamp: T, requestId: long('preq', '1'), message: { id: long('pmsg', '1'), model: long('pmodel', '1'), usage: usage(7, 0, 0, 0) } } },
    }),
    // a line's own agentId
    a('m4', { agentId: long('lagent', '1') }),
  ];
  // sessionId 10, cwd, uuid, message.id 3, requestId, parentUuid, model, service_tier, speed, tool_use id,
  // subagent_type, name, toolUseResult.agentId, tool_use_id, attachment.type, data.agentId,
  // data.message.requestId, its message id and model, agentId
  return { lines, fields: 10 + 2 + 3 + 5 + 3 + 2 + 1 + 4 + 1 };
}

/** Every string anywhere in `x` longer than `max` characters (their lengths). */
function longStrings(x: unknown, max: number, out: number[] = []): number[] {
  if (typeof x === 'string') {
    if (x.length > max) out.push(x.length);
  } else if (x instanceof Map) for (const [k, v] of x) longStrings([k, v], max, out);
  else if (x && typeof x === 'object') for (const v of Object.values(x)) longStrings(v, max, out);
  return out;
}

async function query(db: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/**
 * The longest value of every text column of every table of the store, by `table.column`, when it
 * holds a run of 200 x (what a long field is made of here: none is kept whole). Example: {} when none does.
 */
async function longColumns(db: string): Promise<Record<string, number>> {
  const cols = await query(db, `SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE data_type = 'VARCHAR' AND table_schema = 'main'`);
  const out: Record<string, number> = {};
  for (const { t, c } of cols) {
    const [row] = await query(db, `SELECT max(length("${String(c)}")) AS n FROM "${String(t)}" WHERE contains("${String(c)}", repeat('x', 200))`);
    if (row?.n !== null && row?.n !== undefined) out[`${String(t)}.${String(c)}`] = Number(row.n);
  }
  return out;
}

test('a text field longer than 4,096 characters is stored by its opening, length and hash, noted, and two long ids stay two, in both readers', async (t) => {
  // each was kept whole: stored, keyed and shown whole, and a 20 MB one in 12 files ran DuckDB out of memory
  const { logs, db } = setup(t);
  const { lines, fields } = transcript();
  const file = writeLog(logs, 'proj/s1.jsonl', lines);
  const s = await summary([logs], db);
  // m(A) and its copy, m(B), m2, m3, m4 and the progress copy's subagent request
  assert.equal(s.totals.requests, 6);
  assert.equal(s.totals.input, 1 + 1 + 1 + 1 + 1 + 7);
  const skips = skipsByReason(s);
  assert.deepEqual(Object.keys(skips), ['invalid_field']);
  assert.equal(skips.invalid_field!.count, fields);
  // the store holds no text near as long (the derived tables and answers included)
  assert.deepEqual(await longColumns(db), {});
  const models = (await query(db, `SELECT DISTINCT model FROM observations ORDER BY model`)).map((r) => String(r.model));
  assert.equal(models.length, 3);
  for (const m of models.filter((x) => x !== 'claude-opus-4-6')) assert.match(m, SHORTENED);
  const [keys] = await query(db, `SELECT count(DISTINCT key) AS n FROM observations WHERE key LIKE 'msgxx%'`);
  assert.equal(Number(keys?.n), 2, 'two long ids opening alike stay two, and a copy of one is one');

  // both readers give the same facts, with no text near as long as the fields
  const id = { fileId: 1, fileAgentId: null, fileSessionId: null };
  const whole = (await readTranscript(file, id)).facts;
  const streamed = (await readTranscript(file, id, { streamAbove: 0, chunkSize: 64 })).facts;
  assert.deepEqual(longStrings(whole, 500), [], "a chain id joins two shortened ids: ~220 characters");
  assert.equal(whole.skipped.length, fields);
  // each note names its field and what it was read as, hash and all (a skip's detail keeps 200 characters)
  for (const k of whole.skipped) assert.match(k.detail, /^[\w.]+ of 5,000 characters: read as .{64}… \(5,000 characters, sha256 [0-9a-f]{16}\)$/su);
  assert.deepEqual(streamed, whole);
  assert.match(whole.sessionId ?? '', SHORTENED);
  assert.match(whole.cwd ?? '', SHORTENED);
  // the spawn and its result still meet by the long tool_use id, shortened alike
  assert.equal(whole.spawns[0]!.toolUseId, whole.links[0]!.toolUseId);

  // the report shows the shortened texts, escaped
  const out = path.join(path.dirname(db), 'r.html');
  const ran = await runCli(['report', logs, '--db', db, '--out', out]);
  assert.equal(ran.code, 0, ran.stderr);
  const html = readFileSync(out, 'utf8');
  assert.ok(!html.includes('x'.repeat(200)), 'no long text is put in the report whole');
  assert.ok(!html.includes('<script>alert(1)'), 'a long model is escaped');
  assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;claude'), 'the long model is shown by its opening');
});

test("a subagent's .meta.json agentType or toolUseId longer than 4,096 characters is stored by its opening, length and hash, and noted", async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/s1.jsonl', [JSON.stringify({ type: 'user', sessionId: 's1', timestamp: T, message: { role: 'user', content: 'hi' } })]);
  writeLog(logs, 'proj/s1/subagents/agent-a1.meta.json', JSON.stringify({ agentType: long('Explore', '1'), toolUseId: long('toolu', '1') }));
  const s = await summary([logs], db);
  assert.deepEqual(skipsByReason(s), { invalid_field: { count: 1, at: ['agent-a1.meta.json:1'] } });
  assert.deepEqual(await longColumns(db), {});
  const [row] = await query(db, `SELECT meta_agent_type AS a, meta_tool_use_id AS u FROM files WHERE meta_agent_type IS NOT NULL`);
  assert.match(String(row?.a), SHORTENED);
  assert.match(String(row?.u), SHORTENED);
});

test('a text field of 4,096 characters is kept whole and one of 4,097 shortened, in both readers', async (t) => {
  // only a line longer than 4,096 bytes is looked at for such fields: the bound is the field's, not the line's
  const { logs } = setup(t);
  const line = (msg: string, model: string) =>
    JSON.stringify({ type: 'assistant', sessionId: 's1', timestamp: T, requestId: `req_${msg}`, message: { id: msg, model, usage: usage(1, 0, 0, 0) } });
  const file = writeLog(logs, 'proj/s1.jsonl', [line('m1', 'a'.repeat(4_096)), line('m2', 'b'.repeat(4_097))]);
  const id = { fileId: 1, fileAgentId: null, fileSessionId: null };
  for (const opts of [{}, { streamAbove: 0, chunkSize: 64 }]) {
    const facts = (await readTranscript(file, id, opts)).facts;
    const models = facts.observations.map((o) => o.model);
    assert.equal(models[0], 'a'.repeat(4_096));
    assert.match(models[1]!, SHORTENED);
    assert.ok(models[1]!.startsWith(`${'b'.repeat(64)}… (4,097 characters, sha256 `), models[1]);
    assert.deepEqual(facts.skipped.map((k) => [k.line, k.reason]), [[2, 'invalid_field']]);
  }
});

test('replay session prints a model, session id, message id and requestId longer than 4,096 characters as the store holds them, in its table and --json, and finds the chain of a long session id', async (t) => {
  // the replay re-reads the transcript: it carried a 5,000-character model whole into --json (each turn's and the
  // chain's), and a session id so long named a chain the store held shortened, so the replay found none
  const { logs, db } = setup(t);
  const sid = long('0ca1b2c3-', 's');
  const model = long('<b>claude', 'm');
  const lines = [1, 2].flatMap((i) => [
    JSON.stringify({ type: 'user', sessionId: sid, timestamp: `2025-03-01T10:0${i}:00.000Z`, uuid: `u${i}`, parentUuid: i === 1 ? null : 'a1', message: { role: 'user', content: 'hello there' } }),
    JSON.stringify({
      type: 'assistant', sessionId: sid, timestamp: `2025-03-01T10:0${i}:05.000Z`, uuid: `a${i}`, parentUuid: `u${i}`, requestId: long(`req${i}`, 'r'),
      message: { id: long(`msg${i}`, 'i'), model, role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: usage(3, 5, 1_000, (i - 1) * 1_000) },
    }),
  ]);
  writeLog(logs, 'proj/s1.jsonl', lines);
  await summary([logs], db);
  const stored = (await query(db, `SELECT DISTINCT model FROM observations`)).map((r) => String(r.model));
  assert.equal(stored.length, 1);
  assert.match(stored[0]!, SHORTENED);
  const json = await runCli(['replay', 'session', '0ca1b2c3', logs, '--db', db, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const r = JSON.parse(json.stdout);
  assert.deepEqual(longStrings(r, 500), [], 'no text of the transcript is written whole');
  assert.deepEqual(r.chain.models, stored, "the chain's models as the store holds them");
  assert.ok(r.turns.length > 0 && r.turns.every((x: { model: string }) => x.model === stored[0]), "each turn's model too");
  assert.match(r.chain.session_id, SHORTENED);
  assert.equal(r.chain.requests, 2, 'both requests replayed: their keys are the store\'s');
  const table = await runCli(['replay', 'session', '0ca1b2c3', logs, '--db', db]);
  assert.equal(table.code, 0, table.stderr);
  assert.ok(!table.stdout.includes('x'.repeat(200)), 'the table prints no long text whole');
  assert.ok(table.stdout.includes(stored[0]!), 'the model by its opening, length and hash');
});

test('replay session and report --session show an attachment type longer than 4,096 characters as the store holds it: --json, the prefix line and the page wrote it whole', async (t) => {
  const { dir, logs, db } = setup(t);
  const sid = '0ca1b2c3-0000-4000-8000-0000000000f6';
  const type = long('<b>skill_listing', 't');
  const lines = [
    JSON.stringify({ type: 'user', sessionId: sid, timestamp: '2025-03-01T10:01:00.000Z', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hello there' } }),
    JSON.stringify({ type: 'attachment', sessionId: sid, timestamp: '2025-03-01T10:01:01.000Z', uuid: 't1', parentUuid: 'u1', attachment: { type, content: 'the skills: one, two, three' } }),
    ...[1, 2].map((i) =>
      JSON.stringify({
        type: 'assistant', sessionId: sid, timestamp: `2025-03-01T10:0${i}:05.000Z`, uuid: `a${i}`, parentUuid: i === 1 ? 't1' : 'a1', requestId: `req${i}`,
        message: { id: `msg${i}`, model: 'claude-opus-4-6', role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: usage(3, 5, 1_000, (i - 1) * 1_000) },
      }),
    ),
  ];
  writeLog(logs, 'proj/s1.jsonl', lines);
  await summary([logs], db);
  const stored = (await query(db, `SELECT DISTINCT type FROM attachments`)).map((r) => String(r.type));
  assert.equal(stored.length, 1);
  assert.match(stored[0]!, SHORTENED);
  const json = await runCli(['replay', 'session', sid, logs, '--db', db, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const r = JSON.parse(json.stdout);
  assert.equal(r.settings.reinject.type, stored[0], 'the reinjected type as the store holds it');
  assert.deepEqual(longStrings(r, 500), [], 'no text of the transcript is written whole');
  const table = await runCli(['replay', 'session', sid, logs, '--db', db]);
  assert.equal(table.code, 0, table.stderr);
  assert.ok(!table.stdout.includes('x'.repeat(200)), 'the table prints no long text whole');
  const prefix = table.stdout.split('\n').find((l) => l.startsWith('prefix '))!;
  assert.ok(prefix.includes(' · reinject ') && prefix.length < 300, `the prefix line names the type shortened: ${prefix.length} columns`);
  // the report's replay of the session: the page holds the type as the store does, never whole
  const out = path.join(dir, 'report.html');
  const report = await runCli(['report', logs, '--db', db, '--session', sid, '--out', out]);
  assert.equal(report.code, 0, report.stderr);
  const page = readFileSync(out, 'utf8');
  assert.ok(!page.includes('x'.repeat(200)), 'the page holds no long text whole');
});

test('replay session --reinject-type given a type longer than 4,096 characters whole runs on it, read as the store holds it; one matching none is said shortened', async (t) => {
  // the transcript's type was read shortened (line.ts longText) and the given one compared whole: 'not run: reinject (no TTTT…' in one 5,048-column line
  const { logs } = setup(t);
  const sid = '0ca1b2c3-0000-4000-8000-0000000000f7';
  const type = 'T'.repeat(5_000);
  const lines = [
    JSON.stringify({ type: 'user', sessionId: sid, timestamp: '2025-03-01T10:01:00.000Z', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hello there' } }),
    JSON.stringify({ type: 'attachment', sessionId: sid, timestamp: '2025-03-01T10:01:01.000Z', uuid: 't1', parentUuid: 'u1', attachment: { type, content: 'the skills: one, two, three' } }),
    JSON.stringify({ type: 'attachment', sessionId: sid, timestamp: '2025-03-01T10:01:02.000Z', uuid: 't2', parentUuid: 't1', attachment: { type: 'skill_listing', content: 'a listing' } }),
    ...[1, 2].map((i) =>
      JSON.stringify({
        type: 'assistant', sessionId: sid, timestamp: `2025-03-01T10:0${i}:05.000Z`, uuid: `a${i}`, parentUuid: i === 1 ? 't2' : 'a1', requestId: `req${i}`,
        message: { id: `msg${i}`, model: 'claude-opus-4-6', role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: usage(3, 5, 1_000, (i - 1) * 1_000) },
      }),
    ),
  ];
  const file = writeLog(logs, 'proj/s1.jsonl', lines);
  const replay = async (given: string) => {
    const r = await runCli(['replay', 'session', file, '--strategy', 'reinject', '--reinject-type', given, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const whole = await replay(type);
  assert.deepEqual(whole.not_run, [], 'reinject runs on the type given whole');
  assert.match(whole.settings.reinject.type, SHORTENED);
  assert.ok(whole.settings.reinject.type.startsWith('T'.repeat(64) + '… (5,000 characters'), whole.settings.reinject.type);
  assert.ok(whole.strategies.reinject, 'its summary');
  // the store's form, as --json and the table show it, names it too
  const stored = await replay(whole.settings.reinject.type);
  assert.deepEqual(stored.not_run, []);
  assert.equal(stored.settings.reinject.type, whole.settings.reinject.type);
  // a long type no attachment has: said by its stored form, never whole, on either output
  const other = 'U'.repeat(5_000);
  const none = await replay(other);
  assert.equal(none.settings.reinject, null);
  assert.equal(none.not_run.length, 1);
  assert.match(none.not_run[0].reason, /^no U{64}… \(5,000 characters, sha256 [0-9a-f]{16}\) attachment in this chain$/u);
  const table = await runCli(['replay', 'session', file, '--strategy', 'reinject', '--reinject-type', other]);
  assert.equal(table.code, 0, table.stderr);
  const said = table.stdout + table.stderr;
  assert.ok(said.includes('not run: reinject') && said.includes('U'.repeat(64) + '…'), said);
  assert.ok(!said.includes('U'.repeat(200)), 'the given type is not printed whole');
});

test('replay session\'s heading shows a chain id of a long session id and a long sidechain uuid by both parts: the session\'s hash and :side: stay', async (t) => {
  // cut as one to 120 columns, its middle (the session's hash, `:side:`, the uuid's opening) was lost
  const { logs, db } = setup(t);
  const sid = long('0ca1b2c3-', 's');
  const side = long('f4ab2bf6-', 'u');
  const lines = [
    JSON.stringify({ type: 'user', sessionId: sid, timestamp: '2025-03-01T10:01:00.000Z', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hello there' } }),
    JSON.stringify({
      type: 'assistant', sessionId: sid, timestamp: '2025-03-01T10:01:05.000Z', uuid: 'a1', parentUuid: 'u1', requestId: 'req1',
      message: { id: 'msg1', model: 'claude-opus-4-6', role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: usage(3, 5, 1_000, 0) },
    }),
    JSON.stringify({
      type: 'assistant', sessionId: sid, isSidechain: true, timestamp: '2025-03-01T10:02:05.000Z', uuid: side, parentUuid: null, requestId: 'req2',
      message: { id: 'msg2', model: 'claude-opus-4-6', role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: usage(3, 5, 1_000, 0) },
    }),
  ];
  writeLog(logs, 'proj/s1.jsonl', lines);
  await summary([logs], db);
  const chains = (await query(db, `SELECT chain_id, session_id FROM chains WHERE contains(chain_id, ':side:')`)).map((r) => [String(r.chain_id), String(r.session_id)] as const);
  assert.equal(chains.length, 1, 'the sidechain is a chain');
  const [chainId, session] = chains[0]!;
  const own = chainId.slice(session.length + ':side:'.length);
  assert.match(session, SHORTENED);
  assert.match(own, SHORTENED);
  const table = await runCli(['replay', 'session', 'side:f4ab', logs, '--db', db, '--strategy', 'recorded']);
  assert.equal(table.code, 0, table.stderr);
  const heading = table.stdout.split('\n')[0]!;
  const shown = /^Session replay · chain (.*) \(sidechain\) · /.exec(heading)?.[1] ?? /^Session replay · chain (.*) \(\w+\) · /.exec(heading)![1]!;
  assert.ok(shown.length <= 120, `at most 120 columns: ${shown.length}`);
  const hash = (s: string) => /sha256 ([0-9a-f]{16})\)$/.exec(s)![1]!;
  assert.match(shown, /^0ca1b2c3-x+…[^:]*sha256 [0-9a-f]{16}\):side:f4ab2bf6-x+…/);
  assert.ok(shown.includes(hash(session)) && shown.endsWith(`sha256 ${hash(own)})`), 'both hashes shown');
});

test('report --session shows a chain id of a long session id and a long sidechain uuid by its parts in the replay\'s heading, charts and reading, as replay session does; the whole id on a line of its own', async (t) => {
  const { dir, logs, db } = setup(t);
  const sid = long('0ca1b2c3-', 's');
  const side = long('f4ab2bf6-', 'u');
  const lines = [
    JSON.stringify({ type: 'user', sessionId: sid, timestamp: '2025-03-01T10:01:00.000Z', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hello there' } }),
    JSON.stringify({
      type: 'assistant', sessionId: sid, timestamp: '2025-03-01T10:01:05.000Z', uuid: 'a1', parentUuid: 'u1', requestId: 'req1',
      message: { id: 'msg1', model: 'claude-opus-4-6', role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: usage(3, 5, 1_000, 0) },
    }),
    JSON.stringify({
      type: 'assistant', sessionId: sid, isSidechain: true, timestamp: '2025-03-01T10:02:05.000Z', uuid: side, parentUuid: null, requestId: 'req2',
      message: { id: 'msg2', model: 'claude-opus-4-6', role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: usage(3, 5, 1_000, 0) },
    }),
  ];
  writeLog(logs, 'proj/s1.jsonl', lines);
  await summary([logs], db);
  const [chainId] = (await query(db, `SELECT chain_id FROM chains WHERE contains(chain_id, ':side:')`)).map((r) => String(r.chain_id));
  const out = path.join(dir, 'report.html');
  const report = await runCli(['report', logs, '--db', db, '--session', 'side:f4ab', '--out', out]);
  assert.equal(report.code, 0, report.stderr);
  const page = readFileSync(out, 'utf8');
  const text = (h: string) => h.replace(/<wbr>/g, '').replace(/<[^>]*>/g, '').replace(/&#39;/g, "'");
  const h3 = /<h3([^>]*)>(session replay · [^<]*(?:<wbr>[^<]*)*)<\/h3>/.exec(page)!;
  const heading = /^session replay · sidechain chain (.*) \(1 request\)$/.exec(text(h3[2]!))![1]!;
  assert.ok(heading.length <= 120, `the heading's chain id at most 120 columns: ${heading.length}`);
  assert.match(heading, /^0ca1b2c3-x+…[^:]*sha256 [0-9a-f]{16}\):side:f4ab2bf6-x+…/, 'by its parts: the session\'s hash and :side: stay');
  // the whole id: the heading's tooltip and a line of its own
  assert.ok(h3[1]!.includes(chainId!), 'the tooltip holds the whole id');
  const line = /<p class="muted chain-id">([\s\S]*?)<\/p>/.exec(page)!;
  assert.equal(text(line[1]!), `chain id ${chainId}`);
  // the charts' titles and the section's reading show it as the heading does
  const replay = /<section[^>]* id="replay"[\s\S]*?<\/section>/.exec(page)![0];
  for (const m of text(replay).matchAll(/sidechain chain (\S+)/g)) assert.equal(m[1], heading.split(' ')[0], 'each mention is shortened');
});
