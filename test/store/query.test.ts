/**
 * `cachelens query` and the bundled queries: every file documents itself; the SQL re-purchase
 * ranking equals the TypeScript anatomy's; attachment queries agree with the sample corpus's
 * truth.json; the CLI prints JSON, CSV and one-line errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { analyzeAnatomy } from '../../src/analyses/anatomy-summary.js';
import { crosstab } from '../../src/analyses/crosstab.js';
import { type Filters, filterParams } from '../../src/analyses/filters.js';
import { loadChains, streamChains } from '../../src/analyses/load-chains.js';
import { usePortableViews } from '../../src/store/portable.js';
import { QUERIES_DIR, listQueries, networkSettings, queryParams, querySql, rememberedQuery, runQuery, writeTargets } from '../../src/store/queries.js';
import { Store, type StoreReader } from '../../src/store/store.js';
import { prices, realLogs, repoRoot, run, tmp } from './helpers.js';
import { usageError } from '../faults/helpers.js';
import { BUNDLED_CHOICES } from '../../src/commands/store.js';

const sampleLogs = path.join(repoRoot, 'sample-logs');
const cli = path.join(repoRoot, 'dist/cli.js');
const BUNDLED = ['attachments_vs_rounds', 'cost_by', 'reattachments', 'repurchase', 'write_read_ratio'];

interface TruthChain {
  chain_id: string;
  rounds: number;
  skill_listing: number;
  re_attachments: number;
  attachments: Record<string, number>;
  repurchase: boolean;
}
const truth = () => JSON.parse(readFileSync(path.join(sampleLogs, 'truth.json'), 'utf8')) as { chains: TruthChain[] };

function cachelens(args: string[]) {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
}

test('every bundled query opens with purpose, inputs, output columns and an example row, and --list shows it', () => {
  const files = readdirSync(QUERIES_DIR).filter((f) => f.endsWith('.sql'));
  for (const name of BUNDLED) assert.ok(files.includes(`${name}.sql`), name);
  for (const name of BUNDLED) {
    const head = readFileSync(path.join(QUERIES_DIR, `${name}.sql`), 'utf8').split('\n').filter((l) => l.startsWith('--')).join('\n');
    assert.match(head, new RegExp(`^-- ${name}: \\S`), name);
    for (const part of ['Purpose:', 'Inputs:', 'Output columns:', 'Example row:']) assert.ok(head.includes(part), `${name} lacks ${part}`);
  }
  const listed = listQueries();
  for (const name of BUNDLED) {
    const q = listed.find((x) => x.name === name);
    assert.ok(q && q.purpose.length > 10 && !q.purpose.startsWith(name), `${name}: ${q?.purpose}`);
  }
});

test('summary.sql\'s example row is what it prints for the sample corpus, the command its header names', () => {
  // the header showed weight_exact='2609813.100000000000000', rounder than DuckDB prints a sum of DOUBLE weights
  const lines = readFileSync(path.join(QUERIES_DIR, 'summary.sql'), 'utf8').split('\n');
  const at = lines.findIndex((l) => l.startsWith('-- Example row: '));
  const example: string[] = [lines[at]!.slice('-- Example row: '.length)];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith('--   ') || l.startsWith('--   (')) break;
    example.push(l.slice('--   '.length));
  }
  assert.match(lines.slice(at).join('\n'), /\(`cachelens query summary sample-logs --param group=model`, the sample corpus;/);
  const want = Object.fromEntries([...example.join(' ').matchAll(/(\w+)=('[^']*'|[^,\s]+)/g)].map(([, k, v]) => [k, v!.startsWith("'") ? v!.slice(1, -1) : Number(v)]));
  assert.equal(Object.keys(want).length, 13, JSON.stringify(want));
  const r = cachelens(['query', 'summary', sampleLogs, '--db', ':memory:', '--param', 'group=model', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { columns: string[]; rows: Record<string, unknown>[] };
  assert.deepEqual(Object.keys(want), out.columns, 'every column, in order');
  assert.deepEqual(out.rows.find((row) => row.grp === want.grp), want);
});

/**
 * Filters that split a chain across days in each corpus (its requests on both sides of a midnight
 * in that zone), so that the day filters must take chains whole as the commands do.
 */
const SPLIT_FILTERS = {
  'sample corpus': [
    { timezone: 'Europe/Berlin', since: '2026-02-11', until: null, project: null },
    { timezone: 'Europe/Berlin', since: null, until: '2026-02-10', project: 'PLAN-loop' },
  ],
  'real logs': [{ timezone: 'Asia/Tokyo', since: '2026-02-13', until: null, project: null }],
} as const;
const NO_FILTERS = { since: null, until: null, project: null, timezone: 'UTC' };

for (const [label, root] of [
  ['sample corpus', sampleLogs],
  ['real logs', realLogs],
] as const) {
  test(`repurchase.sql ranks the same chains as the anatomy, with the same waste, also under day and project filters (${label})`, async () => {
    const r = await run([root], path.join(tmp(), 's.duckdb'));
    try {
      await usePortableViews(r.store);
      for (const f of [NO_FILTERS, ...SPLIT_FILTERS[label]]) await sameAsAnatomy(r.store, f, label);
    } finally {
      r.store.close();
    }
  });
}

async function sameAsAnatomy(store: Store, f: Filters, label: string) {
  const what = `${label} ${JSON.stringify(f)}`;
  const sql = await runQuery(store, 'repurchase', { all: 'true', ...filterParams(f) });
  const chains = await loadChains(store, f);
  // a filter of SPLIT_FILTERS has a chain that began before its days: the test covers context requests
  if (f.since !== null) assert.ok(chains.some((c) => c.requests.some((q) => q.context) && c.requests.some((q) => !q.context)), what);
  const ts = analyzeAnatomy(chains, {
    weightsFor: (m, p) => prices.weightsFor(m, p),
  });
  const flagged = sql.filter((x) => x.repurchase === true);
  assert.deepEqual(
    flagged.map((x) => [x.chain_id, x.rounds, x.read_median]),
    ts.repurchase.map((x) => [x.chain_id, x.rounds, x.read_median]),
    what,
  );
  for (const [i, x] of flagged.entries()) assert.ok(Math.abs((x.waste_weight as number) - ts.repurchase[i]!.waste_weight) < 1e-6, what);
  // every chain's expiry and break tokens, waste and weight agree with the anatomy, flagged or not
  const byChain = new Map(ts.chains.map((c) => [c.chain_id, c]));
  assert.equal(sql.length, ts.chains.length, what);
  for (const x of sql) {
    const c = byChain.get(x.chain_id as string)!;
    assert.ok(c, `${what}: ${x.chain_id}`);
    assert.deepEqual([x.expiry_tokens, x.break_tokens], [c.expiry, c.break], x.chain_id as string);
    assert.ok(Math.abs((x.waste_weight as number) - c.waste_weight) < 1e-6, x.chain_id as string);
    assert.ok(Math.abs((x.weight as number) - c.weight) < 1e-6, x.chain_id as string);
  }
  if (label === 'sample corpus' && f === NO_FILTERS) {
    assert.deepEqual(new Set(flagged.map((x) => x.chain_id)), new Set(truth().chains.filter((c) => c.repurchase).map((c) => c.chain_id)));
  }
}

/** A day as YYYY-MM-DD in a zone, computed apart from DuckDB. */
function dayIn(t: number, timezone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(t);
}

