-- report_components: weight, USD and tokens per cost component, grouped by day, project, model or agent type.
-- Purpose: the report's "cost over time" and "cost by" charts (long format: one row per group and component).
-- Inputs: tables requests, chains; $group: 'day' (UTC) | 'project' | 'model' | 'agent_type'.
-- Output columns: grp, component ('input' | 'output' | 'write5m' | 'write1h' | 'read'), tokens, weight, usd
--   (weight and usd over priced requests; usd NULL when the group has no priced request).
-- Example row: grp='2026-02-12', component='read', tokens=28988297, weight=2898829.7, usd=14.49
WITH r AS (
  SELECT q.*, c.agent_type,
         CASE $group WHEN 'day' THEN strftime(timezone('UTC', q.ts), '%Y-%m-%d') WHEN 'project' THEN q.project
                     WHEN 'model' THEN q.model ELSE coalesce(c.agent_type, 'unknown') END AS grp
  FROM requests q LEFT JOIN chains c USING (chain_id)
),
long AS (
  SELECT grp, 'input' AS component, input AS tokens, weight_input AS weight, weight_input * usd_per_weight AS usd FROM r
  UNION ALL SELECT grp, 'output', output, weight_output, weight_output * usd_per_weight FROM r
  UNION ALL SELECT grp, 'write5m', cache_write_5m, weight_write_5m, weight_write_5m * usd_per_weight FROM r
  UNION ALL SELECT grp, 'write1h', cache_write_1h, weight_write_1h, weight_write_1h * usd_per_weight FROM r
  UNION ALL SELECT grp, 'read', cache_read, weight_read, weight_read * usd_per_weight FROM r
)
SELECT grp, component, sum(tokens) AS tokens, coalesce(sum(weight::DECIMAL(38, 15))::DOUBLE, 0) AS weight, sum(usd::DECIMAL(38, 15))::DOUBLE AS usd
FROM long GROUP BY grp, component ORDER BY grp, component;
