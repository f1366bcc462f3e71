/**
 * Planning from the listing snapshot (ingest/listing-snapshot.ts): a run after a change compares
 * the walk with the snapshot the last whole run kept beside the store, and ends as the same store
 * as a run that compares it with the stored files; where the snapshot does not hold (another
 * listing key, other roots, files of other roots in the store, the store changed by a query of
 * the user's own, a damaged file), the stored files are read as before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs, { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { assistant, usage, user } from '../faults/helpers.js';
import { CONDENSE, MAROT_DOV, corpus, repoRoot, run, runAndDump, tmp } from './helpers.js';
import { Store } from '../../src/store/store.js';

const cli = path.join(repoRoot, 'dist/cli.js');
const lines = (xs: string[]) => xs.map((l) => `${l}\n`).join('');

/** A copy of the store (and its log), without the listing snapshot. */
function copyStore(db: string): string {
  const to = path.join(tmp(), 'copy.duckdb');
  copyFileSync(db, to);
  if (existsSync(db + '.wal')) copyFileSync(db + '.wal', to + '.wal');
  return to;
}

/** Appends a response to one file, adds a new transcript, and deletes another: one of each change. */
function change(root: string, dir: string, gone: string): void {
  appendFileSync(path.join(dir, 'a.jsonl'), lines([assistant({ session: 's1', msg: 'msg_a2', t: '2025-03-01T10:05:00.000Z', usage: usage(3, 4, 50, 600) })]));
  writeFileSync(path.join(dir, 'c.jsonl'), lines([user('new', { session: 's3' }), assistant({ session: 's3', msg: 'msg_c1', usage: usage(7, 8, 90, 1000) })]));
  rmSync(gone);
}

test('an append run plans from the listing snapshot and ends as the same store as one planned from the stored files', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const dir = path.join(root, 'projects', '-work-app');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'a.jsonl'), lines([user('hi'), assistant({ session: 's1', msg: 'msg_a1', usage: usage(1, 2, 30, 400) })]));
  writeFileSync(path.join(dir, 'b.jsonl'), lines([user('hi', { session: 's2' }), assistant({ session: 's2', msg: 'msg_b1', usage: usage(5, 6, 70, 800) })]));
  const db = path.join(tmp(), 's.duckdb');
  const first = await run([root], db);
  assert.equal(first.stats.planned, 'files', 'a first run has no snapshot to plan from');
  first.store.close();
  assert.ok(existsSync(db + '.listing'), 'the run keeps its listing beside the store');
  const other = copyStore(db);

  change(root, dir, path.join(dir, 'b.jsonl'));
  const fromSnapshot = await runAndDump([root], db);
  const fromFiles = await runAndDump([root], other);
  assert.equal(fromSnapshot.stats.planned, 'snapshot');
  assert.equal(fromFiles.stats.planned, 'files');
  const { ms: _a, planned: _b, ...statsS } = fromSnapshot.stats;
  const { ms: _c, planned: _d, ...statsF } = fromFiles.stats;
  assert.deepEqual(statsS, statsF);
  assert.deepEqual({ appended: statsS.appended, read: statsS.read, retired: statsS.retired }, { appended: 1, read: 1, retired: 1 });
  assert.deepEqual(fromSnapshot.dump, fromFiles.dump);
  const rebuilt = await runAndDump([root], path.join(tmp(), 'r.duckdb'));
  assert.deepEqual(fromSnapshot.dump, rebuilt.dump);
  // the file ids too: the plan gave each walked path the id it has in the store
  const ids = async (file: string) => {
    const r = await run([root], file);
    try {
      return await r.store.all(`SELECT path, file_id FROM files ORDER BY path`);
    } finally {
      r.store.close();
    }
  };
  assert.deepEqual(await ids(db), await ids(other));

  // and the next change plans from the snapshot this run kept
  appendFileSync(path.join(dir, 'c.jsonl'), lines([assistant({ session: 's3', msg: 'msg_c2', t: '2025-03-01T10:06:00.000Z', usage: usage(1, 1, 10, 100) })]));
  const next = await runAndDump([root], db);
  assert.equal(next.stats.planned, 'snapshot');
  assert.equal(next.stats.appended, 1);
  assert.deepEqual(next.dump, (await runAndDump([root], path.join(tmp(), 'r2.duckdb'))).dump);
});

