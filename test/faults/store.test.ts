/**
 * A store that cannot be used (SPEC §8, §7): damaged anywhere, truncated, empty, held by another
 * process, a directory, someone else's DuckDB file, or in a directory we may not create. Each run
 * either gives the exact totals or stops with one stderr line naming the store and exit code 2;
 * none crashes with a stack trace, and none silently reports numbers from a damaged store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileToMake, removeCutShort } from '../../src/store/store.js';
import { assistant, baseEnv, cliPath, realLogs, removeDir, repoRoot, type Ran, runCli, summary, tempDir, tokens, treeHash, usage, user, writeLog } from './helpers.js';

const EXPECTED = { requests: 2, input: 11, output: 22, cache_write_5m: 33, cache_write_1h: 0, cache_read: 44, unpriced_requests: 0 };

function corpus(dir: string): string {
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [
    user('hi'),
    assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) }),
    assistant({ msg: 'm2', usage: usage(10, 20, 30, 40), t: '2025-03-02T10:00:00.000Z' }),
  ]);
  return logs;
}

function assertStoreError(r: Ran, db: string, expected: RegExp): void {
  assert.equal(r.code, 2, `exit code: ${r.stderr}`);
  assert.equal(r.stdout, '');
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one stderr line: ${JSON.stringify(r.stderr)}`);
  assert.ok(lines[0].startsWith('cachelens: ') && lines[0].includes(db), `names the store: ${lines[0]}`);
  assert.match(lines[0], expected);
  assert.doesNotMatch(lines[0], /internal error/);
}

/**
 * DuckDB files are three 4 KiB headers, then 256 KiB blocks, each with its own checksum. Random
 * bytes written into each header and into the middle of each block: wherever the damage lands,
 * a run either reads the logs into exact totals (the block was free) or refuses the store.
 */
test('a store damaged in any block gives exact totals or one line naming the store, exit 2', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const good = path.join(dir, 'good.duckdb');
  assert.deepEqual(tokens((await summary([logs], good)).totals), EXPECTED);
  const size = statSync(good).size;
  const offsets = [0, 4096, 8192];
  for (let o = 12288 + 100_000; o < size; o += 262_144) offsets.push(o);
  const outcomes: string[] = [];
  const garbage = Buffer.alloc(4096);
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919 + 13) & 0xff;
  const runs = offsets.map(async (offset) => {
    const db = path.join(dir, `damaged-${offset}.duckdb`);
    copyFileSync(good, db);
    const fd = openSync(db, 'r+');
    writeSync(fd, garbage, 0, garbage.length, offset);
    closeSync(fd);
    const r = await runCli(['summary', logs, '--db', db, '--json']);
    if (r.code === 0) {
      assert.deepEqual(tokens(JSON.parse(r.stdout).totals), EXPECTED, `damage at ${offset} in a free block: totals still exact`);
      outcomes.push(`${offset}: read`);
    } else {
      assertStoreError(r, db, /store .* (is damaged|is unreadable)|cannot open store/);
      outcomes.push(`${offset}: refused`);
    }
  });
  await Promise.all(runs);
  assert.equal(outcomes.length, offsets.length);
  assert.ok(outcomes.filter((o) => o.endsWith('refused')).length >= 3, `at least the three headers are refused: ${outcomes.join(', ')}`);
});

test('a truncated store, an empty file, a text file of the user\'s own and a directory as --db are refused in one line that advises no deletion', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const good = path.join(dir, 'good.duckdb');
  await summary([logs], good);

  const truncated = path.join(dir, 'truncated.duckdb');
  copyFileSync(good, truncated);
  truncateSync(truncated, Math.floor(statSync(good).size / 2));
  assertStoreError(await runCli(['summary', logs, '--db', truncated]), truncated, /cannot open store .*: IO Error.*\(it is left as it is; choose another --db path\)$/);

  const empty = path.join(dir, 'empty.duckdb');
  writeFileSync(empty, '');
  assertStoreError(await runCli(['summary', logs, '--db', empty]), empty, /: not a DuckDB file, so no cachelens store; it is left as it is \(choose another --db path\)$/);

  // a file of the user's own: the advice was `delete it or run with --rebuild --db <new path>`
  const notes = path.join(dir, 'notes.txt');
  writeFileSync(notes, 'my notes\n');
  for (const extra of [[], ['--rebuild']]) {
    const r = await runCli(['summary', logs, '--db', notes, ...extra]);
    assertStoreError(r, notes, new RegExp(`^cachelens: cannot open store ${notes.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a DuckDB file, so no cachelens store; it is left as it is \\(choose another --db path\\)$`));
    assert.doesNotMatch(r.stderr, /delete|--rebuild/);
  }
  assert.equal(readFileSync(notes, 'utf8'), 'my notes\n');

  const asDir = path.join(dir, 'a-directory');
  mkdirSync(asDir);
  assertStoreError(await runCli(['summary', logs, '--db', asDir]), asDir, /cannot open store .*Is a directory/);
});

test('a store or an export whose directory cannot be made is a one-line error, not a hang: /proc/x (Node\'s recursive mkdir spun there forever)', { timeout: 60_000 }, async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  // the default store's directory, which cachelens makes (a --db in a directory not there is refused before: no directory …)
  const db = '/proc/cachelens-no-such/cachelens/store.duckdb';
  assertStoreError(await runCli(['summary', logs], { env: { XDG_CACHE_HOME: '/proc/cachelens-no-such' } }), db, /cannot create the directory of store .*: ENOENT/);
  assertStoreError(await runCli(['summary', logs, '--db', db]), db, /: no directory \/proc\/cachelens-no-such /);
  // DIR itself, which cachelens makes (one below a directory not there is refused before: no directory …)
  const out = '/proc/cachelens-no-such';
  const r = await runCli(['export', logs, '--db', path.join(dir, 'e.duckdb'), '--parquet', out]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^cachelens: --parquet \/proc\/cachelens-no-such: cannot create the directory: ENOENT/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  // a dangling link as DIR: no directory made, not 'store … is damaged' (DuckDB's COPY failing)
  const dangling = path.join(dir, 'dangling');
  symlinkSync(path.join(dir, 'nowhere'), dangling);
  const d = await runCli(['export', logs, '--db', path.join(dir, 'e.duckdb'), '--parquet', dangling]);
  assert.equal(d.code, 2, d.stderr);
  assert.match(d.stderr, /^cachelens: --parquet .*dangling: cannot create the directory: EEXIST/);
});

