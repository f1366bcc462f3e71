/**
 * The rendered report in Debian's Chromium, from file://: it loads with no console errors and no
 * request but itself, every chart draws marks, a failed section or chart stays contained, and
 * hostile transcript text shows literally and never runs.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openContext } from '../../src/context.js';
import { buildReportData } from '../../src/report/build.js';
import { renderReport } from '../../src/report/render.js';
import type { CostOverTime, Keepalive, ReportData, TopChains } from '../../src/report/data.js';
import { roundNumbers } from '../../src/format/json-numbers.js';
import { clean } from '../../src/format/table.js';
import { chartsSettled, chartStates, launchChromium, openRecorded, type Browser } from './browser.js';
import { fixtureReport, hostileReport, PAYLOADS } from './fixtures.js';
import { assistant, cli, REAL_LOGS, REPO, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';
import type { Page } from 'playwright-core';
import { keepingTemp } from '../helpers/temp.js';

let browser: Browser;
let dir: string;

before(async () => {
  browser = await launchChromium();
  dir = tempDir('cachelens-report-test-');
});

after(async () => {
  await browser?.close();
});

async function writeHtml(name: string, htmlText: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, htmlText, 'utf8');
  return pathToFileURL(file).href;
}

test('fixture report loads from file:// with no errors, no requests, and every chart drawn', async () => {
  const url = await writeHtml('fixture.html', renderReport(fixtureReport()));
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  const charts = await chartStates(page);

  assert.ok(charts.length >= 10, `expected a chart per section, got ${charts.length}`);
  for (const c of charts) {
    assert.equal(c.state, 'ok', `chart ${c.id} (${c.spec}) is ${c.state}`);
    assert.ok(c.marks > 0, `chart ${c.id} (${c.spec}) drew no marks`);
  }
  const specs = new Set(charts.map((c) => c.spec));
  for (const s of ['cost-over-time', 'cost-by', 'anatomy', 'chain-rounds', 'ttl-buckets', 'keepalive', 'replay-strategies', 'replay-turns', 'blocks']) {
    assert.ok(specs.has(s), `no ${s} chart on the page`);
  }
  assert.deepEqual(log.consoleErrors, []);
  assert.deepEqual(log.cspViolations, []);
  assert.deepEqual(log.pageErrors, []);
  assert.deepEqual(log.requests, [url]);

  const usd = await page.getAttribute('[data-metric="usd"]', 'data-value');
  assert.equal(Number(usd), 412.37);
  const sections = await page.$$eval('section[data-section]', (s) => s.map((e) => e.id));
  assert.deepEqual(sections, ['headline', 'cost-over-time', 'cost-by', 'anatomy', 'top-chains', 'cross-tab', 'ttl-override', 'keepalive', 'replay', 'blocks', 'data-quality']);

  // to look at by eye: kept (and their place printed) with CACHELENS_KEEP_TEST_TMP=1, removed with the file's temp dirs otherwise
  const shots = path.join(dir, 'shots');
  await mkdir(shots, { recursive: true });
  await page.screenshot({ path: path.join(shots, 'light.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(shots, 'dark.png'), fullPage: true });
  const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  assert.equal(bg, 'rgb(20, 23, 28)', 'dark colour scheme applies');
  const axisFill = await page.$eval('figure.chart svg .role-axis-label text', (t) => getComputedStyle(t).fill);
  assert.equal(axisFill, 'rgb(228, 232, 238)', 'chart axis labels follow the dark theme');
  if (keepingTemp) console.log(`# screenshots in ${shots}`);
  await page.close();
});

test('a report with no sections (only meta) loads cleanly', async () => {
  const url = await writeHtml('empty.html', renderReport({ meta: { generatedAt: '2026-01-12T09:30:00.000Z', version: '0.1.0', roots: [], from: null, to: null } }));
  const { page, log } = await openRecorded(browser, url);
  assert.equal(await page.locator('section').count(), 0);
  assert.equal(await page.title(), 'cachelens report · no requests');
  assert.deepEqual([log.consoleErrors, log.cspViolations, log.pageErrors, log.requests], [[], [], [], [url]]);
  await page.close();
});

test('a section whose analysis failed shows an error card; a chart that throws becomes an error card alone', async () => {
  const data: ReportData = { ...fixtureReport(), anatomy: { error: 'DuckDB: table chains does not exist' } };
  let htmlText = renderReport(data);
  // Make one chart throw in the browser: bind its rows to a data set its spec does not have.
  const m = /<script type="application\/json" id="cachelens-charts">([\s\S]*?)<\/script>/.exec(htmlText)!;
  const payload = JSON.parse(m[1]!);
  const victim = payload.charts.find((c: { spec: string }) => c.spec === 'blocks');
  victim.data = { nonexistent: [] };
  htmlText = htmlText.replace(m[1]!, () => JSON.stringify(payload).replace(/</g, '\\u003c'));
  const url = await writeHtml('errors.html', htmlText);
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);

  const card = await page.$eval('#anatomy', (s) => ({ cls: s.className, text: s.textContent ?? '' }));
  assert.match(card.cls, /error-card/);
  assert.match(card.text, /DuckDB: table chains does not exist/);
  const charts = await chartStates(page);
  const failed = charts.filter((c) => c.state !== 'ok');
  assert.deepEqual(failed.map((c) => [c.spec, c.state]), [['blocks', 'error']]);
  assert.ok(charts.filter((c) => c.state === 'ok').every((c) => c.marks > 0));
  const chartCard = await page.$eval(`figure[data-chart="${victim.id}"]`, (f) => f.textContent ?? '');
  assert.match(chartCard, /could not be drawn/);
  assert.match(chartCard, /nonexistent/);
  // the chart's numbers stay open in its place
  assert.equal(await page.$eval(`figure[data-chart="${victim.id}"] details.chart-data`, (d) => (d as HTMLDetailsElement).open), true);
  assert.ok(await page.locator(`figure[data-chart="${victim.id}"] details.chart-data tbody tr`).first().isVisible());
  assert.deepEqual(log.pageErrors, []);
  assert.deepEqual(log.requests, [url]);
  await page.close();
});

async function assertNothingRan(url: string, data: ReportData, label: string) {
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  const state = await page.evaluate(() => ({
    xss: (window as unknown as { __xss?: unknown }).__xss,
    scripts: document.scripts.length,
    imgs: document.images.length,
    strayElements: document.querySelectorAll('main svg:not(.chart-canvas svg), main script, main iframe, main object, a[href^="javascript"]').length,
    text: document.body.textContent ?? '',
    title: document.title,
    chartText: [...document.querySelectorAll('figure.chart svg text')].map((t) => t.textContent).join('\n'),
    data: JSON.parse(document.getElementById('cachelens-data')!.textContent!),
  }));
  assert.equal(state.xss, undefined, `${label}: a payload ran`);
  assert.deepEqual(log.dialogs, [], `${label}: a dialog opened`);
  assert.deepEqual(log.pageErrors, [], label);
  assert.deepEqual(log.consoleErrors, [], label);
  assert.deepEqual(log.cspViolations, [], label);
  assert.deepEqual(log.requests, [url], `${label}: only the page itself is loaded`);
  assert.equal(state.scripts, 5, `${label}: exactly the report's own script elements`);
  assert.equal(state.imgs, 0, label);
  assert.equal(state.strayElements, 0, label);
  // literally, but for its control characters (U+2028, U+2029), which show as ? as in the terminal's tables
  for (const payload of PAYLOADS) assert.ok(state.text.includes(clean(payload)), `${label}: ${JSON.stringify(payload)} shows literally`);
  assert.equal(state.title, `${data.meta.title} · 2026-01-05 – 2026-01-11 UTC`);
  assert.match(state.chartText, /<img src=x/, `${label}: chart labels show the text`);
  assert.match(state.chartText, /<script>window\.__xss=1/, label);
  assert.ok(state.chartText.includes('${window.__xss=9}'), `${label}: a template literal in a chart label stays text`);
  // numbers as --json writes them (12 significant digits, format/json-numbers.ts)
  assert.deepEqual(state.data, JSON.parse(JSON.stringify(data, roundNumbers)), `${label}: embedded JSON round-trips, U+2028 included`);
  const charts = await chartStates(page);
  for (const c of charts) assert.equal(c.state, 'ok', `${label}: chart ${c.id} (${c.spec})`);
  await page.close();
}

test('hostile transcript text shows literally and never runs, with and without the CSP', async () => {
  const data = hostileReport();
  const htmlText = renderReport(data);
  await assertNothingRan(await writeHtml('hostile.html', htmlText), data, 'with CSP');
  // Without the CSP, escaping alone must hold.
  const noCsp = htmlText.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, '');
  assert.notEqual(noCsp, htmlText);
  await assertNothingRan(await writeHtml('hostile-no-csp.html', noCsp), data, 'without CSP');
});

test('tables sort by their raw numbers when a header, made a button by the script, is clicked', async () => {
  const url = await writeHtml('sort.html', renderReport(fixtureReport()));
  const { page } = await openRecorded(browser, url);
  const column = () => page.$$eval('#keepalive table tbody tr', (rows) => rows.map((r) => (r as HTMLTableRowElement).cells[4]!.getAttribute('data-sort')));
  // the script made every header a button of its own text (the page as written has none: render.test.ts)
  const headers = await page.$$eval('table.sortable thead th', (ths) => ths.map((th) => th.children.length === 1 && th.firstElementChild!.tagName === 'BUTTON' && th.firstElementChild!.textContent === th.textContent && th.textContent !== ''));
  assert.ok(headers.length > 20 && headers.every(Boolean), 'every header is a button once the script ran');
  const before = await column();
  await page.click('#keepalive table thead th:nth-child(5) button');
  const desc = (await column()).map(Number);
  assert.deepEqual(desc, [...desc].sort((a, b) => b - a));
  assert.notDeepEqual(desc.map(String), before);
  await page.click('#keepalive table thead th:nth-child(5) button');
  const asc = (await column()).map(Number);
  assert.deepEqual(asc, [...asc].sort((a, b) => a - b));
  assert.equal(await page.getAttribute('#keepalive table thead th:nth-child(5)', 'aria-sort'), 'ascending');
  await page.close();
});

test('a cell with no number (n/a, unknown) sorts after every number, ascending and descending', async () => {
  const f = fixtureReport();
  const ka = f.keepalive as Keepalive;
  ka.budgets = ka.budgets.map((b, i) => (i % 3 === 1 ? { ...b, netSavingShareSubagent: null } : b));
  const url = await writeHtml('sort-unknown.html', renderReport({ ...f, keepalive: ka }));
  const { page } = await openRecorded(browser, url);
  const column = () => page.$$eval('#keepalive table tbody tr', (rows) => rows.map((r) => (r as HTMLTableRowElement).cells[2]!.getAttribute('data-sort')));
  const unknown = (await column()).filter((v) => v === null).length;
  assert.ok(unknown > 0, 'some shares are unknown');
  for (const order of ['descending', 'ascending']) {
    await page.click('#keepalive table thead th:nth-child(3) button');
    assert.equal(await page.getAttribute('#keepalive table thead th:nth-child(3)', 'aria-sort'), order);
    const values = await column();
    const numbers = values.slice(0, values.length - unknown);
    assert.ok(numbers.every((v) => v !== null), `${order}: numbers first (${values.join(', ')})`);
    assert.ok(values.slice(values.length - unknown).every((v) => v === null), `${order}: unknown last`);
    const n = numbers.map(Number);
    assert.deepEqual(n, [...n].sort((a, b) => (order === 'ascending' ? a - b : b - a)));
  }
  await page.close();
});

test('printing uses light colours even in dark mode and makes a multi-page PDF', async () => {
  const url = await writeHtml('print.html', renderReport(fixtureReport()));
  const { page } = await openRecorded(browser, url);
  await chartsSettled(page);
  await page.emulateMedia({ media: 'print', colorScheme: 'dark' });
  const colours = await page.evaluate(() => ({
    bg: getComputedStyle(document.documentElement).backgroundColor,
    fg: getComputedStyle(document.body).color,
    axis: getComputedStyle(document.querySelector('figure.chart svg .role-axis-label text')!).fill,
    toc: getComputedStyle(document.querySelector('nav.toc')!).display,
  }));
  assert.deepEqual(colours, { bg: 'rgb(255, 255, 255)', fg: 'rgb(0, 0, 0)', axis: 'rgb(0, 0, 0)', toc: 'none' });
  const pdf = await page.pdf({ format: 'A4', printBackground: true });
  assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  const pages = (pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? []).length;
  assert.ok(pages >= 5, `a multi-page PDF, got ${pages} pages`);
  await page.close();
});

test('a right-to-left override in a transcript\'s project path shows as ? in the charts\' labels and tooltips, as on the page', async () => {
  const cwd = '/home/u/\u202eexe.txt\u202c';
  const session = '5e55b1d1-0000-4000-8000-000000000001';
  const root = writeCorpus({
    'projects/p/5e55b1d1-0000-4000-8000-000000000001.jsonl': [0, 1, 2].flatMap((i) => [
      userPrompt(session, `2026-02-10T18:3${i}:00.000Z`, 'go', undefined, cwd),
      assistant({ session, msg: `m${i}`, t: `2026-02-10T18:3${i}:05.000Z`, cwd, u: { in: 3, w5: 1000 * (i + 1), r: 5000 * i, out: 50 } }),
    ]),
  });
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  let data: ReportData;
  try {
    data = await buildReportData(ctx);
  } finally {
    ctx.store.close();
  }
  const url = await writeHtml('bidi.html', renderReport(data));
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  for (const c of await chartStates(page)) assert.equal(c.state, 'ok', `chart ${c.id} (${c.spec})`);
  const chartText = await page.$$eval('figure.chart svg text', (ts) => ts.map((t) => t.textContent ?? '').join('\n'));
  assert.ok(chartText.includes('/home/u/?exe.txt?'), 'the project\'s axis label, its controls as ?');
  // vega's tooltip is the chart's title attribute while a mark is hovered
  const figure = page.locator('#cost-by figure.chart').first();
  await figure.locator('svg g.role-mark path').first().hover();
  await page.waitForFunction(() => document.querySelector('#cost-by figure.chart .chart-canvas')?.getAttribute('title'));
  const tooltip = (await figure.locator('.chart-canvas').getAttribute('title')) ?? '';
  assert.match(tooltip, /^name: \/home\/u\/\?exe\.txt\?$/m);
  const text = await page.evaluate(() => document.body.innerText);
  assert.doesNotMatch(chartText + tooltip + text, /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/, 'no bidi control on the page');
  assert.deepEqual([log.consoleErrors, log.pageErrors, log.cspViolations, log.requests], [[], [], [], [url]]);
  await page.close();
});

test('without JavaScript the page still shows its numbers: the headline, every table and each chart\'s data table; with it, a drawn chart folds its table', async () => {
  const url = await writeHtml('nojs.html', renderReport(fixtureReport()));
  const page = await browser.context.newPage();
  await page.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
  await page.goto(url, { waitUntil: 'load' });
  const noJs = await page.evaluate(() => ({
    ran: document.querySelectorAll('figure.chart[data-state]').length,
    headline: (document.querySelector('[data-metric="usd"]') as HTMLElement).innerText,
    charts: [...document.querySelectorAll('figure.chart')].map((f) => ({
      spec: f.getAttribute('data-spec'),
      rows: [...(f.closest('section, article')?.querySelectorAll('table tbody tr') ?? [])].filter((r) => (r as HTMLElement).offsetHeight > 0).length,
    })),
    text: document.body.innerText,
  }));
  assert.equal(noJs.ran, 0, 'no script ran');
  // the fixture's 3 requests without a price are not in the cost: marked +?, as the sentence and summary mark it
  assert.equal(noJs.headline, '$412 +?');
  for (const c of noJs.charts) assert.ok(c.rows > 0, `${c.spec}: its numbers show in a table`);
  assert.match(noJs.text, /2026-01-05/, 'the cost-per-day table shows its days');
  assert.match(noJs.text, /JavaScript is off, so the charts are not drawn/, 'the blank charts are explained');
  await page.close();

  const { page: withJs, log } = await openRecorded(browser, url);
  await chartsSettled(withJs);
  const open = await withJs.$$eval('details.chart-data', (ds) => ds.filter((d) => (d as HTMLDetailsElement).open).length);
  assert.equal(open, 0, 'a drawn chart folds its table');
  assert.ok((await withJs.locator('details.chart-data').count()) > 0);
  await withJs.locator('details.chart-data summary').first().click();
  assert.ok(await withJs.locator('details.chart-data table').first().isVisible(), 'and opens it on a click');
  assert.deepEqual([log.consoleErrors, log.cspViolations, log.pageErrors], [[], [], []]);
  await withJs.close();
});

test('printed, no table or chart is wider than the page: paper does not scroll, so nothing is cut at the margin', async () => {
  const data = fixtureReport();
  // a wide cross-tab, as in real logs: long agent types and every column
  const ct = data.crossTab as Extract<ReportData['crossTab'], { rows: unknown }>;
  ct.rows.forEach((r, i) => (r.key = `plugin-with-a-long-name:agent-type-number-${i}`));
  const url = await writeHtml('print-width.html', renderReport(data));
  const { page } = await openRecorded(browser, url);
  await chartsSettled(page);
  await page.emulateMedia({ media: 'print' });
  // the width of A4 less Chromium's print margins; the charts keep the width they were drawn at on screen
  await page.evaluate(() => (document.body.style.width = '680px'));
  const cut = await page.evaluate(() => ({
    tables: [...document.querySelectorAll('.table-wrap')].filter((w) => w.scrollWidth > w.clientWidth + 1).map((w) => `${w.closest('section')?.id}: ${w.scrollWidth} > ${w.clientWidth}`),
    charts: [...document.querySelectorAll('figure.chart svg')].filter((s) => s.getBoundingClientRect().right > s.closest('.card')!.getBoundingClientRect().right + 1).map((s) => `${s.closest('section')?.id}: ${Math.round(s.getBoundingClientRect().width)}`),
  }));
  assert.deepEqual(cut, { tables: [], charts: [] });
  await page.close();
});

test('printed in a narrow column, a long id (a chain id, a session UUID, a replay\'s title, a skipped line\'s path) breaks only after its own separators (- : /), never inside a part that fits', async () => {
  const data = fixtureReport();
  const chains = data.topChains as TopChains;
  const session = 'fe5e0c1e-0c1e-4b7e-9a55-0f3b5c8d9e21';
  chains.chains[0] = { ...chains.chains[0]!, chainId: `${session}:side:f4ab0c3e-6f7d-4d1a-8c1b-3e2f1d0c9b88`, sessionId: session };
  const replay = data.replay as Extract<ReportData['replay'], { runs: unknown }>;
  replay.runs[1]!.title = `main chain ${session}:side:f4ab0c3e-6f7d-4d1a-8c1b-3e2f1d0c9b88 (12 requests)`;
  const dq = data.dataQuality as Extract<ReportData['dataQuality'], { files: unknown }>;
  dq.skipped[0]!.examples = [{ path: `/home/dev/.claude/projects/-home-dev-cachelens/${session}/subagents/agent-a4d8b081245edd270.jsonl`, line: 4_211 }];
  const url = await writeHtml('print-ids.html', renderReport(data));
  const { page } = await openRecorded(browser, url);
  await chartsSettled(page);
  await page.emulateMedia({ media: 'print' });
  // a column a third of the printed page's: each id needs several lines, each part (17 characters at most) fits one
  await page.evaluate(() => (document.body.style.width = '240px'));
  const { checked, cut } = await page.evaluate(() => {
    const cut: string[] = [];
    const boxes = [...document.querySelectorAll('#top-chains dd .mono, #replay h3, #data-quality .locations .mono')];
    let checked = 0;
    for (const el of boxes) {
      const chars: Array<{ ch: string; top: number; width: number }> = [];
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode() as Text | null; n; n = walker.nextNode() as Text | null) {
        for (let i = 0; i < n.data.length; i++) {
          const r = document.createRange();
          r.setStart(n, i);
          r.setEnd(n, i + 1);
          const box = r.getBoundingClientRect();
          chars.push({ ch: n.data[i]!, top: box.top, width: box.width });
        }
      }
      const text = chars.map((c) => c.ch).join('');
      if (!/[0-9a-f]{8}-[0-9a-f]{4}/.test(text)) continue;
      checked++;
      // the width a line of the id has: its block's, less its padding
      const block = el.closest('li, dd, h3')!;
      const style = getComputedStyle(block);
      const room = block.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      const separator = /[-:/\s]/;
      let lines = 1;
      for (let i = 1; i < chars.length; i++) {
        if (!(chars[i]!.top > chars[i - 1]!.top + 1)) continue;
        lines++;
        // a line may start after a separator, or after a space (the heading's words)
        if (separator.test(chars[i - 1]!.ch) || /\s/.test(chars[i]!.ch)) continue;
        // or inside a part wider than the line: it cannot fit otherwise
        let a = i - 1;
        let b = i;
        while (a > 0 && !separator.test(chars[a - 1]!.ch)) a--;
        while (b < chars.length - 1 && !separator.test(chars[b]!.ch)) b++;
        const width = chars.slice(a, b + 1).reduce((w, c) => w + c.width, 0);
        if (width <= room) cut.push(`${el.closest('section')?.id}: “${text.slice(0, i)}⏎${text.slice(i)}” (“${text.slice(a, b + 1)}” ${Math.round(width)} px, the line ${Math.round(room)} px)`);
      }
      if (lines < 2) cut.push(`${el.closest('section')?.id}: “${text}” on ${lines} line(s): the column is not narrow enough to test`);
    }
    return { checked, cut };
  });
  assert.ok(checked >= 4, `${checked} ids checked`);
  assert.deepEqual(cut, []);
  await page.close();
});

test('on a 375 px screen every chart\'s legend lies within its chart and the screen: its entries wrap into rows, from the chart\'s left edge, not the plot\'s', async () => {
  const url = await writeHtml('legends-375.html', renderReport(fixtureReport()));
  const { page } = await openRecorded(browser, url, { width: 375, height: 800 });
  await chartsSettled(page);
  const legends = await page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    return [...document.querySelectorAll('figure.chart')].flatMap((fig) => {
      const box = fig.querySelector('.chart-canvas')!.getBoundingClientRect();
      return [...fig.querySelectorAll('svg .role-legend')].map((g) => {
        const r = g.getBoundingClientRect();
        const name = `${fig.closest('section')?.id} ${fig.getAttribute('data-spec')}`;
        const out = r.left < box.left - 1 || r.right > box.right + 1 || r.right > vw ? `: ${Math.round(r.left)}–${Math.round(r.right)} outside ${Math.round(box.left)}–${Math.round(box.right)} (screen ${vw})` : '';
        return `${name}${out}`;
      });
    });
  });
  // every spec with a legend is measured
  for (const spec of ['cost-over-time', 'cost-by', 'anatomy', 'chain-rounds', 'ttl-buckets', 'keepalive', 'replay-strategies', 'replay-turns']) {
    assert.ok(legends.some((l) => l.split(':')[0]!.endsWith(` ${spec}`)), `no legend of ${spec}: ${legends.join(' | ')}`);
  }
  assert.deepEqual(legends.filter((l) => l.includes(':')), []);
  // on a wide screen a legend of five entries stays one row
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForFunction(() => {
    const g = document.querySelector('#cost-over-time svg .role-legend');
    return g !== null && g.getBoundingClientRect().height < 20;
  }, undefined, { timeout: 15_000 });
  await page.close();
});

/** Opens every chart's folded numbers: a reader may open one and print it, or scroll it on a phone. */
async function openEveryTable(page: Page): Promise<void> {
  await page.$$eval('details', (ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));
}

