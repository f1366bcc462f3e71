/** The report renderer without a browser: escaping, CSP hashes, self-containment, error cards, readings. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { cleanStrings, escapeHtml, jsonForScript } from '../../src/report/escape.js';
import { jsonText, usd } from '../../src/format/table.js';
import { renderReport } from '../../src/report/render.js';
import { CHART_SPECS, compileCharts, vegaSpec, type ChartSpecName } from '../../src/report/charts.js';
import { reportsDir } from '../../src/report/assets.js';
import { crossTabReading, renderCrossTab } from '../../src/report/section-crosstab.js';
import { renderTtlOverride, ttlReading } from '../../src/report/section-ttl.js';
import { keepaliveReading, renderKeepalive } from '../../src/report/section-keepalive.js';
import { chainReading } from '../../src/report/section-chains.js';
import { renderAnatomy } from '../../src/report/section-anatomy.js';
import { renderCostBy } from '../../src/report/section-cost-by.js';
import { AXIS_LABEL_MAX, axisLabels, ChartSink } from '../../src/report/section.js';
import { SECTIONS } from '../../src/report/sections.js';
import { JSON_DIGITS, jsonNumber } from '../../src/format/json-numbers.js';
import { zoneOffsetMs } from '../../src/format/days.js';
import { fmtBytes, fmtCompact, fmtInt, fmtPct, fmtSignedPct, fmtUsd, fmtWeight } from '../../src/report/format.js';
import { COST_BY_KEYS, type CostBy, type CostOverTime, type CrossTab, type Headline, type Keepalive, type ReportData, type TopChains, type TtlOverride } from '../../src/report/data.js';
import type { Definition } from '../../src/types.js';
import { fixtureReport } from './fixtures.js';

const page = renderReport(fixtureReport());

function inlineScripts(htmlText: string): Array<{ attrs: string; body: string }> {
  return [...htmlText.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((m) => ({ attrs: m[1]!, body: m[2]! }));
}

function csp(htmlText: string): string {
  const m = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(htmlText);
  assert.ok(m, 'the page has a CSP meta tag');
  return m[1]!.replace(/&#39;/g, "'");
}

test('jsonForScript output has no <, >, &, control character, U+2028, U+2029 and parses back to the same value', () => {
  assert.equal(jsonForScript({ p: '</script><!--&\u2028\u2029' }), '{"p":"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028\\u2029"}');
  assert.equal(jsonForScript(['\u0000\u007f\u0085']), '["\\u0000\\u007f\\u0085"]');
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      const s = jsonForScript(v);
      assert.doesNotMatch(s, /[<>&\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
      assert.deepEqual(JSON.parse(s), JSON.parse(JSON.stringify(v)));
    }),
  );
});

test('escapeHtml turns every bidi control into ?, as the terminal tables do: a right-to-left override in a path no longer reverses the page\'s text', () => {
  assert.equal(escapeHtml('/home/\u202eexe.txt\u202c'), '/home/?exe.txt?');
  assert.equal(escapeHtml('a\u061cb\u200ec\u200fd\u202ae\u2066f\u2069<'), 'a?b?c?d?e?f?&lt;');
  assert.equal(escapeHtml('日本語 ok 👩\u200d🚀'), '日本語 ok 👩\u200d🚀', 'other text, a zero-width joiner in an emoji included, is kept');
  assert.equal(escapeHtml('a\u0000b\tc\nd\u007fe\u0085f\u2028g\u2029'), 'a?b?c?d?e?f?g?', 'and every other control character, as the terminal\'s clean() does');
});

test('the charts get their data with every bidi control as ?, and the embedded JSON carries them as escapes that parse back', () => {
  const bidi = '\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069';
  assert.deepEqual(cleanStrings({ a: ['/home/\u202eexe.txt', 1, null, { [`k${bidi}`]: bidi }] }), { a: ['/home/?exe.txt', 1, null, { 'k????????????': '????????????' }] });
  assert.equal(jsonForScript(['a\u202eb\u2066']), '["a\\u202eb\\u2066"]');
  const data = fixtureReport();
  const cb = data.costBy as CostBy;
  cb.rows.filter((r) => r.key === '/home/dev/marot-spotter').forEach((r) => (r.key = '/home/dev/\u202emarot' + bidi));
  const htmlText = renderReport(data);
  assert.doesNotMatch(htmlText, /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/, 'no bidi control anywhere in the page source');
  const charts = JSON.parse(/<script type="application\/json" id="cachelens-charts">([\s\S]*?)<\/script>/.exec(htmlText)![1]!);
  const keys = charts.charts.flatMap((c: { data: { rows?: Array<{ key?: string }> } }) => (c.data.rows ?? []).map((r) => r.key));
  assert.ok(keys.includes('/home/dev/?marot????????????'), 'the project reaches its chart with ? for each control');
  const embedded = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(htmlText)![1]!);
  assert.deepEqual(embedded, JSON.parse(jsonText(data, undefined, 'rounded')), 'the page data round-trips as --json prints it');
});

test('invisible characters (zero-width space, word joiner, BOM, soft hyphen, a joiner between Latin letters) show as ? on the page and in its charts: plan\u200bner is not planner', () => {
  assert.equal(escapeHtml('plan\u200bner<\u2060\ufeff\u00ad\u200d'), 'plan?ner&lt;????');
  assert.deepEqual(cleanStrings({ ['k\u200b']: ['plan\u200bner', '👩\u200d🚀'] }), { 'k?': ['plan?ner', '👩\u200d🚀'] });
  assert.equal(jsonForScript(['plan\u200bner']), '["plan\\u200bner"]');
  const data = fixtureReport();
  const cb = data.costBy as CostBy;
  cb.rows.filter((r) => r.key === '/home/dev/marot-spotter').forEach((r) => (r.key = '/home/dev/marot\u200b-spotter\u2060'));
  const htmlText = renderReport(data);
  assert.doesNotMatch(htmlText, /[\u200b\u2060]/, 'no invisible character anywhere in the page source');
  assert.ok(htmlText.includes('/home/dev/marot?-spotter?'), 'the project shows with a ? for each');
  const charts = JSON.parse(/<script type="application\/json" id="cachelens-charts">([\s\S]*?)<\/script>/.exec(htmlText)![1]!);
  const keys = charts.charts.flatMap((c: { data: { rows?: Array<{ key?: string }> } }) => (c.data.rows ?? []).map((r) => r.key));
  assert.ok(keys.includes('/home/dev/marot?-spotter?'), 'the project reaches its chart with ? for each');
  const embedded = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(htmlText)![1]!);
  assert.ok(JSON.stringify(embedded).includes('/home/dev/marot\u200b-spotter\u2060'), 'the page data keeps the path as data');
});

test('escapeHtml leaves no markup characters', () => {
  assert.equal(escapeHtml(`<img src=x onerror="a('b')">&amp;`), '&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;amp;');
  fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => assert.doesNotMatch(escapeHtml(s), /[<>"']|&(?!amp;|lt;|gt;|quot;|#39;)/)));
});

test('the CSP forbids remote loads and eval, and allows exactly the inline scripts and style by hash', () => {
  const policy = csp(page);
  assert.match(policy, /^default-src 'none';/);
  assert.doesNotMatch(policy, /unsafe-eval|https?:|\*/);
  const scriptSrc = /script-src ([^;]*)/.exec(policy)![1]!.split(' ');
  assert.ok(!scriptSrc.includes("'unsafe-inline'"));
  const executable = inlineScripts(page).filter((s) => !/type="application\/json"/.test(s.attrs));
  assert.equal(executable.length, 3, 'vega, vega-interpreter, page script');
  const hashes = executable.map((s) => `'sha256-${createHash('sha256').update(s.body, 'utf8').digest('base64')}'`);
  assert.deepEqual(scriptSrc, hashes);
  const style = /<style>([\s\S]*?)<\/style>/.exec(page)![1]!;
  assert.match(policy, new RegExp(`style-src 'sha256-${createHash('sha256').update(style).digest('base64').replace(/[+/]/g, '\\$&')}'`));
});