test('an export into a directory this user may not write into is refused in one line naming DIR, not the store', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const work = path.join(dir, 'work');
  mkdirSync(work);
  chmodSync(work, 0o777);
  const closed = path.join(dir, 'closed');
  mkdirSync(closed);
  chmodSync(closed, 0o555);
  // DuckDB's COPY failed there, and the error said `store … is damaged … (delete it, or use --db …)`
  const r = await runCli(['export', logs, '--db', path.join(work, 'e.duckdb'), '--parquet', closed], { asNobody: true });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr.trim(), /^cachelens: --parquet .*closed: cannot write into the directory: EACCES \(choose another DIR\)$/);
  assert.deepEqual(readdirSync(closed), []);
});

test('an export into a directory this user may not read, or over a previous export one of whose tables it may not read, is refused in one line naming it, not an internal error; the directory left as it was', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const before = path.join(dir, 'before');
  assert.equal((await runCli(['export', logs, '--db', ':memory:', '--parquet', before])).code, 0);
  const shut = path.join(dir, 'shut');
  mkdirSync(shut);
  const inner = path.join(dir, 'shut', 'inner');
  mkdirSync(inner);
  const table = path.join(before, 'requests');
  // each failed `internal error: Error: EACCES: permission denied, scandir …` with a stack trace (checkExportDir's readdir);
  // as root the run drops root's power to read anything (asNobody), so the modes bind as for anyone
  const cases: [string, string, number, string][] = [
    [shut, shut, 0o000, `cachelens: --parquet ${shut} cannot be read (permission denied): an export must see what it holds first (make it readable to this user, or choose another DIR)`],
    [shut, shut, 0o311, `cachelens: --parquet ${shut} cannot be read (permission denied): an export must see what it holds first (make it readable to this user, or choose another DIR)`],
    // listed but not searchable: its entries' kinds could not be looked at (notExported's lstat), an internal error with a stack
    [shut, shut, 0o644, `cachelens: --parquet ${shut} cannot be read (permission denied): an export must see what it holds first (make it readable to this user, or choose another DIR)`],
    [before, before, 0o644, `cachelens: --parquet ${before} cannot be read (permission denied): an export must see what it holds first (make it readable to this user, or choose another DIR)`],
    // below a directory this user may not search: it said `cannot create the directory: EACCES`, of a directory that is there
    [inner, shut, 0o000, `cachelens: --parquet ${inner} cannot be read (permission denied): ${shut} cannot be searched (make it searchable to this user, or choose another DIR)`],
    [before, table, 0o000, `cachelens: --parquet ${before}: ${table} cannot be read (permission denied): an export must see what it holds first (make it readable to this user, or choose another DIR)`],
  ];
  for (const [out, locked, mode, line] of cases) {
    const was = treeHash(out).entries;
    chmodSync(locked, mode);
    try {
      const r = await runCli(['export', logs, '--db', ':memory:', '--parquet', out], { asNobody: true });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `${line}\n`);
    } finally {
      chmodSync(locked, 0o755);
    }
    assert.deepEqual(treeHash(out).entries, was, `${out}: left as it was`);
  }
});

test('a store held by another process is refused in one line naming that process', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const db = path.join(dir, 's.duckdb');
  await summary([logs], db);
  const holder = await hold(db);
  try {
    // (a `summary` would be answered from the answers the first run kept, without the store)
    assertStoreError(await runCli(['sessions', logs, '--db', db, '--json']), db, new RegExp(`in use by another process \\(pid ${holder.pid}\\)`));
  } finally {
    holder.stdin!.end();
    await new Promise((r) => holder.on('exit', r));
  }
  assert.deepEqual(tokens((await summary([logs], db)).totals), EXPECTED, 'once released, the store is intact');
});

test('two processes racing to create the same new store both answer, as a store of their own would, and leave a valid store', async (t) => {
  // The per-attempt check of the file an open would make and the wait's bound are unit-tested; here two real
  // processes (the built CLI) race to make one store: one makes it while the other waits for its lock, then opens
  // the store made meanwhile, which is not its to remove or to rebuild.
  // What this does and does not guarantee: both processes are spawned at once, but nothing here forces their opens
  // to overlap (on a loaded machine one may be done before the other reaches the store). Whatever the interleaving,
  // each must answer exactly (or, not waiting, say the store is in use) and leave a valid store. Overlap shows as an
  // "in use" answer of a run not waiting: the count is given as a diagnostic (node --test prints it), not required.
  const dir = tempDir();
  t.after(() => removeDir(dir));
  // real transcripts (read in place); a small set (0.35 MB: each run ~1 s, most of it the start of node and DuckDB): with
  // marot-spotter (9 MB) and every pairing twice, this test took ~3 minutes
  const logs = path.join(realLogs, 'condense-chat-minmax-bench');
  const want = await runCli(['summary', logs, '--db', ':memory:', '--json']);
  const wantSessions = await runCli(['sessions', logs, '--db', ':memory:', '--json']);
  assert.equal(want.code, 0, want.stderr);
  assert.equal(wantSessions.code, 0, wantSessions.stderr);
  // each command first and second, and one against itself
  const pairs = [
    ['summary', 'summary'],
    ['summary', 'sessions'],
    ['sessions', 'summary'],
  ];
  let inUse = 0;
  // waiting for the lock as a user's run does (CACHELENS_LOCK_WAIT unset: 10 s; more here, for a loaded machine), and not
  // waiting (0: the fault suite's setting), where the one that finds the store held may say so instead
  const runs = pairs.flatMap((pair) => [{ pair, wait: '60' }, { pair, wait: '0' }]);
  for (const [i, { pair, wait }] of runs.entries()) {
    const db = path.join(dir, `race-${i}`, 's.duckdb');
    mkdirSync(path.dirname(db));
    const ran = await Promise.all(pair.map((c) => runCli([c, logs, '--db', db, '--json'], { env: { CACHELENS_LOCK_WAIT: wait } })));
    for (const [k, r] of ran.entries()) {
      const expected = pair[k] === 'summary' ? want.stdout : wantSessions.stdout;
      if (r.code === 0 || wait !== '0') {
        assert.equal(r.code, 0, `${pair.join(' & ')}, waiting: ${r.stderr}`);
        assert.equal(r.stdout, expected, `${pair.join(' & ')}: ${pair[k]} answers as a store of its own would`);
        assert.equal(r.stderr, '', `${pair.join(' & ')}: nothing said`);
      } else {
        // the only other outcome allowed: one clear line, the store in use
        assertStoreError(r, db, /is in use by another process/);
        inUse++;
      }
    }
    assert.ok(ran.some((r) => r.code === 0), `${pair.join(' & ')}: one of them answered`);
    // the store left is valid: a later run reads nothing again and answers the same, a rebuild too (the last store's)
    for (const extra of i === runs.length - 1 ? [[], ['--rebuild']] : [[]]) {
      const again = await runCli(['sessions', logs, '--db', db, '--json', ...extra]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, wantSessions.stdout, `${pair.join(' & ')} ${extra.join(' ')}: the store left is valid`);
    }
    assert.equal((await summary([logs], db)).ran.stdout, want.stdout);
  }
  t.diagnostic(`runs not waiting that found the store in use (the two overlapped): ${inUse} of ${pairs.length} races`);
});

