-- reattachments: attachments whose content was already sent earlier in the same chain, by attachment type.
-- Purpose: SPEC §1.6 — a re-attachment (same SHA-256 of the attachment's JSON again in one chain) re-sends bytes the
--   model has already seen, and re-inserted mid-conversation it breaks the prompt cache from that point.
-- Inputs: attachments (chain, time, line, type, bytes, hash).
-- Output columns: type, attachments, reattachments, reattachment_bytes, bytes (all of that type),
--   chains_with_reattachments.
-- Example row: type='skill_listing', attachments=40, reattachments=28, reattachment_bytes=511560, bytes=730800,
--   chains_with_reattachments=4
WITH a AS (
  SELECT *, row_number() OVER (PARTITION BY chain_id, hash ORDER BY t, line) > 1 AS again
  FROM attachments
)
SELECT type, count(*) AS attachments, count(*) FILTER (WHERE again) AS reattachments,
       coalesce(sum(bytes) FILTER (WHERE again), 0) AS reattachment_bytes, sum(bytes) AS bytes,
       count(DISTINCT chain_id) FILTER (WHERE again) AS chains_with_reattachments
FROM a
GROUP BY type
ORDER BY reattachment_bytes DESC, type;
