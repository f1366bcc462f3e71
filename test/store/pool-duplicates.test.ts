/**
 * A pool (`query`/`crosstab --parquet POOL`) reads each request, chain and attachment once, however
 * many exports below POOL hold it: the same export copied in twice, exports of overlapping `--since`
 * ranges, an earlier export beside a later one of the same logs (whose chains have grown). Each such
 * pool answers as one export of the same logs does, and the rows left out are said on stderr.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadDuckdb } from '../../src/store/duckdb.js';
import { openParquet, poolViews } from '../../src/store/portable.js';
import { runCli } from '../faults/helpers.js';
import { CONDENSE, CONDENSE_61, MAROT_DOV, corpus, realLogs, tmp } from './helpers.js';

/** The queries and cross-tabs compared between a pool and one export (each over the three tables). */
const QUERIES: string[][] = [
  ['cost_by', '--param', 'by=day'],
  ['cost_by', '--param', 'by=agent_type'],
  ['summary'],
  ['sessions'],
  ['repurchase', '--param', 'all=true'],
  ['attachments_vs_rounds'],
  ['reattachments'],
  ['hourly'],
];
const CROSSTABS: string[][] = [
  [],
  ['--rows', 'agent_type', '--cols', 'rounds_bucket', '--measure', 'requests'],
  ['--rows', 'day', '--cols', 'model', '--measure', 'usd'],
  ['--rows', 'definition', '--cols', 'kind', '--measure', 'reattachments'],
];