/**
 * Printed at the print test's width (A4 less Chromium's margins): each table as `section “caption”`,
 * those wider than their card (paper does not scroll, so their right-hand columns would be cut), and
 * the words of 11 letters or fewer a squeezed text cell split across two lines (a longer run without
 * a break may be split: it could not fit otherwise).
 */
async function tablesWhenPrinted(page: Page): Promise<{ tables: string[]; cut: string[]; split: string[] }> {
  await page.emulateMedia({ media: 'print' });
  await page.evaluate(() => (document.body.style.width = '680px'));
  return page.evaluate(() => {
    const wraps = [...document.querySelectorAll('.table-wrap')].map((w) => ({ w, name: `${w.closest('section')?.id} “${w.querySelector('caption')?.textContent ?? ''}”` }));
    const split: string[] = [];
    for (const td of document.querySelectorAll('.table-wrap td:not(.num)')) {
      const chars: Array<{ ch: string; top: number }> = [];
      const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode() as Text | null; n; n = walker.nextNode() as Text | null) {
        for (let i = 0; i < n.data.length; i++) {
          const r = document.createRange();
          r.setStart(n, i);
          r.setEnd(n, i + 1);
          chars.push({ ch: n.data[i]!, top: r.getBoundingClientRect().top });
        }
      }
      // (a regular expression, not a helper function: the test's compiler names functions with a helper the page lacks)
      const letter = /^[\p{L}\p{N}_]$/u;
      for (let i = 1; i < chars.length; i++) {
        // a line that starts between two letters (digits, underscores) cuts a word
        if (!(chars[i]!.top > chars[i - 1]!.top + 1 && letter.test(chars[i - 1]!.ch) && letter.test(chars[i]!.ch))) continue;
        let a = i - 1;
        let b = i;
        while (letter.test(chars[a - 1]?.ch ?? '')) a--;
        while (letter.test(chars[b + 1]?.ch ?? '')) b++;
        const text = chars.map((c) => c.ch).join('');
        if (b - a + 1 <= 11) split.push(`${td.closest('section')?.id}: “${text.slice(0, i)}⏎${text.slice(i)}”`);
      }
    }
    return {
      tables: wraps.map((x) => x.name),
      cut: wraps.filter(({ w }) => w.scrollWidth > w.clientWidth + 1 || w.clientWidth === 0).map(({ w, name }) => `${name}: ${w.scrollWidth} > ${w.clientWidth}`),
      split,
    };
  });
}

