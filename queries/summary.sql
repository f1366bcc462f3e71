-- summary: totals of the requests in scope, one row per group.
-- Purpose: what `cachelens summary` prints: tokens by component, weight and USD, by a chosen grouping.
-- Inputs: table `requests` (de-duplicated, priced; the files under this invocation's roots);
--   $group: 'total' | 'model' | 'project' | 'day', or NULL for all four at once (one pass over the requests:
--   `cachelens summary` made four); $tz: IANA time zone for days (e.g. 'UTC');
--   $since / $until: 'YYYY-MM-DD' days in $tz, or NULL; $project: substring of the project, or NULL.
-- Output columns: grouping (the $group of the row), grp, requests, input, output, cache_write_5m, cache_write_1h,
--   cache_read, weight (priced requests only; NULL when none is priced: unknown, not $0), usd (likewise),
--   unpriced_requests, and weight_exact and usd_exact, the sums of the priced requests as exact decimal text ('0…' when none is) (what `cachelens summary` shows, and what an append run adds its
--   new requests to without DuckDB: src/ingest/delta.ts). Rows by grouping; days in order, other groups by USD, most first.
-- A day is YYYY-MM-DD; beyond years 0000–9999 (a time of 9999-12-31 in a zone behind UTC) ISO 8601's expanded
--   form, a sign and six digits, as JavaScript writes it (+010000-01-01, -000001-12-31); days compare as dates.
-- Weights and USD are summed as DECIMAL(38, 15): exact, so the same rows give the same sums in any order
--   (a DOUBLE sum's last digits depend on the order DuckDB's threads add them in).
-- Example row: grouping='model', grp='claude-opus-4-6', requests=129, input=274, output=79300, cache_write_5m=118098,
--   cache_write_1h=1105790, cache_read=5370668, weight=3293043.3, usd=16.4652165, unpriced_requests=0,
--   weight_exact='3293043.300000000010240', usd_exact='16.465216500000000'
--   (`cachelens query summary sample-logs --param group=model`, the sample corpus; weight_exact is the exact sum
--   of each request's DOUBLE weight cast to DECIMAL(38, 15), a cast that is not exact past ~16 significant
--   digits: 8956.8 becomes 8956.799999999998976, hence the digits past the 10th decimal)
-- A request's day in $tz: ICU's time zone conversion costs ~175 ns a row (1 GB of logs' 148,000 requests: ~26 of
--   the query's 50 – 80 ms), so it is made once per quarter hour of UTC the requests fall in, at the quarter's first
--   and last microsecond; where both give the same UTC offset, every request in the quarter has it (no zone changes
--   its offset twice within 15 minutes), and its day is plain arithmetic. Other quarters (an offset change inside, or
--   before 1970) convert each request. The same days as converting every request: checked for all 533 zones DuckDB
--   knows, over 1.9 million instants of 2024 – 2026 and 1965 – 1975 (BENCHMARKS.md, Append, session 30). In an
--   append run on 1 GB the query took 81 → 65 ms; on 10 GB, alone, ~400 → 310 – 410 ms. `requests` is read twice
--   rather than through one CTE, which DuckDB then materialized (112 ms).
WITH quarter AS (
  SELECT q, epoch_us(timezone($tz, make_timestamptz(q * 900000000))) - q * 900000000 AS o0,
         epoch_us(timezone($tz, make_timestamptz(q * 900000000 + 899999999))) - (q * 900000000 + 899999999) AS o1
  FROM (SELECT DISTINCT epoch_us(ts) // 900000000 AS q FROM requests WHERE epoch_us(ts) >= 0)
),
f AS (
  SELECT r.*, CASE WHEN quarter.o0 = quarter.o1 AND r.us + quarter.o0 >= 0
                   THEN DATE '1970-01-01' + CAST((r.us + quarter.o0) // 86400000000 AS INTEGER)
                   ELSE CAST(timezone($tz, r.ts) AS DATE) END AS day_date
  FROM (SELECT *, epoch_us(ts) AS us FROM requests) r LEFT JOIN quarter ON quarter.q = r.us // 900000000
),
g AS (
  SELECT CASE WHEN grouping(model) = 0 THEN 'model' WHEN grouping(project) = 0 THEN 'project' WHEN grouping(day_date) = 0 THEN 'day' ELSE 'total' END AS grouping,
         CASE WHEN grouping(model) = 0 THEN model WHEN grouping(project) = 0 THEN project WHEN grouping(day_date) = 0 THEN iso_year(day_date) || strftime(day_date, '-%m-%d') ELSE 'total' END AS grp,
         day_date,
         count(*) AS requests,
         coalesce(sum(input), 0) AS input,
         coalesce(sum(output), 0) AS output,
         coalesce(sum(cache_write_5m), 0) AS cache_write_5m,
         coalesce(sum(cache_write_1h), 0) AS cache_write_1h,
         coalesce(sum(cache_read), 0) AS cache_read,
         CASE WHEN count(weight) = 0 AND count(*) > 0 THEN NULL ELSE coalesce(sum(weight::DECIMAL(38, 15))::DOUBLE, 0) END AS weight,
         CASE WHEN count(usd) = 0 AND count(*) > 0 THEN NULL ELSE coalesce(sum(usd::DECIMAL(38, 15))::DOUBLE, 0) END AS usd,
         count(*) FILTER (WHERE weight IS NULL) AS unpriced_requests,
         coalesce(sum(weight::DECIMAL(38, 15)), 0)::VARCHAR AS weight_exact,
         coalesce(sum(usd::DECIMAL(38, 15)), 0)::VARCHAR AS usd_exact
  FROM f
  WHERE ($since IS NULL OR day_date >= CAST($since AS DATE)) AND ($until IS NULL OR day_date <= CAST($until AS DATE))
    AND ($project IS NULL OR contains(fold_case(project), fold_case($project)))
  GROUP BY GROUPING SETS ((model), (project), (day_date), ())
)
SELECT * EXCLUDE (day_date) FROM g WHERE $group IS NULL OR grouping = $group
ORDER BY grouping, day_date, usd DESC, grp;
