-- attachments_vs_rounds: each chain's attachments against its rounds.
-- Purpose: SPEC §4's field finding — a lost agent definition re-attaches the skill listing once per round, so its
--   skill_listing count equals its rounds; a resolved one has none.
-- Inputs: chains, attachments, requests; $tz, $since, $until, $project: the chains with a request on a day (in $tz,
--   NULL: UTC) within $since … $until (a chain without requests by its first line's day) and whose project contains
--   $project, as `crosstab` takes them; each chain listed whole (its rounds, requests and attachments of every day,
--   as the cross-tab's rounds and attachments are).
-- Output columns: chain_id, kind, agent_type, definition (`main` for main threads), spawn_name, rounds, requests, requests_per_round,
--   attachments (all types), skill_listing (count), skill_listing_bytes, skill_listing_equals_rounds (the
--   skill_listing count equals the rounds and is > 0, as `crosstab` and skill_listing_by_agent_type count it).
-- Example row: chain_id='d232c445-…:a3f1…', kind='subagent', agent_type='planner', definition='lost',
--   spawn_name='planner', rounds=8, requests=26, requests_per_round=3.25, attachments=11, skill_listing=8,
--   skill_listing_bytes=146112, skill_listing_equals_rounds=true
WITH a AS (
  SELECT chain_id, count(*) AS attachments,
         count(*) FILTER (WHERE type = 'skill_listing') AS skill_listing,
         coalesce(sum(bytes) FILTER (WHERE type = 'skill_listing'), 0) AS skill_listing_bytes
  FROM attachments GROUP BY chain_id
),
-- the chains with a request on the days; a chain with none at all counts by its first line's day
in_days AS (
  SELECT DISTINCT chain_id FROM requests
  WHERE ($since IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), ts) AS DATE) >= CAST($since AS DATE))
    AND ($until IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), ts) AS DATE) <= CAST($until AS DATE))
),
any_request AS (SELECT DISTINCT chain_id FROM requests)
SELECT c.chain_id, c.kind, c.agent_type, c.definition, c.spawn_name, c.rounds, c.requests,
       round(c.requests / nullif(c.rounds, 0), 2) AS requests_per_round,
       coalesce(a.attachments, 0) AS attachments, coalesce(a.skill_listing, 0) AS skill_listing,
       coalesce(a.skill_listing_bytes, 0) AS skill_listing_bytes,
       -- more than 0 of each: a chain of no round and no listing is no evidence of the pattern
       coalesce(a.skill_listing, 0) = c.rounds AND c.rounds > 0 AS skill_listing_equals_rounds
FROM chains c LEFT JOIN a USING (chain_id)
WHERE ($project IS NULL OR contains(fold_case(c.project), fold_case($project)))
  AND (($since IS NULL AND $until IS NULL)
       OR c.chain_id IN (SELECT chain_id FROM in_days)
       OR (c.chain_id NOT IN (SELECT chain_id FROM any_request)
           AND ($since IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), to_timestamp(c.first_t / 1000)) AS DATE) >= CAST($since AS DATE))
           AND ($until IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), to_timestamp(c.first_t / 1000)) AS DATE) <= CAST($until AS DATE))))
ORDER BY skill_listing DESC, c.rounds DESC, c.chain_id;
