/**
 * Which files a pool (`query`/`crosstab --parquet POOL`) reads: every export below POOL, through links
 * to directories too (each directory once, a loop not followed), and POOL's own name as it is, a
 * backslash in it included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs, { mkdirSync, symlinkSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { openSource } from '../../src/commands/store.js';
import { UsageError } from '../../src/errors.js';
import { openParquet } from '../../src/store/portable.js';
import { runCli, usageError } from '../faults/helpers.js';
import { tmp } from './helpers.js';
import { DOV, FUM, TE, exportTo } from './pool-helpers.js';

/** The requests `query cost_by --parquet dir` counts, and its stderr. */
async function counted(dir: string): Promise<{ requests: number; stderr: string }> {
  const q = await runCli(['query', 'cost_by', '--parquet', dir, '--json']);
  assert.equal(q.code, 0, q.stderr);
  return { requests: (JSON.parse(q.stdout) as { rows: { requests: number }[] }).rows.reduce((s, x) => s + x.requests, 0), stderr: q.stderr };
}

test('a pool made of links to exports reads them, each directory once: a link to one already read is not read again, one to the pool or above it not at all (said as a loop)', async () => {
  // DuckDB's ** does not follow a link: pool/alice -> an export elsewhere was left out without a word
  // the pool one level down, so that the link above it leads to a directory holding the pool alone
  const pool = path.join(tmp('cachelens-pool-'), 'pool');
  const elsewhere = tmp('cachelens-shares-');
  const alice = await exportTo(DOV, path.join(elsewhere, 'alice-export'));
  const bob = await exportTo(TE, path.join(pool, 'bob'));
  assert.ok(alice > 0 && bob > 0);
  symlinkSync(path.join(elsewhere, 'alice-export'), path.join(pool, 'alice'));
  // a second name for bob's export, a link to the pool itself (a loop), and one to a directory above it
  symlinkSync(path.join(pool, 'bob'), path.join(pool, 'bob-again'));
  symlinkSync(pool, path.join(pool, 'bob', 'loop'));
  symlinkSync(path.dirname(pool), path.join(pool, 'up'));
  const px = await openParquet(pool);
  try {
    const [n] = await px.all(`SELECT count(*)::INTEGER AS requests FROM requests`);
    assert.deepEqual(n, { requests: alice + bob });
    assert.deepEqual(px.duplicates, { requests: 0, chains: 0, attachments: 0 }, 'each directory read once');
    // the loop and the link above the pool are not followed, and said; the second name for bob is not
    assert.deepEqual(px.passed, [
      { kind: 'loop', path: path.join(pool, 'bob', 'loop') },
      { kind: 'loop', path: path.join(pool, 'up') },
    ]);
  } finally {
    px.close();
  }
  const q = await counted(pool);
  assert.equal(q.requests, alice + bob);
  assert.equal(q.stderr, `cachelens: --parquet ${pool}: passed over 2 link loops: ${path.join(pool, 'bob', 'loop')} and 1 more\n`);
});

test('a link below a pool that leads nowhere is said on stderr, naming it; the rest is read', async () => {
  const pool = tmp('cachelens-pool-');
  const want = await exportTo(DOV, path.join(pool, 'alice'));
  symlinkSync(path.join(tmp(), 'unmounted', 'bob-export'), path.join(pool, 'bob'));
  const q = await counted(pool);
  assert.equal(q.requests, want);
  const lines = q.stderr.trim().split('\n');
  assert.equal(lines.length, 1, q.stderr);
  assert.equal(lines[0], `cachelens: --parquet ${pool}: passed over a link that leads nowhere: ${path.join(pool, 'bob')}`);
});

