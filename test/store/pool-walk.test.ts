/**
 * How cachelens walks a pool (`query`/`crosstab --parquet POOL`) where it meets what it cannot read:
 * never an internal error; passed over and said outside an export, the pool refused in one line
 * inside one; each directory read by its least path in code-point order; a link to the pool or above
 * it not followed. Permission failures run the CLI without root's power to read anything (asNobody).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs, { chmodSync, cpSync, mkdirSync, readdirSync, renameSync, symlinkSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { loadDuckdb } from '../../src/store/duckdb.js';
import { UsageError } from '../../src/errors.js';
import { openParquet } from '../../src/store/portable.js';
import { type RunOptions, runCli } from '../faults/helpers.js';
import { tmp } from './helpers.js';
import { DOV, TE, exportTo } from './pool-helpers.js';

/** `query cost_by --parquet dir --json`: its exit code, the requests it counts (when it answers), its stderr lines. */
async function query(dir: string, o: RunOptions = {}): Promise<{ code: number | null; requests: number | null; lines: string[] }> {
  const q = await runCli(['query', 'cost_by', '--parquet', dir, '--json'], o);
  const requests = q.code === 0 ? (JSON.parse(q.stdout) as { rows: { requests: number }[] }).rows.reduce((s, x) => s + x.requests, 0) : null;
  return { code: q.code, requests, lines: q.stderr.trim() === '' ? [] : q.stderr.trim().split('\n') };
}

/** `name` with the byte 0xff after it: a name that is not UTF-8. */
const notUtf8 = (dir: string, name: string) => Buffer.concat([Buffer.from(path.join(dir, name)), Buffer.from([0xff])]);

