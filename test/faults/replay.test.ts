/**
 * Bad lines under `replay session` (SPEC §8): the replay re-reads a transcript whole (every content
 * block, not the ingest's projection), so each fault is checked through that reader too, with the
 * built CLI: exit 0, no internal error, the bad line counted as skipped and the rest replayed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { readSessionTranscript } from '../../src/replay/session-transcript.js';
import { assistant, cliPath, freeBytes, removeDir, runCli, tempDir, usage, user, writeLog } from './helpers.js';

/** A JSONL line with one top-level field set to `value`, or taken out when `value` is undefined. */
function withField(line: string, field: string, value: unknown): string {
  const l = JSON.parse(line);
  if (value === undefined) delete l[field];
  else l[field] = value;
  return JSON.stringify(l);
}

function setup(t: { after: (fn: () => void) => void }) {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  return { logs: path.join(dir, 'logs'), db: path.join(dir, 's.duckdb') };
}

test('a line nested thousands of levels deep is a skipped line of the replay, not a stack overflow', async (t) => {
  const { logs, db } = setup(t);
  const deep = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
  const file = writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    `{"type":"attachment","sessionId":"s1","timestamp":"2025-03-01T10:00:01.000Z","attachment":{"type":"skill_listing","x":${deep(200_000)}}}`,
    `{"type":"user","sessionId":"s1","timestamp":"2025-03-01T10:00:02.000Z","message":{"role":"user","content":[{"type":"text","text":"a","x":${deep(5_000)}}]}}`,
    assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:03.000Z' }),
  ]);
  for (const args of [[file], ['s1', logs]]) {
    const r = await runCli(['replay', 'session', ...args, '--db', db, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /internal|RangeError/);
    const d = JSON.parse(r.stdout);
    assert.equal(d.chain.skipped_lines, 2, JSON.stringify(d.chain));
    assert.equal(d.chain.requests, 2);
  }
});

test('a request on a line nested deeper than the replay walks still counts, as ingest counts it: its content is the skipped part', async (t) => {
  const { logs, db } = setup(t);
  let input: unknown = { leaf: 1 };
  for (let i = 0; i < 600; i++) input = { x: input };
  const tool = { type: 'tool_use', id: 'tu1', name: 'Deep', input };
  const line = JSON.parse(assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:03.000Z' }));
  line.message.content = [tool];
  const deepLine = JSON.stringify(line);
  const file = writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    deepLine,
  ]);
  const summary = await runCli(['summary', logs, '--db', db, '--json']);
  assert.equal(JSON.parse(summary.stdout).totals.requests, 2);
  const r = await runCli(['replay', 'session', file, '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.chain.requests, 2, 'the replay counts the request ingest counts');
  assert.equal(d.chain.skipped_lines, 1, 'its content is skipped, and counted');
});

test('a request on a line nested too deep only in a field the replay does not read still counts, as ingest counts it', async (t) => {
  const { logs, db } = setup(t);
  const deep = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
  const line = (field: 'top' | 'message' | 'usage', t: string, msg: string) => {
    const l = JSON.parse(assistant({ msg, usage: usage(5, 6, 7, 8), t }));
    if (field === 'top') l.x = 'DEEP';
    else if (field === 'message') l.message.container = 'DEEP';
    else l.message.usage.x = 'DEEP'; // a field of usage ingest does not read
    return JSON.stringify(l).replace('"DEEP"', deep(5_000));
  };
  const file = writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    line('top', '2025-03-01T10:00:00.000Z', 'm1'),
    line('message', '2025-03-01T10:00:03.000Z', 'm2'),
    line('usage', '2025-03-01T10:00:06.000Z', 'm3'),
  ]);
  const summary = await runCli(['summary', logs, '--db', db, '--json']);
  assert.equal(JSON.parse(summary.stdout).totals.requests, 3);
  for (const args of [[file], ['s1', logs]]) {
    const r = await runCli(['replay', 'session', ...args, '--db', db, '--strategy', 'recorded', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout);
    assert.equal(d.chain.requests, 3, 'the replay counts the requests ingest counts');
    assert.equal(d.chain.skipped_lines, 3, 'their deep parts are skipped, and counted');
    assert.deepEqual(d.turns.map((t: { input_tokens: number }) => t.input_tokens > 0), [true, true, true]);
  }
});