/**
 * On a narrow screen, what the page promises (`.table-wrap` scrolls): the page itself does not scroll
 * sideways, and each table either fits its box or scrolls inside it, the box within the screen.
 */
async function tablesOnScreen(page: Page): Promise<{ tables: number; wrong: string[]; pageWidth: string }> {
  return page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const wraps = [...document.querySelectorAll('.table-wrap')];
    const wrong = wraps.flatMap((w) => {
      const name = `${w.closest('section')?.id} “${w.querySelector('caption')?.textContent ?? ''}”`;
      const box = w.getBoundingClientRect();
      const scrolls = ['auto', 'scroll'].includes(getComputedStyle(w).overflowX);
      return [
        ...(box.left < -1 || box.right > vw + 1 ? [`${name}: its box ${Math.round(box.left)}–${Math.round(box.right)} is outside the screen's 0–${vw}`] : []),
        ...(w.scrollWidth > w.clientWidth + 1 && !scrolls ? [`${name}: ${w.scrollWidth} > ${w.clientWidth} and does not scroll`] : []),
      ];
    });
    const doc = document.documentElement;
    return { tables: wraps.length, wrong, pageWidth: doc.scrollWidth > vw + 1 ? `the page scrolls sideways: ${doc.scrollWidth} > ${vw}` : '' };
  });
}

