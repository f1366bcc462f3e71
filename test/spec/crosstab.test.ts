/**
 * SPEC §4 (cross-tabs), checked by hand: every cell, row total, column total and grand total of a five-chain
 * corpus for each measure, from `crosstab --json`, the terminal table's figures against them, and the
 * report's cross-tab section. Opus 4.6 weights 1 / 1.25 / 2 / 0.1 / 5 at $5 per million.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openContext } from '../../src/context.js';
import { buildReportData } from '../../src/report/build.js';
import { renderReport } from '../../src/report/render.js';
import { assistant, cli, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { near } from '../analyses/helpers/fixtures.js';
import { at } from './corpora.js';

const S = '5bec0000-0000-4000-8000-0000000005c1';
const P = 'projects/-work-demo';
const LISTING = { type: 'skill_listing', content: '- myplugin:planner: plans', skillCount: 1, isInitial: true };

/**
 * Five chains of session S (every request Opus 4.6; weight = in + 1.25 w5 + 2 w1h + 0.1 r + 5 out):
 *   main  definition main      2 rounds, 1 skill_listing (round 1)
 *         m1 w5 10,000 out 100          12,500 + 500           = 13,000
 *         m2 r 10,000 w5 2,000 out 50   1,000 + 2,500 + 250   =  3,750      16,750 wt, P 22,000, r 10,000
 *   r1    resolved (meta Explore, spawn Explore)   1 round, 0 listings
 *         w5 1,000 out 10               1,250 + 50             =  1,300
 *         r 1,000 w5 500 out 10         100 + 625 + 50         =    775      2,075 wt, P 2,500, r 1,000
 *   l1    lost (meta planner, spawn myplugin:planner)   2 rounds, 2 listings (one re-attachment)
 *         2 × w5 4,000 out 20           2 × (5,000 + 100)                    10,200 wt, P 8,000, r 0
 *   l2    lost (likewise)   3 rounds, 3 listings (two re-attachments)
 *         3 × r 500 w5 3,000 out 20     3 × (50 + 3,750 + 100)               11,700 wt, P 10,500, r 1,500
 *   u1    unknown (no meta, no spawn)   1 round, 0 listings
 *         w1h 2,000                     4,000                                 4,000 wt, P 2,000, r 0
 */
function corpus(): string {
  const sub = (id: string, meta: object | null, start: number, rounds: { u: Parameters<typeof assistant>[0]['u']; listing?: boolean }[][]): Record<string, object[] | string> => {
    const lines: object[] = [];
    let s = start;
    let n = 0;
    for (const round of rounds) {
      lines.push(userPrompt(S, at(s++), `task ${s}`, id));
      for (const q of round) {
        if (q.listing) lines.push({ type: 'attachment', sessionId: S, agentId: id, isSidechain: true, cwd: '/work/demo', timestamp: at(s++), uuid: `att-${id}-${s}`, attachment: LISTING });
        lines.push(assistant({ session: S, msg: `${id}-${++n}`, t: at(s++), agentId: id, u: q.u }));
      }
      s += 10;
    }
    return {
      [`${P}/${S}/subagents/agent-${id}.jsonl`]: lines,
      ...(meta ? { [`${P}/${S}/subagents/agent-${id}.meta.json`]: JSON.stringify(meta) } : {}),
    };
  };
  const spawn = (id: string, type: string, name?: string) => ({ type: 'tool_use', id, name: 'Agent', input: { subagent_type: type, description: 'd', prompt: `p ${id}`, ...(name ? { name } : {}) } });
  return writeCorpus({
    [`${P}/${S}.jsonl`]: [
      userPrompt(S, at(0)),
      { type: 'attachment', sessionId: S, cwd: '/work/demo', timestamp: at(1), uuid: 'att-main', attachment: LISTING },
      assistant({
        session: S, msg: 'm1', t: at(2), u: { w5: 10_000, out: 100 },
        content: [spawn('tu1', 'Explore'), spawn('tu2', 'myplugin:planner', 'planner'), spawn('tu3', 'myplugin:planner', 'planner')],
      }),
      userPrompt(S, at(1_000), 'next'),
      assistant({ session: S, msg: 'm2', t: at(1_001), u: { r: 10_000, w5: 2_000, out: 50 } }),
    ],
    ...sub('r1', { agentType: 'Explore', toolUseId: 'tu1' }, 100, [[{ u: { w5: 1_000, out: 10 } }, { u: { r: 1_000, w5: 500, out: 10 } }]]),
    ...sub('l1', { agentType: 'planner', toolUseId: 'tu2' }, 200, [[{ u: { w5: 4_000, out: 20 }, listing: true }], [{ u: { w5: 4_000, out: 20 }, listing: true }]]),
    ...sub('l2', { agentType: 'planner', toolUseId: 'tu3' }, 300, [1, 2, 3].map(() => [{ u: { r: 500, w5: 3_000, out: 20 }, listing: true }])),
    ...sub('u1', null, 400, [[{ u: { w1h: 2_000 } }]]),
  } as Record<string, object[]>);
}