test('the page is one file: no external script, stylesheet, image, font or frame', () => {
  const outsideScripts = page.replace(/<script[^>]*>[\s\S]*?<\/script>/g, '');
  assert.doesNotMatch(outsideScripts, /\ssrc=|<link|@import|url\(|<iframe|<object/i);
  assert.equal(inlineScripts(page).filter((s) => /\ssrc=/.test(s.attrs)).length, 0);
});

test('rendering is pure: the same data gives the same page', () => {
  assert.equal(renderReport(fixtureReport()), page);
});

test('every chart binds only data sets its compiled spec declares without values', () => {
  const payload = JSON.parse(/<script type="application\/json" id="cachelens-charts">([\s\S]*?)<\/script>/.exec(page)![1]!);
  assert.ok(payload.charts.length >= 13);
  for (const chart of payload.charts as Array<{ id: string; spec: ChartSpecName; data: Record<string, unknown[]> }>) {
    const spec = vegaSpec(chart.spec) as { data: Array<{ name: string; values?: unknown }> };
    for (const name of Object.keys(chart.data)) {
      const d = spec.data.find((x) => x.name === name);
      assert.ok(d, `${chart.spec} declares data set ${name}`);
      assert.equal(d.values, undefined, `${chart.spec}.${name} carries no values in the spec`);
      assert.ok(chart.data[name]!.length > 0, `${chart.id} ${name} has rows`);
    }
    assert.deepEqual(payload.specs[chart.spec], JSON.parse(JSON.stringify(spec)), `${chart.spec} is embedded as compiled`);
  }
});

test('compileCharts compiles every chart spec in reports/charts, the ones the page embeds', () => {
  const files = readdirSync(`${reportsDir}charts`).filter((f) => f.endsWith('.vl.json')).map((f) => f.replace(/\.vl\.json$/, ''));
  assert.deepEqual([...CHART_SPECS].sort(), files.sort());
  compileCharts();
  const payload = JSON.parse(/<script type="application\/json" id="cachelens-charts">([\s\S]*?)<\/script>/.exec(page)![1]!) as { specs: Record<string, unknown> };
  for (const name of CHART_SPECS) {
    const spec = vegaSpec(name) as { $schema?: string; data?: unknown[] };
    assert.match(String(spec.$schema), /vega\/v\d/, `${name} is a vega spec`);
    if (payload.specs[name]) assert.deepEqual(JSON.parse(JSON.stringify(spec)), payload.specs[name], `${name} as the page embeds it`);
  }
});

test('headline numbers are readable from the DOM with their raw values', () => {
  assert.match(page, /data-metric="usd" data-value="412.37"/);
  assert.match(page, /data-metric="weight" data-value="82474000"/);
  assert.match(page, /data-metric="hitRatio" data-value="0.874"/);
  assert.match(page, /data-metric="wasteWeight" data-value="9120000"/);
  assert.match(page, /data-metric="bestSavingUsd" data-value="4.06"/);
});

test('every number the page carries outside its scripts\' code is written as --json writes it: chart rows, data-value, data-sort, text', () => {
  const data = fixtureReport();
  // weights and dollars as sums of doubles leave them: noise in the last bits
  data.headline = { ...(data.headline as Headline), usd: 0.1 + 0.2, weight: 1475294.5999999999, wasteWeight: 12.340000000000002, bestWhatIf: { label: 'x', savingWeight: 1, savingUsd: 2 / 3, savingShare: 0.1 + 0.7, shareOf: 'cost' } };
  const text = renderReport(data);
  assert.match(text, /data-metric="usd" data-value="0.3"/);
  assert.match(text, /data-metric="weight" data-value="1475294.6"/);
  assert.match(text, /data-metric="wasteWeight" data-value="12.34"/);
  assert.match(text, /data-metric="bestSavingUsd" data-value="0.666666666667"/);
  assert.match(text, /data-metric="bestSavingShare" data-value="0.8"/);
  const rounded = (n: number) => Number.isInteger(n) || n === jsonNumber(n);
  const payload = JSON.parse(/<script type="application\/json" id="cachelens-charts">([\s\S]*?)<\/script>/.exec(text)![1]!) as { charts: Array<{ data: unknown }> };
  const numbers: number[] = [];
  JSON.stringify(payload.charts, (_k, v: unknown) => (typeof v === 'number' && numbers.push(v), v));
  const exact: number[] = [];
  // the rows as the sections hand them to the page
  const sink = new ChartSink();
  for (const sec of SECTIONS) if (data[sec.key] !== undefined) sec.render(data[sec.key] as never, sink, data);
  JSON.stringify(sink.charts.map((c) => c.data), (_k, v: unknown) => (typeof v === 'number' && exact.push(v), v));
  assert.ok(exact.some((n) => !rounded(n)), 'the fixture\'s chart rows have noise to remove');
  assert.deepEqual(numbers.filter((n) => !rounded(n)), [], 'chart rows');
  assert.deepEqual(numbers, exact.map(jsonNumber), 'the charts draw the same numbers, rounded');
  const markup = text.replace(/<script[\s\S]*?<\/script>/g, '');
  const long = [...markup.matchAll(/(?<![\w.#-])-?\d+\.\d+(?:e-?\d+)?(?![\w.])/g)].map((m) => m[0]).filter((n) => n.replace(/e.*/, '').replace(/[-.]/g, '').replace(/^0+/, '').length > JSON_DIGITS);
  assert.deepEqual(long, [], 'attributes and text: no number of more than JSON_DIGITS significant digits');
});

test('an absent section is left out, an {error} section and a throwing renderer become error cards', () => {
  const data: ReportData = { ...fixtureReport(), replay: undefined, keepalive: { error: 'keepalive: <no chains>' } };
  (data as unknown as { topChains: unknown }).topChains = { chains: null };
  const out = renderReport(data);
  assert.doesNotMatch(out, /id="replay"/);
  assert.match(out, /<section class="card error-card" id="keepalive"[^>]*>[\s\S]*?keepalive: &lt;no chains&gt;/);
  assert.match(out, /<section class="card error-card" id="top-chains"[^>]*>[\s\S]*?report renderer failed/);
  assert.match(out, /<section class="card" id="anatomy"/);
});

test('agent-type rows of one agent type in two definitions are told apart: the table has a definition column and the reading names it', () => {
  const d: CrossTab = {
    rowDimension: 'agent_type',
    rows: [
      { key: 'Explore', definition: 'resolved', chains: 3, chainsWithSkillListing: 0, skillListings: 0, rounds: 5, chainsListingsEqualRounds: 0, weight: 10 },
      { key: 'Explore', definition: 'lost', chains: 2, chainsWithSkillListing: 2, skillListings: 7, rounds: 7, chainsListingsEqualRounds: 2, weight: 20 },
    ],
  };
  assert.equal(crossTabReading(d), 'In “Explore” (definition lost) every chain (2) carries as many skill_listing attachments as rounds; “Explore” (definition resolved) (3 chains) has none.');
  const body = renderCrossTab(d).body.value;
  const headers = [...body.matchAll(/<th [^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
  assert.deepEqual(headers.slice(0, 3), ['agent_type', 'definition', 'chains']);
  const rows = [...body.matchAll(/<tr><td[^>]*>([^<]*)<\/td><td[^>]*>([^<]*)<\/td>/g)].map((m) => `${m[1]} ${m[2]}`);
  assert.deepEqual(rows, ['Explore resolved', 'Explore lost']);
  // rows of definitions are their own name: no second column
  const byDef = renderCrossTab({ ...d, rowDimension: 'definition', rows: d.rows.map((r) => ({ ...r, key: r.definition! })) }).body.value;
  assert.equal([...byDef.matchAll(/<th [^>]*>definition<\/th>/g)].length, 1);
});

test('definitions in the cross-tab come most to least certain (main, resolved, lost, unknown), as crosstab lists them: rows of definitions, and a definition cell sorts so when its header is clicked', () => {
  const row = (key: string, weight: number) => ({ key, definition: key as Definition, chains: 1, chainsWithSkillListing: 0, skillListings: 0, rounds: 1, chainsListingsEqualRounds: 0, weight });
  // alphabetical, and heaviest first, would both put lost first
  const rows = [row('lost', 40), row('unknown', 30), row('resolved', 20), row('main', 10)];
  const byDef = renderCrossTab({ rowDimension: 'definition', rows }).body.value;
  const firstCells = [...byDef.matchAll(/<tr><td data-sort="(\d+)">([^<]*)<\/td>/g)].map((m) => [m[2], Number(m[1])]);
  assert.deepEqual(firstCells, [['main', 0], ['resolved', 1], ['lost', 2], ['unknown', 3]]);
  // agent-type rows keep their order (heaviest first); their definition cells sort by certainty
  const byType = renderCrossTab({ rowDimension: 'agent_type', rows: rows.map((r) => ({ ...r, key: 'Explore' })) }).body.value;
  const defs = [...byType.matchAll(/<tr><td>Explore<\/td><td data-sort="(\d+)">([^<]*)<\/td>/g)].map((m) => [m[2], Number(m[1])]);
  assert.deepEqual(defs, [['lost', 2], ['unknown', 3], ['resolved', 1], ['main', 0]]);
});

test('readings say what the field note said', () => {
  assert.equal(
    crossTabReading({
      rowDimension: 'definition',
      rows: [
        { key: 'resolved', chains: 165, chainsWithSkillListing: 0, skillListings: 0, rounds: 600, chainsListingsEqualRounds: 0, weight: 1 },
        { key: 'lost', chains: 62, chainsWithSkillListing: 62, skillListings: 300, rounds: 300, chainsListingsEqualRounds: 62, weight: 1 },
      ],
    }),
    'In “lost” every chain (62) carries as many skill_listing attachments as rounds; “resolved” (165 chains) has none.',
  );
  const f = fixtureReport();
  assert.equal(
    ttlReading(f.ttlOverride as never),
    'Forcing the 1-hour TTL would cost 18.0% more (expiry share f = 16.0% of writes, below the break-even f* = 39.5%); every bucket loses.',
  );
  assert.match(keepaliveReading(f.keepalive as never), /^The best budget is 3 pings per gap: net \+3\.1% of subagent weight .* 46 of 105 gaps .*; unbounded pinging nets −18\.0% of subagent weight \(−3\.6% of all weight\)\.$/);
  // no subagent gap over the TTL: the subagent share is 0.0%, and what unbounded pinging costs all chains is still said
  const mainOnly = { ...(f.keepalive as Keepalive), budgets: (f.keepalive as Keepalive).budgets.map((b) => (b.budget === null ? { ...b, netSavingShareSubagent: 0 } : b)) };
  assert.match(keepaliveReading(mainOnly), /; unbounded pinging nets 0\.0% of subagent weight \(−3\.6% of all weight\)\.$/);
  // no priced gap: no best budget (absent, not null, which is the unbounded one)
  const unpriced = { ...(f.keepalive as object), best: undefined, gaps: 4, unpricedGaps: 4 };
  assert.equal(keepaliveReading(unpriced as never), 'No gap between requests of a priced 5-minute chain: the savings are unknown.');
  assert.match(keepaliveReading({ ...(f.keepalive as object), gaps: 200, unpricedGaps: 3 } as never), /; 3 of 200 gaps touch models without a price and are counted, not priced\.$/);
  // the +? of the table's net savings, said: which unpriced gaps they leave out (those a ping falls in)
  assert.match(keepaliveReading({ ...(f.keepalive as object), gaps: 200, unpricedGaps: 3, unpricedPingedGaps: 2 } as never), /; 3 of 200 gaps touch models without a price and are counted, not priced \(2 of them, longer than the interval, are pinged: the net savings marked \+\? leave them out, and the pings' effect on them is unknown\)\.$/);
  assert.equal(
    chainReading({ ...(f.topChains as TopChains).chains[0]!, rounds: [
      { round: 1, read: 13_818, write: 131_000, rewrite: 0 },
      { round: 2, read: 13_818, write: 143_400, rewrite: 130_000 },
      { round: 3, read: 13_818, write: 155_800, rewrite: 142_000 },
    ] }),
    'Re-purchase pattern: reads stay at 13,818 tokens while writes grow from 131,000 to 155,800 over 3 rounds — the whole context is bought again every round.',
  );
  // writes nearly flat (1.1% apart, within 5%) read level, not "grow"; writes that shrink read "fall"
  const writes = (w: number[], readMedian?: number) => ({ ...(f.topChains as TopChains).chains[0]!, repurchase: true, readMedian, roundCount: w.length, rounds: w.map((write, i) => ({ round: i + 1, read: 20_000, write, rewrite: 0 })) });
  assert.equal(chainReading(writes([202_313, 203_000, 204_460])), 'Re-purchase pattern: reads stay at 20,000 tokens while writes stay level, 202,313 to 204,460, over 3 rounds — the whole context is bought again every round.');
  assert.match(chainReading(writes([202_313, 204_460], 20_000)), /reads about 20,000 tokens \(.*\) while writes stay level, 202,313 to 204,460, over 2 rounds — /);
  assert.match(chainReading(writes([155_800, 131_000])), / while writes fall from 155,800 to 131,000 over 2 rounds — /);
  // at the threshold: 5% of the larger is level, just past it grows
  assert.match(chainReading(writes([95_000, 100_000])), / writes stay level, 95,000 to 100,000, over/);
  assert.match(chainReading(writes([94_999, 100_000])), / writes grow from 94,999 to 100,000 over/);
  // a chain of 4 rounds whose rounds 2 and 3 sent no request: the reading and the facts say which rounds it draws
  const gappy = { ...(f.topChains as TopChains).chains[0]!, repurchase: false, roundCount: 4, rounds: [
    { round: 1, read: 0, write: 10_000, rewrite: 0 },
    { round: 4, read: 10_000, write: 10_000, rewrite: 5_000 },
  ] };
  assert.equal(chainReading(gappy), '25.0% of 20,000 written tokens over the 2 of its 4 rounds that sent requests were rewrites of context already cached.');
  // a re-purchase chain of 200,000 rounds: its reads' range is not spread into one call (a stack overflow)
  const long = { ...(f.topChains as TopChains).chains[0]!, repurchase: true, roundCount: 200_000, rounds: Array.from({ length: 200_000 }, (_, i) => ({ round: i + 1, read: 13_818 + (i % 2), write: 1_000 + i, rewrite: 0 })) };
  assert.match(chainReading(long), /^Re-purchase pattern: reads stay between 13,818 and 13,819 tokens while writes grow from 1,000 to 200,999 over 200,000 rounds/);
  const page = renderReport({ ...f, topChains: { ...(f.topChains as TopChains), chains: [gappy] } });
  assert.match(page, /<dt>rounds<\/dt>\s*<dd>4 \(2 with requests\)<\/dd>/);
});

test('a cost under a dollar keeps four decimals, as the terminal tables print it: one cheap request is $0.0039, not $0.00', () => {
  assert.equal(fmtUsd(0.003903), '$0.0039');
  assert.equal(fmtUsd(0.5), '$0.5000');
  assert.equal(fmtUsd(0.99996), '$1.00');
  assert.equal(fmtUsd(0.00001), '<$0.0001', 'priced and above 0 is not $0.0000');
  assert.equal(fmtUsd(-0.00001), '−<$0.0001');
  assert.equal(fmtUsd(0), '$0.0000');
  const f = fixtureReport();
  const h = f.headline as Headline;
  const page = renderReport({ ...f, headline: { ...h, usd: 0.003903, requests: 1, unpricedRequests: 0 } });
  assert.match(page, /data-metric="usd" data-value="0.003903">\$0.0039</);
});

test('the report writes every USD amount as the terminal tables do (zero is $0.0000, $100 and up whole dollars), its minus sign U+2212', () => {
  const amounts = [0, -0, 0.00001, 0.00004999, 0.00005, 0.003903, 0.5, 0.99994, 0.99995, 0.99996, 1, 3.6, 12.345, 99.994, 99.995, 99.996, 100, 1234.567, 41.94, 1e9 + 0.5, 0.12499999999999999 - 2e-15];
  for (const a of [...amounts, ...amounts.map((x) => -x)]) {
    assert.equal(fmtUsd(a), usd(a).replace(/^-/, '−'), `amount ${a}`);
  }
  assert.equal(fmtUsd(0), '$0.0000');
  assert.equal(fmtUsd(99.996), '$100');
  assert.equal(fmtUsd(Number.NaN), usd(Number.NaN));
  // on the page: a headline of no cost is $0.0000, as summary prints it
  const f = fixtureReport();
  const h = f.headline as Headline;
  const page = renderReport({ ...f, headline: { ...h, usd: 0, unpricedRequests: 0 } });
  assert.match(page, /data-metric="usd" data-value="0">\$0\.0000</);
  // with requests without a price the cost is of the priced ones: marked +?, as summary marks it
  assert.match(renderReport({ ...f, headline: { ...h, usd: 0 } }), /data-metric="usd" data-value="0">\$0\.0000 \+\?</);
});

test('ids break at their own separators: a chain id, a session UUID, a replay\'s title and a skipped line\'s path carry <wbr> after each - : and /, escaped, their text unchanged', () => {
  const f = fixtureReport();
  const chains = f.topChains as TopChains;
  const chainId = 'fe5e0c1e-0c1e-4b7e-9a55-0f3b5c8d9e21:side:f4ab0c3e-6f7d-4d1a-8c1b-3e2f1d0c9b88';
  const sessionId = '<b>&"x\'-0c1e-4b7e:9a55';
  const page = renderReport({ ...f, topChains: { ...chains, chains: [{ ...chains.chains[0]!, chainId, sessionId }] } });
  const dd = (name: string) => new RegExp(`<dt>${name}</dt><dd><span class="mono">(.*?)</span></dd>`).exec(page)?.[1] ?? '';
  assert.equal(dd('chain'), 'fe5e0c1e-<wbr>0c1e-<wbr>4b7e-<wbr>9a55-<wbr>0f3b5c8d9e21:<wbr>side:<wbr>f4ab0c3e-<wbr>6f7d-<wbr>4d1a-<wbr>8c1b-<wbr>3e2f1d0c9b88');
  assert.equal(dd('session'), '&lt;b&gt;&amp;&quot;x&#39;-<wbr>0c1e-<wbr>4b7e:<wbr>9a55', 'escaped, no entity split');
  // the text a reader copies is the id as it is
  const text = (h: string) => h.replaceAll('<wbr>', '').replace(/&(lt|gt|amp|quot|#39);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'" })[e]!);
  assert.equal(text(dd('chain')), chainId);
  assert.equal(text(dd('session')), sessionId);
  // every <wbr> follows a separator
  assert.doesNotMatch(page, /[^-:/]<wbr>/);
  // the replay's title in its heading
  assert.match(page, /<h3>session replay · planner chain agent-<wbr>a4f2c9e1<\/h3>/);
});

test('the charts\' tooltips write USD as the tables do: each bar segment carries its amount as fmtUsd writes it, and no spec formats USD itself', () => {
  const f = fixtureReport();
  const cot = f.costOverTime as CostOverTime;
  // a component of nothing on a day, and the same day and component twice: one segment, summed
  const first = cot.rows.find((r) => r.usd !== null)!;
  const data: ReportData = { ...f, costOverTime: { ...cot, rows: [...cot.rows, { ...first, usd: 0.004 }, { ...first, component: first.component === 'read' ? 'input' : 'read', day: '2026-01-01', usd: 0 }] } };
  const sink = new ChartSink();
  for (const s of SECTIONS) {
    const value = (data as unknown as Record<string, unknown>)[s.key];
    if (value && !(typeof value === 'object' && 'error' in value)) s.render(value as never, sink, data);
  }
  let checked = 0;
  for (const c of sink.charts.filter((x) => ['cost-over-time', 'cost-by', 'blocks'].includes(x.spec))) {
    const rows = Object.values(c.data)[0] as Array<{ usd: number; usdText: string; day?: string; key?: string; start?: number; component?: string }>;
    const segments = new Set<string>();
    for (const r of rows) {
      assert.equal(r.usdText, fmtUsd(r.usd), `${c.spec}: ${JSON.stringify(r)}`);
      const segment = `${r.day ?? r.key ?? r.start} ${r.component ?? ''}`;
      assert.ok(!segments.has(segment), `${c.spec}: two rows for ${segment}`);
      segments.add(segment);
      checked++;
    }
    const tooltip = JSON.stringify((JSON.parse(JSON.stringify(vegaSpec(c.spec as ChartSpecName))) as object));
    assert.doesNotMatch(tooltip, /\$,\.4~f/, `${c.spec}: a tooltip formats USD with vega's format`);
  }
  assert.ok(checked > 10, `${checked} rows`);
  const cotRows = sink.charts.find((x) => x.spec === 'cost-over-time')!.data.rows as Array<{ day: string; usd: number; usdText: string }>;
  assert.ok(cotRows.some((r) => r.day === '2026-01-01' && r.usdText === '$0.0000'), 'nothing is $0.0000');
  const summed = cotRows.find((r) => r.day === first.day && r.usdText === fmtUsd(first.usd! + 0.004));
  assert.ok(summed, 'the same day and component twice is one segment, summed');
});

test('a weight or an amount is rounded as --json and the terminal tables round it (12 significant digits) before it is printed: one sum added in two orders is one number on the page', () => {
  // the real logs' weight: 8,734,583.5 summed one way, 8,734,583.499999998 another; the page showed both 8,734,584 and 8,734,583
  assert.equal(fmtInt(8_734_583.499999998), '8,734,584');
  assert.equal(fmtWeight(8_734_583.499999998), '8,734,584 wt');
  assert.equal(fmtInt(-2_187.4999999999995), '−2,188');
  assert.equal(fmtUsd(0.12499999999999999 - 2e-15), '$0.1250');
});

test('numbers carry units and separators, and a value that rounds to zero has no sign', () => {
  assert.equal(fmtUsd(1234.567), '$1,235');
  assert.equal(fmtUsd(-0.001), '−$0.0010');
  assert.equal(fmtUsd(-0), '$0.0000');
  assert.equal(fmtUsd(-3.6), '−$3.60');
  assert.equal(fmtUsd(null), 'unknown');
  assert.equal(fmtPct(0.3947), '39.5%');
  // grouped in thousands as the tables' numbers (a keepalive at a 1 ms interval nets -241642.2% of subagent weight)
  assert.equal(fmtSignedPct(-2416.421934), '−241,642.2%');
  assert.equal(fmtPct(12.345), '1,234.5%');
  assert.equal(fmtSignedPct(-0.00001), '0.0%');
  assert.equal(fmtSignedPct(0.18), '+18.0%');
  assert.equal(fmtCompact(82_474_000), '82.5M');
  // the data-quality panel's bytes read: small logs are not "0 MB"
  assert.equal(fmtBytes(812), '812 bytes');
  assert.equal(fmtBytes(48_213), '48.2 kB');
  assert.equal(fmtBytes(1_003_000_000), '1 GB');
  assert.equal(fmtBytes(724_512_000), '724.5 MB');
  // the unit is that of the number as shown: never "1,000 kB"
  assert.equal(fmtBytes(999_960), '1 MB');
  assert.equal(fmtBytes(999_940), '999.9 kB');
  assert.equal(fmtBytes(999_960_000), '1 GB');
});

test('the TTL reading counts the buckets its table shows; a bucket the override leaves unchanged neither loses nor gains', () => {
  const f = fixtureReport();
  const base = f.ttlOverride as TtlOverride;
  const b0 = base.buckets[0]!;
  const bucket = (name: string, deltaShare: number | null, expiryShare: number | null) => ({ ...b0, bucket: name, deltaShare, expiryShare });
  const ttl: TtlOverride = {
    ...base,
    deltaShare: 0.1,
    expiryShare: null,
    // two losing, one unchanged, one with no writes to change (not shown: no expiry share)
    buckets: [bucket('a', 0.2, 0.1), bucket('b', 0.05, 0.2), bucket('c', 0, 0.3), bucket('d', 0, null)],
  };
  assert.equal(ttlReading(ttl), 'Forcing the 1-hour TTL would cost 10.0% more; 2 of 3 buckets lose.');
  const out = renderTtlOverride(ttl, { figure: (_id: string, _data: unknown, _title: string, _x: unknown, table: unknown) => table } as never);
  const text = String(out.body);
  assert.match(text, /no change/);
  assert.equal((text.match(/override costs more/g) ?? []).length, 2);
  assert.doesNotMatch(text, /: d</);
  // only unchanged buckets: neither every bucket gains nor every bucket loses
  assert.equal(ttlReading({ ...ttl, buckets: [bucket('c', 0, 0.3)] }), 'Forcing the 1-hour TTL would cost 10.0% more; no bucket changes.');
});

test('shares that are undefined (nothing priced, nothing written) render as n/a, not as errors', () => {
  const f = fixtureReport();
  const ttl = { ...(f.ttlOverride as TtlOverride), deltaShare: 0.1, expiryShare: null, breakEvenShare: null };
  ttl.buckets = ttl.buckets.map((b, i) => (i === 0 ? { ...b, expiryShare: null, deltaShare: null } : b));
  assert.equal(ttlReading(ttl), 'Forcing the 1-hour TTL would cost 10.0% more; every bucket loses.');
  assert.equal(ttlReading({ ...ttl, deltaShare: null }), 'Forcing the 1-hour TTL changes nothing that is priced.');
  const ka = f.keepalive as Keepalive;
  ka.budgets = ka.budgets.map((b) => ({ ...b, netSavingShareSubagent: null }));
  const out = renderReport({ ...f, ttlOverride: ttl, keepalive: ka });
  assert.ok(!out.includes('<section class="card error-card"'), 'no section failed');
  assert.ok(out.includes('of all weight (no subagent weight to take a share of)'), 'the keepalive reading says there is no subagent share');
});

test('cost by project shows the keys with the most USD; keys beyond them and the rest the data summed are one "other" bar', () => {
  const components = ['input', 'output', 'write5m', 'write1h', 'read'] as const;
  const rows: CostBy['rows'] = [];
  // COST_BY_KEYS + 3 named projects (the three cheapest fold), and the rest of 40 more, summed
  for (let i = 0; i < COST_BY_KEYS + 3; i++) {
    for (const component of components) rows.push({ dimension: 'project', key: `/p/${i}`, groups: 1, component, usd: 100 - i, weight: 1000 - i });
  }
  for (const component of components) rows.push({ dimension: 'project', key: null, groups: 40, component, usd: 7, weight: 70 });
  const sink = new ChartSink();
  const out = renderCostBy({ rows }, sink);
  const bars = sink.charts[0]!.data.rows as Array<{ key: string; usd: number }>;
  const keys = [...new Set(bars.map((b) => b.key))];
  assert.equal(keys.length, COST_BY_KEYS + 1);
  assert.deepEqual(keys.slice(0, COST_BY_KEYS), Array.from({ length: COST_BY_KEYS }, (_, i) => `/p/${i}`));
  assert.equal(keys[COST_BY_KEYS], 'other (43)');
  const other = bars.filter((b) => b.key === 'other (43)').reduce((s, b) => s + b.usd, 0);
  assert.equal(other, 5 * (7 + (100 - COST_BY_KEYS) + (99 - COST_BY_KEYS) + (98 - COST_BY_KEYS)));
  const total = 5 * (Array.from({ length: COST_BY_KEYS + 3 }, (_, i) => 100 - i).reduce((a, b) => a + b, 0) + 7);
  assert.equal(bars.reduce((s, b) => s + b.usd, 0), total, 'every dollar is in a bar');
  assert.match(out.reading, new RegExp(`project “/p/0” \\(\\$500, ${((500 / total) * 100).toFixed(1)}%\\)`));
  // a drawn project named as the sum's bar would be: the two stay two bars
  const named = rows.map((r) => (r.key === '/p/0' ? { ...r, key: 'other (43)' } : r));
  const sink2 = new ChartSink();
  renderCostBy({ rows: named }, sink2);
  const bars2 = sink2.charts[0]!.data.rows as Array<{ key: string; usd: number }>;
  assert.equal(new Set(bars2.map((b) => b.key)).size, COST_BY_KEYS + 1);
  assert.equal(bars2.filter((b) => b.key === 'other (43)').reduce((s, b) => s + b.usd, 0), 500);
});

test('cost-by axis labels are short and unique: long keys with the same ending keep the part that tells them apart', () => {
  const tail = '/worktrees/cachelens-report-numbers';
  const keys = [`/home/alice/src${tail}`, `/home/bob/src${tail}`, `/home/carol-with-a-long-name/src${tail}`, 'claude-opus-4-6'];
  const rows: CostBy['rows'] = keys.map((key, i) => ({ dimension: 'project', key, groups: 1, component: 'read', usd: 10 - i, weight: 100 - i }));
  const sink = new ChartSink();
  renderCostBy({ rows }, sink);
  const bars = sink.charts[0]!.data.rows as Array<{ key: string; label: string }>;
  assert.deepEqual(bars.map((b) => b.key), keys, 'the full key stays for the tooltip');
  const labels = bars.map((b) => b.label);
  assert.equal(new Set(labels).size, keys.length, labels.join(' | '));
  assert.ok(labels.every((l) => l.length <= AXIS_LABEL_MAX), labels.join(' | '));
  assert.deepEqual(labels.slice(0, 3).map((l) => l.split('…')[1]), ['alice', 'bob', 'carol'], 'the part where each differs, first');
  assert.ok(labels.slice(0, 3).every((l) => l.endsWith('/cachelens-report-numbers')), 'and the ending');
  assert.equal(labels[3], 'claude-opus-4-6', 'a short key is its own label');
  // a key the same as another's cut label, and two keys the page shows the same (bidi controls as ?)
  const cut = '…' + keys[0]!.slice(-(AXIS_LABEL_MAX - 1));
  assert.deepEqual([...axisLabels([keys[0]!.replace('alice', 'dave'), keys[0]!, cut]).values()].length, 3);
  assert.equal(new Set(axisLabels([keys[1]!, cut, keys[0]!]).values()).size, 3);
  assert.deepEqual([...axisLabels(['a\u202e', 'a\u202d'], cleanStrings).values()], ['a?', 'a? (2)']);
});

test('the TTL table\'s change column says what its numbers are: the change in USD, as the total\'s, not in weight', () => {
  const ttl = fixtureReport().ttlOverride as TtlOverride;
  // one bucket whose weight and USD move apart (two models): the table shows the USD change
  ttl.buckets[0] = { ...ttl.buckets[0]!, baselineWeight: 1000, scenarioWeight: 1500, deltaShare: 0.2 };
  const body = renderTtlOverride(ttl, new ChartSink()).body.value;
  const header = /<th scope="col" class="num" title="([^"]*)">change<\/th>/.exec(body);
  assert.ok(header, 'the change column has a hint');
  assert.match(header[1]!, /USD/);
  assert.doesNotMatch(header[1]!, /weight/);
  assert.match(body, /<td class="num" data-sort="0.2">\+20\.0%<\/td>/, 'the USD change, not the weight\'s +50.0%');
});

test('the anatomy reading of logs that re-bought nothing names no agent type as having "re-bought the most (0 wt)"', () => {
  const rows = (['cold', 'growth', 'expiry', 'break'] as const).flatMap((component) =>
    ['main', 'Explore'].map((agentType) => ({ agentType, component, tokens: component === 'cold' ? 1_000 : component === 'growth' ? 3_000 : 0, weight: component === 'cold' ? 1_250 : component === 'growth' ? 3_750 : 0, usd: 0.01 })),
  );
  assert.equal(renderAnatomy({ rows }, new ChartSink()).reading, 'Of 10,000 wt of cache writes, 0.0% re-bought context after a cache expiry and 0.0% after a broken prefix; no agent type re-bought any.');
});

test('the keepalive reading when no gap outlives the TTL says pings would change nothing, not "the best budget is 0 pings … n/a of subagent weight"', () => {
  const f = fixtureReport().keepalive as Keepalive;
  const calm: Keepalive = {
    ...f,
    best: 0,
    gaps: 40,
    unpricedGaps: 0,
    budgets: f.budgets.map((b) => ({ ...b, netSavingWeight: 0, netSavingUsd: 0, netSavingShareSubagent: null, netSavingShareAll: 0, gapsOverTtl: 0, bridged: 0, expiredAfterBudget: 0, pings: 0 })),
  };
  assert.equal(keepaliveReading(calm), 'No gap between requests of 5-minute chains is longer than the 270 s between pings: there is nothing to ping.');
});

test('the keepalive section with no subagent gap to ping says so and draws no chart of empty bars (a "saves / costs more" legend over bars all 0)', () => {
  const f = fixtureReport().keepalive as Keepalive;
  // main threads' pings save; the subagent chains have no gap long enough for a ping: 0% of subagent weight at every budget
  const mainGaps: Keepalive = { ...f, budgets: f.budgets.map((b) => ({ ...b, netSavingShareSubagent: 0 })) };
  const r = keepaliveReading(mainGaps);
  assert.doesNotMatch(r, /of subagent weight/);
  assert.match(r, /^The best budget is 3 pings per gap: net \+0\.6% of all weight, all of it main threads' \(no subagent chain has a gap long enough for a ping\), and 46 of 105 gaps over the TTL still expire; unbounded pinging nets −3\.6% of all weight\.$/);
  const body = (k: Keepalive) => {
    const sink = new ChartSink();
    const out = String(renderKeepalive(k, sink).body);
    return { out, charts: sink.charts.length };
  };
  const none = body(mainGaps);
  assert.equal(none.charts, 0);
  assert.doesNotMatch(none.out, /<figure/);
  assert.match(none.out, /No chart: its bars, the net saving as a share of subagent weight, would be empty at every budget \(no subagent chain has a gap long enough for a ping\); the table gives the share of all weight\./);
  assert.match(none.out, /<table/);
  // no subagent weight at all: the same, said so
  assert.match(body({ ...f, budgets: f.budgets.map((b) => ({ ...b, netSavingShareSubagent: null })) }).out, /\(there is no subagent weight\)/);
  // subagent bars: the chart is drawn
  assert.equal(body(f).charts, 1);
  // no gap at all
  assert.equal(keepaliveReading({ ...f, best: undefined, gaps: 0, unpricedGaps: 0 }), 'No gaps between requests of 5-minute chains: there is nothing to ping.');
});

test('unknown costs on the page: named as unknown, never $0, and what a chart cannot draw is said', async () => {
  const { headlineReading } = await import('../../src/report/section-headline.js');
  const { renderBlocks } = await import('../../src/report/section-blocks.js');
  const { renderTopChains } = await import('../../src/report/section-chains.js');
  const f = fixtureReport();
  const h = { ...(f.headline as object), usd: null, weight: null } as never;
  assert.match(headlineReading(h), /^an unknown cost \(no request has a price\) over /);
  const sink = () => new ChartSink();
  const blocks = renderBlocks({ blocks: [{ start: 0, end: 5 * 3_600_000, usd: null, weight: null, requests: 2, tokens: 10 }, { start: 6 * 3_600_000, end: 11 * 3_600_000, usd: 1, weight: 2e5, requests: 1, tokens: 5 }] }, sink());
  assert.match(blocks.reading, /1 block is not drawn: its cost is unknown \(no price\)\.$/);
  // an even count of priced blocks: the median is the mean of the two middle ones ($1, $3 → $2)
  const even = renderBlocks({ blocks: [1, 3].map((usd, i) => ({ start: i * 6 * 3_600_000, end: (i * 6 + 5) * 3_600_000, usd, weight: usd * 2e5, requests: 1, tokens: 5 })) }, sink());
  assert.match(even.reading, /\(median block \$2\.00\)\.$/);
  // the heaviest block whole, the other leaving a request without a price out: the median ($1 +?, $3 → $2) is +? too,
  // as is one over the priced blocks alone beside a block of no price (it printed 'median block $2.00' bare)
  const partly = renderBlocks({ blocks: [1, 3].map((usd, i) => ({ start: i * 6 * 3_600_000, end: (i * 6 + 5) * 3_600_000, usd, weight: usd * 2e5, requests: 2, tokens: 5, unpricedRequests: usd === 1 ? 1 : 0 })) }, sink());
  assert.match(partly.reading, /cost \$3\.00 over 2 requests \(median block \$2\.00 \+\?\)\.$/);
  assert.match(blocks.reading, /\(median block \$1\.00 \+\?\)\. 1 block is not drawn/);
  // one block, of one request: no plural
  const one = renderBlocks({ blocks: [{ start: 0, end: 5 * 3_600_000, usd: 1, weight: 2e5, requests: 1, tokens: 5 }] }, sink());
  assert.match(one.reading, /^1 five-hour block; the heaviest started .* and cost \$1\.00 over 1 request \(median block/);
  const oneUnpriced = renderBlocks({ blocks: [{ start: 0, end: 5 * 3_600_000, usd: null, weight: null, requests: 2, tokens: 10 }] }, sink());
  assert.equal(oneUnpriced.reading, '1 five-hour block, without a priced request: its cost is unknown.');
  const chain = { ...(f.topChains as TopChains).chains[0]!, weight: null, usd: null, wasteWeight: null, wasteUsd: null };
  const html = String(renderTopChains({ chains: [chain], withoutWaste: 0 }, sink()).body);
  assert.match(html, /unknown \(no price\)/);
  assert.doesNotMatch(html, /\$0\.00/);
  const costBy: CostBy = { rows: [{ dimension: 'model', key: 'claude-mystery-9', groups: 1, component: 'read', usd: null, weight: 0 }, { dimension: 'model', key: 'claude-opus-4-6', groups: 1, component: 'read', usd: 2, weight: 4e5 }] };
  assert.match(renderCostBy(costBy, sink()).reading, /Not drawn, their cost unknown \(no price\): model “claude-mystery-9”\./);
  // unpriced keys folded into "other": named when the data carries their names (it said '1 agent type'), else counted
  const folded = (names: string[] | undefined, n: number): CostBy => ({
    rows: [
      { dimension: 'agentType', key: 'main', groups: 1, component: 'read', usd: 2, weight: 4e5 },
      { dimension: 'agentType', key: null, groups: n + 1, unpricedGroups: n, ...(names ? { unpricedNames: names } : {}), component: 'read', usd: 1, weight: 2e5 },
    ],
  });
  assert.match(renderCostBy(folded(['data-analyst'], 1), sink()).reading, /Not drawn, their cost unknown \(no price\): agent type “data-analyst”\.$/);
  assert.match(renderCostBy(folded(['a', 'b'], 3), sink()).reading, /Not drawn, their cost unknown \(no price\): agent type “a”, “b” and 1 more agent type\.$/);
  assert.match(renderCostBy(folded(undefined, 5), sink()).reading, /Not drawn, their cost unknown \(no price\): 5 agent types\.$/);
});

test('the page title names the period of the data (UTC days), so two reports open side by side are told apart', () => {
  const title = (out: string) => /<title>([^<]*)<\/title>/.exec(out)?.[1];
  const d = fixtureReport();
  assert.equal(title(page), `${escapeHtml(d.meta.title ?? 'cachelens report')} · 2026-01-05 – 2026-01-11 UTC`);
  const oneDay = renderReport({ meta: { ...d.meta, title: undefined, from: Date.UTC(2026, 1, 10, 9), to: Date.UTC(2026, 1, 10, 23, 59) } });
  assert.equal(title(oneDay), 'cachelens report · 2026-02-10 UTC');
  const none = renderReport({ meta: { ...d.meta, title: undefined, from: null, to: null } });
  assert.equal(title(none), 'cachelens report · no requests');
  // a year outside 0000–9999 as the rest of cachelens writes it (the title cut it to '+010000-01' and '-000001-12')
  const edge = renderReport({ meta: { ...d.meta, title: undefined, from: Date.parse('0000-01-01T00:00:00+14:00'), to: Date.parse('9999-12-31T23:59:59-12:00') } });
  assert.equal(title(edge), 'cachelens report · -000001-12-31 – +010000-01-01 UTC');
  assert.match(edge, /-000001-12-31 10:00 UTC – \+010000-01-01 11:59 UTC/);
  assert.equal((none.match(/<h1>/g) ?? []).length, 1);
});

test('every chart has its numbers as an HTML table, in the figure (open, for a page without JavaScript) or beside it in its section', () => {
  const sections = [...page.matchAll(/<section class="card[^"]*" id="([^"]+)"[\s\S]*?<\/section>/g)];
  const figures = [...page.matchAll(/<figure class="chart" data-chart="([^"]+)" data-spec="([^"]+)">([\s\S]*?)<\/figure>/g)];
  assert.ok(figures.length >= 10, `${figures.length} charts`);
  // these sections show the chart's numbers in a table of their own
  const besideTable = new Set(['anatomy', 'keepalive', 'replay-strategies']);
  for (const [, id, spec, inner] of figures) {
    if (besideTable.has(spec!)) {
      const section = sections.find((s) => s[0].includes(`data-chart="${id}"`))!;
      assert.match(section[0].replace(/<figure[\s\S]*?<\/figure>/g, ''), /<table/, `${id} (${spec}): a table in its section`);
      continue;
    }
    assert.match(inner!, /<details class="chart-data" open><summary>[^<]+<span class="visually-hidden">[^<]+<\/span><\/summary><div class="table-wrap"><table/, `${id} (${spec}): a data table in the figure`);
    assert.match(inner!, /<th scope="col"/, `${id} (${spec})`);
  }
  const costTime = /<section class="card" id="cost-over-time"[\s\S]*?<\/section>/.exec(page)![0];
  const d = fixtureReport().costOverTime as Extract<ReportData['costOverTime'], { rows: unknown }>;
  const days = [...new Set(d.rows.map((r) => r.day))];
  const totals = [...costTime.matchAll(/<tr><td>([^<]+)<\/td>(?:<td[^>]*>[^<]*<\/td>)*?<td class="num" data-sort="([^"]+)">[^<]*<\/td><\/tr>/g)].map((m) => [m[1], Number(m[2])]);
  assert.deepEqual(totals.map((t) => t[0]), days);
  for (const [day, usd] of totals) {
    const want = d.rows.filter((r) => r.day === day).reduce((s, r) => s + (r.usd ?? 0), 0);
    assert.ok(Math.abs((usd as number) - want) < 1e-9, `${day}: ${usd} = ${want}`);
  }
});

test('the page reads without sight: a language, one h1 and no skipped heading level, a scope on every header cell, a name on every chart and button', () => {
  assert.match(page, /^<!doctype html>\n<html lang="en">/);
  const levels = [...page.matchAll(/<h([1-6])[\s>]/g)].map((m) => Number(m[1]));
  assert.equal(levels.filter((l) => l === 1).length, 1);
  assert.equal(levels[0], 1);
  levels.forEach((l, i) => i > 0 && assert.ok(l <= levels[i - 1]! + 1, `h${levels[i - 1]} then h${l}`));
  const ths = [...page.matchAll(/<th\b[^>]*>/g)].map((m) => m[0]);
  assert.ok(ths.length > 20);
  for (const th of ths) assert.match(th, /\sscope="(col|row)"/);
  const canvases = [...page.matchAll(/<div class="chart-canvas"([^>]*)>/g)].map((m) => m[1]!);
  assert.ok(canvases.length >= 10);
  for (const c of canvases) assert.match(c, /role="img" aria-label="[^"]{10,}"/);
  for (const b of page.matchAll(/<button[^>]*>([\s\S]*?)<\/button>/g)) assert.ok(b[1]!.trim().length > 0, 'a button has text');
  for (const a of page.matchAll(/<a\b[^>]*>([\s\S]*?)<\/a>/g)) assert.ok(a[1]!.trim().length > 0, 'a link has text');
});

test('no element carries an empty attribute: a tile or a header without a tooltip has no title="", a cell without a class no class=""', () => {
  const markup = page.replace(/<script[^>]*>[\s\S]*?<\/script>/g, '');
  const empty = [...markup.matchAll(/<[a-z][\w-]*\b[^<>]*?\s([\w-]+)=""[^<>]*>/g)].map((m) => m[0]);
  assert.deepEqual(empty, []);
  // the tooltips that say something are still there
  assert.match(page, /<th scope="col" class="num" title="\(expiry \+ break\) ÷ all writes">/);
  assert.match(page, /data-metric="weight" data-value="[^"]*" title="[^"]+">/);
});

test('top chains by waste lists only chains that wasted something and counts the rest; a chain without prompt tokens has hit ratio n/a', async () => {
  const { renderTopChains } = await import('../../src/report/section-chains.js');
  const f = fixtureReport().topChains as TopChains;
  const section = /<section class="card" id="top-chains"[\s\S]*?<\/section>/.exec(page)![0];
  assert.equal([...section.matchAll(/<article class="chain"/g)].length, f.chains.length);
  assert.match(section, /<p class="muted" data-without-waste="131">131 other chains re-bought nothing\.<\/p>/);
  const one = renderTopChains({ chains: [{ ...f.chains[0]!, hitRatio: null }], withoutWaste: 1 }, new ChartSink());
  assert.match(String(one.body), /1 other chain re-bought nothing\./);
  assert.match(String(one.body), /<dt>hit ratio<\/dt><dd>n\/a<\/dd>/);
  const none = renderTopChains({ chains: [], withoutWaste: 4 }, new ChartSink());
  assert.equal(none.reading, 'No chain wasted anything: the 4 chains in scope re-bought no context after an expiry or a break.');
  assert.equal(String(none.body), '');
  assert.equal(renderTopChains({ chains: [], withoutWaste: 0 }, new ChartSink()).reading, 'No chain with a request in scope.');
});

test('without JavaScript nothing looks clickable that does nothing: the page as written has no button; its headers are text the script makes buttons of', () => {
  const markup = page.replace(/<script[^>]*>[\s\S]*?<\/script>/g, '');
  assert.doesNotMatch(markup, /<button/);
  assert.match(markup, /<table class="sortable">[\s\S]*?<thead><tr><th scope="col">agent type<\/th>/);
  const client = inlineScripts(page).at(-1)!.body;
  assert.match(client, /createElement\('button'\)/);
});

test('a table cell with no number (unknown, n/a) carries no sort value, so the page sorts it after every number both ways, not as -1 below them', async () => {
  const { renderBlocks } = await import('../../src/report/section-blocks.js');
  const costBy: CostBy = {
    rows: [
      { dimension: 'model', key: 'claude-mystery-9', groups: 1, component: 'read', usd: null, weight: null },
      { dimension: 'model', key: 'claude-opus-4-6', groups: 1, component: 'read', usd: 2, weight: 4e5 },
    ],
  };
  const cells = (html: string) => [...html.matchAll(/<td([^>]*)>(unknown|n\/a)<\/td>/g)].map((m) => m[1]!);
  const byModel = cells(String(renderCostBy(costBy, new ChartSink()).body));
  assert.equal(byModel.length, 3, 'USD, share and weight of the unpriced model');
  for (const attrs of byModel) assert.doesNotMatch(attrs, /data-sort/);
  const blocks = renderBlocks({ blocks: [{ start: 0, end: 5 * 3_600_000, usd: null, weight: null, requests: 2, tokens: 10 }] }, new ChartSink());
  const unknownBlock = cells(String(blocks.body));
  assert.equal(unknownBlock.length, 1);
  assert.doesNotMatch(unknownBlock[0]!, /data-sort/);
});

test('the TTL reading of logs the override does not reach says no change, as whatif ttl does, not "would save 0.0%"', () => {
  const ttl = fixtureReport().ttlOverride as TtlOverride;
  const still: TtlOverride = { ...ttl, deltaShare: 0, expiryShare: null, buckets: ttl.buckets.map((b) => ({ ...b, deltaShare: 0, expiryShare: null })) };
  assert.equal(ttlReading(still), 'Forcing the 1-hour TTL changes nothing: no priced request would cost more or less.');
});

test('the TTL and keepalive readings name the chains and gaps of unpriced models they change, as whatif ttl and the headline do, not "changes nothing"', () => {
  const ttl = fixtureReport().ttlOverride as TtlOverride;
  const still: TtlOverride = { ...ttl, scenario: ttl.baseline, deltaShare: 0, expiryShare: null, unpricedRequests: 3, unpricedModels: ['claude-mystery-9'], changedUnpricedChains: 1, buckets: ttl.buckets.map((b) => ({ ...b, deltaShare: 0, expiryShare: null })) };
  assert.equal(ttlReading(still), 'Forcing the 1-hour TTL changes nothing priced: no priced request would cost more or less, and its effect on 1 chain of unpriced models is unknown.');
  const body = String(renderTtlOverride(still, new ChartSink()).body).replace(/<[^>]*>/g, ' ');
  // the change in USD beside its share, as whatif ttl's delta: none
  assert.match(body, /change\s+\$0\.0000 \(0\.0%\) \+\?/);
  assert.match(body, /the override changes 1 chain of unpriced models, and its effect on them is unknown/);
  // a priced change beside them: said after the verdict
  assert.match(ttlReading({ ...ttl, changedUnpricedChains: 2 }), /; its effect on 2 chains of unpriced models is unknown\.$/);
  assert.doesNotMatch(ttlReading(ttl), /unpriced/);
  // keepalive: pings on gaps of unpriced models that only cost: +? on the net, and said
  const f = fixtureReport().keepalive as Keepalive;
  const costly: Keepalive = {
    ...f,
    best: 0,
    gaps: 3,
    unpricedGaps: 1,
    unpricedPingedGaps: 1,
    budgets: f.budgets.map((b) => {
      const pings = b.budget === 0 ? 0 : 3;
      return { ...b, pings, netSavingWeight: -1_205 * (pings / 3), netSavingUsd: -0.006 * (pings / 3), netSavingShareSubagent: null, netSavingShareAll: -0.1449 * (pings / 3), gapsOverTtl: 0, bridged: 0, expiredAfterBudget: 0 };
    }),
  };
  // the pings' effect (it said 'its effect', the subject being the pings)
  assert.match(keepaliveReading(costly), /net −14\.5% \+\? of all weight\); their effect on 1 gap of unpriced models is unknown\.$/);
  // the table's share of all weight is marked as the reading marks it (it printed −14.5% bare)
  const table = String(renderKeepalive(costly, new ChartSink()).body);
  assert.match(table, />−14\.5% \+\?</);
  assert.doesNotMatch(table, />−14\.5%</);
});

test('the keepalive reading when no gap outlives the TTL but some outlive the interval: pings only cost, not "would change nothing"', () => {
  const f = fixtureReport().keepalive as Keepalive;
  // two gaps of 285 s: each takes a ping at 270 s (budget ≥ 1) that bridges nothing
  const costly: Keepalive = {
    ...f,
    best: 0,
    gaps: 2,
    unpricedGaps: 0,
    budgets: f.budgets.map((b) => {
      const pings = b.budget === 0 ? 0 : 2;
      return { ...b, pings, netSavingWeight: -1_205 * (pings / 2), netSavingUsd: -0.006 * (pings / 2), netSavingShareSubagent: null, netSavingShareAll: -0.1449 * (pings / 2), gapsOverTtl: 0, bridged: 0, expiredAfterBudget: 0 };
    }),
  };
  assert.equal(keepaliveReading(costly), 'No gap between requests of 5-minute chains is longer than the 300 s TTL: keepalive pings would save nothing, and only cost (2 pings at budget 1 on gaps that end before it, net −14.5% of all weight).');
  // one such gap: one ping, not '1 pings'
  const one: Keepalive = { ...costly, gaps: 1, budgets: costly.budgets.map((b) => ({ ...b, pings: b.pings / 2 })) };
  assert.match(keepaliveReading(one), /only cost \(1 ping at budget 1 on gaps/);
});

test('counts of one read in the singular: "1 request, 1 session, 1 chain", "Read 1 file and 1 line", "(1 chain) has none"', async () => {
  const { headlineReading, renderHeadline } = await import('../../src/report/section-headline.js');
  const { qualityReading } = await import('../../src/report/section-quality.js');
  const { fmtCount } = await import('../../src/report/format.js');
  assert.equal(fmtCount(1, 'chain'), '1 chain');
  assert.equal(fmtCount(0, 'chain'), '0 chains');
  assert.equal(fmtCount(1_234, 'request'), '1,234 requests');
  const f = fixtureReport();
  const h = { ...(f.headline as Headline), requests: 1, sessions: 1, chains: 1, unpricedRequests: 0 };
  assert.match(headlineReading(h), / over 1 request; /);
  assert.match(String(renderHeadline(h).body), /1 request, 1 session, 1 chain</);
  const q = f.dataQuality as Parameters<typeof qualityReading>[0];
  assert.match(qualityReading({ ...q, files: 1, lines: 1 }), /^Read 1 file and 1 line; /);
  const oneEach = qualityReading({ ...q, duplicatesRemoved: 1, unknownModels: [{ ...q.unknownModels[0]!, requests: 1 }] });
  assert.match(oneEach, /removed 1 duplicate copy; 1 request from 1 model without a price\.$/);
  const d = f.crossTab as CrossTab;
  const one = { ...d, rows: [{ ...d.rows[0]!, chains: 1, chainsWithSkillListing: 0, chainsListingsEqualRounds: 0 }] };
  assert.match(crossTabReading(one), /\(1 chain\) has none/);
});

test('a channel replay that sent nothing, or whose strategies tie, does not name one strategy both the most and the least cacheable', async () => {
  const { replayRunReading } = await import('../../src/report/section-replay.js');
  const rp = fixtureReport().replay as Extract<ReportData['replay'], { runs: unknown }>;
  const run = rp.runs[0]!;
  const zero = { ...run, strategies: run.strategies.map((x) => ({ ...x, inputTokens: 0, cacheablePrefix: 0, cacheableRatio: null, uncachedPerWarmTurn: null, alreadySeen: 0 })) };
  const empty = replayRunReading(zero);
  assert.doesNotMatch(empty, /the most .* the least/);
  assert.match(empty, /^Nothing was replayed/);
  const tied = replayRunReading({ ...run, strategies: run.strategies.map((x) => ({ ...x, cacheableRatio: 0.5, uncachedPerWarmTurn: 10, alreadySeen: 0 })) });
  assert.equal(tied, 'Every strategy caches 50.0% of input; every strategy sends 10 uncached tokens per warm turn.');
  assert.match(replayRunReading(run), /^“window” caches the most \(94\.1% of input\), “unstable” the least \(0\.0%\); “watermark” sends the fewest/);
});

test('the best what-if tile agrees with the headline: a what-if that saves nothing does not "save 0.0%", one that costs more "costs … more"', async () => {
  const { headlineReading, renderHeadline } = await import('../../src/report/section-headline.js');
  const h = fixtureReport().headline as Headline;
  const tile = (b: NonNullable<Headline['bestWhatIf']>) => String(renderHeadline({ ...h, bestWhatIf: b }).body).replace(/<[^>]*>/g, '');
  const none = { label: 'force the 1-hour cache TTL', savingWeight: 0, savingUsd: 0, savingShare: 0, shareOf: 'cost' as const };
  assert.match(headlineReading({ ...h, bestWhatIf: none }), /no what-if tried would save anything/);
  assert.doesNotMatch(tile(none), /saves/);
  // nothing changed is nothing to gain, not a what-if that 'changes cost by 0.0%'
  assert.match(tile(none), /nothing to gain\s*force the 1-hour cache TTL changes nothing/);
  // one that changes chains of unpriced models changes nothing priced: its effect on them is unknown, no gain to claim or deny
  const unknown = { ...none, unknownEffect: '1 chain of unpriced models' };
  assert.match(tile(unknown), /nothing priced to gain\s*force the 1-hour cache TTL changes nothing priced; the effect on 1 chain of unpriced models is unknown/);
  assert.match(headlineReading({ ...h, bestWhatIf: unknown }), /force the 1-hour cache TTL changes nothing priced, and its effect on 1 chain of unpriced models is unknown\.$/);
  assert.doesNotMatch(headlineReading({ ...h, bestWhatIf: none }), /least costly/);
  const worse = { label: 'force the 1-hour cache TTL', savingWeight: -750, savingUsd: -0.00225, savingShare: -0.576, shareOf: 'cost' as const };
  assert.match(tile(worse), /costs 57\.6% more with force the 1-hour cache TTL/);
  assert.match(tile({ ...worse, savingWeight: 750, savingUsd: 0.00225, savingShare: 0.576 }), /saves 57\.6% of cost with force/);
});

test('the footer does not say "all times UTC" when the days of cost over time are in another --timezone', () => {
  const f = fixtureReport();
  const zoned = renderReport({ ...f, costOverTime: { ...(f.costOverTime as CostOverTime), timezone: 'Etc/GMT+12' } });
  const footer = (p: string) => /<footer[^>]*>([\s\S]*?)<\/footer>/.exec(p)?.[1] ?? '';
  assert.doesNotMatch(footer(zoned), /all times UTC/);
  assert.match(footer(zoned), /times in UTC, cost-over-time days in Etc\/GMT\+12/);
  assert.match(footer(renderReport({ ...f, costOverTime: { ...(f.costOverTime as CostOverTime), timezone: 'UTC' } })), /all times in UTC/);
});

test('cost over time of a single day reads "All on DAY: $X", not "the most expensive was DAY (100.0% of $X)"', async () => {
  const { renderCostOverTime } = await import('../../src/report/section-cost-time.js');
  const f = fixtureReport();
  const rows = (f.costOverTime as CostOverTime).rows;
  const day = rows[0]!.day;
  const one = renderCostOverTime({ rows: rows.filter((r) => r.day === day) }, new ChartSink()).reading;
  assert.match(one, new RegExp(`^All on ${day}: \\$[0-9.,]+; the largest component is `));
  assert.doesNotMatch(one, /most expensive|100\.0% of/);
  assert.match(renderCostOverTime({ rows }, new ChartSink()).reading, /^Over \d+ days, the most expensive was /);
});

test('the cost-per-day table says UTC days in UTC under another name (Etc/UTC, GMT), and names any other zone', async () => {
  const { renderCostOverTime } = await import('../../src/report/section-cost-time.js');
  const rows = (fixtureReport().costOverTime as CostOverTime).rows;
  const html = (timezone: string) => String(renderCostOverTime({ rows, timezone }, new ChartSink()).body);
  for (const z of ['UTC', 'Etc/UTC', 'GMT', 'Zulu']) assert.match(html(z), /Cost per day \(UTC days\)/, z);
  assert.match(html('Europe/London'), /Cost per day \(days in Europe\/London\)/);
});

test('--calibrate 1 is fitted on "request 2", not on "requests 2–2"', async () => {
  const { calibrationLine } = await import('../../src/report/section-replay.js');
  const line = String(calibrationLine({ k: 1, scale: 1.5 } as Parameters<typeof calibrationLine>[0], { requests: 1, from: 3, medianRelError: 0.1, p90RelError: 0.1 } as Parameters<typeof calibrationLine>[1]));
  assert.match(line, /\(--calibrate 1: fitted on request 2\) · held-out fidelity over 1 request \(from request 3\)/);
  assert.match(String(calibrationLine({ k: 3, scale: 1.5 } as Parameters<typeof calibrationLine>[0], undefined)), /fitted on requests 2–4\)/);
});

test('one chain listed, one gap over the TTL: the readings are in the singular ("it does not show", "0 of 1 gap … still expires")', async () => {
  const { renderTopChains } = await import('../../src/report/section-chains.js');
  const f = fixtureReport();
  const chain = { ...(f.topChains as TopChains).chains[0]!, repurchase: false };
  const one = renderTopChains({ chains: [chain], withoutWaste: 0 }, new ChartSink()).reading;
  assert.match(one, /; it does not show the re-purchase pattern/);
  assert.doesNotMatch(one, /of the 1 chains/);
  assert.match(renderTopChains({ chains: [{ ...chain, repurchase: true }], withoutWaste: 0 }, new ChartSink()).reading, /; it shows the re-purchase pattern/);
  const k = f.keepalive as Keepalive;
  const b = k.budgets.find((x) => x.budget === k.best)!;
  const single = { ...k, gaps: 1, unpricedGaps: 1, budgets: k.budgets.map((x) => (x === b ? { ...x, gapsOverTtl: 1, expiredAfterBudget: 0 } : x)) };
  const r = keepaliveReading(single);
  assert.match(r, /and 0 of 1 gap over the TTL still expires/);
  assert.match(r, /1 of 1 gap touches a model without a price and is counted, not priced/);
});

test('replay strategies tied at the top are named together, not the first of them as the one that caches the most or sends the fewest', async () => {
  const { renderReplay, replayRunReading } = await import('../../src/report/section-replay.js');
  const rp = fixtureReport().replay as Extract<ReportData['replay'], { runs: unknown }>;
  const run = rp.runs[0]!;
  const window = run.strategies.find((x) => x.strategy === 'window')!;
  // recorded and dedupe-attachments on a chain without a repeated attachment: the same numbers
  const tied = { ...run, strategies: run.strategies.map((x) => (x.strategy === 'watermark' ? { ...window, strategy: 'watermark' } : x)) };
  const reading = replayRunReading(tied);
  assert.match(reading, /^“window” and “watermark” cache the most \(94\.1% of input\), “unstable” the least \(0\.0%\); “window” and “watermark” send the fewest uncached tokens per warm turn/);
  const both = renderReplay({ runs: [tied, run] }, new ChartSink()).reading;
  assert.match(both, /^2 replays; the most cacheable strategy: “window” and “watermark”, tied at 94\.1%, in [^;]+; “window” \(94\.1%\) in /);
  const all = { ...run, strategies: run.strategies.map((x) => ({ ...window, strategy: x.strategy })) };
  assert.match(renderReplay({ runs: [all, run] }, new ChartSink()).reading, /strategy: all tied at 94\.1% in /);
});

test('keepalive budgets that net the same as the best are said to tie with it: past the pings every gap needs, a larger budget sends no more', () => {
  const f = fixtureReport().keepalive as Keepalive;
  const best = f.budgets.find((b) => b.budget === f.best)!;
  // every gap needs at most 3 pings: budgets 3 … 20 and ∞ send the same pings and net the same
  const flat: Keepalive = { ...f, budgets: f.budgets.map((b) => ((b.budget ?? Infinity) > best.budget! ? { ...best, budget: b.budget } : b)) };
  const r = keepaliveReading(flat);
  assert.match(r, /^The best budget is 3 pings per gap \(every larger budget, unbounded included, nets the same\): net \+3\.1% of subagent weight/);
  assert.doesNotMatch(r, /unbounded pinging nets/);
  // only some: named
  const some: Keepalive = { ...f, budgets: f.budgets.map((b) => (b.budget === 4 || b.budget === 6 ? { ...best, budget: b.budget } : b)) };
  assert.match(keepaliveReading(some), /^The best budget is 3 pings per gap \(budgets 4 and 6 net the same\): .*; unbounded pinging nets −18\.0% of subagent weight \(−3\.6% of all weight\)\.$/);
  assert.match(keepaliveReading(f), /^The best budget is 3 pings per gap: net/);
});

test('the keepalive reading of logs without subagent weight gives the share of all weight, not "net n/a of subagent weight on subagent chains"', () => {
  const f = fixtureReport().keepalive as Keepalive;
  const mainOnly: Keepalive = { ...f, budgets: f.budgets.map((b) => ({ ...b, netSavingShareSubagent: null })) };
  const r = keepaliveReading(mainOnly);
  assert.doesNotMatch(r, /n\/a/);
  assert.match(r, /^The best budget is 3 pings per gap: net \+0\.6% of all weight \(no subagent weight to take a share of\), and 46 of 105 gaps over the TTL still expire; unbounded pinging nets −3\.6% of all weight\.$/);
});

test('"the most" readings name every key, day, component and agent type tied at the top (the same printed numbers), not the first of them', async () => {
  const { renderCostOverTime } = await import('../../src/report/section-cost-time.js');
  // cost by: two models at the same USD, a third cheaper
  const costBy: CostBy['rows'] = [
    { dimension: 'model', key: 'claude-a', groups: 1, component: 'read', usd: 2, weight: 20 },
    { dimension: 'model', key: 'claude-b', groups: 1, component: 'read', usd: 2, weight: 20 },
    { dimension: 'model', key: 'claude-c', groups: 1, component: 'read', usd: 1, weight: 10 },
  ];
  assert.match(renderCostBy({ rows: costBy }, new ChartSink()).reading, /^The most expensive: model “claude-a” and “claude-b” \(\$2\.00, 40\.0% each\)\.$/);
  assert.match(renderCostBy({ rows: costBy.slice(1) }, new ChartSink()).reading, /^The most expensive: model “claude-b” \(\$2\.00, 66\.7%\)\.$/);
  // cost over time: two of three days at the same USD; write5m and read tied at the top
  const day = (d: string, usd: number): CostOverTime['rows'] => [
    { day: d, component: 'write5m', usd, weight: usd, tokens: 1 },
    { day: d, component: 'read', usd, weight: usd, tokens: 1 },
  ];
  const rows = [...day('2026-02-10', 1), ...day('2026-02-11', 1), ...day('2026-02-12', 0.5)];
  assert.equal(
    renderCostOverTime({ rows }, new ChartSink()).reading,
    'Over 3 days, the most expensive were 2026-02-10 and 2026-02-11 at $2.00 each (40.0% each of $5.00); the largest components are 5m write and read (50.0% each).',
  );
  assert.match(renderCostOverTime({ rows: rows.slice(0, 4) }, new ChartSink()).reading, /^Over 2 days, each cost \$2\.00 \(50\.0% of \$4\.00\);/);
  // anatomy: two agent types re-bought the same weight
  const anatomy = (['cold', 'expiry'] as const).flatMap((component) =>
    [['main', 3_000], ['Explore', 1_000]].map(([agentType, cold]) => ({ agentType: agentType as string, component, tokens: 1, weight: component === 'cold' ? (cold as number) : 1_000, usd: 0.01 })),
  );
  assert.match(renderAnatomy({ rows: anatomy }, new ChartSink()).reading, /; “main” and “Explore” re-bought the most \(1,000 wt each; 25\.0% and 50\.0% of their writes\)\.$/);
});

test('a session replay\'s table counts attachments sent, not channel rows: its column says so', async () => {
  const { renderReplay } = await import('../../src/report/section-replay.js');
  const rp = fixtureReport().replay as Extract<ReportData['replay'], { runs: unknown }>;
  const headers = (kind: 'channel' | 'session') => {
    const run = rp.runs.find((r) => r.kind === kind)!;
    const body = String(renderReplay({ runs: [run] }, new ChartSink()).body);
    const table = /<caption>Per strategy[\s\S]*?<\/thead>/.exec(body)![0];
    return [...table.matchAll(/<th[^>]*>([\s\S]*?)<\/th>/g)].map((m) => m[1]!.replace(/<[^>]*>/g, '').trim());
  };
  const session = headers('session');
  assert.ok(session.includes('attachments'), session.join(' | '));
  assert.ok(!session.includes('rows sent'), session.join(' | '));
  const channel = headers('channel');
  assert.ok(channel.includes('rows sent') && channel.includes('context tokens'), channel.join(' | '));
});

test('the cross-tab reading lists several rows as one list, "“a” and “b”", as other readings name ties, not a run of commas', () => {
  const row = (key: string, definition: 'lost' | 'resolved', listings: number) => ({ key, definition, chains: 2, chainsWithSkillListing: listings ? 2 : 0, skillListings: listings, rounds: 4, chainsListingsEqualRounds: listings ? 2 : 0, weight: 1 });
  const d: CrossTab = { rowDimension: 'agent_type', rows: [row('reviewer', 'lost', 4), row('planner', 'lost', 4), row('Explore', 'resolved', 0), row('Plan', 'resolved', 0), row('fork', 'resolved', 0)] };
  assert.equal(
    crossTabReading(d),
    'In “reviewer” (definition lost) and “planner” (definition lost) every chain (4) carries as many skill_listing attachments as rounds; “Explore” (definition resolved), “Plan” (definition resolved) and “fork” (definition resolved) have none, 6 chains in all.',
  );
  // the count is of the whole list, said so (after the last name, '(6 chains) have none' read as that row's); with chains that sent no request
  const idle = { ...d, rows: d.rows.slice(2).map((r, i) => ({ ...r, chainsWithoutRequests: i === 0 ? 1 : 0 })) };
  assert.equal(crossTabReading(idle), '“Explore” (definition resolved), “Plan” (definition resolved) and “fork” (definition resolved) have none, 6 chains in all, 1 without a request.');
});

test('the waste tile says its weight is the rewrites beyond a read, not the rewrites\' own weight the anatomy section shows', async () => {
  const { renderHeadline } = await import('../../src/report/section-headline.js');
  const h = fixtureReport().headline as Headline;
  for (const x of [h, { ...h, wasteWeight: null, wasteUsd: null }]) {
    const tile = /<div class="tile-label">Waste<\/div>[\s\S]*?<div class="tile-note">([\s\S]*?)<\/div>/.exec(String(renderHeadline(x).body))![1]!.replace(/<[^>]*>/g, '');
    assert.match(tile, /expiry \+ break rewrites beyond a read$/);
  }
});

test('the blocks chart draws each window at its instants on a UTC scale, the zone given to its axis, its tooltip the start as the table writes it; no chart names UTC for a zone\'s times', async () => {
  const { renderBlocks } = await import('../../src/report/section-blocks.js');
  const blocks = [{ start: Date.UTC(2026, 1, 11, 3), end: Date.UTC(2026, 1, 11, 8), usd: 1, weight: 1, requests: 1, tokens: 1 }];
  for (const [timezone, wall, when] of [
    ['Asia/Kathmandu', Date.UTC(2026, 1, 11, 8, 45), '2026-02-11 08:45 Asia/Kathmandu'],
    ['Pacific/Chatham', Date.UTC(2026, 1, 11, 16, 45), '2026-02-11 16:45 Pacific/Chatham'],
    [undefined, Date.UTC(2026, 1, 11, 3), '2026-02-11 03:00 UTC'],
  ] as const) {
    const sink = new ChartSink();
    const out = renderBlocks({ blocks, ...(timezone ? { timezone } : {}) }, sink);
    // the table writes the start as the terminal's blocks table does, the zone named once in its
    // caption, not in every cell; the reading names it with the time
    const clock = when.slice(0, 16);
    assert.ok(out.body.value.includes(`>${clock}<`), `${timezone}: the table's start ${clock}`);
    assert.ok(!out.body.value.includes(`>${when}<`), `${timezone}: a cell that names the zone again`);
    assert.ok(out.body.value.includes(`(times in ${timezone ?? 'UTC'})`), `${timezone}: the caption names the zone`);
    assert.match(out.reading, new RegExp(`the heaviest started ${when} `));
    const [row] = sink.charts[0]!.data.blocks as Array<{ start: number; end: number; when: string; label: string }>;
    assert.deepEqual([row!.start, row!.end, row!.when], [blocks[0]!.start, blocks[0]!.end, when]);
    // the axis's ticks and labels are on the zone's clocks: its wall clock at the start is the table's
    assert.deepEqual(sink.charts[0]!.signals, { zone: timezone ?? 'UTC' });
    assert.equal(row!.start + zoneOffsetMs(row!.start, timezone ?? 'UTC'), wall);
    // a screen reader's text for the bar: start and end in the zone, not vega-lite's end in the browser's
    assert.ok(row!.label.startsWith(`${when} – `) && row!.label.includes(timezone ?? 'UTC'), row!.label);
  }
  // the specs read times on UTC scales only (a vega-lite time scale is the browser's zone), and say no zone themselves
  for (const name of ['blocks', 'cost-over-time'] as const) {
    const spec = JSON.stringify(vegaSpec(name));
    assert.doesNotMatch(spec, /"type":"time"/, `${name}: a scale in the browser's zone`);
    assert.doesNotMatch(spec, /(?<![a-z])(timeFormat|hours|minutes|date|month|year)\(/, `${name}: a time function in the browser's zone`);
    assert.doesNotMatch(spec, /\(UTC\)/, `${name}: a title that says UTC`);
  }
});

test('a 5-hour block across a change of the clocks is drawn 5 hours wide from its start\'s instant, not 4 or 6 as its wall clock\'s start and end are, and its end says what the clocks did', async () => {
  const { renderBlocks } = await import('../../src/report/section-blocks.js');
  const H = 3_600_000;
  for (const [timezone, start, wallStart, wallEnd, note] of [
    // 00:00 EST → 06:00 EDT: the clocks went forward at 02:00
    ['America/New_York', Date.UTC(2026, 2, 8, 5), '2026-03-08 00:00', '2026-03-08 06:00', 'the clocks went forward 1 hour: 5 hours, 6 on the wall clock'],
    // 00:00 EDT → 04:00 EST: back at 02:00
    ['America/New_York', Date.UTC(2026, 10, 1, 4), '2026-11-01 00:00', '2026-11-01 04:00', 'the clocks went back 1 hour: 5 hours, 4 on the wall clock'],
    // 00:00 CET → 06:00 CEST, the change at 01:00 UTC
    ['Europe/Berlin', Date.UTC(2026, 2, 28, 23), '2026-03-29 00:00', '2026-03-29 06:00', 'the clocks went forward 1 hour: 5 hours, 6 on the wall clock'],
    // Lord Howe's clocks move half an hour: 00:00 +11 → 04:30 +10:30
    ['Australia/Lord_Howe', Date.UTC(2026, 3, 4, 13), '2026-04-05 00:00', '2026-04-05 04:30', 'the clocks went back 30 minutes: 5 hours, 4.5 on the wall clock'],
  ] as const) {
    const sink = new ChartSink();
    const out = renderBlocks({ blocks: [{ start, end: start + 5 * H, usd: 1, weight: 1, requests: 2, tokens: 3 }], timezone }, sink);
    const [row] = sink.charts[0]!.data.blocks as Array<{ start: number; end: number; until: string; label: string }>;
    assert.equal(row!.start, start, `${timezone}: the bar starts at the block's instant`);
    assert.equal(row!.start + zoneOffsetMs(row!.start, timezone), Date.parse(`${wallStart.replace(' ', 'T')}:00Z`), `${timezone}: labelled at the wall clock`);
    assert.equal(row!.end - row!.start, 5 * H, `${timezone} ${wallStart}: the bar is as wide as the block lasts`);
    assert.equal(row!.until, `${wallEnd} ${timezone} (${note})`);
    assert.ok(row!.label.includes(`– ${wallEnd} ${timezone} (${note}):`), row!.label);
    // the table writes the wall clock, as the terminal's blocks table does
    assert.ok(out.body.value.includes(`>${wallStart}<`) && out.body.value.includes(`>${wallEnd}<`), `${timezone}: the table's start and end`);
  }
  // no change: no note, and still 5 hours wide
  const sink = new ChartSink();
  renderBlocks({ blocks: [{ start: Date.UTC(2026, 5, 1, 5), end: Date.UTC(2026, 5, 1, 10), usd: 1, weight: 1, requests: 1, tokens: 1 }], timezone: 'America/New_York' }, sink);
  const [row] = sink.charts[0]!.data.blocks as Array<{ start: number; end: number; until: string }>;
  assert.deepEqual([row!.end - row!.start, row!.until], [5 * H, '2026-06-01 06:00 America/New_York']);
});

test('the footer names the page\'s zone, and a section\'s own only where the data gives it another', () => {
  const f = fixtureReport();
  const footer = (p: string) => /<footer[^>]*>([\s\S]*?)<\/footer>/.exec(p)?.[1] ?? '';
  const zoned = (z: string) => ({ ...f, meta: { ...f.meta, timezone: z }, costOverTime: { ...(f.costOverTime as CostOverTime), timezone: z }, blocks: { ...(f.blocks as object as { blocks: [] }), timezone: z } });
  assert.match(footer(renderReport(zoned('Asia/Kathmandu'))), /all times in Asia\/Kathmandu/);
  assert.doesNotMatch(footer(renderReport(zoned('Asia/Kathmandu'))), /UTC/);
  assert.match(footer(renderReport({ ...zoned('Asia/Kathmandu'), blocks: f.blocks })), /times in Asia\/Kathmandu, 5-hour blocks in UTC/);
});

test('cost over time\'s tooltip does not call its day a UTC day: the days are in --timezone, which the chart\'s label names', () => {
  assert.doesNotMatch(JSON.stringify(vegaSpec('cost-over-time')), /\(UTC\)/);
});

test('keepalive reading: a budget that nets more weight than the best (chosen by USD, the models\' prices differing) is named', () => {
  const f = fixtureReport().keepalive as Keepalive;
  const best = f.budgets.find((b) => b.budget === f.best)!;
  // budget 4 nets more weight than any budget (1,000 more than the most) but less USD than the best (3)
  const most = Math.max(...f.budgets.map((b) => b.netSavingWeight));
  const budgets = f.budgets.map((b) => (b.budget === 4 ? { ...b, netSavingWeight: most + 1_000, netSavingUsd: best.netSavingUsd! - 0.01, netSavingShareAll: 0.0125 } : b));
  assert.match(keepaliveReading({ ...f, budgets }), /; the best budget is the one that nets the most USD: budget 4 nets more weight \(\+1\.3% of all weight\) but less USD, the gaps' models having different prices per weight/);
  assert.doesNotMatch(keepaliveReading(f), /nets the most USD/);
});

test('the keepalive table sorts its net saving column by the USD it shows, and its shares say they are of weight', () => {
  const f = fixtureReport().keepalive as Keepalive;
  // budget 4 nets more weight than the best (3) but less USD (models of different prices): sorted by USD it is below 3
  const most = Math.max(...f.budgets.map((b) => b.netSavingWeight));
  const best = f.budgets.find((b) => b.budget === f.best)!;
  const budgets = f.budgets.map((b) => (b.budget === 4 ? { ...b, netSavingWeight: most + 1_000, netSavingUsd: best.netSavingUsd! - 0.01 } : b));
  const out = String(renderKeepalive({ ...f, budgets }, new ChartSink()).body);
  // the net saving cell's data-sort, in the row of that budget
  const sortOf = (budget: string) => Number(new RegExp(`<td class="num[^"]*" data-sort="${budget}">${budget}</td><td class="num" data-sort="([^"]+)"`).exec(out)![1]);
  assert.ok(sortOf('4') < sortOf('3'), `budget 4 (${sortOf('4')}) sorts below the best (${sortOf('3')})`);
  assert.ok(Math.abs(sortOf('4') - (best.netSavingUsd! - 0.01)) < 1e-9, 'budget 4 sorts by its USD');
  assert.match(out, />% subagent wt</);
  assert.match(out, />% all wt</);
});

test('the keepalive table marks a budget\'s net saving +? when it pings gaps of unpriced models, as whatif keepalive marks it; budget 0 and gaps too short for a ping leave it whole', () => {
  const f = fixtureReport().keepalive as Keepalive;
  const cells = (k: Keepalive) => [...String(renderKeepalive(k, new ChartSink()).body).matchAll(/<tr>\s*<td[^>]*>([^<]*)<\/td>\s*<td[^>]*>([^<]*)<\/td>/g)].map((m) => [m[1], m[2]]);
  const marked = cells({ ...f, gaps: 105, unpricedGaps: 3, unpricedPingedGaps: 2 });
  assert.ok(marked.length >= 3, JSON.stringify(marked));
  for (const [budget, net] of marked) {
    const pings = f.budgets.find((b) => (b.budget === null ? '∞' : String(b.budget)) === budget)!.pings;
    assert.equal(net!.endsWith(' +?'), pings > 0, `${budget}: ${net}`);
  }
  // and its shares of weight, as the net saving they are of
  const shares = [...String(renderKeepalive({ ...f, gaps: 105, unpricedGaps: 3, unpricedPingedGaps: 2 }, new ChartSink()).body).matchAll(/<tr>\s*<td[^>]*>([^<]*)<\/td>\s*<td[^>]*>[^<]*<\/td>\s*<td[^>]*>([^<]*)<\/td>\s*<td[^>]*>([^<]*)<\/td>/g)];
  assert.ok(shares.length >= 3);
  for (const [, budget, sub, all] of shares) {
    const b = f.budgets.find((x) => (x.budget === null ? '∞' : String(x.budget)) === budget)!;
    assert.equal(all!.endsWith(' +?'), b.pings > 0, `${budget}: ${all}`);
    assert.equal(sub!.endsWith(' +?'), b.pings > 0 && b.netSavingShareSubagent !== null, `${budget}: ${sub}`);
  }
  // unpriced gaps no ping falls in: every net saving is whole
  for (const [, net] of cells({ ...f, gaps: 105, unpricedGaps: 3, unpricedPingedGaps: 0 })) assert.doesNotMatch(net!, /\+\?/);
});
