/**
 * The HTML report: `ReportData` in, one self-contained HTML file out (SPEC §7).
 *
 *   ReportData ─▶ sections (HTML, escaped) + charts (vega spec name + rows per data set)
 *              ─▶ template.html with data JSON, compiled vega specs, vega runtime, interpreter
 *                 and page script inlined; CSP allows exactly those scripts by hash
 *
 * Nothing is fetched: the page works from file:// with the network off.
 */
import { lstatSync, renameSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { roundedJson } from '../format/json-numbers.js';
import { makeDirs, unmakeDirs } from '../store/dirs.js';
import { removeLeftParts } from '../store/location.js';
import { interpreterRuntime, reportFile, vegaRuntime } from './assets.js';
import { vegaSpec, type ChartSpecName } from './charts.js';
import { contentSecurityPolicy } from './csp.js';
import { isSectionError, type ReportData } from './data.js';
import { cleanStrings, escapeHtml, jsonForScript } from './escape.js';
import { fmtFilters, fmtTime } from './format.js';
import { html, type SafeHtml } from './html.js';
import { ChartSink, type SectionOutput } from './section.js';
import { SECTIONS } from './sections.js';

function sectionCard(id: string, title: string, out: SectionOutput): SafeHtml {
  return html`<section class="card" id="${id}" data-section="${id}">
<h2>${title}</h2>
<p class="reading">${out.reading}</p>
${out.body}
</section>`;
}

function errorCard(id: string, title: string, message: string): SafeHtml {
  return html`<section class="card error-card" id="${id}" data-section="${id}" data-state="error">
<h2>${title}</h2>
<p>This section could not be computed; the rest of the report is unaffected.</p>
<p class="error-message" role="alert">${message}</p>
</section>`;
}

/** Fills `{{name}}` placeholders in one pass, so inserted text is never scanned again. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (m, key: string) => {
    const v = values[key];
    if (v === undefined) throw new Error(`template placeholder ${m} has no value`);
    return v;
  });
}

/**
 * Inline script text must never contain `</script`; vega's build has none today, and this
 * keeps a future build from silently cutting the page in two.
 */
function assertInlineSafe(name: string, code: string): string {
  if (/<\/script|<!--/i.test(code)) throw new Error(`${name} cannot be inlined: it contains </script or <!--`);
  return code;
}

/** Renders the report. Pure apart from reading the bundled assets (cached after the first call). */
export function renderReport(data: ReportData): string {
  const charts = new ChartSink();
  const cards: SafeHtml[] = [];
  const toc: SafeHtml[] = [];
  for (const s of SECTIONS) {
    const value = data[s.key];
    if (value === undefined) continue;
    toc.push(html`<a href="#${s.id}">${s.title}</a>`);
    if (isSectionError(value)) {
      cards.push(errorCard(s.id, s.title, value.error));
      continue;
    }
    try {
      cards.push(sectionCard(s.id, s.title, s.render(value as never, charts, data)));
    } catch (err) {
      cards.push(errorCard(s.id, s.title, `report renderer failed: ${err instanceof Error ? err.message : String(err)}`));
    }
  }

  const specNames = [...new Set(charts.charts.map((c) => c.spec))];
  const specs: Partial<Record<ChartSpecName, object>> = {};
  for (const n of specNames) specs[n] = vegaSpec(n);

  const template = reportFile('template.html');
  const style = /<style>([\s\S]*?)<\/style>/.exec(template)?.[1];
  if (style === undefined) throw new Error('template.html has no <style> element');
  const vega = assertInlineSafe('vega', vegaRuntime());
  const interpreter = assertInlineSafe('vega-interpreter', interpreterRuntime());
  const client = assertInlineSafe('report.js', reportFile('client/report.js'));

  const meta = data.meta;
  const title = meta.title ?? 'cachelens report';
  // every time on the page in --timezone (meta.timezone; absent, UTC), the zone named
  const zone = meta.timezone ?? 'UTC';
  const period = meta.from !== null && meta.to !== null ? `${fmtTime(meta.from, zone)} – ${fmtTime(meta.to, zone)}` : 'no requests in scope';
  // the day of fmtTime's text, as long as its year is (past 9999, '+010000-01-01'; cut at 10 it was '+010000-01')
  const days = meta.from !== null && meta.to !== null ? [fmtTime(meta.from, zone).split(' ')[0]!, fmtTime(meta.to, zone).split(' ')[0]!] : null;
  // the tab and a bookmark name the period, so two reports open side by side are told apart
  const pageTitle = `${title} · ${days === null ? 'no requests' : days[0] === days[1] ? `${days[0]} ${zone}` : `${days[0]} – ${days[1]} ${zone}`}`;
  // the run's time in the zone too; a generatedAt that is not a time is shown as it is
  const generated = Number.isFinite(Date.parse(meta.generatedAt)) ? fmtTime(Date.parse(meta.generatedAt), zone) : meta.generatedAt;
  // a filtered report says so where its scope is named: its headline is not the whole of the logs
  const subtitle = html`${period} · ${meta.roots.length === 1 ? meta.roots[0] : `${meta.roots.length} roots`}${meta.filters ? ` · only ${fmtFilters(meta.filters)}` : ''} · generated ${generated}`;
  // the footer names the page's zone, and a section's own where the data gives it another (a ReportData built by hand)
  const own: Array<[string | undefined, string]> = [
    [data.costOverTime && 'rows' in data.costOverTime ? (data.costOverTime.timezone ?? 'UTC') : undefined, 'cost-over-time days'],
    [data.blocks && 'blocks' in data.blocks ? (data.blocks.timezone ?? 'UTC') : undefined, '5-hour blocks'],
  ];
  const others = own.filter(([z]) => z !== undefined && z !== zone).map(([z, what]) => `${what} in ${z}`);
  const times = others.length ? `times in ${zone}, ${others.join(', ')}` : `all times in ${zone}`;
  const footer = html`cachelens ${meta.version}${meta.prices ? html` · prices: ${meta.prices}` : ''} · weight = base-input-token equivalents (input 1, 5m write 1.25, 1h write 2, read 0.1, output per model) · ${times}`;

  return fill(template, {
    csp: escapeHtml(contentSecurityPolicy([vega, interpreter, client], [style])),
    version: escapeHtml(meta.version),
    title: escapeHtml(title),
    pageTitle: escapeHtml(pageTitle),
    subtitle: subtitle.value,
    toc: toc.map((t) => t.value).join(' '),
    sections: cards.map((c) => c.value).join('\n'),
    footer: footer.value,
    // the report's data as `--json` prints a result: weights and dollars without floating-point noise
    data: jsonForScript(data, 'rounded'),
    // chart text is drawn from these rows by vega, not through escapeHtml: the control characters
    // go here; their numbers as the data block's (the specs are left as compiled)
    charts: jsonForScript({ specs, charts: cleanStrings(roundedJson(charts.charts)) }),
    vega,
    interpreter,
    client,
  });
}

/** Renders the report and writes it to `outPath` (folders created); returns the absolute path. */
export async function writeReport(data: ReportData, outPath: string): Promise<string> {
  const abs = path.resolve(outPath);
  // a level at a time: Node 20's recursive mkdir never returns under /proc (src/store/dirs.ts)
  const made = makeDirs(path.dirname(abs));
  try {
    return await writeReportAt(data, abs);
  } catch (err) {
    // not written (a full disk): the folders made for it go too
    unmakeDirs(made);
    throw err;
  }
}

async function writeReportAt(data: ReportData, abs: string): Promise<string> {
  const text = renderReport(data);
  // Into place whole: written straight to `abs`, a run stopped while it wrote (Ctrl-C) left a page
  // cut off, which opens as a broken report. Only a regular file (or none) is replaced so: a link,
  // a device (`--out /dev/stdout`) or a pipe is written through, as asked.
  const st = lstatSync(abs, { throwIfNoEntry: false });
  if (st && !st.isFile()) {
    await writeFile(abs, text, 'utf8');
    return abs;
  }
  // what runs stopped so left beside it (src/store/location.ts)
  removeLeftParts(abs);
  const part = `${abs}.${process.pid}.tmp`;
  try {
    await writeFile(part, text, 'utf8');
    renameSync(part, abs);
  } finally {
    rmSync(part, { force: true });
  }
  return abs;
}