for (const [label, root] of [
  ['sample corpus', sampleLogs],
  ['real logs', realLogs],
] as const) {
  test(`attachments_vs_rounds and reattachments under day and project filters: the chains with a request on those days, whole, as crosstab counts them (${label})`, async () => {
    const r = await run([root], path.join(tmp(), 's.duckdb'));
    try {
      await usePortableViews(r.store);
      const all = await runQuery(r.store, 'attachments_vs_rounds', {});
      const requests = await r.store.all(`SELECT chain_id, t FROM requests`);
      const chains = await r.store.all(`SELECT chain_id, first_t, project FROM chains`);
      const attachments = await r.store.all(`SELECT chain_id, type, hash, bytes, t, line FROM attachments ORDER BY chain_id, t, line`);
      assert.ok(attachments.length > 0, label);
      for (const f of [...SPLIT_FILTERS[label], { timezone: 'UTC', since: null, until: null, project: 'nothing-here' }]) {
        const what = `${label} ${JSON.stringify(f)}`;
        const inDays = (t: number) => (f.since === null || dayIn(t, f.timezone) >= f.since) && (f.until === null || dayIn(t, f.timezone) <= f.until);
        const withRequests = new Set(requests.map((q) => q.chain_id));
        const onDays = new Set(requests.filter((q) => inDays(q.t as number)).map((q) => q.chain_id));
        const want = new Set(
          chains
            .filter((c) => f.project === null || String(c.project).toLowerCase().includes(f.project.toLowerCase()))
            .filter((c) => onDays.has(c.chain_id) || (!withRequests.has(c.chain_id) && inDays(c.first_t as number)))
            .map((c) => c.chain_id),
        );
        if (f.project === null) assert.ok(want.size > 0 && want.size < chains.length, what);

        // each chosen chain's row is its row without filters: the chain described whole
        const rows = await runQuery(r.store, 'attachments_vs_rounds', filterParams(f));
        assert.deepEqual(rows, all.filter((x) => want.has(x.chain_id)), what);

        // re-attachments of the chosen chains' attachments, of every day, counted here by type
        const byType = new Map<string, { attachments: number; reattachments: number; reattachment_bytes: number; bytes: number }>();
        const seen = new Set<string>();
        for (const a of attachments.filter((x) => want.has(x.chain_id))) {
          const again = seen.has(`${a.chain_id} ${a.hash}`);
          seen.add(`${a.chain_id} ${a.hash}`);
          const s = byType.get(a.type as string) ?? { attachments: 0, reattachments: 0, reattachment_bytes: 0, bytes: 0 };
          byType.set(a.type as string, s);
          s.attachments++;
          s.bytes += a.bytes as number;
          if (again) [s.reattachments, s.reattachment_bytes] = [s.reattachments + 1, s.reattachment_bytes + (a.bytes as number)];
        }
        const re = await runQuery(r.store, 'reattachments', filterParams(f));
        assert.deepEqual(
          Object.fromEntries(re.map((x) => [x.type, { attachments: x.attachments, reattachments: x.reattachments, reattachment_bytes: x.reattachment_bytes, bytes: x.bytes }])),
          Object.fromEntries(byType),
          what,
        );
        // and as the cross-tab counts them
        const xt = await crosstab(r.store, { rows: 'definition', cols: 'has_skill_listing', measure: 'reattachments', ...f });
        const total = xt.cells.find((c) => c.row === null && c.col === null);
        assert.equal(total?.value ?? 0, re.reduce((n, x) => n + (x.reattachments as number), 0), what);
        const equal = xt.attachments_equal_rounds.reduce((n, e) => n + e.matching, 0);
        assert.deepEqual([xt.attachments_equal_rounds.reduce((n, e) => n + e.chains, 0), equal], [rows.length, rows.filter((x) => x.skill_listing_equals_rounds).length], what);
      }
    } finally {
      r.store.close();
    }
  });
}

test('attachments_vs_rounds and reattachments agree with truth.json', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    await usePortableViews(r.store);
    const rows = await runQuery(r.store, 'attachments_vs_rounds', {});
    const chains = truth().chains;
    assert.equal(rows.length, chains.length);
    for (const c of chains) {
      const row = rows.find((x) => x.chain_id === c.chain_id)!;
      const all = Object.values(c.attachments).reduce((s, n) => s + n, 0);
      assert.deepEqual([row.rounds, row.skill_listing, row.attachments], [c.rounds, c.skill_listing, all], c.chain_id);
    }
    const re = await runQuery(r.store, 'reattachments', {});
    const sum = (k: string) => re.reduce((s, x) => s + (x[k] as number), 0);
    assert.equal(sum('reattachments'), chains.reduce((s, c) => s + c.re_attachments, 0));
    assert.equal(sum('attachments'), chains.reduce((s, c) => s + Object.values(c.attachments).reduce((a, n) => a + n, 0), 0));
  } finally {
    r.store.close();
  }
});

test('CLI: query NAME --param --json, FILE.sql --csv, and one-line errors', () => {
  const db = path.join(tmp(), 's.duckdb');
  const byModel = cachelens(['query', 'cost_by', sampleLogs, '--db', db, '--param', 'by=model', '--json']);
  assert.equal(byModel.status, 0, byModel.stderr);
  const out = JSON.parse(byModel.stdout) as { query: string; params: Record<string, unknown>; columns: string[]; rows: Record<string, number | string>[] };
  assert.equal(out.query, 'cost_by');
  assert.equal(out.params.by, 'model');
  assert.deepEqual(out.columns.slice(0, 3), ['grp', 'requests', 'chains']);
  const summary = JSON.parse(cachelens(['summary', sampleLogs, '--db', db, '--json']).stdout) as { totals: { requests: number; usd: number } };
  assert.equal(out.rows.reduce((s, x) => s + (x.requests as number), 0), summary.totals.requests);
  assert.ok(Math.abs(out.rows.reduce((s, x) => s + (x.usd as number), 0) - summary.totals.usd) < 1e-6);

  const file = path.join(tmp(), 'mine.sql');
  writeFileSync(file, `SELECT agent_type, count(*) AS chains, 'a,"b"' AS odd FROM chains WHERE rounds >= $min::INTEGER GROUP BY 1 ORDER BY 1`);
  const csv = cachelens(['query', file, sampleLogs, '--db', db, '--param', 'min=2', '--csv']);
  assert.equal(csv.status, 0, csv.stderr);
  const lines = csv.stdout.trim().split('\n');
  assert.equal(lines[0], 'agent_type,chains,odd');
  assert.ok(lines.slice(1).every((l) => l.endsWith(',"a,""b"""')), lines.join('\n'));

  for (const args of [
    ['query', 'no_such_query', sampleLogs, '--db', db],
    ['query', 'cost_by', sampleLogs, '--db', db, '--param', 'nope=1'],
    ['query', 'cost_by', sampleLogs, '--db', db, '--param', 'by=colour'],
    ['query', sampleLogs, '--db', db, '--param', 'by'],
    // a path to a file of the user's, without .sql: no bundled query (run as one, it would skip
    // dropping the remembered results a query of the user's own may invalidate)
    ['query', path.relative(QUERIES_DIR, file).replace(/\.sql$/, ''), sampleLogs, '--db', db],
  ]) {
    const r = cachelens(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^cachelens: /);
  }
  // a query file of the user's that is not there is named as a missing file, not as a bundled query
  const missing = cachelens(['query', path.join(tmp(), 'nosuch.sql'), sampleLogs, '--db', db]);
  assert.equal(missing.status, 2, missing.stderr);
  assert.match(missing.stderr, /^cachelens: no such file: .*nosuch\.sql/);
});

test('a remembered result holds only for the text of the query that gave it', async () => {
  const db = path.join(tmp(), 's.duckdb');
  const r = await run([sampleLogs], db);
  let real: unknown;
  try {
    real = await rememberedQuery(r.store, 'quality');
  } finally {
    r.store.close();
  }
  // the results table changed behind remember() (which, in the process that holds the store, stands
  // for it with what it read or kept: Store.readAhead): seen by a process that opens it afresh
  const plant = async (sql: string) => {
    const s = await Store.open(db);
    try {
      await s.run(sql);
      return await rememberedQuery(s, 'quality');
    } finally {
      s.close();
    }
  };
  const digest = createHash('sha1').update(querySql('quality')).digest('hex').slice(0, 12);
  const s = await Store.open(db);
  const keys = (await s.all(`SELECT key FROM results WHERE key LIKE 'query:quality:%'`)).map((x) => String(x.key));
  s.close();
  assert.deepEqual(keys, [`query:quality:${digest}:[]`]);
  // kept under this text's digest, a result answers (here a planted one, to tell it from a fresh one)
  assert.deepEqual(await plant(`UPDATE results SET value = '[{"files":-1}]' WHERE key LIKE 'query:quality:%'`), [{ files: -1 }]);
  // under another text's, it does not: the query runs
  assert.deepEqual(await plant(`UPDATE results SET key = replace(key, '${digest}', '000000000000') WHERE key LIKE 'query:quality:%'`), real);
});

test('after an ingest that changed the store, results are computed and kept without asking the emptied table first', async () => {
  const db = path.join(tmp(), 's.duckdb');
  (await run([sampleLogs], db)).store.close();
  const r = await run([sampleLogs], db, { rebuild: true }); // derives: forgets every result, then commits
  try {
    // a row the table could not hold after that commit, planted: the store does not look for it
    await r.store.run(`INSERT INTO results VALUES ('planted', '"from the table"')`);
    let computed = 0;
    const compute = async () => (computed++, 'computed');
    assert.equal(await r.store.remember('planted', compute), 'computed');
    assert.equal(computed, 1);
    // what it computes is kept, and answers the next question without computing again
    assert.equal(await r.store.remember('fresh', compute), 'computed');
    assert.equal(await r.store.remember('fresh', compute), 'computed');
    assert.equal(computed, 2);
    assert.deepEqual((await r.store.all(`SELECT value FROM results WHERE key = 'fresh'`)).map((x) => x.value), ['"computed"']);
  } finally {
    r.store.close();
  }
});

