/**
 * Cross-tabs (SPEC §4): any dimension × any dimension with any measure, computed in SQL over the
 * portable tables (a store or a Parquet export). One row per chain first, then GROUP BY the two
 * dimensions with GROUPING SETS for the row, column and grand totals.
 *
 * Readings:
 * - --since/--until choose the requests of those days (in the time zone), as `summary` does: a chain
 *   is in a cross-tab when it has a request on those days (a chain without requests, when its
 *   first line is), and its measures and request-derived dimensions (model, day, ttl) are of those
 *   requests only; its attachments, rounds and definition stay the whole chain's. Over a Parquet
 *   export of the same days this gives the same table as over the store.
 * - Every dimension is a chain's: `model` is the model that carried most of the chain's prompt
 *   tokens (ties to the first by name; `none` without requests), `day` the day (in the time zone)
 *   of its first request, `ttl` `1h` when any of its writes carried 1-hour tokens, `5m` when it
 *   wrote only 5-minute tokens, `none` when it wrote nothing.
 * - Ratios are of sums, at every level (totals too), never means of ratios: write_read_ratio =
 *   Σ write weight / Σ read weight (NULL when nothing was read), hit_ratio = Σ r / Σ P.
 *   Weights and USD cover priced requests only; a cell with no priced request shows null
 *   (unknown), never $0, and each cell counts its unpriced requests (the text marks a partial
 *   weight, USD or write:read with +?).
 * - "Attachments per chain equal rounds per chain" in a cell: every chain of the cell has as many
 *   `skill_listing` attachments as rounds, more than 0 (a chain of 0 rounds and 0 listings is no
 *   evidence of the pattern; skill_listing_by_agent_type.sql and attachments_vs_rounds.sql count alike). A cell reports its chains, how many of them match, and
 *   `equal` (all do). In the field note's lost agents the listing was re-attached once per round.
 * - Cells without chains are absent; in `cells` a null row or col is a total.
 *
 * Example: chains A (lost, 8 rounds, 8 skill listings), B (lost, 4 rounds, 4), C (resolved, 1
 * round, 0). `--rows definition --cols has_skill_listing`: cells (lost, yes) = 2, (resolved, no)
 * = 1, totals lost 2, resolved 1, yes 2, no 1, all 3; attachments_equal_rounds: (lost, yes)
 * chains 2, equal true; (resolved, no) chains 1, equal false.
 */
import { UsageError } from '../errors.js';
import { compareDays } from '../format/days.js';
import type { SqlSource } from '../store/portable.js';
import { DEFINITIONS } from '../types.js';

export const DIMENSIONS = {
  agent_type: 'agent_type',
  namespaced: 'namespaced',
  model: 'model',
  project: 'project',
  session: 'session',
  day: 'day',
  ttl: 'ttl',
  has_skill_listing: 'has_skill_listing',
  skill_listing: 'skill_listing',
  rounds_bucket: 'rounds_bucket',
  definition: 'definition',
  rounds: 'rounds',
  kind: 'kind',
} as const;
export type Dimension = keyof typeof DIMENSIONS;

/** SQL of each measure over the per-chain rows of a group. */
export const MEASURES = {
  chains: 'count(*)',
  // of no chain (a filter that matches nothing) 0, not unknown (a sum of nothing is NULL)
  requests: 'coalesce(sum(requests), 0)',
  weight: 'sum(weight::DECIMAL(38, 15))::DOUBLE',
  usd: 'sum(usd::DECIMAL(38, 15))::DOUBLE',
  write_read_ratio: 'sum(write_weight) / nullif(sum(read_weight), 0)',
  hit_ratio: 'sum(read_tokens) / nullif(sum(prompt_tokens), 0)',
  reattachments: 'coalesce(sum(reattachments), 0)',
} as const;
export type Measure = keyof typeof MEASURES;

const ALIASES: Record<string, string> = {
  'write:read': 'write_read_ratio', 'write:read_ratio': 'write_read_ratio', write_read: 'write_read_ratio', re_attachments: 'reattachments',
  rounds_buckets: 'rounds_bucket', skill_listing_count: 'skill_listing', agent: 'agent_type',
};

