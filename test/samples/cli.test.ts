import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/temp.js';
import { help, parse } from '../../src/samples/args.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

function gen(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/samples/cli.ts', ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('bad arguments are a one-line error and exit 2', () => {
  for (const args of [['--scale', '0'], ['--scale', 'lots'], ['--seed', '-1'], ['--bogus']]) {
    const r = gen(...args, '--out', join(tmpdir(), 'cachelens-never-written'));
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^gen:samples: /);
  }
  assert.equal(existsSync(join(tmpdir(), 'cachelens-never-written')), false);
});

test('refuses an --out whose projects/ it did not write, and leaves it alone', () => {
  const out = tempDir('cachelens-foreign-');
  try {
    mkdirSync(join(out, 'projects'));
    writeFileSync(join(out, 'projects', 'mine.jsonl'), 'keep me\n');
    const r = gen('--scale', '0.25', '--out', out);
    assert.equal(r.status, 2);
    assert.equal(readFileSync(join(out, 'projects', 'mine.jsonl'), 'utf8'), 'keep me\n');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('writes a corpus with truth.json, and regenerates over its own output identically', () => {
  const out = tempDir('cachelens-gen-');
  try {
    const first = gen('--seed', '3', '--scale', '0.25', '--out', out);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /for 2 sessions/);
    const truth = readFileSync(join(out, 'truth.json'), 'utf8');
    assert.equal(JSON.parse(truth).counts.sessions, 2);
    const again = gen('--seed', '3', '--scale', '0.25', '--out', out);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(readFileSync(join(out, 'truth.json'), 'utf8'), truth);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('--help (and -h) prints the usage and every option with its default, exit 0, and writes nothing', () => {
  const out = join(tmpdir(), 'cachelens-never-written');
  for (const flag of ['--help', '-h']) {
    const r = gen(flag, '--out', out);
    assert.equal(existsSync(out), false, 'help writes no corpus');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^usage: npm run gen:samples -- /);
    // each option's lines: its own, then those indented under it
    for (const option of ['--seed', '--scale', '--out', '--truth']) assert.match(r.stdout, new RegExp(`^ {2}${option} .*(\\n {3,}.*)*\\(default `, 'm'), option);
    for (const line of r.stdout.split('\n')) assert.ok(line.length <= 100, `too wide: ${line}`);
  }
  const bad = gen('--bogus', '--out', out);
  assert.match(bad.stderr, /--truth full\|summary.*--help/, 'the usage in an error names every option, and --help');
});

test('the default --help prints for each option is the one a run uses', () => {
  const text = help();
  const given: string[] = [];
  for (const option of ['--seed', '--scale', '--out', '--truth']) {
    // the option's lines: its own, then those indented under it, up to its (default X)
    const m = new RegExp(`^ {2}${option} .*?(?:\\n {3,}.*?)*\\(default ([^)]+)\\)`, 'm').exec(text);
    assert.ok(m, option);
    given.push(option, m[1]!);
  }
  assert.deepEqual(parse(given), parse([]), `given as --help prints them (${given.join(' ')}), the defaults run the same`);
});

test('an option given no value says so in one line: --seed needs a value', () => {
  const out = join(tmpdir(), 'cachelens-never-written');
  for (const [args, hint] of [
    [['--seed', '--out', out], /\(--out is read as an option; a value that begins with - is written --seed=VALUE; usage: /],
    [['--out', out, '--seed'], /\(usage: /],
    [['--scale', '-1', '--out', out], /\(-1 is read as an option; a value that begins with - is written --scale=VALUE; /],
  ] as const) {
    const r = gen(...args);
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^gen:samples: ${args.find((a) => a === '--seed' || a === '--scale')} needs a value `), r.stderr);
    assert.match(r.stderr, hint, r.stderr);
  }
  assert.match(gen('--help=1').stderr, /^gen:samples: --help takes no value \(usage: /);
  assert.equal(existsSync(out), false);
});