test('CLI: a query file that changes the store makes summary answer from the changed tables, not remembered results', () => {
  const db = path.join(tmp(), 's.duckdb');
  const total = () => (JSON.parse(cachelens(['summary', sampleLogs, '--db', db, '--json']).stdout) as { totals: { requests: number } }).totals.requests;
  const before = total();
  assert.equal(total(), before, 'a warm re-run answers the same');
  const file = path.join(tmp(), 'prune.sql');
  writeFileSync(file, `DELETE FROM requests WHERE key IN (SELECT key FROM requests ORDER BY key LIMIT 3) RETURNING key`);
  const q = cachelens(['query', file, sampleLogs, '--db', db, '--json']);
  assert.equal(q.status, 0, q.stderr);
  assert.equal((JSON.parse(q.stdout) as { rows: unknown[] }).rows.length, 3);
  assert.equal(total(), before - 3);
});

test('weight and USD sums do not depend on the order of the rows (summed exactly, as DECIMAL)', async () => {
  // 1e16 + 1 rounds back to 1e16 in a DOUBLE, so a plain sum of these three gives 0 or 1 by order
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    const totals = async (order: string) => {
      await r.store.run(`CREATE OR REPLACE TABLE requests AS
        SELECT q.* REPLACE (v.x AS usd, v.x AS weight) FROM (SELECT * FROM requests LIMIT 1) q,
          (VALUES (1, 1e16::DOUBLE), (2, 1::DOUBLE), (3, -1e16::DOUBLE)) v(i, x) ORDER BY ${order}`);
      const [s] = await runQuery(r.store, 'summary', { group: 'total', tz: 'UTC', since: null, until: null, project: null });
      const [c] = await runQuery(r.store, 'cost_by', { by: 'model', tz: 'UTC', since: null, until: null, project: null });
      return [s.usd, s.weight, c.usd, c.weight];
    };
    assert.deepEqual(await totals('i'), [1, 1, 1, 1]);
    assert.deepEqual(await totals('i DESC'), [1, 1, 1, 1]);
    assert.deepEqual(await totals('v.x'), [1, 1, 1, 1]);
  } finally {
    r.store.close();
  }
});

test("summary's days are each request's day in the zone, across offset changes, odd offsets, midnight and 1970", async () => {
  // summary.sql converts one instant per quarter hour and the rest by arithmetic: it must give what
  // converting every request does, also where a zone changes its offset inside a quarter or a day
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    const around = [
      '2025-03-09 07:00:00+00', // New York springs forward
      '2025-11-02 06:00:00+00', // New York falls back
      '2025-04-05 15:00:00+00', // Lord Howe: half an hour back
      '2025-10-04 15:30:00+00', // Lord Howe: half an hour forward
      '2025-04-05 14:00:00+00', // Chatham (+13:45 → +12:45)
      '2025-03-29 22:00:00+00', // Gaza
      '2025-06-30 18:15:00+00', // Kathmandu's midnight (+5:45)
      '1969-12-31 20:00:00+00', // the epoch, and before it
      '1971-06-01 00:00:00+00', // Monrovia's offset of −0:44:30
    ];
    const windows = around.map((t) => `SELECT unnest(range(epoch_us(TIMESTAMPTZ '${t}') - 86400000000, epoch_us(TIMESTAMPTZ '${t}') + 86400000000, 421000017)) AS us`).join(' UNION ALL ');
    await r.store.run(`CREATE OR REPLACE TABLE requests AS
      SELECT q.* REPLACE (w.ts AS ts) FROM (SELECT * FROM requests LIMIT 1) q,
        (SELECT make_timestamptz(us) AS ts FROM (${windows}) UNION ALL SELECT NULL) w`);
    for (const tz of ['UTC', 'America/New_York', 'Australia/Lord_Howe', 'Pacific/Chatham', 'Asia/Gaza', 'Asia/Kathmandu', 'Africa/Monrovia']) {
      const days = await runQuery(r.store, 'summary', { group: 'day', tz, since: null, until: null, project: null });
      const want = await r.store.all(
        `SELECT strftime(timezone('${tz}', ts), '%Y-%m-%d') AS grp, count(*)::INTEGER AS requests FROM requests GROUP BY grp ORDER BY grp NULLS LAST`,
      );
      assert.deepEqual(
        days.map((d) => [d.grp, Number(d.requests)]),
        want.map((d) => [d.grp, d.requests]),
        tz,
      );
      assert.ok(want.length >= 18, tz);
    }
  } finally {
    r.store.close();
  }
});

test('chains loaded without their keys are the same chains, every request key null', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    const filters = { since: null, until: null, project: null, timezone: 'UTC' };
    const full = await loadChains(r.store, filters);
    const bare = await loadChains(r.store, filters, { keys: false });
    assert.ok(full.length > 10 && full.every((c) => c.requests.every((q) => typeof q.key === 'string' && q.key.length > 0)));
    assert.deepEqual(bare, full.map((c) => ({ ...c, requests: c.requests.map((q) => ({ ...q, key: null })) })));
  } finally {
    r.store.close();
  }
});

test('streamChains: the chains in batches as DuckDB streams them, each chain whole and once, as read row by row', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    // 271 requests become 11,111 (ties of time among them, broken by key) and the attachments 41 times
    // as many: more than one chunk of DuckDB's stream, with chains across the chunks' edges
    await r.store.run(`INSERT INTO requests SELECT requests.* REPLACE (key || '-' || i AS key, t + (i // 2) AS t) FROM requests, range(40) r(i)`);
    await r.store.run(`INSERT INTO attachments SELECT attachments.* REPLACE (t + i AS t) FROM attachments, range(40) r(i)`);
    // a chain across two days: its first request a day earlier
    const [first] = await r.store.all(`SELECT chain_id, arg_min(key, t) AS key, strftime(max(ts) AT TIME ZONE 'UTC', '%Y-%m-%d') AS day FROM requests GROUP BY chain_id ORDER BY chain_id LIMIT 1`);
    await r.store.all(`UPDATE requests SET t = t - 86400000, ts = ts - INTERVAL 1 DAY WHERE key = $key`, { key: first!.key });
    const day = first!.day as string;
    for (const filters of [
      { since: null, until: null, project: null, timezone: 'UTC' },
      // a project's chains only: the other chains' events come in the stream, their chains do not
      { since: null, until: null, project: 'shop-api', timezone: 'UTC' },
      // the chains with a request from that day on, whole: their earlier requests as context
      { since: day, until: null, project: null, timezone: 'UTC' },
    ]) {
      const want = await readRowByRow(r.store, filters.project, filters.since);
      const batches: string[][] = [];
      const got = [];
      for await (const batch of streamChains(r.store, filters)) {
        batches.push(batch.map((c) => c.chainId));
        got.push(...batch);
      }
      assert.ok(batches.length > 1, `${batches.length} batch`);
      assert.ok(want.length > 3 && want.every((c) => c.requests.length > 0));
      assert.deepEqual(got, want);
      assert.deepEqual(await loadChains(r.store, filters), want);
    }
    assert.ok((await readRowByRow(r.store, 'shop-api')).length < (await readRowByRow(r.store, null)).length);
    const since = await readRowByRow(r.store, null, day);
    assert.ok(since.some((c) => c.requests.some((q) => q.context)) && since.length < (await readRowByRow(r.store, null)).length);
  } finally {
    r.store.close();
  }
});

/**
 * The chains loadChains should give, each table read row by row and grouped here: with `since` (a
 * UTC day), the chains with a request on or after it, their requests before it marked context.
 */
async function readRowByRow(store: Awaited<ReturnType<typeof run>>['store'], project: string | null, since: string | null = null) {
  const chains = await store.all(`SELECT * FROM chains ORDER BY chain_id`);
  const requests = await store.all(
    `SELECT * FROM requests WHERE $project IS NULL OR contains(lower(project), lower($project)) ORDER BY chain_id, t, key`,
    { project },
  );
  const events = await store.all(`SELECT chain_id, t, kind, detail FROM (
      SELECT chain_id, t, 'attachment' AS kind, type AS detail FROM attachments JOIN scope USING (file_id) ANTI JOIN line_copies USING (file_id, line)
      UNION ALL SELECT chain_id, t, 'compaction', detail FROM chain_events JOIN scope USING (file_id) ANTI JOIN line_copies USING (file_id, line) WHERE kind = 'compaction')
    ORDER BY chain_id, t, kind, detail NULLS LAST`);
  return chains
    .map((c) => ({
      chainId: c.chain_id,
      sessionId: c.session_id,
      agentId: c.agent_id ?? null,
      agentType: c.agent_type,
      kind: c.kind,
      project: c.project ?? null,
      requests: requests
        .filter((q) => q.chain_id === c.chain_id)
        .map((q) => ({
          key: q.key,
          t: q.t,
          model: q.model,
          input: q.input,
          output: q.output,
          cacheWrite: q.cache_write,
          cacheWrite5m: q.cache_write_5m,
          cacheWrite1h: q.cache_write_1h,
          cacheRead: q.cache_read,
          segment: q.segment,
          round: q.round,
          ...(since !== null && new Date(q.t as number).toISOString().slice(0, 10) < since ? { context: true } : {}),
        })),
      events: events.filter((e) => e.chain_id === c.chain_id).map((e) => ({ t: e.t, kind: e.kind, detail: e.detail })),
      rounds: c.rounds,
    }))
    .filter((c) => c.requests.length > 0 && c.requests.some((q) => !q.context));
}

