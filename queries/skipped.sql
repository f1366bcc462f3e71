-- skipped: skipped lines by reason, with the first few locations of each.
-- Purpose: quality.skipped of summary --json; every skipped line is counted and located (SPEC §8).
-- Inputs: tables skipped, files, scope.
-- Output columns: reason, count, examples (list of {file, line, detail}, at most 5, in file/line order).
-- Example row: reason='invalid_json', count=3, examples=[{file: '/…/a.jsonl', line: 17, detail: 'unterminated string'}]
SELECT reason, count(*) AS count,
       list({'file': f.path, 'line': s.line, 'detail': s.detail} ORDER BY f.path, s.line)[1:5] AS examples
FROM skipped s JOIN scope USING (file_id) JOIN files f USING (file_id)
GROUP BY reason ORDER BY count DESC, reason;
