/**
 * `cachelens export --parquet DIR` writes requests, chains and attachments partitioned by day; the
 * bundled queries and the cross-tab give the same answers over the export as over the store, and
 * over several exports pooled under one directory.
 */
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crosstab } from '../../src/analyses/crosstab.js';
import { UsageError } from '../../src/errors.js';
import { checkExportDir, exportParquet } from '../../src/store/export.js';
import { MACROS } from '../../src/store/duckdb.js';
import { openParquet, poolViews, usePortableViews } from '../../src/store/portable.js';
import { runQuery } from '../../src/store/queries.js';
import { CONDENSE, CONDENSE_61, corpus, repoRoot, run, tmp } from './helpers.js';
import { runCli, usageError } from '../faults/helpers.js';
import { REAL_LOGS, assistant, cli, writeCorpus } from '../helpers/corpus.js';

const sampleLogs = path.join(repoRoot, 'sample-logs');
const QUERIES = ['cost_by', 'write_read_ratio', 'repurchase', 'attachments_vs_rounds', 'reattachments'];
const params = { tz: 'UTC', all: 'true' };

/** Deep equality where numbers may differ in the last bits (sums taken in another order). */
function assertClose(actual: unknown, expected: unknown, where: string): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${where}: ${actual} vs ${expected}`);
  } else if (expected && typeof expected === 'object' && actual && typeof actual === 'object') {
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), where);
    for (const k of Object.keys(expected)) assertClose((actual as Record<string, unknown>)[k], (expected as Record<string, unknown>)[k], `${where}.${k}`);
  } else assert.deepEqual(actual, expected, where);
}

test('the bundled queries and the cross-tab answer the same over an export as over the store', async () => {
  const dir = path.join(tmp(), 'export');
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    await usePortableViews(r.store);
    const result = await exportParquet(r.store, dir, { timezone: 'UTC', logRoots: [sampleLogs] });
    const [counts] = await r.store.all(`SELECT (SELECT count(*) FROM requests) AS requests, (SELECT count(*) FROM chains) AS chains, (SELECT count(*) FROM attachments) AS attachments`);
    assert.deepEqual(result.tables.map((t) => [t.table, t.rows]), [['requests', counts.requests], ['chains', counts.chains], ['attachments', counts.attachments]]);
    const days = readdirSync(path.join(dir, 'requests')).sort();
    assert.ok(days.length >= 2 && days.every((d) => /^day=\d{4}-\d{2}-\d{2}$/.test(d)), days.join());
    assert.equal(result.tables[0]!.days, days.length);

    const px = await openParquet(dir);
    try {
      for (const q of QUERIES) {
        const want = await runQuery(r.store, q, params);
        assert.ok(want.length > 0, q);
        assertClose(await runQuery(px, q, params), want, q);
      }
      for (const [rows, cols] of [['definition', 'has_skill_listing'], ['day', 'model'], ['agent_type', 'ttl']]) {
        const o = { rows: rows!, cols: cols!, measure: 'usd', timezone: 'UTC' };
        assertClose(await crosstab(px, o), await crosstab(r.store, o), `${rows} × ${cols}`);
      }
    } finally {
      px.close();
    }
  } finally {
    r.store.close();
  }
});

test('exports pooled under one directory add up; re-exporting replaces, never duplicates', () => {
  const cli = path.join(repoRoot, 'dist/cli.js');
  const env = { ...process.env, NO_COLOR: '1' };
  const pool = tmp('cachelens-pool-');
  const condense = corpus([CONDENSE]);
  const a = spawnSync(process.execPath, [cli, 'export', sampleLogs, '--db', path.join(tmp(), 'a.duckdb'), '--parquet', path.join(pool, 'alice'), '--json'], { encoding: 'utf8', env });
  assert.equal(a.status, 0, a.stderr);
  const bArgs = [cli, 'export', condense, '--db', path.join(tmp(), 'b.duckdb'), '--parquet', path.join(pool, 'bob'), '--json'];
  assert.equal(spawnSync(process.execPath, bArgs, { encoding: 'utf8', env }).status, 0);
  const b = spawnSync(process.execPath, bArgs, { encoding: 'utf8', env });
  assert.equal(b.status, 0, b.stderr);
  const rows = (out: string, t: string) => (JSON.parse(out) as { tables: { table: string; rows: number }[] }).tables.find((x) => x.table === t)!.rows;

  const q = spawnSync(process.execPath, [cli, 'query', 'cost_by', '--parquet', pool, '--param', 'by=project', '--json'], { encoding: 'utf8', env });
  assert.equal(q.status, 0, q.stderr);
  const got = (JSON.parse(q.stdout) as { rows: { requests: number }[] }).rows.reduce((s, x) => s + x.requests, 0);
  assert.equal(got, rows(a.stdout, 'requests') + rows(b.stdout, 'requests'));
  const x = spawnSync(process.execPath, [cli, 'crosstab', '--parquet', pool, '--rows', 'project', '--cols', 'definition', '--json'], { encoding: 'utf8', env });
  assert.equal(x.status, 0, x.stderr);
  const total = (JSON.parse(x.stdout) as { cells: { row: unknown; col: unknown; value: number }[] }).cells.find((c) => c.row === null && c.col === null)!.value;
  assert.equal(total, rows(a.stdout, 'chains') + rows(b.stdout, 'chains'));
});

test('an export into the logs, or into a directory holding other files, is refused', async () => {
  const logs = corpus([CONDENSE]);
  const r = await run([logs], path.join(tmp(), 's.duckdb'));
  try {
    await usePortableViews(r.store);
    await assert.rejects(exportParquet(r.store, path.join(logs, 'out'), { timezone: 'UTC', logRoots: [logs] }), (e) => e instanceof UsageError && /inside the logs/.test(e.message));
    assert.ok(!existsSync(path.join(logs, 'out')));
    const busy = tmp();
    mkdirSync(path.join(busy, 'mine'));
    writeFileSync(path.join(busy, 'notes.txt'), 'keep me');
    await assert.rejects(exportParquet(r.store, busy, { timezone: 'UTC', logRoots: [logs] }), (e) => e instanceof UsageError && /holds other files/.test(e.message));
    assert.deepEqual(readdirSync(busy).sort(), ['mine', 'notes.txt']);
  } finally {
    r.store.close();
  }
});

test('--since/--until/--project choose what is exported: the same answers as the store filtered alike', async () => {
  const dir = path.join(tmp(), 'export');
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    await usePortableViews(r.store);
    const filters = { tz: 'Asia/Tokyo', since: null, until: '2026-02-11', project: 'SHOP' };
    const result = await exportParquet(r.store, dir, { timezone: 'Asia/Tokyo', since: filters.since, until: filters.until, project: filters.project, logRoots: [sampleLogs] });
    const [all] = await r.store.all(`SELECT count(*) AS n FROM requests`);
    const requests = result.tables.find((t) => t.table === 'requests')!.rows;
    assert.ok(requests > 0 && requests < (all.n as number), `${requests} of ${all.n}`);
    assert.deepEqual(readdirSync(path.join(dir, 'requests')).sort(), ['day=2026-02-10', 'day=2026-02-11']);
    const px = await openParquet(dir);
    try {
      for (const by of ['day', 'agent_type', 'project']) {
        const want = await runQuery(r.store, 'cost_by', { ...filters, by });
        assertClose(await runQuery(px, 'cost_by', { tz: 'Asia/Tokyo', by }), want, `cost_by ${by}`);
      }
      const [orphans] = await px.all(`SELECT count(*) AS n FROM requests WHERE chain_id NOT IN (SELECT chain_id FROM chains)`);
      assert.equal(orphans.n, 0);
    } finally {
      px.close();
    }
    const none = await exportParquet(r.store, dir, { timezone: 'UTC', since: '2030-01-01', logRoots: [sampleLogs] });
    assert.deepEqual(none.tables.map((t) => t.rows), [0, 0, 0]);
  } finally {
    r.store.close();
  }
});

test('an export with a table of no rows can be read; a re-export leaves none of the old days behind', async () => {
  const dir = path.join(tmp(), 'export');
  const a = await run([sampleLogs], path.join(tmp(), 'a.duckdb'));
  try {
    await usePortableViews(a.store);
    await exportParquet(a.store, dir, { timezone: 'UTC', logRoots: [sampleLogs] });
  } finally {
    a.store.close();
  }
  // DRMacIver's one transcript has no attachment lines
  const logs = corpus(['DRMacIver-claude-reliability']);
  const b = await run([logs], path.join(tmp(), 'b.duckdb'));
  try {
    await usePortableViews(b.store);
    const result = await exportParquet(b.store, dir, { timezone: 'UTC', logRoots: [logs] });
    assert.equal(result.tables.find((t) => t.table === 'attachments')!.rows, 0);
    const [requests] = await b.store.all(`SELECT count(*) AS n FROM requests`);
    assert.deepEqual(readdirSync(path.join(dir, 'requests')), ['day=2026-01-21']);
    assert.deepEqual(readdirSync(path.join(dir, 'chains')), ['day=2026-01-21']);
    const px = await openParquet(dir);
    try {
      const rows = await runQuery(px, 'cost_by', { tz: 'UTC' });
      assert.equal(rows.reduce((s, x) => s + (x.requests as number), 0), requests.n);
      assert.deepEqual(await px.all(`SELECT * FROM attachments`), []);
      assert.equal((await crosstab(px, { rows: 'definition', cols: 'has_skill_listing', timezone: 'UTC' })).cells.find((c) => c.row === null && c.col === null)!.value, 1);
    } finally {
      px.close();
    }
  } finally {
    b.store.close();
  }
});

test('an empty --parquet (`--parquet=`) is a usage error for export, query and crosstab, not the working directory', async () => {
  // it resolved to the working directory: an export was written into it, or read from it
  for (const args of [['export', sampleLogs, '--db', ':memory:'], ['query', 'cost_by'], ['crosstab']]) {
    await usageError([...args, '--parquet='], /^cachelens: --parquet: expected a directory name$/);
    await usageError([...args, '--parquet', ' '], /^cachelens: --parquet: expected a directory name$/);
  }
});

test('crosstab --parquet over Parquet files that are no cachelens export (other columns) is a usage error, not an internal error', async () => {
  const dir = path.join(tmp(), 'foreign');
  mkdirSync(dir);
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    for (const t of ['requests', 'chains', 'attachments']) {
      await db.run(`COPY (SELECT 'x' AS bar, 1 AS foo, 'x' AS day) TO '${path.join(dir, t)}' (FORMAT parquet, PARTITION_BY (day))`);
    }
  } finally {
    db.closeSync();
    instance.closeSync();
  }
  await usageError(['crosstab', '--parquet', dir], /^cachelens: .*foreign holds no cachelens Parquet export: Binder Error: .* \(make one with cachelens export --parquet DIR\)$/);
  // said when the pool's views are made (they name the key columns), as crosstab says it
  await usageError(['query', 'cost_by', '--parquet', dir], /^cachelens: .*foreign holds no cachelens Parquet export: Binder Error: .* \(make one with cachelens export --parquet DIR\)$/);
});

test('a DIR whose requests, chains or attachments no export wrote (a file, a link, other entries) is refused, not replaced', () => {
  // an export replaces those three whole: a user's file named `chains`, or a `requests/` of their
  // own, was removed without a word
  const cases: [string, (dir: string) => void][] = [
    ['chains', (d) => writeFileSync(path.join(d, 'chains'), 'mine')],
    ['requests', (d) => symlinkSync(tmp(), path.join(d, 'requests'))],
    ['requests/notes.txt', (d) => (mkdirSync(path.join(d, 'requests')), writeFileSync(path.join(d, 'requests/notes.txt'), 'mine'))],
    ['attachments/day=2026-01-01/x.csv', (d) => (mkdirSync(path.join(d, 'attachments/day=2026-01-01'), { recursive: true }), writeFileSync(path.join(d, 'attachments/day=2026-01-01/x.csv'), 'mine'))],
  ];
  for (const [what, make] of cases) {
    const dir = tmp();
    make(dir);
    assert.throws(() => checkExportDir(dir, [sampleLogs]), (e) => e instanceof UsageError && e.message === `--parquet ${dir} holds other files (${what})`, what);
  }
  // a previous export's tables are what an export replaces
  const prev = tmp();
  mkdirSync(path.join(prev, 'requests/day=2026-01-01'), { recursive: true });
  writeFileSync(path.join(prev, 'requests/day=2026-01-01/data_0.parquet'), '');
  mkdirSync(path.join(prev, 'chains/day=none'), { recursive: true });
  assert.equal(checkExportDir(prev, [sampleLogs]), prev);
});

test('query and crosstab --parquet with logs named, or --db, --pricing, --rebuild, are usage errors: those were passed over', async () => {
  // the answer was the export's, the logs named beside it not read, without a word
  const dir = tmp();
  for (const cmd of [['query', 'cost_by'], ['crosstab']]) {
    await usageError([...cmd, sampleLogs, '--parquet', dir], /^cachelens: --parquet .* reads an export, not logs: .*sample-logs is not read \(give the logs or --parquet DIR, not both\)$/);
    await usageError([...cmd, '--parquet', dir, '--db', path.join(dir, 's.duckdb')], /^cachelens: --db has no use with --parquet/);
    await usageError([...cmd, '--parquet', dir, '--pricing', path.join(dir, 'p.json')], /^cachelens: --pricing has no use with --parquet/);
    await usageError([...cmd, '--parquet', dir, '--rebuild'], /^cachelens: --rebuild has no use with --parquet/);
  }
});

test('an export into a Claude Code projects/ directory this run does not read is refused too', () => {
  // `export ./logs --parquet ~/.claude/projects/out` was written into ~/.claude/projects
  const home = tmp();
  const projects = path.join(home, '.claude/projects');
  mkdirSync(path.join(projects, '-home-me-repo'), { recursive: true });
  writeFileSync(path.join(projects, '-home-me-repo/0a0a0a0a-0000-4000-8000-000000000001.jsonl'), '');
  for (const dir of [path.join(projects, 'out'), projects, path.join(projects, '-home-me-repo/x/y')]) {
    assert.throws(() => checkExportDir(dir, [sampleLogs]), (e) => e instanceof UsageError && e.message === `--parquet ${dir} is inside a Claude Code log directory (${projects})`, dir);
  }
  // through a link too
  symlinkSync(projects, path.join(home, 'link'));
  assert.throws(() => checkExportDir(path.join(home, 'link/out'), [sampleLogs]), /inside a Claude Code log directory/);
  // beside it, and a user's own ~/projects, may be written
  assert.equal(checkExportDir(path.join(home, '.claude/out'), [sampleLogs]), path.join(home, '.claude/out'));
  mkdirSync(path.join(home, 'projects/myrepo'), { recursive: true });
  assert.equal(checkExportDir(path.join(home, 'projects/exports'), [sampleLogs]), path.join(home, 'projects/exports'));
  // a folder of the user's named as Claude Code names projects, but without transcripts, is not one
  // (`~/projects/-scratch` refused every export below ~/projects)
  mkdirSync(path.join(home, 'projects/-scratch'), { recursive: true });
  mkdirSync(path.join(home, 'projects/a--b/notes.jsonl.d'), { recursive: true });
  assert.equal(checkExportDir(path.join(home, 'projects/myrepo/exports'), [sampleLogs]), path.join(home, 'projects/myrepo/exports'));
});

test('a bundled query of the store\'s own tables over --parquet says the export holds only the three portable ones', async () => {
  // `query quality --parquet DIR` said only "Table with name files does not exist!"
  const dir = path.join(tmp(), 'export');
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    await usePortableViews(r.store);
    await exportParquet(r.store, dir, { timezone: 'UTC', logRoots: [sampleLogs] });
  } finally {
    r.store.close();
  }
  for (const [q, table] of [['quality', 'files'], ['skipped', 'skipped'], ['skill_listing_by_agent_type', 'scope']]) {
    await usageError(['query', q!, '--parquet', dir], new RegExp(`^cachelens: query ${q} failed: Catalog Error: Table with name ${table} does not exist! \\(a Parquet export holds only requests, chains, attachments; run ${q} over a store, without --parquet\\)$`));
  }
});

test('an export into the directory above logs named requests, chains or attachments is refused: it replaced them', () => {
  // `export L/requests --parquet L` removed the logs, the export's requests table in their place
  const above = tmp();
  const logs = path.join(above, 'requests');
  mkdirSync(path.join(logs, '-home-me-repo'), { recursive: true });
  writeFileSync(path.join(logs, '-home-me-repo/s.jsonl'), '');
  for (const root of [logs, path.join(logs, '-home-me-repo'), path.join(logs, '-home-me-repo/s.jsonl')]) {
    assert.throws(() => checkExportDir(above, [root]), (e) => e instanceof UsageError && e.message === `--parquet ${above} holds the logs being read in requests/ (${root}), which an export replaces`, root);
  }
  // through a link to DIR too
  const link = path.join(tmp(), 'link');
  symlinkSync(above, link);
  assert.throws(() => checkExportDir(link, [logs]), /holds the logs being read in requests\//);
});

test('an export beside a transcript given as a path, or beside the project given, is refused: both are the logs', async () => {
  const logs = corpus([CONDENSE]);
  const project = path.join(logs, CONDENSE);
  const file = path.join(logs, CONDENSE_61);
  for (const [root, dir] of [[file, path.join(project, 'out')], [project, path.join(logs, 'condense-chat-minmax-bench/projects/out')]]) {
    await assert.rejects(
      exportParquet({} as never, dir!, { timezone: 'UTC', logRoots: [root!] }),
      (e) => e instanceof UsageError && /inside the logs/.test(e.message),
      `${root} → ${dir}`,
    );
    assert.ok(!existsSync(dir!), dir);
  }
  // a user's own projects/ directory (~/projects/myrepo/logs), whose entries are not named as Claude
  // Code names a project's, stands for the root given only: an export beside it may be written
  const own = path.join(tmp(), 'projects/myrepo');
  mkdirSync(path.join(own, 'logs'), { recursive: true });
  assert.equal(checkExportDir(path.join(own, 'exports'), [path.join(own, 'logs')]), path.join(own, 'exports'));
  assert.throws(() => checkExportDir(path.join(own, 'logs/x'), [path.join(own, 'logs')]), /inside the logs/);
  // beside the config directory that holds projects/ (as ~/.claude/x) is no log directory
  assert.equal(checkExportDir(path.join(logs, 'condense-chat-minmax-bench/x'), [path.join(logs, 'condense-chat-minmax-bench/projects')]), path.join(logs, 'condense-chat-minmax-bench/x'));
});

test('what a killed export left under this process\'s own pid (a pid reused, as in a container) is tidied, not a crash', async () => {
  // a run killed after its new table was in place but before the previous one moved aside was
  // removed left `<table>.<pid>.old` beside the table; the next export may get the same pid
  const dir = path.join(tmp(), 'export');
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    await usePortableViews(r.store);
    await exportParquet(r.store, dir, { timezone: 'UTC', logRoots: [sampleLogs] });
    const left = path.join(dir, `requests.${process.pid}.old`, 'day=2000-01-01');
    mkdirSync(left, { recursive: true });
    writeFileSync(path.join(left, 'data_0.parquet'), 'stale');
    mkdirSync(path.join(dir, `chains.${process.pid}.tmp`, 'day=2000-01-01'), { recursive: true });
    const result = await exportParquet(r.store, dir, { timezone: 'UTC', logRoots: [sampleLogs] });
    assert.ok(result.tables[0]!.rows > 0);
    assert.deepEqual(readdirSync(dir).sort(), ['attachments', 'chains', 'requests']);
    assert.ok(!readdirSync(path.join(dir, 'requests')).includes('day=2000-01-01'));
  } finally {
    r.store.close();
  }
});

test('an export into the logs through a symbolic link (DIR, or a directory above it) is refused as the logs themselves are', () => {
  const logs = corpus([CONDENSE]);
  const project = path.join(logs, CONDENSE);
  const links = tmp();
  symlinkSync(path.dirname(project), path.join(links, 'to-projects'));
  symlinkSync(project, path.join(links, 'to-project'));
  for (const dir of [path.join(links, 'to-projects', 'out'), path.join(links, 'to-project'), path.join(links, 'to-project', 'a', 'b')]) {
    assert.throws(() => checkExportDir(dir, [project]), (e) => e instanceof UsageError && /inside the logs/.test(e.message), dir);
  }
  // and logs read through a link: a DIR in their real place is inside them
  symlinkSync(logs, path.join(links, 'logs-link'));
  assert.throws(() => checkExportDir(path.join(project, 'out'), [path.join(links, 'logs-link', CONDENSE)]), /inside the logs/);
  // a link elsewhere is no log directory
  mkdirSync(path.join(links, 'real-out'));
  symlinkSync(path.join(links, 'real-out'), path.join(links, 'out-link'));
  assert.equal(checkExportDir(path.join(links, 'out-link'), [project]), path.join(links, 'out-link'));
});

test('an export whose table place is taken meanwhile (another export into DIR at the same time) fails in one line and leaves no staged table', async () => {
  const dir = path.join(tmp(), 'export');
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  const rename = fs.renameSync;
  try {
    await usePortableViews(r.store);
    await exportParquet(r.store, dir, { timezone: 'UTC', logRoots: [sampleLogs] });
    // the other export puts its `chains` in place between this one's two renames
    fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
      if (String(from).endsWith(`chains.${process.pid}.tmp`)) {
        mkdirSync(path.join(String(to), 'day=2000-01-01'), { recursive: true });
        writeFileSync(path.join(String(to), 'day=2000-01-01', 'data_0.parquet'), 'theirs');
      }
      rename(from, to);
    };
    syncBuiltinESMExports();
    await assert.rejects(
      exportParquet(r.store, dir, { timezone: 'UTC', logRoots: [sampleLogs] }),
      (e) => e instanceof UsageError && /at the same time/.test(`${e.message} ${e.hint}`) && !e.message.includes('\n'),
    );
    assert.deepEqual(readdirSync(dir).sort(), ['attachments', 'chains', 'requests'], 'no staged or moved-aside table is left');
  } finally {
    fs.renameSync = rename;
    syncBuiltinESMExports();
    r.store.close();
  }
});

test('an export that fails leaves none of the directories it made for DIR (a full disk left DIR/ empty)', async () => {
  const parent = tmp();
  // DIR alone is made: the directories above it must be there (test/faults/cli.test.ts)
  const dir = path.join(parent, 'export');
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  const rename = fs.renameSync;
  try {
    await usePortableViews(r.store);
    fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
      if (String(from).endsWith(`.${process.pid}.tmp`)) throw Object.assign(new Error('ENOSPC: no space left on device, rename'), { code: 'ENOSPC' });
      rename(from, to);
    };
    syncBuiltinESMExports();
    await assert.rejects(exportParquet(r.store, dir, { timezone: 'UTC', logRoots: [sampleLogs] }), (e) => e instanceof UsageError && /ENOSPC/.test(e.message));
    assert.deepEqual(readdirSync(parent), [], 'export/, made for the export, is gone');
    // a directory that was there before stays, with what it holds
    mkdirSync(path.join(parent, 'mine'));
    writeFileSync(path.join(parent, 'mine', 'notes.txt'), 'keep me');
    await assert.rejects(exportParquet(r.store, path.join(parent, 'mine', 'export'), { timezone: 'UTC', logRoots: [sampleLogs] }), UsageError);
    assert.deepEqual([readdirSync(parent), readdirSync(path.join(parent, 'mine'))], [['mine'], ['notes.txt']]);
  } finally {
    fs.renameSync = rename;
    syncBuiltinESMExports();
    r.store.close();
  }
});

test('docs/store.md\'s recipe for any DuckDB client, without cachelens, runs a bundled query over a pool as cachelens does', async () => {
  // the recipe is the documentation's text, run as written: its views, then PREPARE and EXECUTE of cost_by
  const doc = fs.readFileSync(path.join(repoRoot, 'docs/store.md'), 'utf8');
  const at = doc.indexOf('Or with any DuckDB client, without cachelens');
  assert.ok(at >= 0, 'the recipe is in docs/store.md');
  const lines = doc.slice(at).split('\n');
  const first = lines.findIndex((l) => l.startsWith('    '));
  const recipe: string[] = [];
  for (const l of lines.slice(first)) {
    if (!l.startsWith('    ')) break;
    recipe.push(l.trim());
  }
  assert.ok(recipe.some((l) => l.startsWith('EXECUTE cost_by(')), recipe.join('\n'));
  // statements as written, one or more lines each, up to a final `;`
  const statements = recipe.join('\n').split(/;\n/).map((x) => x.replace(/;$/, ''));
  // its views are the ones cachelens makes over a pool (poolViews), word for word
  const words = (sql: string) => sql.replace(/\s+/g, ' ').trim();
  assert.deepEqual(statements.filter((x) => x.startsWith('CREATE VIEW')).map(words), poolViews('pool').map(words));
  // its macros are the ones cachelens defines (MACROS), word for word
  const body = (sql: string) => sql.replace(/\s+/g, ' ').replace(/^CREATE (OR REPLACE )?(TEMP )?MACRO /, '').replace(/;$/, '').trim();
  const defined = MACROS.split(/;\s*/).filter((m) => m.trim() !== '').map(body);
  assert.deepEqual(recipe.filter((l) => / MACRO /.test(l)).map(body), defined);
  assert.ok(defined.some((m) => m.startsWith('iso_year(')) && defined.some((m) => m.startsWith('fold_case(')));
  const pool = tmp('cachelens-pool-');
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    await usePortableViews(r.store);
    await exportParquet(r.store, path.join(pool, 'alice'), { timezone: 'UTC', logRoots: [sampleLogs] });
  } finally {
    r.store.close();
  }
  // the same export twice: the recipe's views count each request once, as cachelens's do
  fs.cpSync(path.join(pool, 'alice'), path.join(pool, 'alice-copy'), { recursive: true });
  // and copied through a macOS share: an AppleDouble `._data_0.parquet` (no Parquet file) beside each table's
  // file, which cachelens passes over; the recipe's views failed on it
  for (const table of ['requests', 'chains', 'attachments']) {
    const day = fs.readdirSync(path.join(pool, 'alice', table))[0]!;
    fs.writeFileSync(path.join(pool, 'alice', table, day, '._data_0.parquet'), 'Mac OS X        ATTR');
  }
  const costBy = fs.readFileSync(path.join(repoRoot, 'queries/cost_by.sql'), 'utf8').trim().replace(/;$/, '');
  // a plain DuckDB: nothing of cachelens's own (no macro, no option) on the connection
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    let rows: Record<string, unknown>[] = [];
    for (const statement of statements) {
      const sql = statement.replaceAll(`'pool/`, `'${pool.replace(/'/g, "''")}/`).replace('<text of queries/cost_by.sql>', costBy);
      rows = (await db.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
    }
    const px = await openParquet(pool);
    try {
      const want = await runQuery(px, 'cost_by', { by: 'model', tz: 'UTC' });
      assert.ok(want.length > 0);
      assert.deepEqual(rows.map((x) => [x.grp, Number(x.requests)]), want.map((x) => [x.grp, Number(x.requests)]));
    } finally {
      px.close();
    }
  } finally {
    db.closeSync();
    instance.closeSync();
  }
});