test('two summaries at once over logs changed since the store was written (appended, rewritten, gone) both answer as a fresh store, and leave it whole', async (t) => {
  // Both are spawned at once and wait for each other's lock; nothing forces them to overlap (see the test above):
  // whichever order they take the store in, each must answer as a fresh store, and the store left must be whole.
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  cpSync(path.join(realLogs, 'condense-chat-minmax-bench'), logs, { recursive: true });
  const files = readdirSync(logs, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl')).sort().map((f) => path.join(logs, f));
  for (const f of files) chmodSync(f, 0o644);
  const whole = readFileSync(files[0]!);
  writeFileSync(files[0]!, whole.subarray(0, whole.lastIndexOf(0x0a, whole.length / 2) + 1));
  const db = path.join(dir, 's.duckdb');
  await summary([logs], db);
  writeFileSync(files[0]!, whole); // appended
  rmSync(files[1]!); // gone
  const third = readFileSync(files[2]!);
  writeFileSync(files[2]!, Buffer.concat([Buffer.from(' '), third.subarray(1)])); // rewritten
  const want = await runCli(['summary', logs, '--db', ':memory:', '--json']);
  assert.equal(want.code, 0, want.stderr);
  // each waits for the other's lock as a user's run does (10 s unless CACHELENS_LOCK_WAIT says otherwise; more here)
  const ran = await Promise.all([0, 1].map(() => runCli(['summary', logs, '--db', db, '--json'], { env: { CACHELENS_LOCK_WAIT: '60' } })));
  for (const r of ran) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, want.stdout);
    assert.equal(r.stderr, '');
  }
  const anatomy = await runCli(['anatomy', logs, '--db', db, '--json']);
  const fresh = await runCli(['anatomy', logs, '--db', ':memory:', '--json']);
  assert.equal(anatomy.code, 0, anatomy.stderr);
  assert.equal(anatomy.stdout, fresh.stdout, 'the store left is whole');
});

test('an ingest over changed logs killed (SIGKILL) at each of its points on the store leaves a store the next run brings up to date: every command answers as a fresh store', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  // a small real set (0.35 MB, five logs): with marot-spotter (9 MB) beside it this test took ~2 minutes
  cpSync(path.join(realLogs, 'condense-chat-minmax-bench'), path.join(logs, 'c'), { recursive: true });
  const files = readdirSync(logs, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl')).sort().map((f) => path.join(logs, f));
  for (const f of files) chmodSync(f, 0o644);
  const whole = readFileSync(files[0]!);
  writeFileSync(files[0]!, whole.subarray(0, whole.lastIndexOf(0x0a, whole.length / 2) + 1));
  const base = path.join(dir, 'base', 's.duckdb');
  mkdirSync(path.dirname(base));
  await summary([logs], base);
  writeFileSync(files[0]!, whole); // appended
  rmSync(files[1]!); // gone
  const third = readFileSync(files[2]!);
  writeFileSync(files[2]!, Buffer.concat([Buffer.from(' '), third.subarray(1)])); // rewritten
  const fresh = new Map<string, string>();
  for (const c of ['summary', 'anatomy']) {
    const r = await runCli([c, logs, '--db', ':memory:', '--json']);
    assert.equal(r.code, 0, r.stderr);
    fresh.set(c, r.stdout);
  }
  // The run's transactions, in order (traced): #1 the schema check at the open, which writes nothing to a store of
  // this build (not a point here); #2 the facts'; #3 the derive's requests (committed before the chains are derived);
  // #4 the derive's chains and the meta that says the derive is done. Killed at the start of the facts' transaction,
  // inside it (files deleted, results forgotten), at its commit, at the commit of the derive's requests, inside the
  // derive's chains (its meta written), and at the derive's last commit.
  const points: [string, number, string][] = [
    ['BEGIN TRANSACTION', 2, "the facts' transaction begins"],
    ['DELETE FROM files', 1, "files deleted in the facts' transaction"],
    ['DELETE FROM results', 1, "results forgotten in the facts' transaction"],
    ['COMMIT', 2, "the facts' commit"],
    ['COMMIT', 3, "the derive's requests' commit"],
    ['INSERT OR REPLACE INTO meta', 3, "the derive's meta, before its last commit"],
    ['COMMIT', 4, "the derive's last commit"],
  ];
  for (const [i, [sql, nth, where]] of points.entries()) {
    const db = path.join(dir, `k${i}`, 's.duckdb');
    cpSync(path.dirname(base), path.dirname(db), { recursive: true });
    const killed = await runCli(['summary', logs, '--db', db, '--json'], { killAtSql: { sql, nth } });
    assert.equal(killed.signal, 'SIGKILL', `${where} (${sql} #${nth}): killed there (${killed.stderr})`);
    for (const [c, want] of fresh) {
      const r = await runCli([c, logs, '--db', db, '--json']);
      assert.equal(r.code, 0, `${where}, then ${c}: ${r.stderr}`);
      assert.equal(r.stdout, want, `${where}, then ${c}: as a fresh store`);
    }
  }
});

test('another program\'s DuckDB file given as --db is refused and left exactly as it was', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const foreign = path.join(dir, 'theirs', 'analytics.duckdb');
  mkdirSync(path.dirname(foreign));
  assert.equal(await runSql(foreign, 'CREATE TABLE sales (id INTEGER, amount DOUBLE); INSERT INTO sales VALUES (1, 9.5)'), 0);
  const before = treeHash(path.dirname(foreign));
  assertStoreError(await runCli(['summary', logs, '--db', foreign]), foreign, /is a DuckDB file but not a cachelens store/);
  assertStoreError(await runCli(['summary', logs, '--db', foreign, '--rebuild']), foreign, /is a DuckDB file but not a cachelens store/);
  assert.deepEqual(treeHash(path.dirname(foreign)).entries, before.entries);
});

