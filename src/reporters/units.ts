/**
 * Units the cache reporters need beyond src/format/table.ts: signed percentages, gaps and counts.
 */
import type { Filters } from '../analyses/filters.js';
import { clean, int } from '../format/table.js';
import { fmtFilters } from '../report/format.js';

/** A count and its noun, singular for 1: (1, 'file') → "1 file", (1,424, 'file') → "1,424 files". */
export function counted(n: number, noun: string, plural = noun + 's'): string {
  return `${int(n)} ${n === 1 ? noun : plural}`;
}

/** A value already in percent, signed: 2.2413 → "+2.24%"; null → "—" */
export function signedPct(x: number | null, decimals = 2): string {
  if (x === null || !Number.isFinite(x)) return '—';
  const text = Math.abs(x).toFixed(decimals);
  const zero = Number(text) === 0;
  return `${zero ? '' : x > 0 ? '+' : '-'}${text}%`;
}

/** A gap in seconds as "5s", "19.2m", "4.2h"; null → "—" */
export function duration(s: number | null): string {
  if (s === null) return '—';
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${(s / 60).toFixed(1)}m`;
  return `${(s / 3600).toFixed(1)}h`;
}

/**
 * The line above a command's tables that names the filters in force, as the report's title line
 * does (`only --since …`); '' when none is given. `projectMatches` false: no project contains
 * --project's text, said there (the tables were silent zeros).
 * Example: { since: '2026-02-02', until: null, project: 'nomatch' }, false →
 * 'Filtered: --since 2026-02-02 --project nomatch: no project matches\n\n'.
 */
export function filtersLine(f: Pick<Filters, 'since' | 'until' | 'project'>, projectMatches = true): string {
  if (f.since === null && f.until === null && f.project === null) return '';
  return `Filtered: ${clean(fmtFilters(f))}${f.project !== null && !projectMatches ? ': no project matches' : ''}\n\n`;
}
