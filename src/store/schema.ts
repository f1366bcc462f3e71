/**
 * The store's tables. Raw facts per file (observations, chain facts, spawns, attachments, …) are
 * kept as read, so that a file can be appended to, re-read or retired on its own; `requests`,
 * `chains` and `prices` are derived for the files in `scope` (the files under this invocation's
 * roots) and rebuilt whenever the facts or the scope change.
 *
 * SCHEMA_VERSION changes whenever a table, or what the reader puts in it, changes; a store with another version is rebuilt from
 * the logs, never misread. (4: files.head_hash fingerprints the head and the tail of what was
 * read; parser_state carries the attachments still waiting for their round. 5: requests carry
 * their per-token weights, so that the anatomy's waste can be priced from requests alone.
 * 6: v1.x inline sidechains are threaded through every line, tool results included. 7: copies of
 * one time are told apart by path, not file id, so attribution does not depend on the order files
 * were first seen. 8: requests carry `row_hash`, so that a touched derive tells changed rows
 * without reading every column of the stored ones. 9: observations no longer repeat message.id
 * and requestId beside the key that holds both; requests split them from the key. 10: no UNIQUE
 * index on files.path, which cost a cold 1 GB run ~0.3 s to build and fold into the store; the
 * plan gives each walked path one id. 11: files.parser_state leaves out the chains, which are the
 * file's chain_facts rows. 12: copies of a request with and without a 5m/1h split merge into
 * the largest write split by its 1-hour part, in the reader and the de-dup; a v2.1 subagent
 * file's session comes from its place in the layout only; v1.x sidechains are typed by the Task
 * calls of the files in scope only. 13: a timestamp must be an ISO 8601 instant with its offset;
 * a store read with Date.parse's guesses counted zone-less and impossible times. 14: a
 * cache_creation or server_tool_use that is not an object makes an invalid_usage skip; a store
 * read before counted such a line as a request without a 5m/1h split. 15: a file without `cwd` lines
 * takes its project from its own path (its project directory), not from the root it was read
 * through; a store read before kept the first root's answer. 16: a .meta.json's empty agentType or
 * toolUseId is no value; a chain's requested_type and spawn_name come from one spawn, and a tool
 * result links an agent only through a spawning tool_use; a store read before typed such chains
 * otherwise. The streaming path keeps an attachment's `__proto__` key, as the buffer path does. 17: a chain with no user prompt or
 * request puts its attachments in round 0, as its 0 rounds say; a store read before put them in round 1.
 * chain_facts.last_key keeps each chain's latest request, so that an appended read takes a later line
 * of that response for the same request, as a cold read does. 18: an agent_progress copy with
 * usage but no data.agentId is an invalid_usage skip; a store read before dropped it unreported. 19: requests.prompt is a
 * BIGINT: in + w + r of fields each under 10⁹ passes an INTEGER, whose sum failed every command. 20: requests.ts is
 * made from whole microseconds; to_timestamp(t / 1000) read 9999-06-01T12:00:00.110Z as .109. 21: a user line whose
 * content is an object opens no round (as a number does not); a store read before counted it a prompt. 22: attachments keep
 * their line's uuid, and attachment_copies names those a resumed session's transcript repeats; a store read before counted
 * them in both chains. 23: a local command's output and caveat and bash mode's lines open no round, and a slash command's
 * echo opens one only with the request that follows it; a store read before counted each such line a round (a long output
 * too: the projection now keeps a long string's opening tag). 24: chain_events keep their line's uuid, and line_copies
 * (attachment_copies before) names the compactions a resumed session's transcript repeats as well; a store read before
 * counted them in both chains' compactions. 25: chain_events keep the line that opens a round (kind 'round', with its uuid),
 * and line_copies names those a resumed session's transcript repeats as well; a store read before counted a resumed chain's
 * copied prompts in its rounds. 26: an interrupt (`[Request interrupted by user]`, a text block), a memory note
 * (`<user-memory-input>`) and `<system-reminder>`s with nothing else open no round, and a `<task-notification>` opens one
 * only with the request that follows it; a store read before counted each a round (the projection now keeps a text block's first
 * 64 characters). 27: a main thread's definition is `main`; a store read before called it `unknown`, with the
 * subagents whose definition could not be told. 28: a meta `<task-notification>` written as a list of text blocks opens a
 * round with the request that answers it, as the string does; a store read before counted it no round. 29: a line whose
 * isSidechain is no boolean is an invalid_field skip (read as absent); a store read before read it so without a word.
 * 30: so is a line whose isMeta or isCompactSummary is no boolean, one skip per line naming every such flag. 31: and a line
 * whose sessionId or agentId is no string. 32: a timestamp with an offset of hours alone (+02), a decimal comma or a leap
 * second (23:59:60 UTC at a month's end, its day's last millisecond) is an instant; a store read before skipped each. 33: a line whose uuid or
 * parentUuid is no string is an invalid_field skip (read as absent). 34: and one whose requestId is none. 35: a line whose
 * type is no string is an invalid_type skip, not read; a store read before counted it as a line of no type, (none). 36: a
 * requestId that is a whole number is its decimal text in the request's key (a line's or an agent_progress copy's, each
 * noted as invalid_field); a store read before keyed its copy by message.id alone, and counted it beside a copy whose
 * requestId is that text. 37: a line whose type (or subtype) is a string longer than 4,096 characters is counted in line_counts by
 * its first 64 characters and its length (ingest/line.ts longTypeName); a store read before kept it whole. Still 37
 * (none was released): any other text field read from a line or a .meta.json longer than 4,096 characters (an id, a
 * session id, a cwd, a model, an attachment's type…) is kept as its first 64 characters, its length and a hash of the
 * whole (ingest/line.ts longText), and noted as invalid_field; a store read before kept it whole.) 38: a spawn's tool_result
 * without toolUseResult.agentId links the agent its text names (`agentId: a9 (for resuming …)`), and parser_state keeps
 * the spawns not yet answered (openSpawns); a store read before left such an agent `unknown`. Copies of one rank and
 * time go to the file that ends first (fileLastTimes) before path; a store derived before gave a resumed session's
 * copies at the very same time to it when its transcript sorted first.
 */
