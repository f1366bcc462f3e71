/**
 * Size (SPEC §8): a 300 MB single line (a pasted log in one response) and a 2.5 GB transcript,
 * generated on the fly from realistic repeated lines, read by the built CLI. Usage is counted
 * exactly, nothing crashes, and the child's peak resident memory (getrusage, via the probe
 * preload) stays under MAX_RSS_MB however large the line or file is. Files are deleted after.
 *
 * The sizes are constants, not skips: if the temp file system has less room than a case needs,
 * the test fails and says how much it needs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { approx, assistant, freeBytes, opusWeight, removeDir, skipsByReason, summary, tempDir, tokens, usage, user, writeLog } from './helpers.js';

/** Bytes of the one giant line (above the reader's 16 MiB chunk, so it takes the streaming path). */
const LINE_BYTES = 300 * 1024 * 1024;
/** Bytes of the one giant transcript. */
const FILE_BYTES = 2.5e9;
/** Bytes of each broken giant line (also above one chunk). */
const BROKEN_BYTES = 70 * 1024 * 1024;
/** Peak resident memory allowed to the whole cachelens process (DuckDB and worker threads included). */
const MAX_RSS_MB = 600;

/**
 * Terminal output as it gets pasted: JSON escapes (\n, \", \u001b colour codes) and multi-byte
 * UTF-8 (é, ✓) that chunk boundaries will cut through. 100 bytes.
 */
const LOG_TEXT = '2025-03-01T10:00:00.123Z INFO [w-3] GET /api/items?p=2 200 12ms \\"ok\\" café \\u001b[32m✓\\u001b[0m\\n';

function pasted(bytes: number): Buffer {
  return Buffer.from(LOG_TEXT.repeat(Math.ceil(bytes / Buffer.byteLength(LOG_TEXT))));
}

/** Writes head, then `body` repeated until `bytes` are written, then tail; returns the bytes written. */
function writeRepeated(fd: number, head: string, body: Buffer, bytes: number, tail: string): number {
  let n = writeSync(fd, head);
  for (let left = bytes; left > 0; left -= body.length) n += writeSync(fd, body, 0, Math.min(left, body.length));
  return n + writeSync(fd, tail);
}

function needDisk(dir: string, bytes: number): void {
  const free = freeBytes(dir);
  assert.ok(free > bytes * 1.1, `this case needs ${(bytes / 1e9).toFixed(1)} GB free under ${dir}, found ${(free / 1e9).toFixed(1)} GB (sizes: test/faults/huge.test.ts)`);
}

test('a 300 MB line is streamed: its usage is counted, memory stays bounded; broken giant lines are located skips', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  needDisk(dir, LINE_BYTES + 3 * BROKEN_BYTES);
  const logs = path.join(dir, 'logs');
  const body = pasted(1 << 20);

  const big = writeLog(logs, 'proj/big.jsonl', user('paste this') + '\n');
  const fd = openSync(big, 'a');
  const head = assistant({ msg: 'msg_big', usage: usage(0, 0, 0, 0), text: 'TEXT' }).split('TEXT')[0];
  // usage after the giant text: the reader must get through all of it to find the numbers
  const tail = '"}],"usage":{"input_tokens":7,"output_tokens":11,"cache_creation_input_tokens":13,"cache_read_input_tokens":17}},"after":"the line ends here"}\n';
  const lineBytes = writeRepeated(fd, head, body, LINE_BYTES, tail);
  writeSync(fd, assistant({ msg: 'msg_small', usage: usage(1, 2, 3, 4), t: '2025-03-01T10:00:05.000Z' }) + '\n');
  closeSync(fd);
  assert.ok(lineBytes > LINE_BYTES);

  // a giant line cut off in the middle (a crashed writer), one with garbage at its start, a good
  // line, and a giant last line still being written
  const broken = writeLog(logs, 'proj/broken.jsonl', '');
  const fd2 = openSync(broken, 'a');
  writeRepeated(fd2, head.replace('msg_big', 'msg_cut'), body, BROKEN_BYTES, '\n');
  writeRepeated(fd2, head.replace('msg_big', 'msg_garbage').replace('"type":"assistant"', '"type":@@'), body, BROKEN_BYTES, '"}]}}\n');
  writeSync(fd2, assistant({ msg: 'msg_after', usage: usage(100, 0, 0, 0), t: '2025-03-01T10:00:06.000Z' }) + '\n');
  writeRepeated(fd2, head.replace('msg_big', 'msg_open'), body, BROKEN_BYTES, '');
  closeSync(fd2);

  const started = performance.now();
  const s = await summary([logs], path.join(dir, 's.duckdb'), { probe: true });
  t.diagnostic(`300 MB line + 3 × 70 MB broken lines: ${((performance.now() - started) / 1000).toFixed(1)} s, peak RSS ${Math.round(s.ran.maxRssKb! / 1024)} MB`);
  assert.deepEqual(tokens(s.totals), { requests: 3, input: 108, output: 13, cache_write_5m: 16, cache_write_1h: 0, cache_read: 21, unpriced_requests: 0 });
  approx(s.totals.weight, opusWeight(108, 13, 16, 21), 'weight');
  assert.deepEqual(skipsByReason(s), {
    incomplete_last_line: { count: 1, at: ['broken.jsonl:4'] },
    invalid_json: { count: 2, at: ['broken.jsonl:1', 'broken.jsonl:2'] },
  });
  assert.equal(s.quality.lines, 6);
  assert.ok(s.ran.maxRssKb !== null, 'the probe reported the peak');
  assert.ok(s.ran.maxRssKb! / 1024 < MAX_RSS_MB, `peak RSS ${Math.round(s.ran.maxRssKb! / 1024)} MB ≥ ${MAX_RSS_MB} MB`);
});

