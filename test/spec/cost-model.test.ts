/**
 * SPEC §2 (cost model), checked by hand on a corpus small enough to price on paper: `summary --json`
 * against the arithmetic below, the terminal tables and the HTML report against the JSON.
 *
 * Weights are per token, relative to the model's base input price (§2.1): Opus 4.6 ($5/M) in 1, w5 1.25,
 * w1h 2, r 0.1, out 5; Sonnet 4.5 ($3/M) above 200,000 prompt tokens bills the whole request at $6 / $22.50
 * with the same multipliers (§2.2), i.e. in 2, w5 2.5, w1h 4, r 0.2, out 7.5 of its $3 base.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openContext } from '../../src/context.js';
import { buildReportData } from '../../src/report/build.js';
import { renderReport } from '../../src/report/render.js';
import { assistant, cli, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { near } from '../analyses/helpers/fixtures.js';

const S = '5bec0000-0000-4000-8000-0000000002c0';
const P = 'projects/-work-demo';
/** ISO time `s` seconds after 2026-03-01 10:00:00 UTC. */
const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 10) + s * 1000).toISOString();

/**
 * One main chain (one file):
 *   m1 t 0     opus    in 10, w5 10,000, out 100 — written twice (out 50, then 100: one request, the field-wise maximum)
 *              weight 10 + 12,500 + 500 = 13,010
 *   m2 t 240 s opus    in 5, r 10,000, w1h 2,000 (a 1-hour write), out 200
 *              weight 5 + 1,000 + 4,000 + 1,000 = 6,005
 *   m3 t 600 s opus    usage without cache_read_input_tokens and without the 5m/1h split: in 3, w 500, out 7
 *              → r 0, w5 = w = 500 (split_missing); weight 3 + 625 + 35 = 663
 *   m4 t 700 s sonnet-4-5-20250929 (a model switch, priced by its undated id) in 1, r 150,000, w5 60,000, out 1,000
 *              P = 210,001 > 200,000: long context; weight 2 + 150,000 + 30,000 + 7,500 = 187,502; USD × $3/M = 0.562506
 *   m5 t 800 s claude-foo-1 (no price): in 1, w5 100, out 1 — counted, its cost unknown (never $0)
 * Opus: 13,010 + 6,005 + 663 = 19,678 wt = $0.09839. Total priced: 207,180 wt, $0.660896 (+? the unpriced request).
 */
function corpus(): string {
  return writeCorpus({
    [`${P}/${S}.jsonl`]: [
      userPrompt(S, at(-5)),
      assistant({ session: S, msg: 'm1', t: at(0), u: { in: 10, w5: 10_000, out: 50 } }),
      assistant({ session: S, msg: 'm1', t: at(1), u: { in: 10, w5: 10_000, out: 100 } }),
      assistant({ session: S, msg: 'm2', t: at(240), u: { in: 5, r: 10_000, w1h: 2_000, out: 200 } }),
      (() => {
        const line = assistant({ session: S, msg: 'm3', t: at(600), u: {} }) as any;
        line.message.usage = { input_tokens: 3, cache_creation_input_tokens: 500, output_tokens: 7 };
        return line;
      })(),
      assistant({ session: S, msg: 'm4', t: at(700), model: 'claude-sonnet-4-5-20250929', u: { in: 1, r: 150_000, w5: 60_000, out: 1_000 } }),
      assistant({ session: S, msg: 'm5', t: at(800), model: 'claude-foo-1', u: { in: 1, w5: 100, out: 1 } }),
    ],
  });
}

function run(args: string[]): { code: number; stdout: string; stderr: string } {
  return cli([...args, '--db', ':memory:', '--timezone', 'UTC']);
}