export const SCHEMA_VERSION = 38;

/**
 * Tables an older layout of the store held that this one does not write: attachment_copies
 * (versions 22 – 23; line_copies since). A rebuild drops them with the store's own tables, so an
 * older layout's are not left behind as tables of the user's own; every other table whose name the
 * store never used is the user's, and is kept (store.ts prepare).
 */
export const FORMER_TABLES: readonly string[] = ['attachment_copies'];

/**
 * Tables of facts this layout has that an older one lacked: line_copies (version 24; versions
 * 22 – 23 had attachment_copies, and earlier ones neither). A store that lost its `meta` is told
 * from someone else's DuckDB file by the other tables of facts, which every layout has held.
 */
export const LATER_TABLES: readonly string[] = ['line_copies'];

export const FACT_TABLES = [
  'observations',
  'chain_facts',
  'spawns',
  'agent_links',
  'sidechain_roots',
  'attachments',
  'chain_events',
  'line_counts',
  'skipped',
] as const;

export const CREATE_TABLES = `
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS files (
  file_id INTEGER PRIMARY KEY, path VARCHAR, root VARCHAR, kind VARCHAR,
  size BIGINT, mtime_ms DOUBLE, read_to BIGINT, lines BIGINT, head_hash VARCHAR,
  session_id VARCHAR, agent_id VARCHAR, project VARCHAR, synthetic INTEGER,
  meta_agent_type VARCHAR, meta_tool_use_id VARCHAR, parser_state VARCHAR);
CREATE TABLE IF NOT EXISTS observations (
  file_id INTEGER, line INTEGER, key VARCHAR, t DOUBLE,
  model VARCHAR, rank TINYINT, session_id VARCHAR, chain_id VARCHAR, agent_id VARCHAR,
  input INTEGER, output INTEGER, cache_write INTEGER, cache_write_5m INTEGER, cache_write_1h INTEGER,
  cache_read INTEGER, web_search INTEGER, web_fetch INTEGER, split_missing BOOLEAN,
  service_tier VARCHAR, speed VARCHAR, copies INTEGER, segment INTEGER, round INTEGER);
CREATE TABLE IF NOT EXISTS chain_facts (
  file_id INTEGER, chain_id VARCHAR, session_id VARCHAR, agent_id VARCHAR, kind VARCHAR,
  rounds INTEGER, compactions INTEGER, requests INTEGER, first_t DOUBLE, last_key VARCHAR);
CREATE TABLE IF NOT EXISTS spawns (
  file_id INTEGER, session_id VARCHAR, tool_use_id VARCHAR, requested_type VARCHAR, spawn_name VARCHAR, prompt_hash VARCHAR);
CREATE TABLE IF NOT EXISTS agent_links (file_id INTEGER, session_id VARCHAR, tool_use_id VARCHAR, agent_id VARCHAR);
CREATE TABLE IF NOT EXISTS sidechain_roots (file_id INTEGER, chain_id VARCHAR, prompt_hash VARCHAR);
CREATE TABLE IF NOT EXISTS attachments (
  file_id INTEGER, chain_id VARCHAR, line INTEGER, t DOUBLE, type VARCHAR, bytes INTEGER, hash VARCHAR, round INTEGER, uuid VARCHAR);
CREATE TABLE IF NOT EXISTS line_copies (file_id INTEGER, line INTEGER);
CREATE TABLE IF NOT EXISTS chain_events (file_id INTEGER, chain_id VARCHAR, line INTEGER, t DOUBLE, kind VARCHAR, detail VARCHAR, uuid VARCHAR);
CREATE TABLE IF NOT EXISTS line_counts (file_id INTEGER, type VARCHAR, subtype VARCHAR, n INTEGER);
CREATE TABLE IF NOT EXISTS skipped (file_id INTEGER, line INTEGER, reason VARCHAR, detail VARCHAR);
CREATE TABLE IF NOT EXISTS scope (file_id INTEGER);
CREATE TABLE IF NOT EXISTS results (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS prices (
  model VARCHAR, base_usd_per_token DOUBLE,
  w_input DOUBLE, w_write_5m DOUBLE, w_write_1h DOUBLE, w_read DOUBLE, w_output DOUBLE,
  lc_above BIGINT, lc_input DOUBLE, lc_write_5m DOUBLE, lc_write_1h DOUBLE, lc_read DOUBLE, lc_output DOUBLE);
`;

