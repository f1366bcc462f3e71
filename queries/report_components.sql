-- report_components: weight, USD and tokens per cost component, grouped by day, project, model or agent type.
-- Purpose: the report's "cost over time" and "cost by" charts (long format: one row per group and component).
-- Inputs: tables requests, chains; $tz: IANA time zone of the days (NULL: UTC); $since / $until: 'YYYY-MM-DD' days in
--   $tz, or NULL; $project: substring of the project, or NULL (the requests counted, as summary.sql counts them);
--   $group: 'day' | 'project' | 'model' | 'agent_type', or NULL for all four
--   at once (one pass over the requests: the report's four charts took four); $top: NULL for every group, or N to
--   keep only the N projects, models and agent types with the most USD (then weight, then name), the rest of each
--   summed into one group whose grp is NULL (a group without a name is always among the rest). Days are never folded.
-- Output columns: grouping (the $group of the row), grp, groups (how many groups the row sums: 1, or the number
--   folded into the rest), unpriced_groups (how many of them have no priced request: the keys a chart of USD cannot draw),
--   unpriced_names (those groups' names, in name order, when at most 3 of them have a name; else NULL: few are named,
--   many counted),
--   component ('input' | 'output' | 'write5m' | 'write1h' | 'read'),
--   tokens, weight, usd (weight and usd over priced requests; usd NULL when the group has no priced request),
--   unpriced_requests (the group's requests without a price, on each of its component rows: its weight and usd leave them
--   out, so a figure over them is marked +? as `summary` marks it), unpriced_tokens (the component's tokens of those requests).
--   Weights are summed as DECIMAL(38, 6), USD as DECIMAL(38, 12), each request rounded to those decimals first:
--   exact, so in any order of the rows, and without a DOUBLE's noise (cost_by.sql says why).
-- Example rows: grouping='day', grp='2026-02-12', groups=1, component='read', tokens=28988297, weight=2898829.7, usd=14.49;
--   with $top = 12 over 2,236 projects, grouping='project', grp=NULL, groups=2224, component='read', …
WITH r AS (
  SELECT *, iso_year(day_date) || strftime(day_date, '-%m-%d') AS day FROM (
    SELECT q.*, CAST(timezone(coalesce($tz, 'UTC'), q.ts) AS DATE) AS day_date, coalesce(c.agent_type, 'unknown') AS agent_type
    FROM requests q LEFT JOIN chains c USING (chain_id))
  WHERE ($since IS NULL OR day_date >= CAST($since AS DATE)) AND ($until IS NULL OR day_date <= CAST($until AS DATE))
    AND ($project IS NULL OR contains(fold_case(project), fold_case($project)))
),
-- each grouping's sums of every component at once (one row per group), then one row per component
wide AS (
  SELECT CASE WHEN grouping(day) = 0 THEN 'day' WHEN grouping(project) = 0 THEN 'project' WHEN grouping(model) = 0 THEN 'model' ELSE 'agent_type' END AS grouping,
         CASE WHEN grouping(day) = 0 THEN day WHEN grouping(project) = 0 THEN project WHEN grouping(model) = 0 THEN model ELSE agent_type END AS grp,
         sum(input) AS t_input, sum(weight_input::DECIMAL(38, 6)) AS w_input, sum((weight_input * usd_per_weight)::DECIMAL(38, 12)) AS u_input,
         sum(output) AS t_output, sum(weight_output::DECIMAL(38, 6)) AS w_output, sum((weight_output * usd_per_weight)::DECIMAL(38, 12)) AS u_output,
         sum(cache_write_5m) AS t_write5m, sum(weight_write_5m::DECIMAL(38, 6)) AS w_write5m, sum((weight_write_5m * usd_per_weight)::DECIMAL(38, 12)) AS u_write5m,
         sum(cache_write_1h) AS t_write1h, sum(weight_write_1h::DECIMAL(38, 6)) AS w_write1h, sum((weight_write_1h * usd_per_weight)::DECIMAL(38, 12)) AS u_write1h,
         sum(cache_read) AS t_read, sum(weight_read::DECIMAL(38, 6)) AS w_read, sum((weight_read * usd_per_weight)::DECIMAL(38, 12)) AS u_read,
         count(*) FILTER (WHERE weight IS NULL) AS unpriced_requests,
         coalesce(sum(input) FILTER (WHERE weight IS NULL), 0) AS x_input, coalesce(sum(output) FILTER (WHERE weight IS NULL), 0) AS x_output,
         coalesce(sum(cache_write_5m) FILTER (WHERE weight IS NULL), 0) AS x_write5m, coalesce(sum(cache_write_1h) FILTER (WHERE weight IS NULL), 0) AS x_write1h,
         coalesce(sum(cache_read) FILTER (WHERE weight IS NULL), 0) AS x_read
  FROM r
  GROUP BY GROUPING SETS ((day), (project), (model), (agent_type))
),
-- with $top, each grouping but the days keeps its $top groups with the most USD; the rest become one group
kept AS (
  SELECT *, grouping = 'day' OR $top IS NULL OR (grp IS NOT NULL AND row_number() OVER (
           PARTITION BY grouping
           ORDER BY grp IS NULL, coalesce(u_input, 0) + coalesce(u_output, 0) + coalesce(u_write5m, 0) + coalesce(u_write1h, 0) + coalesce(u_read, 0) DESC,
                    coalesce(w_input, 0) + coalesce(w_output, 0) + coalesce(w_write5m, 0) + coalesce(w_write1h, 0) + coalesce(w_read, 0) DESC, grp
         ) <= $top) AS shown
  FROM wide
),
folded AS (
  SELECT grouping, CASE WHEN shown THEN grp END AS grp, count(*) AS groups, count(*) FILTER (WHERE u_input IS NULL) AS unpriced_groups,
         CASE WHEN count(grp) FILTER (WHERE u_input IS NULL) BETWEEN 1 AND 3 THEN list(grp ORDER BY grp) FILTER (WHERE u_input IS NULL AND grp IS NOT NULL) END AS unpriced_names,
         sum(t_input) AS t_input, sum(w_input) AS w_input, sum(u_input) AS u_input,
         sum(t_output) AS t_output, sum(w_output) AS w_output, sum(u_output) AS u_output,
         sum(t_write5m) AS t_write5m, sum(w_write5m) AS w_write5m, sum(u_write5m) AS u_write5m,
         sum(t_write1h) AS t_write1h, sum(w_write1h) AS w_write1h, sum(u_write1h) AS u_write1h,
         sum(t_read) AS t_read, sum(w_read) AS w_read, sum(u_read) AS u_read,
         sum(unpriced_requests) AS unpriced_requests, sum(x_input) AS x_input, sum(x_output) AS x_output,
         sum(x_write5m) AS x_write5m, sum(x_write1h) AS x_write1h, sum(x_read) AS x_read
  FROM kept
  -- a shown group is one row of its own; the rest of a grouping one row together
  GROUP BY grouping, shown, CASE WHEN shown THEN grp END
),
g AS (
  SELECT grouping, grp, groups, unpriced_groups, unpriced_names, 'input' AS component, t_input AS tokens, coalesce(w_input::DOUBLE, 0) AS weight, u_input::DOUBLE AS usd, unpriced_requests, x_input AS unpriced_tokens FROM folded
  UNION ALL SELECT grouping, grp, groups, unpriced_groups, unpriced_names, 'output', t_output, coalesce(w_output::DOUBLE, 0), u_output::DOUBLE, unpriced_requests, x_output FROM folded
  UNION ALL SELECT grouping, grp, groups, unpriced_groups, unpriced_names, 'write5m', t_write5m, coalesce(w_write5m::DOUBLE, 0), u_write5m::DOUBLE, unpriced_requests, x_write5m FROM folded
  UNION ALL SELECT grouping, grp, groups, unpriced_groups, unpriced_names, 'write1h', t_write1h, coalesce(w_write1h::DOUBLE, 0), u_write1h::DOUBLE, unpriced_requests, x_write1h FROM folded
  UNION ALL SELECT grouping, grp, groups, unpriced_groups, unpriced_names, 'read', t_read, coalesce(w_read::DOUBLE, 0), u_read::DOUBLE, unpriced_requests, x_read FROM folded
)
SELECT * FROM g WHERE $group IS NULL OR grouping = $group
-- days in time order: as text, '+010000-01-01' and '-000001-12-31' (years past 9999, before 0000) come before '2026-…'
ORDER BY grouping, CASE WHEN grouping = 'day' THEN TRY_CAST(grp[:-7] AS INTEGER) END, grp NULLS LAST, component;
