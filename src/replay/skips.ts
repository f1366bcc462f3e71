/** The replays' skipped lines in their text output, as summary's data quality lists its skips. */
import { clean, int } from '../format/table.js';
import { READ_ANYWAY } from '../types.js';
import { UTF16_SAID } from '../ingest/read-file.js';

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

/**
 * Lines skipped because they look like UTF-16 text, said in the words ingest gives them (read-file.ts
 * UTF16_SAID), as summary's data quality, its --json and the report's say them: which file, and what
 * to do. Only the details said the file was UTF-16; the text said `skipped invalid_json: 2`.
 * Example: ('/l/s1.jsonl', 2) → '/l/s1.jsonl: UTF-16 text, not UTF-8 (Claude Code writes UTF-8: convert the file, e.g. iconv -f UTF-16 -t UTF-8) (2 lines)'.
 */
export function utf16Note(file: string | null, lines?: number): string {
  const n = lines === undefined ? '' : ` (${int(lines)} ${lines === 1 ? 'line' : 'lines'})`;
  return `${file === null ? '' : `${file}: `}${UTF16_SAID}${n}`;
}

/** Whether a skip's detail is ingest's UTF-16 one. */
export function isUtf16(detail: string | undefined | null): boolean {
  return detail === UTF16_SAID;
}
