/**
 * How the text rounds what --json gives: every number as --json writes it (12 significant digits),
 * then halves away from zero, whatever its unit. USD and weights were rounded so; percentages were
 * rounded by toFixed on the binary double, so a share --json writes as 0.0015 printed 0.1%, not 0.2%
 * (0.15 is 0.1499999… in binary), while $0.00015 printed $0.0002.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
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

test('replay channel prints a weight and a mean of tokens as --json writes them, then halves away from zero: 1234.5 in --json is 1,235, not 1,234 (Intl rounded the double, 1234.4999999999998)', async () => {
  const { formatChannelReplay } = await import('../../src/replay/channel-report.js');
  const { jsonNumber } = await import('../../src/format/json-numbers.js');
  const channel = JSON.parse(cli(['replay', 'channel', fileURLToPath(new URL('../../sample-logs/channels/backend.jsonl', import.meta.url)), '--json']).stdout);
  const ch = channel.strategies.window;
  // sums of weights carry their doubles' last bits: each ends in exactly 5 at the cut digit once --json rounds it
  const weight = 1234.4999999999998;
  const mean = 2.4999999999999996;
  assert.deepEqual([jsonNumber(weight), jsonNumber(mean)], [1234.5, 2.5]);
  Object.assign(ch, { weight, uncached_per_warm_turn: mean });
  const text = formatChannelReplay(channel);
  assert.match(text, /^weighted cost \(base-input tokens\) +1,235 /m);
  assert.match(text, /^uncached tokens per warm turn +3 /m);
});

test('replay channel, replay session and the report round a replay\'s shares, ratios and scale as --json writes them, halves away from zero; gaps too', async () => {
  const { formatChannelReplay } = await import('../../src/replay/channel-report.js');
  const { formatSessionReplay, sessionReplayRun } = await import('../../src/replay/session-report.js');
  const { calibrationLine, renderReplay } = await import('../../src/report/section-replay.js');
  const { ChartSink } = await import('../../src/report/section.js');
  const { duration } = await import('../../src/reporters/units.js');
  // the sample's replays, each first strategy given 145 of 1,000 context tokens already seen (0.145: Math.round(14.499…)
  // made it 14% in replay channel, 15% in replay session and the report) and a cacheable ratio of 0.1235 (toFixed(3)
  // made it 0.123, the double being 0.12349…)
  const channel = JSON.parse(cli(['replay', 'channel', fileURLToPath(new URL('../../sample-logs/channels/backend.jsonl', import.meta.url)), '--json']).stdout);
  const ch = channel.strategies.window;
  Object.assign(ch, { context_tokens: 1_000, already_seen_tokens: 145, already_seen_share: 0.145, cacheable_ratio: 0.1235 });
  const chText = formatChannelReplay(channel);
  assert.match(chText, /^ {2}of which already seen +145 \(15%\) /m);
  assert.match(chText, /^cacheable ratio +0\.124 /m);
  const session = JSON.parse(cli(['replay', 'session', 'top', fileURLToPath(new URL('../../sample-logs', import.meta.url)), '--db', ':memory:', '--json']).stdout);
  const st = session.strategies.recorded;
  Object.assign(st, { context_tokens: 1_000, already_seen_tokens: 145, already_seen_share: 0.145, cacheable_ratio: 0.1235 });
  const sText = formatSessionReplay(session);
  assert.match(sText, /^ {2}of which already seen +145 \(15%\) /m);
  assert.match(sText, /^cacheable ratio +0\.124 /m);
  const body = String(renderReplay({ runs: [sessionReplayRun(session)] }, new ChartSink()).body).replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
  assert.match(body, / recorded [\d,]+ [\d,]+ 0\.124 [\d,n/a]+ 1,000 145 \(15%\) /);
  // a calibration scale of 1.0005 (1.000499… in binary) is × 1.001, not × 1.000
  assert.match(String(calibrationLine({ k: 5, scale: 1.0005, heldOutFrom: 7, reason: null }, null)), /conversation tokens × 1\.001 in every strategy/);
  // gaps: 69 s is 1.15 min (1.1499… in binary), 14,580 s 4.05 h (4.0499…); the unit is the one below 60 once rounded
  assert.equal(duration(69), '1.2m');
  assert.equal(duration(14_580), '4.1h');
  assert.equal(duration(59.6), '1.0m');
  assert.equal(duration(3_599), '1.0h');
  assert.equal(duration(59.4), '59s');
  assert.equal(duration(1_152), '19.2m');
});