test('the snapshot is not used where it may not hold: other roots, files of other roots in the store, a damaged file', async () => {
  const root = tmp('cachelens-logs-');
  const p1 = path.join(root, 'projects', 'one');
  const p2 = path.join(root, 'projects', 'two');
  for (const [d, s] of [
    [p1, 's1'],
    [p2, 's2'],
  ]) {
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, 'a.jsonl'), lines([user('hi', { session: s }), assistant({ session: s, msg: `msg_${s}`, usage: usage(1, 2, 30, 400) })]));
  }
  const grow = (d: string, msg: string) => appendFileSync(path.join(d, 'a.jsonl'), lines([assistant({ session: d === p1 ? 's1' : 's2', msg, t: '2025-03-01T10:05:00.000Z', usage: usage(2, 3, 4, 5) })]));
  const db = path.join(tmp(), 's.duckdb');
  const planned = async (paths: string[]) => {
    const r = await run(paths, db);
    r.store.close();
    return r.stats.planned;
  };
  assert.equal(await planned([p1]), 'files');
  grow(p1, 'msg_g1');
  assert.equal(await planned([p1]), 'snapshot', 'the same roots, the store as the last run left it');
  grow(p1, 'msg_g2');
  assert.equal(await planned([root]), 'files', 'other roots than the snapshot\'s');
  grow(p2, 'msg_g3');
  assert.equal(await planned([root]), 'snapshot');
  // a run over one of them leaves the other's files in the store: the snapshot of `p2` alone does
  // not hold every stored file
  grow(p2, 'msg_g4');
  assert.equal(await planned([p2]), 'files');
  grow(p2, 'msg_g5');
  assert.equal(await planned([p2]), 'files', 'the store holds files the snapshot does not');
  assert.equal(await planned([root]), 'files');
  grow(p1, 'msg_g6');
  assert.equal(await planned([root]), 'snapshot');
  // a damaged snapshot, or another store's, is not read as this one's
  const elsewhere = path.join(tmp(), 'e.duckdb');
  (await run([root], elsewhere)).store.close();
  grow(p1, 'msg_g7');
  writeFileSync(db + '.listing', 'garbage');
  assert.equal(await planned([root]), 'files');
  grow(p1, 'msg_g8');
  copyFileSync(elsewhere + '.listing', db + '.listing');
  assert.equal(await planned([root]), 'files', 'another store\'s snapshot carries another listing key');
  // only what the changed files touch is derived again while the scope is the last one but for
  // them; all of it when an unchanged file leaves the scope or enters it
  const derived = async (paths: string[]) => {
    const r = await run(paths, db);
    r.store.close();
    return r.stats.derived;
  };
  grow(p2, 'msg_g9');
  assert.equal(await derived([root]), 'touched');
  grow(p2, 'msg_g10');
  assert.equal(await derived([p2]), 'all', "p1's file left the scope unchanged");
  grow(p2, 'msg_g11');
  assert.equal(await derived([p2]), 'touched');
  assert.equal(await derived([root]), 'all', "p1's file came back unchanged");
  // every answer the same as a rebuild's
  const incremental = await runAndDump([root], db);
  assert.deepEqual(incremental.dump, (await runAndDump([root], path.join(tmp(), 'r.duckdb'))).dump);
});

test('CLI: after a query of the user\'s own, the next run compares the walk with the stored files, not the snapshot', () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const cachelens = (args: string[]) => {
    const r = spawnSync(process.execPath, [cli, ...args, root, '--db', db], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    assert.equal(r.status, 0, r.stderr);
    return r;
  };
  const dir = path.join(root, 'projects', '-app');
  mkdirSync(dir, { recursive: true });
  const grow = (msg: string) => appendFileSync(path.join(dir, 'x.jsonl'), lines([assistant({ session: 'sx', msg, usage: usage(1, 2, 3, 4) })]));
  grow('msg_x1');
  cachelens(['summary', '--json']);
  const sql = path.join(tmp(), 'mine.sql');
  writeFileSync(sql, `SELECT count(*) AS n FROM files`);
  cachelens(['query', sql, '--json']);
  grow('msg_x2');
  return run([root], db).then((r) => {
    r.store.close();
    assert.equal(r.stats.planned, 'files');
    assert.equal(r.stats.appended, 1);
  });
});

test('a snapshot that cannot be written (a full disk) leaves no part of it beside the store', async () => {
  const dir = tmp();
  const store = await Store.open(path.join(dir, 's.duckdb'));
  const write = fs.writeFileSync;
  try {
    fs.writeFileSync = ((file: fs.PathOrFileDescriptor, data: string | NodeJS.ArrayBufferView) => {
      if (String(file).endsWith('.listing.tmp')) {
        write(file, (data as Uint8Array).subarray(0, 1));
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      write(file, data);
    }) as typeof fs.writeFileSync;
    syncBuiltinESMExports();
    store.keepListingSnapshot(new Uint8Array([1, 2, 3, 4]));
  } finally {
    fs.writeFileSync = write;
    syncBuiltinESMExports();
    store.close();
  }
  assert.deepEqual(readdirSync(dir).filter((e) => e.includes('.listing')), []);
});
