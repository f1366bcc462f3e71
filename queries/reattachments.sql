-- reattachments: attachments whose content was already sent earlier in the same chain, by attachment type.
-- Purpose: SPEC §1.6 — a re-attachment (same SHA-256 of the attachment's JSON again in one chain) re-sends bytes the
--   model has already seen, and re-inserted mid-conversation it breaks the prompt cache from that point.
-- Inputs: attachments (chain, time, line, type, bytes, hash), chains, requests; $tz, $since, $until, $project: the
--   attachments of the chains with a request on a day (in $tz, NULL: UTC) within $since … $until (a chain without
--   requests by its first line's day) and whose project contains $project, every day's of them (as `crosstab
--   --measure reattachments` counts them).
-- Output columns: type, attachments, reattachments, reattachment_bytes, bytes (all of that type),
--   chains_with_reattachments.
-- Example row: type='skill_listing', attachments=40, reattachments=28, reattachment_bytes=511560, bytes=730800,
--   chains_with_reattachments=4
WITH in_days AS (
  SELECT DISTINCT chain_id FROM requests
  WHERE ($since IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), ts) AS DATE) >= CAST($since AS DATE))
    AND ($until IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), ts) AS DATE) <= CAST($until AS DATE))
),
any_request AS (SELECT DISTINCT chain_id FROM requests),
scoped AS (
  SELECT chain_id FROM chains c
  WHERE ($project IS NULL OR contains(fold_case(c.project), fold_case($project)))
    AND (($since IS NULL AND $until IS NULL)
         OR c.chain_id IN (SELECT chain_id FROM in_days)
         OR (c.chain_id NOT IN (SELECT chain_id FROM any_request)
             AND ($since IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), to_timestamp(c.first_t / 1000)) AS DATE) >= CAST($since AS DATE))
             AND ($until IS NULL OR CAST(timezone(coalesce($tz, 'UTC'), to_timestamp(c.first_t / 1000)) AS DATE) <= CAST($until AS DATE))))
),
a AS (
  SELECT *, row_number() OVER (PARTITION BY chain_id, hash ORDER BY t, line) > 1 AS again
  FROM attachments
  -- without filters, every attachment in scope (the chains table is not read)
  WHERE ($since IS NULL AND $until IS NULL AND $project IS NULL) OR chain_id IN (SELECT chain_id FROM scoped)
)
SELECT type, count(*) AS attachments, count(*) FILTER (WHERE again) AS reattachments,
       coalesce(sum(bytes) FILTER (WHERE again), 0) AS reattachment_bytes, sum(bytes) AS bytes,
       count(DISTINCT chain_id) FILTER (WHERE again) AS chains_with_reattachments
FROM a
GROUP BY type
ORDER BY reattachment_bytes DESC, type;
