-- write_read_ratio: cache write weight against cache read weight, by agent type and model.
-- Purpose: SPEC §3 — a write costs 12.5–20 reads, so a ratio far above the norm is context bought and not reused
--   (the re-purchase pattern shows as a high ratio in one agent type).
-- Inputs: requests, chains; $tz, $since, $until, $project as in cost_by.sql.
-- Output columns: agent_type, model, chains, requests, write_weight (5m + 1h writes), read_weight,
--   write_read_ratio (write_weight / read_weight; NULL when nothing was read), hit_ratio (Σ cache_read / Σ prompt,
--   writes in the denominator). Weights cover priced requests only; hit_ratio covers every request.
-- Weights are summed as DECIMAL(38, 6), each request's rounded to 6 decimals first, as in cost_by.sql (exact, in any
--   order, without a DOUBLE's binary expansion: 391538.5, not 391538.49999999994).
-- Example row: agent_type='myplugin:planner', model='claude-sonnet-4-5-20250929', chains=4, requests=38,
--   write_weight=1450312.5, read_weight=52508.4, write_read_ratio=27.62, hit_ratio=0.41
WITH r AS (
  SELECT r.*, coalesce(c.agent_type, 'unknown') AS agent_type,
         CAST(timezone(coalesce($tz, 'UTC'), r.ts) AS DATE) AS day_date
  FROM requests r LEFT JOIN chains c USING (chain_id)
),
f AS (
  SELECT * FROM r
  WHERE ($since IS NULL OR day_date >= CAST($since AS DATE)) AND ($until IS NULL OR day_date <= CAST($until AS DATE))
    AND ($project IS NULL OR contains(fold_case(project), fold_case($project)))
)
SELECT agent_type, model, count(DISTINCT chain_id) AS chains, count(*) AS requests,
       coalesce(sum((weight_write_5m + weight_write_1h)::DECIMAL(38, 6))::DOUBLE, 0) AS write_weight,
       coalesce(sum(weight_read::DECIMAL(38, 6))::DOUBLE, 0) AS read_weight,
       sum((weight_write_5m + weight_write_1h)::DECIMAL(38, 6))::DOUBLE / nullif(sum(weight_read::DECIMAL(38, 6))::DOUBLE, 0) AS write_read_ratio,
       sum(cache_read) / nullif(sum(prompt), 0) AS hit_ratio
FROM f
GROUP BY agent_type, model
ORDER BY write_weight DESC, agent_type, model;