/**
 * The columns of every table this build writes, as DuckDB's own CREATE text of the table lists them
 * (duckdb_tables().sql between its parentheses, quotes removed): the tables CREATE_TABLES makes, as
 * written there, and the two each derive makes (DERIVE_REQUESTS, DERIVE_CHAINS), written out here.
 * A store's open compares them with its tables (store.ts storeTables): a column a user's query
 * dropped, renamed or retyped (`ALTER TABLE requests DROP COLUMN model`) made every later command
 * fail with an internal error. test/store/schema-version.test.ts checks a derived store against this.
 */
export const DERIVED_COLUMNS: Readonly<Record<'requests' | 'chains', string>> = {
  requests:
    'key VARCHAR, t DOUBLE, input INTEGER, output INTEGER, cache_write INTEGER, cache_write_5m INTEGER, cache_write_1h INTEGER, cache_read INTEGER, ' +
    'web_search INTEGER, web_fetch INTEGER, split_missing BOOLEAN, copies INTEGER, sources INTEGER, message_id VARCHAR, request_id VARCHAR, model VARCHAR, ' +
    'session_id VARCHAR, chain_id VARCHAR, agent_id VARCHAR, file_id INTEGER, line INTEGER, segment INTEGER, round INTEGER, service_tier VARCHAR, speed VARCHAR, ' +
    'rank TINYINT, project VARCHAR, prompt BIGINT, price_model VARCHAR, weight_input DOUBLE, weight_output DOUBLE, weight_write_5m DOUBLE, weight_write_1h DOUBLE, ' +
    'weight_read DOUBLE, weight DOUBLE, usd DOUBLE, usd_per_weight DOUBLE, w_input DOUBLE, w_write_5m DOUBLE, w_write_1h DOUBLE, w_read DOUBLE, w_output DOUBLE, ' +
    'ts TIMESTAMP WITH TIME ZONE, row_hash UBIGINT',
  chains:
    'chain_id VARCHAR, session_id VARCHAR, agent_id VARCHAR, kind VARCHAR, agent_type VARCHAR, requested_type VARCHAR, spawn_name VARCHAR, definition VARCHAR, ' +
    'project VARCHAR, file_id INTEGER, rounds INTEGER, compactions INTEGER, requests BIGINT, first_t DOUBLE, last_t DOUBLE',
};

/** Every table this build writes → its columns (DERIVED_COLUMNS says as what). Example: scope → 'file_id INTEGER'. */
export const STORE_COLUMNS: ReadonlyMap<string, string> = new Map([
  ...[...CREATE_TABLES.matchAll(/CREATE TABLE IF NOT EXISTS (\w+) \(([^;]*)\);/g)].map((m): [string, string] => [m[1]!, m[2]!.replace(/\s+/g, ' ').trim()]),
  ...Object.entries(DERIVED_COLUMNS),
]);

/**
 * The order in which a request's copies compete to be its best copy, as one HUGEINT that sorts as
 * the tuple (-rank, t, path_rank, line) does: rank (SourceRank, 0 – 2) in bits 117 – 118 as 2 − rank,
 * t (whole epoch milliseconds, as Date.parse gives them, at most 8.64e15 either way) in bits 63 – 116
 * offset by 2^53, the file's rank by its last time then path (fileLastTimes; < 2^32) in bits 31 – 62, the line (< 2^31) in bits 0 – 30.
 * Example: a subagent-file copy (rank 2) at t = 1000 in the 3rd file by path, line 7, is
 * (0 << 117) | ((1000 + 2^53) << 63) | (3 << 31) | 7; a main-file copy (rank 1) of the same time
 * has 1 << 117 more, so it sorts after.
 */
export const BEST_COPY_ORDER = `((2 - rank)::HUGEINT << 117) | ((t::BIGINT + 9007199254740992)::HUGEINT << 63) | (path_rank::HUGEINT << 31) | line::HUGEINT`;

/**
 * Each file's last time, `file_id, last_t`: its latest request or round (observations and
 * chain_events), for the files `where` keeps (a WHERE clause on file_id, or ''). Of two copies of
 * one rank and one time, the copy in the file that ends first is the request's (BEST_COPY_ORDER's
 * path_rank) or the round's or attachment's (deriveLineCopies): a resumed session's transcript
 * copies the lines of the one it resumes and always runs past them, so the copies count in the
 * earlier session whatever the two files are called. Files that end at once go by path.
 * Example: A (requests at 10:00, 10:01) and B (copies of both, then a request at 11:00), the copies
 * carrying B's sessionId: A's last_t is 10:01, B's 11:00, so both requests are A's.
 */
function fileLastTimes(where: string): string {
  return `(SELECT file_id, max(t) AS last_t FROM (SELECT file_id, t FROM observations ${where} UNION ALL SELECT file_id, t FROM chain_events ${where}) GROUP BY file_id)`;
}

/**
 * The observations a derive reads: the table, the column that identifies a row of it, and filters
 * that keep the files it ranks by path and the sessions whose project it looks up to those its
 * rows can meet. A touched derive (an append run) reads a temp table of the touched keys'
 * observations, so it ranks and looks up only their files and sessions.
 */
interface ObservationSource {
  table: string;
  row: string;
  files: string;
  sessions: string;
}

const ALL_OBSERVATIONS: ObservationSource = { table: 'observations', row: 'rowid', files: '', sessions: '' };

