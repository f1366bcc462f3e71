/**
 * Store.boundedMemory: DuckDB's memory bounded while a command's queries run, its bound of before
 * after; run again without the bound when DuckDB runs out of memory within it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../src/store/store.js';
import { CONDENSE, CONDENSE_61, corpus, run, tmp } from './helpers.js';

const limit = async (store: Store) => String((await store.all(`SELECT current_setting('memory_limit') AS limit`))[0].limit);

/** A sort that needs more than 16 MB: it runs out of memory within such a bound. */
const BIG_SORT = `SELECT count(*)::INTEGER AS n FROM (SELECT i, md5(i::VARCHAR) AS h FROM range(3000000) t(i) ORDER BY h)`;

/** DuckDB's buffer pool is unbounded again: what ran out within the bound runs. */
async function assertUnbounded(store: Store) {
  assert.deepEqual(await store.all(BIG_SORT), [{ n: 3_000_000 }]);
}

test('boundedMemory: the work runs within the bound, and DuckDB is unbounded again afterwards, also when the work fails', async () => {
  const store = await Store.open(path.join(tmp(), 's.duckdb'));
  try {
    const seen: string[] = [];
    assert.equal(await store.boundedMemory(async () => (seen.push(await limit(store)), 42), { mb: 16 }), 42);
    assert.deepEqual(seen, ['15.2 MiB']);
    await assertUnbounded(store);
    await assert.rejects(
      store.boundedMemory(async () => {
        throw new Error('not a memory error');
      }),
      /not a memory error/,
    );
    await assertUnbounded(store);

  } finally {
    store.close();
  }
});

test('boundedMemory: work that runs out of memory within the bound, or a result that says it did, runs again without it', async () => {
  const store = await Store.open(path.join(tmp(), 's.duckdb'));
  try {
    const before = await limit(store);
    // DuckDB's own error: a sort of more than the bound
    const seen: string[] = [];
    const rows = await store.boundedMemory(
      async () => {
        seen.push(await limit(store));
        return store.all(BIG_SORT);
      },
      { mb: 16 },
    );
    assert.deepEqual(rows, [{ n: 3_000_000 }]);
    assert.equal(seen.length, 2, 'run again');
    assert.equal(seen[0], '15.2 MiB');
    assert.ok(seen[1].endsWith('GiB') && before.endsWith('GiB'), `run again without the bound: ${seen[1]}`);
    // a result that carries the error (a report's section): outOfMemory tells it
    let runs = 0;
    const got = await store.boundedMemory(async () => ++runs, { ranOut: (n, outOfMemory) => n === 1 && outOfMemory(new Error('Out of Memory Error: failed to pin block')) });
    assert.deepEqual([got, runs], [2, 2]);
    await assertUnbounded(store);
  } finally {
    store.close();
  }
});

test('an in-memory store spills into the system temp dir, not a .tmp in the working directory', async () => {
  const store = await Store.open(':memory:');
  try {
    const [{ dir }] = await store.all(`SELECT current_setting('temp_directory') AS dir`);
    assert.ok(String(dir).startsWith(tmpdir()), String(dir));
    // a sort beyond the bound spills there and finishes
    assert.deepEqual(await store.boundedMemory(() => store.all(BIG_SORT), { mb: 64 }), [{ n: 3_000_000 }]);
  } finally {
    store.close();
  }
});

test('an ingest leaves DuckDB unbounded, on its threads of before, whether it read every file, appended, or found nothing to change', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const fresh = await Store.open(path.join(tmp(), 'fresh.duckdb'));
  // the limit as GiB to one place: set back from the text DuckDB reports ('18.8 GiB'), it can come
  // back a rounding lower (18.7), as boundedMemory's comment says
  const gib = (text: unknown) => {
    const [, n, unit] = /^([\d.]+) (KiB|MiB|GiB|TiB)$/.exec(String(text))!;
    return Math.round((Number(n) * 1024 ** ['KiB', 'MiB', 'GiB', 'TiB'].indexOf(unit)) / 1024 ** 2);
  };
  const settings = async (store: Store) => {
    const [{ m, t }] = await store.all(`SELECT current_setting('memory_limit') AS m, current_setting('threads') AS t`);
    return { gib: gib(m), t };
  };
  const before = await settings(fresh);
  fresh.close();
  const after = async (prepare?: (store: Store) => Promise<void>) => {
    if (prepare) {
      const s = await Store.open(db);
      await prepare(s);
      s.close();
    }
    const r = await run([root], db);
    try {
      await assertUnbounded(r.store);
      return { derived: r.stats.derived, planned: r.stats.planned, ...(await settings(r.store)) };
    } finally {
      r.store.close();
    }
  };
  // the first run reads a transcript without its last lines, the second its last lines only
  const file = path.join(root, CONDENSE_61);
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  writeFileSync(file, lines.slice(0, -3).join('\n') + '\n');
  assert.deepEqual(await after(), { derived: 'all', planned: 'files', ...before });
  appendFileSync(file, lines.slice(-3).join('\n') + '\n');
  assert.deepEqual(await after(), { derived: 'touched', planned: 'snapshot', ...before });
  assert.deepEqual(await after(), { derived: 'none', planned: 'none', ...before }, 'a warm run');
  // the listing key forgotten: planned again, nothing to change, the derived tables already right
  assert.deepEqual(await after((s) => s.setMeta('listing_key', '')), { derived: 'none', planned: 'files', ...before });
});

test('what an in-memory run ended while it spilled left in the temp dir is removed when the next one opens; a running one\'s is not', async () => {
  // DuckDB removes its spill directory when the store closes: a `--db :memory:` run stopped by
  // Ctrl-C while it spilled left cachelens-<pid>.tmp, spill files and all, in the temp dir for good
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const stale = path.join(tmpdir(), `cachelens-${gone}.tmp`);
  const running = path.join(tmpdir(), `cachelens-${process.ppid}.tmp`);
  for (const dir of [stale, running]) {
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'duckdb_temp_storage_DEFAULT-0.tmp'), 'spilled');
  }
  try {
    const store = await Store.open(':memory:');
    store.close();
    assert.equal(existsSync(stale), false, 'the directory of a run no longer running is removed');
    assert.equal(existsSync(running), true, 'that of a run still running is its own');
  } finally {
    for (const dir of [stale, running]) rmSync(dir, { recursive: true, force: true });
  }
});

test('what a run ended while it spilled left beside the store (store.duckdb.tmp) is removed when the store is next opened; a directory of other files stays', async () => {
  // DuckDB removes <store>.tmp when the store closes only if it made it: one left by a run stopped
  // by Ctrl-C while it spilled was taken for the user's own, and stayed for good
  const dir = tmp();
  const spilled = path.join(dir, 's.duckdb.tmp');
  mkdirSync(spilled);
  for (const f of ['duckdb_temp_storage_DEFAULT-0.tmp', 'duckdb_temp_storage_S32K-0.tmp', 'duckdb_temp_block-4611686018427388032.block']) writeFileSync(path.join(spilled, f), 'spilled');
  const mine = path.join(dir, 'm.duckdb.tmp');
  mkdirSync(mine);
  writeFileSync(path.join(mine, 'notes.txt'), 'keep me');
  for (const db of ['s.duckdb', 'm.duckdb']) (await Store.open(path.join(dir, db))).close();
  assert.equal(existsSync(spilled), false, 'the spill files of the stopped run are gone');
  assert.equal(readFileSync(path.join(mine, 'notes.txt'), 'utf8'), 'keep me');
});
