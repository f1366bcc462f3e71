/**
 * SPEC §4's headline: the cross-tab says in which cells skill_listing attachments per chain equal
 * rounds per chain. A hand-made v2.1 session whose answer is worked out on paper:
 * - lost × yes: `l1` (2 rounds, 2 listings) and `l2` (1 round, 1 listing): equal, 2 of 2;
 * - resolved × yes: `r1` (2 rounds, a listing in round 1 only): 0 of 1;
 * - resolved × no: `r2` (1 round, 0 listings): 0 of 1 (no listing is no evidence of the pattern);
 * - main × no: the main thread (1 round, no listing), its own row: SPEC §1.5 judges the definitions of
 *   spawned chains only, and under `unknown` it would pass for a subagent whose definition could not be told;
 * - lost × no and main × yes hold no chain, nor does `unknown`: no cell, and no line claims anything of them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { assistant, cli, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';

const S = '5e551011-0000-4000-8000-00000000c4ed';
const at = (s: number) => new Date(Date.UTC(2026, 0, 5, 9, 0, s)).toISOString();
const spawn = (id: string, type: string) => ({ type: 'tool_use', id, name: 'Agent', input: { description: 'd', prompt: `p ${id}`, subagent_type: type, name: id } });
const listing = (id: string, s: number, text = 'skills: a, b, c') => ({
  type: 'attachment', sessionId: S, timestamp: at(s), uuid: `att-${id}-${s}`, isSidechain: true, agentId: id,
  attachment: { type: 'skill_listing', content: text },
});
/** a subagent of `rounds` rounds, with a skill listing in the rounds `withListing` names */
function agent(id: string, s: number, rounds: number, withListing: number[]): object[] {
  const lines: object[] = [];
  for (let k = 1; k <= rounds; k++) {
    const t = s + 3 * k;
    lines.push(userPrompt(S, at(t), `round ${k}`, id));
    if (withListing.includes(k)) lines.push(listing(id, t));
    lines.push(assistant({ session: S, msg: `msg_${id}_${k}`, t: at(t + 1), u: { in: 3, w5: 100, r: 50 * k, out: 2 }, agentId: id }));
  }
  return lines;
}
const sub = (id: string) => `projects/-work-demo/${S}/subagents/agent-${id}`;

const dir = writeCorpus({
  [`projects/-work-demo/${S}.jsonl`]: [
    userPrompt(S, at(0), 'plan it'),
    assistant({ session: S, msg: 'msg_main', t: at(1), u: { in: 5, w5: 500, out: 9 }, content: [spawn('tu_l1', 'p:planner'), spawn('tu_l2', 'p:reviewer'), spawn('tu_r1', 'Explore'), spawn('tu_r2', 'Explore')] }),
  ],
  [`${sub('l1')}.jsonl`]: agent('l1', 10, 2, [1, 2]),
  [`${sub('l1')}.meta.json`]: JSON.stringify({ agentType: 'planner', toolUseId: 'tu_l1' }),
  [`${sub('l2')}.jsonl`]: agent('l2', 20, 1, [1]),
  [`${sub('l2')}.meta.json`]: JSON.stringify({ agentType: 'reviewer', toolUseId: 'tu_l2' }),
  [`${sub('r1')}.jsonl`]: agent('r1', 30, 2, [1]),
  [`${sub('r1')}.meta.json`]: JSON.stringify({ agentType: 'Explore', toolUseId: 'tu_r1' }),
  [`${sub('r2')}.jsonl`]: agent('r2', 40, 1, []),
  [`${sub('r2')}.meta.json`]: JSON.stringify({ agentType: 'Explore', toolUseId: 'tu_r2' }),
});