function crosstab(dir: string, args: string[], json = true): any {
  const r = cli(['crosstab', dir, ...args, '--db', ':memory:', '--timezone', 'UTC', ...(json ? ['--json'] : [])]);
  assert.equal(r.code, 0, r.stderr);
  return json ? JSON.parse(r.stdout) : r.stdout;
}

/** `row|col` → value, totals as `*`. */
function cells(x: any): Record<string, number | null> {
  return Object.fromEntries(x.cells.map((c: any) => [`${c.row ?? '*'}|${c.col ?? '*'}`, c.value]));
}

function nearAll(got: Record<string, number | null>, want: Record<string, number | null>, what: string): void {
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${what}: cells`);
  for (const [k, v] of Object.entries(want)) {
    if (v === null) assert.equal(got[k], null, `${what} ${k}`);
    else near(got[k] ?? null, v, `${what} ${k}`);
  }
}

test('§4: definition × has_skill_listing, every measure by hand, with its totals; attachments per chain equal rounds in lost × yes only', () => {
  const dir = corpus();
  // chains: main×yes 1, resolved×no 1, lost×yes 2 (l1, l2), unknown×no 1; columns no 2, yes 3; 5 in all
  const x = crosstab(dir, []);
  assert.deepEqual([x.rows_dimension, x.cols_dimension, x.measure, x.kind], ['definition', 'has_skill_listing', 'chains', 'all']);
  assert.deepEqual([x.rows, x.cols], [['main', 'resolved', 'lost', 'unknown'], ['no', 'yes']]);
  nearAll(cells(x), {
    'main|yes': 1, 'resolved|no': 1, 'lost|yes': 2, 'unknown|no': 1,
    'main|*': 1, 'resolved|*': 1, 'lost|*': 2, 'unknown|*': 1, '*|no': 2, '*|yes': 3, '*|*': 5,
  }, 'chains');
  // listings = rounds (> 0): main 1 ≠ 2; r1 0 ≠ 1 (1 round, no listing); l1 2 = 2, l2 3 = 3; u1 0 ≠ 1
  assert.deepEqual(
    x.attachments_equal_rounds.map((c: any) => [c.row, c.col, c.chains, c.matching, c.equal]),
    [['main', 'yes', 1, 0, false], ['resolved', 'no', 1, 0, false], ['lost', 'yes', 2, 2, true], ['unknown', 'no', 1, 0, false]],
  );
  // requests: main 2, r1 2, lost 2 + 3 = 5, u1 1
  nearAll(cells(crosstab(dir, ['--measure', 'requests'])), {
    'main|yes': 2, 'resolved|no': 2, 'lost|yes': 5, 'unknown|no': 1,
    'main|*': 2, 'resolved|*': 2, 'lost|*': 5, 'unknown|*': 1, '*|no': 3, '*|yes': 7, '*|*': 10,
  }, 'requests');
  // weight: main 16,750; resolved 2,075; lost 10,200 + 11,700 = 21,900; unknown 4,000; no 6,075, yes 38,650; 44,725
  const weight = { main: 16_750, resolved: 2_075, lost: 21_900, unknown: 4_000, no: 6_075, yes: 38_650, all: 44_725 };
  const byWeight = (f: number) => ({
    'main|yes': weight.main * f, 'resolved|no': weight.resolved * f, 'lost|yes': weight.lost * f, 'unknown|no': weight.unknown * f,
    'main|*': weight.main * f, 'resolved|*': weight.resolved * f, 'lost|*': weight.lost * f, 'unknown|*': weight.unknown * f,
    '*|no': weight.no * f, '*|yes': weight.yes * f, '*|*': weight.all * f,
  });
  nearAll(cells(crosstab(dir, ['--measure', 'weight'])), byWeight(1), 'weight');
  nearAll(cells(crosstab(dir, ['--measure', 'usd'])), byWeight(5e-6), 'USD');
  // write:read weight, a ratio of sums: main 15,000 / 1,000 = 15; resolved 1,875 / 100 = 18.75; lost 21,250 / 150;
  // unknown read nothing: null; no (1,875 + 4,000) / 100 = 58.75; yes 36,250 / 1,150; all 42,125 / 1,250 = 33.7
  nearAll(cells(crosstab(dir, ['--measure', 'write_read_ratio'])), {
    'main|yes': 15, 'resolved|no': 18.75, 'lost|yes': 21_250 / 150, 'unknown|no': null,
    'main|*': 15, 'resolved|*': 18.75, 'lost|*': 21_250 / 150, 'unknown|*': null, '*|no': 58.75, '*|yes': 36_250 / 1_150, '*|*': 33.7,
  }, 'write:read');
  // hit ratio Σr / ΣP: main 10,000 / 22,000; resolved 1,000 / 2,500; lost 1,500 / 18,500; unknown 0 / 2,000;
  // no 1,000 / 4,500; yes 11,500 / 40,500; all 12,500 / 45,000
  nearAll(cells(crosstab(dir, ['--measure', 'hit_ratio'])), {
    'main|yes': 10 / 22, 'resolved|no': 0.4, 'lost|yes': 1_500 / 18_500, 'unknown|no': 0,
    'main|*': 10 / 22, 'resolved|*': 0.4, 'lost|*': 1_500 / 18_500, 'unknown|*': 0, '*|no': 1_000 / 4_500, '*|yes': 11_500 / 40_500, '*|*': 12_500 / 45_000,
  }, 'hit ratio');
  // re-attachments: l1 1, l2 2; main's single listing none
  nearAll(cells(crosstab(dir, ['--measure', 'reattachments'])), {
    'main|yes': 0, 'resolved|no': 0, 'lost|yes': 3, 'unknown|no': 0,
    'main|*': 0, 'resolved|*': 0, 'lost|*': 3, 'unknown|*': 0, '*|no': 0, '*|yes': 3, '*|*': 3,
  }, 're-attachments');
});

test('§4: the other dimensions (agent_type, namespaced, ttl, rounds, rounds bucket, skill_listing count) of the same chains', () => {
  const dir = corpus();
  const chainsBy = (rows: string, cols: string) => cells(crosstab(dir, ['--rows', rows, '--cols', cols]));
  // agent types: main, Explore (r1), planner (l1, l2: the meta's), unknown (u1); none namespaced (the meta's planner has no ':')
  nearAll(chainsBy('agent_type', 'namespaced'), {
    'main|no': 1, 'Explore|no': 1, 'planner|no': 2, 'unknown|no': 1,
    'main|*': 1, 'Explore|*': 1, 'planner|*': 2, 'unknown|*': 1, '*|no': 5, '*|*': 5,
  }, 'agent_type × namespaced');
  // TTL: u1 wrote 1-hour tokens, the others 5-minute only. rounds: main 2, r1 1, l1 2, l2 3, u1 1
  nearAll(chainsBy('ttl', 'rounds'), {
    '5m|1': 1, '5m|2': 2, '5m|3': 1, '1h|1': 1,
    '5m|*': 4, '1h|*': 1, '*|1': 2, '*|2': 2, '*|3': 1, '*|*': 5,
  }, 'ttl × rounds');
  // rounds buckets 1 and 2-3 by skill_listing count: 0 (r1, u1), 1 (main), 2 (l1), 3 (l2)
  nearAll(chainsBy('rounds_bucket', 'skill_listing'), {
    '1|0': 2, '2-3|1': 1, '2-3|2': 1, '2-3|3': 1,
    '1|*': 2, '2-3|*': 3, '*|0': 2, '*|1': 1, '*|2': 1, '*|3': 1, '*|*': 5,
  }, 'rounds_bucket × skill_listing');
});

test('§4: project, session, day and model are each a chain\'s: its cwd, its session, its first request\'s day, the model of most of its prompt tokens', () => {
  // Session T in /work/other, a day later (2026-03-02, UTC): its main chain sends an Opus 4.6 request of P 1,000 (w5)
  // and a Sonnet 4.6 one of P 5,000 (r 1,000, w5 4,000): the chain's model is Sonnet 4.6 (5,000 of its 6,000 prompt
  // tokens), both its requests counted there. S's five chains are all Opus on 2026-03-01.
  const T = '5bec0000-0000-4000-8000-0000000005c2';
  const dir = corpus();
  writeCorpus({
    [`projects/-work-other/${T}.jsonl`]: [
      userPrompt(T, at(86_400), 'go', undefined, '/work/other'),
      assistant({ session: T, msg: 't1', t: at(86_401), u: { w5: 1_000 }, cwd: '/work/other' }),
      assistant({ session: T, msg: 't2', t: at(86_402), model: 'claude-sonnet-4-6', u: { r: 1_000, w5: 4_000 }, cwd: '/work/other' }),
    ],
  }, dir);
  nearAll(cells(crosstab(dir, ['--rows', 'project', '--cols', 'day', '--measure', 'requests'])), {
    '/work/demo|2026-03-01': 10, '/work/other|2026-03-02': 2,
    '/work/demo|*': 10, '/work/other|*': 2, '*|2026-03-01': 10, '*|2026-03-02': 2, '*|*': 12,
  }, 'project × day');
  nearAll(cells(crosstab(dir, ['--rows', 'session', '--cols', 'model'])), {
    [`${S}|claude-opus-4-6`]: 5, [`${T}|claude-sonnet-4-6`]: 1,
    [`${S}|*`]: 5, [`${T}|*`]: 1, '*|claude-opus-4-6': 5, '*|claude-sonnet-4-6': 1, '*|*': 6,
  }, 'session × model');
});

test('§4: a chain spanning two days is its first request\'s day; one writing 5-minute and 1-hour tokens is 1h; one with 0 rounds and 0 listings is no "listings = rounds"', () => {
  // Session D (UTC): its main chain's requests at 23:59:50 on 2026-03-04 (w5 1,000) and 00:00:10 on 2026-03-05
  // (r 1,000, w1h 500): one chain, of day 2026-03-04 (its first request's) and TTL 1h (a 1-hour write among its
  // writes), both requests counted there. Its subagent z1's file holds one todo_reminder attachment and nothing else:
  // a chain of 0 rounds, 0 requests and 0 skill listings, whose 0 = 0 is no "listings = rounds" (rounds must be > 0).
  const D = '5bec0000-0000-4000-8000-0000000005c3';
  const dir = writeCorpus({
    [`${P}/${D}.jsonl`]: [
      userPrompt(D, '2026-03-04T23:59:40.000Z'),
      assistant({ session: D, msg: 'd1', t: '2026-03-04T23:59:50.000Z', u: { w5: 1_000 } }),
      assistant({ session: D, msg: 'd2', t: '2026-03-05T00:00:10.000Z', u: { r: 1_000, w1h: 500 } }),
    ],
    [`${P}/${D}/subagents/agent-z1.jsonl`]: [
      { type: 'attachment', sessionId: D, agentId: 'z1', isSidechain: true, cwd: '/work/demo', timestamp: '2026-03-04T23:59:45.000Z', uuid: 'att-z1', attachment: { type: 'todo_reminder', content: [] } },
    ],
  });
  nearAll(cells(crosstab(dir, ['--rows', 'day', '--cols', 'ttl', '--measure', 'requests', '--kind', 'main'])), {
    '2026-03-04|1h': 2, '2026-03-04|*': 2, '*|1h': 2, '*|*': 2,
  }, 'day × ttl');
  const z = crosstab(dir, ['--rows', 'rounds', '--cols', 'has_skill_listing', '--kind', 'subagent']);
  nearAll(cells(z), { '0|no': 1, '0|*': 1, '*|no': 1, '*|*': 1 }, 'rounds × has_skill_listing');
  assert.deepEqual(z.attachments_equal_rounds.map((c: any) => [c.row, c.col, c.chains, c.matching, c.equal]), [[0, 'no', 1, 0, false]]);
});

test('§4: the terminal table and the report show the JSON\'s figures, and name the cell where attachments equal rounds', async () => {
  const dir = corpus();
  const out = crosstab(dir, [], false);
  // each figure read under its column's heading (right-aligned): a blank cell is ''
  const figure = (row: string, col: string) => {
    const lines = out.split('\n');
    const head = lines.find((l: string) => l.startsWith('definition \\ has_skill_listing'))!;
    const end = new RegExp(` ${col}(?= |$)`).exec(head)!.index + col.length + 1;
    const line = lines.find((l: string) => l.startsWith(`${row} `))!;
    return /(\S*)$/.exec(line.slice(0, end))![1];
  };
  const table = ['main', 'resolved', 'lost', 'unknown', 'total'].map((r) => [r, figure(r, 'no'), figure(r, 'yes'), figure(r, 'total')]);
  assert.deepEqual(table, [['main', '', '1', '1'], ['resolved', '1', '', '1'], ['lost', '', '2', '2'], ['unknown', '1', '', '1'], ['total', '2', '3', '5']]);
  assert.match(out, /^ +lost × yes: yes — 2 of 2 chains$/m);
  assert.match(out, /^ +main × yes: no — 0 of 1 chain$/m);
  const weight = crosstab(dir, ['--measure', 'weight'], false);
  assert.match(weight, /^total +6,075 +38,650 │ +44,725$/m);
  const ctx = await openContext({ paths: [dir], db: ':memory:', timezone: 'UTC' });
  try {
    const html = /<section[^>]* id="cross-tab"[\s\S]*?<\/section>/.exec(renderReport(await buildReportData(ctx)))![0];
    const text = html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
    // per agent type and definition: chains, with skill_listing (share), without, listings, rounds, listings = rounds, weight
    assert.match(text, / main main 1 1 \(100%\) 0 1 2 0 \/ 1 16,750 wt /);
    assert.match(text, / Explore resolved 1 0 \(0%\) 1 0 1 0 \/ 1 2,075 wt /);
    assert.match(text, / planner lost 2 2 \(100%\) 0 5 5 2 \/ 2 21,900 wt /);
    assert.match(text, / unknown unknown 1 0 \(0%\) 1 0 1 0 \/ 1 4,000 wt /);
    assert.match(text, /In “planner” \(definition lost\) every chain \(2\) carries as many skill_listing attachments as rounds; “unknown” \(definition unknown\) and “Explore” \(definition resolved\) have none, 2 chains in all\./);
  } finally {
    ctx.store.close();
  }
});