const TOUCHED_OBSERVATIONS: ObservationSource = {
  table: 'touched_observations',
  row: 'obs_row',
  files: 'WHERE file_id IN (SELECT file_id FROM touched_observations)',
  sessions: 'AND f.session_id IN (SELECT session_id FROM touched_observations)',
};

/**
 * De-dup (SPEC §1.3) over the observations of the files in scope: one row per request identity,
 * usage the field-wise maximum over its copies, time the earliest copy, attribution (session,
 * chain, agent, file, segment, round) from the best-ranked copy (subagent file > main file >
 * progress copy; ties to the earliest, then to the file that ends first, then to the first by path and line). Then priced: model by exact id, else without its date
 * suffix; Sonnet 4/4.5 long-context rates when P > 200k. Unpriced requests keep weight NULL.
 *
 * Speed (1 GB corpus, 200k observations): the best copy is found by `arg_min` over row ids in the
 * same GROUP BY as the usage maxima, not by a row_number() window (≈ 5× slower), and the price of
 * each distinct model is resolved once, so the date-suffix fallback never becomes a nested-loop
 * join over every request. The aggregate reads only the columns it needs, and the best copy's
 * other columns are fetched by row id afterwards. A CTE of whole observation rows, used twice, was
 * materialised: 1.7 s on 1 GB (now 1.2 s), and it ran out of memory at 160 MB inside a full ingest
 * (this form finishes even within 128 MB, spilling). The best copy's order is one HUGEINT
 * (BEST_COPY_ORDER), not a struct: next to the count(DISTINCT …) an arg_min over a struct kept its
 * states in memory, and 10 GB of logs (2 million observations) ran out at 256 MB; with the
 * HUGEINT the same de-dup finishes within 192 MB (bench/dedup-parts.ts).
 *
 * The groups are keyed by the key's 128-bit MD5, not the key, and written to a temp table before
 * they are joined to their best copies and priced: a group then holds no string (the key comes
 * back with the best copy's row), and DuckDB can spill the groups between the two statements.
 * 10 GB of logs (1.48 million requests, alone over a filled store, one thread): the de-dup ran out
 * of memory at 112 MB and finished at 120 MB, peak 284 – 290 MiB; as one statement grouped by the
 * key it ran out at 195 MB in a cold run and peaked at 411 MiB at 251 MB (the aggregate keyed by
 * the key alone ran out at 128 MB). 1 GB: out of memory at 64 MB, done at 72 MB, in as long
 * (4 interleaved runs: 1.55 – 1.64 s at 80 MB against 1.55 – 1.78 s at 87 MB). Two keys would
 * share a group only if their MD5s were equal: for n requests a chance of about n² / 2^129
 * (~10^-25 for 10 million).
 *
 * The rows are written in the order DuckDB makes them, not sorted: sorting them by time and
 * identity made float sums over `requests` the same to the last bit in every rebuilt store, but an
 * append run adds its rows at the end anyway, the bundled queries sum weights and dollars as
 * DECIMAL (exact in any order), and the sort set the de-dup's memory: it had to be written in
 * parts, each reading every observation again. Unsorted in one statement, the de-dup of 10 GB of
 * logs took 17.7 s instead of 28.5 s in 5 sorted parts (peak 407 against 696 MiB, alone over the
 * store at 252 MB); 1 GB, 2.10 – 2.21 s instead of 2.32 – 2.41 s alone, and cold runs no slower
 * (BENCHMARKS-log.md).
 */
export const DERIVE_REQUESTS = `
CREATE OR REPLACE TEMP TABLE request_groups AS ${groupsSelect(ALL_OBSERVATIONS)};
CREATE OR REPLACE TABLE requests AS
${pricedSelect('SELECT * FROM request_groups', ALL_OBSERVATIONS, 'observations')};
DROP TABLE request_groups;
`;

/**
 * Re-derives only the requests in the temp table `touched (key)`: they are computed again from
 * every copy in scope, and the stored rows that differ from what they derive to now are replaced
 * (rows of keys gone are deleted, new keys added). What an ingest touches (Store.noteTouched) is
 * the keys of every observation the files it reads again, retires or adds held before and hold
 * now, with every request of their sessions (a session's project comes from its main
 * transcript), and the keys an appended file's new lines name.
 * Example: appending 10 lines to one transcript of 1 GB of logs re-derives those ~10 requests,
 * not the 150,000 others, and writes only the rows that changed.
 *
 * Writing only changed rows keeps the write-ahead log small: rewriting every touched row put ~3.3 MB
 * in it per append run on 1 GB, so each run passed the 4 MiB checkpoint threshold (store.ts) and
 * paid ~0.28 s to fold it in.
 */
export const DERIVE_TOUCHED_REQUESTS = `
CREATE OR REPLACE TEMP TABLE touched_observations AS
  SELECT o.rowid AS obs_row, o.* FROM observations o WHERE o.key IN (SELECT key FROM touched);
CREATE OR REPLACE TEMP TABLE fresh_requests AS ${pricedSelect(groupsSelect(TOUCHED_OBSERVATIONS), TOUCHED_OBSERVATIONS, 'joined')};
DROP TABLE touched_observations;
${replaceChanged('requests', 'key', 'key IN (SELECT key FROM touched)', 'fresh_requests', 'row_hash')}
`;