const SAMPLE = path.join(REPO, 'sample-logs');

for (const [name, root] of [['sample-logs', SAMPLE], ['real-logs', REAL_LOGS]] as const) {
  test(`the report of ${name} (--session top, the sample channel): every table fits the printed page, its words whole, and on a 375 px screen its box, scrolling inside it (the page does not); the session replay's +? marks and gap-unknown column too`, async () => {
    const out = path.join(dir, `${name}.html`);
    const r = cli(['report', root, '--db', ':memory:', '--timezone', 'UTC', '--out', out, '--session', 'top', '--channel', path.join(SAMPLE, 'channels/backend.jsonl')], { HOME: tempDir() });
    assert.equal(r.code, 0, r.stderr);
    const built = await readFile(out, 'utf8');
    const data = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(built)![1]!) as ReportData;
    // the widest a session replay's tables get with these numbers: a request without a price in every
    // strategy (weight and USD marked +?) and one stamped before the one before (its own column)
    const worst = structuredClone(data);
    const replay = worst.replay as Extract<ReportData['replay'], { runs: unknown }>;
    const session = replay.runs.find((run) => run.kind === 'session')!;
    assert.ok(session.strategies.every((s) => (s.requests ?? 0) >= 2), 'a session of requests to leave one unpriced');
    for (const s of session.strategies) {
      s.unpricedRequests = 1;
      s.expiredUnknownGap = 1;
      s.expiredRequests = (s.expiredRequests ?? 0) + 1;
    }
    const pages = [
      { label: 'as written', url: pathToFileURL(out).href },
      { label: 'with +? and gap unknown', url: await writeHtml(`${name}-worst.html`, renderReport(worst)) },
    ];
    for (const { label, url } of pages) {
      const { page: printed } = await openRecorded(browser, url);
      await chartsSettled(printed);
      await openEveryTable(printed);
      const { tables, cut, split } = await tablesWhenPrinted(printed);
      // the tables this is about are there: the replays' per-strategy tables, the session's second table
      assert.equal(tables.filter((t) => t.startsWith('replay “Per strategy (tokens;')).length, 2, `${label}: ${tables.join(' | ')}`);
      assert.ok(tables.includes('replay “Per strategy: processes, expiry, output and cost”'), `${label}: ${tables.join(' | ')}`);
      assert.ok(tables.length >= 15, `${label}: ${tables.length} tables`);
      if (label !== 'as written') assert.match(await printed.locator('#replay').innerText(), /\+\?[\s\S]*gap unknown/, label);
      assert.deepEqual(cut, [], `${name}, ${label}, printed`);
      assert.deepEqual(split, [], `${name}, ${label}, printed: a word cut in two`);
      await printed.close();

      const { page: phone } = await openRecorded(browser, url, { width: 375, height: 800 });
      await chartsSettled(phone);
      await openEveryTable(phone);
      const screen = await tablesOnScreen(phone);
      assert.equal(screen.tables, tables.length);
      assert.deepEqual([screen.pageWidth, screen.wrong], ['', []], `${name}, ${label}, 375 px screen`);
      await phone.close();
    }
  });
}

