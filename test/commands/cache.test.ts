/**
 * The cache commands end to end, through the real reader and store: SPEC §3's worked example on
 * marot-spotter 4d5611e5 (UTC, 2026-02-12), the 1-hour session 8463c716 without expiry, and the
 * what-if commands' JSON shapes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REAL_LOGS, REPO, assistant, cli, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';

const MAROT = join(REAL_LOGS, 'marot-spotter');

function json(args: string[]): any {
  const r = cli([...args, '--db', ':memory:', '--json', '--timezone', 'UTC']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('anatomy --chain on marot 4d5611e5 classifies exactly as SPEC §3', () => {
  const d = json(['anatomy', MAROT, '--chain', '4d5611e5-241a-462a-8d15-5122611a9569']);
  const notable = d.requests
    .filter((r: any) => r.class !== 'growth' && r.time >= '2026-02-12T20:00')
    .map((r: any) => [r.time.slice(11, 19), r.class, r.class === 'cold' ? r.cold : r.rewrite, r.gap_s === null ? null : Math.round(r.gap_s)]);
  assert.deepEqual(notable, [
    ['20:19:04', 'expiry', 81_957, 15_070], // 251 min
    ['20:30:31', 'cold', 14_600, 126], // after the compaction
    ['20:58:58', 'expiry', 82_858, 1_153], // 19.2 min
    ['21:03:30', 'break', 76_753, 5],
  ]);
});

test('anatomy --chain shows its times in --timezone and heads its text with the filters, as anatomy does; --json echoes them', () => {
  const C = '4d5611e5-241a-462a-8d15-5122611a9569';
  const args = ['anatomy', MAROT, '--chain', C, '--db', ':memory:', '--timezone', 'Asia/Kolkata', '--since', '2026-02-13'];
  const r = cli(args);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.equal(lines[0], 'Filtered: --since 2026-02-13 (days in Asia/Kolkata)');
  const j = cli([...args, '--json']);
  assert.equal(j.code, 0, j.stderr);
  const d = JSON.parse(j.stdout);
  assert.deepEqual(d.filters, { since: '2026-02-13', until: null, project: null, timezone: 'Asia/Kolkata' });
  const first = d.requests[0].time as string; // UTC in --json, as blocks' starts are
  const local = new Date(Date.parse(first) + 5.5 * 3_600_000).toISOString().replace('T', ' ').slice(0, 19);
  assert.ok(lines.some((l) => /time \(Asia\/Kolkata\)/.test(l)), 'the column names the zone');
  assert.ok(lines.some((l) => l.includes(` ${local} `)), `the first request at ${local} Kolkata time (${first} UTC)`);
  assert.ok(!lines.some((l) => l.includes(` ${first.replace('T', ' ').slice(0, 19)} `)), 'not at its UTC time');
});

test('anatomy --chain of a chain the filters leave out says so, not that there is no such chain', () => {
  const C = '4d5611e5-241a-462a-8d15-5122611a9569';
  const run = (...extra: string[]) => cli(['anatomy', MAROT, '--chain', C, '--db', ':memory:', '--timezone', 'UTC', ...extra]);
  const since = run('--since', '2030-01-01');
  assert.equal(since.code, 2);
  assert.equal(since.stderr, `cachelens: --chain ${C}: chain ${C} has no request that --since 2030-01-01 chooses (leave the filters out to see it whole, or widen them)\n`);
  const agent = cli(['anatomy', MAROT, '--chain', 'a2898e3', '--db', ':memory:', '--project', 'nomatch', '--until', '2026-01-01']);
  assert.equal(agent.code, 2);
  assert.match(agent.stderr, /^cachelens: --chain a2898e3: chain 4d5611e5-[\w-]+:a2898e3 has no request that --until 2026-01-01 --project nomatch choose \(/);
  const none = cli(['anatomy', MAROT, '--chain', 'ffff0000', '--db', ':memory:', '--since', '2030-01-01']);
  assert.equal(none.stderr, 'cachelens: --chain ffff0000: no such chain in scope\n', 'a chain the logs do not hold at all is still said as before');
  // a prefix of several chains, all left out, was 'no such chain in scope' too
  const several = cli(['anatomy', MAROT, '--chain', 'acompact', '--db', ':memory:', '--since', '2030-01-01']);
  assert.equal(several.code, 2);
  assert.match(several.stderr, /^cachelens: --chain acompact matches 3 chains \(4d5611e5-241a-462a-8d15-5122611a9569:acompact-e1f845, [^)]+\), none with a request that --since 2030-01-01 chooses \(leave the filters out or widen them, and give more of the id to name one\)\n$/u);
});

test('the 1-hour marot session 8463c716 shows no expiry under its own TTL', () => {
  const d = json(['anatomy', MAROT, '--chain', '8463c716-a2ea-4c14-9efa-87158ebd9f20']);
  assert.ok(d.requests.length > 100);
  assert.equal(d.requests.filter((r: any) => r.class === 'expiry').length, 0);
  assert.ok(d.requests.some((r: any) => r.gap_s > 300), 'it has gaps over 5 minutes, bridged by the 1-hour TTL');
});

test('anatomy totals, whatif ttl and whatif keepalive JSON carry the documented keys', () => {
  const a = json(['anatomy', MAROT]);
  for (const k of ['cold', 'growth', 'expiry', 'break', 'break_events', 'hit_ratio', 'waste_weight']) assert.ok(k in a.totals, k);
  assert.ok(Array.isArray(a.by_agent_type) && Array.isArray(a.chains));
  assert.equal(a.totals.cold + a.totals.growth + a.totals.expiry + a.totals.break, 1_213_918, 'the split covers every write (ccusage cache creation total)');
  const t = json(['whatif', 'ttl', MAROT]);
  for (const k of ['baseline_weight', 'scenario_weight', 'baseline_usd', 'scenario_usd', 'delta_pct', 'expiry_share', 'break_even_share', 'buckets']) assert.ok(k in t, k);
  assert.ok(Math.abs(t.break_even_share - 0.75 / 1.9) < 1e-9);
  assert.ok(t.expiry_share < t.break_even_share && t.delta_pct > 0, 'f below f*: forcing 1h costs more');
  const k = json(['whatif', 'keepalive', MAROT]);
  assert.equal(k.interval_s, 270);
  assert.equal(k.budgets.length, 22);
  assert.equal(k.budgets[21].budget, 'inf');
  assert.ok(k.budgets.every((b: any) => b.bridged + b.expired_after_budget === b.gaps_over_ttl));
});

test('whatif keepalive --scope: the two scopes split the gaps and the saving; the weights stay whole', () => {
  const all = json(['whatif', 'keepalive', MAROT, '--budget', '4']);
  const main = json(['whatif', 'keepalive', MAROT, '--budget', '4', '--scope', 'main']);
  const sub = json(['whatif', 'keepalive', MAROT, '--budget', '4', '--scope', 'subagents']);
  assert.deepEqual([all.scope, main.scope, sub.scope], ['all', 'main', 'subagents']);
  assert.ok(main.gaps > 0 && sub.gaps > 0, 'marot has gaps in main threads and subagents');
  assert.equal(main.gaps + sub.gaps, all.gaps);
  assert.equal(main.budgets[0].pings + sub.budgets[0].pings, all.budgets[0].pings);
  for (const r of [main, sub]) {
    assert.equal(r.baseline_weight, all.baseline_weight);
    assert.equal(r.subagent_weight, all.subagent_weight);
  }
  const net = (r: any) => r.budgets[0].net_saving_weight;
  assert.ok(Math.abs(net(main) + net(sub) - net(all)) < 1e-6, `${net(main)} + ${net(sub)} = ${net(all)}`);
  assert.equal(main.budgets[0].net_saving_weight_subagent, 0);
  const text = cli(['whatif', 'keepalive', MAROT, '--db', ':memory:', '--scope', 'subagents']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /on 5-minute subagent chains only \(TTL 300 s\)/);
  const bad = cli(['whatif', 'keepalive', MAROT, '--db', ':memory:', '--scope', 'some']);
  assert.equal(bad.code, 2);
});

test('subagent and subagents are one: whatif --scope and crosstab --kind take both spellings', () => {
  assert.deepEqual(json(['whatif', 'ttl', MAROT, '--scope', 'subagent']), json(['whatif', 'ttl', MAROT, '--scope', 'subagents']));
  const k = json(['whatif', 'keepalive', MAROT, '--budget', '2', '--scope', 'subagent']);
  assert.equal(k.scope, 'subagents');
  const one = json(['crosstab', MAROT, '--kind', 'subagent', '--measure', 'requests']);
  const other = json(['crosstab', MAROT, '--kind', 'subagents', '--measure', 'requests']);
  assert.deepEqual(other, one);
  assert.notDeepEqual(one, json(['crosstab', MAROT, '--measure', 'requests']), 'the kind filters');
});

test('whatif without a what-if, and a bad flag value, are one-line errors with exit 2', () => {
  const r = cli(['whatif']);
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  const b = cli(['whatif', 'keepalive', MAROT, '--db', ':memory:', '--budget', 'lots']);
  assert.equal(b.code, 2);
  assert.match(b.stderr, /--budget lots/);
});

test('anatomy --chain takes an id, or a prefix that only one chain has, and says so when a prefix matches several chains or none', () => {
  // the main chain's id is also the start of its subagents' ids: the whole id picks the main chain
  const main = json(['anatomy', MAROT, '--chain', '4d5611e5-241a-462a-8d15-5122611a9569']);
  assert.equal(main.chain_id, '4d5611e5-241a-462a-8d15-5122611a9569');
  const sub = json(['anatomy', MAROT, '--chain', '4d5611e5-241a-462a-8d15-5122611a9569:a28']);
  assert.equal(sub.chain_id, '4d5611e5-241a-462a-8d15-5122611a9569:a2898e3');
  assert.ok(sub.requests.length > 0);
  const many = cli(['anatomy', MAROT, '--chain', '4d5611e5-241a', '--db', ':memory:', '--json']);
  assert.equal(many.code, 2);
  assert.match(many.stderr, /--chain 4d5611e5-241a matches 3 chains \(4d5611e5-241a-462a-8d15-5122611a9569, 4d5611e5-241a-462a-8d15-5122611a9569:a2898e3, 4d5611e5-241a-462a-8d15-5122611a9569:acompact-e1f845\); give more of the id/);
  const none = cli(['anatomy', MAROT, '--chain', 'zzzz', '--db', ':memory:', '--json']);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--chain zzzz: no such chain in scope/);
});

test('anatomy --chain takes a chain agent id, and an id as a narrow terminal cuts it (its head … its tail), as replay session --chain does', () => {
  // a narrow terminal cuts the chain column to `fe5e1c67…f24c404`, which named no chain
  assert.equal(json(['anatomy', MAROT, '--chain', 'a2898e3']).chain_id, '4d5611e5-241a-462a-8d15-5122611a9569:a2898e3');
  const viewer = join(REAL_LOGS, 'd-kimuson-claude-code-viewer');
  const side = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b:side:f4ab2bf6-d642-431a-85cb-66691f24c404';
  assert.equal(json(['anatomy', viewer, '--chain', 'fe5e1c67…f24c404']).chain_id, side);
  assert.equal(json(['anatomy', viewer, '--chain', 'FE5E1C67…F24C404']).chain_id, side);
  const many = cli(['anatomy', viewer, '--chain', 'fe5e1c67…2', '--db', ':memory:', '--json']);
  assert.equal(many.code, 2);
  assert.match(many.stderr, /--chain fe5e1c67…2 matches 2 chains \(fe5e1c67-[^,]*2, fe5e1c67-[^)]*2\); give more of the id/);
});

test('anatomy --chain and replay session --chain take a chain\'s short id: a subagent\'s agent id, an inline sidechain\'s uuid', () => {
  // anatomy took chain ids alone (`--chain a2898e3`: no such chain in scope, while replay session took it), and
  // neither took a v1.x sidechain's uuid (`S:side:U`, no agent id): only the whole `S:side:U` named it
  assert.equal(json(['anatomy', MAROT, '--chain', 'a2898e3']).chain_id, '4d5611e5-241a-462a-8d15-5122611a9569:a2898e3');
  assert.equal(json(['anatomy', MAROT, '--chain', 'A289']).chain_id, '4d5611e5-241a-462a-8d15-5122611a9569:a2898e3');
  const viewer = join(REAL_LOGS, 'd-kimuson-claude-code-viewer');
  const side = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b:side:f4ab2bf6-d642-431a-85cb-66691f24c404';
  assert.equal(json(['anatomy', viewer, '--chain', 'f4ab2bf6']).chain_id, side);
  const replayed = cli(['replay', 'session', 'fe5e1c67', viewer, '--chain', 'f4ab2bf6', '--strategy', 'recorded', '--db', ':memory:', '--json']);
  assert.equal(replayed.code, 0, replayed.stderr);
  assert.equal(JSON.parse(replayed.stdout).chain.chain_id, side);
  // a prefix two sidechains share is said to be one, as any prefix is
  const many = cli(['anatomy', viewer, '--chain', 'f4', '--db', ':memory:']);
  assert.equal(many.code, 2);
  assert.match(many.stderr, /--chain f4 matches 2 chains \(fe5e1c67-53e7-4862-81ae-d0e013e3270b:side:f4546a51-ea10-47e0-b4e0-76802974f8a9, fe5e1c67-53e7-4862-81ae-d0e013e3270b:side:f4ab2bf6-d642-431a-85cb-66691f24c404\); give more of the id/);
});

test('an inline sidechain is named by `side:` and a prefix of its uuid too: anatomy --chain, replay session --chain, replay session and report --session', () => {
  // `--chain side:f4ab` (the end of its chain id `S:side:U`) said no such chain, and `replay session side:f4ab` no session
  const viewer = join(REAL_LOGS, 'd-kimuson-claude-code-viewer');
  const side = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b:side:f4ab2bf6-d642-431a-85cb-66691f24c404';
  assert.equal(json(['anatomy', viewer, '--chain', 'side:f4ab']).chain_id, side);
  assert.equal(json(['anatomy', viewer, '--chain', 'SIDE:F4AB2BF6-D642-431A-85CB-66691F24C404']).chain_id, side);
  for (const args of [['fe5e1c67', viewer, '--chain', 'side:f4ab'], ['side:f4ab', viewer]]) {
    const r = cli(['replay', 'session', ...args, '--strategy', 'recorded', '--db', ':memory:', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).chain.chain_id, side);
  }
  // a prefix two sidechains share: one line naming both, as an ambiguous session id names its sessions
  const many = cli(['anatomy', viewer, '--chain', 'side:f4', '--db', ':memory:']);
  assert.equal(many.code, 2);
  assert.equal(many.stderr.trim().split('\n').length, 1);
  assert.match(many.stderr, /--chain side:f4 matches 2 chains \(\S+:side:f4546a51-\S+, \S+:side:f4ab2bf6-\S+\); give more of the id/);
  const replayMany = cli(['replay', 'session', 'side:f4', viewer, '--db', ':memory:']);
  assert.equal(replayMany.code, 2);
  assert.match(replayMany.stderr, /side:f4 matches 2 sidechains \(\S+:side:f4546a51-\S+, \S+:side:f4ab2bf6-\S+\); give more of the id/);
  // report --session takes what replay session takes
  const out = join(tempDir('cachelens-report-'), 'report.html');
  const report = cli(['report', viewer, '--db', ':memory:', '--session', 'side:f4ab', '--out', out]);
  assert.equal(report.code, 0, report.stderr);
  const data = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(readFileSync(out, 'utf8'))![1]!);
  assert.match(data.replay.runs.find((x: { kind: string }) => x.kind === 'session').title, new RegExp(side));
  const none = cli(['replay', 'session', 'side:zz', viewer, '--db', ':memory:']);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /no sidechain side:zz in the logs read/);
});

test('an inline sidechain is named by a bare prefix of its uuid in replay session and report --session, as anatomy --chain names it; an ambiguous one names the first three', () => {
  // `replay session f4ab` said "no session f4ab" where `anatomy --chain f4ab` and `replay session side:f4ab` found it
  const viewer = join(REAL_LOGS, 'd-kimuson-claude-code-viewer');
  const side = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b:side:f4ab2bf6-d642-431a-85cb-66691f24c404';
  assert.equal(json(['anatomy', viewer, '--chain', 'f4ab']).chain_id, side);
  for (const id of ['f4ab', 'F4AB2BF6']) {
    const r = cli(['replay', 'session', id, viewer, '--strategy', 'recorded', '--db', ':memory:', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).chain.chain_id, side);
  }
  const out = join(tempDir('cachelens-report-'), 'report.html');
  const report = cli(['report', viewer, '--db', ':memory:', '--session', 'f4ab', '--out', out]);
  assert.equal(report.code, 0, report.stderr);
  const data = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(readFileSync(out, 'utf8'))![1]!);
  assert.match(data.replay.runs.find((x: { kind: string }) => x.kind === 'session').title, new RegExp(side));
  // a session's id still comes first, and a prefix that names nothing says so as before
  assert.equal(JSON.parse(cli(['replay', 'session', 'fe5e', viewer, '--strategy', 'recorded', '--db', ':memory:', '--json']).stdout).chain.chain_id, 'fe5e1c67-53e7-4862-81ae-d0e013e3270b');
  const none = cli(['replay', 'session', 'zz', viewer, '--db', ':memory:']);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /^cachelens: no session zz in the logs read/);
  // four sidechains sharing a prefix: one line naming the first three, as side: and anatomy --chain do
  const s = 'c0ffee00-0000-4000-8000-000000000000';
  const sideLine = (i: number) => ({ ...assistant({ session: s, msg: `m${i}`, t: `2026-02-10T18:1${i}:05.000Z`, u: { in: 3, w5: 1000 } }), isSidechain: true, parentUuid: null, uuid: `abcd000${i}-0000-4000-8000-00000000000${i}` });
  const root = writeCorpus({ [`projects/p/${s}.jsonl`]: [userPrompt(s, '2026-02-10T18:09:00.000Z'), assistant({ session: s, msg: 'main', t: '2026-02-10T18:09:05.000Z', u: { in: 3, w5: 1000 } }), ...[1, 2, 3, 4].map(sideLine)] });
  const ids = [1, 2, 3].map((i) => `${s}:side:abcd000${i}-0000-4000-8000-00000000000${i}`).join(', ');
  for (const [args, said] of [
    [['replay', 'session', 'abcd'], `abcd matches 4 sidechains (${ids}, …); give more of the id`],
    [['replay', 'session', 'side:abcd'], `side:abcd matches 4 sidechains (${ids}, …); give more of the id`],
    [['anatomy', '--chain', 'abcd'], `--chain abcd matches 4 chains (${ids}, …); give more of the id`],
    [['report', '--session', 'abcd', '--out', join(tempDir('cachelens-report-'), 'r.html')], `abcd matches 4 sidechains (${ids}, …); give more of the id`],
  ] as const) {
    const r = cli([...args.slice(0, args[0] === 'replay' ? 3 : 1), root, ...args.slice(args[0] === 'replay' ? 3 : 1), '--db', ':memory:']);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n')[0], `cachelens: ${said}`, args.join(' '));
  }
});

test('a subagent\'s bare agent id, or a unique prefix of it, names its chain in replay session and report --session, as anatomy --chain names it; an ambiguous one names the first three', () => {
  // `replay session a2898e3` said "no session a2898e3" where `anatomy --chain a2898e3` found it
  const spotter = join(REAL_LOGS, 'marot-spotter');
  const session = '4d5611e5-241a-462a-8d15-5122611a9569';
  for (const [id, chain] of [['a2898e3', `${session}:a2898e3`], ['a2898', `${session}:a2898e3`], ['acompact-e1f845', `${session}:acompact-e1f845`]] as const) {
    assert.equal(json(['anatomy', spotter, '--chain', id]).chain_id, chain, `anatomy --chain ${id}`);
    const r = cli(['replay', 'session', id, spotter, '--strategy', 'recorded', '--db', ':memory:', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).chain.chain_id, chain, `replay session ${id}`);
  }
  const out = join(tempDir('cachelens-report-'), 'report.html');
  const report = cli(['report', spotter, '--db', ':memory:', '--session', 'a2898e3', '--out', out]);
  assert.equal(report.code, 0, report.stderr);
  const data = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(readFileSync(out, 'utf8'))![1]!);
  assert.match(data.replay.runs.find((x: { kind: string }) => x.kind === 'session').title, new RegExp(`${session}:a2898e3`));
  // a session's id still comes first: `a` begins the session ae4a77f8-… and the agent ids a2898e3, acompact-…
  assert.equal(JSON.parse(cli(['replay', 'session', 'a', spotter, '--strategy', 'recorded', '--db', ':memory:', '--json']).stdout).chain.chain_id, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04');
  // three compaction agents share `ac`: one line naming them
  const many = cli(['replay', 'session', 'ac', spotter, '--db', ':memory:']);
  assert.equal(many.code, 2);
  assert.equal(many.stderr.trim().split('\n').length, 1);
  assert.match(many.stderr, /^cachelens: ac matches 3 subagent chains \(4d5611e5-\S+:acompact-e1f845, 8463c716-\S+:acompact-f46190, ae4a77f8-\S+:acompact-946d2b\); give more of the id$/m);
});

test('anatomy --chain in capitals names the lower-case ids Claude Code writes, a whole id and a prefix alike', () => {
  // `--chain 4D5611E5-…` said no such chain while 4d5611e5-… worked
  assert.equal(json(['anatomy', MAROT, '--chain', '4D5611E5-241A-462A-8D15-5122611A9569']).chain_id, '4d5611e5-241a-462a-8d15-5122611a9569');
  assert.equal(json(['anatomy', MAROT, '--chain', '4D5611E5-241A-462A-8D15-5122611A9569:A28']).chain_id, '4d5611e5-241a-462a-8d15-5122611a9569:a2898e3');
  const many = cli(['anatomy', MAROT, '--chain', '4D5611E5-241A', '--db', ':memory:', '--json']);
  assert.equal(many.code, 2);
  assert.match(many.stderr, /--chain 4D5611E5-241A matches 3 chains \(4d5611e5-241a-462a-8d15-5122611a9569, /);
});

test('a session whose own id begins `side:` is named by it, and its inline sidechain by `--chain side:…`, without looping', () => {
  // sideChain() went back through findChain with the session's id, which begins `side:` again: the command never ended
  const dir = tempDir('cachelens-sideid-');
  const S = 'side:abc';
  const at = (s: number) => new Date(Date.UTC(2026, 0, 5, 10, 0, s)).toISOString();
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 0 };
  const lines = [
    { type: 'user', sessionId: S, uuid: 'u1', parentUuid: null, timestamp: at(0), message: { role: 'user', content: 'hi' } },
    { type: 'assistant', sessionId: S, uuid: 'a1', parentUuid: 'u1', timestamp: at(1), requestId: 'req_1', message: { id: 'msg_1', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: 'ok' }], usage } },
    { type: 'user', sessionId: S, uuid: 'abcd1234', parentUuid: null, isSidechain: true, timestamp: at(2), message: { role: 'user', content: 'side task' } },
    { type: 'assistant', sessionId: S, uuid: 'a2', parentUuid: 'abcd1234', isSidechain: true, timestamp: at(3), requestId: 'req_2', message: { id: 'msg_2', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: 'done' }], usage } },
  ];
  writeFileSync(join(dir, 'side-abc.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const run = (args: string[]) => {
    const r = spawnSync(process.execPath, [join(REPO, 'dist/cli.js'), 'replay', 'session', ...args, '--strategy', 'recorded', '--db', ':memory:', '--json'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } });
    assert.equal(r.signal, null, `${args.join(' ')} did not end`);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout).chain.chain_id as string;
  };
  assert.equal(run([S, dir]), S);
  assert.equal(run([S, dir, '--chain', 'side:abcd']), `${S}:side:abcd1234`);
});

test('anatomy ranks its projects, models, sessions and chains by cost in USD, as summary and sessions do: a project of Sonnet with more weight but a smaller bill stood above one of Opus in anatomy and below it in summary', () => {
  // /work/sonnet: 100,000 5-minute write tokens of Sonnet 4.5 ($3/M): 125,000 wt, $0.375;
  // /work/opus: 70,000 of Opus 4.6 ($5/M): 87,500 wt, $0.4375. More weight, less money.
  const sonnet = '0ca1b2c3-0000-4000-8000-00000000c001';
  const opus = '0ca1b2c3-0000-4000-8000-00000000c002';
  const dir = writeCorpus({
    [`projects/-work-sonnet/${sonnet}.jsonl`]: [
      userPrompt(sonnet, '2026-02-10T10:00:00.000Z', 'go', undefined, '/work/sonnet'),
      assistant({ session: sonnet, msg: 'cs1', t: '2026-02-10T10:00:05.000Z', model: 'claude-sonnet-4-5-20250929', cwd: '/work/sonnet', u: { w5: 100_000 } }),
    ],
    [`projects/-work-opus/${opus}.jsonl`]: [
      userPrompt(opus, '2026-02-10T11:00:00.000Z', 'go', undefined, '/work/opus'),
      assistant({ session: opus, msg: 'co1', t: '2026-02-10T11:00:05.000Z', model: 'claude-opus-4-6', cwd: '/work/opus', u: { w5: 70_000 } }),
    ],
  });
  const sum = json(['summary', dir]);
  const anatomy = json(['anatomy', dir]);
  const sessions = json(['sessions', dir]);
  const a = anatomy.by_project.map((r: any) => r.project);
  const of = (p: string) => anatomy.by_project.find((r: any) => r.project === p);
  assert.ok(of('/work/sonnet').weight > of('/work/opus').weight && of('/work/sonnet').usd < of('/work/opus').usd, 'the cheaper project has more weight');
  assert.deepEqual(a, ['/work/opus', '/work/sonnet']);
  assert.deepEqual(sum.by_project.map((r: any) => r.project), a);
  assert.deepEqual(anatomy.by_model.map((r: any) => r.model), sum.by_model.map((r: any) => r.model));
  assert.deepEqual(anatomy.by_session.map((r: any) => r.session_id), [opus, sonnet]);
  assert.deepEqual(anatomy.chains.map((r: any) => r.session_id), [opus, sonnet]);
  assert.equal(sessions.sessions[0].session_id, opus);
  // the text says what its lists of sessions and chains are ranked by
  const text = cli(['anatomy', dir, '--db', ':memory:', '--timezone', 'UTC']).stdout;
  assert.match(text, /^By session, by cost$/m);
  assert.match(text, /^Chains by cost$/m);
  const rows = (title: string) => text.slice(text.indexOf(`\n${title}\n`)).split('\n\n')[0]!;
  assert.ok(rows('By project').indexOf('/work/opus') < rows('By project').indexOf('/work/sonnet'));
});