/**
 * Replaces the rows of `table` matching `where` by those of `fresh` (rows of the same columns,
 * one per `id`), writing only what differs: rows equal to their fresh form stay where they are.
 * (EXCEPT compares rows with NULLs equal; derived values are computed the same way each time.)
 * With `hash`, a column holding a hash of the rest of the row, rows are compared by id and hash
 * alone: reading the stored rows whole read every column of every row, as DuckDB fetches a
 * table's columns before it joins them to the touched ids (1 GB of logs, an append run: ~0.25 s
 * for DELETE and INSERT, ~0.06 s by hash). A changed row whose 64-bit hash equals its old one's
 * would be left as it was; the chance is 2^-64 a row.
 */
function replaceChanged(table: string, id: string, where: string, fresh: string, hash?: string): string {
  if (hash) {
    const differ = (a: string, b: string) => `SELECT ${id} FROM (SELECT ${id}, ${hash} FROM ${a} EXCEPT SELECT ${id}, ${hash} FROM ${b})`;
    const stored = `(SELECT ${id}, ${hash} FROM ${table} WHERE ${where})`;
    return `
DELETE FROM ${table} WHERE ${id} IN (${differ(stored, fresh)});
INSERT INTO ${table} SELECT * FROM ${fresh} WHERE ${id} IN (${differ(fresh, stored)});
DROP TABLE ${fresh};`;
  }
  return `
DELETE FROM ${table} WHERE ${id} IN (SELECT ${id} FROM (SELECT * FROM ${table} WHERE ${where} EXCEPT SELECT * FROM ${fresh}));
INSERT INTO ${table} SELECT * FROM ${fresh} EXCEPT SELECT * FROM ${table} WHERE ${where};
DROP TABLE ${fresh};`;
}

/**
 * One row per request identity of the observations `obs` reads, keyed by the MD5 of its key
 * (`key_md5`; DERIVE_REQUESTS says why): its usage (the field-wise maximum, the write's 5-minute
 * part what the 1-hour part leaves of the largest write), time (the earliest
 * copy), copies and sources, and the row id of its best copy, which holds the key.
 */
function groupsSelect(obs: ObservationSource): string {
  return `
WITH by_path AS (SELECT file_id, row_number() OVER (ORDER BY l.last_t NULLS LAST, path) AS path_rank
                 FROM files JOIN scope USING (file_id) LEFT JOIN ${fileLastTimes(obs.files)} l USING (file_id) ${obs.files})
SELECT md5_number(key) AS key_md5, min(t) AS t, max(input) AS input, max(output) AS output, max(cache_write) AS cache_write,
         -- the split of the billed write: a copy without one counts all of it 5-minute, so the
         -- maximum of each part could count a write twice; the 1-hour part, then the rest
         max(cache_write) - least(max(cache_write_1h), max(cache_write)) AS cache_write_5m,
         least(max(cache_write_1h), max(cache_write)) AS cache_write_1h, max(cache_read) AS cache_read,
         max(web_search) AS web_search, max(web_fetch) AS web_fetch, bool_and(split_missing) AS split_missing,
         sum(copies)::INTEGER AS copies, count(DISTINCT (file_id, rank))::INTEGER AS sources,
         -- the best-ranked copy (subagent file > main file > progress), ties to the earliest, then to
         -- the file that ends first (fileLastTimes), then the first by path and line (not by file id:
         -- ids follow the order files were first seen)
         arg_min(obs_row, ${BEST_COPY_ORDER}) AS best_row
  FROM (SELECT o.${obs.row} AS obs_row, o.key, o.t, o.input, o.output, o.cache_write, o.cache_write_5m, o.cache_write_1h, o.cache_read,
               o.web_search, o.web_fetch, o.split_missing, o.copies, o.file_id, o.rank, o.line, p.path_rank
        FROM ${obs.table} o JOIN by_path p USING (file_id))
  GROUP BY key_md5`;
}

/**
 * The requests of the groups `groups` selects (groupsSelect's rows): attributed to their best copy
 * and priced, each with `row_hash`, DuckDB's hash of its other columns (replaceChanged). Each
 * model of `models` (a table or CTE with a `model` column, holding at least the requests' models)
 * is priced once.
 * Why `models`: priced from the requests themselves (the CTE `joined`), a whole derive had
 * DuckDB materialize all of them for the two uses (1 GB of logs: ~0.5 s of a profiled 2.7 s);
 * the distinct models of every observation cost a scan of one column. Alone over a filled 1 GB
 * store, 5 interleaved runs: median 2.04 → 1.68 s. A touched derive's few requests are cheaper
 * to price from themselves.
 */