test('time axes label each tick once and with its year: two days are not "Feb 10, Feb 10, Feb 11", and a year apart, July is not July', async () => {
  const data = fixtureReport();
  data.costOverTime = {
    rows: ['2026-02-10', '2026-02-11'].flatMap((day) => [
      { day, component: 'output' as const, usd: 2, weight: 40_000, tokens: 1_000 },
      { day, component: 'read' as const, usd: 1, weight: 20_000, tokens: 60_000 },
    ]),
  };
  const block = (start: number) => ({ start, end: start + 5 * 3_600_000, usd: 3, weight: 60_000, requests: 9, tokens: 61_000 });
  data.blocks = { blocks: [block(Date.UTC(2025, 6, 1, 10)), block(Date.UTC(2025, 11, 3, 8)), block(Date.UTC(2026, 6, 1, 10))] };
  const url = await writeHtml('axes.html', renderReport(data));
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  const labels = (spec: string) =>
    page.$$eval(`figure.chart[data-spec="${spec}"] svg .role-axis`, (axes) =>
      axes
        .filter((a) => (a.getAttribute('aria-label') ?? '').startsWith('X-axis'))
        .flatMap((a) => [...a.querySelectorAll('.role-axis-label text')].map((t) => t.textContent ?? ''))
        .filter((t) => t !== ''),
    );
  const days = await labels('cost-over-time');
  assert.ok(days.length >= 2, days.join(' | '));
  assert.equal(new Set(days).size, days.length, `each day labelled once: ${days.join(' | ')}`);
  assert.ok(days.every((d) => /^Feb 1\d, 2026$/.test(d)), days.join(' | '));
  const months = await labels('blocks');
  assert.equal(new Set(months).size, months.length, `each tick labelled once: ${months.join(' | ')}`);
  assert.ok(months.some((m) => m.endsWith('2025')) && months.some((m) => m.endsWith('2026')), months.join(' | '));
  assert.deepEqual([log.consoleErrors, log.cspViolations, log.pageErrors], [[], [], []]);
  await page.close();
});