test('a directory below a pool whose name is not UTF-8 is passed over and said, not an internal error; a file of an export so named refuses the pool in one line', async () => {
  // Node read the name as U+FFFD, and the walk's realpath of that path failed: `internal error: ENOENT lstat`
  const pool = tmp('cachelens-pool-');
  const want = await exportTo(DOV, path.join(pool, 'alice'));
  await exportTo(TE, path.join(pool, 'bob'));
  const bad = notUtf8(pool, 'bob');
  renameSync(path.join(pool, 'bob'), bad);
  try {
    const q = await query(pool);
    assert.equal(q.requests, want, q.lines.join('\n'));
    assert.deepEqual(q.lines, [`cachelens: --parquet ${pool}: passed over a name that is not UTF-8 (DuckDB cannot open it): ${path.join(pool, 'bob')}\\xff`]);
  } finally {
    renameSync(bad, path.join(pool, 'bob'));
  }
  // a Parquet file of an export so named: called 'a damaged or cut-short Parquet file'
  const day = path.join(pool, 'alice', 'requests', readdirSync(path.join(pool, 'alice', 'requests'))[0]!);
  const file = Buffer.concat([Buffer.from(path.join(day, 'data_')), Buffer.from([0xff]), Buffer.from('.parquet')]);
  renameSync(path.join(day, 'data_0.parquet'), file);
  try {
    const q = await query(pool);
    assert.equal(q.code, 2);
    assert.equal(q.lines.length, 1, q.lines.join('\n'));
    assert.match(q.lines[0]!, /^cachelens: --parquet .*: .*\/data_\\xff\.parquet has a name that is not UTF-8, which DuckDB cannot open; it is part of the export .*alice, which cannot be read whole \(rename it/);
  } finally {
    renameSync(file, path.join(day, 'data_0.parquet'));
  }
});

test('a directory below a pool that can be listed but not searched is passed over and said, not an internal error', async () => {
  // mode 644 (744 for another user): readdir answers, the realpath of each entry failed with EACCES
  const pool = tmp('cachelens-pool-');
  const want = await exportTo(DOV, path.join(pool, 'alice'));
  await exportTo(TE, path.join(pool, 'shut', 'bob'));
  chmodSync(path.join(pool, 'shut'), 0o644);
  try {
    const q = await query(pool, { asNobody: true });
    assert.equal(q.requests, want, q.lines.join('\n'));
    assert.deepEqual(q.lines, [`cachelens: --parquet ${pool}: passed over a directory that cannot be read: ${path.join(pool, 'shut')}`]);
  } finally {
    chmodSync(path.join(pool, 'shut'), 0o755);
  }
});

test('an entry that vanishes while the pool is walked is passed over, not an internal error', async () => {
  const pool = tmp('cachelens-pool-');
  const want = await exportTo(DOV, path.join(pool, 'alice'));
  const gone = path.join(pool, 'gone');
  mkdirSync(gone);
  const { realpathSync, statSync } = fs;
  const vanished = (p: fs.PathLike) => {
    if (String(p) === gone) throw Object.assign(new Error(`ENOENT: no such file or directory, lstat '${gone}'`), { code: 'ENOENT' });
  };
  try {
    (fs as { realpathSync: unknown }).realpathSync = (p: fs.PathLike, ...rest: unknown[]) => (vanished(p), (realpathSync as (...a: unknown[]) => unknown)(p, ...rest));
    (fs as { statSync: unknown }).statSync = (p: fs.PathLike, ...rest: unknown[]) => (vanished(p), (statSync as (...a: unknown[]) => unknown)(p, ...rest));
    syncBuiltinESMExports();
    const px = await openParquet(pool);
    try {
      const [n] = await px.all(`SELECT count(*)::INTEGER AS requests FROM requests`);
      assert.deepEqual(n, { requests: want });
      assert.deepEqual(px.passed, []);
    } finally {
      px.close();
    }
  } finally {
    (fs as { realpathSync: unknown }).realpathSync = realpathSync;
    (fs as { statSync: unknown }).statSync = statSync;
    syncBuiltinESMExports();
  }
});

test('a day of an export below a pool that cannot be read refuses the pool in one line naming it, as a file that cannot be read does', async () => {
  // the day's requests were left out with exit 0 and one line on stderr
  const pool = tmp('cachelens-pool-');
  await exportTo(DOV, path.join(pool, 'alice'));
  const days = path.join(pool, 'alice', 'requests');
  const day = path.join(days, readdirSync(days)[0]!);
  chmodSync(day, 0o000);
  try {
    const q = await query(pool, { asNobody: true });
    assert.equal(q.code, 2, q.lines.join('\n'));
    assert.deepEqual(q.lines, [
      `cachelens: --parquet ${pool}: ${day} cannot be read (EACCES); it is part of the export ${path.join(pool, 'alice')}, which cannot be read whole (make it readable to this user, or take that export out of the pool)`,
    ]);
  } finally {
    chmodSync(day, 0o755);
  }
  // a file of it: named, with why, not called damaged or cut short
  const file = path.join(day, 'data_0.parquet');
  chmodSync(file, 0o000);
  try {
    const q = await query(pool, { asNobody: true });
    assert.deepEqual(q.lines, [`cachelens: --parquet ${pool}: ${file} cannot be read (EACCES) (make it readable to this user, or take that export out of the pool)`]);
  } finally {
    chmodSync(file, 0o644);
  }
});

test('a pool below a directory this user may not search is refused as one that cannot be read, naming that directory; one not there is no such directory', async () => {
  // it said "--parquet …/pool: no such directory" (existsSync reads EACCES as absent). As root the run drops root's power to
  // read anything (asNobody: setpriv without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH), so mode 000 binds as for anyone
  const above = path.join(tmp('cachelens-pool-'), 'shut');
  const pool = path.join(above, 'inner', 'pool');
  await exportTo(DOV, pool);
  chmodSync(above, 0o000);
  try {
    const q = await query(pool, { asNobody: true });
    assert.equal(q.code, 2, q.lines.join('\n'));
    assert.deepEqual(q.lines, [`cachelens: --parquet ${pool} cannot be read (permission denied): ${above} cannot be searched (make it readable to this user, or name another directory)`]);
  } finally {
    chmodSync(above, 0o755);
  }
  // the pool itself: it said "cannot be read: EACCES"; listed but not searched (644), that it held no export, having
  // "passed over a directory that cannot be read: POOL"
  for (const mode of [0o000, 0o644]) {
    chmodSync(pool, mode);
    try {
      const q = await query(pool, { asNobody: true });
      assert.deepEqual(q.lines, [`cachelens: --parquet ${pool} cannot be read (permission denied) (make it readable to this user, or name another directory)`], mode.toString(8));
    } finally {
      chmodSync(pool, 0o755);
    }
  }
  for (const none of [path.join(above, 'none'), path.join(pool, 'requests', readdirSync(path.join(pool, 'requests'))[0]!, 'data_0.parquet', 'x')]) {
    assert.deepEqual((await query(none)).lines, [`cachelens: --parquet ${none}: no such directory`]);
  }
});

test('a pool whose parent cannot be listed, its path holding a backslash and [, is refused in one line, not an internal error', async () => {
  const parent = path.join(tmp('cachelens-pool-'), 'shut');
  const mine = path.join(parent, 'c\\d [1]');
  await exportTo(DOV, mine);
  chmodSync(parent, 0o311);
  try {
    const q = await query(mine, { asNobody: true });
    assert.equal(q.code, 2, q.lines.join('\n'));
    assert.equal(q.lines.length, 1, q.lines.join('\n'));
    assert.match(q.lines[0]!, /^cachelens: --parquet: .*c\\d \[1\]\/.*\.parquet cannot be read alone: .*, and .*\/shut, where it is matched, cannot be listed \(EACCES\) \(/);
  } finally {
    chmodSync(parent, 0o755);
  }
});

test('a pool whose path holds a backslash and [ beside a name that differs there by a character of two bytes is read: DuckDB\'s ? matches one byte', async () => {
  const parent = tmp('cachelens-pool-');
  const mine = path.join(parent, 'c\\d [1]');
  const want = await exportTo(DOV, mine);
  await exportTo(TE, path.join(parent, 'céd [1]'));
  const q = await query(mine);
  assert.equal(q.requests, want, q.lines.join('\n'));
  assert.deepEqual(q.lines, []);
});

test('a pool of links that lead nowhere says so, naming the first, beside "holds no export"', async () => {
  const pool = tmp('cachelens-pool-');
  symlinkSync('/nonexistent/unmounted/alice', path.join(pool, 'alice'));
  await assert.rejects(openParquet(pool), (err: Error) => {
    assert.ok(err instanceof UsageError, err.message);
    assert.match(err.message, new RegExp(`holds no cachelens Parquet export: .*; passed over a link that leads nowhere: ${path.join(pool, 'alice')}$`));
    return true;
  });
});

test('each directory is read by its least path in code-point order, all paths to it compared, which decides a tie between exports', async () => {
  // pt/x/sub -> E was read before pt/x-y -> E (the walk went by names, x before x-y), though 'pt/x-y' <
  // 'pt/x/sub' ('-' before '/'): E then came after pt/x-z, an edited copy of the same age, and won the tie
  const pt = tmp('cachelens-pool-');
  const elsewhere = tmp('cachelens-shares-');
  const e = path.join(elsewhere, 'E');
  await exportTo(DOV, e);
  cpSync(e, path.join(pt, 'x-z'), { recursive: true });
  const instance = await (await loadDuckdb()).DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    for (const table of ['requests', 'chains']) {
      for (const day of readdirSync(path.join(pt, 'x-z', table))) {
        const file = path.join(pt, 'x-z', table, day, 'data_0.parquet');
        await db.run(`COPY (SELECT * REPLACE (project || ' (edited)' AS project) FROM read_parquet('${file}')) TO '${file}.new' (FORMAT parquet)`);
        renameSync(`${file}.new`, file);
      }
    }
  } finally {
    db.closeSync();
    instance.closeSync();
  }
  mkdirSync(path.join(pt, 'x'));
  symlinkSync(e, path.join(pt, 'x', 'sub'));
  symlinkSync(e, path.join(pt, 'x-y'));
  const px = await openParquet(pt);
  try {
    const [n] = await px.all(`SELECT (SELECT count(*) FROM requests WHERE NOT ends_with(project, ' (edited)'))::INTEGER AS requests, (SELECT count(*) FROM chains WHERE NOT ends_with(project, ' (edited)'))::INTEGER AS chains`);
    assert.deepEqual(n, { requests: 0, chains: 0 }, 'pt/x-z, after pt/x-y, wins');
    const [files] = await px.all(`SELECT list_sort(list_distinct(list_transform(getvariable('requests_files'), f -> regexp_replace(f, '/requests/.*', '')))) AS exports`);
    assert.deepEqual(files, { exports: [path.join(pt, 'x-y'), path.join(pt, 'x-z')] });
  } finally {
    px.close();
  }
});

test('a link to a directory above the pool, or to the pool, is not read, and is said as a loop: an export beside the pool is not counted', async () => {
  // `ln -s .. pool/up` read every export beside the pool, without a word
  const o = tmp('cachelens-pool-');
  const pool = path.join(o, 'pool');
  const want = await exportTo(DOV, path.join(pool, 'alice'));
  await exportTo(TE, path.join(o, 'sibling'));
  symlinkSync('..', path.join(pool, 'up'));
  symlinkSync('/', path.join(pool, 'everything'));
  symlinkSync(pool, path.join(pool, 'alice', 'loop'));
  const q = await query(pool);
  assert.equal(q.requests, want, q.lines.join('\n'));
  assert.deepEqual(q.lines, [`cachelens: --parquet ${pool}: passed over 3 link loops: ${path.join(pool, 'alice', 'loop')} and 2 more`]);
});

test('a pool through a link, below a directory this user may not search where the link leads, names that directory, not the link\'s', async () => {
  // home/u/poollink -> ../../shares/team/pool, shares/team mode 000: it said `home/u cannot be searched`, which can be
  const p = tmp('cachelens-pool-');
  const pool = path.join(p, 'shares', 'team', 'pool');
  await exportTo(DOV, pool);
  mkdirSync(path.join(p, 'home', 'u'), { recursive: true });
  const link = path.join(p, 'home', 'u', 'poollink');
  symlinkSync('../../shares/team/pool', link);
  const team = path.join(p, 'shares', 'team');
  chmodSync(team, 0o000);
  try {
    const q = await query(link, { asNobody: true });
    assert.equal(q.code, 2, q.lines.join('\n'));
    assert.deepEqual(q.lines, [`cachelens: --parquet ${link} cannot be read (permission denied): ${team} cannot be searched (make it readable to this user, or name another directory)`]);
  } finally {
    chmodSync(team, 0o755);
  }
});

test('links that lead to each other are a link loop, one into a directory that cannot be searched a link that cannot be read; a hidden one is not said; paths are shown as --parquet was given', async () => {
  const work = tmp('cachelens-pool-');
  const want = await exportTo(DOV, path.join(work, 'p2', 'alice'));
  symlinkSync('lb', path.join(work, 'p2', 'la'));
  symlinkSync('la', path.join(work, 'p2', 'lb'));
  symlinkSync('nothing-here', path.join(work, 'p2', '.#notes.md'));
  mkdirSync(path.join(work, 'shut', 'inner'), { recursive: true });
  symlinkSync(path.join(work, 'shut', 'inner'), path.join(work, 'p2', 'carol'));
  symlinkSync(path.join(work, 'unmounted'), path.join(work, 'p2', 'bob'));
  chmodSync(path.join(work, 'shut'), 0o600);
  try {
    const q = await query('p2', { asNobody: true, cwd: work });
    assert.equal(q.requests, want, q.lines.join('\n'));
    assert.deepEqual(q.lines, [
      'cachelens: --parquet p2: passed over a link that leads nowhere: p2/bob',
      'cachelens: --parquet p2: passed over 2 link loops: p2/la and 1 more',
      'cachelens: --parquet p2: passed over a link that cannot be read: p2/carol',
    ]);
  } finally {
    chmodSync(path.join(work, 'shut'), 0o755);
  }
});

test('a hidden directory below a pool is neither read nor said, as docs/store.md says of hidden entries: one this user may not read (a drive\'s .Trashes), one holding an export (.snapshot)', async () => {
  const pool = tmp('cachelens-pool-');
  const want = await exportTo(DOV, path.join(pool, 'alice'));
  // an older copy of an export, as a file server's snapshot directory or a trash holds one: it was read and pooled
  await exportTo(TE, path.join(pool, '.snapshot', 'bob'));
  // a directory this user may not read: it was said to be passed over ("a directory that cannot be read: pool/.Trashes")
  mkdirSync(path.join(pool, '.Trashes', 'inner'), { recursive: true });
  chmodSync(path.join(pool, '.Trashes'), 0o000);
  try {
    const q = await query(pool, { asNobody: true });
    assert.equal(q.code, 0, q.lines.join('\n'));
    assert.equal(q.requests, want);
    assert.deepEqual(q.lines, []);
  } finally {
    chmodSync(path.join(pool, '.Trashes'), 0o755);
  }
});