function pricedSelect(groups: string, obs: ObservationSource, models: 'observations' | 'joined'): string {
  return `
WITH agg AS (${groups}),
-- a session's project is its main transcript's (subagents may run in a sub-directory)
session_project AS (
  SELECT f.session_id, arg_min(f.project, CASE f.kind WHEN 'main' THEN 0 ELSE 1 END) AS project
  FROM files f JOIN scope USING (file_id) WHERE f.kind <> 'meta' AND f.session_id IS NOT NULL ${obs.sessions} GROUP BY f.session_id),
joined AS (
  -- the identity's parts, from the key (message.id, NUL, requestId: message.id holds no NUL)
  SELECT b.key, a.* EXCLUDE (best_row, key_md5), split_part(b.key, chr(0), 1) AS message_id,
         CASE WHEN strpos(b.key, chr(0)) > 0 THEN b.key[strpos(b.key, chr(0)) + 1:] END AS request_id,
         b.model, b.session_id, b.chain_id, b.agent_id,
         b.file_id, b.line, b.segment, b.round, b.service_tier, b.speed, b.rank,
         coalesce(sp.project, f.project, 'unknown') AS project,
         a.input::BIGINT + a.cache_write + a.cache_read AS prompt
  FROM agg a JOIN ${obs.table} b ON b.${obs.row} = a.best_row LEFT JOIN files f ON f.file_id = b.file_id
  LEFT JOIN session_project sp ON sp.session_id = b.session_id),
-- each distinct model priced once: by exact id, else without its date suffix
model_price AS (
  SELECT m.model, coalesce(p1.model, p2.model) AS price_model, coalesce(p1.base_usd_per_token, p2.base_usd_per_token) AS base,
         coalesce(p1.lc_above, p2.lc_above) AS lc_above,
         struct_pack(i := coalesce(p1.lc_input, p2.lc_input), w5 := coalesce(p1.lc_write_5m, p2.lc_write_5m),
                     w1 := coalesce(p1.lc_write_1h, p2.lc_write_1h), r := coalesce(p1.lc_read, p2.lc_read),
                     o := coalesce(p1.lc_output, p2.lc_output)) AS long_w,
         struct_pack(i := coalesce(p1.w_input, p2.w_input), w5 := coalesce(p1.w_write_5m, p2.w_write_5m),
                     w1 := coalesce(p1.w_write_1h, p2.w_write_1h), r := coalesce(p1.w_read, p2.w_read),
                     o := coalesce(p1.w_output, p2.w_output)) AS short_w
  FROM (SELECT DISTINCT model FROM ${models}) m
  LEFT JOIN prices p1 ON p1.model = m.model
  LEFT JOIN prices p2 ON p1.model IS NULL AND p2.model = regexp_replace(m.model, '-[0-9]{8}$', '')),
priced AS (
  SELECT j.*, mp.price_model, mp.base,
         CASE WHEN mp.lc_above IS NOT NULL AND j.prompt > mp.lc_above THEN mp.long_w ELSE mp.short_w END AS w
  FROM joined j LEFT JOIN model_price mp ON mp.model = j.model)
SELECT request_row.*, hash(request_row) AS row_hash FROM (
SELECT * EXCLUDE (w, base),
       input * w.i AS weight_input, output * w.o AS weight_output, cache_write_5m * w.w5 AS weight_write_5m,
       cache_write_1h * w.w1 AS weight_write_1h, cache_read * w.r AS weight_read,
       input * w.i + output * w.o + cache_write_5m * w.w5 + cache_write_1h * w.w1 + cache_read * w.r AS weight,
       (input * w.i + output * w.o + cache_write_5m * w.w5 + cache_write_1h * w.w1 + cache_read * w.r) * base AS usd,
       base AS usd_per_weight,
       w.i AS w_input, w.w5 AS w_write_5m, w.w1 AS w_write_1h, w.r AS w_read, w.o AS w_output,
       -- from whole microseconds: to_timestamp(t / 1000) took the seconds as a DOUBLE, a millisecond early past year ~2255
       make_timestamptz(CAST(t AS BIGINT) * 1000) AS ts
FROM priced) request_row`;
}

/**
 * Chains (SPEC §1.4–1.5) of the files in scope: facts from the chain's own file, agent type from
 * the sibling .meta.json, else the spawning tool_use (matched by the meta's toolUseId, by the
 * tool_result that names the agentId, or for v1.x inline sidechains by the prompt text), else
 * `unknown`. A chain seen only through progress copies still gets a row.
 */
export const DERIVE_CHAINS = `
CREATE OR REPLACE TABLE chains AS
${chainsSelect('', 'row_number() OVER (ORDER BY path)')};
`;

/**
 * The attachment, compaction and round-opening rows of the files in scope that repeat another's
 * line (SPEC §1.6 and §1.4 with §1.3's de-dup): Claude Code's transcript of a resumed session
 * starts with copies of the session it resumes, each line with its `uuid` (every line of a real
 * transcript has its own; a copy keeps it, as the copied lines' `parentUuid`s still name them). Of
 * the rows of one kind and uuid the first by time, then the file that ends first, then path, then line (the order a request's
 * copies of one rank go by, BEST_COPY_ORDER) is the attachment, compaction or round; the others
 * are listed here (a line is one row of one of the two tables, so `file_id, line` names it), and
 * every reader leaves them out (the scoped `attachments` view, the analyses' events,
 * skill_listing_by_agent_type.sql, the chains' `compactions` and `rounds`). A line without a uuid
 * is no copy of anything. A copied round keeps its number in the copy's chain (its requests' and
 * attachments' `round`): only the count leaves it out.
 * Example: A's skill_listing at 10:00 (line 2) and its copy in B's transcript at 11:00 (line 2):
 * B's row is listed, so the listing counts once, in A's chain, and is no re-attachment of B's.
 * Derived again whole by every derive, touched or not (the copies of a new transcript may be of
 * any file's lines), before the chains (whose `compactions` and `rounds` leave the copies out), and written
 * only where it changed: every row in scope is grouped by uuid once and only those whose uuid
 * occurs twice are ordered. The 100 MB sample corpus holds 3,412 attachments, so ~34,000 a GB: on
 * one thread 6 – 10 ms for 34,000 random uuids, 40 – 240 ms for 340,000 (a shared machine; repeated
 * runs); compactions are far fewer, rounds about as many as prompts. A touched derive also derives
 * the chains of the sessions whose compactions or rounds a change of the list moves (A's transcript
 * gone, B's copy is the compaction). An
 * append run answered without the store (delta.ts) derives nothing, so it pays none of it.
 */
