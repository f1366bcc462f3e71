/**
 * The cross-tab as a terminal table (rows × cols with a total column and a total row) and, for
 * the dimensions of the SPEC §4 finding, which cells have as many skill_listing attachments per
 * chain as rounds. Dimension values can be transcript text (agent types, projects): cleaned.
 */
import type { CrosstabCell, CrosstabResult, DimValue, Measure } from '../analyses/crosstab.js';
import { type Cell, clean, displayWidth, fit, fitTable, int, leftOutNote, pct, rounded, usd } from '../format/table.js';
import { wrap } from '../format/wrap.js';

/** Measures that cover priced requests only. */
const PRICED = new Set<Measure>(['weight', 'usd', 'write_read_ratio']);

/** What a cell shown as — means, per measure (its value is null). */
const UNKNOWN: Record<Measure, string> = {
  chains: 'where a cell has no chain',
  requests: 'where a cell has no request',
  reattachments: 'where a cell has no attachment',
  weight: 'where a cell has no priced request',
  usd: 'where a cell has no priced request',
  write_read_ratio: 'where a cell read nothing (no priced cache read)',
  hit_ratio: 'where a cell has no request',
};

/** The title's note of --kind (it was said nowhere, in the text or in --json). */
const KIND_ONLY: Record<string, string> = { main: ', main threads only', subagent: ', subagents only' };

/** Dimensions where the attachments-vs-rounds line is the point of the table. */
const HEADLINE_DIMENSIONS = new Set(['definition', 'agent_type', 'has_skill_listing', 'skill_listing', 'namespaced', 'kind']);
/**
 * What the lines explain, one of which the table must show for them to follow it: a dimension of a
 * chain's skill_listing attachments or rounds, or the re-attachments measure. `--rows agent_type
 * --cols model --measure usd` printed them under a table of neither.
 */
const ATTACHMENT_DIMENSIONS = new Set(['has_skill_listing', 'skill_listing', 'rounds', 'rounds_bucket']);

export function formatMeasure(m: Measure, v: number | null): string {
  if (v === null) return '—';
  if (m === 'usd') return usd(v);
  if (m === 'hit_ratio') return pct(v);
  // rounded as --json writes it, halves away from zero, as the percentages and USD are
  if (m === 'write_read_ratio') return rounded(v, 2);
  return int(v);
}

/**
 * What a dimension's value is where it is not what other commands call by that name: every
 * dimension is a chain's (analyses/crosstab.ts), so `model` totals differ from summary's by model,
 * which counts each request under its own model; said under the table (it was said only in the code).
 */
function dimensionNotes(r: CrosstabResult, timezone: string | undefined, days: boolean): string[] {
  // under --since/--until a chain's day is of its first request on those days (docs/store.md): a chain
  // begun the day before is on the first day asked for, which 'first request' alone did not say
  const first = days ? 'first request on the days asked for' : 'first request';
  const notes: Partial<Record<string, string>> = {
    model: "model: each chain's, the one that carried most of its prompt tokens (summary counts each request under its own)",
    day: `day: the day of each chain's ${first}${timezone ? ` (${timezone})` : ''}`,
    ttl: 'ttl: 1h for a chain that wrote any 1-hour tokens, 5m for one that wrote only 5-minute ones',
  };
  return [...new Set([r.rows_dimension, r.cols_dimension])].flatMap((d) => notes[d] ?? []);
}

