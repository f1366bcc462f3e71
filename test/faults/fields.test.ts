/**
 * Hostile values in the fields that decide how a line is read (docs/faults.md, "Fields that classify
 * lines"): each is read as the SPEC says, or read as absent and counted as an `invalid_field` skip at
 * its line, and the same on every path that reads lines: a cold ingest, an append read of the grown
 * file, the streaming path (lines longer than a chunk) and the session replay.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { openContext } from '../../src/context.js';
import { userLineKind } from '../../src/ingest/file-parser.js';
import { readTranscript } from '../../src/ingest/read-file.js';
import { mainOf } from '../helpers/rounds.js';
import { mulberry32 } from '../../src/samples/prng.js';
import { REAL_LOGS, REPO, assistant, cli, plain, summaryJson, tempDir, transcripts, writeCorpus } from '../helpers/corpus.js';
import { qualityReading } from '../../src/report/section-quality.js';

const S = '5e551011-0000-4000-8000-00000000f1e1';
const day = Date.UTC(2026, 0, 7, 9);
const at = (s: number) => new Date(day + s * 1000).toISOString();
const j = (x: object) => JSON.stringify(x);
const req = (s: number, msg: string, extra: object = {}) => j({ ...assistant({ session: S, msg, t: at(s), u: { in: 3, w5: 100, out: 2 } }), uuid: `r-${s}`, ...extra });
const said = (s: number, content: unknown, extra: object = {}) => j({ type: 'user', sessionId: S, timestamp: at(s), cwd: '/work/demo', uuid: `u-${s}`, parentUuid: null, isSidechain: false, ...extra, message: { role: 'user', content } });

type Skip = [number, string, string];
interface Expected {
  /** the store's skips: [line, reason, detail] */
  skips: Skip[];
  /** the store's chains: [kind, requests, rounds], by chain id */
  chains: [string, number, number][];
  /** the requests' [line, time as ISO 8601 UTC], when the case is about times */
  times?: [number, string][];
}

const SKIPS = `SELECT line, reason, detail FROM skipped ORDER BY line, reason`;
const CHAINS = `SELECT kind, requests, rounds FROM chains ORDER BY chain_id`;
const TIMES = `SELECT line, t FROM requests ORDER BY line`;

async function facts(ctx: Awaited<ReturnType<typeof openContext>>, times: boolean): Promise<Expected> {
  return {
    skips: (await ctx.store.all(SKIPS)).map((r) => [Number(r.line), String(r.reason), String(r.detail)]),
    chains: (await ctx.store.all(CHAINS)).map((r) => [String(r.kind), Number(r.requests), Number(r.rounds)]),
    ...(times ? { times: (await ctx.store.all(TIMES)).map((r): [number, string] => [Number(r.line), new Date(Number(r.t)).toISOString()]) } : {}),
  };
}

