/**
 * `--json` of every analysis prints weights, dollars and shares without floating-point noise
 * (src/format/json-numbers.ts: non-integers to 12 significant digits); `query` prints DuckDB's
 * values exactly; and a cold, a warm and an append run of `summary` still print the same bytes as
 * a store built afresh.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendFileSync, cpSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO, cli, tempDir } from '../helpers/corpus.js';

const SAMPLE = path.join(REPO, 'sample-logs');

/** Every non-integer number in a parsed `--json`, with where it is. */
function fractions(v: unknown, where = '', out: [string, number][] = []): [string, number][] {
  if (typeof v === 'number' && !Number.isInteger(v)) out.push([where, v]);
  else if (Array.isArray(v)) v.forEach((x, i) => fractions(x, `${where}[${i}]`, out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) fractions(x, `${where}.${k}`, out);
  return out;
}

/** Significant digits of a number as JSON writes it (its shortest text). */
function significantDigits(x: number): number {
  return String(Math.abs(x)).replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
}

test('--json of summary, sessions, blocks, anatomy, the what-ifs, crosstab, the replays and start, and the report\'s data: no number past 12 significant digits', () => {
  const db = path.join(tempDir(), 'store.duckdb');
  const tz = ['--timezone', 'UTC'];
  const runs: [string, string[]][] = [
    ['summary', ['summary', SAMPLE, '--db', db, ...tz]],
    ['sessions', ['sessions', SAMPLE, '--db', db, ...tz]],
    ['blocks', ['blocks', SAMPLE, '--db', db, ...tz]],
    ['anatomy', ['anatomy', SAMPLE, '--db', db, ...tz]],
    ['whatif ttl', ['whatif', 'ttl', SAMPLE, '--db', db, ...tz]],
    ['whatif keepalive', ['whatif', 'keepalive', SAMPLE, '--db', db, ...tz]],
    ['crosstab usd', ['crosstab', SAMPLE, '--db', db, '--measure', 'usd', ...tz]],
    ['crosstab write_read_ratio', ['crosstab', SAMPLE, '--db', db, '--measure', 'write_read_ratio', ...tz]],
    ['replay channel', ['replay', 'channel', path.join(SAMPLE, 'channels', 'backend.jsonl')]],
    ['replay session', ['replay', 'session', 'top', SAMPLE, '--db', db]],
  ];
  // every command's noisy numbers, so that a failure names them all
  const noisy: Record<string, string[]> = {};
  for (const [name, args] of runs) {
    const r = cli([...args, '--json']);
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    const found = fractions(JSON.parse(r.stdout));
    // the weights and dollars of the sample corpus are fractions: the check has something to check
    assert.ok(found.length > 0, `${name}: no fractions`);
    const past = found.filter(([, x]) => significantDigits(x) > 12);
    if (past.length > 0) noisy[name] = past.slice(0, 2).map(([w, x]) => `${w} = ${x}`);
  }
  // the one the report's headline is read from as well
  const home = tempDir();
  const start = cli(['start', '--json', '--db', ':memory:', '--out', path.join(home, 'r.html')], { HOME: home, CLAUDE_CONFIG_DIR: path.join(home, 'none') });
  assert.equal(start.code, 0, start.stderr);
  const totals = JSON.parse(start.stdout).totals;
  for (const k of ['weight', 'usd']) if (significantDigits(totals[k]) > 12) noisy.start = [...(noisy.start ?? []), `.totals.${k} = ${totals[k]}`];
  // and the report's embedded data, written as --json writes numbers: its headline is start's totals
  const page = readFileSync(path.join(home, 'r.html'), 'utf8');
  const data = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(page)![1]!);
  assert.deepEqual([data.headline.weight, data.headline.usd], [totals.weight, totals.usd]);
  const inPage = fractions(data).filter(([, x]) => significantDigits(x) > 12);
  if (inPage.length > 0) noisy['report data'] = inPage.slice(0, 2).map(([w, x]) => `${w} = ${x}`);
  assert.deepEqual(noisy, {});
});

test('query --json prints DuckDB\'s values exactly: a DOUBLE with its every digit', () => {
  const file = path.join(tempDir(), 'own.sql');
  writeFileSync(file, 'SELECT 0.1::DOUBLE + 0.2::DOUBLE AS x, 1475294.5999999999::DOUBLE AS y\n');
  const r = cli(['query', file, SAMPLE, '--db', ':memory:', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).rows, [{ x: 0.30000000000000004, y: 1475294.5999999999 }]);
  assert.match(r.stdout, /"x": 0\.30000000000000004/);
});

