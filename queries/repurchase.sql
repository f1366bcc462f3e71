-- repurchase: chains ranked by re-purchase — re-buying their whole context every round (SPEC §3).
-- Purpose: the cache anatomy's classes in SQL (cold / growth / expiry / break per request, as `cachelens anatomy`
--   computes them) and the re-purchase rule over them: at least 3 rounds, the reads of every round's first request
--   within 1,024 tokens of their median, and every round's first request after the first rewriting ≥ 0.8 × the
--   cached prefix before it. Flagged chains first, ranked by waste (its USD, then its weight; chains with no priced request last): expiry and
--   break rewrites beyond what reading the same tokens would have cost (rewrites at the write price the request paid per token).
-- Inputs: requests, chains; $jitter: rewrites below this many tokens are breakpoint jitter (default 1024);
--   $all: 'true' to list every chain, not only flagged ones; $project: substring of the project path, or NULL;
--   $tz, $since, $until: the chains with a request on a day (in $tz, NULL: UTC) within $since … $until, as
--   `cachelens anatomy --since/--until` takes them: each chain's classes and re-purchase flag (rounds, read_median)
--   come from all its requests (those of other days are the context of the later ones), its waste, weight, expiry
--   and break from the requests of those days only.
-- Output columns: chain_id, session_id, agent_type, kind, project, rounds (distinct rounds with requests),
--   read_median, repurchase (flagged), waste_weight, waste_usd, weight, expiry_tokens, break_tokens.
-- Example row: chain_id='d232c445-…:a3f1…', session_id='d232c445-…', agent_type='planner', kind='subagent',
--   project='/home/USER/projects/plan-loop', rounds=8, read_median=13818, repurchase=true, waste_weight=1091712.5,
--   waste_usd=3.28, weight=2204311.9, expiry_tokens=0, break_tokens=951054
WITH q AS (
  SELECT chain_id, key, line, t, model, cache_write AS w, cache_write_5m, cache_write_1h, cache_read AS r, segment, round,
         w_write_5m, w_write_1h, w_read, usd_per_weight, weight,
         ($since IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), ts) AS DATE) >= CAST($since AS DATE))
           AND ($until IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), ts) AS DATE) <= CAST($until AS DATE)) AS in_days,
         lag(t) OVER (PARTITION BY chain_id ORDER BY t, line, key) AS prev_t,
         lag(cache_read + cache_write) OVER (PARTITION BY chain_id ORDER BY t, line, key) AS prev_c,
         lag(segment) OVER (PARTITION BY chain_id ORDER BY t, line, key) AS prev_segment,
         -- TTL_{i−1}: that of the chain's most recent request with w > 0 before this one (5 minutes if none)
         coalesce(last_value(CASE WHEN cache_write > 0 THEN cache_write_1h > 0 END IGNORE NULLS)
                    OVER (PARTITION BY chain_id ORDER BY t, line, key ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), false) AS ttl_1h
  FROM requests
),
a AS (
  SELECT *, prev_t IS NULL OR segment <> prev_segment AS cold_start,
         CASE WHEN prev_t IS NULL OR segment <> prev_segment THEN 0 ELSE least(w, greatest(0, prev_c - r)) END AS raw_rw
  FROM q
),
b AS (
  SELECT *, CASE WHEN raw_rw >= coalesce($jitter::INTEGER, 1024) THEN raw_rw ELSE 0 END AS rw,
         CASE WHEN ttl_1h THEN 3600000 ELSE 300000 END AS ttl_ms
  FROM a
),
c AS (
  SELECT *, CASE WHEN t - prev_t > ttl_ms THEN rw ELSE 0 END AS expiry,
         CASE WHEN t - prev_t > ttl_ms THEN 0 ELSE rw END AS brk,
         -- at the rate the rewrite was billed at: the request's own 5m/1h mix per written token
         CASE WHEN rw > 0 THEN rw * ((cache_write_5m * w_write_5m + cache_write_1h * w_write_1h) / w - w_read) ELSE 0 END AS waste
  FROM b
),
-- round 0 is no round (a request only an agent_progress copy holds): it is kept so that its chain is listed
firsts AS (
  SELECT *, row_number() OVER (PARTITION BY chain_id, round = 0 ORDER BY t, line, key) AS k
  FROM (SELECT *, row_number() OVER (PARTITION BY chain_id, round ORDER BY t, line, key) AS rn FROM c)
  WHERE rn = 1
),
med AS (SELECT chain_id, count(*) FILTER (WHERE round > 0) AS rounds, median(r) FILTER (WHERE round > 0) AS read_median FROM firsts GROUP BY chain_id),
flag AS (
  SELECT f.chain_id, m.rounds, m.read_median,
         m.rounds >= 3 AND bool_and(f.round = 0 OR abs(f.r - m.read_median) <= 1024)
           AND bool_and(f.round = 0 OR f.k = 1 OR f.rw >= 0.8 * f.prev_c) AS repurchase
  FROM firsts f JOIN med m USING (chain_id)
  GROUP BY f.chain_id, m.rounds, m.read_median
),
-- the sums of the requests on the days only; a chain without any is not listed
tot AS (
  SELECT chain_id, coalesce(sum(waste::DECIMAL(38, 15))::DOUBLE, 0) AS waste_weight, coalesce(sum((waste * usd_per_weight)::DECIMAL(38, 15))::DOUBLE, 0) AS waste_usd,
         coalesce(sum(weight::DECIMAL(38, 15))::DOUBLE, 0) AS weight, sum(expiry) AS expiry_tokens, sum(brk) AS break_tokens,
         bool_and(usd_per_weight IS NULL) AS unpriced
  FROM c WHERE in_days GROUP BY chain_id
)
SELECT ch.chain_id, ch.session_id, ch.agent_type, ch.kind, ch.project, fl.rounds, fl.read_median, fl.repurchase,
       t.waste_weight, t.waste_usd, t.weight, t.expiry_tokens, t.break_tokens
FROM flag fl JOIN tot t USING (chain_id) JOIN chains ch USING (chain_id)
WHERE (fl.repurchase OR coalesce($all::BOOLEAN, false))
  AND ($project IS NULL OR contains(fold_case(ch.project), fold_case($project)))
-- waste by its USD, as anatomy ranks it (weights of different models do not compare); a chain with no priced request last
ORDER BY fl.repurchase DESC, t.unpriced, t.waste_usd DESC, t.waste_weight DESC, t.weight DESC, ch.chain_id;
