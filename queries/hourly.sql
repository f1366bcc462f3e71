-- hourly: requests, tokens (and each token field), weight and USD per UTC hour (the input to 5-hour blocks).
-- Purpose: `cachelens blocks` walks these hours to form 5-hour windows (SPEC §7).
-- Inputs: table requests; $since/$until/$project/$tz as in summary.sql.
-- Blocks are the account's windows: they are formed over every request of the invocation's logs
--   (all_first_ms, all_last_ms: every hour with a request), and the filters choose what is counted in
--   them (first_ms, last_ms and the sums: the requests in scope; NULL / 0 in hours with none). A
--   filter that left out the request that opened a window would otherwise move the window.
-- Output columns: hour_ms (epoch ms of the UTC hour), all_first_ms, all_last_ms, first_ms, last_ms, requests,
--   tokens, input, output, cache_write_5m, cache_write_1h, cache_read (tokens is their sum), weight, usd (NULL when
--   none of the hour's requests in scope has a price), unpriced_requests, models.
-- Weights are summed as DECIMAL(38, 6), USD as DECIMAL(38, 12), each request rounded to those decimals first:
--   exact in any order, and without a DOUBLE's noise (cost_by.sql says why).
-- Example row: hour_ms=1770908400000, all_first_ms=1770912145000, all_last_ms=1770915540000,
--   first_ms=1770912145000, last_ms=1770915540000, requests=41, tokens=2210331, input=412, output=20188,
--   cache_write_5m=180731, cache_write_1h=0, cache_read=2009000, weight=512004.2, usd=2.56,
--   unpriced_requests=0, models=['claude-opus-4-6']
WITH r AS (SELECT *, CAST(timezone($tz, ts) AS DATE) AS day FROM requests),
f AS (SELECT *, ($since IS NULL OR day >= CAST($since AS DATE)) AND ($until IS NULL OR day <= CAST($until AS DATE))
        AND ($project IS NULL OR contains(fold_case(project), fold_case($project))) AS in_scope FROM r)
SELECT (floor(t / 3600000) * 3600000)::BIGINT AS hour_ms, min(t) AS all_first_ms, max(t) AS all_last_ms,
       min(t) FILTER (WHERE in_scope) AS first_ms, max(t) FILTER (WHERE in_scope) AS last_ms,
       count(*) FILTER (WHERE in_scope) AS requests,
       coalesce(sum(input::BIGINT + output + cache_write + cache_read) FILTER (WHERE in_scope), 0) AS tokens,
       coalesce(sum(input) FILTER (WHERE in_scope), 0) AS input,
       coalesce(sum(output) FILTER (WHERE in_scope), 0) AS output,
       coalesce(sum(cache_write_5m) FILTER (WHERE in_scope), 0) AS cache_write_5m,
       coalesce(sum(cache_write_1h) FILTER (WHERE in_scope), 0) AS cache_write_1h,
       coalesce(sum(cache_read) FILTER (WHERE in_scope), 0) AS cache_read,
       sum(weight::DECIMAL(38, 6)) FILTER (WHERE in_scope)::DOUBLE AS weight,
       sum(usd::DECIMAL(38, 12)) FILTER (WHERE in_scope)::DOUBLE AS usd,
       count(*) FILTER (WHERE in_scope AND usd IS NULL) AS unpriced_requests,
       coalesce(list(DISTINCT model ORDER BY model) FILTER (WHERE in_scope), []) AS models
FROM f GROUP BY 1 ORDER BY 1;
