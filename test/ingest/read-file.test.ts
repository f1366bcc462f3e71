/**
 * Reading a transcript at its edges (src/ingest/read-file.ts): the lines after a streamed line at
 * the end of a file, a byte order mark on a last line without a newline, a CRLF written after such
 * a line, and a line nested too deeply to read. Each is checked against what the file says: every
 * request read, every skip counted, line numbers and counts as a read of the whole file gives them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { readTranscriptSync, utf16Text, type ReadResult } from '../../src/ingest/read-file.js';
import { assistant, removeDir, tempDir, usage, user } from '../faults/helpers.js';

const id = { fileId: 1, fileAgentId: null, fileSessionId: 's1' };

/** What a read found: requests (message ids), skips, lines, where it stopped. */
function found(r: ReadResult) {
  return {
    requests: r.facts.observations.map((o) => o.key.split('\u0000')[0]),
    skipped: r.facts.skipped.map((s) => `${s.line} ${s.reason}`),
    lines: r.lines,
    readTo: r.readTo,
  };
}

function file(t: { after: (fn: () => void) => void }, bytes: string | Buffer): string {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const f = path.join(dir, 's1.jsonl');
  writeFileSync(f, bytes);
  return f;
}

test('the lines after a streamed line are read when the file ends in the read that ends it', (t) => {
  // chunks of 4 KiB, lines above 4 KiB streamed: the long line ends in the third read, the file's
  // last, which also holds the two lines after it
  const long = assistant({ msg: 'long', usage: usage(1, 2, 3, 4), text: 'x'.repeat(10_000) });
  const text = [long, assistant({ msg: 'after1', usage: usage(5, 6, 0, 0) }), assistant({ msg: 'after2', usage: usage(7, 8, 0, 0) })].join('\n') + '\n';
  assert.ok(text.length < 3 * 4096 && text.length - long.length < 4096 - (long.length % 4096));
  const f = file(t, text);
  const streamed = found(readTranscriptSync(f, id, { chunkSize: 4096, streamAbove: 4096 }));
  assert.deepEqual(streamed, { requests: ['long', 'after1', 'after2'], skipped: [], lines: 3, readTo: Buffer.byteLength(text) });
  assert.deepEqual(found(readTranscriptSync(f, id)), streamed, 'as read in place');
  // and a last line without its newline after it
  const unfinished = text.slice(0, -1);
  writeFileSync(f, unfinished);
  assert.deepEqual(found(readTranscriptSync(f, id, { chunkSize: 4096, streamAbove: 4096 })), { ...streamed, readTo: Buffer.byteLength(unfinished) });
});

test('a byte order mark before the only line, which has no newline yet, is passed over as with one', (t) => {
  const line = assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) });
  const f = file(t, `\ufeff${line}`);
  const r = found(readTranscriptSync(f, id));
  assert.deepEqual(r.requests, ['m1']);
  assert.deepEqual(r.skipped, []);
  writeFileSync(f, `\ufeff${line}\n`);
  assert.deepEqual(found(readTranscriptSync(f, id)).requests, ['m1']);
});

test('a CRLF written after a last line read without its newline ends that line: no blank line counted', (t) => {
  const [a, b, c] = ['m1', 'm2', 'm3'].map((m) => assistant({ msg: m, usage: usage(1, 1, 1, 1) }));
  for (const eol of ['\r\n', '\n']) {
    const f = file(t, `${a}${eol}${b}`);
    const first = readTranscriptSync(f, id);
    assert.equal(first.lines, 2);
    appendFileSync(f, `${eol}${c}${eol}`);
    const next = readTranscriptSync(f, id, { from: first.readTo, linesBefore: first.lines });
    const whole = readTranscriptSync(f, id);
    assert.equal(next.lines, whole.lines, JSON.stringify(eol));
    assert.deepEqual(next.facts.observations.map((o) => [o.key.split('\u0000')[0], o.line]), [['m3', 3]]);
    assert.deepEqual(whole.facts.skipped, []);
  }
});

test('a line nested too deeply to read is a counted skip; the lines around it are read', (t) => {
  const deep = JSON.stringify({ type: 'attachment', timestamp: '2025-03-01T10:00:00.000Z', sessionId: 's1', uuid: 'u1', attachment: { type: 'hook_success', content: 'X' } }).replace(
    '"X"',
    '['.repeat(20_000) + ']'.repeat(20_000),
  );
  JSON.parse(deep);
  const f = file(t, [user('hi'), assistant({ msg: 'a', usage: usage(1, 1, 1, 1) }), deep, assistant({ msg: 'b', usage: usage(2, 2, 2, 2) })].join('\n') + '\n');
  const r = readTranscriptSync(f, id);
  assert.deepEqual(found(r).requests, ['a', 'b']);
  assert.deepEqual(found(r).skipped, ['3 invalid_json']);
  assert.match(r.facts.skipped[0].detail ?? '', /nested too deeply/);
});

