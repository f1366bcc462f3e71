/** The replays' skipped lines in their text output, as summary's data quality lists its skips. */
import { clean, int } from '../format/table.js';
import { READ_ANYWAY } from '../types.js';

export interface SkipGroup {
  reason: string;
  count: number;
  /** the first line numbers (up to 5) */
  lines: number[];
}

/** Skipped lines by reason, in order of first appearance, with the first 5 line numbers of each. */
export function skipGroups(skipped: readonly { reason: string; line: number }[]): SkipGroup[] {
  const by = new Map<string, SkipGroup>();
  for (const s of skipped) {
    let g = by.get(s.reason);
    if (!g) by.set(s.reason, (g = { reason: s.reason, count: 0, lines: [] }));
    g.count++;
    if (g.lines.length < 5) g.lines.push(s.line);
  }
  return [...by.values()];
}

/**
 * Example: [{ reason: 'missing_field', count: 2, lines: [3, 7] }] → ['  skipped missing_field: 2 (lines 3, 7)'];
 * a line read all the same: [{ reason: 'invalid_field', count: 1, lines: [4] }] → ['  read (field ignored or converted) invalid_field: 1 (line 4)'].
 */
export function skipLines(groups: readonly SkipGroup[]): string[] {
  return groups.map((g) => `  ${clean(skipText(g))}`);
}

/**
 * One group as skipLines says it, without the indent, not cleaned (the report escapes it).
 * Example: { reason: 'invalid_json', count: 1, lines: [7] } → 'skipped invalid_json: 1 (line 7)'
 */
export function skipText(g: SkipGroup): string {
  const first = g.lines.join(', ') + (g.count > g.lines.length ? ', …' : '');
  return `${READ_ANYWAY.has(g.reason) ? 'read (field ignored or converted)' : 'skipped'} ${g.reason}: ${int(g.count)} (${g.count === 1 ? 'line' : 'lines'} ${first})`;
}