test('days outside 0000 – 9999 are partitions in ISO 8601\'s expanded form, as summary writes them; read back, every day\'s tokens are summary\'s', async () => {
  // 0000-01-01 at +14:00 is -000001-12-31 in UTC, 9999-12-31 at -12:00 is +010000-01-01: the partitions
  // were day=-1-12-31 and day=10000-01-01 (strftime's %Y), where every command writes the expanded form
  const logs = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'e1', t: '0000-01-01T00:00:00.000+14:00', u: { in: 1, w5: 2_000 } }),
      assistant({ session: 's1', msg: 'e2', t: '2026-03-01T12:00:00.000Z', u: { in: 2, r: 2_000 } }),
    ],
    'p/s3.jsonl': [assistant({ session: 's3', msg: 'e4', t: '9999-12-31T23:59:59.999-12:00', u: { in: 4, r: 2_000 } })],
  });
  const dir = path.join(tmp(), 'export');
  const exported = cli(['export', logs, '--db', ':memory:', '--parquet', dir, '--timezone', 'UTC']);
  assert.equal(exported.code, 0, exported.stderr);
  const summary = cli(['summary', logs, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(summary.code, 0, summary.stderr);
  const byDay = (JSON.parse(summary.stdout) as { by_day: { day: string; input: number }[] }).by_day.map((d) => [d.day, d.input]);
  assert.deepEqual(byDay, [['-000001-12-31', 1], ['2026-03-01', 2], ['+010000-01-01', 4]]);
  const db = await (await DuckDBInstance.create(':memory:')).connect();
  try {
    for (const table of ['requests', 'chains']) {
      const got = (await db.runAndReadAll(`SELECT day::VARCHAR AS day, count(*)::INTEGER AS n${table === 'requests' ? ', sum(input)::INTEGER AS input' : ''}
        FROM read_parquet('${dir}/${table}/*/*.parquet', hive_partitioning = true) GROUP BY day`)).getRowObjectsJS();
      const want = table === 'requests' ? byDay : [['-000001-12-31'], ['+010000-01-01']];
      assert.deepEqual(got.map((r) => r.day).sort(), want.map((d) => d[0]).sort(), table);
      if (table === 'requests') assert.deepEqual(Object.fromEntries(got.map((r) => [r.day, r.input])), Object.fromEntries(byDay), table);
    }
  } finally {
    db.closeSync();
  }
});