function deriveLineCopies(touched: boolean): string {
  return `
CREATE OR REPLACE TEMP TABLE fresh_copies AS
WITH a AS (SELECT file_id, line, t, uuid, 'attachment' AS kind FROM attachments JOIN scope USING (file_id) WHERE uuid IS NOT NULL
           UNION ALL SELECT file_id, line, t, uuid, kind FROM chain_events JOIN scope USING (file_id) WHERE uuid IS NOT NULL),
twice AS (SELECT kind, uuid FROM a GROUP BY ALL HAVING count(*) > 1),
copied AS (SELECT a.* FROM a JOIN twice USING (kind, uuid))
SELECT file_id, line FROM (
  SELECT c.file_id, c.line, row_number() OVER (PARTITION BY c.kind, c.uuid ORDER BY c.t, l.last_t NULLS LAST, f.path, c.line) AS n
  FROM copied c JOIN files f USING (file_id) LEFT JOIN ${fileLastTimes('WHERE file_id IN (SELECT file_id FROM copied)')} l USING (file_id))
WHERE n > 1;
${touched ? `INSERT INTO touched_sessions SELECT DISTINCT cf.session_id FROM chain_events e JOIN chain_facts cf USING (file_id, chain_id)
  JOIN ((SELECT * FROM fresh_copies EXCEPT SELECT * FROM line_copies) UNION ALL (SELECT * FROM line_copies EXCEPT SELECT * FROM fresh_copies)) d
  USING (file_id, line) WHERE cf.session_id IS NOT NULL;` : ''}
DELETE FROM line_copies c WHERE NOT EXISTS (SELECT 1 FROM fresh_copies f WHERE f.file_id = c.file_id AND f.line = c.line);
INSERT INTO line_copies SELECT * FROM fresh_copies EXCEPT SELECT * FROM line_copies;
DROP TABLE fresh_copies;
`;
}

/** The copies (see deriveLineCopies) of a whole derive, before its chains. */
export const DERIVE_LINE_COPIES = deriveLineCopies(false);

/** The copies of a touched derive, before its chains: noting the sessions whose compactions or rounds they move. */
export const DERIVE_TOUCHED_LINE_COPIES = deriveLineCopies(true);

/** A session the last ingest touched (see DERIVE_TOUCHED_REQUESTS); chains without a session always are. */
const TOUCHED_SESSION = `(session_id IS NULL OR session_id IN (SELECT session_id FROM touched_sessions))`;

/**
 * Re-derives only the chains of the sessions in `touched_sessions`: a chain's facts, requests,
 * meta file, spawns and links all belong to its own session. The one link across sessions, a
 * v1.x sidechain matched to a spawn by its prompt, is covered by noting the sessions of the
 * sidechains whose prompt a changed file's spawns carry.
 */
export const DERIVE_TOUCHED_CHAINS = `
CREATE OR REPLACE TEMP TABLE fresh_chains AS ${chainsSelect(`AND ${TOUCHED_SESSION}`, 'path')};
${replaceChanged('chains', 'chain_id', TOUCHED_SESSION, 'fresh_chains')}
`;

/**
 * The chains of the sessions `sessionFilter` keeps (all, or the touched ones), each file ordered
 * by `pathOrder`: its rank by path in a whole derive, where an arg_min over the paths themselves
 * kept its states in memory (10 GB of logs ran out), or the path in a touched derive, whose few
 * chains do not need every path sorted first. The meta files, spawns and links are read for
 * those sessions only: a chain meets only its own session's.
 */
