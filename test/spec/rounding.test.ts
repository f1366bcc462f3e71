/**
 * How the text rounds what --json gives: every number as --json writes it (12 significant digits),
 * then halves away from zero, whatever its unit. USD and weights were rounded so; percentages were
 * rounded by toFixed on the binary double, so a share --json writes as 0.0015 printed 0.1%, not 0.2%
 * (0.15 is 0.1499999… in binary), while $0.00015 printed $0.0002.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openContext } from '../../src/context.js';
import { pct, usd } from '../../src/format/table.js';
import { buildReportData } from '../../src/report/build.js';
import { fmtPct, fmtSignedPct } from '../../src/report/format.js';
import { renderReport } from '../../src/report/render.js';
import { signedPct } from '../../src/reporters/units.js';
import { assistant, cli, userPrompt, writeCorpus } from '../helpers/corpus.js';

const S = '5bec0000-0000-4000-8000-0000000004d0';
const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 10) + s * 1000).toISOString();

test('percentages round as --json writes them, halves away from zero, as USD does: 0.0015 is 0.2%, 0.145% is +0.15%', () => {
  // the USD rule, for comparison: 0.00015 is $0.0002, 1.005 is $1.01
  assert.equal(usd(0.00015), '$0.0002');
  assert.equal(usd(1.005), '$1.01');
  assert.equal(pct(0.0015), '0.2%');
  assert.equal(pct(0.0185), '1.9%');
  assert.equal(pct(-0.0015), '-0.2%');
  assert.equal(pct(-0.0004), '0.0%', 'no minus on a share that rounds to 0');
  assert.equal(pct(12.345678), '1,234.6%');
  assert.equal(signedPct(0.145), '+0.15%');
  assert.equal(signedPct(-1.005), '-1.01%');
  assert.equal(signedPct(-241642.1934), '-241,642.19%');
  assert.equal(fmtPct(0.0015), '0.2%');
  assert.equal(fmtPct(-0.0015), '−0.2%');
  assert.equal(fmtSignedPct(0.0185), '+1.9%');
  assert.equal(fmtPct(12.345), '1,234.5%');
});

test("a hit ratio --json gives as 0.0015 is 0.2% in anatomy's table and in the report, as it rounds $0.00015 to $0.0002", async () => {
  // one request: in 1,997, r 3: P = 2,000, hit ratio Σr/ΣP = 3 / 2,000 = 0.0015
  const dir = writeCorpus({
    [`projects/-work-demo/${S}.jsonl`]: [userPrompt(S, at(-5)), assistant({ session: S, msg: 'h1', t: at(0), u: { in: 1_997, r: 3 } })],
  });
  const r = cli(['anatomy', dir, '--db', ':memory:', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).totals.hit_ratio, 0.0015);
  const text = cli(['anatomy', dir, '--db', ':memory:']).stdout;
  assert.match(text, /^hit ratio Σr\/ΣP +0\.2%$/m);
  const ctx = await openContext({ paths: [dir], db: ':memory:', timezone: 'UTC' });
  try {
    const headline = /<section[^>]* id="headline"[\s\S]*?<\/section>/.exec(renderReport(await buildReportData(ctx)))![0].replace(/<[^>]*>/g, ' ');
    assert.match(headline, /0\.2% of prompt tokens were cache reads/);
  } finally {
    ctx.store.close();
  }
});

test("a write:read weight ratio --json gives as 1.005 is 1.01 : 1 in anatomy's table and 1.01 in crosstab's, rounded as percentages and USD are", () => {
  // one request: w5 804 (1,005 wt), r 10,000 (1,000 wt): write:read weight 1,005 / 1,000 = 1.005 (toFixed printed 1.00,
  // the double being 1.00499…); nothing read is no ratio
  const dir = writeCorpus({
    [`projects/-work-demo/${S}.jsonl`]: [userPrompt(S, at(-5)), assistant({ session: S, msg: 'w1', t: at(0), u: { w5: 804, r: 10_000 } })],
  });
  const r = cli(['anatomy', dir, '--db', ':memory:', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).totals.write_read_ratio, 1.005);
  assert.match(cli(['anatomy', dir, '--db', ':memory:']).stdout, /^write:read weight +1\.01 : 1$/m);
  assert.match(cli(['crosstab', dir, '--db', ':memory:', '--rows', 'agent_type', '--measure', 'write_read_ratio']).stdout, /^main +1\.01 │ +1\.01$/m);
});
