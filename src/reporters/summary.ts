/** Text reporters for summary, sessions and blocks: one result object in, text out. */
import type { Block, BlockTotals } from '../analyses/blocks.js';
import type { SessionRow, SessionTotals } from '../analyses/sessions.js';
import type { Quality, SummaryResult, Totals } from '../analyses/summary.js';
import { localDayMinute } from '../format/days.js';
import { type Column, clean, fit, int, table, usd } from '../format/table.js';
import { wrap } from '../format/wrap.js';
import { counted } from './units.js';
import { READ_ANYWAY } from '../types.js';
import { utf16Note } from '../replay/skips.js';

/**
 * The token columns, and the order a table too wide for its terminal leaves them out in (Column.drop):
 * input and output first (a few percent of a cache-heavy weight), then the 1-hour writes, the request
 * count, the 5-minute writes, the reads; weight and USD always stay. sessions puts its own columns
 * between them (formatSessions).
 */
const TOKEN_COLS: Column[] = [
  { header: 'requests', align: 'num', drop: 6 },
  { header: 'input', align: 'num', drop: 1 },
  { header: 'output', align: 'num', drop: 2 },
  { header: 'write 5m', align: 'num', drop: 8 },
  { header: 'write 1h', align: 'num', drop: 3 },
  { header: 'read', align: 'num', drop: 9 },
  { header: 'weight', align: 'num' },
  { header: 'USD', align: 'num' },
];

function cells(t: Totals): (string | number)[] {
  return [t.requests, t.input, t.output, t.cache_write_5m, t.cache_write_1h, t.cache_read, ...costCells(t)];
}

/** Weight and USD of a row: unknown when nothing in it is priced, marked +? when some of it is not. */
function costCells(t: { weight: number | null; usd: number | null; unpriced_requests: number }): string[] {
  const partly = t.unpriced_requests > 0 && t.usd !== null ? ' +?' : '';
  return [t.weight === null ? 'unknown' : int(t.weight) + partly, t.usd === null ? 'unknown' : usd(t.usd) + partly];
}

export function formatSummary(r: SummaryResult, color = false): string {
  const out: string[] = [];
  out.push(table([{ header: 'model' }, ...TOKEN_COLS], [...r.by_model.map((m) => [m.model, ...cells(m)]), ['total', ...cells(r.totals)]], { color, totals: 1, title: 'By model' }));
  out.push(table([{ header: 'project', cut: true }, ...TOKEN_COLS], r.by_project.map((p) => [p.project, ...cells(p)]), { color, title: 'By project' }));
  out.push(table([{ header: 'day' }, ...TOKEN_COLS], r.by_day.map((d) => [d.day, ...cells(d)]), { color, title: `By day (${r.filters.timezone})` }));
  // lines of text, wrapped to a terminal's width (format/wrap.ts); the tables fit theirs
  // a skipped file's path with spaces in it is never broken at them, as stderr keeps a path given with spaces whole
  out.push(wrap(formatQuality(r.quality), undefined, qualityPaths(r.quality)));
  out.push(wrap('weight = cost in base-input-token equivalents (write 5m ×1.25, write 1h ×2, read ×0.1, output ×5 for current models)'));
  return out.join('\n\n');
}

/** The paths formatQuality() names that have spaces in them, as it shows them (cleaned): spans wrap() keeps whole. */
export function qualityPaths(q: Quality): string[] {
  return q.skipped.flatMap((s) => [...s.examples.map((e) => clean(e.file)), ...(s.utf16_files ?? []).map((u) => clean(u.file))]).filter((f) => f.includes(' '));
}

export function formatQuality(q: Quality): string {
  const lines = [
    // (it said "1 files, 1 lines")
    `Data quality: ${counted(q.files, 'file')}, ${counted(q.lines, 'line')}, ${int(q.skipped_lines)} skipped, ` +
      (q.noted_lines ? `${int(q.noted_lines)} read with a field ignored or converted, ` : '') +
      `${counted(q.duplicates_removed, 'duplicate usage line')} removed, ${counted(q.synthetic, '<synthetic> line')} ignored`,
  ];
  for (const s of q.skipped) {
    // a file skipped whole says why (`not a .jsonl transcript`, `EACCES`), as --json does: the reason's
    // name alone (`not_a_file` of a README.md) did not; a line's detail stays in --json
    const where = s.examples.map((e) => (e.line === null ? `${clean(e.file)}${e.detail ? `: ${clean(e.detail)}` : ''}` : `${clean(e.file)}:${e.line}`)).join(', ');
    lines.push(`  ${READ_ANYWAY.has(s.reason) ? 'read (field ignored or converted)' : 'skipped'} ${s.reason}: ${int(s.count)} (${where})`);
    // a line's detail stays in --json, but one that says the file is UTF-16 text says what to do: once per file,
    // in ingest's words, as the replays say it (it was in --json and the report alone), every such file, not only
    // those of the 5 examples (5 bad lines of another file first left a UTF-16 file unsaid)
    for (const u of s.utf16_files ?? []) lines.push(`    ${clean(utf16Note(u.file, u.lines))}`);
  }
  for (const m of q.unknown_models) lines.push(`  unpriced model ${fit(clean(m.model))}: ${counted(m.requests, 'request')}, cost unknown (add it with --pricing FILE)`);
  return lines.join('\n');
}

/**
 * Ids as a table shows them: their first `min` characters, or as many more as tell apart two ids of
 * the list that begin alike (cut at 8, `44444444-…-4444` and `44444444-…-9999` were one session).
 * Example: shortIds(['4d5611e5-24', '4d5611e5-99', 'a1b2c3d4-00']) → ['4d5611e5-2', '4d5611e5-9', 'a1b2c3d4'].
 */
