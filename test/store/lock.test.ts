/**
 * Two cachelens processes on one store: DuckDB refuses the second writer, so the second waits
 * (saying so once on stderr) and goes on when the first is done, or gives up after
 * CACHELENS_LOCK_WAIT seconds with a one-line message and exit code 2. Nothing is corrupted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { CONDENSE, corpus, repoRoot, tmp } from './helpers.js';

const cli = path.join(repoRoot, 'dist/cli.js');

function holder(db: string): Promise<ChildProcess> {
  const p = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/store/hold-store.ts'), db], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
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

function cachelens(args: string[], env: Record<string, string>, onStderr?: (text: string) => void): Promise<Ran> {
  const p = spawn(process.execPath, [cli, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

test('a second process waits for the first, says so, then runs on an intact store', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const alone = await cachelens(['summary', root, '--db', path.join(tmp(), 'alone.duckdb'), '--json'], {});
  assert.equal(alone.code, 0, alone.stderr);

  const h = await holder(db);
  let released = false;
  const r = await cachelens(['summary', root, '--db', db, '--json'], { CACHELENS_LOCK_WAIT: '120' }, (err) => {
    // release the store only once the second process has said it is waiting
    if (!released && err.includes('waiting')) {
      released = true;
      h.stdin!.end();
    }
  });
  if (!released) h.stdin!.end();
  assert.ok(released, `the waiting message was never printed; stderr: ${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`in use by another process \\(pid ${h.pid}\\); waiting up to 120 s`));
  assert.deepEqual(JSON.parse(r.stdout), JSON.parse(alone.stdout));
});