test('a pool whose directory\'s name holds a backslash is read, that directory alone: DuckDB\'s glob took it for a /', async () => {
  // `--parquet '/tmp/x/a\b/pool'` read `/tmp/x/a/b/pool` beside it (DuckDB's glob splits paths at a backslash)
  const parent = tmp('cachelens-pool-');
  const mine = path.join(parent, 'a\\b', 'pool');
  const beside = path.join(parent, 'a', 'b', 'pool');
  const want = await exportTo(DOV, mine);
  const other = await exportTo(TE, beside);
  assert.notEqual(want, other);
  const q = await counted(mine);
  assert.equal(q.requests, want);
  assert.equal(q.stderr, '');
  // with [ beside it in the path (which DuckDB globs), the backslash as well
  const both = path.join(parent, 'c\\d [1]');
  const third = await exportTo(FUM, both);
  assert.equal((await counted(both)).requests, third);
  const x = await runCli(['crosstab', '--parquet', mine, '--measure', 'requests', '--json']);
  assert.equal(x.code, 0, x.stderr);
  assert.equal((JSON.parse(x.stdout) as { cells: { row: unknown; col: unknown; value: number }[] }).cells.find((c) => c.row === null && c.col === null)!.value, want);
});

test('a pool whose path holds both a backslash and [ is refused in one line when no pattern can name its files alone', async () => {
  // DuckDB globs a path holding [, and matches its backslash only by ?, which here matches `cxd [1]` beside it too
  const parent = tmp('cachelens-pool-');
  const mine = path.join(parent, 'c\\d [1]');
  await exportTo(DOV, mine);
  mkdirSync(path.join(parent, 'cxd [1]'));
  await assert.rejects(openParquet(mine), (err: Error) => {
    assert.ok(err instanceof UsageError, err.message);
    assert.match(err.message, /cannot be read alone: .*matches .*cxd \[1\] too/);
    return true;
  });
  await usageError(['query', 'cost_by', '--parquet', mine, '--json'], /^cachelens: --parquet: .* cannot be read alone: .*cxd \[1\] too/);
});

test('a directory below a pool that cannot be read (a lost+found of a mounted drive) is passed over and said, naming it; the rest is read', async () => {
  // the tests may run as root, who reads every directory: the one below is made unreadable by readdirSync
  const pool = tmp('cachelens-pool-');
  const want = await exportTo(DOV, path.join(pool, 'alice'));
  const locked = path.join(pool, 'lost+found');
  mkdirSync(locked);
  let locked2: string | undefined;
  const readdir = fs.readdirSync;
  try {
    (fs as { readdirSync: unknown }).readdirSync = (dir: fs.PathLike, ...rest: unknown[]) => {
      if (String(dir) === locked || String(dir) === locked2) throw Object.assign(new Error(`EACCES: permission denied, scandir '${locked}'`), { code: 'EACCES' });
      return (readdir as (...a: unknown[]) => unknown)(dir, ...rest);
    };
    syncBuiltinESMExports();
    const lines: string[] = [];
    const { source } = await openSource({ parquet: pool }, { color: false, env: {}, stderr: (l) => lines.push(l) });
    try {
      const [n] = await source.all(`SELECT count(*)::INTEGER AS requests FROM requests`);
      assert.deepEqual(n, { requests: want });
    } finally {
      source.close();
    }
    assert.deepEqual(lines, [`cachelens: --parquet ${pool}: passed over a directory that cannot be read: ${locked}`]);
    // a pool whose only directory cannot be read: refused, saying what was passed over
    await assert.rejects(openParquet(locked), (err: Error) => err instanceof UsageError && /cannot be read \(permission denied\)/.test(err.message));
    const only = path.join(tmp('cachelens-pool-'), 'pool');
    mkdirSync(path.join(only, 'lost+found'), { recursive: true });
    locked2 = path.join(only, 'lost+found');
    await assert.rejects(openParquet(only), (err: Error) => {
      assert.ok(err instanceof UsageError, err.message);
      assert.match(err.message, new RegExp(`holds no cachelens Parquet export: .*; passed over a directory that cannot be read: ${locked2!.replace(/[+.]/g, '\\$&')}$`));
      return true;
    });
  } finally {
    (fs as { readdirSync: unknown }).readdirSync = readdir;
    syncBuiltinESMExports();
  }
});
