/**
 * A report made with `--timezone America/New_York` over a night the clocks went forward, in a
 * Chromium whose own zone is Asia/Tokyo: the page names the report's zone, its tables and tooltips
 * give times in that zone (never UTC's, never the browser's), the charts draw, and the 5-hour block
 * across the change is drawn as wide as the one after it. One browser launch, of its own, for the
 * browser's zone.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chartsSettled, chartStates, launchChromium, openRecorded, type Browser } from './browser.js';
import { assistant, cli, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';

const ZONE = 'America/New_York';
let browser: Browser;

before(async () => {
  browser = await launchChromium({ timezoneId: 'Asia/Tokyo' });
});

after(async () => {
  await browser?.close();
});

test('a report in America/New_York across the spring change, in a browser in Asia/Tokyo: the zone named, tables, period, days and tooltips in New York time, every chart drawn, both blocks 5 hours wide', async () => {
  const session = '70e70e70-0000-4000-8000-000000000001';
  // 23:30 EST on the 7th (04:30 UTC on the 8th) and 04:10 EDT: one block 23:00 EST – 05:00 EDT (04:00–09:00 UTC,
  // 6 hours on the wall clock); 11:20 EDT: the next, 11:00–16:00 EDT
  const times = ['2026-03-08T04:30:00.000Z', '2026-03-08T08:10:00.000Z', '2026-03-08T15:20:00.000Z'];
  const root = writeCorpus({
    [`projects/p/${session}.jsonl`]: times.flatMap((t, i) => [
      userPrompt(session, t, 'go'),
      assistant({ session, msg: `m${i}`, t: t.replace(':00.000Z', ':05.000Z'), u: { in: 3, w5: 1000 * (i + 1), r: 5000 * i, out: 50 } }),
    ]),
  });
  const out = path.join(tempDir(), 'report.html');
  const r = cli(['report', root, '--db', ':memory:', '--timezone', ZONE, '--out', out], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const url = pathToFileURL(out).href;
  assert.ok(readFileSync(out, 'utf8').includes(ZONE));

  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  for (const c of await chartStates(page)) {
    assert.equal(c.state, 'ok', `chart ${c.id} (${c.spec})`);
    assert.ok(c.marks > 0, `chart ${c.id} (${c.spec}) drew no marks`);
  }
  assert.deepEqual([log.consoleErrors, log.cspViolations, log.pageErrors, log.requests], [[], [], [], [url]]);

  // the period under the title, and the footer, in the zone
  const text = await page.evaluate(() => document.body.innerText);
  assert.match(text, /2026-03-07 23:30 America\/New_York – 2026-03-08 11:20 America\/New_York/);
  assert.match(await page.$eval('footer', (f) => f.textContent ?? ''), /all times in America\/New_York/);
  assert.doesNotMatch(text, /Asia\/Tokyo|\bUTC\b/, 'no time in the browser\'s zone or in UTC');

  // the blocks table: starts and ends on New York's wall clock
  const blockRows = await page.$$eval('#blocks table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)));
  assert.deepEqual(blockRows, [['2026-03-07 23:00', '2026-03-08 05:00'], ['2026-03-08 11:00', '2026-03-08 16:00']]);
  // cost over time: New York's days (in UTC, or in Tokyo, all three were on the 8th)
  const days = await page.$$eval('#cost-over-time table tbody tr', (trs) => trs.map((tr) => tr.querySelector('td')?.textContent));
  assert.deepEqual(days, ['2026-03-07', '2026-03-08']);

  // the blocks' bars: as wide as each other, 5 hours each, though the first spans 6 on the wall clock
  const blocks = page.locator('#blocks figure.chart svg g.role-mark path');
  const widths = await blocks.evaluateAll((ps) => ps.map((p) => (p as SVGGraphicsElement).getBBox().width));
  assert.equal(widths.length, 2);
  assert.ok(Math.abs(widths[0]! - widths[1]!) < 1, `bar widths ${widths.join(', ')}`);

  // tooltips (vega's: the chart's title attribute while a mark is hovered) give New York's times
  const tooltip = async (section: string, nth: number) => {
    const canvas = page.locator(`#${section} figure.chart .chart-canvas`).first();
    await page.mouse.move(0, 0);
    // forced: a day's thin bar lies under its stack's next one, of the same day
    await page.locator(`#${section} figure.chart svg g.role-mark path`).nth(nth).hover({ force: true });
    await page.waitForFunction((s) => document.querySelector(`#${s} figure.chart .chart-canvas`)?.getAttribute('title'), section);
    return (await canvas.getAttribute('title')) ?? '';
  };
  const first = await tooltip('blocks', 0);
  assert.match(first, /^start: 2026-03-07 23:00 America\/New_York$/m);
  assert.match(first, /^end: 2026-03-08 05:00 America\/New_York \(the clocks went forward 1 hour: 5 hours, 6 on the wall clock\)$/m);
  assert.match(await tooltip('blocks', 1), /^end: 2026-03-08 16:00 America\/New_York$/m);
  // the first bar of cost over time is New York's 7th (UTC's and Tokyo's 8th)
  assert.match(await tooltip('cost-over-time', 0), /^day: Mar 0?7, 2026$/m);

  // the blocks' axis: ticks on New York's wall clock; its first label carries the date of the 7th
  const labels = await page.$$eval('#blocks figure.chart svg .role-axis', (axes) =>
    axes
      .filter((a) => (a.getAttribute('aria-label') ?? '').startsWith('X-axis'))
      .flatMap((a) => [...a.querySelectorAll('.role-axis-label text')].map((t) => t.textContent ?? ''))
      .filter((t) => t !== ''),
  );
  assert.match(labels[0] ?? '', /^Mar 07, 2026 2\d:00$/, labels.join(' | '));
  await page.close();
});

for (const c of [
  // the spring change in New York: 02:00 EST became 03:00 EDT at 07:00 UTC on 2026-03-08
  { zone: 'America/New_York', change: 'spring', times: ['2026-03-08T04:30:00.000Z', '2026-03-08T09:10:00.000Z', '2026-03-08T14:20:00.000Z'], starts: ['2026-03-07 23:00', '2026-03-08 05:00', '2026-03-08 10:00'] },
  // the autumn change in Berlin: 03:00 CEST became 02:00 CET at 01:00 UTC on 2026-10-25
  { zone: 'Europe/Berlin', change: 'autumn', times: ['2026-10-24T21:30:00.000Z', '2026-10-25T02:10:00.000Z', '2026-10-25T07:20:00.000Z'], starts: ['2026-10-24 23:00', '2026-10-25 03:00', '2026-10-25 08:00'] },
]) {
  test(`blocks that follow each other across the ${c.change} change of the clocks (${c.zone}) touch on the chart: no overlap, no gap, each 5 hours wide, the axis labelled on the zone's clocks`, async () => {
    const session = '70e70e70-0000-4000-8000-000000000002';
    const root = writeCorpus({
      [`projects/p/${session}.jsonl`]: c.times.flatMap((t, i) => [
        userPrompt(session, t, 'go'),
        assistant({ session, msg: `m${i}`, t: t.replace(':00.000Z', ':05.000Z'), u: { in: 3, w5: 1000 * (i + 1), r: 5000 * i, out: 50 } }),
      ]),
    });
    const out = path.join(tempDir(), 'report.html');
    const r = cli(['report', root, '--db', ':memory:', '--timezone', c.zone, '--out', out], { HOME: tempDir() });
    assert.equal(r.code, 0, r.stderr);
    const url = pathToFileURL(out).href;
    const { page, log } = await openRecorded(browser, url);
    await chartsSettled(page);
    assert.deepEqual([log.consoleErrors, log.pageErrors], [[], []]);
    const blocksChart = (await chartStates(page)).find((s) => s.spec === 'blocks');
    assert.equal(blocksChart?.state, 'ok');

    const starts = await page.$$eval('#blocks table tbody tr', (trs) => trs.map((tr) => tr.querySelector('td')?.textContent));
    assert.deepEqual(starts, c.starts, 'three blocks, each starting where the one before ended');
    // the bars in the order of their blocks: each ends where the next begins, all as wide
    const bars = await page.locator('#blocks figure.chart svg g.role-mark path').evaluateAll((ps) =>
      ps.map((p) => (p as SVGGraphicsElement).getBoundingClientRect()).map((b) => ({ left: b.left, right: b.right })).sort((a, b) => a.left - b.left),
    );
    assert.equal(bars.length, 3);
    const widths = bars.map((b) => b.right - b.left);
    for (const w of widths) assert.ok(Math.abs(w - widths[0]!) < 1, `bar widths ${widths.join(', ')}`);
    for (let i = 1; i < bars.length; i++) {
      const between = bars[i]!.left - bars[i - 1]!.right;
      assert.ok(Math.abs(between) < 1, `bars ${i} and ${i + 1}: ${between > 0 ? `a gap of ${between} px` : `an overlap of ${-between} px`} (widths ${widths.join(', ')})`);
    }
    // the axis reads the zone's clocks: the first label carries the date of the first block's start there
    const labels = await page.$$eval('#blocks figure.chart svg .role-axis', (axes) =>
      axes
        .filter((a) => (a.getAttribute('aria-label') ?? '').startsWith('X-axis'))
        .flatMap((a) => [...a.querySelectorAll('.role-axis-label text')].map((t) => t.textContent ?? ''))
        .filter((t) => t !== ''),
    );
    const [day, hour] = c.starts[0]!.split(' ');
    const date = new Date(`${day}T00:00:00Z`).toLocaleDateString('en-US', { timeZone: 'UTC', month: 'short', day: '2-digit', year: 'numeric' });
    assert.match(labels[0] ?? '', new RegExp(`^${date} (${hour!.slice(0, 2)}|2[0-3]):\\d\\d$`), labels.join(' | '));
    await page.close();
  });
}
