-- zone_days: the UTC offset of a time zone by hour of UTC, from a year before the requests to a year after now, as runs of hours.
-- Purpose: what an append run answered without DuckDB (src/ingest/delta.ts) finds a new request's day in $tz with,
--   the day summary.sql gives it: DuckDB's time zone rules, which Node's may differ from (with Node 20.20's and
--   DuckDB 1.5.6's, eight zones from November 2026 on, America/Edmonton and America/Vancouver among them).
-- Inputs: table requests (its first and last time); $tz: IANA time zone (e.g. 'UTC').
-- Output columns: from_h, to_h (hours of UTC since the epoch, inclusive), offset_us (the zone's UTC offset in
--   microseconds throughout those hours). An hour whose offset changes within it is in no run; the runs are in order.
-- Example row (America/Edmonton, in DuckDB's rules permanently 6 hours behind UTC from November 2026):
--   from_h=498864, to_h=507815, offset_us=-21600000000
-- The hours: from a year before the first request (or now, if earlier), at most three years back, to a year after
--   the last (or now, if later), at most two years ahead; ~17,500 – 44,000 conversions, ~10 – 25 ms. An hour has its
--   start's offset throughout when the next hour starts at the same offset: no zone changes its offset twice within
--   an hour.
WITH span AS (
  SELECT epoch_us(now()) // 3600000000 AS now_h,
         min(epoch_us(ts)) // 3600000000 AS first_h, max(epoch_us(ts)) // 3600000000 AS last_h
  FROM requests
),
hours AS (
  SELECT h, epoch_us(timezone($tz, make_timestamptz(h * 3600000000))) - h * 3600000000 AS o
  FROM span, range(greatest(least(coalesce(first_h, now_h), now_h) - 8784, now_h - 3 * 8766),
                   least(greatest(coalesce(last_h, now_h), now_h) + 8785, now_h + 2 * 8766)) t(h)
),
steady AS (
  SELECT h, o FROM (SELECT h, o, lead(o) OVER (ORDER BY h) AS next FROM hours) WHERE o = next
)
SELECT min(h) AS from_h, max(h) AS to_h, any_value(o) AS offset_us
FROM (SELECT h, o, h - row_number() OVER (PARTITION BY o ORDER BY h) AS run FROM steady)
GROUP BY o, run
ORDER BY from_h;
