-- hourly: requests, tokens, weight and USD per UTC hour (the input to 5-hour blocks).
-- Purpose: `cachelens blocks` walks these hours to form 5-hour windows (SPEC §7).
-- Inputs: table requests; $since/$until/$project/$tz as in summary.sql.
-- Output columns: hour_ms (epoch ms of the UTC hour), first_ms, last_ms, requests, tokens, weight, usd, models.
-- Example row: hour_ms=1770908400000, first_ms=1770912145000, last_ms=1770915540000, requests=41,
--   tokens=2210331, weight=512004.2, usd=2.56, models=['claude-opus-4-6']
WITH r AS (SELECT *, strftime(timezone($tz, ts), '%Y-%m-%d') AS day FROM requests),
f AS (SELECT * FROM r WHERE ($since IS NULL OR day >= $since) AND ($until IS NULL OR day <= $until)
        AND ($project IS NULL OR contains(lower(project), lower($project))))
SELECT (floor(t / 3600000) * 3600000)::BIGINT AS hour_ms, min(t) AS first_ms, max(t) AS last_ms,
       count(*) AS requests, sum(input + output + cache_write + cache_read) AS tokens,
       coalesce(sum(weight::DECIMAL(38, 15))::DOUBLE, 0) AS weight, coalesce(sum(usd::DECIMAL(38, 15))::DOUBLE, 0) AS usd, list(DISTINCT model ORDER BY model) AS models
FROM f GROUP BY 1 ORDER BY 1;
