-- reconcile-requests: one row per request (after de-dup), for scripts/reconcile.ts.
-- Purpose: sum a block's token fields (`blocks --json` gives only their total) and recompute USD under ccusage's long-context rule.
-- Inputs: requests. Output columns: session_id, t (epoch ms), model, input, output, cache_write_5m, cache_write_1h, cache_read, usd.
-- Example row: session_id='1f517242-…', t=1770726091067, model='claude-sonnet-4-5-20250929', input=2, output=293,
--   cache_write_5m=0, cache_write_1h=2555, cache_read=21000, usd=0.0251
SELECT session_id, t, model, input, output, cache_write_5m, cache_write_1h, cache_read, usd FROM requests ORDER BY t, key
