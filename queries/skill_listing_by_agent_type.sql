-- skill_listing_by_agent_type: per agent type (and definition), chains with and without skill_listing attachments.
-- Purpose: the report's agent-type × skill_listing cross-tab (SPEC §4): in the field note, every resolved
--   definition had 0 skill_listing and every lost one re-attached it once per round.
-- Inputs: tables chains, attachments, line_copies, requests, scope; $tz, $since, $until, $project: the chains with a request on a
--   day (in $tz, NULL: UTC) within $since … $until (a chain without requests, one that never got to its first, by its
--   first line's day) and whose project contains $project (as `crosstab` takes them); weight is of those days'
--   requests (as `summary` counts them), NULL for a row none of whose requests has a price, 0 for a row without
--   requests; skill_listings and rounds are the whole chains'.
-- Output columns: agent_type, definition (resolved / lost / unknown; `main` for main threads), chains, chains_without_requests (of chains, those that never got to a
--   request: `summary`, `sessions` and the report's headline do not count them), chains_with_skill_listing,
--   skill_listings, rounds, chains_listings_equal_rounds (chains whose skill_listing count equals their rounds, and
--   is > 0), weight, unpriced_requests (the rows' requests without a price, which weight leaves out).
-- Weights are summed as DECIMAL(38, 6), USD as DECIMAL(38, 12), each request rounded to those decimals first:
--   exact in any order, and without a DOUBLE's noise (cost_by.sql says why).
-- Example row: agent_type='planner', definition='lost', chains=2, chains_without_requests=0, chains_with_skill_listing=2,
--   skill_listings=17, rounds=17, chains_listings_equal_rounds=2, weight=1204411.5
WITH sl AS (
  -- a resumed session's copy of another's attachment is that one's (line_copies)
  SELECT chain_id, count(*) AS n FROM attachments JOIN scope USING (file_id) ANTI JOIN line_copies USING (file_id, line)
  WHERE type = 'skill_listing' GROUP BY chain_id),
w AS (SELECT chain_id, sum(weight::DECIMAL(38, 6))::DOUBLE AS weight, count(*) FILTER (WHERE weight IS NULL) AS unpriced FROM requests
       WHERE ($since IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), ts) AS DATE) >= CAST($since AS DATE))
         AND ($until IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), ts) AS DATE) <= CAST($until AS DATE))
       GROUP BY chain_id),
c AS (
  SELECT c.agent_type, c.definition, c.rounds, coalesce(sl.n, 0) AS listings, w.weight, coalesce(w.unpriced, 0) AS unpriced, w.chain_id IS NOT NULL AS in_days
  FROM chains c LEFT JOIN sl USING (chain_id) LEFT JOIN w USING (chain_id)
  WHERE (w.chain_id IS NOT NULL
         -- a chain without any request counts by its first line's day, as in `crosstab`
         OR (c.requests = 0
             AND ($since IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), to_timestamp(c.first_t / 1000)) AS DATE) >= CAST($since AS DATE))
             AND ($until IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), to_timestamp(c.first_t / 1000)) AS DATE) <= CAST($until AS DATE))))
    AND ($project IS NULL OR contains(fold_case(c.project), fold_case($project))))
SELECT agent_type, definition, count(*) AS chains,
       count(*) FILTER (WHERE NOT in_days) AS chains_without_requests,
       count(*) FILTER (WHERE listings > 0) AS chains_with_skill_listing,
       sum(listings) AS skill_listings, sum(rounds) AS rounds,
       count(*) FILTER (WHERE listings > 0 AND listings = rounds) AS chains_listings_equal_rounds,
       -- a row of chains without requests weighs 0; one whose requests are all unpriced, NULL (unknown)
       CASE WHEN bool_or(in_days) THEN sum(weight::DECIMAL(38, 6))::DOUBLE ELSE 0 END AS weight,
       -- the requests without a price the weight leaves out (the report marks it +?, as `crosstab` does)
       sum(unpriced) AS unpriced_requests
FROM c GROUP BY agent_type, definition ORDER BY weight DESC NULLS LAST, agent_type, definition;