/** A name as SPEC §4 may spell it: any case, words joined by spaces or hyphens. Example: "rounds bucket" → rounds_bucket, "USD" → usd. */
function canonicalName(s: string): string {
  const k = s.trim().toLowerCase().replace(/[\s-]+/g, '_');
  return ALIASES[k] ?? k;
}

/** Order of the rounds buckets (SPEC §5): 1, 2–3, 4–9, 10+, after 0 (a chain without a prompt or request). */
const BUCKETS = ['0', '1', '2-3', '4-9', '10+'];

export interface CrosstabOptions {
  rows: string;
  cols: string;
  measure?: string;
  /** time zone of `day` */
  timezone: string;
  /** the requests of these days (YYYY-MM-DD, in the time zone) and their chains, of the projects that contain `project` */
  since?: string | null;
  until?: string | null;
  project?: string | null;
  /** main threads, subagents (and v1.x sidechains), or all (default) */
  kind?: 'all' | 'main' | 'subagent';
}

export type DimValue = string | number;

export interface CrosstabCell {
  /** null: the total over rows */
  row: DimValue | null;
  /** null: the total over columns */
  col: DimValue | null;
  value: number | null;
  /** requests of the cell's chains without a price: left out of weight, USD and write:read (the value is then partial) */
  unpriced_requests: number;
}

export interface EqualRounds {
  row: DimValue;
  col: DimValue;
  chains: number;
  /** chains of the cell whose skill_listing count equals their rounds and is > 0 */
  matching: number;
  equal: boolean;
}

export interface CrosstabResult {
  rows_dimension: Dimension;
  cols_dimension: Dimension;
  measure: Measure;
  /** the chains counted (--kind) */
  kind: 'all' | 'main' | 'subagent';
  rows: DimValue[];
  cols: DimValue[];
  cells: CrosstabCell[];
  attachments_equal_rounds: EqualRounds[];
}

export function parseDimension(s: string, flag: string): Dimension {
  const k = canonicalName(s);
  if (!Object.hasOwn(DIMENSIONS, k)) throw new UsageError(`${flag} ${s}: not a dimension`, `one of ${Object.keys(DIMENSIONS).join(', ')}`);
  return k as Dimension;
}

export function parseMeasure(s: string): Measure {
  const k = canonicalName(s);
  if (!Object.hasOwn(MEASURES, k)) throw new UsageError(`--measure ${s}: not a measure`, `one of ${Object.keys(MEASURES).join(', ')}`);
  return k as Measure;
}