test('a session whose transcript is split across two project directories: the requests only the other one holds are counted and named, not dropped unsaid', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'projects/-a/s1.jsonl', [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    assistant({ msg: 'm2', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:05.000Z' }),
  ]);
  const other = writeLog(logs, 'projects/-b/s1.jsonl', [
    user('more', { t: '2025-03-01T10:01:00.000Z' }),
    assistant({ msg: 'm3', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:01:05.000Z' }),
  ]);
  const summary = await runCli(['summary', logs, '--db', db, '--json']);
  assert.equal(JSON.parse(summary.stdout).totals.requests, 3);
  const r = await runCli(['replay', 'session', 's1', logs, '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const c = JSON.parse(r.stdout).chain;
  assert.equal(c.requests, 2, 'the replay reads one transcript');
  assert.equal(c.other_file_requests, 1, 'the request only the other transcript holds is counted');
  assert.deepEqual(c.other_files, [other]);
  const text = await runCli(['replay', 'session', 's1', logs, '--db', db, '--strategy', 'recorded']);
  assert.match(text.stdout.replace(/\s+/g, ' '), /1 request of this chain not replayed: another transcript of this session, \S+s1\.jsonl, holds it/);
  // the advice says what replaying that file will and will not hold: its own lines, not this transcript's messages
  assert.match(text.stdout.replace(/\s+/g, ' '), /the replay reads one transcript: that one replayed as a FILE replays it from its own lines alone, without this transcript's messages, which its prompt as sent may have held/);
  // named by its path with the logs that hold it, each file says what the other holds
  const first = path.join(logs, 'projects/-a/s1.jsonl');
  for (const [file, requests, elsewhere, at] of [[first, 2, 1, other], [other, 1, 2, first]] as const) {
    const f = await runCli(['replay', 'session', file, logs, '--db', db, '--strategy', 'recorded', '--json']);
    assert.equal(f.code, 0, f.stderr);
    const fc = JSON.parse(f.stdout).chain;
    assert.deepEqual([fc.requests, fc.other_file_requests, fc.other_files], [requests, elsewhere, [at]], file);
  }
  const alone = await runCli(['replay', 'session', first, '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(JSON.parse(alone.stdout).chain.other_file_requests, 0, 'a path replayed alone has no store to ask');
  const whole = await runCli(['replay', 'session', 's1', path.join(logs, 'projects/-a'), '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(JSON.parse(whole.stdout).chain.other_file_requests, 0, 'with one transcript read, nothing is elsewhere');
});

test('a session whose transcript has a stale copy in another project directory (the same file, cut short earlier): the replay reads the copy holding the most, and says the other was not read', async (t) => {
  const { logs, db } = setup(t);
  const lines = [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    user('more', { t: '2025-03-01T10:01:00.000Z' }),
    assistant({ msg: 'm2', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:01:05.000Z' }),
    assistant({ msg: 'm3', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:02:05.000Z' }),
  ];
  // first by path, and its request's copy ties in time with the full one's: the store's chain file
  const stale = writeLog(logs, 'projects/-a/s1.jsonl', lines.slice(0, 2));
  const full = writeLog(logs, 'projects/-b/s1.jsonl', lines);
  const r = await runCli(['replay', 'session', 's1', logs, '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const c = JSON.parse(r.stdout).chain;
  assert.deepEqual([c.file, c.requests, c.other_file_requests, c.other_copies], [full, 3, 0, [stale]], 'the whole copy is replayed, the stale one named');
  const text = await runCli(['replay', 'session', 's1', logs, '--db', db, '--strategy', 'recorded']);
  assert.equal(text.code, 0, text.stderr);
  const said = text.stdout.split('\n').filter((l) => l.includes('another copy of this transcript'));
  assert.equal(said.length, 1, 'one line says it');
  assert.equal(said[0], `another copy of this transcript, ${stale}, holds none of its requests that this one does not: replayed ${full}, the one holding the most`);
  // the report's replay of it says the same
  const out = path.join(path.dirname(logs), 'r.html');
  const report = await runCli(['report', logs, '--db', db, '--session', 's1', '--out', out]);
  assert.equal(report.code, 0, report.stderr);
  assert.ok(readFileSync(out, 'utf8').replace(/<wbr>/g, '').includes(`another copy of this transcript, ${stale}, holds none`), 'the page names the copy not read');
  // one copy only: nothing to say
  const alone = await runCli(['replay', 'session', 's1', path.join(logs, 'projects/-b'), '--db', ':memory:', '--strategy', 'recorded', '--json']);
  assert.deepEqual(JSON.parse(alone.stdout).chain.other_copies, []);
  assert.deepEqual([c.other_copies_by, c.other_copies_tied], ['requests', 0]);
  // two whole copies, the same requests in each: neither is "the one holding the most"; the note says what chose it
  writeLog(logs, 'projects/-a/s1.jsonl', lines);
  const same = await runCli(['replay', 'session', 's1', logs, '--db', ':memory:', '--strategy', 'recorded', '--json']);
  assert.equal(same.code, 0, same.stderr);
  const d = JSON.parse(same.stdout).chain;
  assert.equal(d.other_copies.length, 1);
  assert.equal(d.other_copies_tied, 1);
  assert.ok(['best_copies', 'latest', 'largest', 'path'].includes(d.other_copies_by), d.other_copies_by);
  const sameText = await runCli(['replay', 'session', 's1', logs, '--db', ':memory:', '--strategy', 'recorded']);
  const tie = sameText.stdout.split('\n').filter((l) => l.includes('another copy of this transcript'));
  assert.equal(tie.length, 1, sameText.stdout);
  assert.equal(tie[0], `another copy of this transcript, ${d.other_copies[0]}, holds the same requests as this one: replayed ${d.file}, ${{ best_copies: 'the one whose copies of them the store counts', latest: 'the one whose last line is latest', largest: 'the largest', path: 'the first by path' }[d.other_copies_by as string]}`);
});

test('a resumed session whose transcript repeats every request of the earlier one under the earlier session\'s id is no copy of its transcript: the earlier one is replayed from its own file', async (t) => {
  const { logs, db } = setup(t);
  const a = [user('hi'), assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }), assistant({ msg: 'm2', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:05.000Z' })];
  // s2.jsonl: s1's lines again an hour later (their session id kept), then its own request: more requests of s1's chain,
  // later and larger, under another name
  const later = (l: string) => l.replace(/T10:00:/g, 'T11:00:').replace('T09:59:59', 'T10:59:59');
  const resumed = (name: string) => writeLog(logs, `projects/-a/${name}.jsonl`, [...a.map(later), user('again', { session: name, t: '2025-03-01T11:01:00.000Z' }), assistant({ msg: 'm3', usage: usage(1, 2, 3, 4), t: '2025-03-01T11:01:05.000Z', session: name })]);
  const own = writeLog(logs, 'projects/-a/s1.jsonl', a);
  // the resumed session's file after s1.jsonl by path, then before it (s0.jsonl: the store's chain file, first by path)
  for (const name of ['s2', 's0']) {
    const other = resumed(name);
    const r = await runCli(['replay', 'session', 's1', logs, '--db', ':memory:', '--strategy', 'recorded', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout).chain;
    assert.deepEqual([c.file, c.requests, c.other_copies, c.first_at], [own, 2, [], '2025-03-01T10:00:00.000Z'], name);
    rmSync(other);
  }
  // s0.jsonl first by path, beside a stale copy of s1.jsonl (-a, its first request) and the whole one (-b): the whole one
  resumed('s0');
  writeLog(logs, 'projects/-a/s1.jsonl', a.slice(0, 2));
  const stale = path.join(logs, 'projects/-a/s1.jsonl');
  const full = writeLog(logs, 'projects/-b/s1.jsonl', a);
  const r = await runCli(['replay', 'session', 's1', logs, '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const c = JSON.parse(r.stdout).chain;
  assert.deepEqual([c.file, c.requests, c.other_copies, c.first_at], [full, 2, [stale], '2025-03-01T10:00:00.000Z']);
});

test('a tool result whose toolUseResult (Claude Code\'s copy of the output, unread by the replay) is nested too deep is replayed whole', async (t) => {
  const { logs, db } = setup(t);
  let copy: unknown = { leaf: 1 };
  for (let i = 0; i < 1_000; i++) copy = { x: [copy] };
  const result = (toolUseResult: unknown) =>
    JSON.stringify({
      type: 'user',
      sessionId: 's1',
      timestamp: '2025-03-01T10:00:01.000Z',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'RESULT '.repeat(3_000) }] },
      toolUseResult,
    });
  const lines = (toolUseResult: unknown) => [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    result(toolUseResult),
    assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:03.000Z' }),
  ];
  const replay = async (file: string) => {
    const r = await runCli(['replay', 'session', file, '--db', db, '--strategy', 'recorded', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const plain = await replay(writeLog(logs, 'proj/s1.jsonl', lines({ stdout: 'RESULT' })));
  const deep = await replay(writeLog(logs, 'proj/s2.jsonl', lines(copy)));
  assert.equal(deep.chain.skipped_lines, 0, JSON.stringify(deep.chain));
  assert.equal(deep.strategies.recorded.input_tokens, plain.strategies.recorded.input_tokens, 'the tool result\'s ~3,000 tokens are in request 2');
});

test('a user line whose content is an object or array of the wrong kind opens no round, in the store as in the replay', async (t) => {
  const { logs, db } = setup(t);
  const odd = (content: unknown, t: string) => JSON.stringify({ type: 'user', sessionId: 's1', timestamp: t, message: { role: 'user', content } });
  writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    odd({ weird: true }, '2025-03-01T10:00:01.000Z'),
    odd(123, '2025-03-01T10:00:02.000Z'),
    assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:03.000Z' }),
  ]);
  const sql = path.join(path.dirname(logs), 'rounds.sql');
  writeLog(path.dirname(logs), 'rounds.sql', 'select rounds from chains');
  const q = await runCli(['query', sql, logs, '--db', db, '--json']);
  assert.equal(q.code, 0, q.stderr);
  assert.deepEqual(JSON.parse(q.stdout).rows, [{ rounds: 1 }], 'an object is no prompt, as a number is not');
  const r = await runCli(['replay', 'session', 's1', logs, '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).chain.rounds, 1);
});

test('a line longer than a string can be (600 MiB) is streamed by the replay: its request kept, no RangeError', async (t) => {
  const { logs, db } = setup(t);
  const bytes = 600 * 1024 * 1024; // V8 strings end at 2^29 - 24 characters (~512 MiB)
  assert.ok(freeBytes(path.dirname(logs)) > bytes * 1.1, 'this case needs 0.7 GB free under the temp dir');
  const file = writeLog(logs, 'proj/s1.jsonl', user('paste this') + '\n' + assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }) + '\n');
  const fd = openSync(file, 'a');
  const head = assistant({ msg: 'm_big', usage: usage(0, 0, 0, 0), text: 'TEXT', t: '2025-03-01T10:00:01.000Z' }).split('TEXT')[0]!;
  writeSync(fd, head);
  const body = Buffer.alloc(1 << 20, 'log line \\n ');
  for (let left = bytes; left > 0; left -= body.length) writeSync(fd, body, 0, Math.min(left, body.length));
  writeSync(fd, '"}],"usage":{"input_tokens":7,"output_tokens":11,"cache_creation_input_tokens":13,"cache_read_input_tokens":17}}}\n');
  writeSync(fd, assistant({ msg: 'm3', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:02.000Z' }) + '\n');
  closeSync(fd);
  const r = await runCli(['replay', 'session', file, '--db', db, '--strategy', 'recorded', '--json'], { probe: true });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /internal|RangeError/);
  const d = JSON.parse(r.stdout);
  assert.equal(d.chain.requests, 3);
  assert.equal(d.chain.skipped_lines, 0);
  // the replay holds a line's bytes until it outgrows a string (~512 MiB), then streams the rest: not 2–3× the line
  assert.ok(r.maxRssKb !== null && r.maxRssKb / 1024 < 800, `peak RSS ${Math.round((r.maxRssKb ?? 0) / 1024)} MB`);
});

test('a long run without whitespace (base64 of a blank image printed by a tool) is tokenized in linear time: the replay ends', async (t) => {
  const { logs, db } = setup(t);
  // js-tiktoken's merge is quadratic in one pre-token: 30,000 letters in a row took minutes
  const printed = { type: 'tool_result', tool_use_id: 't1', content: `iVBOR${'A'.repeat(30_000)}` };
  const file = writeLog(logs, 'proj/s1.jsonl', [
    user('look'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }),
    JSON.stringify({ type: 'user', sessionId: 's1', timestamp: '2025-03-01T10:00:01.000Z', message: { role: 'user', content: [printed] } }),
    assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:02.000Z' }),
  ]);
  const r = spawnSync(process.execPath, [cliPath, 'replay', 'session', file, '--db', db, '--strategy', 'recorded', '--json'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.signal, null, 'the replay did not end within 30 s');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).chain.requests, 2);
});

test('a line of 80 MiB, long but a string, is replayed with its text: only lines no string can hold are streamed', async () => {
  const { readSessionTranscript, REPLAY_STREAM_ABOVE } = await import('../../src/replay/session-transcript.js');
  assert.equal(REPLAY_STREAM_ABOVE, (await import('node:buffer')).constants.MAX_STRING_LENGTH);
  const dir = tempDir();
  try {
    const text = 'x '.repeat(40 * 1024 * 1024);
    const big = assistant({ msg: 'm_big', usage: usage(1, 2, 3, 4), text, t: '2025-03-01T10:00:01.000Z' });
    const file = writeLog(dir, 'proj/s1.jsonl', user('paste this') + '\n' + big + '\n');
    const t = await readSessionTranscript(file);
    assert.deepEqual(t.skipped, []);
    const blocks = t.chains.flatMap((c) => c.items).flatMap((i) => (i.kind === 'message' && i.role === 'assistant' ? i.blocks : []));
    assert.equal(blocks.length, 1);
    assert.equal((blocks[0]!.text as string).length, text.length, 'the 80 MiB text is kept for the replay');
  } finally {
    removeDir(dir);
  }
});

test('a streamed first line after a byte-order mark is read as a buffered one is: the mark is no part of its JSON', async () => {
  const { readSessionTranscript } = await import('../../src/replay/session-transcript.js');
  const dir = tempDir();
  try {
    const big = assistant({ msg: 'm_big', usage: usage(1, 2, 3, 4), text: 'x '.repeat(500), t: '2025-03-01T10:00:01.000Z' });
    const body = [big, assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:02.000Z' })].join('\r\n') + '\r\n';
    const file = writeLog(dir, 'proj/s1.jsonl', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]));
    // the first line (over 1,000 bytes) streamed, as one past ~512 MiB is; it was an invalid_json skip
    const streamed = await readSessionTranscript(file, { streamAbove: 200 });
    const whole = await readSessionTranscript(file);
    assert.deepEqual(streamed.skipped, []);
    assert.deepEqual(whole.skipped, []);
    const requests = (t: typeof whole) => t.chains.flatMap((c) => c.items).filter((i) => i.kind === 'message' && i.role === 'assistant').length;
    assert.equal(requests(streamed), 2);
    assert.equal(requests(whole), 2);
    // streamed indeed: the projection keeps the request, not its text
    const text = (t: typeof whole) => t.chains.flatMap((c) => c.items).flatMap((i) => (i.kind === 'message' && i.role === 'assistant' ? i.blocks : [])).map((b) => b.text ?? null);
    assert.notDeepEqual(text(streamed), text(whole));
  } finally {
    removeDir(dir);
  }
});

test('a request line without a valid timestamp is a counted invalid_usage skip of the replay, as of ingest; a bad time elsewhere breaks no gap', async (t) => {
  const { logs, db } = setup(t);
  const timed = (msg: string, ts: unknown) => withField(assistant({ msg, usage: usage(5, 6, 7, 8) }), 'timestamp', ts);
  const file = writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    timed('m_text', 'not a time'),
    timed('m_none', undefined),
    JSON.stringify({ type: 'attachment', sessionId: 's1', timestamp: 'x', attachment: { type: 'todo_reminder', content: 'do it' } }),
    JSON.stringify({ type: 'system', subtype: 'compact_boundary', sessionId: 's1', content: 'compacted' }),
    assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:03.000Z' }),
  ]);
  const summary = await runCli(['summary', logs, '--db', db, '--json']);
  const q = JSON.parse(summary.stdout).quality;
  assert.deepEqual(q.skipped.map((s: { reason: string; count: number }) => [s.reason, s.count]), [['invalid_usage', 2]]);
  for (const args of [[file], ['s1', logs]]) {
    const r = await runCli(['replay', 'session', ...args, '--db', db, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout);
    assert.equal(d.chain.requests, 2);
    assert.equal(d.chain.skipped_lines, 2, 'the two lines ingest skips, not dropped unsaid');
    assert.deepEqual(d.chain.skipped, [{ reason: 'invalid_usage', count: 2, lines: [3, 4] }]);
    assert.equal(d.chain.compactions, 1);
    for (const turn of d.turns) assert.ok(turn.gap_s === null || Number.isFinite(turn.gap_s), JSON.stringify(turn));
    assert.ok(Object.values(d.strategies).every((s: any) => Number.isFinite(s.weight)));
  }
  const text = await runCli(['replay', 'session', file, '--strategy', 'recorded']);
  assert.match(text.stdout, /2 lines skipped:\n {2}skipped invalid_usage: 2 \(lines 3, 4\)/);
});

test('request lines ingest skips as invalid_usage (no message.id, a NUL in it, usage that does not read) are the replay\'s counted skips too, and no request', async (t) => {
  const { logs, db } = setup(t);
  const bad = (msg: string, patch: (l: any) => void) => {
    const l = JSON.parse(assistant({ msg, usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:02.000Z' }));
    patch(l);
    return JSON.stringify(l);
  };
  const file = writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    bad('m_noid', (l) => delete l.message.id),
    bad('m_nul', (l) => (l.message.id = 'm\u0000x')),
    bad('m_text', (l) => (l.message.usage = 'lots')),
    bad('m_neg', (l) => (l.message.usage.input_tokens = -5)),
    bad('m_split', (l) => (l.message.usage.cache_creation = 7)),
    bad('m_msg', (l) => (l.message = 'not an object: no request, no usage, in ingest as here')),
    assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:03.000Z' }),
  ]);
  const s = JSON.parse((await runCli(['summary', logs, '--db', db, '--json'])).stdout);
  assert.equal(s.totals.requests, 2);
  assert.deepEqual(s.quality.skipped.map((g: { reason: string; count: number }) => [g.reason, g.count]), [['invalid_usage', 5]]);
  for (const args of [[file], ['s1', logs]]) {
    const r = await runCli(['replay', 'session', ...args, '--db', db, '--strategy', 'recorded', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout);
    assert.equal(d.chain.requests, 2, 'the NUL id was a request of the replay only');
    assert.deepEqual(d.chain.skipped, [{ reason: 'invalid_usage', count: 5, lines: [3, 4, 5, 6, 7] }]);
  }
});

test('usage on a line that is not an assistant line (type Assistant, none) is a counted invalid_usage skip of the replay, as of ingest', async (t) => {
  const { logs, db } = setup(t);
  const retyped = (msg: string, type: unknown) => withField(assistant({ msg, usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:02.000Z' }), 'type', type);
  const file = writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    retyped('m_case', 'Assistant'),
    retyped('m_none', undefined),
    assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:03.000Z' }),
  ]);
  const s = JSON.parse((await runCli(['summary', logs, '--db', db, '--json'])).stdout);
  assert.equal(s.totals.requests, 2);
  assert.deepEqual(s.quality.skipped.map((g: { reason: string; count: number }) => [g.reason, g.count]), [['invalid_usage', 2]]);
  const r = await runCli(['replay', 'session', file, '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.chain.requests, 2);
  assert.deepEqual(d.chain.skipped, [{ reason: 'invalid_usage', count: 2, lines: [3, 4] }]);
});

test('a line whose type is not a string is an invalid_type skip of the replay, as of ingest, with ingest\'s detail', async (t) => {
  const { logs, db } = setup(t);
  const file = writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:00.000Z' }),
    withField(assistant({ msg: 'm_num', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:02.000Z' }), 'type', 7),
    withField(user('more'), 'type', { kind: 'user' }),
    assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:03.000Z' }),
  ]);
  const s = JSON.parse((await runCli(['summary', logs, '--db', db, '--json'])).stdout);
  assert.equal(s.totals.requests, 2);
  const ingest = s.quality.skipped.map((g: { reason: string; count: number; examples: { line: number }[] }) => ({ reason: g.reason, count: g.count, lines: g.examples.map((e) => e.line) }));
  assert.deepEqual(ingest, [{ reason: 'invalid_type', count: 2, lines: [3, 4] }]);
  const r = await runCli(['replay', 'session', file, '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.chain.requests, 2);
  assert.deepEqual(d.chain.skipped, ingest);
});

test('the replay names its skipped lines as ingest does: a line that is not an object is invalid_json, a half-written last line incomplete_last_line', async (t) => {
  const { logs, db } = setup(t);
  const file = writeLog(logs, 'proj/s1.jsonl', [user('hi'), '[1,2]', '42', assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) })].join('\n') + '\n{"type":"assis');
  const s = JSON.parse((await runCli(['summary', logs, '--db', db, '--json'])).stdout);
  const ingest = s.quality.skipped.map((g: { reason: string; count: number; examples: { line: number }[] }) => ({ reason: g.reason, count: g.count, lines: g.examples.map((e) => e.line) }));
  assert.deepEqual(ingest, [{ reason: 'invalid_json', count: 2, lines: [2, 3] }, { reason: 'incomplete_last_line', count: 1, lines: [5] }]);
  const r = await runCli(['replay', 'session', file, '--db', db, '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).chain.skipped, ingest);
});

test('150,000 attachment lines with no prompt between them are read and replayed: no "Maximum call stack size exceeded" (the file was an unreadable_file skip)', async (t) => {
  const { logs, db } = setup(t);
  const N = 150_000;
  const attachment = (i: number) => JSON.stringify({ type: 'attachment', sessionId: 's1', timestamp: '2025-03-01T09:59:59.500Z', attachment: { type: 'todo_reminder', content: `item ${i}` } });
  const file = writeLog(logs, 'proj/s1.jsonl', [user('hi'), ...Array.from({ length: N }, (_, i) => attachment(i)), assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) })]);
  const s = await runCli(['summary', logs, '--db', db, '--json']);
  assert.equal(s.code, 0, s.stderr);
  const q = JSON.parse(s.stdout);
  assert.deepEqual(q.quality.skipped, []);
  assert.equal(q.totals.requests, 1);
  const sql = path.join(path.dirname(db), 'count.sql');
  writeLog(path.dirname(db), 'count.sql', 'SELECT count(*) AS n FROM attachments');
  const counted = await runCli(['query', sql, logs, '--db', db, '--json']);
  assert.equal(counted.code, 0, counted.stderr);
  assert.deepEqual(JSON.parse(counted.stdout).rows, [{ n: N }]);
  const r = await runCli(['replay', 'session', file, '--strategy', 'recorded,dedupe-attachments', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).chain.attachments, N);
});

test('a transcript whose every line is skipped (gzipped, UTF-16) is said to have no request with its skipped lines, not as if it held none', async (t) => {
  const { logs, db } = setup(t);
  const text = [user('hi'), assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) })].join('\n') + '\n';
  const utf16 = writeLog(logs, 'proj/utf16.jsonl', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
  const r = await runCli(['replay', 'session', utf16, '--db', db]);
  assert.equal(r.code, 2, r.stderr);
  // every UTF-16 line is invalid_json; the NUL after the last newline (0A 00) is the rest of that newline,
  // as ingest reads it: it was a third line, incomplete_last_line
  // and that they look like UTF-16 text, in summary's words, with what to do
  const hint = 'UTF-16 text, not UTF-8 (Claude Code writes UTF-8: convert the file, e.g. iconv -f UTF-16 -t UTF-8)';
  assert.equal(r.stderr, `cachelens: ${utf16}: no requests in this transcript to replay; 2 lines skipped (invalid_json: 2, from line 1); ${hint} (2 lines)\n`);
  // a half-written last line after UTF-16 text that is more than that NUL is still one
  const half = writeLog(logs, 'proj/half.jsonl', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le'), Buffer.from('{"ty')]));
  const h = await runCli(['replay', 'session', half, '--db', db]);
  assert.equal(h.code, 2, h.stderr);
  assert.match(h.stderr, /; 3 lines skipped \(invalid_json: 2, incomplete_last_line: 1, from line 1\); UTF-16 text, not UTF-8 \(.*\) \(2 lines\)\n$/u);
  // a transcript of UTF-8 lines with a UTF-16 one among them (opening with 日本語, a line longer than the replay streams above):
  // the replay's skipped lines say it as the error does, in the text, --json and the report
  const ok = assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) });
  const mixed = writeLog(logs, 'proj/mixed.jsonl', Buffer.concat([Buffer.from(user('hi') + '\n' + ok + '\n'), Buffer.from(`日本語 ${assistant({ msg: 'm2', usage: usage(1, 2, 3, 4), text: 'x'.repeat(100) })}\n`, 'utf16le')]));
  const m = await runCli(['replay', 'session', mixed, '--strategy', 'recorded']);
  assert.equal(m.code, 0, m.stderr);
  assert.ok(m.stdout.split('\n').includes(`  ${mixed}: ${hint} (1 line)`), m.stdout);
  const mj = await runCli(['replay', 'session', mixed, '--strategy', 'recorded', '--json']);
  assert.equal(JSON.parse(mj.stdout).chain.utf16_lines, 1);
  // a line longer than the replay streams above is looked at too, once it failed
  for (const streamAbove of [64, undefined]) {
    const read = await readSessionTranscript(mixed, { streamAbove });
    assert.deepEqual(read.skipped.map((x) => [x.line, x.reason, x.detail]), [[3, 'invalid_json', hint]], String(streamAbove));
  }
  // a transcript of blank lines holds no request, and nothing was skipped: said as before
  const blank = writeLog(logs, 'proj/blank.jsonl', '\n\n\n');
  const b = await runCli(['replay', 'session', blank, '--db', db]);
  assert.equal(b.code, 2, b.stderr);
  assert.equal(b.stderr, `cachelens: ${blank}: no requests in this transcript to replay\n`);
});

test('a replay of a transcript whose model and session id are 5,000 characters long names them by their opening, length and hash in its heading, as the store holds them', async (t) => {
  // the heading held both whole: one line of ~10,100 columns; then cut to 120 columns each, not the store's form (line.ts longText)
  const { logs, db } = setup(t);
  const session = `s${'y'.repeat(4_995)}-end`;
  const model = `claude-${'x'.repeat(4_989)}-end`;
  const file = writeLog(logs, 'proj/s1.jsonl', [user('hi', { session }), assistant({ msg: 'm1', session, model, usage: usage(1, 2, 3, 4) })]);
  const r = await runCli(['replay', 'session', file, '--db', db, '--strategy', 'recorded']);
  assert.equal(r.code, 0, r.stderr);
  const heading = r.stdout.split('\n').find((l) => l.startsWith('Session replay'))!;
  assert.ok(heading.length < 400, `a heading ${heading.length} characters long`);
  assert.match(heading, new RegExp(`claude-${'x'.repeat(57)}… \\(5,000 characters, sha256 [0-9a-f]{16}\\)`), heading.slice(0, 400));
  assert.match(heading, new RegExp(`s${'y'.repeat(63)}… \\(5,000 characters, sha256 [0-9a-f]{16}\\)`), heading.slice(0, 400));
});
