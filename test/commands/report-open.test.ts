/**
 * `report --open`: the written page is handed to the opener (xdg-open on Linux, found on PATH); an
 * opener that is missing or exits non-zero is said in one stderr line naming the report, and the exit
 * status stays 0 (the report was written). A fake xdg-open on PATH stands for the real one (Linux: the
 * opener elsewhere is open or explorer). Spawns dist/.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { onPath } from '../../src/commands/report.js';
import { REPO, cli, tempDir } from '../helpers/corpus.js';

const SAMPLE = join(REPO, 'sample-logs');

/** A directory holding an `xdg-open` that writes the path it was given to `opened` beside it and exits `status`. */
function fakeOpener(status: number): string {
  const bin = tempDir('cachelens-opener-');
  const script = join(bin, 'xdg-open');
  writeFileSync(script, `#!/bin/sh\nprintf '%s' "$1" > '${join(bin, 'opened')}'\nexit ${status}\n`);
  chmodSync(script, 0o755);
  return bin;
}

function report(bin: string): { code: number; stdout: string; stderr: string; out: string } {
  const out = join(tempDir('cachelens-report-'), 'r.html');
  const r = cli(['report', SAMPLE, '--db', ':memory:', '--out', out, '--open'], { PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` });
  return { ...r, out };
}

test('report --open: an opener that exits non-zero is said in one line naming the report; the exit status stays 0', () => {
  // xdg-open exiting 3 (no browser found) was passed over without a word
  const bin = fakeOpener(3);
  const r = report(bin);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(r.out), 'the report was written');
  assert.equal(readFileSync(join(bin, 'opened'), 'utf8'), r.out, 'the opener was given the report');
  const lines = r.stderr.trim().split('\n').filter((l) => l.includes('xdg-open'));
  assert.deepEqual(lines, [`cachelens: xdg-open exited with status 3; the report was written: open ${r.out} in a browser`]);
});

test('report --open: an opener that exits 0 adds nothing to stderr; one not on PATH is said', () => {
  const bin = fakeOpener(0);
  const r = report(bin);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readFileSync(join(bin, 'opened'), 'utf8'), r.out);
  assert.doesNotMatch(r.stderr, /xdg-open/);
  // node itself is run by its path: a PATH of an empty directory holds no xdg-open
  const none = cli(['report', SAMPLE, '--db', ':memory:', '--out', join(tempDir('cachelens-report-'), 'r.html'), '--open'], { PATH: tempDir('cachelens-empty-') });
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stderr, /^cachelens: no xdg-open here; open \S+r\.html in a browser$/m);
});

test('report --open: `wrote PATH` is printed before the opener is waited for', async () => {
  // the wait (up to 5 s) came before the answer: nothing on screen meanwhile, and a Ctrl-C in it left
  // nothing of a report that was written. This opener ends (status 7) only once the test has read `wrote`.
  const bin = tempDir('cachelens-opener-');
  const go = join(bin, 'go');
  writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\ni=0\nwhile [ $i -lt 150 ]; do [ -e '${go}' ] && exit 7; sleep 0.1; i=$((i+1)); done\nexit 0\n`);
  chmodSync(join(bin, 'xdg-open'), 0o755);
  const out = join(tempDir('cachelens-report-'), 'r.html');
  const child = spawn(process.execPath, [join(REPO, 'dist/cli.js'), 'report', SAMPLE, '--db', ':memory:', '--out', out, '--open'], {
    env: { ...process.env, NO_COLOR: '1', PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d;
    if (stdout.includes('wrote ')) writeFileSync(go, '');
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  assert.equal(code, 0, stderr);
  assert.equal(stdout, `wrote ${out}\n`);
  assert.match(stderr, /xdg-open exited with status 7; the report was written/);
});

test('with no PATH the opener is looked for where spawn looks (/bin, /usr/bin), not nowhere', () => {
  // `env -u PATH cachelens report --open` said "no xdg-open here" of /usr/bin/xdg-open, which spawn runs
  assert.equal(onPath('sh', {}), true);
  assert.equal(onPath('sh', { PATH: tempDir('cachelens-empty-') }), false);
  assert.equal(onPath('no-such-opener-here', {}), false);
});
