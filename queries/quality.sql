-- quality: what was read, what was skipped and why, what de-dup removed.
-- Purpose: the data-quality panel of summary --json and of the report.
-- Inputs: tables files, observations, skipped, requests, scope.
-- Output columns: files, lines, skipped_lines (lines not read), noted_lines (lines read with a field of the
--   wrong type read as absent: invalid_field), usage_lines (lines carrying usage, counting every copy),
--   requests, duplicates_removed (usage lines beyond one per request), synthetic.
-- Example row: files=18, lines=6804, skipped_lines=0, noted_lines=0, usage_lines=1850, requests=842, duplicates_removed=1008, synthetic=2
SELECT
  (SELECT count(*) FROM files JOIN scope USING (file_id) WHERE kind <> 'meta') AS files,
  (SELECT coalesce(sum(lines), 0) FROM files JOIN scope USING (file_id)) AS lines,
  -- lines, not skips: a line can be skipped for two reasons (usage on a progress line and a nameless
  -- agent_progress copy in it); one skipped for another reason besides invalid_field is skipped, not noted
  (SELECT count(*) FROM (SELECT DISTINCT file_id, line FROM skipped JOIN scope USING (file_id) WHERE reason <> 'invalid_field')) AS skipped_lines,
  (SELECT count(*) FROM (SELECT DISTINCT file_id, line FROM skipped JOIN scope USING (file_id) WHERE reason = 'invalid_field'
     EXCEPT SELECT DISTINCT file_id, line FROM skipped JOIN scope USING (file_id) WHERE reason <> 'invalid_field')) AS noted_lines,
  (SELECT coalesce(sum(copies), 0) FROM observations JOIN scope USING (file_id)) AS usage_lines,
  (SELECT count(*) FROM requests) AS requests,
  (SELECT coalesce(sum(copies), 0) FROM observations JOIN scope USING (file_id)) - (SELECT count(*) FROM requests) AS duplicates_removed,
  (SELECT coalesce(sum(synthetic), 0) FROM files JOIN scope USING (file_id)) AS synthetic;
