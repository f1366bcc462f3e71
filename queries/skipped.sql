-- skipped: skipped lines by reason, with the first few locations of each.
-- Purpose: quality.skipped of summary --json; every skipped line is counted and located (SPEC §8).
-- Inputs: tables skipped, files, scope.
-- Output columns: reason, count, examples (list of {file, line, detail}, at most 5, in file/line order),
--   utf16_files (list of {file, lines}, by file: the files whose lines of this reason were taken for UTF-16
--   text, their detail ingest's 'UTF-16 text, not UTF-8 (…)', each however far past the 5 examples).
-- The examples are the 5 smallest by (path, line), kept as the rows come (min_by with a count), not
--   a sorted list of every skipped line cut to 5: over 10 GB of sample logs (22,360 skipped lines)
--   ~200 instead of ~300 ms and ~20 MiB less, the same rows.
-- Example row: reason='invalid_json', count=3, examples=[{file: '/…/a.jsonl', line: 17, detail: 'unterminated string'}], utf16_files=[]
WITH k AS (
  SELECT s.reason, f.path, s.line, s.detail FROM skipped s JOIN scope USING (file_id) JOIN files f USING (file_id)
), u AS (
  SELECT reason, list({'file': path, 'lines': n} ORDER BY path) AS utf16_files
  FROM (SELECT reason, path, count(*)::INTEGER AS n FROM k WHERE starts_with(detail, 'UTF-16 text, not UTF-8 (') GROUP BY ALL)
  GROUP BY reason
)
SELECT reason, count(*) AS count,
       min_by({'file': k.path, 'line': k.line, 'detail': k.detail}, (k.path, k.line), 5) AS examples,
       coalesce(any_value(u.utf16_files), []) AS utf16_files
FROM k LEFT JOIN u USING (reason)
GROUP BY reason ORDER BY count DESC, reason;