test('a store whose directory cannot be created is refused in one line', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const closed = path.join(dir, 'closed');
  mkdirSync(closed);
  // as root, permissions only bind the unprivileged user the run switches to (see helpers.runCli)
  chmodSync(closed, 0o555);
  // the default store's, which cachelens makes (a --db in a directory not there is refused before it: no directory …)
  const db = path.join(closed, 'cachelens', 'store.duckdb');
  assertStoreError(await runCli(['summary', logs], { asNobody: true, env: { XDG_CACHE_HOME: closed } }), db, /cannot create the directory of store .*: EACCES/);
  // a file, or a link that leads nowhere, on the way: it said `cannot create the directory of store …: EEXIST`
  const file = path.join(dir, 'notes.txt');
  writeFileSync(file, 'mine\n');
  const dangling = path.join(dir, 'dangling');
  symlinkSync(path.join(dir, 'nowhere'), dangling);
  for (const [at, what] of [[file, 'a file'], [dangling, 'a link that leads nowhere']] as const) {
    const under = path.join(at, 'sub', 's.duckdb');
    const r = await runCli(['summary', logs, '--db', under]);
    assertStoreError(r, under, /: /);
    assert.equal(r.stderr, what === 'a file'
      ? `cachelens: cannot create the directory of store ${under}: ${at} is ${what}, not a directory (use --db to choose another store)\n`
      : `cachelens: --db ${under}: ${at} is ${what}, not a directory (create what it leads to first, or choose another PATH)\n`);
  }
  assert.equal(readFileSync(file, 'utf8'), 'mine\n');
});

test('a store below a directory this user may not search is refused in one line naming that directory, not as one whose directory cannot be created', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const shut = path.join(dir, 'shut');
  const db = path.join(shut, 'inner', 's.duckdb');
  mkdirSync(path.dirname(db), { recursive: true }); // cachelens makes no directory for --db
  await summary([logs], db);
  chmodSync(shut, 0o000);
  try {
    // it said `cannot create the directory of store …: EACCES`, of a directory that is there (as root the run drops root's
    // power to read anything: asNobody, so mode 000 binds as for anyone)
    const r = await runCli(['summary', logs, '--db', db], { asNobody: true });
    assertStoreError(r, db, /: /);
    assert.equal(r.stderr, `cachelens: cannot open store ${db}: ${shut} cannot be searched (permission denied) (make it searchable to this user, or use --db to choose another store)\n`);
  } finally {
    chmodSync(shut, 0o755);
  }
});

test('a store whose own directory this user may not search (mode 000 or 600), the store in it or not there yet, is refused in one line naming that directory; nothing is said to be left of a store not there', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const shut = path.join(dir, 'q', 'shut');
  mkdirSync(shut, { recursive: true });
  const there = path.join(shut, 's.duckdb');
  await summary([logs], there);
  // it said `cannot open store …: IO Error: Cannot open file "…": Permission denied (it is left as it is; choose another --db path)`,
  // naming neither the directory nor the way out, of a store not there too
  for (const mode of [0o000, 0o600]) {
    for (const db of [there, path.join(shut, 'new.duckdb')]) {
      chmodSync(shut, mode);
      try {
        const r = await runCli(['summary', logs, '--db', db], { asNobody: true });
        assertStoreError(r, db, /: /);
        assert.equal(r.stderr, `cachelens: cannot open store ${db}: ${shut} cannot be searched (permission denied) (make it searchable to this user, or use --db to choose another store)\n`, `${mode.toString(8)} ${db}`);
      } finally {
        chmodSync(shut, 0o755);
      }
    }
  }
  assert.ok(!existsSync(path.join(shut, 'new.duckdb')), 'no store was made');
  // a store DuckDB cannot make (its directory listed and searched but not written, mode 555): it said DuckDB's own
  // `cannot open store …: IO Error: Cannot open file "…": Permission denied (choose another --db path)`, naming no directory;
  // one line naming the directory and the way out, nothing left behind, for every command that opens the store
  const fresh = path.join(shut, 'new.duckdb');
  chmodSync(shut, 0o555);
  try {
    const before = readdirSync(shut).sort();
    for (const args of [['summary', logs], ['sessions', logs, '--json'], ['query', 'cost_by', logs]]) {
      const r = await runCli([...args, '--db', fresh], { asNobody: true });
      assertStoreError(r, fresh, /: /);
      assert.equal(r.stderr, `cachelens: cannot create store ${fresh}: its directory ${shut} is not writable by this user (use --db to choose a store in a directory you may write)\n`, args[0]);
      assert.deepEqual(readdirSync(shut).sort(), before, 'nothing left behind');
    }
  } finally {
    chmodSync(shut, 0o755);
  }
});

test('a store through a link, below a directory this user may not search where the link leads, names that directory, not the link\'s', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  // home/u/teamlink -> ../../shares/team/x, shares/team mode 000: it said `home/u cannot be searched`, which can be
  const team = path.join(dir, 'shares', 'team');
  mkdirSync(path.join(team, 'x'), { recursive: true });
  mkdirSync(path.join(dir, 'home', 'u'), { recursive: true });
  const link = path.join(dir, 'home', 'u', 'teamlink');
  symlinkSync('../../shares/team/x', link);
  const db = path.join(link, 's.duckdb');
  chmodSync(team, 0o000);
  try {
    const r = await runCli(['summary', logs, '--db', db], { asNobody: true });
    assertStoreError(r, db, /: /);
    assert.equal(r.stderr, `cachelens: cannot open store ${db}: ${team} cannot be searched (permission denied) (make it searchable to this user, or use --db to choose another store)\n`);
  } finally {
    chmodSync(team, 0o755);
  }
});

