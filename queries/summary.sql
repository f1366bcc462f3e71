-- summary: totals of the requests in scope, one row per group.
-- Purpose: what `cachelens summary` prints: tokens by component, weight and USD, by a chosen grouping.
-- Inputs: table `requests` (de-duplicated, priced; the files under this invocation's roots);
--   $group: 'total' | 'model' | 'project' | 'day', or NULL for all four at once (one pass over the requests:
--   `cachelens summary` made four); $tz: IANA time zone for days (e.g. 'UTC');
--   $since / $until: 'YYYY-MM-DD' days in $tz, or NULL; $project: substring of the project, or NULL.
-- Output columns: grouping (the $group of the row), grp, requests, input, output, cache_write_5m, cache_write_1h,
--   cache_read, weight (priced requests only), usd (priced requests only), unpriced_requests. Rows by grouping;
--   days in order, other groups by USD, most first.
-- Weights and USD are summed as DECIMAL(38, 15): exact, so the same rows give the same sums in any order
--   (a DOUBLE sum's last digits depend on the order DuckDB's threads add them in).
-- Example row: grouping='model', grp='claude-opus-4-6', requests=139, input=1204, output=48211, cache_write_5m=1093313,
--   cache_write_1h=0, cache_read=9310444, weight=2609813.1, usd=13.05, unpriced_requests=0
WITH f AS (
  SELECT *, strftime(timezone($tz, ts), '%Y-%m-%d') AS day FROM requests
),
g AS (
  SELECT CASE WHEN grouping(model) = 0 THEN 'model' WHEN grouping(project) = 0 THEN 'project' WHEN grouping(day) = 0 THEN 'day' ELSE 'total' END AS grouping,
         CASE WHEN grouping(model) = 0 THEN model WHEN grouping(project) = 0 THEN project WHEN grouping(day) = 0 THEN day ELSE 'total' END AS grp,
         count(*) AS requests,
         coalesce(sum(input), 0) AS input,
         coalesce(sum(output), 0) AS output,
         coalesce(sum(cache_write_5m), 0) AS cache_write_5m,
         coalesce(sum(cache_write_1h), 0) AS cache_write_1h,
         coalesce(sum(cache_read), 0) AS cache_read,
         coalesce(sum(weight::DECIMAL(38, 15))::DOUBLE, 0) AS weight,
         coalesce(sum(usd::DECIMAL(38, 15))::DOUBLE, 0) AS usd,
         count(*) FILTER (WHERE weight IS NULL) AS unpriced_requests
  FROM f
  WHERE ($since IS NULL OR day >= $since) AND ($until IS NULL OR day <= $until)
    AND ($project IS NULL OR contains(lower(project), lower($project)))
  GROUP BY GROUPING SETS ((model), (project), (day), ())
)
SELECT * FROM g WHERE $group IS NULL OR grouping = $group
ORDER BY grouping, CASE WHEN grouping = 'day' THEN grp END, usd DESC, grp;
