/**
 * Two cachelens processes on one store: DuckDB refuses the second writer, so the second waits
 * (saying so on its progress line, on a terminal) and goes on when the first is done, or gives up
 * after CACHELENS_LOCK_WAIT seconds with a one-line message and exit code 2. Nothing is corrupted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CONDENSE, corpus, repoRoot, tmp } from './helpers.js';

const cli = path.join(repoRoot, 'dist/cli.js');

function holder(db: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const p = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/store/hold-store.ts'), db], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    p.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('holding')) resolve(p);
    });
    p.on('exit', (code) => reject(new Error(`holder exited with ${code}`)));
  });
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cachelens(args: string[], env: Record<string, string>, onStderr?: (text: string) => void, preload?: string): Promise<Ran> {
  const p = spawn(process.execPath, [...(preload ? ['--import', pathToFileURL(preload).href] : []), cli, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  p.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    onStderr?.(stderr);
  });
  return new Promise((resolve) => p.on('close', (code) => resolve({ code, stdout, stderr })));
}

test('a second process that cannot wait fails with one clear line and exit 2', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const h = await holder(db);
  try {
    const r = await cachelens(['summary', root, '--db', db, '--json'], { CACHELENS_LOCK_WAIT: '0' });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], new RegExp(`^cachelens: store ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another process \\(pid ${h.pid}\\)`));
  } finally {
    h.stdin!.end();
  }
});

test('a second process that gives up after waiting says so in one line, the wait in it (not a waiting note and then the error)', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const h = await holder(db);
  try {
    const r = await cachelens(['summary', root, '--db', db, '--json'], { CACHELENS_LOCK_WAIT: '1' });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `cachelens: store ${db} is in use by another process (pid ${h.pid}); waited 1 s for it (run again when it has finished, or use --db to choose another store)\n`);
  } finally {
    h.stdin!.end();
  }
});

test('a second process waits for the first, saying nothing off a terminal (as no progress is said there), then runs on an intact store', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const alone = await cachelens(['summary', root, '--db', path.join(tmp(), 'alone.duckdb'), '--json'], {});
  assert.equal(alone.code, 0, alone.stderr);

  // what happened, in order, in one file: the second process's opens of the store (open-probe.mjs:
  // `locked` when refused, `opened`) and the holder's `releasing`, written before it lets go
  const seen = path.join(tmp(), 'seen.txt');
  const events = () => (existsSync(seen) ? readFileSync(seen, 'utf8').split('\n').filter(Boolean) : []);
  const h = await holder(db, { HOLD_RELEASE_OUT: seen });
  // released once the second process has been refused the store: so it has to wait, however long it takes to start
  let released = false;
  const watch = setInterval(() => {
    if (!released && events().includes('locked')) {
      released = true;
      h.stdin!.end();
    }
  }, 20);
  let r: Ran;
  try {
    r = await cachelens(['summary', root, '--db', db, '--json'], { CACHELENS_LOCK_WAIT: '120', OPEN_PROBE_OUT: seen, OPEN_PROBE_PATH: db }, undefined, path.join(repoRoot, 'test/store/open-probe.mjs'));
  } finally {
    clearInterval(watch);
    h.stdin!.end();
  }
  assert.ok(released, `the second process never found the store held: ${JSON.stringify(events())}`);
  const order = events();
  const opened = order.indexOf('opened');
  assert.ok(order[0] === 'locked', `refused first: ${JSON.stringify(order)}`);
  assert.ok(opened > order.indexOf('releasing') && order.indexOf('releasing') > 0, `opened only after the holder let go: ${JSON.stringify(order)}`);
  assert.deepEqual(new Set(order.slice(0, order.indexOf('releasing'))), new Set(['locked']), 'and only refused before');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '', 'nothing said of the wait off a terminal');
  assert.deepEqual(JSON.parse(r.stdout), JSON.parse(alone.stdout));
});

/**
 * `node dist/cli.js …args` on a pseudo-terminal (util-linux `script`, as test/commands/progress.test.ts
 * runs it), stdout to /dev/null; `onScreen` sees what the terminal has received so far.
 */
function onTerminal(args: string[], env: Record<string, string>, onScreen?: (screen: string) => void): Promise<{ code: number | null; screen: string }> {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const command = ['stty cols 400 rows 50;', 'exec', q(process.execPath), q(cli), ...args.map(q), '> /dev/null'].join(' ');
  const p = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { ...process.env, NO_COLOR: '1', TERM: 'xterm', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let screen = '';
  p.stdout.setEncoding('utf8').on('data', (d: string) => {
    screen += d;
    onScreen?.(screen);
  });
  return new Promise((resolve) => p.on('close', (code) => resolve({ code, screen: screen.replaceAll('\r\n', '\n') })));
}

/** The progress line's draws ("\r<text>\e[K"), and the lines written whole (ended by a newline). */
const drawn = (screen: string) => [...screen.matchAll(/\r([^\r\n\u001b]*)\u001b\[K/g)].map((m) => m[1]);
const written = (screen: string) => screen.replace(/\r[^\r\n\u001b]*\u001b\[K/g, '').split('\n').filter(Boolean);

test('on a terminal, the wait is the progress line (with its seconds): the run\'s reading replaces it, or the timeout\'s one error line does', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const h = await holder(db);
  let released = false;
  try {
    const gaveUp = await onTerminal(['summary', root, '--db', db, '--json'], { CACHELENS_LOCK_WAIT: '1' });
    assert.equal(gaveUp.code, 2, gaveUp.screen);
    assert.ok(drawn(gaveUp.screen).some((l) => l.startsWith(`store ${db} is in use by another process (pid ${h.pid}); waiting up to 1 s for it…`)), JSON.stringify(gaveUp.screen));
    assert.deepEqual(written(gaveUp.screen), [`cachelens: store ${db} is in use by another process (pid ${h.pid}); waited 1 s for it (run again when it has finished, or use --db to choose another store)`]);
    assert.ok(gaveUp.screen.slice(0, gaveUp.screen.indexOf('cachelens:')).endsWith('\r\u001b[K'), 'the line is erased before the error');

    const waited = await onTerminal(['summary', root, '--db', db, '--json'], { CACHELENS_LOCK_WAIT: '120' }, (screen) => {
      // released once the line says the run waits
      if (!released && screen.includes('waiting up to')) {
        released = true;
        h.stdin!.end();
      }
    });
    assert.ok(released, `the wait was never shown: ${JSON.stringify(waited.screen)}`);
    assert.equal(waited.code, 0, waited.screen);
    const lines = drawn(waited.screen);
    const at = lines.findIndex((l) => new RegExp(`^store ${esc(db)} is in use by another process \\(pid ${h.pid}\\); waiting up to 120 s for it…( \\d+ s)?$`).test(l));
    assert.ok(at >= 0, JSON.stringify(lines));
    assert.ok(lines.slice(at + 1).some((l) => l.startsWith('reading ')), 'the reading replaces it');
    assert.deepEqual(written(waited.screen), [], 'nothing of the wait is left on the terminal');
  } finally {
    if (!released) h.stdin!.end();
  }
});
