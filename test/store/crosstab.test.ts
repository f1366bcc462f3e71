/**
 * The cross-tab (SPEC §4) on the sample corpus reproduces the field note's perfect split, on the
 * real logs shows what is there, and every dimension and measure adds up to its totals.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DIMENSIONS, MEASURES, crosstab, parseDimension, parseMeasure, type CrosstabResult, type Dimension, type Measure } from '../../src/analyses/crosstab.js';
import { usePortableViews } from '../../src/store/portable.js';
import { formatCrosstab } from '../../src/reporters/crosstab.js';
import type { Store } from '../../src/store/store.js';
import { CONDENSE, realLogs, repoRoot, run, tmp } from './helpers.js';

const sampleLogs = path.join(repoRoot, 'sample-logs');

async function withStore<T>(root: string, f: (s: Store) => Promise<T>): Promise<T> {
  const r = await run([root], path.join(tmp(), 's.duckdb'));
  try {
    await usePortableViews(r.store);
    return await f(r.store);
  } finally {
    r.store.close();
  }
}

const cell = (r: CrosstabResult, row: unknown, col: unknown) => r.cells.find((c) => c.row === row && c.col === col)?.value;

test('sample corpus: resolved definitions have 0 skill_listing, lost ones > 0 with attachments equal to rounds of several requests', async () => {
  const truth = JSON.parse(readFileSync(path.join(sampleLogs, 'truth.json'), 'utf8')) as { chains: { definition: string | null; rounds: number; requests: number }[] };
  const lost = truth.chains.filter((c) => c.definition === 'lost');
  const resolved = truth.chains.filter((c) => c.definition === 'resolved');
  assert.ok(lost.length > 0 && resolved.length > 0);
  await withStore(sampleLogs, async (store) => {
    const r = await crosstab(store, { rows: 'definition', cols: 'has_skill_listing', timezone: 'UTC' });
    assert.deepEqual(r.cols, ['no', 'yes']);
    assert.equal(cell(r, 'resolved', 'no'), resolved.length);
    assert.equal(cell(r, 'resolved', 'yes'), undefined, 'no resolved chain has a skill_listing');
    assert.equal(cell(r, 'lost', 'yes'), lost.length);
    assert.equal(cell(r, 'lost', 'no'), undefined, 'every lost chain has a skill_listing');
    assert.equal(cell(r, null, null), truth.chains.length);
    const lostYes = r.attachments_equal_rounds.find((e) => e.row === 'lost' && e.col === 'yes')!;
    assert.deepEqual(lostYes, { row: 'lost', col: 'yes', chains: lost.length, matching: lost.length, equal: true });
    assert.equal(r.attachments_equal_rounds.find((e) => e.row === 'resolved')!.equal, false);
    // the rounds of the lost agents hold several requests each
    assert.ok(lost.every((c) => c.requests > c.rounds));
    const perRound = await crosstab(store, { rows: 'definition', cols: 'has_skill_listing', measure: 'requests', timezone: 'UTC' });
    assert.ok((cell(perRound, 'lost', 'yes') as number) > lost.reduce((s, c) => s + c.rounds, 0));

    // by agent type, subagents only: the lost planner and reviewer are the only cells with listings
    const byType = await crosstab(store, { rows: 'agent_type', cols: 'has_skill_listing', timezone: 'UTC', kind: 'subagent' });
    const withListing = byType.attachments_equal_rounds.filter((e) => e.col === 'yes');
    assert.ok(withListing.length > 0 && withListing.every((e) => e.equal));
    assert.ok(!byType.rows.includes('main'));
  });
});

test('real logs: each condense-chat main thread is one round of 5–13 requests with one initial skill_listing', async () => {
  await withStore(path.join(realLogs, CONDENSE), async (store) => {
    const r = await crosstab(store, { rows: 'agent_type', cols: 'has_skill_listing', timezone: 'UTC' });
    assert.deepEqual([r.rows, r.cols], [['main'], ['yes']]);
    assert.deepEqual(r.attachments_equal_rounds, [{ row: 'main', col: 'yes', chains: 6, matching: 6, equal: true }]);
    const rounds = await crosstab(store, { rows: 'rounds', cols: 'skill_listing', timezone: 'UTC' });
    assert.deepEqual([rounds.rows, rounds.cols, cell(rounds, 1, 1)], [[1], [1], 6]);
    const chains = await store.all(`SELECT requests FROM chains ORDER BY requests`);
    assert.ok(chains.every((c) => (c.requests as number) >= 5 && (c.requests as number) <= 13), JSON.stringify(chains));
  });
  // and over all the real logs: no chain is lost or resolved (no meta.json with a spawn to compare); main threads are `main`
  await withStore(realLogs, async (store) => {
    const r = await crosstab(store, { rows: 'definition', cols: 'has_skill_listing', timezone: 'UTC' });
    assert.deepEqual(r.rows, ['main', 'unknown']);
  });
});

test('every dimension against definition: cells add up to the row, column and grand totals', async () => {
  await withStore(sampleLogs, async (store) => {
    const [{ n }] = await store.all(`SELECT count(*) AS n FROM chains`);
    for (const dim of Object.keys(DIMENSIONS) as Dimension[]) {
      if (dim === 'definition') continue;
      const r = await crosstab(store, { rows: dim, cols: 'definition', timezone: 'UTC' });
      assert.equal(cell(r, null, null), n, dim);
      const inner = r.cells.filter((c) => c.row !== null && c.col !== null);
      for (const row of r.rows) assert.equal(inner.filter((c) => c.row === row).reduce((s, c) => s + c.value!, 0), cell(r, row, null), `${dim} ${row}`);
      for (const col of r.cols) assert.equal(inner.filter((c) => c.col === col).reduce((s, c) => s + c.value!, 0), cell(r, null, col), `${dim} ${col}`);
    }
    const buckets = await crosstab(store, { rows: 'rounds_bucket', cols: 'kind', timezone: 'UTC' });
    assert.deepEqual(buckets.rows, ['1', '2-3', '4-9'].filter((b) => buckets.rows.includes(b)));
  });
});

test('measures: totals equal the requests table; ratios are ratios of sums', async () => {
  await withStore(sampleLogs, async (store) => {
    const [t] = await store.all(
      `SELECT count(*) AS requests, sum(usd) AS usd, sum(weight) AS weight, sum(weight_write_5m + weight_write_1h) / sum(weight_read) AS wr,
              sum(cache_read) / sum(prompt) AS hit FROM requests`,
    );
    const total = async (m: Measure) => cell(await crosstab(store, { rows: 'model', cols: 'ttl', measure: m, timezone: 'UTC' }), null, null);
    assert.equal(await total('requests'), t.requests);
    assert.ok(Math.abs((await total('usd'))! - (t.usd as number)) < 1e-6);
    assert.ok(Math.abs((await total('weight'))! - (t.weight as number)) < 1e-3);
    assert.ok(Math.abs((await total('write_read_ratio'))! - (t.wr as number)) < 1e-9);
    assert.ok(Math.abs((await total('hit_ratio'))! - (t.hit as number)) < 1e-9);
    const [re] = await store.all(`SELECT count(*) AS n FROM (SELECT row_number() OVER (PARTITION BY chain_id, hash ORDER BY t, line) AS k FROM attachments) WHERE k > 1`);
    assert.equal(await total('reattachments'), re.n);
    assert.ok(Object.keys(MEASURES).length >= 7);
  });
});

test('unpriced requests: each cell counts them; priced measures over them are marked partial (+?), never silently complete', async () => {
  // the sample corpus has 4 requests of an unpriced model (claude-mystery-9)
  await withStore(sampleLogs, async (store) => {
    const [t] = await store.all(`SELECT count(*) FILTER (WHERE usd IS NULL) AS n FROM requests`);
    assert.ok(Number(t.n) > 0);
    const r = await crosstab(store, { rows: 'model', cols: 'ttl', measure: 'usd', timezone: 'UTC' });
    assert.equal(r.cells.find((c) => c.row === null && c.col === null)!.unpriced_requests, Number(t.n));
    const mystery = r.cells.filter((c) => c.row === 'claude-mystery-9' && c.col !== null);
    assert.ok(mystery.length > 0 && mystery.every((c) => c.value === null && c.unpriced_requests > 0));
    const text = formatCrosstab(r, false);
    assert.match(text, /^total\s.*\$\S+ \+\?$/m);
    assert.match(text, new RegExp(`\\+\\? ${t.n} requests of unpriced models are left out`));
    // one unpriced request is one, in the singular (it said '+? 1 requests of unpriced models are left out')
    const one = { ...r, cells: r.cells.map((c) => (c.row === null && c.col === null ? { ...c, unpriced_requests: 1 } : c)) };
    assert.match(formatCrosstab(one, false), /^\+\? 1 request of an unpriced model is left out/m);
    // a measure that needs no price is complete
    assert.doesNotMatch(formatCrosstab(await crosstab(store, { rows: 'model', cols: 'ttl', measure: 'requests', timezone: 'UTC' }), false), /\+\?/);
  });
});

test('CLI: crosstab --json has the documented shape; a bad dimension is a one-line error', () => {
  const cli = path.join(repoRoot, 'dist/cli.js');
  const db = path.join(tmp(), 's.duckdb');
  const ok = spawnSync(process.execPath, [cli, 'crosstab', sampleLogs, '--db', db, '--rows', 'definition', '--cols', 'has_skill_listing', '--json'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.equal(ok.status, 0, ok.stderr);
  const j = JSON.parse(ok.stdout) as Record<string, unknown>;
  for (const k of ['rows', 'cols', 'cells', 'attachments_equal_rounds']) assert.ok(Array.isArray(j[k]), k);
  const eq = j.attachments_equal_rounds as Record<string, unknown>[];
  assert.deepEqual(Object.keys(eq[0]!).sort(), ['chains', 'col', 'equal', 'matching', 'row']);
  // definitions most to least certain, not alphabetically (lost, main, resolved, unknown): rows, cells and the equal-rounds list
  const order = ['main', 'resolved', 'lost', 'unknown'];
  assert.deepEqual(j.rows, order);
  const firsts = (xs: Array<{ row: unknown }>) => xs.map((x) => x.row).filter((r, i, all) => r !== null && all.indexOf(r) === i);
  assert.deepEqual(firsts(j.cells as Array<{ row: unknown }>), order);
  assert.deepEqual(firsts(eq as Array<{ row: unknown }>), order);
  const text = spawnSync(process.execPath, [cli, 'crosstab', sampleLogs, '--db', db], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.match(text.stdout, /lost × yes: yes — \d+ of \d+ chains/);
  assert.deepEqual(text.stdout.split('\n').map((l) => /^(\w+) /.exec(l)?.[1]).filter((w) => w !== undefined && order.includes(w)), order, 'the table\'s rows');
  const asCols = JSON.parse(spawnSync(process.execPath, [cli, 'crosstab', sampleLogs, '--db', db, '--rows', 'kind', '--cols', 'definition', '--json'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } }).stdout);
  assert.deepEqual(asCols.cols, order);
  const bad = spawnSync(process.execPath, [cli, 'crosstab', sampleLogs, '--db', db, '--rows', 'colour'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr.trim(), /^cachelens: --rows colour: not a dimension \(one of agent_type, /);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
});

test('CLI: a crosstab of no chains prints its empty table, without the attachments heading it has no lines for', () => {
  const cli = path.join(repoRoot, 'dist/cli.js');
  const empty = path.join(tmp(), 'logs');
  mkdirSync(path.join(empty, 'projects'), { recursive: true });
  const r = spawnSync(process.execPath, [cli, 'crosstab', empty, '--db', ':memory:'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^total +│ +0$/m);
  assert.doesNotMatch(r.stdout, /skill_listing attachments per chain/);
});

test('every SPEC §4 dimension and measure is accepted as SPEC spells it; an unknown measure is a one-line error, exit 2', () => {
  const dims: [string, Dimension][] = [
    ['agent_type', 'agent_type'], ['agent type', 'agent_type'], ['namespaced', 'namespaced'], ['model', 'model'], ['project', 'project'],
    ['session', 'session'], ['day', 'day'], ['TTL', 'ttl'], ['has_skill_listing', 'has_skill_listing'], ['skill_listing count', 'skill_listing'],
    ['rounds bucket', 'rounds_bucket'], ['definition', 'definition'], ['rounds', 'rounds'], ['Definition', 'definition'],
  ];
  for (const [s, d] of dims) assert.equal(parseDimension(s, '--rows'), d, s);
  const measures: [string, Measure][] = [
    ['chains', 'chains'], ['requests', 'requests'], ['weight', 'weight'], ['USD', 'usd'], ['write:read ratio', 'write_read_ratio'],
    ['write:read', 'write_read_ratio'], ['hit ratio', 'hit_ratio'], ['re-attachments', 'reattachments'],
  ];
  for (const [s, m] of measures) assert.equal(parseMeasure(s), m, s);
  for (const s of ['constructor', 'toString', '__proto__', 'rounds_bucket_', '']) {
    assert.throws(() => parseDimension(s, '--rows'), /not a dimension/, s);
    assert.throws(() => parseMeasure(s), /not a measure/, s);
  }
  assert.deepEqual(Object.keys(DIMENSIONS).filter((d) => !dims.some(([, x]) => x === d)), ['kind'], 'every dimension but kind (beyond SPEC) is listed above');
  assert.deepEqual(Object.keys(MEASURES).filter((m) => !measures.some(([, x]) => x === m)), []);
  const cli = path.join(repoRoot, 'dist/cli.js');
  const bad = spawnSync(process.execPath, [cli, 'crosstab', sampleLogs, '--db', ':memory:', '--measure', 'colour'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr.trim(), /^cachelens: --measure colour: not a measure \(one of chains, /);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
});

test('crosstab lists names in alphabetical order whatever their case: compaction, Explore, fork … Plan, planner (capitalised names all came first)', async () => {
  await withStore(sampleLogs, async (store) => {
    const r = await crosstab(store, { rows: 'agent_type', cols: 'kind', measure: 'chains', timezone: 'UTC' });
    const names = r.rows.map(String);
    assert.ok(names.includes('Explore') && names.includes('compaction') && names.includes('Plan') && names.includes('planner'), names.join(', '));
    const folded = names.map((n) => n.toLowerCase());
    assert.deepEqual(folded, [...folded].sort(), names.join(', '));
    assert.ok(names.indexOf('compaction') < names.indexOf('Explore') && names.indexOf('Explore') < names.indexOf('fork'), names.join(', '));
    // a name before the longer one it begins, whatever their case
    assert.ok(names.indexOf('Plan') === names.indexOf('planner') - 1, names.join(', '));
    const text = formatCrosstab(r, false).split('\n');
    assert.ok(text.findIndex((l) => l.startsWith('compaction ')) < text.findIndex((l) => l.startsWith('Explore ')));
  });
});