test('export\'s table says 1 day and 1 file, and writes counts as the other tables do', () => {
  // it said "1 days  1 files", and counts without thousands separators
  const cli = path.join(repoRoot, 'dist/cli.js');
  const env = { ...process.env, NO_COLOR: '1' };
  const args = [cli, 'export', sampleLogs, '--db', ':memory:', '--since', '2026-02-11', '--timezone', 'UTC'];
  const text = spawnSync(process.execPath, [...args, '--parquet', path.join(tmp(), 'text')], { encoding: 'utf8', env });
  assert.equal(text.status, 0, text.stderr);
  const json = spawnSync(process.execPath, [...args, '--parquet', path.join(tmp(), 'json'), '--json'], { encoding: 'utf8', env });
  const tables = (JSON.parse(json.stdout) as { tables: { table: string; rows: number; days: number; files: number }[] }).tables;
  // under the line naming the filters (--since), then 'exported to …'
  const all = text.stdout.trimEnd().split('\n');
  assert.equal(all[0], 'Filtered: --since 2026-02-11');
  const lines = all.slice(all.findIndex((l) => l.startsWith('exported to')) + 1);
  assert.equal(lines.length, tables.length);
  const noun = (n: number, word: string) => `${n.toLocaleString('en-US')} ${n === 1 ? word : word + 's'}`;
  for (const [i, t] of tables.entries()) {
    assert.equal(t.days, 1, 'one day chosen');
    assert.equal(lines[i]!.trim().split(/\s{2,}/).join(' | '), [t.table, noun(t.rows, 'row'), noun(t.days, 'day'), noun(t.files, 'file')].join(' | '));
  }
});

