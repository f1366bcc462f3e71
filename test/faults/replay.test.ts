/**
 * Bad lines under `replay session` (SPEC §8): the replay re-reads a transcript whole (every content
 * block, not the ingest's projection), so each fault is checked through that reader too, with the
 * built CLI: exit 0, no internal error, the bad line counted as skipped and the rest replayed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { assistant, removeDir, runCli, tempDir, usage, user, writeLog } from './helpers.js';

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
