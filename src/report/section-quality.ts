/** The data-quality panel (SPEC §8): what was read, what was skipped and why, what is unpriced. */
import type { DataQuality, ReportMeta } from './data.js';
import { fmtBytes, fmtCount, fmtFilters, fmtInt } from './format.js';
import { breakableId, facts, html, sortableTable } from './html.js';
import type { SectionOutput } from './section.js';
import { READ_ANYWAY } from '../types.js';
import { utf16Note } from '../replay/skips.js';

/**
 * Example: "Read 2 files and 6 lines; skipped none; removed 1 duplicate copy; every model has a
 * price." Under filters it says that these count everything read (files are read whole, a skipped
 * line has no project or day): "… These count everything read, not only the 1 request chosen by
 * --project alpha."
 */
export function qualityReading(d: DataQuality, filters?: ReportMeta['filters']): string {
  // a line read with a field of the wrong type ignored (READ_ANYWAY) is said apart: it was read
  const skips = d.skipped.filter((r) => r.count > 0 && !READ_ANYWAY.has(r.reason));
  const skipped = skips.reduce((s, r) => s + r.count, 0);
  const noted = d.skipped.filter((r) => READ_ANYWAY.has(r.reason)).reduce((s, r) => s + r.count, 0);
  const unpriced = d.unknownModels.reduce((s, m) => s + m.requests, 0);
  const reasons = skips.map((r) => `${fmtInt(r.count)} ${r.reason}`);
  return (
    `Read ${fmtCount(d.files, 'file')} and ${fmtCount(d.lines, 'line')}; ` +
    (skipped ? `skipped ${fmtInt(skipped)} (${reasons.join(', ')}); ` : 'skipped none; ') +
    (noted ? `read ${fmtCount(noted, 'line')} with a field of the wrong type ignored or converted (invalid_field); ` : '') +
    `removed ${fmtCount(d.duplicatesRemoved, 'duplicate copy', 'duplicate copies')}; ` +
    (unpriced ? `${fmtCount(unpriced, 'request')} from ${fmtCount(d.unknownModels.length, 'model')} without a price.` : 'every model has a price.') +
    (filters ? ` These count everything read, not only the ${fmtCount(d.requests, 'request')} chosen by ${fmtFilters(filters)}.` : '')
  );
}

export function renderDataQuality(d: DataQuality, filters?: ReportMeta['filters']): SectionOutput {
  const skipped = sortableTable(
    `Skipped lines by reason, with the first locations${d.skipped.some((r) => READ_ANYWAY.has(r.reason)) ? ' (invalid_field: the line read, the field ignored or converted)' : ''}`,
    [{ label: 'reason' }, { label: 'lines', numeric: true }, { label: 'where' }],
    d.skipped.map((r) => [
      { text: r.reason },
      { text: fmtInt(r.count), sort: r.count },
      {
        // every file taken for UTF-16 text said once, as summary says it, not only those among the examples
        text: html`<ul class="locations">${r.examples.map((e) => html`<li><span class="mono">${breakableId(`${e.path}${e.line === null ? '' : `:${e.line}`}`)}</span>${e.detail ? ` — ${e.detail}` : ''}</li>`)}${(r.utf16Files ?? []).map((u) => html`<li><span class="mono">${breakableId(u.path)}</span>: ${utf16Note(null, u.lines)}</li>`)}</ul>`,
      },
    ]),
  );
  const models = d.unknownModels.length
    ? sortableTable('Models without a price (their cost shows as unknown)', [{ label: 'model' }, { label: 'requests', numeric: true }], d.unknownModels.map((m) => [{ text: m.model }, { text: fmtInt(m.requests), sort: m.requests }]))
    : '';
  const types = d.unknownLineTypes?.length
    ? sortableTable('Line types not known to the reader (counted, not errors)', [{ label: 'type' }, { label: 'lines', numeric: true }], d.unknownLineTypes.map((t) => [{ text: t.type }, { text: fmtInt(t.count), sort: t.count }]))
    : '';
  return {
    reading: qualityReading(d, filters),
    body: html`${facts([
      ['files', fmtInt(d.files)],
      ['lines', fmtInt(d.lines)],
      ['read', fmtBytes(d.bytes)],
      // under filters, the two facts they narrow say so: the rest are of everything read
      [filters ? 'requests (filtered)' : 'requests', fmtInt(d.requests)],
      ['duplicates removed', fmtInt(d.duplicatesRemoved)],
      [filters ? 'usage without 5m/1h split (filtered)' : 'usage without 5m/1h split', fmtInt(d.splitMissing)],
    ])}
${d.skipped.length ? skipped : html`<p class="muted">No line was skipped.</p>`}
${models}
${types}`,
  };
}