test('export refuses a store inside --parquet DIR, or a DIR of other files, before anything is written there', async () => {
  // `--db DIR/s.duckdb --parquet DIR` made the store and its side files in DIR, then refused DIR as holding them
  const listing = (d: string) => (existsSync(d) ? readdirSync(d, { recursive: true }).map(String).sort() : null);
  const fresh = path.join(tmp(), 'fresh');
  await usageError(['export', sampleLogs, '--db', path.join(fresh, 's.duckdb'), '--parquet', fresh], /--parquet .*fresh would hold the store .*s\.duckdb/);
  assert.equal(listing(fresh), null, 'no DIR made');
  const busy = tmp();
  writeFileSync(path.join(busy, 'notes.txt'), 'keep me');
  const before = listing(busy);
  await usageError(['export', sampleLogs, '--db', path.join(busy, 's.duckdb'), '--parquet', busy], /would hold the store/);
  assert.deepEqual(listing(busy), before);
  // a store beside DIR: DIR's other files are said before the store is made or the logs read
  const beside = tmp();
  mkdirSync(path.join(beside, 'out'));
  writeFileSync(path.join(beside, 'out', 'notes.txt'), 'keep me');
  const was = listing(beside);
  await usageError(['export', sampleLogs, '--db', path.join(beside, 's.duckdb'), '--parquet', path.join(beside, 'out')], /holds other files \(notes\.txt\)/);
  assert.deepEqual(listing(beside), was);  // DIR reached through a link: the store is in DIR all the same (it was made there, then refused as other files)
  const real = tmp();
  const link = path.join(tmp(), 'lnk');
  symlinkSync(real, link);
  await usageError(['export', sampleLogs, '--db', path.join(real, 's.duckdb'), '--parquet', link], /would hold the store/);
  assert.deepEqual(listing(real), []);
});