/** One row per chain of the portable tables, with every dimension and the sums every measure needs. */
export const PER_CHAIN = `
WITH inr AS (
  SELECT * FROM requests
  WHERE ($since IS NULL OR CAST(timezone($tz, ts) AS DATE) >= CAST($since AS DATE))
    AND ($until IS NULL OR CAST(timezone($tz, ts) AS DATE) <= CAST($until AS DATE))),
any_req AS (SELECT DISTINCT chain_id FROM requests),
req AS (
  SELECT chain_id, count(*) AS requests, count(*) FILTER (WHERE usd IS NULL) AS unpriced_requests,
         sum(weight::DECIMAL(38, 15))::DOUBLE AS weight, sum(usd::DECIMAL(38, 15))::DOUBLE AS usd,
         sum((weight_write_5m + weight_write_1h)::DECIMAL(38, 15))::DOUBLE AS write_weight, sum(weight_read::DECIMAL(38, 15))::DOUBLE AS read_weight,
         sum(cache_read) AS read_tokens, sum(prompt) AS prompt_tokens, min(ts) AS first_ts,
         CASE WHEN bool_or(cache_write_1h > 0) THEN '1h' WHEN bool_or(cache_write > 0) THEN '5m' ELSE 'none' END AS ttl
  FROM inr GROUP BY chain_id),
model_of AS (
  SELECT chain_id, first(model ORDER BY p DESC, model) AS model
  FROM (SELECT chain_id, model, sum(prompt) AS p FROM inr GROUP BY chain_id, model) GROUP BY chain_id),
att AS (
  SELECT chain_id, count(*) FILTER (WHERE type = 'skill_listing') AS skill_listing, count(*) FILTER (WHERE again) AS reattachments
  FROM (SELECT chain_id, type, row_number() OVER (PARTITION BY chain_id, hash ORDER BY t, line) > 1 AS again FROM attachments)
  GROUP BY chain_id),
pc AS (
  SELECT c.chain_id, c.kind, c.agent_type,
         CASE WHEN contains(c.agent_type, ':') THEN 'yes' ELSE 'no' END AS namespaced,
         coalesce(m.model, 'none') AS model, coalesce(c.project, 'unknown') AS project, c.session_id AS session,
         CAST(timezone($tz, coalesce(r.first_ts, to_timestamp(c.first_t / 1000))) AS DATE) AS day_date,
         coalesce(r.ttl, 'none') AS ttl,
         CASE WHEN coalesce(a.skill_listing, 0) > 0 THEN 'yes' ELSE 'no' END AS has_skill_listing,
         coalesce(a.skill_listing, 0)::INTEGER AS skill_listing,
         CASE WHEN c.rounds <= 0 THEN '0' WHEN c.rounds <= 1 THEN '1' WHEN c.rounds <= 3 THEN '2-3' WHEN c.rounds <= 9 THEN '4-9' ELSE '10+' END AS rounds_bucket,
         c.definition, c.rounds::INTEGER AS rounds,
         coalesce(r.requests, 0) AS requests, coalesce(r.unpriced_requests, 0) AS unpriced_requests, r.weight, r.usd, r.write_weight, r.read_weight,
         coalesce(r.read_tokens, 0) AS read_tokens, coalesce(r.prompt_tokens, 0) AS prompt_tokens,
         coalesce(a.reattachments, 0) AS reattachments,
         -- in the days: a chain with a request on them; a chain with no request at all by its first line's day
         CASE WHEN r.chain_id IS NOT NULL THEN true WHEN q.chain_id IS NOT NULL THEN false END AS has_requests_in_days
  FROM chains c LEFT JOIN req r USING (chain_id) LEFT JOIN any_req q USING (chain_id) LEFT JOIN model_of m USING (chain_id) LEFT JOIN att a USING (chain_id)),
pcd AS (SELECT *, coalesce(iso_year(day_date) || strftime(day_date, '-%m-%d'), 'unknown') AS day FROM pc),
scoped AS (
  SELECT * EXCLUDE (has_requests_in_days, day_date) FROM pcd
  WHERE coalesce(has_requests_in_days, (day_date IS NOT NULL OR ($since IS NULL AND $until IS NULL))
                                       AND ($since IS NULL OR day_date >= CAST($since AS DATE)) AND ($until IS NULL OR day_date <= CAST($until AS DATE)))
    AND ($project IS NULL OR contains(fold_case(project), fold_case($project)))
    AND (coalesce($kind, 'all') = 'all' OR (CASE WHEN kind = 'main' THEN 'main' ELSE 'subagent' END) = $kind))`;

export function crosstabSql(rows: Dimension, cols: Dimension, measure: Measure): string {
  return `${PER_CHAIN}
SELECT ${DIMENSIONS[rows]} AS r, ${DIMENSIONS[cols]} AS c, grouping(${DIMENSIONS[rows]}) AS r_total, grouping(${DIMENSIONS[cols]}) AS c_total,
       ${MEASURES[measure]} AS value, count(*) AS chains, count(*) FILTER (WHERE skill_listing = rounds AND rounds > 0) AS matching,
       sum(unpriced_requests) AS unpriced
FROM (SELECT * FROM scoped)
GROUP BY GROUPING SETS ((${DIMENSIONS[rows]}, ${DIMENSIONS[cols]}), (${DIMENSIONS[rows]}), (${DIMENSIONS[cols]}), ())`;
}