test('a full disk (DuckDB: No space left on device) at a commit or at a new store\'s creation is one line naming the store and the way out, not an internal error or a damaged store; nothing half-made is left, and the next run answers exactly', async (t) => {
  // A full disk cannot be made in a test without mounting one: DuckDB's failure is stubbed (test/faults/preload/kill-at-sql.mjs)
  // with DuckDB's words for it, as a 64 KiB and a 4 KiB tmpfs gave them. The commit's failed `internal error: Error:
  // TransactionContext Error: Failed to commit: …`; the creation's was refused as `IO Error: …` and left a file cut short, which
  // the next run, with room again, refused: `cannot open store …: IO Error: Could not read enough bytes from file`.
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const hint = '(free some space, or use --db to choose another store)';
  for (const nth of [1, 2]) {
    const db = path.join(dir, `commit-${nth}.duckdb`);
    const message = `TransactionContext Error: Failed to commit: Could not write file "${db}.wal": No space left on device`;
    const r = await runCli(['summary', logs, '--db', db], { killAtSql: { sql: 'COMMIT', nth }, env: { KILL_AT_SQL_THROW: '1', KILL_AT_SQL_MESSAGE: message } });
    assertStoreError(r, db, /: /);
    assert.equal(r.stderr, `cachelens: store ${db} could not be written: no space left on the device (${message}) ${hint}\n`, `COMMIT ${nth}`);
    assert.deepEqual(tokens((await summary([logs], db)).totals), EXPECTED, `COMMIT ${nth}: the next run`);
  }
  const db = path.join(dir, 'new.duckdb');
  const r = await runCli(['summary', logs, '--db', db], { openNoSpace: true });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr, `cachelens: store ${db} could not be written: no space left on the device (IO Error: Could not write file "${db}": No space left on device) ${hint}\n`);
  assert.ok(!existsSync(db), 'the store this run began is not left cut short');
  assert.deepEqual(tokens((await summary([logs], db)).totals), EXPECTED, 'the next run');
  // a new store through a link of the user's (links/store.duckdb -> a file not there yet, as on a tiny tmpfs): the link
  // was removed (existsSync read it as nothing there, rmSync took the link) and the target cut short left
  const links = path.join(dir, 'links');
  const target = path.join(dir, 'small', 'store.duckdb');
  mkdirSync(links);
  mkdirSync(path.dirname(target));
  const link = path.join(links, 'store.duckdb');
  symlinkSync(target, link);
  const l = await runCli(['summary', logs, '--db', link], { openNoSpace: true });
  assert.equal(l.code, 2, l.stderr);
  assert.match(l.stderr, /no space left on the device/);
  assert.ok(lstatSync(link).isSymbolicLink(), 'the user\'s link is kept');
  assert.ok(!existsSync(target), 'the store this run began through the link is not left cut short');
  assert.deepEqual(tokens((await summary([logs], link)).totals), EXPECTED, 'the next run, through the link');
  assert.ok(lstatSync(link).isSymbolicLink() && statSync(target).isFile(), 'the store is the link\'s target');
  // a file there already, or one past DuckDB's headers that another process made meanwhile, is not this run's to remove
  const theirs = path.join(dir, 'theirs.duckdb');
  writeFileSync(theirs, Buffer.alloc(20_000));
  assert.equal(removeCutShort(theirs, null), false);
  assert.ok(existsSync(theirs));
  assert.equal(fileToMake(theirs), null, 'a file there is not one to make');
  assert.equal(fileToMake(link), null, 'a link to a file there is not one to make');
  // an export's disk full is its DIR's, not the store's: the file DuckDB names is said, not the store
  const out = path.join(dir, 'out');
  const full = `IO Error: Could not write file "${out}/requests.1.tmp/day=2025-03-01/data_0.parquet": No space left on device`;
  const e = await runCli(['export', logs, '--db', db, '--parquet', out], { killAtSql: { sql: 'COPY (', nth: 1 }, env: { KILL_AT_SQL_THROW: '1', KILL_AT_SQL_MESSAGE: full } });
  assert.equal(e.code, 2, e.stderr);
  assert.equal(e.stderr, `cachelens: --parquet ${out}: cannot write the export: ${full} (check the directory and the free space)\n`);
});

test('a run killed among the drops of a rebuild (Ctrl-C during --rebuild, or the first run after an upgrade) leaves a store the next run reads exactly', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const answer = async (db: string) => {
    const out: string[] = [];
    for (const command of ['summary', 'anatomy', 'sessions']) {
      const r = await runCli([command, logs, '--db', db, '--json']);
      assert.equal(r.code, 0, `${command} after the killed rebuild: ${r.stderr}`);
      assert.equal(r.stderr, '');
      out.push(r.stdout);
    }
    return out;
  };
  const fresh = await answer(path.join(dir, 'fresh.duckdb'));
  // each DROP was committed on its own: killed before the 4th (agent_links, attachments and
  // chains gone), `anatomy` over the warm store that was left failed with "Table with name chains
  // does not exist"; killed after `meta` went, every run refused the store as another program's
  let killed = 0;
  for (let nth = 1; ; nth++) {
    const db = path.join(dir, `s${nth}.duckdb`);
    assert.equal((await runCli(['summary', logs, '--db', db, '--json'])).code, 0);
    assert.equal((await runCli(['anatomy', logs, '--db', db, '--json'])).code, 0);
    const r = await runCli(['summary', logs, '--db', db, '--json', '--rebuild'], { killAtSql: { sql: 'DROP TABLE', nth } });
    if (r.signal !== 'SIGKILL') break;
    killed++;
    assert.deepEqual(await answer(db), fresh, `killed before DROP ${nth}`);
  }
  assert.ok(killed >= 10, `the rebuild was killed before each of its ${killed} drops`);
});

/** Each table of an export as its files and their hashes (treeHash of the table's directory), absent as null. */
function exportTables(dir: string): Record<string, string[] | null> {
  const out: Record<string, string[] | null> = {};
  for (const t of ['requests', 'chains', 'attachments']) {
    const d = path.join(dir, t);
    out[t] = existsSync(d) ? treeHash(d).entries.filter((e) => !e.startsWith('. ')).map((e) => e.replace(/ mode=\S+ mtime=\S+/, '')) : null;
  }
  return out;
}

test('an export killed at any of its COPYs leaves the previous export whole, never a short or mixed table; the next export tidies after it', { timeout: 240_000 }, async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const db = path.join(dir, 'e.duckdb');
  const out = path.join(dir, 'export');
  const first = await runCli(['export', logs, '--db', db, '--parquet', out]);
  assert.equal(first.code, 0, first.stderr);
  const before = exportTables(out);
  assert.ok(before.requests!.length > 0 && before.chains!.length > 0);
  // the re-export writes other tables (one day), so that a table of it cannot pass for the previous one
  const again = ['export', logs, '--db', db, '--parquet', out, '--since', '2025-03-02'];
  let killed = 0;
  for (const sql of ['COPY (', 'count(DISTINCT day)']) {
    for (let nth = 1; ; nth++) {
      const r = await runCli(again, { killAtSql: { sql, nth } });
      if (r.signal !== 'SIGKILL') {
        assert.equal(r.code, 0, r.stderr);
        assert.notDeepEqual(exportTables(out), before, 'the re-export did change the tables');
        // back to the first export for the next kill point
        assert.equal((await runCli(['export', logs, '--db', db, '--parquet', out])).code, 0);
        break;
      }
      killed++;
      // written in place, the killed run left the new requests beside the previous chains, or a table gone
      assert.deepEqual(exportTables(out), before, `killed before ${sql} ${nth}`);
    }
  }
  assert.ok(killed >= 5, `killed at ${killed} points`);
  // what a killed run left beside the tables (its staged tables) is removed by the next export;
  // a previous table moved aside by a run killed between the swap's two renames is put back first
  const gone = 999_999_999; // no such process (pid_max is at most 2^22)
  cpSync(path.join(out, 'requests'), path.join(out, `requests.${gone}.tmp`), { recursive: true });
  renameSync(path.join(out, 'chains'), path.join(out, `chains.${gone}.old`));
  const stopped = await runCli(['export', logs, '--db', db, '--parquet', out], { killAtSql: { sql: 'COPY (', nth: 1 } });
  assert.equal(stopped.signal, 'SIGKILL');
  assert.deepEqual(exportTables(out), before);
  const last = await runCli(['export', logs, '--db', db, '--parquet', out]);
  assert.equal(last.code, 0, last.stderr);
  assert.deepEqual(readdirSync(out).sort(), ['attachments', 'chains', 'requests']);
  assert.deepEqual(exportTables(out), before);
});

