/**
 * Summary: totals, by model, by project, by day, and the data-quality facts (SPEC §2, §8).
 * Weight and USD are sums over priced requests only; tokens count every request, and requests of
 * unpriced models are listed in quality.unknown_models.
 */
import type { WalkSkip } from '../ingest/ingest.js';
import { type RememberingStore, rememberedQuery } from '../store/queries.js';
import type { Row } from '../store/store.js';
import { type Filters, filterParams } from './filters.js';
import { compareDays } from '../format/days.js';

export interface Totals {
  requests: number;
  input: number;
  output: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
  /** null when every request of the group is unpriced: unknown, never $0 */
  weight: number | null;
  usd: number | null;
  unpriced_requests: number;
}

export interface SkipGroup {
  reason: string;
  count: number;
  examples: { file: string; line: number | null; detail: string }[];
  /** the files whose lines of this reason were taken for UTF-16 text (their detail ingest's UTF16_SAID), all of them, not only the examples' */
  utf16_files: { file: string; lines: number }[];
}

export interface Quality {
  files: number;
  lines: number;
  /** lines not read */
  skipped_lines: number;
  /** lines read with a field of the wrong type read as absent (`invalid_field`, listed in `skipped`) */
  noted_lines: number;
  skipped: SkipGroup[];
  duplicates_removed: number;
  usage_lines: number;
  synthetic: number;
  unknown_models: { model: string; requests: number; tokens: number }[];
}

export interface SummaryResult {
  totals: Totals;
  by_model: (Totals & { model: string })[];
  by_project: (Totals & { project: string })[];
  by_day: (Totals & { day: string })[];
  quality: Quality;
  filters: Filters;
}

function totals(r: Row | undefined): Totals {
  const requests = Number(r?.requests ?? 0);
  const unpriced = Number(r?.unpriced_requests ?? 0);
  const unknown = requests > 0 && unpriced === requests;
  return {
    requests: Number(r?.requests ?? 0),
    input: Number(r?.input ?? 0),
    output: Number(r?.output ?? 0),
    cache_write_5m: Number(r?.cache_write_5m ?? 0),
    cache_write_1h: Number(r?.cache_write_1h ?? 0),
    cache_read: Number(r?.cache_read ?? 0),
    weight: unknown ? null : Number(r?.weight_exact ?? 0),
    usd: unknown ? null : Number(r?.usd_exact ?? 0),
    unpriced_requests: unpriced,
  };
}

export async function summary(store: RememberingStore, filters: Filters, walkSkips: WalkSkip[] = []): Promise<SummaryResult> {
  // every grouping in one query (one pass over the requests), split here
  const rows = await rememberedQuery(store, 'summary', filterParams(filters));
  // kept beside the rows, for an append run that adds to them without DuckDB (ingest/delta.ts)
  await rememberedQuery(store, 'zone_days', { tz: filters.timezone });
  const by = (group: string) => rows.filter((r) => r.grouping === group);
  const [total, models, projects, days] = [by('total'), by('model'), by('project'), by('day')];
  // in the query's order, made here: rows an append run added to (delta.ts) come in any order
  days.sort((a, b) => compareDays(String(a.grp), String(b.grp)));
  for (const list of [models, projects]) list.sort((a, b) => Number(b.usd_exact) - Number(a.usd_exact) || byText(String(a.grp), String(b.grp)));
  return {
    totals: totals(total[0]),
    by_model: models.map((r) => ({ model: String(r.grp), ...totals(r) })),
    by_project: projects.map((r) => ({ project: String(r.grp), ...totals(r) })),
    by_day: days.map((r) => ({ day: String(r.grp), ...totals(r) })),
    quality: await quality(store, walkSkips),
    filters,
  };
}

/**
 * The totals of the requests the filters choose, as `summary --json` gives them: its query's `total`
 * row (the same remembered result, with the same parameters). The totals rows of `sessions` and
 * `blocks` are these, so that they equal summary's to the last digit: the rows' weights and USD are
 * DOUBLEs, and summed again here their last bits would differ (sessions.sql, hourly.sql round each
 * request to 6 and 12 decimals; summary.sql sums them exactly). Every request in scope is in one
 * session and in one block (the windows are formed from every request, the filters choose what is
 * counted in them), so the sums of the rows are these (test/commands/usage-totals.test.ts).
 */