function chainsSelect(sessionFilter: string, pathOrder: 'path' | 'row_number() OVER (ORDER BY path)'): string {
  return `
WITH sf AS (SELECT f.* FROM files f JOIN scope s USING (file_id)),
copied AS (SELECT file_id, chain_id, count(*) FILTER (WHERE kind = 'compaction') AS copied_compactions,
                  count(*) FILTER (WHERE kind = 'round') AS copied_rounds FROM chain_events SEMI JOIN line_copies USING (file_id, line) GROUP BY ALL),
fp AS ${pathOrder === 'path' ? 'NOT MATERIALIZED ' : ''}(SELECT file_id, ${pathOrder} AS path_rank FROM files),
facts AS (
  SELECT chain_id, any_value(session_id) AS session_id, any_value(agent_id) AS agent_id, any_value(kind) AS kind,
         -- a file's rounds and compactions less those it copies from another transcript (line_copies)
         max(rounds - coalesce(copied_rounds, 0))::INTEGER AS rounds,
         max(compactions - coalesce(copied_compactions, 0))::INTEGER AS compactions, min(first_t) AS first_t,
         -- the chain's first file by path (file ids follow the order files were first seen)
         arg_min(file_id, path_rank) AS file_id
  FROM (SELECT * FROM chain_facts WHERE true ${sessionFilter}) JOIN scope USING (file_id) JOIN fp USING (file_id)
       LEFT JOIN copied USING (file_id, chain_id) GROUP BY chain_id),
req AS (
  SELECT chain_id, any_value(session_id) AS session_id, any_value(agent_id) AS agent_id, count(*) AS requests,
         min(t) AS first_t, max(t) AS last_t, any_value(project) AS project, arg_min(file_id, path_rank) AS file_id
  FROM (SELECT * FROM requests WHERE true ${sessionFilter}) JOIN fp USING (file_id) GROUP BY chain_id),
base AS (
  SELECT coalesce(f.chain_id, r.chain_id) AS chain_id, coalesce(f.session_id, r.session_id) AS session_id,
         coalesce(f.agent_id, r.agent_id) AS agent_id,
         coalesce(f.kind, CASE WHEN r.agent_id IS NULL THEN 'main' ELSE 'subagent' END) AS kind,
         coalesce(f.rounds, 0) AS rounds, coalesce(f.compactions, 0) AS compactions,
         coalesce(r.requests, 0) AS requests, coalesce(r.first_t, f.first_t) AS first_t, r.last_t,
         coalesce(f.file_id, r.file_id) AS file_id, r.project
  FROM facts f FULL OUTER JOIN req r ON f.chain_id = r.chain_id),
-- one meta file per agent, its two fields together (any one, should a layout hold two: ordered by
-- path, or by its rank, the derive needed ~16 MB more on 10 GB of logs and ran out of its bound)
meta AS (SELECT session_id, agent_id, m.t AS meta_type, m.u AS meta_tool
         FROM (SELECT session_id, agent_id, any_value({'t': meta_agent_type, 'u': meta_tool_use_id}) AS m
               FROM sf WHERE kind = 'meta' ${sessionFilter} GROUP BY ALL)),
spawn_by_tool AS (SELECT session_id, tool_use_id, any_value(requested_type) AS requested_type, any_value(spawn_name) AS spawn_name
                  FROM spawns JOIN scope USING (file_id) WHERE true ${sessionFilter} GROUP BY ALL),
-- of the tool results naming an agent, those of a spawning tool_use (a TaskOutput's names it too),
-- one with a requested type first, then by tool_use id
link AS (SELECT l.session_id, l.agent_id,
                coalesce(min(l.tool_use_id) FILTER (WHERE s.requested_type IS NOT NULL), min(l.tool_use_id)) AS tool_use_id
         FROM (SELECT agent_links.* FROM agent_links JOIN scope USING (file_id) WHERE true ${sessionFilter}) l
         JOIN spawn_by_tool s ON s.session_id = l.session_id AND s.tool_use_id = l.tool_use_id GROUP BY ALL),
side AS (SELECT chain_id, sp.t AS requested_type, sp.n AS spawn_name
         FROM (SELECT r.chain_id, arg_min({'t': s.requested_type, 'n': s.spawn_name}, s.tool_use_id) AS sp
               FROM sidechain_roots r JOIN scope USING (file_id)
               -- the Task calls of the files in scope only (SPEC §1.1: a run covers exactly its roots' files)
               JOIN (SELECT spawns.* FROM spawns JOIN scope USING (file_id)) s ON s.prompt_hash = r.prompt_hash AND r.prompt_hash IS NOT NULL GROUP BY r.chain_id)),
-- one spawn, taken whole: the meta's toolUseId's, else the linked one's, else (v1.x) the prompt's
resolved AS (
  SELECT b.*, m.meta_type,
         CASE WHEN s1.tool_use_id IS NOT NULL THEN s1.requested_type WHEN s2.tool_use_id IS NOT NULL THEN s2.requested_type ELSE sd.requested_type END AS requested_type,
         CASE WHEN s1.tool_use_id IS NOT NULL THEN s1.spawn_name WHEN s2.tool_use_id IS NOT NULL THEN s2.spawn_name ELSE sd.spawn_name END AS spawn_name
  FROM base b
  LEFT JOIN meta m ON m.session_id = b.session_id AND m.agent_id = b.agent_id
  LEFT JOIN spawn_by_tool s1 ON s1.session_id = b.session_id AND s1.tool_use_id = m.meta_tool
  LEFT JOIN link l ON l.session_id = b.session_id AND l.agent_id = b.agent_id
  LEFT JOIN spawn_by_tool s2 ON s2.session_id = b.session_id AND s2.tool_use_id = l.tool_use_id
  LEFT JOIN side sd ON sd.chain_id = b.chain_id)
SELECT chain_id, session_id, agent_id, kind,
       CASE WHEN kind = 'main' THEN 'main'
            ELSE coalesce(meta_type, requested_type,
                          CASE WHEN agent_id LIKE 'acompact-%' THEN 'compaction'
                               WHEN agent_id LIKE 'aprompt_suggestion-%' THEN 'prompt_suggestion' END,
                          'unknown') END AS agent_type,
       requested_type, spawn_name,
       CASE WHEN kind = 'main' THEN 'main'
            WHEN meta_type IS NOT NULL AND requested_type IS NOT NULL
            THEN CASE WHEN meta_type = requested_type THEN 'resolved' ELSE 'lost' END
            ELSE 'unknown' END AS definition,
       coalesce(project, (SELECT any_value(project) FROM files WHERE files.file_id = resolved.file_id), 'unknown') AS project,
       file_id, greatest(rounds, CASE WHEN requests > 0 THEN 1 ELSE 0 END) AS rounds, compactions, requests, first_t, last_t
FROM resolved`;
}
