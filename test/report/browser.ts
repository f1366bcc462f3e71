/**
 * Debian's Chromium driven by playwright-core, for the report's browser tests. No browser is
 * downloaded: a missing /usr/bin/chromium fails the tests with the line that installs it.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { tempDir } from '../helpers/temp.js';

export const CHROMIUM = '/usr/bin/chromium';

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** `timezoneId`: the browser's own zone (the machine's when not given), to show a page does not read times in it. */
export async function launchChromium(options: { timezoneId?: string } = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the report's browser tests need Debian's Chromium (apt-get update && apt-get install -y chromium)`);
  }
  // removed on close, or when the test file ends if it never closed (a failed launch, a test that threw)
  const userDataDir = tempDir('cachelens-chromium-');
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    viewport: { width: 1280, height: 900 },
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** What a page did while loading: every request, console error, uncaught error and dialog. */
export interface PageLog {
  requests: string[];
  consoleErrors: string[];
  /** securitypolicyviolation events: `directive blocked-uri` */
  cspViolations: string[];
  pageErrors: string[];
  dialogs: string[];
}

/**
 * Opens `url` in a new page, recording everything; any request other than `url` itself is
 * aborted (and recorded), so a leak fails the test instead of touching the network.
 */
export async function openRecorded(browser: Browser, url: string, viewport?: { width: number; height: number }): Promise<{ page: Page; log: PageLog }> {
  const log: PageLog = { requests: [], consoleErrors: [], cspViolations: [], pageErrors: [], dialogs: [] };
  const page = await browser.context.newPage();
  // laid out and its charts drawn at this size from the start, as on a phone: resized after the load,
  // the charts were redrawn at the new width some time later, and a test under load measured the page
  // before that (its 375 px screen scrolled sideways, 1121 > 375, the charts still at the first width)
  if (viewport) await page.setViewportSize(viewport);
  await page.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
  page.on('request', (r) => log.requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') log.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => log.pageErrors.push(String(e)));
  await page.exposeFunction('__cspViolation', (v: string) => log.cspViolations.push(v));
  // Init scripts run outside the page's CSP, so this listener sees every violation.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __cspViolation(v: string): void }).__cspViolation(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  page.on('dialog', (d) => {
    log.dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  await page.goto(url, { waitUntil: 'load' });
  return { page, log };
}

/** Waits until every chart figure has settled (drawn or turned into an error card). */
export async function chartsSettled(page: Page): Promise<void> {
  await page.waitForFunction(
    () => [...document.querySelectorAll('figure.chart')].every((f) => f.hasAttribute('data-state')),
    undefined,
    { timeout: 15_000 },
  );
}

/**
 * Per chart: its id, state and the number of visible mark items: shapes inside vega's role-mark
 * groups with a drawn extent (rects need width and height; lines and text need either), so a
 * chart whose bars all collapsed to nothing counts 0.
 */
export async function chartStates(page: Page): Promise<Array<{ id: string; spec: string; state: string; marks: number }>> {
  return page.$$eval('figure.chart', (figs) =>
    figs.map((f) => ({
      id: f.getAttribute('data-chart') ?? '',
      spec: f.getAttribute('data-spec') ?? '',
      state: f.getAttribute('data-state') ?? '',
      marks: [...f.querySelectorAll('svg g.role-mark')].reduce((n, g) => {
        const area = /\bmark-(rect|area|arc)\b/.test(g.getAttribute('class') ?? '');
        return n + [...g.querySelectorAll('path, line, rect, text, circle')].filter((el) => {
          const b = (el as SVGGraphicsElement).getBBox();
          return area ? b.width > 0 && b.height > 0 : b.width > 0 || b.height > 0;
        }).length;
      }, 0),
    })),
  );
}
