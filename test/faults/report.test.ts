/**
 * The store-to-report path under hostile input (SPEC §7, §8): a log tree whose directory and file
 * names, models, agent types, line types, prompt text and bad usage values carry the report
 * issue's payload corpus goes through `cachelens report` (ingest → store → analyses → HTML) and
 * is opened in Chromium. Nothing runs, nothing is loaded but the page, no CSP violation fires,
 * the payloads show literally — in the data-quality panel's skip locations too — and that panel
 * reports exactly the skips `summary --json` reports.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chartsSettled, launchChromium, openRecorded } from '../report/browser.js';
import { PAYLOADS } from '../report/fixtures.js';
import { faultTree, removeDir, runCli, summary, tempDir } from './helpers.js';

let browser: Browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

/** Payloads that can also be a file or directory name (no "/"). */
const NAMEABLE = PAYLOADS.filter((p) => !p.includes('/'));

test('payloads in log names, models, types and text reach the report as inert text, data-quality panel included', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  assert.ok(NAMEABLE.length >= 2);
  const names = { project: `-evil-${NAMEABLE[0]}`, file: NAMEABLE[1], model: PAYLOADS[0], text: PAYLOADS.join(' '), lineType: PAYLOADS[1] };
  const logs = faultTree(path.join(dir, 'logs'), names);
  const out = path.join(dir, 'report.html');
  const ran = await runCli(['report', logs, '--db', path.join(dir, 's.duckdb'), '--out', out, '--session', 'top'], { noNetwork: true });
  assert.equal(ran.code, 0, ran.stderr);
  assert.deepEqual(ran.netAttempts, []);
  const source = readFileSync(out, 'utf8');
  for (const p of PAYLOADS.filter((x) => x.includes('<'))) assert.ok(!source.includes(p.replace(/[\u2028\u2029]/g, '')), `raw markup of a payload in the HTML source: ${p}`);

  const url = pathToFileURL(out).href;
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  const state = await page.evaluate(() => ({
    xss: (window as unknown as { __xss?: unknown }).__xss,
    imgs: document.images.length,
    stray: document.querySelectorAll('main script, main iframe, main object, main embed, a[href^="javascript"], [onerror], [onload]').length,
    quality: document.getElementById('data-quality')?.textContent ?? document.body.textContent ?? '',
    text: document.body.innerText,
    data: JSON.parse(document.getElementById('cachelens-data')!.textContent!) as { dataQuality?: { skipped: { reason: string; count: number; examples: { path: string }[] }[]; unknownModels: { model: string }[] } },
  }));
  await page.close();
  assert.equal(state.xss, undefined, 'a payload ran');
  assert.deepEqual(log.dialogs, []);
  assert.deepEqual(log.pageErrors, []);
  assert.deepEqual(log.cspViolations, []);
  assert.deepEqual(log.requests, [url], 'only the page itself is loaded');
  assert.equal(state.imgs, 0);
  assert.equal(state.stray, 0);
  for (const p of NAMEABLE.slice(0, 2)) assert.ok(state.quality.includes(p), `a skip location shows ${JSON.stringify(p)} literally`);
  assert.ok(state.text.includes(PAYLOADS[0]), 'the unpriced model shows literally');

  const s = await summary([logs], path.join(dir, 'check.duckdb'));
  const dq = state.data.dataQuality!;
  assert.deepEqual(
    dq.skipped.map((g) => `${g.reason} ${g.count}`).sort(),
    s.quality.skipped.map((g) => `${g.reason} ${g.count}`).sort(),
    'the report and summary --json report the same skips',
  );
  assert.deepEqual(dq.unknownModels.map((m) => m.model), s.quality.unknown_models.map((m) => m.model));
  assert.ok(dq.skipped.some((g) => g.examples.some((e) => e.path.includes(NAMEABLE[0]))));
});