test('skipped: each reason\'s count, and its first five lines by path and line, as sorting all of them gives', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    // skipped lines in every file in scope, in an order unlike the paths' (ids follow the order
    // files were first seen), some at the same line in different files
    await r.store.run(`INSERT INTO skipped SELECT file_id, (file_id * 7919 + i * 13) % 50 + 1, CASE WHEN i % 3 = 0 THEN 'invalid_json' ELSE 'too_long' END, 'made ' || i
      FROM scope, range(9) t(i)`);
    const rows = await skippedLines(r.store);
    const got = await runQuery(r.store, 'skipped');
    const reasons = [...new Set(rows.map((x) => x.reason as string))];
    assert.equal(got.length, reasons.length);
    assert.ok(got.filter((g) => (g.count as number) > 5).length >= 2, 'reasons with more lines than examples');
    for (const g of got) {
      const mine = rows.filter((x) => x.reason === g.reason);
      mine.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line as number) - (b.line as number)));
      assert.equal(g.count, mine.length);
      assert.deepEqual(g.examples, mine.slice(0, 5).map((x) => ({ file: x.file, line: x.line, detail: x.detail })));
    }
  } finally {
    r.store.close();
  }
});

/** Every skipped line in scope with its file's path. */
function skippedLines(store: Awaited<ReturnType<typeof run>>['store']) {
  return store.all(`SELECT s.reason, f.path AS file, s.line, s.detail FROM skipped s JOIN scope USING (file_id) JOIN files f USING (file_id)`);
}

test('report_components: the rows of each grouping add up, component by component, to the totals of the requests', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    const rows = await runQuery(r.store, 'report_components', {});
    const [want] = await r.store.all(`SELECT
      sum(input)::DOUBLE AS t_input, sum(output)::DOUBLE AS t_output, sum(cache_write_5m)::DOUBLE AS t_write5m, sum(cache_write_1h)::DOUBLE AS t_write1h, sum(cache_read)::DOUBLE AS t_read,
      sum(weight_input)::DOUBLE AS w_input, sum(weight_output)::DOUBLE AS w_output, sum(weight_write_5m)::DOUBLE AS w_write5m, sum(weight_write_1h)::DOUBLE AS w_write1h, sum(weight_read)::DOUBLE AS w_read,
      sum(weight_read * usd_per_weight)::DOUBLE AS u_read, sum(weight_output * usd_per_weight)::DOUBLE AS u_output
      FROM requests`);
    for (const grouping of ['agent_type', 'day', 'model', 'project']) {
      for (const component of ['input', 'output', 'write5m', 'write1h', 'read']) {
        const mine = rows.filter((x) => x.grouping === grouping && x.component === component);
        assert.ok(mine.length > 0, `${grouping} ${component}`);
        const tokens = mine.reduce((sum, x) => sum + Number(x.tokens), 0);
        const weight = mine.reduce((sum, x) => sum + Number(x.weight), 0);
        assert.equal(tokens, want[`t_${component}`], `${grouping} ${component} tokens`);
        assert.ok(Math.abs(weight - Number(want[`w_${component}`])) <= 1e-9 * Math.max(1, Number(want[`w_${component}`])), `${grouping} ${component} weight`);
        if (component === 'read' || component === 'output') {
          const usd = mine.reduce((sum, x) => sum + Number(x.usd ?? 0), 0);
          assert.ok(Math.abs(usd - Number(want[`u_${component}`])) <= 1e-9 * Math.max(1, Number(want[`u_${component}`])), `${grouping} ${component} usd`);
        }
      }
    }
  } finally {
    r.store.close();
  }
});

test('report_components with $top: the groups with the most USD, the rest summed as one, every total kept; days never folded', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    const all = await runQuery(r.store, 'report_components', {});
    const usdOf = (rows: typeof all, grp: unknown) => rows.filter((x) => x.grp === grp).reduce((s, x) => s + Number(x.usd ?? 0), 0);
    let folded = 0;
    for (const top of [1, 2, 1000]) {
      const some = await runQuery(r.store, 'report_components', { top });
      assert.deepEqual(
        some.filter((x) => x.grouping === 'day'),
        all.filter((x) => x.grouping === 'day'),
        `days as they are (top ${top})`,
      );
      for (const grouping of ['agent_type', 'model', 'project']) {
        const mine = all.filter((x) => x.grouping === grouping);
        const theirs = some.filter((x) => x.grouping === grouping);
        const groups = [...new Set(mine.map((x) => x.grp))];
        const shown = [...new Set(theirs.filter((x) => x.grp !== null).map((x) => x.grp))];
        assert.equal(shown.length, Math.min(top, groups.length), `${grouping}: ${top} shown`);
        // the shown groups are those with the most USD, as they were
        const ranked = groups.map((g) => ({ g, usd: usdOf(mine, g) })).sort((a, b) => b.usd - a.usd);
        for (const g of shown) assert.ok(usdOf(mine, g) >= ranked[shown.length - 1]!.usd - 1e-9, `${grouping} ${String(g)} ranks among the top ${top}`);
        for (const g of shown) assert.deepEqual(theirs.filter((x) => x.grp === g), mine.filter((x) => x.grp === g), `${grouping} ${String(g)} as it was`);
        const rest = theirs.filter((x) => x.grp === null);
        if (groups.length > top) {
          folded++;
          assert.equal(rest.length, 5, `${grouping}: the rest, one row per component`);
          for (const x of rest) assert.equal(Number(x.groups), groups.length - top, `${grouping}: the rest counts the groups folded`);
        } else {
          assert.equal(rest.length, 0, `${grouping}: nothing folded`);
        }
        for (const component of ['input', 'output', 'write5m', 'write1h', 'read']) {
          const a = mine.filter((x) => x.component === component);
          const b = theirs.filter((x) => x.component === component);
          assert.equal(b.reduce((s, x) => s + Number(x.tokens), 0), a.reduce((s, x) => s + Number(x.tokens), 0), `${grouping} ${component} tokens`);
          const wa = a.reduce((s, x) => s + Number(x.weight), 0);
          assert.ok(Math.abs(b.reduce((s, x) => s + Number(x.weight), 0) - wa) <= 1e-9 * Math.max(1, wa), `${grouping} ${component} weight`);
        }
      }
    }
    assert.ok(folded >= 2, 'the sample logs have more than one project and model, so something was folded');
    assert.ok(all.every((x) => Number(x.groups) === 1), 'without $top each row is one group');
  } finally {
    r.store.close();
  }
});

test('summary and report_components without $group give every grouping at once, each as asked for alone', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    for (const [query, params, groupings] of [
      ['report_components', {}, ['agent_type', 'day', 'model', 'project']],
      ['summary', { tz: 'UTC' }, ['day', 'model', 'project', 'total']],
      ['summary', { tz: 'Asia/Tokyo', since: '2026-02-11', project: 'p' }, ['day', 'model', 'project', 'total']],
    ] as const) {
      const all = await runQuery(r.store, query, params);
      assert.deepEqual([...new Set(all.map((x) => x.grouping))], groupings, query);
      for (const group of groupings) {
        const alone = await runQuery(r.store, query, { ...params, group });
        assert.ok(alone.length >= 1 && alone.length < all.length, `${query} ${group}`);
        assert.deepEqual(alone, all.filter((x) => x.grouping === group), `${query} ${group}`);
      }
    }
  } finally {
    r.store.close();
  }
});

test('Store.chunks gives every row, a chunk at a time, each value as getItem reads it (NULLs null); none when there are no rows', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  const rowsOf = async (sql: string, width: number, opts?: { keepHeap?: boolean }) => {
    const rows: unknown[][] = [];
    const sizes: number[] = [];
    for await (const chunk of r.store.chunks(sql, undefined, opts)) {
      sizes.push(chunk.rowCount);
      for (let i = 0; i < chunk.rowCount; i++) rows.push(Array.from({ length: width }, (_, c) => chunk.column(c).getItem(i)));
    }
    return { rows, sizes };
  };
  try {
    assert.deepEqual(await rowsOf(`SELECT 1::INTEGER AS a, 'x' AS b WHERE false`, 2), { rows: [], sizes: [] });
    const some = await rowsOf(`SELECT * FROM (VALUES (1, 'x', -2.5::DOUBLE, true), (2, NULL, 1e300, false)) v(a, b, c, d) ORDER BY a`, 4);
    assert.deepEqual(some.rows, [[1, 'x', -2.5, true], [2, null, 1e300, false]]);
    // more rows than one chunk (2,048): every one, in order, NULLs in later chunks too
    const many = await rowsOf(`SELECT CASE WHEN i IN (3000, 4999) THEN NULL ELSE i END::INTEGER, i::DOUBLE / 4 FROM range(5000) t(i) ORDER BY i`, 2, { keepHeap: true });
    assert.ok(many.sizes.length > 1, `${many.sizes.length} chunk`);
    assert.deepEqual(many.rows, Array.from({ length: 5000 }, (_, i) => [i === 3000 || i === 4999 ? null : i, i / 4]));
  } finally {
    r.store.close();
  }
});

