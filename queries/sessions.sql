-- sessions: one row per session, most expensive first.
-- Purpose: `cachelens sessions`.
-- Inputs: tables requests, chains; $tz, $since, $until, $project as in summary.sql.
-- Output columns: session_id, project, first ('YYYY-MM-DD HH:MM' in $tz), last, first_request (the first
--   request's timestamp, ISO 8601 in UTC to the millisecond), last_request, requests, chains, subagents,
--   input, output, cache_write_5m, cache_write_1h, cache_read, weight, usd (of priced requests; NULL when
--   none has a price: unknown, never 0), unpriced_requests. Years beyond 0000–9999 are written as ISO 8601's expanded
--   form, a sign and six digits, as JavaScript writes them (and blocks give theirs): +010000-01-01T04:00:00.000Z.
-- Weights are summed as DECIMAL(38, 6), USD as DECIMAL(38, 12), each request rounded to those decimals first:
--   exact in any order, and without a DOUBLE's noise (cost_by.sql says why).
-- Example row: session_id='4d5611e5-…', project='/home/USER/projects/spotter', first='2026-02-12 16:02',
--   last='2026-02-12 21:03', first_request='2026-02-12T16:02:41.118Z', last_request=…, requests=150, chains=3, subagents=2, …, weight=3140212.5, usd=15.70
WITH f AS (SELECT * FROM requests
           WHERE ($since IS NULL OR CAST(timezone($tz, ts) AS DATE) >= CAST($since AS DATE))
             AND ($until IS NULL OR CAST(timezone($tz, ts) AS DATE) <= CAST($until AS DATE))
             AND ($project IS NULL OR contains(fold_case(project), fold_case($project)))),
s AS (
SELECT session_id, any_value(project) AS project,
       timezone($tz, min(ts)) AS first_local, timezone($tz, max(ts)) AS last_local,
       -- from t, the exact milliseconds (a store made before schema 20 held a ts a millisecond early past year ~2255)
       make_timestamp(CAST(min(t) AS BIGINT) * 1000) AS first_utc, make_timestamp(CAST(max(t) AS BIGINT) * 1000) AS last_utc,
       count(*) AS requests, count(DISTINCT chain_id) AS chains,
       -- subagents and v1.x inline sidechains (which have no agent id): every chain but the main thread
       count(DISTINCT chain_id) FILTER (WHERE chain_id IN (SELECT chain_id FROM chains WHERE kind <> 'main')) AS subagents,
       sum(input) AS input, sum(output) AS output, sum(cache_write_5m) AS cache_write_5m,
       sum(cache_write_1h) AS cache_write_1h, sum(cache_read) AS cache_read,
       sum(weight::DECIMAL(38, 6))::DOUBLE AS weight, sum(usd::DECIMAL(38, 12))::DOUBLE AS usd,
       count(*) FILTER (WHERE usd IS NULL) AS unpriced_requests
FROM f GROUP BY session_id)
SELECT session_id, project,
       iso_year(first_local) || strftime(first_local, '-%m-%d %H:%M') AS first,
       iso_year(last_local) || strftime(last_local, '-%m-%d %H:%M') AS last,
       iso_year(first_utc) || strftime(first_utc, '-%m-%dT%H:%M:%S.%gZ') AS first_request,
       iso_year(last_utc) || strftime(last_utc, '-%m-%dT%H:%M:%S.%gZ') AS last_request,
       requests, chains, subagents, input, output, cache_write_5m, cache_write_1h, cache_read, weight, usd, unpriced_requests
FROM s ORDER BY usd DESC NULLS LAST, session_id;