test('USD axes of a report that cost under a cent label each tick once, with the digits that tell them apart (not $0 $0 $0)', async () => {
  const data = fixtureReport();
  const tiny = <T extends { usd: number | null }>(r: T): T => ({ ...r, usd: r.usd === null ? null : r.usd / 100_000 });
  data.costOverTime = { ...(data.costOverTime as CostOverTime), rows: (data.costOverTime as CostOverTime).rows.map(tiny) };
  const cb = data.costBy as Extract<ReportData['costBy'], { rows: unknown }>;
  data.costBy = { ...cb, rows: cb.rows.map(tiny) };
  data.blocks = { blocks: [0, 1, 2].map((i) => ({ start: Date.UTC(2026, 1, 10, 5 * i), end: Date.UTC(2026, 1, 10, 5 * i + 5), usd: 0.0012 * (i + 1), weight: 400, requests: 1, tokens: 1 })) };
  const url = await writeHtml('tiny-usd.html', renderReport(data));
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  for (const spec of ['cost-over-time', 'cost-by', 'blocks']) {
    const usdLabels = await page.$$eval(`figure.chart[data-spec="${spec}"] svg .role-axis`, (axes) =>
      axes
        .filter((a) => [...a.querySelectorAll('.role-axis-label text')].some((t) => (t.textContent ?? '').startsWith('$')))
        .map((a) => [...a.querySelectorAll('.role-axis-label text')].map((t) => t.textContent ?? '').filter((t) => t !== '')),
    );
    assert.ok(usdLabels.length > 0, `${spec} has a USD axis`);
    for (const l of usdLabels) {
      assert.ok(l.length >= 2, `${spec}: ${l.join(' | ')}`);
      assert.equal(new Set(l).size, l.length, `${spec}: each USD tick labelled once: ${l.join(' | ')}`);
    }
  }
  assert.deepEqual([log.consoleErrors, log.cspViolations, log.pageErrors], [[], [], []]);
  await page.close();
});

