/**
 * Bad lines (SPEC §8): each case is a small log tree whose right answer is computed by hand; the
 * built CLI reads it and the test checks the totals, every skip's reason and file:line, and that
 * nothing else was dropped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { readTranscript } from '../../src/ingest/read-file.js';
import { approx, assistant, opusWeight, removeDir, runCli, skipsByReason, summary, tempDir, tokens, usage, user, withBytes, writeLog } from './helpers.js';

function setup(t: { after: (fn: () => void) => void }) {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  return { dir, logs: path.join(dir, 'logs'), db: path.join(dir, 's.duckdb') };
}

test('a half-written last line is skipped and located, then read once a later append completes it', async (t) => {
  const { logs, db } = setup(t);
  const half = assistant({ msg: 'm2', usage: usage(5, 6, 7, 8), t: '2025-03-01T10:00:02.000Z' });
  const file = writeLog(logs, 'proj/s1.jsonl', user('hi') + '\n' + assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }) + '\n' + half.slice(0, 60));

  const first = await summary([logs], db);
  assert.deepEqual(tokens(first.totals), { requests: 1, input: 1, output: 2, cache_write_5m: 3, cache_write_1h: 0, cache_read: 4, unpriced_requests: 0 });
  assert.deepEqual(skipsByReason(first), { incomplete_last_line: { count: 1, at: ['s1.jsonl:3'] } });
  assert.equal(first.quality.lines, 2);

  appendFileSync(file, half.slice(60) + '\n' + assistant({ msg: 'm3', usage: usage(100, 0, 0, 0), t: '2025-03-01T10:00:03.000Z' }) + '\n');
  const second = await summary([logs], db);
  assert.deepEqual(tokens(second.totals), { requests: 3, input: 106, output: 8, cache_write_5m: 10, cache_write_1h: 0, cache_read: 12, unpriced_requests: 0 });
  assert.deepEqual(second.quality.skipped, [], 'the completed line is no longer a skip');
  assert.equal(second.quality.lines, 4);
  approx(second.totals.weight, opusWeight(106, 8, 10, 12), 'weight');

  const rebuilt = await summary([logs], db, { extra: ['--rebuild'] });
  assert.deepEqual(rebuilt.totals, second.totals, 'the appended store equals one read at once');
  assert.deepEqual(rebuilt.quality, second.quality);
});

test('a complete last line without its newline is read, and its newline written later does not add a line', async (t) => {
  const { logs, db } = setup(t);
  const file = writeLog(logs, 'proj/s1.jsonl', user('hi') + '\n' + assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }));
  const first = await summary([logs], db);
  assert.equal(first.totals.requests, 1);
  assert.deepEqual(first.quality.skipped, []);
  assert.equal(first.quality.lines, 2);
  appendFileSync(file, '\n' + assistant({ msg: 'm2', usage: usage(10, 0, 0, 0) }).slice(0, 30));
  const second = await summary([logs], db);
  assert.equal(second.totals.requests, 1);
  assert.deepEqual(skipsByReason(second), { incomplete_last_line: { count: 1, at: ['s1.jsonl:3'] } });
  assert.equal(second.quality.lines, 2);
});

test('a complete last line written on without a newline is one longer line to the next run, as to a fresh store', async (t) => {
  // a writer that crashed after a line but before its newline, then another that appended to the
  // file: the next run read the new bytes as lines of their own, a fresh store the one line they make
  for (const [name, more] of [
    ['another line', assistant({ msg: 'm2', usage: usage(10, 0, 0, 0), t: '2025-03-01T10:00:02.000Z' }) + '\n'],
    ['blanks', '  \n'],
  ]) {
    const { logs, db, dir } = setup(t);
    const file = writeLog(logs, 'proj/s1.jsonl', user('hi') + '\n' + assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }));
    assert.equal((await summary([logs], db)).totals.requests, 1);
    appendFileSync(file, more + assistant({ msg: 'm3', usage: usage(100, 0, 0, 0), t: '2025-03-01T10:00:03.000Z' }) + '\n');
    const next = await summary([logs], db);
    const fresh = await summary([logs], path.join(dir, `fresh-${name}.duckdb`));
    assert.deepEqual(next.totals, fresh.totals, name);
    assert.deepEqual(next.quality, fresh.quality, name);
    if (name === 'another line') assert.deepEqual(skipsByReason(next), { invalid_json: { count: 1, at: ['s1.jsonl:2'] } });
    else assert.deepEqual(next.quality.skipped, []);
    assert.equal(next.quality.lines, 3, name);
  }
});

test('invalid JSON in the middle of a file skips exactly those lines, each located, and keeps the rest', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/s1.jsonl', [
    assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) }),
    '{"type":"assistant","message":{"id":"broken","usage":{"input_tokens":5',
    assistant({ msg: 'm2', usage: usage(2, 2, 2, 2) }),
    'not json at all',
    '[1,2,3]',
    '{"type":"user"} {"type":"user"}',
    '{"type":"assistant",}',
    '{}',
    '',
    assistant({ msg: 'm3', usage: usage(3, 3, 3, 3) }),
  ]);
  const s = await summary([logs], db);
  assert.deepEqual(tokens(s.totals), { requests: 3, input: 6, output: 6, cache_write_5m: 6, cache_write_1h: 0, cache_read: 6, unpriced_requests: 0 });
  assert.deepEqual(skipsByReason(s), { invalid_json: { count: 5, at: ['s1.jsonl:2', 's1.jsonl:4', 's1.jsonl:5', 's1.jsonl:6', 's1.jsonl:7'] } });
  assert.equal(s.quality.skipped_lines, 5);
  for (const e of s.quality.skipped[0].examples) assert.ok(e.detail.length > 0, 'every skip says why');
  assert.equal(s.quality.lines, 10);
});

test('invalid UTF-8 and lone surrogate escapes do not lose usage; bytes outside any string make an invalid_json skip', async (t) => {
  const { logs, db } = setup(t);
  const lines: Buffer[] = [
    // invalid bytes inside the text of a request: the text is not needed, the usage is
    withBytes(assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), text: 'XX' }), 'XX', [0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
    // an invalid byte inside the request id: still one request, counted once
    withBytes(assistant({ msg: 'm2', req: 'rYY', usage: usage(10, 0, 0, 0) }), 'YY', [0xc3]),
    // lone surrogate escapes in the text, the message id and the project (cwd)
    Buffer.from(assistant({ msg: 'm3', usage: usage(100, 0, 0, 0), text: 'TEXT', cwd: 'CWD' }).replace('TEXT', '\\ud800 and \\udfff').replace('"m3"', '"m3\\udc00"').replace('CWD', '/proj\\ud83d')),
    // a raw invalid byte before the object: not JSON
    withBytes('XX' + assistant({ msg: 'm4', usage: usage(1000, 0, 0, 0) }), 'XX', [0xff]),
  ];
  writeLog(logs, 'proj/s1.jsonl', Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
  const s = await summary([logs], db);
  assert.deepEqual(tokens(s.totals), { requests: 3, input: 111, output: 2, cache_write_5m: 3, cache_write_1h: 0, cache_read: 4, unpriced_requests: 0 });
  assert.deepEqual(skipsByReason(s), { invalid_json: { count: 1, at: ['s1.jsonl:4'] } });
  assert.ok(
    s.by_project.some((p) => p.project === '/proj\ufffd'),
    `a lone surrogate in a project path is stored as U+FFFD: ${JSON.stringify(s.by_project.map((p) => p.project))}`,
  );
});

test('CRLF line endings read exactly as LF ones, a half CRLF line included', async (t) => {
  const { dir } = setup(t);
  const lines = [user('hi'), assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }), assistant({ msg: 'm1', usage: usage(1, 9, 3, 4) }), assistant({ msg: 'm2', usage: usage(5, 5, 5, 5) })];
  const half = assistant({ msg: 'm3', usage: usage(7, 7, 7, 7) }).slice(0, 50);
  writeLog(dir, 'lf/proj/s1.jsonl', lines.join('\n') + '\n' + half);
  writeLog(dir, 'crlf/proj/s1.jsonl', lines.join('\r\n') + '\r\n' + half + '\r');
  const lf = await summary([path.join(dir, 'lf')], path.join(dir, 'lf.duckdb'));
  const crlf = await summary([path.join(dir, 'crlf')], path.join(dir, 'crlf.duckdb'));
  assert.deepEqual(tokens(crlf.totals), { requests: 2, input: 6, output: 14, cache_write_5m: 8, cache_write_1h: 0, cache_read: 9, unpriced_requests: 0 });
  assert.deepEqual(crlf.totals, lf.totals);
  assert.deepEqual(skipsByReason(crlf), { incomplete_last_line: { count: 1, at: ['s1.jsonl:5'] } });
  assert.equal(crlf.quality.lines, lf.quality.lines);
  assert.equal(crlf.quality.duplicates_removed, 1);
});

test('a UTF-8 byte-order mark at the start of a file is ignored; one in the middle is a located invalid_json skip', async (t) => {
  const { logs, db } = setup(t);
  const bom = '\ufeff';
  writeLog(logs, 'proj/a.jsonl', bom + assistant({ msg: 'm1', usage: usage(1, 0, 0, 0) }) + '\n' + assistant({ msg: 'm2', usage: usage(2, 0, 0, 0) }) + '\n');
  // two files concatenated, the second with its own mark
  writeLog(logs, 'proj/b.jsonl', assistant({ msg: 'm3', usage: usage(4, 0, 0, 0) }) + '\n' + bom + assistant({ msg: 'm4', usage: usage(8, 0, 0, 0) }) + '\n');
  const s = await summary([logs], db);
  assert.deepEqual(tokens(s.totals), { requests: 3, input: 7, output: 0, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0, unpriced_requests: 0 });
  assert.deepEqual(skipsByReason(s), { invalid_json: { count: 1, at: ['b.jsonl:2'] } });
});

test('empty and blank files (a byte order mark alone too) are files with no requests and no skips', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/empty.jsonl', '');
  writeLog(logs, 'proj/newlines.jsonl', '\n\n\n');
  writeLog(logs, 'proj/spaces.jsonl', '   \n\t\r\n  ');
  // a byte order mark alone (an editor's "empty" UTF-8 file), or with blanks after it: it was an
  // incomplete_last_line skip at :1, a line "still being written" that never would be
  writeLog(logs, 'proj/bom.jsonl', '\ufeff');
  writeLog(logs, 'proj/bom-blank.jsonl', '\ufeff  ');
  writeLog(logs, 'proj/real.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const s = await summary([logs], db);
  assert.equal(s.totals.requests, 1);
  assert.equal(s.quality.files, 6);
  assert.deepEqual(s.quality.skipped, []);
  const again = await summary([logs], db);
  assert.deepEqual(again.totals, s.totals, 'a second run over unchanged empty files changes nothing');
  assert.deepEqual(again.quality, s.quality);
});

test('usage fields that are strings, negative, fractional, huge or not an object are invalid_usage skips; null counts 0; big sums stay exact', async (t) => {
  const { logs, db } = setup(t);
  const at = (i: number) => `2025-03-01T10:00:${String(i).padStart(2, '0')}.000Z`;
  writeLog(logs, 'proj/s1.jsonl', [
    assistant({ msg: 'str', t: at(1), usage: { ...usage(1, 1, 1, 1), input_tokens: '12' } }),
    assistant({ msg: 'neg', t: at(2), usage: { ...usage(1, 1, 1, 1), output_tokens: -5 } }),
    assistant({ msg: 'frac', t: at(3), usage: { ...usage(1, 1, 1, 1), cache_read_input_tokens: 1.5 } }),
    assistant({ msg: 'huge', t: at(4), usage: { ...usage(1, 1, 1, 1), cache_creation_input_tokens: 1e15 } }),
    assistant({ msg: 'obj', t: at(5), usage: 'lots' as never }),
    assistant({ msg: 'nullusage', t: at(6), usage: null as never }),
    assistant({ msg: 'split', t: at(7), usage: { ...usage(1, 1, 10, 1), cache_creation: { ephemeral_5m_input_tokens: 'x', ephemeral_1h_input_tokens: 10 } } }),
    // null fields count 0; unknown fields are ignored; 1e3 is the integer 1000
    assistant({ msg: 'nulls', t: at(8), usage: { input_tokens: null, output_tokens: 1e3, cache_creation_input_tokens: null, cache_read_input_tokens: 7, brand_new_counter: 99 } }),
    assistant({ msg: 'empty', t: at(9), usage: {} }),
    // three requests just under the per-field bound: their sum passes 2^31
    assistant({ msg: 'big1', t: at(10), usage: usage(900_000_000, 0, 0, 0) }),
    assistant({ msg: 'big2', t: at(11), usage: usage(900_000_000, 0, 0, 0) }),
    assistant({ msg: 'big3', t: at(12), usage: usage(900_000_000, 0, 0, 0) }),
    // one copy of a response is bad, the other good: the good copy is counted, the bad one reported
    assistant({ msg: 'copy', t: at(13), usage: { ...usage(3, 'oops' as never, 0, 0) } }),
    assistant({ msg: 'copy', t: at(13), usage: usage(3, 40, 0, 0) }),
    // usage without an id or a time cannot be de-duplicated or placed: reported, not guessed
    JSON.stringify({ type: 'assistant', timestamp: at(14), message: { model: 'claude-opus-4-6', usage: usage(1, 1, 1, 1) } }),
    JSON.stringify({ type: 'assistant', message: { id: 'notime', model: 'claude-opus-4-6', usage: usage(1, 1, 1, 1) } }),
  ]);
  const s = await summary([logs], db);
  assert.deepEqual(tokens(s.totals), {
    requests: 6,
    input: 2_700_000_003,
    output: 1_040,
    cache_write_5m: 0,
    cache_write_1h: 0,
    cache_read: 7,
    unpriced_requests: 0,
  });
  const skips = skipsByReason(s);
  assert.deepEqual(Object.keys(skips), ['invalid_usage']);
  assert.equal(skips.invalid_usage.count, 10);
  const all = await skipDetails(db);
  assert.deepEqual(
    all.map((r) => `${r.line} ${r.detail}`),
    [
      '1 invalid usage field input_tokens = "12"',
      '2 invalid usage field output_tokens = -5',
      '3 invalid usage field cache_read_input_tokens = 1.5',
      '4 invalid usage field cache_creation_input_tokens = 1000000000000000',
      '5 usage is not an object',
      '6 usage is not an object',
      '7 invalid usage field ephemeral_5m_input_tokens = "x"',
      '13 invalid usage field output_tokens = "oops"',
      '15 usage without message.id',
      '16 usage without a valid timestamp',
    ],
  );
});

test('a cache_creation or server_tool_use that is there but not an object is an invalid_usage skip; absent, null or {} is no split', async (t) => {
  const { logs, db } = setup(t);
  const at = (i: number) => `2025-03-01T10:00:${String(i).padStart(2, '0')}.000Z`;
  const w = (msg: string, i: number, extra: Record<string, unknown>) => assistant({ msg, t: at(i), usage: { ...usage(1, 1, 100, 0), ...extra } as never });
  writeLog(logs, 'proj/s1.jsonl', [
    w('number', 1, { cache_creation: 12345 }),
    w('string', 2, { cache_creation: '1h' }),
    w('array', 3, { cache_creation: [100] }),
    w('long', 4, { cache_creation: 'x'.repeat(5000) }),
    w('bool', 5, { cache_creation: true }),
    w('server', 6, { server_tool_use: 'x' }),
    // none: the split is missing (every write at 5 minutes), as Claude Code 1.0 wrote it
    w('null', 7, { cache_creation: null, server_tool_use: null }),
    w('empty', 8, { cache_creation: {} }),
    w('absent', 9, {}),
    // a bad copy beside a good one: the good one is counted, its split kept
    w('copy', 10, { cache_creation: 7 }),
    w('copy', 10, { cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 100 } }),
  ]);
  const s = await summary([logs], db);
  assert.deepEqual(tokens(s.totals), { requests: 4, input: 4, output: 4, cache_write_5m: 300, cache_write_1h: 100, cache_read: 0, unpriced_requests: 0 });
  assert.deepEqual(
    (await skipDetails(db)).map((r) => `${r.line} ${r.detail}`),
    [
      '1 invalid usage field cache_creation = 12345',
      '2 invalid usage field cache_creation = "1h"',
      '3 invalid usage field cache_creation = […]',
      '4 invalid usage field cache_creation = "…"',
      '5 invalid usage field cache_creation = true',
      '6 invalid usage field server_tool_use = "x"',
      '10 invalid usage field cache_creation = 7',
    ],
  );
  const split = await query(db, `SELECT message_id, split_missing FROM requests ORDER BY message_id`);
  assert.deepEqual(split.map((r) => `${r.message_id} ${r.split_missing}`), ['absent true', 'copy false', 'empty true', 'null true']);
});

test('a request whose fields are each just under the bound, its prompt past 2^31, is counted by every command, priced or not', async (t) => {
  const { logs, db } = setup(t);
  const big = 999_999_999;
  // P = in + w + r ≈ 3·10⁹: the store summed it as an INTEGER (Overflow in addition of INT32) in every command;
  // blocks and the unpriced-model list summed the four fields so too
  writeLog(logs, 'proj/s1.jsonl', [
    assistant({ msg: 'priced', t: '2025-03-01T10:00:00.000Z', usage: usage(big, big, big, big) }),
    assistant({ msg: 'unpriced', t: '2025-03-01T10:01:00.000Z', model: 'claude-mystery-9', usage: usage(big, big, big, big) }),
  ]);
  const s = await summary([logs], db);
  assert.deepEqual(tokens(s.totals), { requests: 2, input: 2 * big, output: 2 * big, cache_write_5m: 2 * big, cache_write_1h: 0, cache_read: 2 * big, unpriced_requests: 1 });
  approx(s.totals.weight, opusWeight(big, big, big, big), 'weight');
  assert.deepEqual(s.quality.unknown_models, [{ model: 'claude-mystery-9', requests: 1, tokens: 4 * big }]);
  const json = async <T>(args: string[]): Promise<T> => {
    const r = await runCli([...args, logs, '--db', db, '--json']);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  const { blocks } = await json<{ blocks: { tokens: number }[] }>(['blocks']);
  assert.deepEqual(blocks.map((b) => b.tokens), [8 * big]);
  const { sessions } = await json<{ sessions: { cache_read: number }[] }>(['sessions']);
  assert.deepEqual(sessions.map((x) => x.cache_read), [2 * big]);
  // one chain: the second request (another model, 60 s later) re-writes what the first cached, a break
  const anatomy = await json<{ totals: { cold: number; break: number; requests: number } }>(['anatomy']);
  assert.deepEqual([anatomy.totals.cold, anatomy.totals.break, anatomy.totals.requests], [big, big, 2]);
  assert.equal((await json<{ requests: number }>(['whatif', 'ttl'])).requests, 2);
  assert.equal((await json<{ gaps: number }>(['whatif', 'keepalive'])).gaps, 1);
});

test('a usage number beyond a double (1e400, read as Infinity) is an invalid_usage skip that names the number, not null', async (t) => {
  const { logs, db } = setup(t);
  const line = (msg: string, raw: string) => assistant({ msg, usage: { input_tokens: 1, output_tokens: 0 } }).replace('"input_tokens":1', `"input_tokens":${raw}`);
  writeLog(logs, 'proj/s1.jsonl', [line('inf', '1e400'), line('neginf', '-1e400'), line('ok', '1')]);
  const s = await summary([logs], db);
  assert.equal(s.totals.requests, 1);
  assert.deepEqual(await skipDetails(db), [
    { line: 1, detail: 'invalid usage field input_tokens = Infinity' },
    { line: 2, detail: 'invalid usage field input_tokens = -Infinity' },
  ]);
});

test('a request keeps its message.id and requestId, split from the stored key; a message.id holding a NUL is an invalid_usage skip', async (t) => {
  const { logs, db } = setup(t);
  const at = (i: number) => `2025-03-01T10:00:${String(i).padStart(2, '0')}.000Z`;
  writeLog(logs, 'proj/s1.jsonl', [
    assistant({ msg: 'msg_plain', req: 'req_plain', t: at(1), usage: usage(1, 1, 1, 1) }),
    assistant({ msg: 'msg_noreq', req: null, t: at(2), usage: usage(1, 1, 1, 1) }),
    // a NUL inside requestId stays in it; text past the BMP and quotes survive
    assistant({ msg: 'msg_é😀"', req: 'req_a\u0000b', t: at(3), usage: usage(1, 1, 1, 1) }),
    // with a NUL inside message.id, (message.id, requestId) = ('a\0b', null) and ('a', 'b') would be one key
    assistant({ msg: 'msg_a\u0000b', req: null, t: at(4), usage: usage(1, 1, 1, 1) }),
  ]);
  const s = await summary([logs], db);
  assert.equal(s.totals.requests, 3);
  assert.deepEqual(skipsByReason(s), { invalid_usage: { count: 1, at: ['s1.jsonl:4'] } });
  assert.deepEqual(await skipDetails(db), [{ line: 4, detail: 'message.id holds a NUL character' }]);
  const rows = await query(db, `SELECT message_id, request_id FROM requests ORDER BY t`);
  assert.deepEqual(
    rows.map((r) => [r.message_id, r.request_id]),
    [
      ['msg_plain', 'req_plain'],
      ['msg_noreq', null],
      ['msg_é😀"', 'req_a\u0000b'],
    ],
  );
});

test('a timestamp that is no ISO 8601 instant is an invalid_usage skip, the same in every machine zone; offsets and leap days count', async (t) => {
  const { logs, db } = setup(t);
  const stamps = [
    '2025-03-01T10:00:00.000Z', // counted
    '2025-03-01T15:30:00.000+05:30', // counted: 10:00 UTC
    '2024-02-29T10:00:00.000Z', // counted: a leap day
    '2025-03-01T23:30:00', // no offset: Date.parse reads it in the machine's zone
    '2025-02-30T10:00:00.000Z', // no such day: Date.parse takes it as 2 March
    'Sat, 01 Mar 2025 10:00:00 GMT',
    'March 1, 2025',
    '2025',
  ];
  writeLog(logs, 'proj/s1.jsonl', stamps.map((ts, i) => assistant({ msg: `m${i}`, t: ts, usage: usage(1, 1, 0, 0) })));
  for (const [k, zone] of ['UTC', 'Asia/Kolkata', 'America/Los_Angeles'].entries()) {
    const s = await summary([logs], `${db}.${k}`, { env: { TZ: zone }, extra: ['--timezone', 'UTC'] });
    assert.equal(s.totals.requests, 3, zone);
    assert.deepEqual(
      s.by_day.map((d) => [d.day, d.requests]),
      [
        ['2024-02-29', 1],
        ['2025-03-01', 2],
      ],
      zone,
    );
    assert.deepEqual(skipsByReason(s), { invalid_usage: { count: 5, at: ['s1.jsonl:4', 's1.jsonl:5', 's1.jsonl:6', 's1.jsonl:7', 's1.jsonl:8'] } }, zone);
    assert.ok(s.quality.skipped[0].examples.every((e) => e.detail === 'usage without a valid timestamp'), zone);
  }
});

test('unknown line types, subtypes and fields are counted per type, never skipped', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/s1.jsonl', [
    JSON.stringify({ type: 'hologram', sessionId: 's1', timestamp: '2025-03-01T10:00:00Z', payload: { deep: [1, { x: 'y' }] } }),
    JSON.stringify({ type: 'hologram', sessionId: 's1' }),
    JSON.stringify({ type: 'system', subtype: 'quantum_boundary', sessionId: 's1' }),
    JSON.stringify({ type: 'progress', data: { type: 'teleport_progress', message: 42 } }),
    JSON.stringify({ type: null, sessionId: 's1', note: 'a null type is none' }),
    JSON.stringify({ sessionId: 's1', note: 'no type at all' }),
    JSON.stringify({ type: 'summary', summary: 'x', leafUuid: 'u' }),
    // a request with unknown fields at every level, and a message field of the wrong type elsewhere
    assistant({ msg: 'm1', usage: { ...usage(1, 2, 3, 4), future: { a: 1 } }, extra: { someNewField: [1, 2], message2: 'x' } }),
    JSON.stringify({ type: 'assistant', sessionId: 's1', timestamp: '2025-03-01T10:00:00Z', message: 'just a string' }),
    JSON.stringify({ type: 'user', sessionId: 's1', message: { content: { unexpected: 'object' } } }),
  ]);
  const s = await summary([logs], db);
  assert.deepEqual(tokens(s.totals), { requests: 1, input: 1, output: 2, cache_write_5m: 3, cache_write_1h: 0, cache_read: 4, unpriced_requests: 0 });
  assert.deepEqual(s.quality.skipped, []);
  assert.equal(s.quality.lines, 10);
  const counts = await lineCounts(db);
  assert.deepEqual(counts, {
    '(none)': 2,
    assistant: 2,
    hologram: 2,
    'progress/teleport_progress': 1,
    summary: 1,
    'system/quantum_boundary': 1,
    user: 1,
  });
});

async function query(db: string, sql: string): Promise<Record<string, unknown>[]> {
  const inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
  const con = await inst.connect();
  try {
    return (await con.runAndReadAll(sql)).getRowObjectsJS();
  } finally {
    con.closeSync();
    inst.closeSync();
  }
}

async function skipDetails(db: string): Promise<{ line: number; detail: string }[]> {
  const rows = await query(db, `SELECT line, detail FROM skipped ORDER BY line`);
  return rows.map((r) => ({ line: Number(r.line), detail: String(r.detail) }));
}

async function lineCounts(db: string): Promise<Record<string, number>> {
  const rows = await query(db, `SELECT type, subtype, sum(n) AS n FROM line_counts GROUP BY ALL ORDER BY type, subtype`);
  return Object.fromEntries(rows.map((r) => [r.subtype ? `${r.type}/${r.subtype}` : String(r.type), Number(r.n)]));
}

test('an agent_progress copy with usage but no data.agentId is a located invalid_usage skip, not usage dropped unseen', async (t) => {
  const { logs, db } = setup(t);
  const copy = (agentId: unknown, msg: string) =>
    JSON.stringify({
      type: 'progress',
      sessionId: 's1',
      timestamp: '2025-03-01T10:00:04.000Z',
      data: { type: 'agent_progress', ...(agentId === undefined ? {} : { agentId }), message: { type: 'assistant', timestamp: '2025-03-01T10:00:04.000Z', requestId: `req_${msg}`, message: { id: msg, model: 'claude-opus-4-6', usage: usage(10, 5, 0, 0) } } },
    });
  writeLog(logs, 'proj/s1.jsonl', [user('hi'), assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }), copy(null, 'm2'), copy(undefined, 'm3'), copy(7, 'm4'), copy('a1', 'm5')]);
  const s = await summary([logs], db);
  assert.equal(s.totals.requests, 2, 'm1 and the copy that names its agent');
  assert.deepEqual(skipsByReason(s), { invalid_usage: { count: 3, at: ['s1.jsonl:3', 's1.jsonl:4', 's1.jsonl:5'] } });
  assert.equal(s.quality.skipped[0]!.examples[0]!.detail, 'agent_progress copy without data.agentId');
});

test('a line whose type is not a string (a number, an object, a list, a boolean) is a located invalid_type skip, not a line of no type', async (t) => {
  // each was counted as '(none)', as a line without a type, and its usage as usage on a line of no type
  const { logs, db } = setup(t);
  const request = JSON.parse(assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) })) as Record<string, unknown>;
  writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    JSON.stringify(request),
    JSON.stringify({ type: 42, sessionId: 's1' }),
    JSON.stringify({ type: { name: 'user' }, sessionId: 's1' }),
    JSON.stringify({ type: ['assistant'], sessionId: 's1' }),
    JSON.stringify({ type: true, sessionId: 's1' }),
    JSON.stringify({ ...request, type: 3, message: { ...(request.message as object), id: 'm2' } }),
    JSON.stringify({ sessionId: 's1', note: 'no type at all: counted as (none), no skip' }),
  ]);
  const s = await summary([logs], db);
  assert.deepEqual(tokens(s.totals), { requests: 1, input: 1, output: 2, cache_write_5m: 3, cache_write_1h: 0, cache_read: 4, unpriced_requests: 0 });
  assert.deepEqual(skipsByReason(s), { invalid_type: { count: 5, at: ['s1.jsonl:3', 's1.jsonl:4', 's1.jsonl:5', 's1.jsonl:6', 's1.jsonl:7'] } });
  assert.equal(s.quality.lines, 8);
  assert.equal(s.quality.skipped_lines, 5);
  assert.deepEqual(await skipDetails(db), [
    { line: 3, detail: 'type = 42 is not a string' },
    { line: 4, detail: 'type = {…} is not a string' },
    { line: 5, detail: 'type = […] is not a string' },
    { line: 6, detail: 'type = true is not a string' },
    { line: 7, detail: 'type = 3 is not a string (the line holds usage: not counted)' },
  ]);
  assert.deepEqual(await lineCounts(db), { '(none)': 1, assistant: 1, user: 1 });
});

test('a line whose type or subtype is a string longer than 4,096 characters is counted as an unknown one by its opening and length, in both readers', async (t) => {
  // it was kept whole: stored, and put in the report's table of unknown line types, whatever its length
  const { logs, db } = setup(t);
  const long = 'x'.repeat(5_000);
  const pair = 'y'.repeat(63) + '\u{1F600}'.repeat(2_100);
  const lines = [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }),
    JSON.stringify({ type: long, sessionId: 's1' }),
    JSON.stringify({ type: long, sessionId: 's1', n: 2 }),
    JSON.stringify({ type: 'z'.repeat(4_096), sessionId: 's1' }),
    JSON.stringify({ type: pair, sessionId: 's1' }),
    JSON.stringify({ type: long, sessionId: 's1', message: { usage: usage(5, 0, 0, 0) } }),
    // a subtype alike (`subtype`, a progress line's data.type)
    JSON.stringify({ type: 'system', subtype: long, sessionId: 's1' }),
    JSON.stringify({ type: 'progress', data: { type: long }, sessionId: 's1' }),
  ];
  writeLog(logs, 'proj/s1.jsonl', lines);
  const s = await summary([logs], db);
  assert.equal(s.totals.requests, 1);
  assert.equal(s.quality.lines, 9);
  assert.deepEqual(skipsByReason(s), { invalid_usage: { count: 1, at: ['s1.jsonl:7'] } });
  const want = {
    [`${'x'.repeat(64)}… (5,000 characters)`]: 3,
    // a surrogate pair is not cut in two: 63 characters
    [`${'y'.repeat(63)}… (4,263 characters)`]: 1,
    ['z'.repeat(4_096)]: 1,
    [`system/${'x'.repeat(64)}… (5,000 characters)`]: 1,
    [`progress/${'x'.repeat(64)}… (5,000 characters)`]: 1,
    assistant: 1,
    user: 1,
  };
  assert.deepEqual(await lineCounts(db), want);
  // the streaming reader (a line longer than a chunk) counts them alike
  const file = path.join(logs, 'proj/s1.jsonl');
  const id = { fileId: 1, fileAgentId: null, fileSessionId: null };
  const fast = [...(await readTranscript(file, id)).facts.lineCounts];
  assert.equal(fast.length, 7);
  assert.deepEqual([...(await readTranscript(file, id, { streamAbove: 0, chunkSize: 64 })).facts.lineCounts], fast);
});

test('an agent_progress copy whose requestId is a whole number is the request whose requestId is its decimal text, and it is said', async (t) => {
  // the number was read as absent: the copies were keyed apart and the response counted twice
  const { logs, db } = setup(t);
  const copy = (requestId: unknown, output: number) =>
    JSON.stringify({
      type: 'progress',
      sessionId: 's1',
      timestamp: '2025-03-01T10:00:04.000Z',
      data: { type: 'agent_progress', agentId: 'a1', message: { type: 'assistant', timestamp: '2025-03-01T10:00:04.000Z', requestId, message: { id: 'm5', model: 'claude-opus-4-6', usage: usage(10, output, 0, 0) } } },
    });
  writeLog(logs, 'proj/s1.jsonl', [user('hi'), assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }), copy(17, 5), copy('17', 9)]);
  const s = await summary([logs], db);
  assert.equal(s.totals.requests, 2);
  assert.equal(s.totals.output, 2 + 9, 'the copies\' field-wise maximum');
  // and said, as a line's own requestId is (it was read so without a word); a string is no note
  assert.deepEqual(skipsByReason(s), { invalid_field: { count: 1, at: ['s1.jsonl:3'] } });
  assert.deepEqual(await skipDetails(db), [{ line: 3, detail: 'data.message.requestId = 17 is not a string: read as "17"' }]);
});

test('usage on a line that is not an assistant line (another case, an unknown type, no type) is a located invalid_usage skip, not tokens dropped unseen', async (t) => {
  const { logs, db } = setup(t);
  const request = JSON.parse(assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) })) as Record<string, unknown>;
  const as = (type: unknown, msg: string) => {
    const l: Record<string, unknown> = { ...request, message: { ...(request.message as object), id: msg }, requestId: `req_${msg}` };
    if (type === undefined) delete l.type;
    else l.type = type;
    return JSON.stringify(l);
  };
  writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    as('assistant', 'm1'),
    as('Assistant', 'm2'),
    as('hologram', 'm3'),
    as(undefined, 'm4'),
    as('x'.repeat(5000), 'm6'),
    // no usage, or a null one: nothing to lose, no skip
    JSON.stringify({ type: 'hologram', sessionId: 's1', message: { usage: null } }),
    JSON.stringify({ type: 'user', sessionId: 's1', message: { role: 'user', content: 'more' } }),
  ]);
  const s = await summary([logs], db);
  assert.deepEqual(tokens(s.totals), { requests: 1, input: 1, output: 2, cache_write_5m: 3, cache_write_1h: 0, cache_read: 4, unpriced_requests: 0 });
  assert.deepEqual(skipsByReason(s), { invalid_usage: { count: 4, at: ['s1.jsonl:3', 's1.jsonl:4', 's1.jsonl:5', 's1.jsonl:6'] } });
  assert.deepEqual(await skipDetails(db), [
    { line: 3, detail: 'usage on a line of type "Assistant", not "assistant"' },
    { line: 4, detail: 'usage on a line of type "hologram", not "assistant"' },
    { line: 5, detail: 'usage on a line of no type, not "assistant"' },
    { line: 6, detail: `usage on a line of type "${'x'.repeat(40)}", not "assistant"` },
  ]);
  // still counted by type (SPEC §1.2)
  const counts = await lineCounts(db);
  assert.equal(counts.Assistant, 1);
  assert.equal(counts.hologram, 2);
});

test('a 5m/1h split that does not sum to cache_creation_input_tokens: the billed write counts, its 1-hour part as the split says (at most the write), the rest 5-minute', async (t) => {
  const { logs, db } = setup(t);
  const split = (msg: string, write: number | undefined, w5: number, w1h: number) =>
    assistant({ msg, usage: { input_tokens: 1, output_tokens: 1, ...(write === undefined ? {} : { cache_creation_input_tokens: write }), cache_creation: { ephemeral_5m_input_tokens: w5, ephemeral_1h_input_tokens: w1h } } });
  const one = async (line: string) => {
    writeLog(logs, 'proj/s1.jsonl', [line]);
    const s = await summary([logs], db, { extra: ['--rebuild'] });
    assert.deepEqual(s.quality.skipped, []);
    return [s.totals.cache_write_5m, s.totals.cache_write_1h];
  };
  assert.deepEqual(await one(split('below', 5_000, 1_000, 1_000)), [4_000, 1_000], 'a split short of the write: the rest at 5 minutes');
  assert.deepEqual(await one(split('above', 2_000, 3_000, 4_000)), [0, 2_000], 'a split beyond the write: the write, 1-hour first');
  assert.deepEqual(await one(split('none', 0, 3_000, 4_000)), [0, 0], 'no write billed: none counted');
  assert.deepEqual(await one(split('absent', undefined, 300, 400)), [300, 400], 'no billed write: the split is the write');
});