async function ok(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const r = await runCli(args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r;
}

async function exportTo(dir: string, logs: string, extra: string[] = []): Promise<Record<string, number>> {
  // export makes DIR alone, not the directories above it
  mkdirSync(path.dirname(dir), { recursive: true });
  const r = await ok(['export', logs, '--db', ':memory:', '--parquet', dir, '--timezone', 'UTC', '--json', ...extra]);
  const tables = (JSON.parse(r.stdout) as { tables: { table: string; rows: number }[] }).tables;
  return Object.fromEntries(tables.map((t) => [t.table, t.rows]));
}

/** Every answer compared, over `--parquet dir`, and the stderr of the first. */
async function answers(dir: string): Promise<{ out: string[]; stderr: string }> {
  const out: string[] = [];
  let stderr: string | null = null;
  for (const q of QUERIES) {
    const r = await ok(['query', ...q, '--parquet', dir, '--timezone', 'UTC', '--json']);
    stderr ??= r.stderr;
    out.push(`${q.join(' ')}: ${r.stdout}`);
  }
  for (const x of CROSSTABS) out.push(`crosstab ${x.join(' ')}: ${(await ok(['crosstab', ...x, '--parquet', dir, '--timezone', 'UTC', '--json'])).stdout}`);
  return { out, stderr: stderr! };
}

function writeCorpusFile(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

function assertSameAnswers(got: string[], want: string[]): void {
  assert.equal(got.length, want.length);
  for (let i = 0; i < want.length; i++) assert.equal(got[i], want[i], want[i]!.slice(0, want[i]!.indexOf(':')));
}

/** Each chain's `requests` is the count of its requests in the pool (one export's copy of both). */
async function assertChainsMatchRequests(dir: string): Promise<void> {
  const px = await openParquet(dir);
  try {
    const off = await px.all(`SELECT c.chain_id, c.requests, count(r.key) AS n FROM chains c LEFT JOIN requests r USING (chain_id)
      GROUP BY ALL HAVING c.requests <> count(r.key)`);
    assert.deepEqual(off, []);
  } finally {
    px.close();
  }
}

test('the real logs exported twice into one pool answer as one export, and the copies left out are said', async () => {
  const pool = tmp('cachelens-pool-');
  const one = await exportTo(path.join(pool, 'alice'), realLogs);
  cpSync(path.join(pool, 'alice'), path.join(pool, 'alice-again'), { recursive: true });
  assert.ok(one.requests! > 0 && one.chains! > 0 && one.attachments! > 0, JSON.stringify(one));
  const single = await answers(path.join(pool, 'alice'));
  assert.equal(single.stderr, '', 'one export: nothing to say');
  const pooled = await answers(pool);
  assertSameAnswers(pooled.out, single.out);
  const note = pooled.stderr.trim().split('\n');
  assert.equal(note.length, 1, pooled.stderr);
  assert.match(note[0]!, new RegExp(`^cachelens: --parquet .*: left out ${one.requests!.toLocaleString('en-US')} duplicate requests, ${one.chains} duplicate chains and ${one.attachments} duplicate attachments`));
  const px = await openParquet(pool);
  try {
    assert.deepEqual(px.duplicates, one);
  } finally {
    px.close();
  }
});

test('exports of overlapping --since/--until ranges pooled answer as one export of every day', async () => {
  const pool = tmp('cachelens-pool-');
  const whole = path.join(tmp(), 'whole');
  await exportTo(whole, realLogs);
  const px = await openParquet(whole);
  let days: string[];
  try {
    days = (await px.all(`SELECT DISTINCT strftime(timezone('UTC', ts), '%Y-%m-%d') AS d FROM requests WHERE ts IS NOT NULL ORDER BY d`)).map((r) => r.d as string);
  } finally {
    px.close();
  }
  assert.ok(days.length >= 4, days.join());
  // days 0 … 2/3 and 1/3 … end: the middle third is in both
  const a = await exportTo(path.join(pool, 'early'), realLogs, ['--until', days[Math.floor((days.length * 2) / 3)]!]);
  const b = await exportTo(path.join(pool, 'late'), realLogs, ['--since', days[Math.floor(days.length / 3)]!]);
  const want = await answers(whole);
  const got = await answers(pool);
  assertSameAnswers(got.out, want.out);
  const px2 = await openParquet(pool);
  try {
    const [n] = await px2.all(`SELECT (SELECT count(*) FROM requests) AS requests`);
    assert.ok(a.requests! + b.requests! > (n!.requests as number), 'the ranges overlap');
    assert.equal(px2.duplicates.requests, a.requests! + b.requests! - (n!.requests as number));
  } finally {
    px2.close();
  }
  assert.match(got.stderr, /duplicate requests/);
});

test('an earlier export beside a later one of logs that grew since answers as the later one alone; each chain is the later copy', async () => {
  const logs = corpus([CONDENSE, MAROT_DOV]);
  const grown = path.join(logs, CONDENSE_61);
  const full = readFileSync(grown, 'utf8');
  const lines = full.split('\n');
  // the transcript as it was half-way through: the later export's chain has more requests and rounds
  writeFileSync(grown, lines.slice(0, Math.floor(lines.length / 2)).join('\n') + '\n');
  const pool = tmp('cachelens-pool-');
  const before = await exportTo(path.join(pool, 'monday'), logs);
  writeFileSync(grown, full);
  const after = await exportTo(path.join(pool, 'friday'), logs);
  assert.ok(after.requests! > before.requests!, `${before.requests} then ${after.requests}`);
  // the earlier export's directory name sorts after the later one's too: the copy kept is not the path's
  cpSync(path.join(pool, 'monday'), path.join(pool, 'zz-monday'), { recursive: true });
  const want = await answers(path.join(pool, 'friday'));
  assertSameAnswers((await answers(pool)).out, want.out);
  await assertChainsMatchRequests(pool);
});

test('an export from before a session was resumed beside one from after answers as the later one: the old chain\'s stale copy is not kept, its requests stay the old chain\'s (its file ends first), nor its attachments counted twice', async () => {
  // session A as it was (30 lines), then resumed into B, whose transcript copies A's lines at their very
  // times: the copies count in A, the file that ends first (schema.ts fileLastTimes; docs/store.md), in the
  // later export as in the pool; the pool kept the earlier export's copy of A too, which is left out
  const id = '4edc4852-43a9-4644-8d79-e4bef3040feb';
  const resumed = '11111111-2222-3333-4444-555555555555';
  const source = readFileSync(path.join(realLogs, CONDENSE, `${id}.jsonl`), 'utf8');
  const head = source.split('\n').slice(0, 30).join('\n') + '\n';
  const then = tmp('cachelens-logs-');
  const now = tmp('cachelens-logs-');
  writeCorpusFile(path.join(then, 'projects/-app', `${id}.jsonl`), head);
  writeCorpusFile(path.join(now, 'projects/-app', `${id}.jsonl`), head);
  writeCorpusFile(path.join(now, 'projects/-app', `${resumed}.jsonl`), source.replaceAll(id, resumed));
  const pool = tmp('cachelens-pool-');
  // the earlier export's directory sorts last: the copy kept is not the path's
  await exportTo(path.join(pool, 'z-then'), then);
  await exportTo(path.join(pool, 'a-now'), now);
  const want = await answers(path.join(pool, 'a-now'));
  const got = await answers(pool);
  assertSameAnswers(got.out, want.out);
  await assertChainsMatchRequests(pool);
  const px = await openParquet(pool);
  try {
    const [a] = await px.all(`SELECT c.requests, c.rounds, (SELECT count(*) FROM attachments WHERE chain_id = '${id}') AS attachments FROM chains c WHERE chain_id = '${id}'`);
    const later = await openParquet(path.join(pool, 'a-now'));
    try {
      const [l] = await later.all(`SELECT c.requests, c.rounds, (SELECT count(*) FROM attachments WHERE chain_id = '${id}') AS attachments FROM chains c WHERE chain_id = '${id}'`);
      assert.deepEqual(a, l);
      assert.deepEqual(a, { requests: 5, rounds: 1, attachments: 7 });
    } finally {
      later.close();
    }
    // the old chain's attachments left out are said among the duplicates
    const single = await openParquet(path.join(pool, 'z-then'));
    try {
      const [{ n }] = await single.all(`SELECT count(*)::INTEGER AS n FROM attachments`);
      assert.equal(px.duplicates.attachments, n);
    } finally {
      single.close();
    }
  } finally {
    px.close();
  }
});

test('each chain\'s copies are ranked once: the chains view keeps the copy chain_exports names, which the requests and attachments follow', () => {
  // the chains view ranked every chain's copies again, in its own window, beside chain_exports'
  const [, exports, chains] = poolViews('pool');
  assert.match(exports!, /^CREATE VIEW chain_exports AS/);
  assert.match(chains!, /^CREATE VIEW chains AS/);
  assert.match(chains!, /JOIN chain_exports/);
  assert.doesNotMatch(chains!, /row_number\(\)|QUALIFY/);
});

test('two exports of the same age are told apart by their paths, the last in code-point order winning, whole exports compared', async () => {
  // pool/x and pool/x-y: one export copied and the copy edited (each request's and chain's project), so both
  // are of the same age, each chain of the same requests and last_t. 'x-y' comes after 'x', though its files'
  // paths ('…/x-y/chains/…') come before x's ('…/x/chains/…', '/' after '-'), by which the copy kept was x's
  const pool = tmp('cachelens-pool-');
  await exportTo(path.join(pool, 'x'), corpus([CONDENSE, MAROT_DOV]));
  cpSync(path.join(pool, 'x'), path.join(pool, 'x-y'), { recursive: true });
  const duckdb = await loadDuckdb();
  const instance = await duckdb.DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    for (const table of ['requests', 'chains']) {
      for (const day of readdirSync(path.join(pool, 'x-y', table))) {
        const file = path.join(pool, 'x-y', table, day, 'data_0.parquet');
        await db.run(`COPY (SELECT * REPLACE (project || ' (edited)' AS project) FROM read_parquet('${file}')) TO '${file}.new' (FORMAT parquet)`);
        renameSync(`${file}.new`, file);
      }
    }
  } finally {
    db.closeSync();
    instance.closeSync();
  }
  const want = await answers(path.join(pool, 'x-y'));
  assert.notDeepEqual(want.out, (await answers(path.join(pool, 'x'))).out, 'the edit shows in the answers');
  assertSameAnswers((await answers(pool)).out, want.out);
  const px = await openParquet(pool);
  try {
    const [n] = await px.all(`SELECT (SELECT count(*) FROM requests WHERE NOT ends_with(project, ' (edited)')) AS requests, (SELECT count(*) FROM chains WHERE NOT ends_with(project, ' (edited)')) AS chains`);
    assert.deepEqual(n, { requests: 0, chains: 0 });
  } finally {
    px.close();
  }
});