test('hour ticks of the blocks axis say which day: the first tick carries its date, so a span of two days without a midnight label still has one', async () => {
  const data = fixtureReport();
  // five blocks from 09:00 one day to 13:00 the next, as sample-logs: hourly ticks, every other label dropped, midnight's among them
  const block = (h: number, usd: number) => ({ start: Date.UTC(2026, 1, 10, h), end: Date.UTC(2026, 1, 10, h + 5), usd, weight: 1, requests: 9, tokens: 1 });
  data.blocks = { blocks: [block(9, 22), block(15, 10), block(21, 2), block(27, 6), block(32, 2)] };
  const url = await writeHtml('block-days.html', renderReport(data));
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  const labels = await page.$$eval('figure.chart[data-spec="blocks"] svg .role-axis', (axes) =>
    axes
      .filter((a) => (a.getAttribute('aria-label') ?? '').startsWith('X-axis'))
      .flatMap((a) => [...a.querySelectorAll('.role-axis-label text')].filter((t) => (t as SVGTextElement).style.opacity !== '0' && t.getAttribute('opacity') !== '0').map((t) => t.textContent ?? ''))
      .filter((t) => t !== ''),
  );
  assert.ok(labels.some((l) => /^Feb 1[01], 2026/.test(l)), `a label names the day: ${labels.join(' | ')}`);
  assert.deepEqual([log.consoleErrors, log.cspViolations, log.pageErrors], [[], [], []]);
  await page.close();
});

test('long project paths that share their folders keep the part that tells them apart on the cost-by axis', async () => {
  const data = fixtureReport();
  const cb = data.costBy as Extract<ReportData['costBy'], { rows: unknown }>;
  const prefix = '/home/someone/projects/spotter-worktrees/';
  const tails = new Map([['/home/dev/marot-spotter', 'spotter-fum'], ['/home/dev/cachelens', 'spotter-rewrite-cache'], ['/home/dev/notes', 'notes']]);
  for (const r of cb.rows) if (r.dimension === 'project' && r.key !== null && tails.has(r.key)) r.key = prefix + tails.get(r.key);
  const url = await writeHtml('long-keys.html', renderReport(data));
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  const labels = await page.$$eval('#cost-by figure.chart', (figs) =>
    [...figs[0]!.querySelectorAll('svg .role-axis')]
      .filter((a) => (a.getAttribute('aria-label') ?? '').startsWith('Y-axis'))
      .flatMap((a) => [...a.querySelectorAll('.role-axis-label text')].map((t) => t.textContent ?? '')),
  );
  for (const tail of tails.values()) assert.ok(labels.some((l) => l.endsWith(tail)), `a label ends with ${tail}: ${labels.join(' | ')}`);
  assert.equal(new Set(labels).size, labels.length, labels.join(' | '));
  assert.deepEqual([log.consoleErrors, log.cspViolations, log.pageErrors], [[], [], []]);
  await page.close();
});

test('long project paths with the same ending get an axis label each on the cost-by chart, and the tooltip names the path', async () => {
  const data = fixtureReport();
  const cb = data.costBy as Extract<ReportData['costBy'], { rows: unknown }>;
  const tail = '/src/worktrees/cachelens-report-numbers';
  const keys = new Map([['/home/dev/marot-spotter', `/home/alice${tail}`], ['/home/dev/cachelens', `/home/bob${tail}`]]);
  for (const r of cb.rows) if (r.dimension === 'project' && r.key !== null && keys.has(r.key)) r.key = keys.get(r.key)!;
  const url = await writeHtml('same-ending.html', renderReport(data));
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  const figure = page.locator('#cost-by figure.chart').first();
  const labels = await figure.evaluate((fig) =>
    [...fig.querySelectorAll('svg .role-axis')]
      .filter((a) => (a.getAttribute('aria-label') ?? '').startsWith('Y-axis'))
      .flatMap((a) => [...a.querySelectorAll('.role-axis-label text')].map((t) => t.textContent ?? '')),
  );
  assert.equal(labels.length, 3, labels.join(' | '));
  assert.equal(new Set(labels).size, 3, labels.join(' | '));
  assert.ok(labels.some((l) => l.startsWith('…alice…')) && labels.some((l) => l.startsWith('…bob…')), labels.join(' | '));
  await figure.locator('svg g.role-mark path').first().hover();
  await page.waitForFunction(() => document.querySelector('#cost-by figure.chart .chart-canvas')?.getAttribute('title'));
  const tooltip = (await figure.locator('.chart-canvas').getAttribute('title')) ?? '';
  assert.match(tooltip, new RegExp(`^name: /home/(alice|bob)${tail}$`, 'm'));
  assert.deepEqual([log.consoleErrors, log.cspViolations, log.pageErrors], [[], [], []]);
  await page.close();
});