test('a v1.x sidechain whose prompt is longer than the projector keeps is matched with its Task call by the whole prompt', (t) => {
  const prompt = `Explore the repository and report.\n${'Look at every file. '.repeat(400)}`;
  assert.ok(prompt.length > 4096);
  const task = JSON.stringify({
    type: 'assistant',
    sessionId: 's1',
    timestamp: '2025-03-01T10:00:00.000Z',
    requestId: 'req_1',
    uuid: 'u1',
    message: { id: 'm1', model: 'claude-opus-4-6', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Task', input: { subagent_type: 'Explore', prompt } }], usage: usage(1, 1, 1, 1) },
  });
  const root = (text: string, uuid: string) =>
    JSON.stringify({ type: 'user', isSidechain: true, sessionId: 's1', uuid, parentUuid: null, timestamp: '2025-03-01T10:00:01.000Z', message: { role: 'user', content: text } });
  const f = file(t, [user('go'), task, root(prompt, 'u2'), root(`${prompt} (another)`, 'u3')].join('\n') + '\n');
  const r = readTranscriptSync(f, id);
  assert.equal(r.facts.spawns.length, 1);
  assert.equal(r.facts.sidechainRoots.length, 2);
  assert.equal(r.facts.sidechainRoots[0].promptHash, r.facts.spawns[0].promptHash, 'the same prompt, the same hash');
  assert.notEqual(r.facts.sidechainRoots[1].promptHash, r.facts.spawns[0].promptHash, 'another prompt, another hash');
  assert.deepEqual(found(r).skipped, []);
});

test('a UTF-16 line is said as UTF-16 text when it is longer than streamAbove (in the buffer or streamed across chunks) and when it opens with characters past U+00FF', (t) => {
  const said = (r: ReadResult) => r.facts.skipped.map((s) => `${s.line} ${s.reason} ${/^UTF-16 text, not UTF-8 \(/.test(s.detail) ? 'UTF-16' : s.detail}`);
  const long = assistant({ msg: 'long', usage: usage(1, 2, 3, 4), text: 'x'.repeat(10_000) });
  const ok = assistant({ msg: 'ok', usage: usage(5, 6, 0, 0) });
  // a UTF-8 line, then a long one in UTF-16LE (its newline's NUL opens the line after), then one opening with 日本語
  const bytes = Buffer.concat([Buffer.from(ok + '\n'), Buffer.from(long + '\n', 'utf16le'), Buffer.from('日本語 ' + ok.replace('"ok"', '"ok2"') + '\n', 'utf16le')]);
  const f = file(t, bytes);
  const expected = ['2 invalid_json UTF-16', '3 invalid_json UTF-16'];
  // lines over streamAbove in the buffer (the chunk holds them whole), streamed across chunks, and read as usual
  assert.deepEqual(said(readTranscriptSync(f, id, { chunkSize: 64 * 1024, streamAbove: 4096 })), expected, 'in the buffer');
  assert.deepEqual(said(readTranscriptSync(f, id, { chunkSize: 4096, streamAbove: 4096 })), expected, 'streamed');
  assert.deepEqual(said(readTranscriptSync(f, id)), expected, 'as read in place');
  assert.deepEqual(found(readTranscriptSync(f, id)).requests, ['ok']);
  // binary bytes, and NULs then UTF-8 text, are still no UTF-16 text
  const noise = Buffer.alloc(8192);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24 || (i % 7 === 0 ? 0 : 1);
  writeFileSync(f, Buffer.concat([noise.filter((b) => b !== 0x0a), Buffer.from('\n'), Buffer.alloc(64), Buffer.from(ok + '\n')]));
  for (const line of said(readTranscriptSync(f, id))) assert.doesNotMatch(line, /UTF-16/);
});

test('binary bytes are never taken for UTF-16 text (gzip, xz-like random bytes), and UTF-16 text (LE or BE, with a byte-order mark or not, opening with 日本語) always is', () => {
  /** The lines of `b` (split at 0A bytes, as the reader splits them) utf16Text takes for UTF-16 text, by number. */
  const utf16Lines = (b: Buffer) => {
    const hits: number[] = [];
    let n = 0;
    for (let s = 0; s <= b.length; ) {
      const nl = b.indexOf(0x0a, s);
      const e = nl < 0 ? b.length : nl;
      n++;
      if (e > s && utf16Text(b, s, e)) hits.push(n);
      s = e + 1;
    }
    return { n, hits };
  };
  // random bytes from a seeded generator (mulberry32): 8 MiB, some 32,000 lines; the test that the units with
  // a NUL on one side outnumber the others eightfold took some of them for UTF-16
  let seed = 0x5eed1234;
  const next = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return (x ^ (x >>> 14)) >>> 0;
  };
  const random = Buffer.alloc(8 << 20);
  for (let i = 0; i < random.length; i += 4) random.writeUInt32LE(next(), i);
  assert.deepEqual(utf16Lines(random).hits, [], 'random bytes');
  // a gzipped log: generated lines, and a real one (its line 710 was taken for UTF-16: 8 units 00 XX, 1 XX 00)
  const lines = Array.from({ length: 3000 }, (_, i) => assistant({ msg: `m${i}`, usage: usage(next() % 5000, next() % 900, next() % 90_000, 0), text: `reply ${next().toString(36)} ${'é'.repeat(next() % 40)}` }));
  assert.deepEqual(utf16Lines(gzipSync(lines.join('\n') + '\n')).hits, [], 'a generated log gzipped');
  const real = '/work/shared/real-logs/marot-spotter/projects/-home-USER-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl';
  if (existsSync(real)) assert.deepEqual(utf16Lines(gzipSync(readFileSync(real))).hits, [], 'a real log gzipped');
  // UTF-16: every line, LE (each after the first opening with its newline's 00) and BE, with a mark and without,
  // lines opening with characters past U+00FF, and lines holding characters whose units read a byte off are no text
  const text = [...lines.slice(0, 200), `日本語のテキスト ${lines[0]}`, lines[1]!.replace('reply', 'reply → ✓ 日本語 😀'), '{"a":1,"b":"é"}'].join('\n') + '\n';
  const le = Buffer.from(text, 'utf16le');
  const be = Buffer.from(le).swap16();
  for (const [name, b] of [['LE', le], ['BE', be], ['LE with a mark', Buffer.concat([Buffer.from([0xff, 0xfe]), le])], ['BE with a mark', Buffer.concat([Buffer.from([0xfe, 0xff]), be])]] as const) {
    const { hits } = utf16Lines(b);
    // the last: the 00 after LE's last newline (BE's last newline ends the buffer)
    assert.deepEqual(hits, Array.from({ length: 203 }, (_, i) => i + 1), name);
  }
});

