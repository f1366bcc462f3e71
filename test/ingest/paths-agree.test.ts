/** The buffer-projection path and the stream-json path give identical facts for every real transcript. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fingerprint } from '../../src/ingest/fingerprint.js';
import { readTranscript } from '../../src/ingest/read-file.js';
import { REAL_LOGS, plain, transcripts } from '../helpers/corpus.js';

const files = transcripts(REAL_LOGS);

test('every real transcript is found', () => {
  assert.equal(files.length, 18);
});

for (const file of files) {
  test(`fast and streaming paths agree: ${file.slice(REAL_LOGS.length + 1)}`, async () => {
    const id = { fileId: 1, fileAgentId: null, fileSessionId: null };
    const fast = await readTranscript(file, id);
    // every line streamed, in 4 KiB chunks: lines longer than a chunk cross chunk boundaries
    const streamed = await readTranscript(file, id, { streamAbove: 0, chunkSize: 4096 });
    // 4 KiB pieces, lines up to 64 KiB read in place (the buffer grows to hold them), longer streamed
    const grown = await readTranscript(file, id, { streamAbove: 65536, chunkSize: 4096 });
    assert.deepEqual(plain(grown.facts), plain(fast.facts));
    assert.deepEqual([grown.readTo, grown.lines], [fast.readTo, fast.lines]);
    assert.ok(fast.facts.observations.length > 0);
    assert.equal(fast.facts.skipped.length, 0);
    assert.deepEqual(plain(streamed.facts), plain(fast.facts));
    assert.equal(streamed.readTo, fast.readTo);
    assert.equal(streamed.lines, fast.lines);
    // the reader's fingerprint, taken through its descriptor, is the one ingest takes by path
    assert.equal(fast.fingerprint, fingerprint(file, fast.readTo));
    assert.equal(streamed.fingerprint, fast.fingerprint);
    assert.equal(grown.fingerprint, fast.fingerprint);
  });
}