/** The file's last response with usage, parsed. */
function lastResponse(file: string): Record<string, any> {
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = JSON.parse(lines[i]!);
    if (l.type === 'assistant' && l.message?.usage && l.message.model !== '<synthetic>') return l;
  }
  throw new Error(`${file}: no response`);
}

/** A copy of the file's last response a minute later: with `reuse`, of the same request. */
function appendResponse(file: string, id: string, reuse = false): void {
  const l = lastResponse(file);
  if (!reuse) {
    l.message.id = `msg_json_${id}`;
    l.requestId = `req_json_${id}`;
  }
  l.uuid = `json-${id}`;
  l.timestamp = new Date(Date.parse(l.timestamp) + 60_000).toISOString();
  // a 5-minute write and a read: weights of 1.25 and 0.1 a token, fractions to add to the kept sums
  l.message.usage = { ...l.message.usage, cache_creation_input_tokens: 1237, cache_read_input_tokens: 33_331, output_tokens: 77 };
  delete l.message.usage.cache_creation;
  appendFileSync(file, JSON.stringify(l) + '\n');
}

test('summary --json: a cold, a warm and an append run (answered without DuckDB) print what a store built afresh prints, byte for byte', () => {
  const root = path.join(tempDir(), 'logs');
  cpSync(path.join(SAMPLE, 'projects'), path.join(root, 'projects'), { recursive: true });
  const db = path.join(tempDir(), 'store.duckdb');
  const probe = path.join(path.dirname(fileURLToPath(import.meta.url)), '../store/duckdb-probe.mjs');
  const run = (dbPath: string) => {
    const r = cli(['summary', '--db', dbPath, '--json', '--timezone', 'UTC'], { CLAUDE_CONFIG_DIR: root, HOME: tempDir(), NODE_OPTIONS: `--import ${probe}` });
    assert.equal(r.code, 0, r.stderr);
    return { out: r.stdout, duckdb: /duckdb-loaded: (true|false)/.exec(r.stderr)?.[1] };
  };
  const fresh = () => run(path.join(tempDir(), 'fresh.duckdb')).out;
  const cold = run(db);
  const warm = run(db);
  assert.deepEqual([cold.duckdb, warm.duckdb], ['true', 'false']);
  assert.equal(warm.out, cold.out);
  assert.equal(cold.out, fresh());
  const files = readdirSync(path.join(root, 'projects'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.jsonl') && !f.includes('subagents'))
    .map((f) => path.join(root, 'projects', f))
    .sort();
  // an append the store reads (a copy of a request it holds) keeps the base an append run adds to
  appendResponse(files[0]!, 'settle', true);
  assert.equal(run(db).duckdb, 'true');
  for (const [i, f] of files.entries()) if (i % 3 === 0) appendResponse(f, `a${i}`);
  const appended = run(db);
  assert.equal(appended.duckdb, 'false', 'the append run was to be answered without the store');
  assert.notEqual(appended.out, cold.out);
  assert.equal(appended.out, fresh());
  assert.ok(fractions(JSON.parse(appended.out)).every(([, x]) => significantDigits(x) <= 12), appended.out);
  const after = run(db);
  assert.equal(after.out, appended.out);
});

/** Tokens of each kind one request of the big-number tests uses (5-minute writes only). */
interface Tokens {
  input: number;
  output: number;
  write5m: number;
  read: number;
}

/** Request `i` of session s1 (Opus 4.6, a second after the one before it) using `u`: one transcript line. */
function line(i: number, u: Tokens): string {
  return JSON.stringify({
    type: 'assistant', sessionId: 's1', timestamp: new Date(Date.UTC(2025, 2, 1, 10) + i * 1_000).toISOString(), requestId: `req_${i}`,
    message: {
      id: `m${i}`, model: 'claude-opus-4-6', role: 'assistant', content: [{ type: 'text', text: 'ok' }],
      usage: { input_tokens: u.input, output_tokens: u.output, cache_creation_input_tokens: u.write5m, cache_read_input_tokens: u.read, cache_creation: { ephemeral_5m_input_tokens: u.write5m, ephemeral_1h_input_tokens: 0 } },
    },
  });
}

test('summary, sessions and blocks of 10¹² tokens: totals exact in --json and in the tables (they were rounded to 12 digits: 8,827,349,978,440)', () => {
  // 1,201 requests of just under 10⁹ tokens of each kind (more is invalid_usage): 1.2·10¹² of each
  const n = 1_201;
  const u = { input: 999_999_999, output: 999_999_997, write5m: 999_999_999, read: 999_999_993 };
  const lines = Array.from({ length: n }, (_, i) => line(i, u));
  const root = tempDir();
  writeFileSync(path.join(root, 's1.jsonl'), lines.join('\n') + '\n');
  // the weight in hundredths, exactly: input ×1, output ×5 (Opus 4.6), 5m write ×1.25, read ×0.1
  const hundredths = BigInt(n) * (100n * BigInt(u.input) + 500n * BigInt(u.output) + 125n * BigInt(u.write5m) + 10n * BigInt(u.read));
  const weight = Number(hundredths) / 100;
  assert.ok(weight > 1e12 && weight < Number.MAX_SAFE_INTEGER && !Number.isInteger(weight));
  const tokens = BigInt(n) * BigInt(u.input);
  const grouped = (x: bigint) => x.toString().replace(/\B(?=(\d{3})+$)/g, ',');
  // halves up, as int() rounds
  const shownWeight = grouped((hundredths + 50n) / 100n);
  const summary = cli(['summary', root, '--db', ':memory:', '--json']);
  assert.equal(summary.code, 0, summary.stderr);
  const totals = JSON.parse(summary.stdout).totals;
  assert.equal(totals.weight, weight);
  assert.equal(totals.input, Number(tokens));
  const sessions = JSON.parse(cli(['sessions', root, '--db', ':memory:', '--json']).stdout);
  assert.equal(sessions.sessions[0].weight, weight);
  for (const cmd of [['summary'], ['sessions'], ['blocks']]) {
    const text = cli([...cmd, root, '--db', ':memory:', '--wide']);
    assert.equal(text.code, 0, text.stderr);
    assert.ok(text.stdout.includes(shownWeight), `${cmd[0]} shows ${shownWeight}:\n${text.stdout}`);
  }
  assert.ok(cli(['summary', root, '--db', ':memory:']).stdout.includes(grouped(tokens)));
});

test('whatif ttl and keepalive baselines of 3·10¹³ weight of varied requests are the totals summary prints, to the cent and the hundredth (whatif summed doubles: …254.81 for …254.75)', () => {
  // 5,001 requests of different sizes, just under 10⁹ tokens of each kind: a weight of about 3.7·10¹³, which a sum
  // of doubles in request order puts at …014.09 where it is …014.05
  const n = 5_001;
  const sizes = (i: number) => ({ input: 999_999_999 - ((i * 104_729) % 1_000_003), output: 999_999_997 - ((i * 104_729) % 999_983), write5m: 999_999_999 - ((i * 15_485_863) % 999_979), read: 999_999_993 - ((i * 314_187) % 999_961) });
  const lines = Array.from({ length: n }, (_, i) => line(i, sizes(i)));
  const root = tempDir();
  writeFileSync(path.join(root, 's1.jsonl'), lines.join('\n') + '\n');
  let hundredths = 0n;
  for (let i = 0; i < n; i++) {
    const u = sizes(i);
    hundredths += 100n * BigInt(u.input) + 500n * BigInt(u.output) + 125n * BigInt(u.write5m) + 10n * BigInt(u.read);
  }
  assert.ok(hundredths > 3n * 10n ** 15n, 'over 3·10¹³');
  const json = (args: string[]) => {
    const r = cli([...args, root, '--db', ':memory:', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const totals = json(['summary']).totals;
  assert.equal(totals.weight, Number(hundredths) / 100, 'summary is exact');
  const ttl = json(['whatif', 'ttl']);
  const keepalive = json(['whatif', 'keepalive']);
  assert.deepEqual([ttl.baseline_weight, ttl.baseline_usd], [totals.weight, totals.usd], 'whatif ttl');
  assert.deepEqual([keepalive.baseline_weight, keepalive.baseline_usd], [totals.weight, totals.usd], 'whatif keepalive');
});