test('a pool whose directory\'s name holds *, ? or [ is read, itself alone: its name is no glob', async () => {
  // `--parquet 'team*[1]?'` matched no file of its own (`[1]` a character class) and read `teamA1B` beside it instead
  const parent = tmp('cachelens-pool-');
  const mine = path.join(parent, 'team*[1]?');
  const beside = path.join(parent, 'teamA1B');
  const exported = async (logs: string, dir: string) => {
    const r = await runCli(['export', logs, '--db', ':memory:', '--parquet', dir, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { tables: { table: string; rows: number }[] }).tables.find((t) => t.table === 'requests')!.rows;
  };
  const want = await exported(corpus(['DRMacIver-claude-reliability']), mine);
  const other = await exported(corpus([CONDENSE]), beside);
  assert.notEqual(want, other);
  const q = await runCli(['query', 'cost_by', '--parquet', mine, '--json']);
  assert.equal(q.code, 0, q.stderr);
  assert.equal((JSON.parse(q.stdout) as { rows: { requests: number }[] }).rows.reduce((s, x) => s + x.requests, 0), want);
  const x = await runCli(['crosstab', '--parquet', mine, '--measure', 'requests', '--json']);
  assert.equal(x.code, 0, x.stderr);
  assert.equal((JSON.parse(x.stdout) as { cells: { row: unknown; col: unknown; value: number }[] }).cells.find((c) => c.row === null && c.col === null)!.value, want);
});

test('a pool whose name holds [ is read alone even where a directory beside it holds files of the same days', async () => {
  // the files were globbed once with the name escaped, then each path handed to read_parquet, which
  // globbed it again: `ex [2]/requests/day=D/data_0.parquet` read `ex 2/requests/day=D/…` instead
  const parent = tmp('cachelens-pool-');
  const projects = path.join(REAL_LOGS, 'marot-spotter', 'projects');
  const rows = async (logs: string, dir: string) => {
    const r = await runCli(['export', logs, '--db', ':memory:', '--parquet', dir, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { tables: { table: string; rows: number }[] }).tables.find((t) => t.table === 'requests')!.rows;
  };
  const mine = path.join(parent, 'ex [2]');
  const want = await rows(path.join(projects, '-home-USER-projects-spotter-worktrees-spotter-dov'), mine);
  const other = await rows(path.join(projects, '-home-USER-projects-spotter-worktrees-spotter-4te'), path.join(parent, 'ex 2'));
  assert.notEqual(want, other);
  const q = await runCli(['query', 'cost_by', '--parquet', mine, '--json']);
  assert.equal(q.code, 0, q.stderr);
  assert.equal((JSON.parse(q.stdout) as { rows: { requests: number }[] }).rows.reduce((s, x) => s + x.requests, 0), want);
  assert.doesNotMatch(q.stderr, /duplicate/);
});

test('a pool kept below a directory named NAME=VALUE reads no column from it: project=team/ left every project as it was', async () => {
  // hive partitioning took `project=team` for a partition: the column project read `team` in every row
  const parent = path.join(tmp('cachelens-pool-'), 'project=team', 'x=1');
  const dir = path.join(parent, 'alice');
  mkdirSync(parent, { recursive: true });
  const r = await runCli(['export', corpus([CONDENSE]), '--db', ':memory:', '--parquet', dir]);
  assert.equal(r.code, 0, r.stderr);
  const px = await openParquet(parent);
  try {
    const projects = await px.all(`SELECT DISTINCT project FROM requests UNION SELECT DISTINCT project FROM chains`);
    assert.deepEqual(projects.map((p) => p.project), ['/app']);
    for (const t of ['requests', 'chains', 'attachments']) {
      const columns = (await px.all(`DESCRIBE ${t}`)).map((c) => c.column_name as string);
      assert.ok(!columns.includes('x') && !columns.includes('day'), `${t}: ${columns.join()}`);
    }
  } finally {
    px.close();
  }
});

test('--parquet naming a file is said to be no directory, not to be missing', async () => {
  const dir = tmp();
  const file = path.join(dir, 'data_0.parquet');
  writeFileSync(file, 'PAR1');
  for (const cmd of [['query', 'cost_by'], ['crosstab']]) {
    await usageError([...cmd, '--parquet', file], /^cachelens: --parquet .*data_0\.parquet is not a directory \(name the directory an export was written to/);
    await usageError([...cmd, '--parquet', path.join(dir, 'none')], /^cachelens: --parquet .*none: no such directory$/);
  }
});

test('a pool with one damaged Parquet file says which file, in one line', async () => {
  // a file garbled in its middle failed as "holds no cachelens Parquet export: Invalid Error: don't know
  // what type: ?", which named no file among the pool's
  const pool = tmp('cachelens-pool-');
  const r = await runCli(['export', corpus([CONDENSE]), '--db', ':memory:', '--parquet', path.join(pool, 'a')]);
  assert.equal(r.code, 0, r.stderr);
  const days = readdirSync(path.join(pool, 'a', 'requests'));
  for (const damage of ['garbled', 'cut short'] as const) {
    const copy = path.join(pool, damage);
    fs.rmSync(copy, { recursive: true, force: true });
    fs.cpSync(path.join(pool, 'a'), copy, { recursive: true });
    const file = path.join(copy, 'requests', days[0]!, 'data_0.parquet');
    const bytes = fs.readFileSync(file);
    if (damage === 'garbled') bytes.fill(0xff, 200, bytes.length - 300);
    writeFileSync(file, damage === 'garbled' ? bytes : bytes.subarray(0, bytes.length >> 1));
    const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const cmd of [['query', 'cost_by'], ['crosstab']]) {
      await usageError([...cmd, '--parquet', pool], new RegExp(`^cachelens: --parquet .*: ${escaped} cannot be read, a damaged or cut-short Parquet file: .*\\(export it again, or take it out of the pool\\)$`));
    }
    fs.rmSync(copy, { recursive: true, force: true });
  }
});

test('what macOS leaves in an export (.DS_Store, AppleDouble ._ files) neither fails a pool nor refuses a re-export', async () => {
  // a pool copied through a macOS share held ._data_0.parquet beside each file: read as a damaged
  // Parquet file, it failed the pool; a previous export looked at in Finder was refused for its .DS_Store
  const logs = corpus([CONDENSE]);
  const pool = tmp('cachelens-pool-');
  const dir = path.join(pool, 'alice');
  const exported = async () => {
    const r = await runCli(['export', logs, '--db', ':memory:', '--parquet', dir, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { tables: { table: string; rows: number }[] }).tables.find((t) => t.table === 'requests')!.rows;
  };
  const requests = await exported();
  const day = path.join(dir, 'requests', readdirSync(path.join(dir, 'requests'))[0]!);
  writeFileSync(path.join(day, '._data_0.parquet'), Buffer.from([0, 5, 22, 7, 0, 2, 0, 0]));
  for (const at of [dir, path.join(dir, 'requests'), day]) writeFileSync(path.join(at, '.DS_Store'), 'Bud1');
  writeFileSync(path.join(dir, '._requests'), Buffer.from([0, 5, 22, 7]));
  const q = await runCli(['query', 'cost_by', '--parquet', pool, '--json']);
  assert.equal(q.code, 0, q.stderr);
  assert.equal((JSON.parse(q.stdout) as { rows: { requests: number }[] }).rows.reduce((s, x) => s + x.requests, 0), requests);
  assert.equal(await exported(), requests);
  // beside the tables they are left; inside, they went with the table replaced
  assert.deepEqual(readdirSync(dir).sort(), ['.DS_Store', '._requests', 'attachments', 'chains', 'requests']);
  assert.ok(!readdirSync(path.join(dir, 'requests')).includes('.DS_Store'));
});

test('a query over a pool that fails on a page damaged in a column the opening does not read names the file', async () => {
  // `query cost_by failed: Invalid Error: don't know what type: ?`, no file named
  const pool = tmp('cachelens-pool-');
  const r = await runCli(['export', corpus([CONDENSE]), '--db', ':memory:', '--parquet', path.join(pool, 'a')]);
  assert.equal(r.code, 0, r.stderr);
  const day = readdirSync(path.join(pool, 'a', 'requests'))[0]!;
  const file = path.join(pool, 'a', 'requests', day, 'data_0.parquet');
  // the page header of the usd column: cost_by reads usd, the opening (keys, chains) does not
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  let at: number;
  try {
    const [meta] = (await db.runAndReadAll(`SELECT coalesce(dictionary_page_offset, data_page_offset) AS at FROM parquet_metadata('${file.replace(/'/g, "''")}') WHERE path_in_schema = 'usd'`)).getRowObjectsJS();
    at = Number(meta!.at);
  } finally {
    db.closeSync();
    instance.closeSync();
  }
  const bytes = fs.readFileSync(file);
  bytes.fill(0xff, at, at + 12);
  writeFileSync(file, bytes);
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await usageError(['query', 'cost_by', '--parquet', pool], new RegExp(`^cachelens: --parquet .*: ${escaped} cannot be read, a damaged or cut-short Parquet file: `));
});
