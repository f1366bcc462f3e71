/**
 * The product's `whatif ttl --json` (both directions, every --scope) and `whatif keepalive --json`
 * (the sweep, one budget, a non-default --interval, --ping-in/--ping-out, every --scope) against
 * the independent reference in test/helpers/reference-whatif.ts, on every real log in
 * ../shared/real-logs (read in place) and on sample-logs/.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cli, REAL_LOGS, REPO, tempDir } from '../helpers/corpus.js';
import { loadChains, referenceKeepalive, referenceTtl, type KeepaliveOptions, type RefChain } from '../helpers/reference-whatif.js';

const HOME = tempDir('cachelens-home-');

function whatif(paths: string[], args: string[]): any {
  const r = cli(['whatif', ...args, ...paths, '--db', ':memory:', '--timezone', 'UTC', '--json'], { HOME });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Equal to 10 significant digits (the product prints 12), or both the same non-number. */
function same(actual: unknown, expected: unknown, what: string): void {
  if (typeof actual === 'number' && typeof expected === 'number') {
    const tol = 1e-10 * Math.max(1, Math.abs(actual), Math.abs(expected));
    assert.ok(Math.abs(actual - expected) <= tol, `${what}: product ${actual}, reference ${expected}`);
  } else {
    assert.equal(actual, expected, `${what}: product ${actual}, reference ${expected}`);
  }
}

const TTL_KEYS = ['chains', 'changed_chains', 'requests', 'unpriced_requests', 'baseline_weight', 'scenario_weight', 'baseline_usd',
  'scenario_usd', 'delta_pct', 'delta_usd_pct', 'expiry_share'] as const;
const ROW_KEYS = ['budget', 'pings', 'gaps_over_ttl', 'bridged', 'expired_after_budget', 'ping_weight', 'saved_weight', 'ping_usd', 'saved_usd',
  'net_saving_weight', 'net_saving_usd', 'net_saving_weight_subagent', 'net_saving_pct_subagent', 'net_saving_pct_all'] as const;

export function compareTtl(paths: string[], chains: RefChain[]): void {
  for (const to of ['1h', '5m'] as const) {
    for (const scope of ['all', 'main', 'subagents'] as const) {
      const p = whatif(paths, ['ttl', '--to', to, '--scope', scope]);
      const r = referenceTtl(chains, to, scope);
      const at = `ttl --to ${to} --scope ${scope}`;
      for (const k of TTL_KEYS) same(p[k], r[k], `${at} ${k}`);
      same(p.break_even_share, p.baseline_weight === 0 ? null : r.break_even_share, `${at} break_even_share`);
      assert.deepEqual(p.buckets.map((b: any) => `${b.dimension}\t${b.bucket}`).sort(), [...r.buckets.keys()].sort(), `${at} bucket list`);
      for (const b of p.buckets) {
        const rb = r.buckets.get(`${b.dimension}\t${b.bucket}`)!;
        for (const k of TTL_KEYS) same(b[k], rb[k], `${at} bucket ${b.dimension}=${b.bucket} ${k}`);
      }
    }
  }
}