/** The same facts from a cold read, an append read cut after each line of `cuts`, the streaming path and (skips) the replay. */
async function assertEveryPath(lines: string[], expected: Expected, cuts: number[]): Promise<void> {
  const whole = lines.join('\n') + '\n';
  const cold = await openContext({ paths: [writeCorpus({ [mainOf(S)]: whole }, tempDir())], db: ':memory:', timezone: 'UTC' });
  try {
    assert.deepEqual(await facts(cold, !!expected.times), expected, 'cold read');
  } finally {
    cold.store.close();
  }
  for (const cut of cuts) {
    const root = writeCorpus({ [mainOf(S)]: lines.slice(0, cut).join('\n') + '\n' }, tempDir());
    const db = join(tempDir(), 's.duckdb');
    (await openContext({ paths: [root], db, timezone: 'UTC' })).store.close();
    writeCorpus({ [mainOf(S)]: whole }, root);
    const warm = await openContext({ paths: [root], db, timezone: 'UTC' });
    try {
      assert.equal(warm.stats.appended, 1, `cut after line ${cut}: read as an append`);
      assert.deepEqual(await facts(warm, !!expected.times), expected, `append read, cut after line ${cut}`);
    } finally {
      warm.store.close();
    }
  }
  const file = join(writeCorpus({ [mainOf(S)]: whole }, tempDir()), mainOf(S));
  const id = { fileId: 1, fileAgentId: null, fileSessionId: null };
  const fast = await readTranscript(file, id);
  assert.deepEqual(fast.facts.skipped.map((s) => [s.line, s.reason, s.detail]), expected.skips, 'buffer path');
  for (const opts of [{ streamAbove: 0, chunkSize: 64 }, { streamAbove: 0, chunkSize: 4096 }]) {
    assert.deepEqual(plain((await readTranscript(file, id, opts)).facts), plain(fast.facts), `streaming path ${JSON.stringify(opts)}`);
  }
  const r = cli(['replay', 'session', file, '--strategy', 'recorded', '--json'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout) as { chain: { skipped: { reason: string; lines: number[] }[] }; turns: { line: number; at: string }[] };
  if (expected.times) assert.deepEqual(d.turns.map((x) => [x.line, new Date(x.at).toISOString()]), expected.times, 'replay times');
  const replayed = d.chain.skipped;
  const got = replayed.flatMap((g) => g.lines.map((line) => [line, g.reason] as [number, string])).sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
  assert.deepEqual(got, expected.skips.map(([line, reason]) => [line, reason]), 'replay');
}

// A v1.x main transcript: a main prompt and request, two lines whose isSidechain is `value`, a main
// request, then a true inline sidechain (a root prompt and its request).
const sidechainLines = (value: unknown) => [
  said(0, 'hi'), //                                                                     line 1
  req(1, 'msg_1'), //                                                                   line 2
  said(2, 'look into it', { isSidechain: value, uuid: 's-1' }), //                      line 3
  req(3, 'msg_2', { isSidechain: value, parentUuid: 's-1' }), //                        line 4
  req(4, 'msg_3'), //                                                                   line 5
  said(5, 'and this', { isSidechain: true, uuid: 's-2' }), //                           line 6: a sidechain root
  req(6, 'msg_4', { isSidechain: true, parentUuid: 's-2' }), //                         line 7
];

test('isSidechain that is no boolean ("true", 1, an object, a list): read as absent, each line an invalid_field skip naming the field, on every path', async () => {
  for (const [value, shown] of [['true', '"true"'], ['false', '"false"'], [1, '1'], [{ v: true }, '{…}'], [[true], '[…]']] as [unknown, string][]) {
    const detail = `isSidechain = ${shown} is not a boolean: read as absent`;
    // lines 3 and 4 are the main thread's (no agentId, a main file): its 3 requests, 2 prompts
    await assertEveryPath(sidechainLines(value), { skips: [[3, 'invalid_field', detail], [4, 'invalid_field', detail]], chains: [['main', 3, 2], ['sidechain', 1, 1]] }, [3]);
  }
});

test('isSidechain true, false, null or absent: no skip; true makes an inline sidechain', async () => {
  await assertEveryPath(sidechainLines(true), { skips: [], chains: [['main', 2, 1], ['sidechain', 1, 1], ['sidechain', 1, 1]] }, [3]);
  for (const value of [false, null, undefined]) await assertEveryPath(sidechainLines(value), { skips: [], chains: [['main', 3, 2], ['sidechain', 1, 1]] }, [3]);
});

// A skill's expansion (isMeta) and a compaction's summary (isCompactSummary), each with `value`.
const metaLines = (value: unknown) => [
  said(0, 'hi'), //                                                                     line 1: round 1
  req(1, 'msg_1'), //                                                                   line 2
  said(2, 'Base directory for this skill: /work/demo/.claude/skills/x', { isMeta: value }), // line 3
  req(3, 'msg_2'), //                                                                   line 4
  said(4, 'This session is being continued from a previous conversation.', { isCompactSummary: value }), // line 5
  req(5, 'msg_3'), //                                                                   line 6
];

test('isMeta and isCompactSummary that are no boolean: read as absent (the line\'s text is a prompt), each an invalid_field skip, on every path', async () => {
  for (const [value, shown] of [['true', '"true"'], [1, '1'], [{}, '{…}']] as [unknown, string][]) {
    const skips: Skip[] = [[3, 'invalid_field', `isMeta = ${shown} is not a boolean: read as absent`], [5, 'invalid_field', `isCompactSummary = ${shown} is not a boolean: read as absent`]];
    await assertEveryPath(metaLines(value), { skips, chains: [['main', 3, 3]] }, [3, 5]);
  }
  await assertEveryPath(metaLines(true), { skips: [], chains: [['main', 3, 1]] }, [3]);
  await assertEveryPath(metaLines(null), { skips: [], chains: [['main', 3, 3]] }, [3]);
  // two flags of one line: one skip that names both
  const both = [said(0, 'hi', { isMeta: 'yes', isSidechain: 0 }), req(1, 'msg_1')];
  await assertEveryPath(both, { skips: [[1, 'invalid_field', 'isSidechain = 0 is not a boolean, isMeta = "yes" is not a boolean: read as absent']], chains: [['main', 1, 1]] }, []);
});

// An inline sidechain whose lines carry an agentId that is no string, and a request whose sessionId is none.
const idLines = (value: unknown) => [
  said(0, 'hi'), //                                                                     line 1: round 1
  req(1, 'msg_1'), //                                                                   line 2
  said(2, 'look into it', { agentId: value, isSidechain: true, uuid: 's-1' }), //       line 3: a sidechain root
  req(3, 'msg_2', { agentId: value, isSidechain: true, parentUuid: 's-1' }), //         line 4
  req(4, 'msg_3', { sessionId: value }), //                                             line 5: the file's session
];

test('sessionId and agentId that are no string: read as absent (the file names the session; no agent id), each an invalid_field skip, on every path', async () => {
  for (const [value, shown] of [[7, '7'], [{ id: 'a1' }, '{…}'], [['a1'], '[…]'], [true, 'true']] as [unknown, string][]) {
    const skips: Skip[] = [
      [3, 'invalid_field', `agentId = ${shown} is not a string: read as absent`],
      [4, 'invalid_field', `agentId = ${shown} is not a string: read as absent`],
      [5, 'invalid_field', `sessionId = ${shown} is not a string: read as absent`],
    ];
    await assertEveryPath(idLines(value), { skips, chains: [['main', 2, 1], ['sidechain', 1, 1]] }, [3, 4]);
  }
  await assertEveryPath(idLines(null), { skips: [], chains: [['main', 2, 1], ['sidechain', 1, 1]] }, [3]);
});

test('timestamps: an offset of hours or with minutes, a decimal comma, 9 digits of fraction and a leap second are instants; no offset, second 60 elsewhere, hour 24 are skips, on every path', async () => {
  const lines = [
    said(0, 'hi'), //                                                                   line 1
    req(1, 'msg_1', { timestamp: '2026-01-07T11:00:01+02:00' }), //                     line 2
    req(2, 'msg_2', { timestamp: '2026-01-07T04:00:02-05' }), //                        line 3: hours alone (ISO 8601)
    req(3, 'msg_3', { timestamp: '2026-01-07T09:00:03,25Z' }), //                       line 4: a decimal comma (ISO 8601)
    req(4, 'msg_4', { timestamp: '2026-01-07T09:00:04.123456789Z' }), //                line 5: nanoseconds
    req(5, 'msg_5', { timestamp: '2026-01-07T09:00:05' }), //                           line 6: no offset
    req(6, 'msg_6', { timestamp: '2026-01-07T09:00:60Z' }), //                          line 7: no leap second here
    req(7, 'msg_7', { timestamp: '2026-01-07T24:00:00Z' }), //                          line 8
    req(8, 'msg_8', { timestamp: '2026-01-31T23:59:60Z' }), //                          line 9: a leap second at a month's end
    req(9, 'msg_9', { timestamp: '2026-02-01T05:29:60.5+05:30' }), //                   line 10: the same, in India
  ];
  const bad = 'usage without a valid timestamp';
  await assertEveryPath(lines, {
    skips: [[6, 'invalid_usage', bad], [7, 'invalid_usage', bad], [8, 'invalid_usage', bad]],
    chains: [['main', 6, 1]],
    times: [
      [2, '2026-01-07T09:00:01.000Z'], [3, '2026-01-07T09:00:02.000Z'], [4, '2026-01-07T09:00:03.250Z'], [5, '2026-01-07T09:00:04.123Z'],
      [9, '2026-01-31T23:59:59.999Z'], [10, '2026-01-31T23:59:59.999Z'],
    ],
  }, [3, 9]);
});

// ---------------------------------------------------------------------------------------------
// The sweep: a prompt and a request of real transcripts (one of each source, picked with a fixed
// seed), one classifying field rewritten per case. Each case must read the same on every path
// (cold, append, streaming, replay: skips, chains, requests' rounds), and its rewritten line must
// come to the skip the table says (none, or the reason).

const SEED = 0x5eed51;

interface SweepCase {
  name: string;
  /** the line to rewrite: the prompt (line 1), the request (line 2), or both */
  on: 'user' | 'assistant' | 'both';
  edit: (l: Record<string, unknown>) => void;
  /** the skip reason of the rewritten line (the request's when both), or null for none */
  skip: 'invalid_field' | 'invalid_usage' | null;
}

const put = (key: string, v: unknown) => (l: Record<string, unknown>) => {
  const keys = key.split('.');
  let o = l;
  for (const k of keys.slice(0, -1)) o = (o[k] && typeof o[k] === 'object' ? o[k] : (o[k] = {})) as Record<string, unknown>;
  o[keys.at(-1)!] = v;
};

const SWEEP: SweepCase[] = [
  { name: 'type in another case on the prompt', on: 'user', edit: put('type', 'User'), skip: null },
  { name: 'type in another case on the request', on: 'assistant', edit: put('type', 'ASSISTANT'), skip: 'invalid_usage' },
  { name: 'type a number on the request', on: 'assistant', edit: put('type', 42), skip: 'invalid_type' },
  { name: 'type a list on the prompt', on: 'user', edit: put('type', ['user']), skip: 'invalid_type' },
  { name: 'isMeta a string', on: 'user', edit: put('isMeta', 'true'), skip: 'invalid_field' },
  { name: 'isMeta a number', on: 'user', edit: put('isMeta', 1), skip: 'invalid_field' },
  { name: 'isCompactSummary a string', on: 'user', edit: put('isCompactSummary', 'true'), skip: 'invalid_field' },
  { name: 'a meta task notification as a list', on: 'user', edit: (l) => Object.assign(l, { isMeta: true, message: { role: 'user', content: [{ type: 'text', text: '<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>' }] } }), skip: null },
  { name: 'isSidechain a string on the request', on: 'assistant', edit: put('isSidechain', 'true'), skip: 'invalid_field' },
  { name: 'isSidechain an object on the prompt', on: 'user', edit: put('isSidechain', {}), skip: 'invalid_field' },
  { name: 'message.role of the other kind', on: 'user', edit: put('message.role', 'assistant'), skip: null },
  { name: 'message.role a number', on: 'assistant', edit: put('message.role', 42), skip: null },
  { name: 'prompt content null', on: 'user', edit: put('message.content', null), skip: null },
  { name: 'prompt content a number', on: 'user', edit: put('message.content', 7), skip: null },
  { name: 'prompt content an object', on: 'user', edit: put('message.content', { type: 'text', text: 'fix it' }), skip: null },
  { name: 'request content an object', on: 'assistant', edit: put('message.content', { type: 'text', text: 'ok' }), skip: null },
  { name: 'request content null', on: 'assistant', edit: put('message.content', null), skip: null },
  { name: 'timestamp without Z', on: 'assistant', edit: put('timestamp', '2026-01-07T09:00:01'), skip: 'invalid_usage' },
  { name: 'timestamp with +02:00', on: 'assistant', edit: put('timestamp', '2026-01-07T11:00:01+02:00'), skip: null },
  { name: 'timestamp a number', on: 'assistant', edit: put('timestamp', 1767776401000), skip: 'invalid_usage' },
  { name: 'timestamp with 9 digits of fraction', on: 'assistant', edit: put('timestamp', '2026-01-07T09:00:01.123456789Z'), skip: null },
  { name: 'timestamp a leap second', on: 'assistant', edit: put('timestamp', '2016-12-31T23:59:60Z'), skip: null },
  { name: 'timestamp second 60 that is no leap second', on: 'assistant', edit: put('timestamp', '2026-01-07T09:00:60Z'), skip: 'invalid_usage' },
  { name: 'sessionId a number', on: 'both', edit: put('sessionId', 42), skip: 'invalid_field' },
  { name: 'agentId a number', on: 'assistant', edit: put('agentId', 7), skip: 'invalid_field' },
  { name: 'agentId an object on a sidechain', on: 'both', edit: (l) => Object.assign(l, { agentId: { id: 'a1' }, isSidechain: true }), skip: 'invalid_field' },
  { name: 'parentUuid a cycle', on: 'both', edit: (l) => Object.assign(l, l.type === 'user' ? { uuid: 'c-1', parentUuid: 'c-2' } : { uuid: 'c-2', parentUuid: 'c-1' }, { isSidechain: true }), skip: null },
  { name: 'parentUuid its own uuid', on: 'both', edit: (l) => Object.assign(l, { uuid: `self-${String(l.type)}`, parentUuid: `self-${String(l.type)}`, isSidechain: true }), skip: null },
  { name: 'toolUseResult a string', on: 'user', edit: put('toolUseResult', 'Error: refused'), skip: null },
  { name: 'toolUseResult a list', on: 'user', edit: put('toolUseResult', [{ agentId: 'a1' }]), skip: null },
  { name: 'toolUseResult.agentId a number', on: 'user', edit: put('toolUseResult', { agentId: 5, status: 'completed' }), skip: null },
];

/** A prompt and a request from one transcript of each source, picked with SEED. */
function sweepSeeds(): { from: string; user: Record<string, unknown>; assistant: Record<string, unknown> }[] {
  const rand = mulberry32(SEED);
  const out = [];
  for (const source of [REAL_LOGS, join(REPO, 'sample-logs')]) {
    const files = transcripts(source).sort();
    for (let tries = 0; tries < 100; tries++) {
      const file = files[Math.floor(rand() * files.length)]!;
      const lines = readFileSync(file, 'utf8').split('\n').filter((s) => s.startsWith('{')).map((s) => JSON.parse(s) as Record<string, unknown>);
      const requests = lines.filter((l) => l.type === 'assistant' && typeof (l.message as { usage?: unknown } | undefined)?.usage === 'object' && (l.message as { model?: unknown }).model !== '<synthetic>');
      const prompts = lines.filter((l) => l.type === 'user' && typeof (l.message as { content?: unknown } | undefined)?.content === 'string' && userLineKind(l) === 'prompt');
      if (!requests.length || !prompts.length) continue;
      out.push({ from: relative(source, file), user: prompts[Math.floor(rand() * prompts.length)]!, assistant: requests[Math.floor(rand() * requests.length)]! });
      break;
    }
  }
  return out;
}

const ROWS = {
  skips: `SELECT line, reason, detail FROM skipped ORDER BY line, reason`,
  chains: `SELECT chain_id, kind, requests, rounds FROM chains ORDER BY chain_id`,
  requests: `SELECT line, round, chain_id FROM requests ORDER BY line`,
};

async function rows(ctx: Awaited<ReturnType<typeof openContext>>): Promise<Record<string, unknown[][]>> {
  const out: Record<string, unknown[][]> = {};
  for (const [k, sql] of Object.entries(ROWS)) out[k] = (await ctx.store.all(sql)).map((r) => Object.values(r).map((v) => (typeof v === 'bigint' ? Number(v) : v)));
  return out;
}

test('the sweep: each classifying field rewritten on real lines reads the same cold, appended, streamed and replayed, and comes to its skip', async () => {
  const seeds = sweepSeeds();
  assert.equal(seeds.length, 2, 'a seed from each source');
  const failures: string[] = [];
  for (const seed of seeds) {
    for (const c of SWEEP) {
      const label = `${c.name} (${seed.from})`;
      // the case's own session, ids and times, so that only the rewritten field differs from a plain prompt and request
      const own = (l: Record<string, unknown>, i: number) => {
        const x = structuredClone(l);
        for (const k of ['agentId', 'isSidechain', 'isMeta', 'isCompactSummary', 'toolUseResult']) delete x[k];
        Object.assign(x, { sessionId: S, uuid: `l-${i}`, parentUuid: i > 1 ? `l-${i - 1}` : null, timestamp: at(i), requestId: x.type === 'assistant' ? `req_${i}` : undefined });
        if (x.type === 'assistant') (x.message as Record<string, unknown>).id = `msg_${i}`;
        return x;
      };
      const prompt = own(seed.user, 1);
      const request = own(seed.assistant, 2);
      if (c.on !== 'assistant') c.edit(prompt);
      if (c.on !== 'user') c.edit(request);
      const lines = [prompt, request, own(seed.user, 3), own(seed.assistant, 4)].map((l) => JSON.stringify(l));
      const whole = lines.join('\n') + '\n';
      const root = writeCorpus({ [mainOf(S)]: whole }, tempDir());
      const cold = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
      const want = await rows(cold).finally(() => cold.store.close());
      const at2 = want.skips!.filter((s) => s[0] === (c.on === 'user' ? 1 : 2)).map((s) => s[1]);
      if (JSON.stringify(at2) !== JSON.stringify(c.skip ? [c.skip] : [])) failures.push(`${label}: skips ${JSON.stringify(want.skips)}`);
      // append: the file first read up to the rewritten line
      const grown = writeCorpus({ [mainOf(S)]: lines.slice(0, 1).join('\n') + '\n' }, tempDir());
      const db = join(tempDir(), 's.duckdb');
      (await openContext({ paths: [grown], db, timezone: 'UTC' })).store.close();
      writeCorpus({ [mainOf(S)]: whole }, grown);
      const warm = await openContext({ paths: [grown], db, timezone: 'UTC' });
      const appended = await rows(warm).finally(() => warm.store.close());
      if (JSON.stringify(appended) !== JSON.stringify(want)) failures.push(`${label}: append ${JSON.stringify(appended)} ≠ cold ${JSON.stringify(want)}`);
      const file = join(root, mainOf(S));
      const id = { fileId: 1, fileAgentId: null, fileSessionId: null };
      // (a v1.x sidechain root's prompt longer than the projection keeps is hashed whole on the buffer
      // path only, by design: read-file.ts wholePrompt; its hash is left out of the comparison)
      const withoutRootHash = (f: Record<string, unknown>) => ({ ...f, sidechainRoots: (f.sidechainRoots as { chainId: string }[]).map((x) => x.chainId) });
      const fast = withoutRootHash(plain((await readTranscript(file, id)).facts));
      const streamed = withoutRootHash(plain((await readTranscript(file, id, { streamAbove: 0, chunkSize: 64 })).facts));
      if (JSON.stringify(streamed) !== JSON.stringify(fast)) failures.push(`${label}: the streaming path's facts differ: ${JSON.stringify(streamed).slice(0, 300)} ≠ ${JSON.stringify(fast).slice(0, 300)}`);
      const r = cli(['replay', 'session', file, '--strategy', 'recorded', '--json'], { HOME: tempDir() });
      if (r.code !== 0) {
        failures.push(`${label}: replay exited ${r.code}: ${r.stderr}`);
        continue;
      }
      const d = JSON.parse(r.stdout) as { chain: { chain_id: string; requests: number; rounds: number; skipped: { reason: string; lines: number[] }[] } };
      const skipped = d.chain.skipped.flatMap((g) => g.lines.map((line) => [line, g.reason])).sort((a, b) => Number(a[0]) - Number(b[0]) || String(a[1]).localeCompare(String(b[1])));
      if (JSON.stringify(skipped) !== JSON.stringify(want.skips!.map((s) => [s[0], s[1]]))) failures.push(`${label}: replay skips ${JSON.stringify(skipped)}`);
      const chain = want.chains!.find((ch) => ch[0] === d.chain.chain_id);
      if (!chain || chain[2] !== d.chain.requests || chain[3] !== d.chain.rounds) failures.push(`${label}: replay chain ${d.chain.chain_id} ${d.chain.requests} requests, ${d.chain.rounds} rounds; store ${JSON.stringify(want.chains)}`);
    }
  }
  assert.deepEqual(failures, []);
});

test('worker threads (and the staged rows of a large ingest) keep the same invalid_field and invalid_usage skips as the main thread', async () => {
  const files: Record<string, string> = {
    'projects/-work-a/5e551011-0000-4000-8000-0000000000a1.jsonl': sidechainLines('true').join('\n') + '\n',
    'projects/-work-b/5e551011-0000-4000-8000-0000000000b1.jsonl': metaLines({}).join('\n') + '\n',
    'projects/-work-c/5e551011-0000-4000-8000-0000000000c1.jsonl': idLines([7]).join('\n') + '\n',
  };
  const skipsOf = async (root: string, workers: number) => {
    const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC', workers });
    try {
      return (await ctx.store.all(`SELECT f.path, s.line, s.reason, s.detail FROM skipped s JOIN files f USING (file_id) ORDER BY 1, 2, 3`)).map((r) => [relative(root, String(r.path)), Number(r.line), r.reason, r.detail]);
    } finally {
      ctx.store.close();
    }
  };
  const small = writeCorpus(files, tempDir());
  const onMain = await skipsOf(small, 1);
  assert.equal(onMain.length, 7, JSON.stringify(onMain));
  // past the pool's threshold (8 MiB) and the staging one (32 MiB): three prompts of 11 MiB in files of
  // their own, none half of the bytes (one would be read in pieces)
  const filler = said(0, 'x'.repeat(11 * 1024 * 1024)) + '\n';
  const big = writeCorpus({ ...files, ...Object.fromEntries([1, 2, 3].map((i) => [`projects/-work-z/5e551011-0000-4000-8000-0000000000f${i}.jsonl`, filler])) }, tempDir());
  assert.deepEqual(await skipsOf(big, 2), onMain);
});

// An inline sidechain whose request names its parent with a number, and a main prompt whose uuid is one.
const uuidLines = (value: unknown) => [
  said(0, 'hi', { uuid: value }), //                                                   line 1
  req(1, 'msg_1'), //                                                                   line 2
  said(2, 'look into it', { isSidechain: true, uuid: 's-1' }), //                       line 3: a sidechain root
  req(3, 'msg_2', { isSidechain: true, parentUuid: value }), //                         line 4
];

test('uuid and parentUuid that are no string: read as absent (the line starts a thread of its own), each an invalid_field skip, on every path', async () => {
  for (const [value, shown] of [[5, '5'], [{ id: 's-1' }, '{…}'], [['s-1'], '[…]']] as [unknown, string][]) {
    const skips: Skip[] = [[1, 'invalid_field', `uuid = ${shown} is not a string: read as absent`], [4, 'invalid_field', `parentUuid = ${shown} is not a string: read as absent`]];
    // the request its own sidechain (side:r-3), apart from the root it answered (side:s-1)
    await assertEveryPath(uuidLines(value), { skips, chains: [['main', 1, 1], ['sidechain', 1, 1], ['sidechain', 0, 1]] }, [3]);
  }
  await assertEveryPath(uuidLines('s-1'), { skips: [], chains: [['main', 1, 1], ['sidechain', 1, 1]] }, [3]);
});

test('requestId that is no string: read as absent (the request is message.id alone), an invalid_field skip, on every path', async () => {
  // two copies of one response whose requestId is no string: one request, by its message.id
  const lines = (value: unknown) => [said(0, 'hi'), req(1, 'msg_1', { requestId: value }), req(2, 'msg_1', { requestId: value, uuid: 'r-2b' }), req(3, 'msg_2')];
  for (const [value, shown] of [[1.5, '1.5'], [true, 'true'], [{ id: 17 }, '{…}'], [2 ** 53, String(2 ** 53)]] as [unknown, string][]) {
    const detail = `requestId = ${shown} is not a string: read as absent`;
    await assertEveryPath(lines(value), { skips: [[2, 'invalid_field', detail], [3, 'invalid_field', detail]], chains: [['main', 2, 1]] }, [2]);
  }
  await assertEveryPath(lines('req_17'), { skips: [], chains: [['main', 2, 1]] }, [2]);
});

test('requestId that is a whole number is its decimal text: a copy with 17 and a copy with "17" are one request, on every path and across files', async () => {
  // the number was read as absent: its copy was keyed by message.id alone, the other by (message.id, "17"), and counted twice
  const detail = 'requestId = 17 is not a string: read as "17"';
  const mixed = [said(0, 'hi'), req(1, 'msg_1', { requestId: 17 }), req(2, 'msg_1', { requestId: '17', uuid: 'r-2b' }), req(3, 'msg_2')];
  await assertEveryPath(mixed, { skips: [[2, 'invalid_field', detail]], chains: [['main', 2, 1]] }, [2]);
  const numbers = [said(0, 'hi'), req(1, 'msg_1', { requestId: 17 }), req(2, 'msg_1', { requestId: 17, uuid: 'r-2b' }), req(3, 'msg_2')];
  await assertEveryPath(numbers, { skips: [[2, 'invalid_field', detail], [3, 'invalid_field', detail]], chains: [['main', 2, 1]] }, [2]);
  // the store's de-dup, across transcripts: a resumed session repeats the response with its requestId as text
  const other = '5e551011-0000-4000-8000-00000000f1e2';
  const copy = j({ ...JSON.parse(req(1, 'msg_1', { requestId: '17' })), sessionId: other });
  const root = writeCorpus({ [mainOf(S)]: mixed.slice(0, 2).join('\n') + '\n', [mainOf(other)]: copy + '\n' }, tempDir());
  const s = summaryJson([root]);
  assert.equal(s.totals.requests, 1);
  assert.equal(s.quality.duplicates_removed, 1);
});

test('a line read with a field ignored or converted (invalid_field) is listed with the skips but not counted as skipped: summary, its JSON, the report\'s reading and the replay say it apart', async () => {
  // lines 3 and 4 read, their isSidechain ignored; line 8 not JSON, not read
  const root = writeCorpus({ [mainOf(S)]: [...sidechainLines('true'), '{"type": "assistant", '].join('\n') + '\n' }, tempDir());
  const q = summaryJson([root]).quality;
  assert.equal(q.skipped_lines, 1, 'only the line that was not read is skipped');
  assert.equal(q.noted_lines, 2);
  assert.deepEqual(q.skipped.map((s: { reason: string; count: number }) => [s.reason, s.count]).sort(), [['invalid_field', 2], ['invalid_json', 1]]);
  const text = cli(['summary', root, '--db', ':memory:', '--timezone', 'UTC'], { HOME: tempDir() }).stdout;
  assert.match(text, /Data quality: 1 file, 8 lines, 1 skipped, 2 read with a field ignored or converted,/);
  assert.match(text, /^ {2}read \(field ignored or converted\) invalid_field: 2 \(.*:3, .*:4\)$/m);
  assert.match(text, /^ {2}skipped invalid_json: 1 \(.*:8\)$/m);
  const reading = qualityReading({ files: 1, lines: 8, bytes: 0, requests: 4, duplicatesRemoved: 0, splitMissing: 0, unknownModels: [], skipped: q.skipped.map((s: { reason: string; count: number }) => ({ reason: s.reason, count: s.count, examples: [] })) });
  assert.match(reading, /skipped 1 \(1 invalid_json\); read 2 lines with a field of the wrong type ignored or converted \(invalid_field\);/);
  const file = join(root, mainOf(S));
  const r = cli(['replay', 'session', file, '--strategy', 'recorded', '--json'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const chain = JSON.parse(r.stdout).chain;
  assert.deepEqual([chain.skipped_lines, chain.noted_lines], [1, 2]);
  const shown = cli(['replay', 'session', file, '--strategy', 'recorded'], { HOME: tempDir() }).stdout;
  assert.match(shown, /^1 line skipped, 2 lines read with a field ignored or converted:\n {2}read \(field ignored or converted\) invalid_field: 2 \(lines 3, 4\)\n {2}skipped invalid_json: 1 \(line 8\)$/m);
});

test('skipped and noted count lines, each line once: a line skipped for two reasons is 1 skipped, a line skipped and with a field ignored is skipped only', async () => {
  const usage = { input_tokens: 3, cache_creation_input_tokens: 100, cache_read_input_tokens: 0, output_tokens: 2 };
  const lines = [
    said(0, 'hi'), //                                                                                      line 1
    req(1, 'msg_1'), //                                                                                    line 2
    // line 3: usage on a progress line, and an agent_progress copy in it that names no subagent: two skips
    j({ type: 'progress', sessionId: S, timestamp: at(2), uuid: 'p-3', message: { id: 'msg_x', model: 'claude-sonnet-4-5-20250929', usage },
        data: { type: 'agent_progress', message: { type: 'assistant', timestamp: at(2), requestId: 'req_y', message: { id: 'msg_y', model: 'claude-sonnet-4-5-20250929', usage } } } }),
    // line 4: usage on a user line (not read) with a uuid that is no string (noted): skipped only
    j({ type: 'user', sessionId: S, timestamp: at(3), uuid: 5, message: { role: 'user', content: 'x', id: 'msg_z', usage } }),
    said(4, 'more', { isMeta: 'yes' }), //                                                                 line 5: noted only
  ];
  const root = writeCorpus({ [mainOf(S)]: lines.join('\n') + '\n' }, tempDir());
  const q = summaryJson([root]).quality;
  const reasons = q.skipped.map((s: { reason: string; count: number }) => `${s.reason} ${s.count}`).sort();
  assert.ok(reasons.includes('invalid_field 2') && q.skipped.some((s: { reason: string; count: number }) => s.reason === 'invalid_usage' && s.count >= 3), reasons.join(', '));
  assert.deepEqual([q.skipped_lines, q.noted_lines], [2, 1], 'lines 3 and 4 not read; line 5 read, a field ignored');
  const r = cli(['replay', 'session', join(root, mainOf(S)), '--strategy', 'recorded', '--json'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const chain = JSON.parse(r.stdout).chain;
  // the replay skips line 3's usage once (it reads no agent_progress copy) and line 4, and notes line 5
  assert.deepEqual([chain.skipped_lines, chain.noted_lines], [2, 1]);
});