test('a 2.5 GB transcript (and a second file, so worker threads run) is read with exact totals in bounded memory', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  needDisk(dir, FILE_BYTES + 60e6);
  const logs = path.join(dir, 'logs');
  // one round: a ~220 KB tool result (stdout of a long command), then the request that read it
  const text = LOG_TEXT.repeat(1100);
  const toolResult = Buffer.from(
    JSON.stringify({ type: 'user', sessionId: 'huge', timestamp: '2025-03-01T10:00:00.000Z', cwd: '/work/huge', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'TEXT' }] }, toolUseResult: { stdout: 'TEXT' } }).replaceAll('TEXT', text) + '\n',
  );
  const write = (file: string, bytes: number, prefix: string): number => {
    const fd = openSync(writeLog(logs, file, ''), 'a');
    let n = 0;
    let i = 0;
    while (n < bytes) {
      const t = new Date(Date.UTC(2025, 2, 1, 10) + i * 1000).toISOString();
      const a = Buffer.from(assistant({ session: prefix, msg: `${prefix}_${i}`, t, usage: usage(1, 2, 3, 4) }) + '\n');
      n += writeSync(fd, toolResult) + writeSync(fd, a);
      i++;
    }
    closeSync(fd);
    return i;
  };
  const genStarted = performance.now();
  const rounds = write('proj/huge.jsonl', FILE_BYTES, 'huge') + write('proj/second.jsonl', 50e6, 'second');
  t.diagnostic(`generated ${(FILE_BYTES / 1e9).toFixed(1)} GB + 50 MB in ${((performance.now() - genStarted) / 1000).toFixed(1)} s`);

  const started = performance.now();
  const s = await summary([logs], path.join(dir, 's.duckdb'), { probe: true });
  t.diagnostic(`read in ${((performance.now() - started) / 1000).toFixed(1)} s, peak RSS ${Math.round(s.ran.maxRssKb! / 1024)} MB`);
  assert.deepEqual(tokens(s.totals), { requests: rounds, input: rounds, output: 2 * rounds, cache_write_5m: 3 * rounds, cache_write_1h: 0, cache_read: 4 * rounds, unpriced_requests: 0 });
  approx(s.totals.weight, rounds * opusWeight(1, 2, 3, 4), 'weight');
  assert.deepEqual(s.quality.skipped, []);
  assert.equal(s.quality.lines, 2 * rounds);
  assert.ok(s.ran.maxRssKb! / 1024 < MAX_RSS_MB, `peak RSS ${Math.round(s.ran.maxRssKb! / 1024)} MB ≥ ${MAX_RSS_MB} MB`);
});