export async function scopeTotals(store: RememberingStore, filters: Filters): Promise<Totals> {
  const rows = await rememberedQuery(store, 'summary', filterParams(filters));
  // kept beside it, as summary() keeps it: an append run adds to every kept summary answer, and
  // gives up on all of them (opening the store) when one has no days for its zone (ingest/delta.ts)
  await rememberedQuery(store, 'zone_days', { tz: filters.timezone });
  return totals(rows.find((r) => r.grouping === 'total'));
}

/**
 * Whether --project's text is in any project's path on any day (true without --project): a run
 * that counted nothing then says whether the project or the days chose nothing. The same
 * remembered summary query, without the days (the very one when no day is given).
 */
export async function projectMatches(store: RememberingStore, filters: Filters): Promise<boolean> {
  if (filters.project === null) return true;
  const rows = await rememberedQuery(store, 'summary', filterParams({ ...filters, since: null, until: null }));
  return rows.some((r) => r.grouping === 'total' && Number(r.requests) > 0);
}

/**
 * The first and last day (in --timezone) of the requests --project chooses on any day, or null when
 * there are none: a run whose --since/--until counted nothing says which days it could have counted.
 * The same remembered summary query projectMatches asks.
 * Example: requests on 2026-02-11 and 2026-02-12, --since 2030-01-01 → { first: '2026-02-11', last: '2026-02-12' }.
 */
export async function daysRead(store: RememberingStore, filters: Filters): Promise<{ first: string; last: string } | null> {
  const rows = await rememberedQuery(store, 'summary', filterParams({ ...filters, since: null, until: null }));
  const days = rows.filter((r) => r.grouping === 'day' && Number(r.requests) > 0).map((r) => String(r.grp));
  return days.length === 0 ? null : { first: days[0]!, last: days.at(-1)! };
}

/**
 * Whether --since/--until (with --project) choose any request: when they do, a command that counted
 * nothing was emptied by another of its options (--scope, --kind), not by the days.
 * Example: requests on 2026-02-10, --since 2026-02-10 → true; --since 2030-01-01 → false.
 */
export async function daysChoose(store: RememberingStore, filters: Filters): Promise<boolean> {
  const rows = await rememberedQuery(store, 'summary', filterParams(filters));
  return rows.some((r) => r.grouping === 'total' && Number(r.requests) > 0);
}

/** Text in DuckDB's order for VARCHAR: by UTF-8 bytes. */
function byText(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));
}

export async function quality(store: RememberingStore, walkSkips: WalkSkip[] = []): Promise<Quality> {
  const [q] = await rememberedQuery(store, 'quality');
  const skipped: SkipGroup[] = (await rememberedQuery(store, 'skipped')).map((r) => ({
    reason: String(r.reason),
    count: Number(r.count),
    examples: (r.examples as { file: string; line: number; detail: string }[]).map((e) => ({ file: e.file, line: Number(e.line), detail: e.detail })),
    utf16_files: ((r.utf16_files ?? []) as { file: string; lines: number }[]).map((u) => ({ file: u.file, lines: Number(u.lines) })),
  }));
  for (const w of walkSkips) {
    let g = skipped.find((s) => s.reason === w.reason);
    if (!g) skipped.push((g = { reason: w.reason, count: 0, examples: [], utf16_files: [] }));
    g.count++;
    if (g.examples.length < 5) g.examples.push({ file: w.path, line: null, detail: w.detail });
  }
  const unknown = await rememberedQuery(store, 'unknown_models');
  return {
    files: Number(q.files),
    lines: Number(q.lines),
    skipped_lines: Number(q.skipped_lines) + walkSkips.length,
    noted_lines: Number(q.noted_lines ?? 0),
    skipped,
    duplicates_removed: Number(q.duplicates_removed),
    usage_lines: Number(q.usage_lines),
    synthetic: Number(q.synthetic),
    unknown_models: unknown.map((r) => ({ model: String(r.model), requests: Number(r.requests), tokens: Number(r.tokens) })),
  };
}