test('Store.beside: a second connection answers as the store does, at the same time, sees later commits, and closes with it', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  const side = await r.store.beside();
  let closed = false;
  try {
    const sql = `SELECT chain_id, count(*)::INTEGER AS n, sum(cache_read)::DOUBLE AS read FROM requests GROUP BY chain_id ORDER BY chain_id`;
    // both connections asked at once, each with both ways of reading, one after the other (a
    // connection runs one statement at a time: connection.test.ts)
    const streamed = async (source: Pick<StoreReader, 'chunks'>) => {
      const rows: unknown[][] = [];
      for await (const chunk of source.chunks(sql)) for (let i = 0; i < chunk.rowCount; i++) rows.push([0, 1, 2].map((c) => chunk.column(c).getItem(i)));
      return rows;
    };
    const bothWays = async (source: StoreReader) => [await source.all(sql), await streamed(source)] as const;
    const [[own, ownStreamed], [beside, besideStreamed]] = await Promise.all([bothWays(r.store), bothWays(side)]);
    assert.ok(own.length > 10);
    assert.deepEqual(beside, own);
    assert.deepEqual(besideStreamed, ownStreamed);
    assert.deepEqual(ownStreamed, own.map((x) => [x.chain_id, x.n, x.read]));
    // a table the store's own connection creates and fills afterwards is there for the second one
    await r.store.run(`CREATE TABLE beside_probe AS SELECT 42 AS x`);
    assert.deepEqual(await side.all(`SELECT x FROM beside_probe`), [{ x: 42 }]);
    // a failing query is the caller's error, and the connection still answers after it
    await assert.rejects(side.all(`SELECT * FROM no_such_table`), /no_such_table/);
    assert.deepEqual(await side.all(`SELECT 1 AS one`), [{ one: 1 }]);
    r.store.close();
    closed = true;
    await assert.rejects(side.all(`SELECT 1`));
  } finally {
    if (!closed) r.store.close();
  }
});

