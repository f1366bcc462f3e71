/**
 * The reader's fingerprint of what it read (fingerprint.ts, taken through its descriptor) is the
 * one ingest takes by path for the same bytes: for files that end with a newline, end in a
 * complete or a half-written last line, start with a BOM, are empty, are read in one read or in
 * several chunks, or are read on from where an earlier read stopped.
 */
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fingerprint } from '../../src/ingest/fingerprint.js';
import { readTranscriptSync } from '../../src/ingest/read-file.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('cachelens-fingerprint-');
const id = { fileId: 1, fileAgentId: null, fileSessionId: 's' };

function line(i: number, pad = 0): string {
  return `${JSON.stringify({ type: 'user', uuid: `u${i}`, sessionId: 's', timestamp: '2026-01-01T00:00:00Z', message: { role: 'user', content: 'x'.repeat(pad) } })}\n`;
}

const cases: [string, string][] = [
  ['ends with a newline', line(1) + line(2, 3000)],
  ['short, under the fingerprint bytes', line(1)],
  ['a complete last line without its newline', line(1, 2000) + line(2).trimEnd()],
  ['a half-written last line', line(1, 2000) + line(2).slice(0, 40)],
  ['a BOM', `\uFEFF${line(1)}${line(2, 1500)}`],
  ['empty', ''],
  ['blank lines only', '\n\n'],
];

for (const [name, text] of cases) {
  test(`the reader's fingerprint is the file's: ${name}`, () => {
    const path = join(dir, `${name.replace(/\W+/g, '-')}.jsonl`);
    writeFileSync(path, text);
    const whole = readTranscriptSync(path, id);
    assert.equal(whole.fingerprint, fingerprint(path, whole.readTo));
    // in 512-byte chunks: several reads
    const chunked = readTranscriptSync(path, id, { chunkSize: 512, streamAbove: 512 });
    assert.deepEqual([chunked.readTo, chunked.fingerprint], [whole.readTo, whole.fingerprint]);
  });
}

test('a file read on from an earlier read keeps its fingerprint of the whole', () => {
  const path = join(dir, 'appended.jsonl');
  writeFileSync(path, line(1, 1500) + line(2));
  const first = readTranscriptSync(path, id);
  appendFileSync(path, line(3, 2500));
  const next = readTranscriptSync(path, id, { from: first.readTo, linesBefore: first.lines, state: first.facts.state });
  assert.equal(next.fingerprint, fingerprint(path, next.readTo));
  assert.notEqual(next.fingerprint, first.fingerprint);
});
