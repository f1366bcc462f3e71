/**
 * The two reading paths (buffer projection for ordinary lines, stream-json for lines longer than
 * a chunk) must agree on the fault lines too: a line's outcome may not depend on its length. Each
 * case is read once normally and once with every line streamed in chunks small enough to cut
 * through escapes, multi-byte characters and CRLF pairs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { readTranscript } from '../../src/ingest/read-file.js';
import { assistant, removeDir, tempDir, usage, user, withBytes } from './helpers.js';

const enc = (s: string) => Buffer.from(s);

/** name → file bytes */
const CASES: Record<string, Buffer> = (() => {
  const good = assistant({ msg: 'm3', usage: usage(7, 7, 7, 7) });
  return {
    'invalid UTF-8 in text and in an id': Buffer.concat([
      withBytes(assistant({ msg: 'm1', usage: usage(1, 2, 3, 4), text: 'XX' }) + '\n', 'XX', [0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xf0, 0x9f]),
      withBytes(assistant({ msg: 'm2', req: 'rYY', usage: usage(5, 0, 0, 0) }) + '\n', 'YY', [0xc3]),
    ]),
    'lone surrogate escapes': enc(assistant({ msg: 'm\\ud800', usage: usage(1, 0, 0, 0), text: 'T', cwd: '/p' }).replace('"T"', '"\\udfff\\ud83d"').replace('/p', '/p\\udc00') + '\n'),
    'multi-byte characters everywhere': enc(user('é✓😀'.repeat(50), { cwd: '/proj/é✓😀' }) + '\n' + assistant({ msg: 'm😀', usage: usage(1, 1, 1, 1), text: '😀'.repeat(100) }) + '\n'),
    'CRLF and a BOM': enc('\ufeff' + user('hi') + '\r\n' + good + '\r\n'),
    'invalid JSON mid-file': enc([good, '{"type":"assistant","message":{"id":"broken', 'not json', '[1,2]', '{"a":1} {"b":2}', '{"type":"assistant",}', good.replace('m3', 'm4')].join('\n') + '\n'),
    'bad usage fields': enc(
      [
        assistant({ msg: 's', usage: { ...usage(1, 1, 1, 1), input_tokens: '12' } }),
        assistant({ msg: 'n', usage: { ...usage(1, 1, 1, 1), output_tokens: -5 } }),
        assistant({ msg: 'h', usage: { ...usage(1, 1, 1, 1), cache_read_input_tokens: 1e15 } }),
        assistant({ msg: 'z', usage: { input_tokens: null, output_tokens: 1e3 } }),
        assistant({ msg: 'x', usage: 'lots' as never }),
      ].join('\n') + '\n',
    ),
    'a half last line': enc(user('hi') + '\n' + good + '\n' + good.slice(0, 77)),
    'unknown types and fields': enc([JSON.stringify({ type: 'hologram', deep: { a: [1, { b: 'c' }] } }), JSON.stringify({ type: 42 }), JSON.stringify({ type: { a: [1] }, message: { usage: {} } }), JSON.stringify({ type: [1], isSidechain: true, uuid: 'u1' }), JSON.stringify({ type: 'assistant', message: 'str' }), good].join('\n') + '\n'),
    // JSON.stringify writes the escapes: \" and \\ in the id, \n and \u0007 in the project
    'escapes in needed strings': enc(assistant({ msg: 'm"q\\', usage: usage(1, 1, 1, 1), cwd: '/a\nb\u0007' }) + '\n'),
  };
})();

test('buffer and streaming paths give the same facts for every fault case, in chunks down to 3 bytes', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  for (const [name, bytes] of Object.entries(CASES)) {
    const file = path.join(dir, `${name.replace(/\W+/g, '-')}.jsonl`);
    writeFileSync(file, bytes);
    const id = { fileId: 1, fileAgentId: null, fileSessionId: 's1' };
    const fast = await readTranscript(file, id);
    for (const chunkSize of [4096, 64, 7, 3]) {
      const streamed = await readTranscript(file, id, { streamAbove: 0, chunkSize });
      const view = (r: typeof fast) => ({ ...r.facts, lineCounts: [...r.facts.lineCounts], skipped: r.facts.skipped.map((s) => `${s.line} ${s.reason}`), readTo: r.readTo, lines: r.lines });
      assert.deepEqual(view(streamed), view(fast), `${name}, chunks of ${chunkSize}`);
    }
  }
});