test('CLI: a bundled query\'s --param since/until/tz is checked and written as --since/--until/--timezone are', () => {
  const db = path.join(tmp(), 's.duckdb');
  const summary = JSON.parse(cachelens(['summary', sampleLogs, '--db', db, '--since', '2026-02-11', '--json']).stdout) as { totals: { requests: number } };
  assert.ok(summary.totals.requests > 0);
  // 20260211 compared as text with '2026-02-11' chose no day at all
  const q = cachelens(['query', 'cost_by', sampleLogs, '--db', db, '--param', 'since=20260211', '--param', 'tz=UTC', '--json']);
  assert.equal(q.status, 0, q.stderr);
  const out = JSON.parse(q.stdout) as { params: Record<string, unknown>; rows: { requests: number }[] };
  assert.equal(out.params.since, '2026-02-11');
  assert.equal(out.rows.reduce((s, x) => s + x.requests, 0), summary.totals.requests);
  for (const [param, flag] of [['since=2026-2-11', '--param since'], ['until=yesterday', '--param until'], ['tz=Mars/Base', '--param tz']]) {
    const r = cachelens(['query', 'cost_by', sampleLogs, '--db', db, '--param', param!]);
    assert.equal(r.status, 2, `${param}: ${r.stdout}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    // as it was given: `--param since=2026-2-11`, not `--param since 2026-2-11`
    assert.ok(r.stderr.startsWith(`cachelens: ${flag}=${param!.split('=')[1]}: `), r.stderr);
  }
});

test('CLI: a bundled query\'s --param since after its until (or after --until) is a usage error, as --since after --until is', async () => {
  // it printed empty tables and exit 0, as if no day had usage
  await usageError(['query', 'cost_by', sampleLogs, '--db', ':memory:', '--param', 'since=2026-02-12', '--param', 'until=2026-02-11'], /^cachelens: --param since=2026-02-12 is after --param until=2026-02-11: no day is in that range$/);
  await usageError(['query', 'summary', sampleLogs, '--db', ':memory:', '--param', 'since=20260212', '--until', '2026-02-11'], /^cachelens: --param since=2026-02-12 is after --until 2026-02-11: no day is in that range$/);
  await usageError(['query', 'cost_by', '--parquet', sampleLogs, '--since', '2026-02-12', '--param', 'until=2026-02-11'], /^cachelens: --since 2026-02-12 is after --param until=2026-02-11: no day is in that range$/);
  // a range of one day runs
  const fine = cachelens(['query', 'cost_by', sampleLogs, '--db', path.join(tmp(), 's.duckdb'), '--param', 'since=2026-02-11', '--param', 'until=2026-02-11', '--json']);
  assert.equal(fine.status, 0, fine.stderr);
});

test('CLI: --since, --until or --project given to a query that has no such parameter is a usage error, not a filter passed over', async () => {
  // `query quality --since D` printed the counts of every day, the flag passed over without a word
  await usageError(['query', 'quality', sampleLogs, '--db', ':memory:', '--since', '2026-02-11'], /^cachelens: --since: quality has no \$since, so it would not choose what is counted \(it takes no parameters\)$/);
  await usageError(['query', 'zone_days', sampleLogs, '--db', ':memory:', '--until', '2026-02-11'], /^cachelens: --until: zone_days has no \$until, so it would not choose what is counted \(it takes \$tz\)$/);
  const file = path.join(tmp(), 'one.sql');
  writeFileSync(file, 'SELECT count(*) AS n FROM requests');
  await usageError(['query', file, sampleLogs, '--db', ':memory:', '--project', 'shop'], /^cachelens: --project: .*one\.sql has no \$project/);
  // a query that has them takes them
  const ok = cachelens(['query', 'cost_by', sampleLogs, '--db', ':memory:', '--since', '2026-02-11', '--project', 'shop', '--json']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal((JSON.parse(ok.stdout) as { params: Record<string, unknown> }).params.project, 'shop');
});

test('CLI: --param NAME given twice is a usage error, as an option given twice is', async () => {
  // the last value ran, the first dropped without a word
  await usageError(['query', 'cost_by', sampleLogs, '--db', ':memory:', '--param', 'by=model', '--param', 'by=day'], /^cachelens: --param by was given more than once \(give it once\)$/);
  const file = path.join(tmp(), 'p.sql');
  writeFileSync(file, 'SELECT $a AS a, $b AS b');
  await usageError(['query', file, '--parquet', sampleLogs, '--param', 'a=1', '--param', 'b=2', '--param', 'a=3'], /^cachelens: --param a was given more than once/);
});

test('CLI: --param NAME is taken in any case, as DuckDB takes $NAME: Project=x sets $project; two spellings of one name are one parameter given twice', async () => {
  // `--param Project=shop` said 'cost_by has no $Project'; in a FILE.sql, `$Project` and `$project` were
  // two names bound to two values, of which DuckDB (one parameter in any case) took one without a word
  assert.deepEqual(queryParams('SELECT $Project AS a, $project AS b, $tz AS c'), ['Project', 'tz']);
  const lower = cachelens(['query', 'cost_by', sampleLogs, '--db', ':memory:', '--param', 'project=shop', '--param', 'by=project', '--json']);
  const mixed = cachelens(['query', 'cost_by', sampleLogs, '--db', ':memory:', '--param', 'Project=shop', '--param', 'BY=project', '--json']);
  assert.equal(mixed.status, 0, mixed.stderr);
  assert.equal(mixed.stdout, lower.stdout);
  const rows = (JSON.parse(mixed.stdout) as { params: Record<string, unknown>; rows: { grp: string }[] });
  assert.equal(rows.params.project, 'shop');
  assert.ok(rows.rows.length > 0);
  const file = path.join(tmp(), 'cases.sql');
  writeFileSync(file, 'SELECT $Project AS a, $project AS b, $Since AS s');
  const own = cachelens(['query', file, sampleLogs, '--db', ':memory:', '--param', 'PROJECT=x', '--since', '2026-02-11', '--json']);
  assert.equal(own.status, 0, own.stderr);
  const result = JSON.parse(own.stdout) as { params: Record<string, unknown>; rows: Record<string, unknown>[] };
  // the names as the query first writes them; $Since takes --since as $since does
  assert.deepEqual(result.params, { Project: 'x', Since: '2026-02-11' });
  assert.deepEqual(result.rows, [{ a: 'x', b: 'x', s: '2026-02-11' }]);
  await usageError(['query', file, sampleLogs, '--db', ':memory:', '--param', 'Project=x', '--param', 'project=y'], /^cachelens: --param project was given more than once, as Project too \(a name in any case is one parameter, as DuckDB takes \$project: give it once\)$/);
});

test('CLI: a FILE.sql that is a directory or a device is a usage error, not an internal error', async () => {
  const dir = path.join(tmp(), 'dir.sql');
  mkdirSync(dir);
  await usageError(['query', dir, sampleLogs, '--db', ':memory:'], /^cachelens: not a file: .*dir\.sql \(a query of your own is the path of an existing \.sql file\)$/);
  await usageError(['query', dir, '--parquet', sampleLogs], /^cachelens: not a file: /);
});

test('CLI: a FILE.sql of several statements runs them all in turn and prints the last one\'s result; one of none is a usage error', async () => {
  const db = path.join(tmp(), 's.duckdb');
  const file = path.join(tmp(), 'several.sql');
  const out = path.join(tmp(), 'copied.csv');
  // the first one's result was printed, the others' dropped; a parameter in any but the last failed with "Values were not provided"
  writeFileSync(file, `SELECT 1 AS first;\nCREATE TEMP TABLE t AS SELECT $a::INTEGER AS a;\nCOPY (SELECT 7 AS x) TO '${out}';\nSELECT a, $b AS b FROM t; -- the end\n`);
  const r = cachelens(['query', file, sampleLogs, '--db', db, '--param', 'a=5', '--param', 'b=hi', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const json = JSON.parse(r.stdout) as { params: Record<string, unknown>; columns: string[]; rows: unknown[] };
  assert.deepEqual([json.params, json.columns, json.rows], [{ a: '5', b: 'hi' }, ['a', 'b'], [{ a: 5, b: 'hi' }]]);
  assert.equal(readFileSync(out, 'utf8').trim(), 'x\n7');
  writeFileSync(file, 'SELECT 1 AS a; SELECT 2 AS b');
  assert.equal(cachelens(['query', file, sampleLogs, '--db', db, '--csv']).stdout.trim(), 'b\n2');
  for (const text of ['', '-- nothing but a comment\n', '/* nor here */ ;\n;']) {
    writeFileSync(file, text);
    await usageError(['query', file, sampleLogs, '--db', ':memory:'], /^cachelens: query .*several\.sql: it holds no SQL statement$/);
  }
  writeFileSync(file, 'SELEC 1; SELECT 2');
  await usageError(['query', file, sampleLogs, '--db', ':memory:'], /^cachelens: query .*several\.sql failed: Parser Error: syntax error at or near "SELEC"$/);
  // a positional parameter takes no --param: one statement fails on it, and so does a later one (it was bound to NULL)
  for (const text of ['SELECT $1 AS a', 'SELECT 1 AS x; SELECT $1 AS a', 'SELECT ? AS a; SELECT 2']) {
    writeFileSync(file, text);
    await usageError(['query', file, sampleLogs, '--db', ':memory:'], /^cachelens: query .*several\.sql failed: Invalid Input Error: Expected 1 parameters, but none were supplied/);
  }
});

test('a $name inside a block comment, a quoted identifier or a dollar-quoted string is no parameter', async () => {
  const sql = `SELECT $x AS v /* $y */, $$it $z costs$$ AS d, $t$ $w $t$ AS e, "$q", '$s''$u' FROM (SELECT 1 AS "$q") -- $c\n WHERE $v IS NULL`;
  assert.deepEqual(queryParams(sql), ['x', 'v']);
  // an E'…' string's backslash escapes a quote: `E'it\'s $x'` is one string ($x was taken for a parameter, and bound the query failed)
  assert.deepEqual(queryParams(`SELECT E'it\\'s $x' AS a, e'\\\\' AS b, $v AS v, 'E' AS c`), ['v']);
  // $y was bound too, and DuckDB failed the whole query: "Failed to retrieve bind parameter index"
  const file = path.join(tmp(), 'commented.sql');
  writeFileSync(file, sql);
  const r = cachelens(['query', file, sampleLogs, '--db', ':memory:', '--param', 'x=1', '--csv']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), `v,d,e,$q,'$s''$u'\n1,it $z costs, $w ,1,$s'$u`);
  await usageError(['query', file, sampleLogs, '--db', ':memory:', '--param', 'y=1'], /^cachelens: --param y: .*commented\.sql has no \$y \(it takes \$x, \$v\)$/);
});

test('CLI: query --list --csv prints CSV, as a query\'s --csv does', () => {
  // the table came instead, --csv passed over without a word
  const r = cachelens(['query', '--list', '--csv']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines[0], 'name,purpose');
  assert.equal(lines.length, listQueries().length + 1);
  assert.ok(lines.some((l) => l.startsWith('cost_by,')), r.stdout);
});

test('CLI: query --list with a query name is a usage error (the name was passed over, the list printed)', async () => {
  await usageError(['query', '--list', 'summary'], /^cachelens: --list lists every query: summary is not read \(cachelens query summary runs it\)$/);
  await usageError(['query', 'cost_by', '--list'], /--list lists every query: cost_by is not read/);
});

test('CLI: query --list with --parquet, --param, the filters or logs is a usage error: nothing is read or run, and they were passed over', async () => {
  for (const extra of [['--parquet', sampleLogs], ['--param', 'by=model'], ['--since', '2026-02-11'], ['--project', 'shop'], ['--timezone', 'UTC'], ['--db', ':memory:'], ['--rebuild']]) {
    await usageError(['query', '--list', ...extra], new RegExp(`^cachelens: ${extra[0]} has no use with --list \\(it lists the bundled queries, and runs none\\)$`));
  }
  await usageError(['query', 'cost_by', sampleLogs, '--list'], /--list lists every query: cost_by is not read/);
  // logs alone are taken for the query: said as logs, not with a `cachelens query LOGS runs it` that finds no such query (review)
  await usageError(['query', '--list', sampleLogs], new RegExp(`^cachelens: --list lists the bundled queries and reads no logs: ${sampleLogs.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not read$`));
});

test('CLI: a column named __proto__ (a PIVOT over transcript text can make one) is printed as any other', () => {
  // assigned to the row, it set the row's prototype: missing from --json and the table, `{}` in --csv
  const file = path.join(tmp(), 'proto.sql');
  writeFileSync(file, `PIVOT (SELECT '__proto__' AS k, 1 AS v UNION ALL SELECT 'b', 2) ON k USING sum(v)`);
  const json = cachelens(['query', file, sampleLogs, '--db', ':memory:', '--json']);
  assert.equal(json.status, 0, json.stderr);
  const out = JSON.parse(json.stdout) as { columns: string[]; rows: Record<string, unknown>[] };
  assert.deepEqual(out.columns, ['__proto__', 'b']);
  assert.ok(Object.prototype.hasOwnProperty.call(out.rows[0], '__proto__'), json.stdout);
  assert.deepEqual(Object.entries(out.rows[0]!), [['__proto__', 1], ['b', 2]]);
  assert.equal(cachelens(['query', file, sampleLogs, '--db', ':memory:', '--csv']).stdout.trim(), '__proto__,b\n1,2');
  assert.match(cachelens(['query', file, sampleLogs, '--db', ':memory:']).stdout, /^__proto__ +b\n/);
});

test('CLI: a query of any types prints them exactly, and a query without rows keeps its columns', () => {
  const db = path.join(tmp(), 's.duckdb');
  const file = path.join(tmp(), 'types.sql');
  writeFileSync(file, `SELECT {'n': count(*)} AS s, 12345678901234567890::UBIGINT AS big, DATE '2026-02-10' AS d,
    TIMESTAMPTZ '2026-02-10 09:02:12.849+00' AS ts, [min(t)] AS l, TIME '10:00:01' AS tm, TIME '23:59:59.25' AS tf FROM requests`);
  // a struct holding count(*) (a BIGINT) was an internal error; big lost its last digits, d and ts were epoch ms
  for (const extra of [[], ['--json'], ['--csv']]) {
    const r = cachelens(['query', file, sampleLogs, '--db', db, ...extra]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /12345678901234567890/);
    assert.match(r.stdout, /2026-02-10T09:02:12\.849Z/);
  }
  const out = JSON.parse(cachelens(['query', file, sampleLogs, '--db', db, '--json']).stdout) as { rows: Record<string, unknown>[] };
  assert.deepEqual(Object.keys(out.rows[0]!), ['s', 'big', 'd', 'ts', 'l', 'tm', 'tf']);
  assert.deepEqual([out.rows[0]!.tm, out.rows[0]!.tf], ['10:00:01', '23:59:59.250000']);
  assert.equal(typeof (out.rows[0]!.s as { n: unknown }).n, 'number');
  assert.equal(out.rows[0]!.big, '12345678901234567890');
  assert.equal(out.rows[0]!.d, '2026-02-10');
  assert.equal(typeof (out.rows[0]!.l as unknown[])[0], 'number');

  const none = path.join(tmp(), 'none.sql');
  writeFileSync(none, `SELECT chain_id, agent_type FROM chains WHERE false`);
  const csv = cachelens(['query', none, sampleLogs, '--db', db, '--csv']);
  assert.equal(csv.status, 0, csv.stderr);
  assert.equal(csv.stdout.trim(), 'chain_id,agent_type');
  const json = JSON.parse(cachelens(['query', none, sampleLogs, '--db', db, '--json']).stdout) as { columns: string[]; rows: unknown[] };
  assert.deepEqual(json, { ...json, columns: ['chain_id', 'agent_type'], rows: [] });
});

test('CLI: a query of the user\'s that reads or writes a file that is not there fails as the query, not as a damaged store', async () => {
  // `read_csv` of a missing file, `COPY … TO` a missing directory: DuckDB's IO Error was taken for the store's,
  // `store … is damaged: IO Error: No files found … (delete it, or use --db to choose another store)`
  const db = path.join(tmp(), 's.duckdb');
  const missing = path.join(tmp(), 'missing');
  const read = path.join(tmp(), 'read.sql');
  writeFileSync(read, `SELECT * FROM read_csv('${missing}/x.csv')`);
  const write = path.join(tmp(), 'write.sql');
  writeFileSync(write, `COPY (SELECT 1 AS a) TO '${missing}/y.csv'`);
  for (const [file, said] of [[read, /No files found that match the pattern/], [write, /Cannot open file/]] as const) {
    for (const where of [db, ':memory:']) {
      await usageError(['query', file, sampleLogs, '--db', where], new RegExp(`^cachelens: query .*${path.basename(file)} failed: IO Error: ${said.source}`));
      const r = cachelens(['query', file, sampleLogs, '--db', where]);
      assert.doesNotMatch(r.stderr, /damaged|delete it/, r.stderr);
    }
  }
  // and the store answers as before
  const ok = cachelens(['query', 'cost_by', sampleLogs, '--db', db, '--json']);
  assert.equal(ok.status, 0, ok.stderr);
});

test('writeTargets: the paths a COPY … TO, EXPORT DATABASE or ATTACH names, not a TO inside a string, a comment or a quoted name', () => {
  const sql = `COPY (SELECT 'TO x', "TO" FROM t) TO 'out.csv' (HEADER); -- COPY x TO 'c.csv'
    ATTACH 'a.duckdb' AS a; /* COPY y TO 'd' */ copy t to E'it\\'s.csv'; EXPORT DATABASE 'exp'; COPY t FROM 'in.csv';
    SELECT 'COPY t TO ''x'''; COPY FROM DATABASE a TO b; attach database if not exists 'z''q.db'`;
  assert.deepEqual(writeTargets(sql), ['out.csv', 'a.duckdb', "it's.csv", 'exp', "z'q.db"]);
  assert.deepEqual(writeTargets('SELECT 1'), []);
  assert.deepEqual(writeTargets("PREPARE p(INTEGER) AS COPY (SELECT $1) TO 'p.csv'; EXPLAIN ANALYZE COPY t TO 'e.csv'; PREPARE q AS SELECT 'x' AS copy"), ['p.csv', 'e.csv']);
  assert.deepEqual(writeTargets("PRAGMA enable_profiling='json'; SET profiling_output = 'p.json'; PRAGMA profiling_output('q.json'); SET GLOBAL temp_directory TO 't'; SET threads = 1; SET search_path = 'x'"), ['p.json', 'q.json', 't']);
  // a dollar-quoted string and a double-quoted name are paths where DuckDB takes them as one; the
  // profile's other name and the query log write files too (each wrote into the logs unchecked)
  const quoted = `COPY t TO $$a.csv$$; COPY t TO $x$b.csv$x$; COPY t TO "c.csv"; EXPORT DATABASE "db" TO 'dir';
    ATTACH "q.duckdb" AS "z"; SET profile_output = 'pp.json'; SET log_query_path = 'ql.txt'; SELECT $$TO 'no.csv'$$`;
  assert.deepEqual(writeTargets(quoted), ['a.csv', 'b.csv', 'c.csv', 'dir', 'q.duckdb', 'pp.json', 'ql.txt']);
});

test('networkSettings: a SET, RESET or PRAGMA of a setting that lets DuckDB install or load an extension, not one in a string or of another setting', () => {
  const sql = `SET autoinstall_known_extensions = true; RESET autoload_known_extensions; PRAGMA custom_extension_repository = 'http://x';
    SET GLOBAL allow_unsigned_extensions TO true; SET threads = 1; SELECT 'SET extension_directory = 1' AS s; -- SET allow_community_extensions = true`;
  assert.deepEqual(networkSettings(sql), ['autoinstall_known_extensions', 'autoload_known_extensions', 'custom_extension_repository', 'allow_unsigned_extensions']);
  assert.deepEqual(networkSettings('SELECT 1'), []);
});

test('CLI: a query of the user\'s that turns extension autoinstall or autoload back on is refused before it runs, and nothing is downloaded', () => {
  const dir = tmp();
  const home = path.join(dir, 'home');
  const file = path.join(dir, 'net.sql');
  writeFileSync(file, "SET autoinstall_known_extensions = true;\nSET autoload_known_extensions = true;\nSELECT * FROM read_csv('https://example.com/x.csv')");
  const r = spawnSync(process.execPath, [cli, 'query', file, sampleLogs, '--db', ':memory:'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', HOME: home } });
  // it had DuckDB try to install httpfs into ~/.duckdb/extensions
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.split('\n')[0], `cachelens: query ${file}: setting autoinstall_known_extensions is refused: cachelens never touches the network and loads no extension (parquet, json and icu are built in; run DuckDB itself to use another)`);
  assert.ok(!existsSync(path.join(home, '.duckdb')), 'no extension directory was made');
});

test('CLI: a query of the user\'s that would write into the logs being read (COPY … TO, EXPORT DATABASE, ATTACH) is refused before it runs', () => {
  const dir = tmp();
  const logs = path.join(dir, 'logs');
  cpSync(path.join(sampleLogs, 'projects'), path.join(logs, 'projects'), { recursive: true });
  const env = { ...process.env, NO_COLOR: '1', HOME: path.join(dir, 'home') };
  const outside = path.join(dir, 'out.csv');
  const cases: [string, string][] = [
    [`COPY (SELECT 1 AS a) TO '${logs}/evil.csv'`, `${logs}/evil.csv`],
    [`SELECT 1;\nCOPY (SELECT 1 AS a) TO 'logs/projects/evil.csv' (HEADER);`, 'logs/projects/evil.csv'],
    [`EXPORT DATABASE 'logs/dump'`, 'logs/dump'],
    [`PRAGMA enable_profiling='json';\nSET profiling_output='logs/prof.json';\nSELECT 1`, 'logs/prof.json'],
    [`ATTACH '${logs}/projects/x.duckdb' AS x; CREATE TABLE x.t AS SELECT 1`, `${logs}/projects/x.duckdb`],
    // a dollar-quoted path, a double-quoted one, a duckdb: prefix and the query log wrote there unchecked
    [`COPY (SELECT 1 AS a) TO $$${logs}/dollar.csv$$`, `${logs}/dollar.csv`],
    [`COPY (SELECT 1 AS a) TO "logs/ident.csv"`, 'logs/ident.csv'],
    [`ATTACH 'duckdb:${logs}/projects/pre.duckdb' AS z; CREATE TABLE z.t AS SELECT 1`, `duckdb:${logs}/projects/pre.duckdb`],
    [`SET log_query_path = 'logs/qlog.txt'; SELECT 1`, 'logs/qlog.txt'],
  ];
  for (const [sql, target] of cases) {
    const file = path.join(dir, 'w.sql');
    writeFileSync(file, sql);
    const r = spawnSync(process.execPath, [cli, 'query', file, 'logs', '--db', ':memory:'], { encoding: 'utf8', env, cwd: dir });
    // it was written there, as anywhere else
    assert.equal(r.status, 2, `${sql}: ${r.stderr}`);
    assert.equal(r.stderr.trim(), `cachelens: query ${file}: write target ${target} is inside the logs being read (${logs}) (cachelens never writes into log directories; choose another path)`);
  }
  assert.deepEqual(readdirSync(logs), ['projects']);
  assert.deepEqual(readdirSync(path.join(logs, 'projects')).sort(), readdirSync(path.join(sampleLogs, 'projects')).sort());
  // a database in memory is no path, wherever the query runs from
  const memory = path.join(dir, 'memory.sql');
  writeFileSync(memory, "ATTACH ':memory:' AS m; SELECT 1 AS one");
  const inMemory = spawnSync(process.execPath, [cli, 'query', memory, logs, '--db', ':memory:', '--json'], { encoding: 'utf8', env, cwd: path.join(logs, 'projects') });
  assert.equal(inMemory.status, 0, inMemory.stderr);
  // elsewhere, and a TO inside a string, are written and run as before
  const file = path.join(dir, 'ok.sql');
  writeFileSync(file, `COPY (SELECT 'COPY t TO ''logs/x.csv''' AS s) TO '${outside}'`);
  const ok = spawnSync(process.execPath, [cli, 'query', file, 'logs', '--db', ':memory:', '--json'], { encoding: 'utf8', env, cwd: dir });
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(readFileSync(outside, 'utf8'), /COPY t TO 'logs\/x\.csv'/);
});

test('CLI: --param constructor= (or toString=, __proto__=) is a parameter as any other, given once', async () => {
  // `in` an object found them on Object.prototype: `--param constructor was given more than once`, and
  // $constructor without --param was bound to Object itself (`Cannot create values of type ANY`)
  const file = path.join(tmp(), 'names.sql');
  writeFileSync(file, 'SELECT $constructor AS c, $toString AS t, $__proto__ AS p');
  const given = cachelens(['query', file, sampleLogs, '--db', ':memory:', '--param', 'constructor=5', '--param', 'toString=x', '--param', '__proto__=y', '--json']);
  assert.equal(given.status, 0, given.stderr);
  assert.deepEqual((JSON.parse(given.stdout) as { rows: unknown[] }).rows, [{ c: '5', t: 'x', p: 'y' }]);
  const none = cachelens(['query', file, sampleLogs, '--db', ':memory:', '--json']);
  assert.equal(none.status, 0, none.stderr);
  assert.deepEqual((JSON.parse(none.stdout) as { rows: unknown[] }).rows, [{ c: null, t: null, p: null }]);
  await usageError(['query', file, sampleLogs, '--db', ':memory:', '--param', 'constructor=1', '--param', 'constructor=2'], /^cachelens: --param constructor was given more than once/);
});

test('CLI: a bundled query\'s parameter outside its values is a usage error naming the parameter and its values, before the store is read', async () => {
  // the store's directory does not exist: a check made after opening it would fail there instead
  const db = path.join(tmp(), 'missing-dir', 's.duckdb');
  const bad: [string, string, RegExp][] = [
    ['cost_by', 'by=', /^cachelens: --param by=: cost_by takes by= day, project, model or agent_type \(without --param by: day\)$/],
    ['cost_by', 'by=colour', /^cachelens: --param by=colour: cost_by takes by= day, project, model or agent_type/],
    ['summary', 'group=models', /^cachelens: --param group=models: summary takes group= total, model, project or day \(without --param group: every grouping\)$/],
    ['report_components', 'group=total', /^cachelens: --param group=total: report_components takes group= day, project, model or agent_type/],
    ['report_components', 'top=abc', /^cachelens: --param top=abc: report_components takes top= a whole number from 1 to 1,000,000,000 \(without --param top: every group\)$/],
    ['report_components', 'top=0', /^cachelens: --param top=0: report_components takes top= a whole number from 1 to 1,000,000,000/],
    ['repurchase', 'all=yes', /^cachelens: --param all=yes: repurchase takes all= true or false \(without --param all: false\)$/],
    ['repurchase', 'jitter=-1', /^cachelens: --param jitter=-1: repurchase takes jitter= a whole number from 0 to 1,000,000,000 \(without --param jitter: 1024\)$/],
  ];
  for (const [q, p, re] of bad) await usageError(['query', q, sampleLogs, '--db', db, '--param', p], re);
  assert.ok(!existsSync(path.dirname(db)), 'no store was made');
  // a value in another case or with spaces is the value; it runs as it is written in the SQL
  const ok = cachelens(['query', 'cost_by', sampleLogs, '--db', ':memory:', '--param', 'by= Model ', '--json']);
  assert.equal(ok.status, 0, ok.stderr);
  const j = JSON.parse(ok.stdout) as { params: Record<string, unknown>; rows: { grp: string }[] };
  assert.equal(j.params.by, 'model');
  assert.ok(j.rows.length > 0 && j.rows.every((r) => r.grp.startsWith('claude-')), JSON.stringify(j.rows.map((r) => r.grp)));
});

test('CLI: a bundled query\'s bad --param value is said with the name as it was typed, not as the query spells it', async () => {
  // `--param BY=x` was said as `--param by=x`, a spelling the user never wrote
  const db = path.join(tmp(), 'missing-dir', 's.duckdb');
  await usageError(['query', 'cost_by', sampleLogs, '--db', db, '--param', 'BY=x'], /^cachelens: --param BY=x: cost_by takes by= day, project, model or agent_type \(without --param BY: day\)$/);
  await usageError(['query', 'report_components', sampleLogs, '--db', db, '--param', 'Top=0'], /^cachelens: --param Top=0: report_components takes top= a whole number from 1 to 1,000,000,000/);
  await usageError(['query', 'cost_by', sampleLogs, '--db', db, '--param', 'TZ=Mars/Base'], /^cachelens: --param TZ=Mars\/Base: /);
  await usageError(['query', 'cost_by', sampleLogs, '--db', db, '--param', 'Since=2026-2-11'], /^cachelens: --param Since=2026-2-11: /);
  await usageError(['query', 'cost_by', sampleLogs, '--db', db, '--param', 'SINCE=2026-02-12', '--param', 'Until=2026-02-11'], /^cachelens: --param SINCE=2026-02-12 is after --param Until=2026-02-11: no day is in that range$/);
  assert.ok(!existsSync(path.dirname(db)), 'no store was made');
});

test('CLI: a whole-number parameter is taken up to 1,000,000,000, and one above is refused as out of range, not as no whole number', async () => {
  // jitter=1000000000 (anatomy --jitter's limit) was refused as "a whole number of 0 or more"
  const top = cachelens(['query', 'repurchase', sampleLogs, '--db', ':memory:', '--param', 'jitter=1000000000', '--json']);
  assert.equal(top.status, 0, top.stderr);
  assert.equal((JSON.parse(top.stdout) as { params: Record<string, unknown> }).params.jitter, '1000000000');
  await usageError(['query', 'repurchase', '--parquet', sampleLogs, '--param', 'jitter=10000000000'], /^cachelens: --param jitter=10000000000: repurchase takes jitter= a whole number from 0 to 1,000,000,000 \(without --param jitter: 1024\)$/);
  await usageError(['query', 'report_components', '--parquet', sampleLogs, '--param', 'top=99999999999999999999'], /^cachelens: --param top=99999999999999999999: report_components takes top= a whole number from 1 to 1,000,000,000/);
});

test('CLI: --param since=/until=/project=/tz= beside the option setting the same parameter is a usage error, not the option passed over', async () => {
  // --since 2026-02-12 --param since=2026-02-11 counted from the 11th, without a word
  const file = path.join(tmp(), 'own.sql');
  writeFileSync(file, 'SELECT $since AS s, $tz AS z');
  const cases: [string[], RegExp][] = [
    [['--since', '2026-02-12', '--param', 'since=2026-02-11'], /^cachelens: --param since=2026-02-11 and --since 2026-02-12 both set \$since \(give one of them\)$/],
    [['--until', '2026-02-12', '--param', 'until=2026-02-11'], /^cachelens: --param until=2026-02-11 and --until 2026-02-12 both set \$until/],
    [['--project', 'shop', '--param', 'Project=blog'], /^cachelens: --param Project=blog and --project shop both set \$project/],
    [['--timezone', 'Asia/Tokyo', '--param', 'tz=UTC'], /^cachelens: --param tz=UTC and --timezone Asia\/Tokyo both set \$tz/],
  ];
  for (const [args, re] of cases) await usageError(['query', 'cost_by', '--parquet', sampleLogs, ...args], re);
  await usageError(['query', file, '--parquet', sampleLogs, '--timezone', 'UTC', '--param', 'tz=Asia/Tokyo'], /both set \$tz/);
  // the name as the user typed it (`SINCE`), as the other --param errors say it; an empty option shown quoted, not as nothing
  await usageError(['query', 'summary', '--parquet', sampleLogs, '--since', '2026-02-12', '--param', 'SINCE=2026-02-11'], /^cachelens: --param SINCE=2026-02-11 and --since 2026-02-12 both set \$since \(give one of them\)$/);
  await usageError(['query', 'summary', '--parquet', sampleLogs, '--since', '', '--param', 'since=2026-02-11'], /^cachelens: --param since=2026-02-11 and --since '' both set \$since/);
  // an empty --param leaves the option's value, as before
  const r = cachelens(['query', 'cost_by', sampleLogs, '--db', ':memory:', '--since', '2026-02-11', '--param', 'since=', '--json']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { params: Record<string, unknown> }).params.since, '2026-02-11');
});

test('every value the query command lets through for a bundled query\'s choice parameter is one its SQL takes: each runs and answers rows (BUNDLED_CHOICES and the SQL do not drift apart)', async () => {
  const r = await run([sampleLogs], path.join(tmp(), 's.duckdb'));
  try {
    for (const [query, params] of Object.entries(BUNDLED_CHOICES)) {
      for (const [name, values] of Object.entries(params)) {
        assert.ok(queryParams(querySql(query)).includes(name), `${query} has $${name}`);
        for (const value of values) {
          const rows = await runQuery(r.store, query, { [name]: value });
          assert.ok(rows.length > 0, `${query} ${name}=${value} answered no rows`);
        }
      }
    }
  } finally {
    r.store.close();
  }
});