test('a streamed line of NUL bytes is said by its true count, and one that opens with more NULs than its head holds then text is no zero-filled block', (t) => {
  const ok = (m: string) => assistant({ msg: m, usage: usage(1, 2, 3, 4) });
  const details = (r: ReadResult) => r.facts.skipped.map((s) => `${s.line} ${s.reason} ${s.detail}`);
  // 2 good lines, 100,000 NULs (streamed across 4 KiB chunks: the count came from the line's 4,096-byte head), a good line
  const f = file(t, Buffer.concat([Buffer.from(`${ok('m1')}\n${ok('m2')}\n`), Buffer.alloc(100_000), Buffer.from(`\n${ok('m3')}\n`)]));
  const streamed = { chunkSize: 4096, streamAbove: 4096 };
  for (const opts of [streamed, {}]) {
    const r = readTranscriptSync(f, id, opts);
    assert.deepEqual(details(r), ['3 invalid_json 100,000 NUL bytes (a zero-filled block, as a crash leaves)'], JSON.stringify(opts));
    assert.deepEqual(found(r).requests, ['m1', 'm2', 'm3']);
  }
  // 10,000 NULs, then a line's text: NULs past the head, then what the parser said
  writeFileSync(f, Buffer.concat([Buffer.from(`${ok('m1')}\n`), Buffer.alloc(10_000), Buffer.from(`${ok('m2')}\n${ok('m3')}\n`)]));
  const [inPlace] = details(readTranscriptSync(f, id));
  assert.match(inPlace!, /^2 invalid_json opens with 10,000 NUL bytes \(a zero-filled block, as a crash leaves\), then: /);
  const [asStreamed] = details(readTranscriptSync(f, id, streamed));
  assert.match(asStreamed!, /^2 invalid_json opens with 10,000 NUL bytes \(a zero-filled block, as a crash leaves\), then: /);
});

test('a line of NUL bytes ending in CR LF is a zero-filled block however it is read: its CR is the line end, not text after the NULs', (t) => {
  const ok = (m: string) => assistant({ msg: m, usage: usage(1, 2, 3, 4) });
  const details = (r: ReadResult) => r.facts.skipped.map((s) => `${s.line} ${s.reason} ${s.detail}`);
  // 100,000 NULs then CR LF: streamed in 4 KiB chunks it read 'opens with 100,000 NUL bytes …, then: …' (the CR counted as
  // the text after them); in place it said the block. 4,095 NULs: the CR is the first byte of the last chunk streamed
  for (const nuls of [100_000, 4_095, 8_191]) {
    const f = file(t, Buffer.concat([Buffer.from(`${ok('m1')}\r\n`), Buffer.alloc(nuls), Buffer.from(`\r\n${ok('m2')}\r\n`)]));
    for (const opts of [{ chunkSize: 4096, streamAbove: 4096 }, { chunkSize: 1024, streamAbove: 2048 }, {}]) {
      const r = readTranscriptSync(f, id, opts);
      assert.deepEqual(details(r), [`2 invalid_json ${nuls.toLocaleString('en-US')} NUL bytes (a zero-filled block, as a crash leaves)`], `${nuls} NULs, ${JSON.stringify(opts)}`);
      assert.deepEqual(found(r).requests, ['m1', 'm2']);
    }
  }
});