test('Ctrl-C or a kill while a large ingest reads removes the facts it staged beside the store, or in the temp dir for --db :memory:; the run ends as signalled (130, 143)', { timeout: 120_000 }, async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  // past the 32 MB from which an ingest stages its facts (ingest.ts STAGE_BYTES): the sample corpus (1.9 MB) 24 times
  const logs = path.join(dir, 'logs');
  for (let i = 0; i < 24; i++) cpSync(path.join(repoRoot, 'sample-logs/projects'), path.join(logs, `copy${i}`), { recursive: true });
  const filesIn = (d: string) => {
    try {
      return readdirSync(d).length;
    } catch {
      return 0; // gone meanwhile
    }
  };
  // --db :memory: stages in the temp directory (store/writer.ts stagePrefix)
  const tmp = path.join(dir, 'tmp');
  mkdirSync(tmp);
  for (const [signal, db] of [['SIGINT', path.join(dir, 'SIGINT.duckdb')], ['SIGTERM', path.join(dir, 'SIGTERM.duckdb')], ['SIGINT', ':memory:']] as const) {
    const [where, prefix] = db === ':memory:' ? [tmp, 'cachelens-facts-'] : [dir, `${signal}.duckdb.facts-`];
    const staged = () => readdirSync(where).filter((e) => e.startsWith(prefix));
    // stderr no terminal: no progress line, whose handler alone was on before
    const run = spawn(process.execPath, [cliPath, 'summary', logs, '--db', db, '--json'], { env: { ...baseEnv(dir), TMPDIR: tmp }, stdio: 'ignore' });
    let ended: NodeJS.Signals | number | null | undefined;
    const exit = new Promise<void>((resolve) => run.on('exit', (code, sig) => resolve(void (ended = sig ?? code))));
    // signalled once the readers have staged rows
    while (ended === undefined && !staged().some((d) => filesIn(path.join(where, d)) > 0)) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(ended, undefined, 'the run was still at work when its facts were staged');
    run.kill(signal);
    await exit;
    assert.equal(ended, signal, `the run ends by ${signal}`);
    assert.deepEqual(staged(), [], `no staged facts left after ${signal} (--db ${db})`);
    assert.deepEqual(readdirSync(tmp), [], `nothing left in the temp dir after ${signal} (--db ${db})`);
  }
});

function spawnNode(code: string): Promise<number | null> {
  const p = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  return new Promise((resolve) => p.on('exit', (c) => resolve(c)));
}

/** Runs `sql` (statements separated by `;`) on the DuckDB file `db` in a plain client, as a user's own tool would; its exit code. */
function runSql(db: string, sql: string): Promise<number | null> {
  return spawnNode(`const { DuckDBInstance } = await import('@duckdb/node-api');
    const i = await DuckDBInstance.create(${JSON.stringify(db)}); const c = await i.connect();
    await c.run(${JSON.stringify(sql)}); c.closeSync(); i.closeSync();`);
}

/**
 * corpus(dir)'s store, in a directory of its own (dir/store/s.duckdb) so that the directory may be
 * made read-only, without the answers beside it, which would answer a summary without opening it.
 */
async function storeOfItsOwn(dir: string): Promise<{ logs: string; home: string; db: string }> {
  const logs = corpus(dir);
  const home = path.join(dir, 'store');
  mkdirSync(home);
  const db = path.join(home, 's.duckdb');
  await summary([logs], db);
  rmSync(`${db}.answers`, { force: true });
  return { logs, home, db };
}

