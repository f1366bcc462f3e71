/**
 * docs/report.png: the report of the test fixture (test/report/fixtures.ts), as Debian's chromium
 * draws it headless at 1100 × 1408.
 *
 *   npx tsx scripts/report-png.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderReport } from '../src/report/render.js';
import { fixtureReport } from '../test/report/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'cachelens-png-'));
try {
  const page = join(dir, 'report.html');
  writeFileSync(page, renderReport(fixtureReport()));
  execFileSync('chromium', [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', `--user-data-dir=${join(dir, 'profile')}`, '--hide-scrollbars',
    '--virtual-time-budget=5000', '--window-size=1100,1408', `--screenshot=${join(process.cwd(), 'docs', 'report.png')}`,
    pathToFileURL(page).href,
  ], { stdio: 'inherit' });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
