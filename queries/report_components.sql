-- report_components: weight, USD and tokens per cost component, grouped by day, project, model or agent type.
-- Purpose: the report's "cost over time" and "cost by" charts (long format: one row per group and component).
-- Inputs: tables requests, chains; $group: 'day' (UTC) | 'project' | 'model' | 'agent_type', or NULL for all four
--   at once (one pass over the requests: the report's four charts took four).
-- Output columns: grouping (the $group of the row), grp, component ('input' | 'output' | 'write5m' | 'write1h' | 'read'),
--   tokens, weight, usd (weight and usd over priced requests; usd NULL when the group has no priced request).
--   Weights and USD are summed as DECIMAL(38, 15): exact, so in any order of the rows.
-- Example row: grouping='day', grp='2026-02-12', component='read', tokens=28988297, weight=2898829.7, usd=14.49
WITH r AS (
  SELECT q.*, strftime(timezone('UTC', q.ts), '%Y-%m-%d') AS day, coalesce(c.agent_type, 'unknown') AS agent_type
  FROM requests q LEFT JOIN chains c USING (chain_id)
),
long AS (
  SELECT day, project, model, agent_type, 'input' AS component, input AS tokens, weight_input AS weight, weight_input * usd_per_weight AS usd FROM r
  UNION ALL SELECT day, project, model, agent_type, 'output', output, weight_output, weight_output * usd_per_weight FROM r
  UNION ALL SELECT day, project, model, agent_type, 'write5m', cache_write_5m, weight_write_5m, weight_write_5m * usd_per_weight FROM r
  UNION ALL SELECT day, project, model, agent_type, 'write1h', cache_write_1h, weight_write_1h, weight_write_1h * usd_per_weight FROM r
  UNION ALL SELECT day, project, model, agent_type, 'read', cache_read, weight_read, weight_read * usd_per_weight FROM r
),
g AS (
  SELECT CASE WHEN grouping(day) = 0 THEN 'day' WHEN grouping(project) = 0 THEN 'project' WHEN grouping(model) = 0 THEN 'model' ELSE 'agent_type' END AS grouping,
         CASE WHEN grouping(day) = 0 THEN day WHEN grouping(project) = 0 THEN project WHEN grouping(model) = 0 THEN model ELSE agent_type END AS grp,
         component, sum(tokens) AS tokens, coalesce(sum(weight::DECIMAL(38, 15))::DOUBLE, 0) AS weight, sum(usd::DECIMAL(38, 15))::DOUBLE AS usd
  FROM long
  GROUP BY GROUPING SETS ((day, component), (project, component), (model, component), (agent_type, component))
)
SELECT * FROM g WHERE $group IS NULL OR grouping = $group
ORDER BY grouping, grp, component;
