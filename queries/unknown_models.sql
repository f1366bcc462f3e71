-- unknown_models: models with no price in the table in force, and how many requests used them.
-- Purpose: an unpriced model is named and counted, never priced at $0 (SPEC §2.2).
-- Inputs: table requests.
-- Output columns: model, requests, tokens (input + output + writes + reads).
-- Example row: model='claude-mystery-9', requests=12, tokens=480211
SELECT model, count(*) AS requests,
       sum(input::BIGINT + output + cache_write + cache_read) AS tokens
FROM requests WHERE weight IS NULL GROUP BY model ORDER BY requests DESC, model;