/** Another process (here a plain DuckDB client, as a user's own tool would be) holding the store open. */
function hold(db: string): Promise<ChildProcess> {
  const code = `const { DuckDBInstance } = await import('@duckdb/node-api');
    const i = await DuckDBInstance.create(${JSON.stringify(db)}); await i.connect();
    process.stdout.write('holding\\n'); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;
  const p = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    p.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('holding')) resolve(p);
    });
    p.on('exit', (c) => reject(new Error(`holder exited with ${c}`)));
  });
}

/** What lies in `dir` (names and bytes): a read-only store's directory must be left exactly so. */
function snapshot(dir: string): string[] {
  return treeHash(dir).entries;
}

test('a read-only store (file mode 0444, or a read-only directory) answers from itself while the logs are unchanged, and from a copy in memory, with one note, once they changed; --rebuild is refused in one line', async (t) => {
  // as root the run drops root's override of file modes (helpers.runCli asNobody): a 0444 file binds as for anyone
  for (const how of ['file', 'directory'] as const) {
    const dir = tempDir();
    t.after(() => removeDir(dir));
    const { logs, home, db } = await storeOfItsOwn(dir);
    if (how === 'file') chmodSync(db, 0o444);
    else chmodSync(home, 0o555);
    const before = snapshot(home);
    // every command but a remembered summary failed: `cannot open store …: Permission denied`
    const warm = await summary([logs], db, { asNobody: true });
    assert.equal(warm.ran.stderr, '', `${how}: nothing said: ${warm.ran.stderr}`);
    assert.deepEqual(tokens(warm.totals), EXPECTED);
    for (const args of [['sessions', '--json'], ['anatomy', '--json'], ['crosstab', '--json']]) {
      const r = await runCli([args[0]!, logs, '--db', db, ...args.slice(1)], { asNobody: true });
      assert.equal(r.code, 0, `${how}: ${args[0]}: ${r.stderr}`);
      assert.equal(r.stderr, '', `${how}: ${args[0]}`);
    }
    const sql = path.join(dir, 'n.sql');
    writeFileSync(sql, 'SELECT count(*)::INTEGER AS n FROM requests');
    const q = await runCli(['query', sql, logs, '--db', db, '--json'], { asNobody: true });
    assert.equal(q.code, 0, q.stderr);
    assert.deepEqual(JSON.parse(q.stdout).rows, [{ n: EXPECTED.requests }]);
    assert.deepEqual(snapshot(home), before, `${how}: nothing written to the store or beside it`);
    // the logs changed: the store would need writing
    appendFileSync(path.join(logs, 'proj/s1.jsonl'), `${assistant({ msg: 'm3', usage: usage(100, 200, 300, 400), t: '2025-03-03T10:00:00.000Z' })}\n`);
    const fresh = await summary([logs], ':memory:');
    for (let run = 0; run < 2; run++) {
      const changed = await summary([logs], db, { asNobody: true });
      const lines = changed.ran.stderr.split('\n').filter(Boolean);
      assert.equal(lines.length, 1, `${how}: one note: ${changed.ran.stderr}`);
      assert.equal(
        lines[0],
        `cachelens: store ${db} is read-only (${how === 'file' ? 'its file' : 'its directory'} is not writable) and the logs changed since it was written: this run answers from a copy of it in memory, which is not kept (make it writable, or use --db to choose another store)`,
      );
      assert.deepEqual(changed.totals, fresh.totals, `${how}: the logs as they are now`);
      assert.deepEqual(snapshot(home), before, `${how}: the store is left as it was`);
    }
    const rebuilt = await runCli(['summary', logs, '--db', db, '--rebuild'], { asNobody: true });
    assertStoreError(rebuilt, db, /is read-only \((its file|its directory) is not writable\): --rebuild cannot replace it \(make it writable, or use --db to choose another store\)$/);
    assert.deepEqual(snapshot(home), before);
    chmodSync(home, 0o755);
  }
});

test('a read-only store with a table of the user\'s whose rows refer to files answers from a copy in memory once the logs changed, as a fresh store, with one note; no internal error', async (t) => {
  // the copy (COPY FROM DATABASE) wrote my_notes before files and failed: "internal error: … Violates foreign key
  // constraint because key "file_id: 1" does not exist in the referenced table"; its tables are now copied in the order they refer
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const { logs, home, db } = await storeOfItsOwn(dir);
  const mk = path.join(dir, 'mk.sql');
  writeFileSync(mk, `CREATE TABLE my_notes (file_id INTEGER REFERENCES files(file_id), note VARCHAR);\nINSERT INTO my_notes SELECT file_id, 'n' FROM files;\n`);
  const made = await runCli(['query', mk, logs, '--db', db]);
  assert.equal(made.code, 0, made.stderr);
  assert.equal((await summary([logs], db)).ran.code, 0);
  chmodSync(db, 0o444);
  const before = snapshot(home);
  // the noted log appended to (its files row written over in the copy), and a new log beside it
  appendFileSync(path.join(logs, 'proj/s1.jsonl'), `${assistant({ msg: 'm3', usage: usage(100, 200, 300, 400), t: '2025-03-03T10:00:00.000Z' })}\n`);
  writeLog(logs, 'proj/s2.jsonl', [user('again'), assistant({ msg: 'm4', usage: usage(5, 6, 7, 8), t: '2025-03-04T10:00:00.000Z' })]);
  const fresh = await summary([logs], ':memory:');
  const changed = await summary([logs], db, { asNobody: true });
  assert.equal(changed.ran.code, 0, changed.ran.stderr);
  const lines = changed.ran.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, changed.ran.stderr);
  assert.match(lines[0]!, /is read-only \(its file is not writable\) and the logs changed since it was written: this run answers from a copy of it in memory/);
  assert.deepEqual(changed.totals, fresh.totals);
  assert.deepEqual(snapshot(home), before, 'the store is left as it was');
  chmodSync(db, 0o644);
});

test('a table of the user\'s whose rows refer to remembered results: query FILE.sql runs over unchanged logs, and a run over changed logs answers as a fresh store, the rows kept', async (t) => {
  // the query command forgets the results before the user's SQL, and forget refused any result referred to:
  // every query was refused, saying the logs had changed since the results were kept
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const { logs, db } = await storeOfItsOwn(dir);
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(db);
  const c = await instance.connect();
  await c.run(`CREATE TABLE my_results (k VARCHAR REFERENCES results(key)); INSERT INTO my_results SELECT min(key) FROM results;`);
  c.closeSync();
  instance.closeSync();
  const sql = path.join(dir, 'n.sql');
  writeFileSync(sql, 'SELECT count(*)::INTEGER AS n FROM my_results');
  for (let run = 0; run < 2; run++) {
    const q = await runCli(['query', sql, logs, '--db', db, '--json']);
    assert.equal(q.code, 0, q.stderr);
    assert.equal(q.stderr, '');
    assert.deepEqual(JSON.parse(q.stdout).rows, [{ n: 1 }]);
  }
  appendFileSync(path.join(logs, 'proj/s1.jsonl'), `${assistant({ msg: 'm3', usage: usage(100, 200, 300, 400), t: '2025-03-03T10:00:00.000Z' })}\n`);
  const fresh = await summary([logs], ':memory:');
  for (let run = 0; run < 2; run++) {
    const changed = await summary([logs], db);
    assert.equal(changed.ran.stderr, '');
    assert.deepEqual(changed.totals, fresh.totals, `run ${run}`);
  }
  const q = await runCli(['query', sql, logs, '--db', db, '--json']);
  assert.deepEqual(JSON.parse(q.stdout).rows, [{ n: 1 }], q.stderr);
});

test('a store a query altered answers again, with one note on stderr; a store of a newer cachelens is refused in one line, and --rebuild replaces it', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const db = path.join(dir, 's.duckdb');
  await summary([logs], db);
  const alter = (sql: string) => runSql(db, sql);
  // every later command failed: `internal error: … Referenced column "model" not found`
  assert.equal(await alter('ALTER TABLE requests DROP COLUMN model'), 0);
  const r = await runCli(['anatomy', logs, '--db', db, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, `cachelens: store ${db}: table requests was altered (no column model); it is made again from the stored facts\n`);
  assert.deepEqual(tokens((await summary([logs], db)).totals), EXPECTED);
  // an older build dropped it and read the logs again, without a word
  assert.equal(await alter(`UPDATE meta SET value = '9999' WHERE key = 'schema_version'`), 0);
  const before = treeHash(dir).entries.filter((e) => !e.startsWith('logs'));
  assertStoreError(await runCli(['anatomy', logs, '--db', db, '--json']), db, /was written by a newer cachelens \(store version 9999; this cachelens writes version \d+\) and is left as it is \(run with --rebuild to replace it with one of this version, or use --db to choose another store\)$/);
  assert.deepEqual(treeHash(dir).entries.filter((e) => !e.startsWith('logs')), before, 'left as it was');
  const rebuilt = await summary([logs], db, { extra: ['--rebuild'] });
  assert.equal(rebuilt.ran.stderr, '');
  assert.deepEqual(tokens(rebuilt.totals), EXPECTED);
});

test('a store whose log file (s.duckdb.wal) this user may not write, left so by a run as root, is read as a read-only store: no internal error, one note once the logs changed, --rebuild refused in one line', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const { logs, home, db } = await storeOfItsOwn(dir);
  assert.ok(existsSync(`${db}.wal`), 'a filled store keeps its log');
  // root's own file, 0644, binds a run that is not root; as root the run drops root's override and
  // stays the owner, so the log is made 0444 for the same effect (helpers.runCli asNobody)
  chmodSync(`${db}.wal`, 0o444);
  const before = snapshot(home);
  const warm = await summary([logs], db, { asNobody: true });
  assert.equal(warm.ran.stderr, '');
  assert.deepEqual(tokens(warm.totals), EXPECTED);
  // a run that must write failed: `internal error: … Failed to commit: Cannot open file "…/s.duckdb.wal": Permission denied`
  appendFileSync(path.join(logs, 'proj/s1.jsonl'), `${assistant({ msg: 'm3', usage: usage(100, 200, 300, 400), t: '2025-03-03T10:00:00.000Z' })}\n`);
  // (`sessions`: a summary would answer the appended lines from its kept answers, without the store)
  const fresh = await runCli(['sessions', logs, '--db', ':memory:', '--json']);
  const changed = await runCli(['sessions', logs, '--db', db, '--json'], { asNobody: true });
  assert.equal(changed.code, 0, changed.stderr);
  assert.equal(
    changed.stderr,
    `cachelens: store ${db} is read-only (its log file is not writable) and the logs changed since it was written: this run answers from a copy of it in memory, which is not kept (make it writable, or use --db to choose another store)\n`,
  );
  assert.deepEqual(JSON.parse(changed.stdout), JSON.parse(fresh.stdout));
  assertStoreError(await runCli(['summary', logs, '--db', db, '--rebuild'], { asNobody: true }), db, /is read-only \(its log file is not writable\): --rebuild cannot replace it/);
  assert.deepEqual(snapshot(home), before, 'the store and its log are left as they were');
});

test('a read-only store that a first run left before its derive (no requests, no chains) is answered from a copy with a note that says so, not that its tables are missing', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const { logs, db } = await storeOfItsOwn(dir);
  // what a run stopped (Ctrl-C, a kill) between its ingest and its first derive leaves
  assert.equal(await runSql(db, "DROP TABLE requests; DROP TABLE chains; DELETE FROM meta WHERE key IN ('derived_for', 'listing_key')"), 0);
  chmodSync(db, 0o444);
  // it said `… and table requests is missing, table chains is missing: this run answers from a copy …`,
  // where the same store writable is derived without a word
  const r = await summary([logs], db, { asNobody: true });
  assert.equal(
    r.ran.stderr,
    `cachelens: store ${db} is read-only (its file is not writable) and a run stopped before it finished writing it: this run answers from a copy of it in memory, which is not kept (make it writable, or use --db to choose another store)\n`,
  );
  assert.deepEqual(tokens(r.totals), EXPECTED);
  chmodSync(db, 0o644);
  const writable = await summary([logs], db);
  assert.equal(writable.ran.stderr, '', 'writable: derived without a word');
  assert.deepEqual(tokens(writable.totals), EXPECTED);
});

test('a view a query put under the name of a store table is dropped by the next command, with one note; no internal error', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = corpus(dir);
  const db = path.join(dir, 's.duckdb');
  await summary([logs], db);
  for (const table of ['chains', 'requests', 'files', 'meta']) {
    const sql = path.join(dir, 'v.sql');
    writeFileSync(sql, `DROP TABLE ${table}; CREATE VIEW ${table} AS SELECT 1 AS x;\n`);
    const q = await runCli(['query', sql, logs, '--db', db]);
    assert.equal(q.code, 0, q.stderr);
    // every later command failed: `internal error: … Existing object chains is of type View, trying to replace with type Table`, --rebuild too
    const r = await runCli(['anatomy', logs, '--db', db, '--json']);
    assert.equal(r.code, 0, `${table}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^cachelens: store .*: ${table} is a view, not the store's table \\(dropped, as the name is the store's\\); (it is made again from the stored facts|the store is rebuilt from the logs)\\n$`));
    const again = await runCli(['sessions', logs, '--db', db, '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stderr, '', `${table}: mended once`);
    assert.deepEqual(tokens((await summary([logs], db)).totals), EXPECTED);
  }
});

test('a read-only store that lost its version, or has a view in place of a table, says what it found in its note, and drops nothing from the file', async (t) => {
  // it said `… and it was written by an older cachelens: …` of one whose version was deleted, and
  // `chains is a view, not the store's table (dropped, as the name is the store's)` of a file left as it was
  const cases: [string, string][] = [
    [
      `DELETE FROM meta WHERE key = 'schema_version'; DROP TABLE spawns; CREATE VIEW spawns AS SELECT 1 AS x`,
      "table meta holds no store version, spawns is a view, not the store's table",
    ],
    [`DROP TABLE chains; CREATE VIEW chains AS SELECT 1 AS x`, "chains is a view, not the store's table"],
  ];
  for (const [damage, what] of cases) {
    const dir = tempDir();
    t.after(() => removeDir(dir));
    const { logs, home, db } = await storeOfItsOwn(dir);
    assert.equal(await runSql(db, damage), 0);
    chmodSync(db, 0o444);
    const before = snapshot(home);
    const r = await summary([logs], db, { asNobody: true });
    assert.equal(
      r.ran.stderr,
      `cachelens: store ${db} is read-only (its file is not writable) and ${what}: this run answers from a copy of it in memory, which is not kept (make it writable, or use --db to choose another store)\n`,
    );
    assert.deepEqual(tokens(r.totals), EXPECTED);
    assert.deepEqual(snapshot(home), before, 'left as it was');
  }
});