test('headline: listings per chain = rounds per chain is said of the cells where every chain matches, and of no empty cell', () => {
  const j = cli(['crosstab', dir, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(j.code, 0, j.stderr);
  const x = JSON.parse(j.stdout);
  assert.deepEqual([x.rows, x.cols], [['main', 'resolved', 'lost'], ['no', 'yes']]);
  assert.deepEqual(x.attachments_equal_rounds, [
    { row: 'main', col: 'no', chains: 1, matching: 0, equal: false },
    { row: 'resolved', col: 'no', chains: 1, matching: 0, equal: false },
    { row: 'resolved', col: 'yes', chains: 1, matching: 0, equal: false },
    { row: 'lost', col: 'yes', chains: 2, matching: 2, equal: true },
  ]);
  const cell = (row: string | null, col: string | null) => x.cells.find((c: any) => c.row === row && c.col === col)?.value;
  assert.equal(cell('lost', 'no'), undefined);
  assert.equal(cell('main', 'yes'), undefined);
  assert.deepEqual([cell('lost', null), cell('main', null), cell('resolved', null), cell('unknown', null), cell(null, 'no'), cell(null, 'yes'), cell(null, null)], [2, 1, 2, undefined, 2, 3, 5]);

  const t = cli(['crosstab', dir, '--db', ':memory:', '--timezone', 'UTC']);
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, /^ {2}lost × yes: yes — 2 of 2 chains$/m);
  assert.match(t.stdout, /^ {2}resolved × yes: no — 0 of 1 chain$/m);
  assert.match(t.stdout, /^ {2}resolved × no: no — 0 of 1 chain$/m);
  assert.match(t.stdout, /^ {2}main × no: no — 0 of 1 chain$/m);
  assert.doesNotMatch(t.stdout, /lost × no|main × yes|^unknown /m);

  // by rounds and skill_listing count: the diagonal cells are the matching ones
  const r = JSON.parse(cli(['crosstab', dir, '--db', ':memory:', '--timezone', 'UTC', '--rows', 'rounds', '--cols', 'skill_listing', '--kind', 'subagent', '--json']).stdout);
  assert.deepEqual([r.rows, r.cols], [[1, 2], [0, 1, 2]], 'numbers, as docs/json.md says');
  assert.deepEqual(r.attachments_equal_rounds.map((e: any) => [e.row, e.col, e.chains, e.equal]), [[1, 0, 1, false], [1, 1, 1, true], [2, 1, 1, false], [2, 2, 1, true]]);
});

test('the attachments-vs-rounds lines follow a table of listings, rounds or re-attachments only: not agent_type by model in USD', () => {
  // `--rows agent_type --cols model --measure usd` printed them under a table of neither
  const heading = /skill_listing attachments per chain = rounds per chain/;
  const text = (args: string[]) => {
    const r = cli(['crosstab', dir, '--db', ':memory:', '--timezone', 'UTC', ...args]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  for (const args of [['--rows', 'agent_type', '--cols', 'model', '--measure', 'usd'], ['--rows', 'definition', '--cols', 'model'], ['--rows', 'agent_type', '--cols', 'project', '--measure', 'weight']]) {
    assert.doesNotMatch(text(args), heading, args.join(' '));
  }
  // SPEC §4's table, by definition or agent type, and its listings or rounds by another dimension: said
  for (const args of [[], ['--rows', 'agent_type'], ['--rows', 'agent_type', '--cols', 'skill_listing', '--measure', 'usd'], ['--rows', 'definition', '--cols', 'rounds_bucket'], ['--rows', 'agent_type', '--cols', 'model', '--measure', 'reattachments']]) {
    assert.match(text(args), heading, args.join(' ') || 'the default table');
  }
  // --json keeps them whatever the table
  const j = JSON.parse(cli(['crosstab', dir, '--db', ':memory:', '--json', '--rows', 'agent_type', '--cols', 'model', '--measure', 'usd']).stdout);
  assert.ok(j.attachments_equal_rounds.length > 0);
});

test('one dimension given: the other is the SPEC §4 table\'s other one, so --rows has_skill_listing (or --cols definition) is that table transposed, not an error', () => {
  const dims = (args: string[]) => {
    const r = cli(['crosstab', dir, '--db', ':memory:', '--timezone', 'UTC', '--json', ...args]);
    assert.equal(r.code, 0, r.stderr);
    const x = JSON.parse(r.stdout);
    return [x.rows_dimension, x.cols_dimension];
  };
  assert.deepEqual(dims([]), ['definition', 'has_skill_listing']);
  assert.deepEqual(dims(['--rows', 'has_skill_listing']), ['has_skill_listing', 'definition']);
  assert.deepEqual(dims(['--rows', 'Has-Skill-Listing']), ['has_skill_listing', 'definition']);
  assert.deepEqual(dims(['--cols', 'definition']), ['has_skill_listing', 'definition']);
  assert.deepEqual(dims(['--rows', 'agent_type']), ['agent_type', 'has_skill_listing']);
  assert.deepEqual(dims(['--cols', 'model']), ['definition', 'model']);
  // both given and the same: a one-line error, exit 2
  const same = cli(['crosstab', dir, '--db', ':memory:', '--rows', 'model', '--cols', 'Model']);
  assert.equal(same.code, 2);
  assert.match(same.stderr, /^cachelens: --rows and --cols are both model \(a cross-tab needs two different dimensions\)\n$/);
});

test('a "—" cell is explained by what it means for the measure: write:read of a cell that read nothing, hit ratio of a cell without requests', async () => {
  const { formatCrosstab } = await import('../../src/reporters/crosstab.js');
  const base = { rows_dimension: 'agent_type', cols_dimension: 'model', rows: ['a', 'b'], cols: ['m'], attachments_equal_rounds: [] } as const;
  const cells = (a: number | null, unpriced = 0) => [
    { row: 'a', col: 'm', value: a, unpriced_requests: 0 }, { row: 'b', col: 'm', value: 2, unpriced_requests: unpriced },
    { row: 'a', col: null, value: a, unpriced_requests: 0 }, { row: 'b', col: null, value: 2, unpriced_requests: unpriced },
    { row: null, col: 'm', value: 3, unpriced_requests: unpriced }, { row: null, col: null, value: 3, unpriced_requests: unpriced },
  ];
  // every request priced, a chain type that only wrote: its write:read is no number, and the table says why
  const wr = formatCrosstab({ ...base, measure: 'write_read_ratio', cells: cells(null) } as never, false);
  assert.match(wr, /^a +— │ +—$/m);
  assert.match(wr, /^— where a cell read nothing \(no priced cache read\)$/m);
  // with unpriced requests too: the +? note, and the same reading of —
  const both = formatCrosstab({ ...base, measure: 'write_read_ratio', cells: cells(null, 4) } as never, false);
  assert.match(both, /^\+\? 4 requests of unpriced models are left out; — where a cell read nothing \(no priced cache read\)$/m);
  // USD: — is a cell with no priced request
  assert.match(formatCrosstab({ ...base, measure: 'usd', cells: cells(null, 4) } as never, false), /^\+\? 4 requests of unpriced models are left out; — where a cell has no priced request$/m);
  // hit ratio: — is a cell of chains without requests (no prompt tokens)
  assert.match(formatCrosstab({ ...base, measure: 'hit_ratio', cells: cells(null) } as never, false), /^— where a cell has no request$/m);
  // no —, no note
  assert.doesNotMatch(formatCrosstab({ ...base, measure: 'hit_ratio', cells: cells(0.5) } as never, false), /^—/m);
});

test('an empty scope (a filter that matches nothing) is a total of 0 chains, 0 requests and 0 re-attachments, not unknown; its weight, USD and ratios are unknown', () => {
  const value = (measure: string, extra: string[]) => {
    const r = cli(['crosstab', dir, '--db', ':memory:', '--timezone', 'UTC', '--json', '--measure', measure, ...extra]);
    assert.equal(r.code, 0, r.stderr);
    const x = JSON.parse(r.stdout);
    assert.deepEqual([x.rows, x.cols, x.cells.length, x.attachments_equal_rounds], [[], [], 1, []], measure);
    return x.cells[0].value;
  };
  for (const extra of [['--project', 'nomatch'], ['--since', '2030-01-01'], ['--until', '2020-01-01']]) {
    assert.deepEqual(['chains', 'requests', 'reattachments'].map((m) => value(m, extra)), [0, 0, 0], extra.join(' '));
    assert.deepEqual(['weight', 'usd', 'write_read_ratio', 'hit_ratio'].map((m) => value(m, extra)), [null, null, null, null], extra.join(' '));
  }
  const t = cli(['crosstab', dir, '--db', ':memory:', '--measure', 'requests', '--project', 'nomatch']);
  assert.match(t.stdout, /^total +│ +0$/m);
  assert.doesNotMatch(t.stdout, /—/);
});

test('--kind is said: the title names main threads or subagents only, and --json echoes kind', () => {
  const run = (args: string[]) => {
    const r = cli(['crosstab', dir, '--db', ':memory:', '--timezone', 'UTC', ...args]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  assert.match(run([]), /^chains by definition and has_skill_listing$/m);
  assert.match(run(['--kind', 'subagents']), /^chains by definition and has_skill_listing, subagents only$/m);
  assert.match(run(['--kind', 'main', '--measure', 'usd']), /^usd by definition and has_skill_listing, main threads only$/m);
  assert.deepEqual(['all', 'main', 'subagent', 'subagents'].map((k) => JSON.parse(run(['--kind', k, '--json'])).kind), ['all', 'main', 'subagent', 'subagent']);
  assert.equal(JSON.parse(run(['--json'])).kind, 'all');
});

test('a main thread\'s definition is `main` wherever definition is a field: the bundled queries and the export\'s chains, not `unknown` with the subagents that could not be judged', () => {
  const home = { HOME: tempDir('cachelens-home-') };
  const defs = (q: string, key: string) => {
    const r = cli(['query', q, dir, '--db', ':memory:', '--json'], home);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).rows.map((x: Record<string, unknown>) => `${x[key]}:${x.definition}`).sort();
  };
  assert.deepEqual(defs('attachments_vs_rounds', 'kind'), ['main:main', 'subagent:lost', 'subagent:lost', 'subagent:resolved', 'subagent:resolved']);
  assert.deepEqual(defs('skill_listing_by_agent_type', 'agent_type'), ['Explore:resolved', 'main:main', 'planner:lost', 'reviewer:lost']);
  const out = path.join(tempDir('cachelens-export-'), 'x');
  const e = cli(['export', dir, '--db', ':memory:', '--parquet', out, '--json'], home);
  assert.equal(e.code, 0, e.stderr);
  const sql = path.join(tempDir('cachelens-sql-'), 'defs.sql');
  writeFileSync(sql, 'SELECT kind, definition FROM chains ORDER BY kind, definition');
  const q = cli(['query', sql, '--parquet', out, '--json'], home);
  assert.equal(q.code, 0, q.stderr);
  assert.deepEqual(JSON.parse(q.stdout).rows.map((x: { kind: string; definition: string }) => `${x.kind}:${x.definition}`), ['main:main', 'subagent:lost', 'subagent:lost', 'subagent:resolved', 'subagent:resolved']);
});

test('a model, day or ttl dimension says under the table what it is of a chain: its model totals differ from summary\'s by model, and its days are in --timezone', async () => {
  // crosstab's model is each chain's (most of its prompt tokens); summary counts each request under its own model:
  // the real logs' haiku column read $5.37 against summary's $1.48, unexplained
  const REAL = path.join(import.meta.dirname, '..', '..', '..', 'shared', 'real-logs', 'marot-spotter');
  const json = (args: string[]) => {
    const r = cli([...args, REAL, '--db', ':memory:', '--timezone', 'UTC', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const haiku = 'claude-haiku-4-5-20251001';
  const byChain = json(['crosstab', '--rows', 'kind', '--cols', 'model', '--measure', 'usd']).cells.find((c: { row: unknown; col: unknown }) => c.row === null && c.col === haiku).value;
  const byRequest = json(['summary']).by_model.find((m: { model: string }) => m.model === haiku).usd;
  assert.notEqual(byChain.toFixed(2), byRequest.toFixed(2), 'the two totals differ on these logs');
  const text = cli(['crosstab', REAL, '--db', ':memory:', '--rows', 'day', '--cols', 'model', '--measure', 'usd', '--timezone', 'asia/tokyo']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^model: each chain's, the one that carried most of its prompt tokens \(summary counts each request under its own\)$/m);
  assert.match(text.stdout, /^day: the day of each chain's first request \(Asia\/Tokyo\)$/m);
  // under --since a chain's day is of its first request on those days: a chain begun the day before is on the first one
  const since = cli(['crosstab', REAL, '--db', ':memory:', '--rows', 'day', '--since', '2026-02-12', '--timezone', 'UTC']);
  assert.equal(since.code, 0, since.stderr);
  assert.match(since.stdout, /^day: the day of each chain's first request on the days asked for \(UTC\)$/m);
  const { formatCrosstab } = await import('../../src/reporters/crosstab.js');
  const base = { rows_dimension: 'agent_type', cols_dimension: 'ttl', measure: 'chains', rows: ['a'], cols: ['5m'], attachments_equal_rounds: [], cells: [{ row: 'a', col: '5m', value: 1, unpriced_requests: 0 }] } as const;
  assert.match(formatCrosstab(base as never, false), /^ttl: 1h for a chain that wrote any 1-hour tokens, 5m for one that wrote only 5-minute ones$/m);
  assert.doesNotMatch(formatCrosstab({ ...base, cols_dimension: 'definition' } as never, false), /^(model|day|ttl): /m, 'other dimensions need no note');
});
