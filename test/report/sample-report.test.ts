/**
 * The report as a user gets it: `cachelens report` over the sample corpus (and over a corpus of
 * hostile transcript text) loaded from file:// in Debian's Chromium. No console errors, no
 * network requests, every chart drawn with marks, the headline equal to `summary --json`; and
 * nothing from a transcript executes.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { REPO, assistant, cli, summaryJson, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { type Browser, chartStates, chartsSettled, launchChromium, openRecorded } from './browser.js';
import { keepingTemp } from '../helpers/temp.js';

const SAMPLE = join(REPO, 'sample-logs');
let browser: Browser;

before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

function report(paths: string[], extra: string[] = []): string {
  const out = join(tempDir('cachelens-report-'), 'report.html');
  const r = cli(['report', ...paths, '--db', ':memory:', '--timezone', 'UTC', '--out', out, ...extra]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /wrote .*report\.html/);
  return out;
}

test('the sample report loads offline, draws every chart, and its headline equals summary --json', async () => {
  const file = report([SAMPLE], ['--channel', join(SAMPLE, 'channels/backend.jsonl'), '--session', 'top']);
  const url = pathToFileURL(file).href;
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  assert.deepEqual(log.consoleErrors, []);
  assert.deepEqual(log.pageErrors, []);
  assert.deepEqual(log.cspViolations, []);
  assert.deepEqual(log.requests, [url], 'the page itself is the only request');
  const charts = await chartStates(page);
  assert.ok(charts.length >= 12, `${charts.length} charts`);
  for (const c of charts) {
    assert.equal(c.state, 'ok', `${c.id} (${c.spec})`);
    assert.ok(c.marks > 0, `${c.id} (${c.spec}) has marks`);
  }
  assert.equal(await page.locator('.error-card, [data-error]').count(), 0, 'no section failed');
  const data = JSON.parse((await page.locator('#cachelens-data').textContent()) ?? '{}');
  assert.deepEqual(data.replay.runs.map((r: { kind: string; strategies: unknown[] }) => [r.kind, r.strategies.length]), [['channel', 3], ['session', 5]]);
  const metric = async (name: string) => Number(await page.locator(`[data-metric="${name}"]`).first().getAttribute('data-value'));
  const s = summaryJson([SAMPLE]);
  assert.ok(Math.abs((await metric('usd')) - s.totals.usd) < 1e-9, 'headline USD');
  assert.ok(Math.abs((await metric('weight')) - s.totals.weight) < 1e-6, 'headline weight');
  // to look at by eye: kept (and its place printed) with CACHELENS_KEEP_TEST_TMP=1, removed with the file's temp dirs otherwise
  const shot = join(tempDir('cachelens-report-shots-'), 'sample-desktop.png');
  await page.screenshot({ path: shot, fullPage: true });
  if (keepingTemp) console.log(`# screenshot in ${shot}`);
  await page.close();
});

test('hostile transcript text reaches the report as text: nothing executes, it shows literally', async () => {
  const S = '22222222-2222-4222-8222-222222222222';
  const payloads = [
    '<script>window.__xss=1</script>',
    '</script><script>window.__xss=2</script>',
    '<img src=x onerror="window.__xss=3">',
    'javascript:window.__xss=4',
    '\u2028<!--<script>window.__xss=5</script>',
  ];
  const root = tempDir('cachelens-xss-');
  writeCorpus(
    {
      [`projects/-evil/${S}.jsonl`]: [
        userPrompt(S, '2026-02-01T10:00:00.000Z', 'go', undefined, payloads[0]),
        { ...assistant({ session: S, msg: 'msg_e1', t: '2026-02-01T10:00:01.000Z', model: payloads[2], u: { in: 5, out: 5, w5: 2000 }, cwd: payloads[0] }) },
        assistant({ session: S, msg: 'msg_e2', t: '2026-02-01T10:00:02.000Z', u: { in: 5, out: 5, r: 2000, w5: 500 }, cwd: payloads[0] }),
        {
          type: 'attachment', sessionId: S, timestamp: '2026-02-01T10:00:03.000Z', cwd: payloads[0],
          attachment: { type: payloads[4], content: payloads.join(' ') },
        },
        {
          type: 'assistant', sessionId: S, timestamp: '2026-02-01T10:00:04.000Z', cwd: payloads[0], requestId: 'req_spawn',
          message: { id: 'msg_spawn', model: 'claude-opus-4-6', usage: { input_tokens: 1, output_tokens: 1 }, content: [{ type: 'tool_use', id: 'toolu_x', name: 'Task', input: { subagent_type: payloads[1], prompt: 'p' } }] },
        },
      ],
      [`projects/-evil/${S}/subagents/agent-a1.jsonl`]: [
        userPrompt(S, '2026-02-01T10:00:05.000Z', 'sub', 'a1', payloads[0]),
        assistant({ session: S, msg: 'msg_e3', t: '2026-02-01T10:00:06.000Z', u: { in: 5, out: 5, w5: 900 }, agentId: 'a1', cwd: payloads[0] }),
      ],
      [`projects/-evil/${S}/subagents/agent-a1.meta.json`]: JSON.stringify({ agentType: payloads[3], toolUseId: 'toolu_x' }),
    },
    root,
  );
  const url = pathToFileURL(report([root])).href;
  const { page, log } = await openRecorded(browser, url);
  await chartsSettled(page);
  assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
  assert.deepEqual(log.dialogs, []);
  assert.deepEqual(log.requests, [url]);
  assert.equal(await page.locator('img').count(), 0, 'no <img> element was injected');
  const text = await page.evaluate(() => document.body.innerText + [...document.querySelectorAll('svg text')].map((t) => t.textContent).join(' '));
  for (const p of [payloads[0], payloads[2], payloads[3]]) assert.ok(text.includes(p), `shows literally: ${p}`);
  await page.close();
});