test('§2: every request priced by hand — duplicate lines, a missing usage field, a 1-hour write, long context, an unpriced model', () => {
  const dir = corpus();
  const r = run(['summary', dir, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  const t = s.totals;
  assert.deepEqual(
    [t.requests, t.input, t.output, t.cache_write_5m, t.cache_write_1h, t.cache_read, t.unpriced_requests],
    [5, 10 + 5 + 3 + 1 + 1, 100 + 200 + 7 + 1_000 + 1, 10_000 + 500 + 60_000 + 100, 2_000, 160_000, 1],
  );
  near(t.weight, 207_180, 'total weight');
  near(t.usd, 0.660896, 'total USD');
  const model = (m: string) => s.by_model.find((x: any) => x.model === m);
  near(model('claude-opus-4-6').weight, 19_678, 'opus weight');
  near(model('claude-opus-4-6').usd, 0.09839, 'opus USD');
  near(model('claude-sonnet-4-5-20250929').weight, 187_502, 'long-context weight');
  near(model('claude-sonnet-4-5-20250929').usd, 0.562506, 'long-context USD');
  assert.deepEqual([model('claude-foo-1').weight, model('claude-foo-1').usd], [null, null], 'unknown, never $0');
  assert.equal(s.quality.duplicates_removed, 1);
  assert.deepEqual(s.quality.unknown_models, [{ model: 'claude-foo-1', requests: 1, tokens: 102 }]);
  // the terminal table: the JSON's figures, and +? on the sums that leave the unpriced request out
  const text = run(['summary', dir]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^total +5 +20 +1,308 +70,600 +2,000 +160,000 +207,180 \+\? +\$0\.6609 \+\?$/m);
  assert.match(text.stdout, /^claude-foo-1 .* unknown +unknown$/m);
});

test('§2: the report marks +? every cost that leaves the unpriced request out, as summary and blocks do (cost over time, cost by project / model / agent type, 5-hour blocks, the agent-type cross-tab); a fully priced row stays unmarked', async () => {
  const dir = corpus();
  // summary by_day, by_project and blocks mark these sums +?; the report printed $0.6609 bare in each
  for (const cmd of ['summary', 'blocks']) assert.match(run([cmd, dir]).stdout, /\$0\.6609 \+\?/, cmd);
  const ctx = await openContext({ paths: [dir], db: ':memory:', timezone: 'UTC' });
  try {
    const page = renderReport(await buildReportData(ctx));
    const section = (id: string) => {
      const html = new RegExp(`<section[^>]* id="${id}"[\\s\\S]*?</section>`).exec(page)![0];
      return html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
    };
    // cost over time: the day's total $0.6609 +?; of its components, those with tokens of the unpriced request
    // (input 1, output 1, 5m write 100) are marked, the 1h write ($0.0200 = 2,000 × 2 × $5/M) and read
    // ($0.0950 = 1,000 × $5/M + 30,000 × $3/M) are whole
    const time = section('cost-over-time');
    assert.match(time, /All on 2026-03-01: \$0\.6609 \+\?/);
    assert.match(time, /2026-03-01 \$0\.0001 \+\? \$0\.0302 \+\? \$0\.5156 \+\? \$0\.0200 \$0\.0950 \$0\.6609 \+\?/);
    // cost by: the project and agent type hold the unpriced request; the priced models are whole
    const by = section('cost-by');
    assert.match(by, /\/work\/demo \$0\.6609 \+\? 100\.0% 207,180 wt \+\?/);
    assert.match(by, /main \$0\.6609 \+\? 100\.0% 207,180 wt \+\?/);
    assert.match(by, /claude-sonnet-4-5-20250929 \$0\.5625 85\.1% 187,502 wt(?! \+\?)/);
    assert.match(by, /claude-opus-4-6 \$0\.0984 14\.9% 19,678 wt(?! \+\?)/);
    assert.match(by, /claude-foo-1 unknown n\/a unknown/);
    // the agent-type × skill_listing table's weight: `crosstab --measure weight` prints 207,180 +?
    assert.match(run(['crosstab', dir, '--measure', 'weight', '--rows', 'agent_type']).stdout, /^main +207,180 \+\? /m);
    assert.match(section('cross-tab'), /main main 1 0 \(0%\) 1 0 1 0 \/ 1 207,180 wt \+\?/);
    const blocks = section('blocks');
    assert.match(blocks, /cost \$0\.6609 \+\? over 5 requests \(median block \$0\.6609 \+\?\)/);
    assert.match(blocks, /2026-03-01 10:00 2026-03-01 15:00 5 233,928 \$0\.6609 \+\?/);
  } finally {
    ctx.store.close();
  }
});

test('§2: one rule marks a component +?: the unpriced request has tokens of it (input, output, 5m write; its growth), not the 1h write, reads, cold (cost by, anatomy, the report)', async () => {
  // m5, unpriced, has in 1, w5 100 (growth: under the 1,024-token jitter), out 1: the components it leaves out
  const dir = corpus();
  // anatomy: growth, input, 5m writes and output leave it out (+?); cold (m1's 10,000 w5 = 12,500), expiry, break,
  // 1h writes (2,000 × 2) and reads (10,000 × 0.1 + 150,000 × 0.2 of Sonnet's $3) are whole (each was marked)
  const text = run(['anatomy', dir]).stdout;
  assert.match(text, /^cold +10,000 +13\.8% +12,500$/m);
  assert.match(text, /^growth +62,600 +86\.2% +154,625 \+\?$/m);
  assert.match(text, /^expiry +0 +0\.0% +0$/m);
  assert.match(text, /^ {2}1h writes +4,000$/m);
  assert.match(text, /^ {2}reads +31,000$/m);
  assert.match(text, /^ {2}5m writes +163,125 \+\?$/m);
  assert.match(text, /^ {2}input +20 \+\?$/m);
  const json = JSON.parse(run(['anatomy', dir, '--json']).stdout);
  assert.deepEqual(json.totals.unpriced_tokens, { cold: 0, growth: 100, expiry: 0, break: 0, input: 1, write5m: 100, write1h: 0, read: 0, output: 1 });
  const ctx = await openContext({ paths: [dir], db: ':memory:', timezone: 'UTC' });
  try {
    const page = renderReport(await buildReportData(ctx));
    // cost by project and by agent type: each bar segment as cost over time marks it, by the component's tokens of the
    // unpriced request (every segment of the bar was marked: the 1h write's $0.0200 and the reads' $0.0950 too)
    for (const key of ['/work/demo', 'main']) {
      const seg = (component: string) => new RegExp(`"key":"${key}","label":"${key}","component":"${component}","order":\\d,"usd":[\\d.e-]+,"usdText":"([^"]*)"`).exec(page)![1];
      assert.deepEqual(['input', 'output', '5m write', '1h write', 'read'].map(seg), ['$0.0001 +?', '$0.0302 +?', '$0.5156 +?', '$0.0200', '$0.0950'], key);
    }
    // the report's anatomy table: main's growth is marked, its cold (and expiry, break) whole
    const anatomy = /<section[^>]* id="anatomy"[\s\S]*?<\/section>/.exec(page)![0].replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
    assert.match(anatomy, / main 12,500 154,625 \+\? 0 0 0\.0% /);
  } finally {
    ctx.store.close();
  }
});

test("§2: the report's top chains mark a chain's cost +? when some of its requests have no price, its waste only when they wrote expiry or break tokens, as anatomy marks its sums", async () => {
  // t 0 opus w5 10,000 (cold); t 400 s opus r 0, w5 11,000: gap 400 s > 5 min, C = 10,000 → expiry 10,000, growth 1,000;
  // waste 10,000 × (1.25 − 0.1) = 11,500 wt = $0.0575; t 410 s claude-foo-1 w5 100 (no price). Priced cost
  // 12,500 + 13,750 = 26,250 wt = $0.1313 (0.13125, halves away from zero), leaving claude-foo-1 out; its 100 tokens
  // are growth, no expiry or break: the waste leaves nothing out and is whole (README: one rule for +?).
  const dir = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      userPrompt(S, at(-5)),
      assistant({ session: S, msg: 'k1', t: at(0), u: { w5: 10_000 } }),
      assistant({ session: S, msg: 'k2', t: at(400), u: { w5: 11_000 } }),
      assistant({ session: S, msg: 'k3', t: at(410), model: 'claude-foo-1', u: { w5: 100 } }),
    ],
  });
  const a = JSON.parse(run(['anatomy', dir, '--json']).stdout);
  near(a.chains[0].waste_weight, 11_500, 'waste');
  near(a.chains[0].weight, 26_250, 'weight');
  assert.equal(a.chains[0].unpriced_requests, 1);
  assert.equal(a.chains[0].unpriced_tokens.expiry + a.chains[0].unpriced_tokens.break, 0);
  const ctx = await openContext({ paths: [dir], db: ':memory:', timezone: 'UTC' });
  try {
    const html = /<section[^>]* id="top-chains"[\s\S]*?<\/section>/.exec(renderReport(await buildReportData(ctx)))![0];
    const text = html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
    assert.match(text, /wasted \$0\.0575 \(11,500 wt\);/);
    assert.match(text, /waste \$0\.0575 \(11,500 wt\) cost \$0\.1313 \(26,250 wt\) \+\?/);
  } finally {
    ctx.store.close();
  }
});
