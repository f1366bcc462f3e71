/**
 * test/helpers/temp.ts: tempDir's dirs go when the file ends, by exit or by a signal, and the
 * guard `npm test` preloads (tmp-guard.mjs) fails a test file that leaves anything else in its TMPDIR.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from './corpus.js';
import { tempDir } from './temp.js';

const fixture = (name: string) => join(REPO, 'test/fixtures/temp', name);

/** `node --test` on the fixture with the guard, in an empty TMPDIR of its own. */
function guarded(leave: boolean): { status: number | null; out: string; left: string[] } {
  const tmp = tempDir('cachelens-guarded-');
  const env = { ...process.env, TMPDIR: tmp, LEAVE: leave ? '1' : '0', CACHELENS_KEEP_TEST_TMP: '' };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', './test/helpers/tmp-guard.mjs', '--test', fixture('leaves.ts')], { cwd: REPO, env, encoding: 'utf8' });
  // tsx's own cache (tsx-<uid>) is the runner's, made outside the guard
  return { status: r.status, out: r.stdout + r.stderr, left: readdirSync(tmp).filter((e) => !e.startsWith('tsx-')) };
}

test('under the guard a test file whose temp dirs all come from tempDir passes, and nothing is left', () => {
  const r = guarded(false);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /^# fail 0$/m);
  assert.deepEqual(r.left, []);
});

test('under the guard a test file that leaves a dir in its TMPDIR fails, naming it; the dir goes all the same', () => {
  const r = guarded(true);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /^# fail 1$/m);
  assert.match(r.out, /leaves\.ts left in its temp dir: cachelens-fixture-left-\w{6}$/m);
  assert.doesNotMatch(r.out, /cachelens-fixture-kept-/, 'the dir from tempDir is not named');
  assert.deepEqual(r.left, []);
});

test('a test process ended by SIGINT, SIGTERM or SIGHUP removes its temp dirs and still ends by that signal', async () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const env = { ...process.env, CACHELENS_KEEP_TEST_TMP: '' };
    const child = spawn(process.execPath, ['--import', 'tsx', fixture('waits.ts')], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const ended = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, sig) => resolve(sig ?? code)));
    const dir = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.endsWith('\n')) resolve(out.trim());
      });
    });
    assert.ok(existsSync(dir), dir);
    child.kill(signal);
    assert.equal(await ended, signal);
    assert.equal(existsSync(dir), false, `${dir} is gone after ${signal}`);
  }
});