export function formatCrosstab(r: CrosstabResult, color: boolean, timezone?: string, days = false): string {
  const value = new Map<string, CrosstabCell>();
  const k = (row: DimValue | null, col: DimValue | null) => `${row ?? '\u0000'}\u0001${col ?? '\u0000'}`;
  for (const c of r.cells) value.set(k(c.row, c.col), c);
  // a priced measure over some unpriced requests is partial: marked, never silently complete
  const priced = PRICED.has(r.measure);
  const cell = (row: DimValue | null, col: DimValue | null): Cell => {
    const c = value.get(k(row, col));
    if (!c) return '';
    return formatMeasure(r.measure, c.value) + (priced && c.value !== null && c.unpriced_requests > 0 ? ' +?' : '');
  };
  // on a terminal too narrow for the table, the columns of the smallest totals are left out first (named
  // under it); the rows' column and the totals stay, and the total column still counts every column
  // A ratio's total (hit_ratio, write_read_ratio) says nothing of a column's size: those columns are ranked by
  // their chains. The heaviest column is never left out: a table of totals alone shows no value.
  const ratio = r.measure === 'hit_ratio' || r.measure === 'write_read_ratio';
  const chainsOf = new Map<DimValue, number>();
  for (const e of r.attachments_equal_rounds) chainsOf.set(e.col, (chainsOf.get(e.col) ?? 0) + e.chains);
  const byTotal = r.cols
    .map((c, i) => ({ i, total: (ratio ? chainsOf.get(c) : value.get(k(null, c))?.value) ?? -Infinity }))
    .sort((a, b) => a.total - b.total);
  const dropOf = new Map(byTotal.slice(0, -1).map((c, n) => [c.i, n + 1]));
  const columns = [
    // a project's path or a session's id may be cut, before a column is left out; a model, an agent type or a day never is
    // its header (`definition \\ has_skill_listing`, 30 columns) is cut in its middle on a narrow terminal, to
    // the widest label of a row it cannot cut (it made the table 42 columns wide at 40)
    r.rows_dimension === 'project' || r.rows_dimension === 'session'
      ? { header: clean(`${r.rows_dimension} \\ ${r.cols_dimension}`), cut: true, cutHeader: true }
      : { header: clean(`${r.rows_dimension} \\ ${r.cols_dimension}`), cut: true, cutHeader: true, min: r.rows.reduce((m: number, row) => Math.max(m, displayWidth(fit(clean(String(row))))), 'total'.length) },
    ...r.cols.map((c, i) => ({ header: clean(String(c)), align: 'num' as const, ...(dropOf.has(i) ? { drop: dropOf.get(i)! } : {}) })),
    { header: 'total', align: 'num' as const, totals: true },
  ];
  const body: Cell[][] = [...r.rows, null].map((row) => [row === null ? 'total' : String(row), ...[...r.cols, null].map((col) => cell(row, col))]);
  const fitted = fitTable(columns, body, { color, totals: 1, title: `${r.measure} by ${r.rows_dimension} and ${r.cols_dimension}${KIND_ONLY[r.kind] ?? ''}` });
  const lines = [fitted.text];
  const unpriced = r.cells.find((c) => c.row === null && c.col === null)?.unpriced_requests ?? 0;
  // what a — says depends on the measure (it said 'no priced request' of a write:read whose cell was
  // priced but read nothing, and nothing at all without unpriced requests)
  const notes = [...(priced && unpriced > 0 ? [`+? ${unpriced === 1 ? '1 request of an unpriced model is' : `${int(unpriced)} requests of unpriced models are`} left out`] : []), ...(r.cells.some((c) => c.value === null) ? [`— ${UNKNOWN[r.measure]}`] : [])];
  if (notes.length > 0) lines.push(notes.join('; '));
  lines.push(...dimensionNotes(r, timezone, days));
  // no cell, no heading: a crosstab of no chains prints the empty table alone
  const shown = ATTACHMENT_DIMENSIONS.has(r.rows_dimension) || ATTACHMENT_DIMENSIONS.has(r.cols_dimension) || r.measure === 'reattachments';
  if (r.attachments_equal_rounds.length > 0 && shown && (HEADLINE_DIMENSIONS.has(r.rows_dimension) || HEADLINE_DIMENSIONS.has(r.cols_dimension))) {
    lines.push('', 'skill_listing attachments per chain = rounds per chain > 0 (every chain of the cell):');
    // only the cells of the columns shown: a line of a column a narrow terminal left out named a cell the
    // reader could not find (`lost × yes` under a table without `yes`); how many are left out is said
    const left = new Set(fitted.left);
    const hidden = (e: { col: DimValue }) => left.has(clean(String(e.col)));
    for (const e of r.attachments_equal_rounds.filter((e) => !hidden(e))) {
      lines.push(clean(`  ${fit(clean(String(e.row)))} × ${fit(clean(String(e.col)))}: ${e.equal ? 'yes' : 'no'} — ${e.matching} of ${e.chains} chain${e.chains === 1 ? '' : 's'}`));
    }
    const unsaid = r.attachments_equal_rounds.filter(hidden);
    if (unsaid.length > 0) {
      const cols = [...new Set(unsaid.map((e) => fit(clean(String(e.col)))))];
      lines.push(`  ${leftOutNote(cols).replace(/^\(not shown: /, `(${unsaid.length === 1 ? '1 cell' : `${unsaid.length} cells`} of the columns not shown: `)}`);
    }
  }
  // the lines under the table are text, wrapped to a terminal's width (format/wrap.ts); the table fits its own
  return [lines[0]!, ...lines.slice(1).map((l) => wrap(l))].join('\n');
}
