-- cost_by: weight and USD by day, project, model or agent type.
-- Purpose: where the money went, one grouping at a time (SPEC §2): every ranking by weight and USD, never raw tokens.
-- Inputs: requests, chains (a store, or a Parquet export); $by: 'day' (default) | 'project' | 'model' | 'agent_type';
--   $tz: IANA time zone for days (default UTC); $since / $until: 'YYYY-MM-DD' in $tz, or NULL;
--   $project: substring of the project path, or NULL.
-- Output columns: grp, requests, chains, weight_input, weight_output, weight_write_5m, weight_write_1h, weight_read,
--   weight (priced requests only), usd (priced requests only; the weights and USD are NULL for a group none of whose
--   requests has a price: unknown, never 0), unpriced_requests. Days in order; else by USD, most first.
-- Weights are summed as DECIMAL(38, 6), USD as DECIMAL(38, 12): exact, so the same rows give the same sums in any order
--   (a DOUBLE sum's last digits depend on the order DuckDB's threads add them in). Each request's DOUBLE is rounded
--   to those decimals first: a weight has at most 2 – 4 (tokens × price ratios such as 1.25 and 0.1), a USD amount at
--   most 10, and a DOUBLE cast with more (DECIMAL(38, 15)) kept its binary expansion, 0.1 × 3754072 as
--   375407.199999999969…, which summed and printed as 375407.19999999995 instead of 375407.2.
-- Example row: grp='2026-02-12', requests=291, chains=7, weight_input=1204, weight_output=240500, weight_write_5m=1366641.25,
--   weight_write_1h=0, weight_read=931044.4, weight=2539389.65, usd=12.70, unpriced_requests=0
WITH r AS (
  SELECT r.*, coalesce(c.agent_type, 'unknown') AS agent_type,
         CAST(timezone(coalesce($tz, 'UTC'), r.ts) AS DATE) AS day_date
  FROM requests r LEFT JOIN chains c USING (chain_id)
),
f AS (
  SELECT *, CASE coalesce($by, 'day') WHEN 'day' THEN iso_year(day_date) || strftime(day_date, '-%m-%d') WHEN 'project' THEN project WHEN 'model' THEN model
                 WHEN 'agent_type' THEN agent_type
                 ELSE error('$by must be day, project, model or agent_type') END AS grp
  FROM r
  WHERE ($since IS NULL OR day_date >= CAST($since AS DATE)) AND ($until IS NULL OR day_date <= CAST($until AS DATE))
    AND ($project IS NULL OR contains(fold_case(project), fold_case($project)))
)
SELECT grp, count(*) AS requests, count(DISTINCT chain_id) AS chains,
       sum(weight_input::DECIMAL(38, 6))::DOUBLE AS weight_input, sum(weight_output::DECIMAL(38, 6))::DOUBLE AS weight_output,
       sum(weight_write_5m::DECIMAL(38, 6))::DOUBLE AS weight_write_5m, sum(weight_write_1h::DECIMAL(38, 6))::DOUBLE AS weight_write_1h,
       sum(weight_read::DECIMAL(38, 6))::DOUBLE AS weight_read,
       sum(weight::DECIMAL(38, 6))::DOUBLE AS weight, sum(usd::DECIMAL(38, 12))::DOUBLE AS usd,
       count(*) FILTER (WHERE weight IS NULL) AS unpriced_requests
FROM f
GROUP BY grp
ORDER BY CASE WHEN coalesce($by, 'day') = 'day' THEN min(day_date) END, usd DESC NULLS LAST, grp;
