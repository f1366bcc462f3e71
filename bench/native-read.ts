/**
 * What a native reader would take (BENCHMARKS-log.md, Cold, sessions 38 and 44): DuckDB's
 * `read_ndjson` over a corpus's transcripts, on two threads, asked for the fields cachelens's
 * reader projects (LINE_SCHEMA in src/ingest/line.ts, `message.content` as a list of the block
 * fields it reads), `ignore_errors` on. Nothing here is cachelens's ingest: the lines DuckDB
 * rejects are dropped without a count, and no fact but the requests is derived.
 *
 *   npx tsx bench/native-read.ts --logs /tmp/cachelens-bench/1gb-samples-<commit> [--mode M]
 *
 * Modes: `read` (every field read and counted, nothing kept), `requests` (the usage lines grouped
 * by message id and request id, maxima per field as SPEC §1.3 merges them, written to a table in a
 * fresh store file), `store` (every line's fields written to a table first, then grouped).
 * Prints each statement's time, the totals it found, and the process's peak RSS.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadDuckdb, openingOptions } from '../src/store/duckdb.js';

const { values } = parseArgs({
  options: {
    logs: { type: 'string' },
    mode: { type: 'string', default: 'read' },
    threads: { type: 'string', default: '2' },
  },
});
if (!values.logs) throw new Error('--logs: a directory holding projects/**/*.jsonl (a bench corpus)');
if (!['read', 'requests', 'store'].includes(values.mode!)) throw new Error(`--mode: read, requests or store, not ${values.mode}`);

const usage =
  'STRUCT(input_tokens BIGINT, output_tokens BIGINT, cache_creation_input_tokens BIGINT, cache_read_input_tokens BIGINT, ' +
  'cache_creation STRUCT(ephemeral_5m_input_tokens BIGINT, ephemeral_1h_input_tokens BIGINT), service_tier VARCHAR)';
const block = 'STRUCT(type VARCHAR, id VARCHAR, name VARCHAR, tool_use_id VARCHAR, input STRUCT(subagent_type VARCHAR, name VARCHAR, prompt VARCHAR))';
const columns =
  `{type: 'VARCHAR', subtype: 'VARCHAR', timestamp: 'VARCHAR', sessionId: 'VARCHAR', cwd: 'VARCHAR', isSidechain: 'JSON', ` +
  `agentId: 'VARCHAR', uuid: 'VARCHAR', parentUuid: 'VARCHAR', requestId: 'VARCHAR', isCompactSummary: 'JSON', isMeta: 'JSON', ` +
  `message: 'STRUCT(id VARCHAR, model VARCHAR, role VARCHAR, usage ${usage}, content ${block}[])', ` +
  `toolUseResult: 'STRUCT(agentId VARCHAR, status VARCHAR)', attachment: 'JSON', data: 'JSON'}`;
const glob = join(values.logs, 'projects', '**', '*.jsonl').replaceAll("'", "''");
const lines = `read_ndjson('${glob}', columns = ${columns}, ignore_errors = true, filename = true)`;
const grouped = (from: string) =>
  `SELECT message.id AS message_id, requestId AS request_id, any_value(sessionId) AS session, min(timestamp) AS t, any_value(message.model) AS model,
     max(message.usage.input_tokens) AS input, max(message.usage.output_tokens) AS output,
     max(message.usage.cache_creation_input_tokens) AS cache_write, max(message.usage.cache_read_input_tokens) AS cache_read,
     max(message.usage.cache_creation.ephemeral_5m_input_tokens) AS write_5m, max(message.usage.cache_creation.ephemeral_1h_input_tokens) AS write_1h
   FROM ${from} WHERE message.usage IS NOT NULL GROUP BY ALL`;

const dir = mkdtempSync(join(tmpdir(), 'cachelens-native-'));
const { DuckDBInstance } = await loadDuckdb();
const instance = await DuckDBInstance.create(values.mode === 'read' ? ':memory:' : join(dir, 'store.duckdb'), openingOptions({ threads: values.threads! }));
const db = await instance.connect();
const plain = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);
let lap = performance.now();
async function timed(what: string, sql: string): Promise<void> {
  await db.run(sql);
  const now = performance.now();
  console.log(`${what}: ${((now - lap) / 1000).toFixed(2)} s`);
  lap = now;
}
try {
  if (values.mode === 'read') {
    const reader = await db.runAndReadAll(
      `SELECT count(*) AS lines, count(message.usage) AS usage_lines, sum(message.usage.output_tokens) AS output,
         sum(len(message.content)) AS content_blocks, count(attachment) AS attachments, count(DISTINCT filename) AS files FROM ${lines}`,
    );
    console.log(`read: ${((performance.now() - lap) / 1000).toFixed(2)} s`);
    console.log(JSON.stringify(reader.getRowObjects()[0], (_k, v) => plain(v)));
  } else {
    if (values.mode === 'store') await timed('every line written', `CREATE TABLE lines AS SELECT * FROM ${lines}`);
    await timed('requests written', `CREATE TABLE requests AS ${grouped(values.mode === 'store' ? 'lines' : lines)}`);
    const totals = await db.runAndReadAll(
      'SELECT count(*) AS requests, sum(input) AS input, sum(output) AS output, sum(cache_write) AS cache_write, sum(cache_read) AS cache_read FROM requests',
    );
    console.log(JSON.stringify(totals.getRowObjects()[0], (_k, v) => plain(v)));
  }
} finally {
  db.closeSync();
  instance.closeSync();
  rmSync(dir, { recursive: true, force: true });
}
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
console.log(`peak RSS: ${hwm ? Math.round(Number(hwm[1]) / 1024) : '?'} MiB`);