export function shortIds(ids: readonly string[], min = 8): string[] {
  const sorted = [...new Set(ids)].sort();
  const common = (a: string | undefined, b: string) => {
    let n = 0;
    if (a !== undefined) while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return n;
  };
  const length = new Map<string, number>();
  sorted.forEach((id, i) => length.set(id, Math.max(min, common(sorted[i - 1], id) + 1, common(sorted[i + 1], id) + 1)));
  return ids.map((id) => id.slice(0, length.get(id)));
}

/**
 * `timezone`: the zone `first` and `last` are in (the run's `--timezone`), named in the title as `By day` names it.
 * `limit`: the rows shown (`--top`), the first of the list; a cut list says `top N of M` in its title, as anatomy's do.
 * Below a rule, as summary's `total`, the totals of every session in scope (`totals`): of all of them
 * when `--top` cut the list, which the label says (`total (all 8 sessions)`); the columns that do not
 * add up (session, project, first, last) are blank.
 */
export function formatSessions(r: { sessions: SessionRow[]; totals: SessionTotals }, color = false, timezone?: string, limit = Infinity): string {
  const rows = r.sessions;
  const shown = rows.slice(0, limit);
  // cut from every session's: a shown id stays unique among those left out too (replay session takes it)
  const ids = shortIds(rows.map((s) => s.session_id));
  // the zone is said of the times shown: 'first and last', or the one of them a narrow terminal leaves in
  const notes = (left: readonly string[]) => {
    const times = ['first', 'last'].filter((h) => !left.includes(h)).join(' and ');
    return [...(shown.length < rows.length ? [`top ${shown.length} of ${int(rows.length)}`] : []), ...(timezone && times ? [`${times} in ${timezone}`] : [])];
  };
  const t = r.totals;
  const label = shown.length < rows.length ? `total (all ${counted(t.sessions, 'session')})` : 'total';
  return table(
    // each id the shortest prefix that names its session (replay session takes it): never cut to a narrow terminal (min Infinity:
    // not as a label is, where nothing else makes the table fit)
    // on a narrow terminal the last request's time goes after input, output and the 1-hour writes, then the chains, the first's after the requests
    [{ header: 'session', min: Infinity }, { header: 'project', cut: true }, { header: 'first', drop: 7 }, { header: 'last', drop: 4 }, { header: 'chains', align: 'num', drop: 5 }, ...TOKEN_COLS],
    [
      ...shown.map((s, i) => [ids[i]!, s.project, s.first, s.last, s.chains, ...cells(s)]),
      [label, '', '', '', t.chains, ...cells(t)],
    ],
    { color, title: (left) => (notes(left).length > 0 ? `Sessions (${notes(left).join('; ')})` : 'Sessions'), totals: 1 },
  );
}

/** An ISO 8601 time's day and its hours and minutes: '2026-02-10T12:00:00.000Z' → ['2026-02-10', '12:00'] (the day as long as its year is: '+010000-01-01'). */
function dayAndMinute(iso: string): [string, string] {
  const t = iso.indexOf('T');
  return [iso.slice(0, t), iso.slice(t + 1, t + 6)];
}

/**
 * A block's end as the table shows it: its time, with its month and day before it when it falls on a
 * later day than the block's start in the zone shown (`21:00` to `02-11 02:00`): a bare `02:00` read as
 * the start's day. Both are [day, 'HH:MM'] as localDayMinute gives them.
 * Example: endText(['2026-02-10', '21:00'], ['2026-02-11', '02:00']) → '02-11 02:00'; endText(['2026-02-10', '09:00'], ['2026-02-10', '14:00']) → '14:00'.
 */
export function endText(start: [string, string], end: [string, string]): string {
  return end[0] === start[0] ? end[1] : `${end[0].slice(-5)} ${end[1]}`;
}

/**
 * `timezone`: the zone the table shows starts and ends in (the run's `--timezone`), named in the
 * header; the windows stay UTC hours (a zone half an hour off shows them at :30). Without it, UTC.
 * An end on a later day than its start shows that day (endText). Below a rule, as summary's
 * `total`, the totals of the requests counted in the blocks (`totals`).
 */
export function formatBlocks(r: { blocks: Block[]; totals: BlockTotals }, color = false, timezone?: string): string {
  const at = (iso: string) => (timezone ? localDayMinute(Date.parse(iso), timezone) : dayAndMinute(iso));
  const t = r.totals;
  return table(
    // the end right-aligned: its times stay under one another when some carry a day
    [{ header: `block start (${timezone ?? 'UTC'})` }, { header: 'end', align: 'num', drop: 3 }, { header: 'requests', align: 'num', drop: 1 }, { header: 'tokens', align: 'num', drop: 2 }, { header: 'weight', align: 'num' }, { header: 'USD', align: 'num' }, { header: 'models', list: true, noun: 'model' }],
    [
      // a block's models each cut to 120 columns, not the list: six models are no hostile value; on a
      // narrow terminal the list shows the models that fit whole and +N for the rest (Column.list)
      ...r.blocks.map((b) => [at(b.start).join(' ') + (b.active ? ' (active)' : ''), endText(at(b.start), at(b.end)), b.requests, b.tokens, ...costCells(b), b.models]),
      ['total', '', t.requests, t.tokens, ...costCells(t), ''],
    ],
    { color, title: '5-hour blocks', totals: 1 },
  );
}