test('each chart\'s data table is named after its chart for a screen reader, and keyboard focus shows on its toggle and on the sort buttons', async () => {
  const url = await writeHtml('focus.html', renderReport(fixtureReport()));
  const { page } = await openRecorded(browser, url);
  await chartsSettled(page);
  const names = await page.$$eval('details.chart-data summary', (ss) => ss.map((s) => s.textContent ?? ''));
  assert.ok(names.length >= 8);
  assert.equal(new Set(names).size, names.length, `each toggle is named apart: ${names.join(' | ')}`);
  const hidden = await page.$eval('details.chart-data summary .visually-hidden', (s) => s.getBoundingClientRect().width);
  assert.ok(hidden <= 1, 'the name is read, not shown');
  for (const selector of ['details.chart-data summary', 'table.sortable th button']) {
    await page.locator(selector).first().focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    assert.notEqual(outline, 'none', `${selector}: focus shows`);
  }
  await page.close();
});

test('an unknown cost (a model without a price) sorts after every dollar amount, ascending and descending', async () => {
  const f = fixtureReport();
  const cb = f.costBy as Extract<ReportData['costBy'], { rows: unknown }>;
  const rows = [...cb.rows, { dimension: 'model' as const, key: 'claude-mystery-9', groups: 1, component: 'read' as const, usd: null, weight: null }];
  const url = await writeHtml('sort-unknown-usd.html', renderReport({ ...f, costBy: { rows } }));
  const { page } = await openRecorded(browser, url);
  const table = '#cost-by .subchart:has(h3:text-is("By model")) table';
  const keys = () => page.$$eval(`${table} tbody tr`, (trs) => trs.map((r) => (r as HTMLTableRowElement).cells[0]!.textContent));
  // the table sits in the chart's data toggle, closed once the chart is drawn
  await page.$$eval('#cost-by details.chart-data', (ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));
  assert.ok((await keys()).includes('claude-mystery-9'), 'the unpriced model has a row');
  for (const order of ['descending', 'ascending']) {
    await page.click(`${table} thead th:nth-child(2) button`);
    assert.equal(await page.getAttribute(`${table} thead th:nth-child(2)`, 'aria-sort'), order);
    const k = await keys();
    assert.equal(k[k.length - 1], 'claude-mystery-9', `${order}: ${k.join(', ')}`);
  }
  await page.close();
});

test('the 5-hour blocks\' time axis over a year of sparse blocks: no two date labels overlap and none is cut at the chart\'s edge, at any page width', async () => {
  // the real logs' blocks: June 2025 to July 2026; "Feb 01, 2026Mar 01, 2026" ran together and "Jul 01, 20" was cut
  const data = fixtureReport();
  const block = (start: number, usd: number) => ({ start, end: start + 5 * 3_600_000, usd, weight: usd * 2e5, requests: 9, tokens: 61_000 });
  data.blocks = { blocks: [Date.UTC(2025, 5, 8, 11), Date.UTC(2025, 8, 3, 0), Date.UTC(2026, 0, 25, 10), Date.UTC(2026, 1, 11, 21), Date.UTC(2026, 1, 12, 14), Date.UTC(2026, 6, 5, 10)].map((t, i) => block(t, i + 1)) };
  const url = await writeHtml('blocks-year.html', renderReport(data));
  for (const width of [1280, 1000, 800]) {
    const { page, log } = await openRecorded(browser, url, { width, height: 900 });
    await chartsSettled(page);
    const { svg, labels } = await page.$eval('figure.chart[data-spec="blocks"] svg', (s) => {
      const box = s.getBoundingClientRect();
      const axis = [...s.querySelectorAll('.role-axis')].find((a) => (a.getAttribute('aria-label') ?? '').startsWith('X-axis'))!;
      const shown = [...axis.querySelectorAll('.role-axis-label text')].filter((t) => t.textContent && t.getAttribute('opacity') !== '0' && getComputedStyle(t).opacity !== '0');
      return { svg: [box.left, box.right], labels: shown.map((t) => ({ text: t.textContent!, left: t.getBoundingClientRect().left, right: t.getBoundingClientRect().right })).sort((a, b) => a.left - b.left) };
    });
    assert.ok(labels.length >= 3, `${width}: ${labels.map((l) => l.text).join(' | ')}`);
    for (const [i, l] of labels.entries()) {
      assert.ok(l.left >= svg[0]! - 1 && l.right <= svg[1]! + 1, `${width}: “${l.text}” (${Math.round(l.left)}–${Math.round(l.right)}) beyond the chart (${Math.round(svg[0]!)}–${Math.round(svg[1]!)})`);
      if (i > 0) assert.ok(l.left > labels[i - 1]!.right, `${width}: “${labels[i - 1]!.text}” and “${l.text}” overlap or touch`);
    }
    assert.deepEqual([log.consoleErrors, log.cspViolations, log.pageErrors], [[], [], []]);
    await page.close();
  }
});