export async function crosstab(source: SqlSource, o: CrosstabOptions): Promise<CrosstabResult> {
  const rowsDim = parseDimension(o.rows, '--rows');
  const colsDim = parseDimension(o.cols, '--cols');
  const measure = parseMeasure(o.measure ?? 'chains');
  if (rowsDim === colsDim) throw new UsageError(`--rows and --cols are both ${rowsDim}`, 'a cross-tab needs two different dimensions');
  const out = await source.all(crosstabSql(rowsDim, colsDim, measure), { tz: o.timezone, since: o.since ?? null, until: o.until ?? null, project: o.project ?? null, kind: o.kind ?? 'all' });
  const cells: CrosstabCell[] = [];
  const equal: EqualRounds[] = [];
  const rowSet = new Set<DimValue>();
  const colSet = new Set<DimValue>();
  for (const x of out) {
    const row = x.r_total === 1 ? null : (x.r as DimValue);
    const col = x.c_total === 1 ? null : (x.c as DimValue);
    if (row !== null) rowSet.add(row);
    if (col !== null) colSet.add(col);
    cells.push({ row, col, value: x.value === null || x.value === undefined ? null : Number(x.value), unpriced_requests: Number(x.unpriced ?? 0) });
    if (row !== null && col !== null) {
      const chains = Number(x.chains);
      const matching = Number(x.matching);
      equal.push({ row, col, chains, matching, equal: chains > 0 && matching === chains });
    }
  }
  const rows = sortValues([...rowSet], rowsDim);
  const cols = sortValues([...colSet], colsDim);
  const key = (v: DimValue | null, order: DimValue[]) => (v === null ? order.length : order.indexOf(v));
  cells.sort((a, b) => key(a.row, rows) - key(b.row, rows) || key(a.col, cols) - key(b.col, cols));
  equal.sort((a, b) => key(a.row, rows) - key(b.row, rows) || key(a.col, cols) - key(b.col, cols));
  return { rows_dimension: rowsDim, cols_dimension: colsDim, measure, kind: o.kind ?? 'all', rows, cols, cells, attachments_equal_rounds: equal };
}

/** A definition's place in DEFINITIONS; a value not among them after them all. Example: definitionRank('lost') = 2 */
export function definitionRank(v: DimValue): number {
  const i = (DEFINITIONS as readonly DimValue[]).indexOf(v);
  return i < 0 ? DEFINITIONS.length : i;
}

/**
 * The first and last day (in the time zone) of the requests of the projects that contain `project`
 * (all without it), on any day; null when there are none: a cross-tab whose --since/--until chose
 * no chain says which days it could have counted, as summary's filters line does.
 * Example: requests on 2026-02-11 and 2026-02-12 → { first: '2026-02-11', last: '2026-02-12' }.
 */
export async function requestDays(source: SqlSource, o: { timezone: string; project?: string | null }): Promise<{ first: string; last: string } | null> {
  const [row] = await source.all(
    `SELECT iso_year(min(d)) || strftime(min(d), '-%m-%d') AS first, iso_year(max(d)) || strftime(max(d), '-%m-%d') AS last
     FROM (SELECT CAST(timezone($tz, r.ts) AS DATE) AS d FROM requests r JOIN chains c USING (chain_id)
           WHERE $project IS NULL OR contains(fold_case(coalesce(c.project, 'unknown')), fold_case($project)))`,
    { tz: o.timezone, project: o.project ?? null },
  );
  return row?.first === null || row?.first === undefined ? null : { first: String(row.first), last: String(row.last) };
}

function sortValues(values: DimValue[], dim: Dimension): DimValue[] {
  if (dim === 'rounds_bucket') return values.sort((a, b) => BUCKETS.indexOf(String(a)) - BUCKETS.indexOf(String(b)));
  // most to least certain (main, resolved, lost, unknown), as a reader weighs them; alphabetical put lost first
  if (dim === 'definition') return values.sort((a, b) => definitionRank(a) - definitionRank(b) || (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));
  // days in time order, 'unknown' last: as text, '+010000-01-01' and '-000001-12-31' came before '2026-…'
  if (dim === 'day') {
    const isDay = (v: DimValue) => /^[+-]?\d{4,6}-\d{2}-\d{2}$/.test(String(v));
    return values.sort((a, b) => Number(isDay(b)) - Number(isDay(a)) || (isDay(a) ? compareDays(String(a), String(b)) : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));
  }
  return values.sort((a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : byName(String(a), String(b))));
}

/**
 * Names in alphabetical order whatever their case, then by code point (a fixed order on every machine:
 * toLowerCase does not depend on the locale): `compaction, Explore, fork, Plan`. By code point alone,
 * every capitalised name came first (`Explore, Plan, compaction, fork`).
 */
function byName(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}
