-- sessions: one row per session, most expensive first.
-- Purpose: `cachelens sessions`.
-- Inputs: tables requests, chains; $tz, $since, $until, $project as in summary.sql.
-- Output columns: session_id, project, first ('YYYY-MM-DD HH:MM' in $tz), last, first_request (the first
--   request's timestamp, ISO 8601 in UTC to the millisecond), last_request, requests, chains, subagents,
--   input, output, cache_write_5m, cache_write_1h, cache_read, weight, usd (of priced requests; NULL when
--   none has a price: unknown, never 0), unpriced_requests.
-- Weights are summed as DECIMAL(38, 6), USD as DECIMAL(38, 12), each request rounded to those decimals first:
--   exact in any order, and without a DOUBLE's noise (cost_by.sql says why).
-- Example row: session_id='4d5611e5-…', project='/home/USER/projects/spotter', first='2026-02-12 16:02',
--   last='2026-02-12 21:03', first_request='2026-02-12T16:02:41.118Z', last_request=…, requests=150, chains=3, subagents=2, …, weight=3140212.5, usd=15.70
WITH r AS (SELECT *, strftime(timezone($tz, ts), '%Y-%m-%d') AS day FROM requests),
f AS (SELECT * FROM r WHERE ($since IS NULL OR day >= $since) AND ($until IS NULL OR day <= $until)
        AND ($project IS NULL OR contains(lower(project), lower($project))))
SELECT session_id, any_value(project) AS project,
       strftime(timezone($tz, min(ts)), '%Y-%m-%d %H:%M') AS first,
       strftime(timezone($tz, max(ts)), '%Y-%m-%d %H:%M') AS last,
       strftime(timezone('UTC', min(ts)), '%Y-%m-%dT%H:%M:%S.%gZ') AS first_request,
       strftime(timezone('UTC', max(ts)), '%Y-%m-%dT%H:%M:%S.%gZ') AS last_request,
       count(*) AS requests, count(DISTINCT chain_id) AS chains,
       -- subagents and v1.x inline sidechains (which have no agent id): every chain but the main thread
       count(DISTINCT chain_id) FILTER (WHERE chain_id IN (SELECT chain_id FROM chains WHERE kind <> 'main')) AS subagents,
       sum(input) AS input, sum(output) AS output, sum(cache_write_5m) AS cache_write_5m,
       sum(cache_write_1h) AS cache_write_1h, sum(cache_read) AS cache_read,
       sum(weight::DECIMAL(38, 6))::DOUBLE AS weight, sum(usd::DECIMAL(38, 12))::DOUBLE AS usd,
       count(*) FILTER (WHERE usd IS NULL) AS unpriced_requests
FROM f GROUP BY session_id ORDER BY usd DESC NULLS LAST, session_id;