export function compareKeepalive(paths: string[], chains: RefChain[]): void {
  const runs: [string[], KeepaliveOptions][] = [
    [[], {}],
    [['--scope', 'main'], { scope: 'main' }],
    [['--scope', 'subagents'], { scope: 'subagents' }],
    [['--interval', '100', '--ping-in', '50', '--ping-out', '20'], { intervalS: 100, pingIn: 50, pingOut: 20 }],
    [['--budget', '3', '--interval', '200'], { intervalS: 200, budgets: [3] }],
    [['--budget', 'inf', '--scope', 'subagents'], { budgets: ['inf'], scope: 'subagents' }],
  ];
  for (const [args, options] of runs) {
    const p = whatif(paths, ['keepalive', ...args]);
    const r = referenceKeepalive(chains, options);
    const at = `keepalive ${args.join(' ')}`;
    for (const k of ['gaps', 'unpriced_gaps', 'baseline_weight', 'baseline_usd', 'subagent_weight', 'best_budget'] as const) same(p[k], r[k], `${at} ${k}`);
    assert.equal(p.budgets.length, r.budgets.length, `${at} budgets`);
    p.budgets.forEach((row: any, i: number) => {
      for (const k of ROW_KEYS) same(row[k], r.budgets[i][k], `${at} budget ${row.budget} ${k}`);
    });
    assert.deepEqual(p.buckets.map((b: any) => `${b.dimension}\t${b.bucket}`).sort(), [...r.buckets.keys()].sort(), `${at} bucket list`);
    for (const b of p.buckets) {
      const rb = r.buckets.get(`${b.dimension}\t${b.bucket}`)!;
      same(b.budget, r.best_budget, `${at} bucket ${b.dimension}=${b.bucket} budget`);
      for (const [k, v] of Object.entries(rb)) same(b[k], v, `${at} bucket ${b.dimension}=${b.bucket} ${k}`);
    }
  }
}

const corpora: [string, string[]][] = [
  ['sample-logs', [join(REPO, 'sample-logs/projects')]],
  ...readdirSync(REAL_LOGS, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d): [string, string[]] => [`real-logs/${d.name}`, [join(REAL_LOGS, d.name)]]),
];

for (const [name, paths] of corpora) {
  test(`whatif ttl and keepalive agree with the independent reference on ${name}`, () => {
    const chains = loadChains(paths);
    assert.ok(chains.length > 0, `${name} has chains`);
    compareTtl(paths, chains);
    compareKeepalive(paths, chains);
  });
}

for (const [name, paths, day] of [
  ['sample-logs', [join(REPO, 'sample-logs/projects')], '2026-02-11'],
  ['real-logs/marot-spotter', [join(REAL_LOGS, 'marot-spotter')], '2026-02-12'],
] as const) {
  test(`under --since/--until ${day} (earlier requests as context) the what-ifs agree with the reference on ${name}`, () => {
    const chains = loadChains([...paths]);
    const lo = Date.parse(`${day}T00:00:00Z`);
    const inDays = (t: number) => t >= lo && t < lo + 86_400_000;
    const days = ['--since', day, '--until', day];
    for (const to of ['1h', '5m'] as const) {
      const p = whatif([...paths], ['ttl', '--to', to, ...days]);
      const r = referenceTtl(chains, to, 'all', 1024, inDays);
      for (const k of TTL_KEYS) same(p[k], r[k], `ttl --to ${to} ${day} ${k}`);
      assert.ok(r.requests > 0 && r.requests < chains.reduce((n, c) => n + c.requests.length, 0), 'the day leaves requests out');
    }
    const p = whatif([...paths], ['keepalive', ...days]);
    const r = referenceKeepalive(chains, { inDays });
    for (const k of ['gaps', 'unpriced_gaps', 'baseline_weight', 'subagent_weight', 'best_budget'] as const) same(p[k], r[k], `keepalive ${day} ${k}`);
    p.budgets.forEach((row: any, i: number) => {
      for (const k of ROW_KEYS) same(row[k], r.budgets[i][k], `keepalive ${day} budget ${row.budget} ${k}`);
    });
  });
}

test('the corpora exercise what the what-ifs change (so agreement is not agreement on zeros)', () => {
  const chains = loadChains([REAL_LOGS, join(REPO, 'sample-logs/projects')]);
  const to1h = referenceTtl(chains, '1h');
  const to5m = referenceTtl(chains, '5m');
  const keepalive = referenceKeepalive(chains);
  assert.ok(to1h.f_num > 0 && to1h.changed_chains > 0, 'some expiry rewrite becomes a read under --to 1h');
  assert.ok(to5m.f_num > 0 && to5m.changed_chains > 0, 'some read expires under --to 5m');
  assert.ok(keepalive.budgets.some((b) => b.bridged > 0 && b.expired_after_budget > 0), 'a budget bridges some gaps and not others');
  assert.ok(keepalive.unpriced_gaps > 0, 'a gap touches an unpriced model');
});
