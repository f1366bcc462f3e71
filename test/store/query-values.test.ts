/**
 * `cachelens query` prints values of every DuckDB type the same at any depth: inside a STRUCT, a
 * LIST, an ARRAY, a MAP or a UNION as at the top level (store/query-values.ts), in the table, in
 * --csv and in --json.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadDuckdb } from '../../src/store/duckdb.js';
import { queryTable } from '../../src/store/store.js';
import { cellText, formatRows } from '../../src/reporters/rows.js';
import { repoRoot, tmp } from './helpers.js';

const cli = path.join(repoRoot, 'dist/cli.js');

function cachelens(args: string[]) {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
}

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  const { DuckDBInstance } = await loadDuckdb();
  const db = await (await DuckDBInstance.create(':memory:')).connect();
  try {
    return queryTable(await db.runAndReadAll(sql)).rows;
  } finally {
    db.closeSync();
  }
}

// each SQL literal, and what `cachelens query` prints for it
const VALUES: [string, unknown][] = [
  [`DATE '2025-01-02'`, '2025-01-02'],
  [`TIMESTAMP '2025-01-02 03:04:05.678'`, '2025-01-02T03:04:05.678Z'],
  [`TIMESTAMPTZ '2025-01-02 03:04:05+02'`, '2025-01-02T01:04:05.000Z'],
  [`TIMESTAMP_NS '2025-01-02 03:04:05.123456789'`, '2025-01-02T03:04:05.123Z'],
  [`TIMESTAMP_S '2025-01-02 03:04:05'`, '2025-01-02T03:04:05.000Z'],
  [`TIME '01:02:03'`, '01:02:03'],
  [`TIME '23:59:59.25'`, '23:59:59.250000'],
  [`TIME '24:00:00'`, '24:00:00'],
  [`INTERVAL '1 year 2 months 3 days 01:02:03.5'`, '1 year 2 months 3 days 01:02:03.5'],
  [`1.50::DECIMAL(10,2)`, 1.5],
  [`123456789012345678.123::DECIMAL(38,3)`, '123456789012345678.123'],
  [`170141183460469231731687303715884105727::HUGEINT`, '170141183460469231731687303715884105727'],
  [`9007199254740993::BIGINT`, '9007199254740993'],
  [`42::BIGINT`, 42],
  [`'\\x01ab'::BLOB`, '\\x01ab'],
  [`'12345678-1234-1234-1234-123456789abc'::UUID`, '12345678-1234-1234-1234-123456789abc'],
  [`'nan'::DOUBLE`, 'NaN'],
  [`'-inf'::FLOAT`, '-Infinity'],
  // a FLOAT's shortest text, as DuckDB prints it: the double of its value was 0.10000000149011612
  [`0.1::FLOAT`, 0.1],
  [`1.1::FLOAT`, 1.1],
  [`3.4028235e38::FLOAT`, 3.4028235e38],
  [`16777217::FLOAT`, 16777216],
  [`DATE 'infinity'`, 'infinity'],
  [`TIMESTAMP '-infinity'`, '-infinity'],
  // years outside 0000 – 9999 in ISO 8601's expanded form, a DATE's as a TIMESTAMP's (DuckDB's text was
  // `10000-01-01`, `0045-03-15 (BC)`, and a TIMESTAMP beyond a JS Date `294247-01-10 04:00:54.775806`)
  [`DATE '0001-01-01'`, '0001-01-01'],
  [`DATE '9999-12-31'`, '9999-12-31'],
  [`DATE '10000-01-01'`, '+010000-01-01'],
  [`DATE '0001-01-01 (BC)'`, '0000-01-01'],
  [`DATE '0045-03-15 (BC)'`, '-000044-03-15'],
  [`DATE '5881580-07-10'`, '+5881580-07-10'],
  [`TIMESTAMP '10000-01-01 00:00:00'`, '+010000-01-01T00:00:00.000Z'],
  [`TIMESTAMP '294247-01-10 04:00:54.775806'`, '+294247-01-10T04:00:54.775Z'],
  [`TIMESTAMP '290309-12-22 (BC) 00:00:00'`, '-290308-12-22T00:00:00.000Z'],
  [`TIMESTAMPTZ '290309-12-22 (BC) 00:00:00+00'`, '-290308-12-22T00:00:00.000Z'],
];

test('a value inside a struct, list, array, map or union is printed as the same value at the top level is', async () => {
  for (const [literal, expected] of VALUES) {
    const [r] = await rows(`SELECT ${literal} AS v, {'x': ${literal}} AS s, [${literal}] AS l, [${literal}]::${typeOf(literal)}[1] AS a,
      MAP {'k': ${literal}} AS m, [{'deep': [${literal}]}] AS d, union_value(u := ${literal}) AS u`);
    assert.deepEqual(r, {
      v: expected,
      s: { x: expected },
      l: [expected],
      a: [expected],
      m: [{ key: 'k', value: expected }],
      d: [{ deep: [expected] }],
      u: { tag: 'u', value: expected },
    }, literal);
  }
});

function typeOf(literal: string): string {
  return /::(.+)$/.exec(literal)?.[1] ?? /^([A-Z_]+) '/.exec(literal)![1]!;
}

test("a STRUCT key named __proto__, constructor or toString is a key as any other, at any depth, and sets no prototype", async () => {
  const [r] = await rows(`SELECT {'__proto__': 1, 'constructor': 2} AS s, [{'__proto__': {'toString': DATE '2025-01-02'}}] AS l,
    MAP {'k': {'__proto__': NULL::INTEGER}} AS m, {'__proto__': {'polluted': true}} AS p`);
  // defined keys, compared as JSON prints them: the assigned key was lost and --json printed {}
  assert.equal(JSON.stringify(r), JSON.stringify({
    s: JSON.parse('{"__proto__": 1, "constructor": 2}'),
    l: [JSON.parse('{"__proto__": {"toString": "2025-01-02"}}')],
    m: [{ key: 'k', value: JSON.parse('{"__proto__": null}') }],
    p: JSON.parse('{"__proto__": {"polluted": true}}'),
  }));
  assert.equal(Object.getPrototypeOf(r!.p), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  const [plain] = await rows(`SELECT {'a': 1, 'b': [2]} AS s`);
  assert.deepEqual(plain, { s: { a: 1, b: [2] } });
});

test('columns of the same name keep each its own value: a later one is NAME:k, k the first suffix no column has', async () => {
  const { DuckDBInstance } = await loadDuckdb();
  const db = await (await DuckDBInstance.create(':memory:')).connect();
  try {
    const t = queryTable(await db.runAndReadAll(`SELECT 1 AS x, 2 AS x, 3 AS "x:1", 4 AS "X", 5 AS x, 6 AS "x:1"`));
    // DuckDB's deduplicatedColumnNames gave x, x:1, x:1, …: the second x's 2 was lost under the 3
    assert.deepEqual(t.columns, ['x', 'x:2', 'x:1', 'X', 'x:3', 'x:1:1']);
    assert.deepEqual(t.rows, [{ x: 1, 'x:2': 2, 'x:1': 3, X: 4, 'x:3': 5, 'x:1:1': 6 }]);
    assert.equal(new Set(t.columns).size, t.columns.length);
  } finally {
    db.closeSync();
  }
});

test('a BLOB prints as CAST(x AS VARCHAR) does, every byte, and reads back as the same bytes: a backslash, a quote too', async () => {
  const { DuckDBInstance } = await loadDuckdb();
  const db = await (await DuckDBInstance.create(':memory:')).connect();
  try {
    // every byte alone, and 5C 78 34 31 (the text \x41), which node-api's text printed as \x41, read back as A
    const sql = `SELECT b, v, v::VARCHAR AS cast FROM (SELECT range AS b, unhex(lpad(to_hex(range), 2, '0')) AS v FROM range(256)
      UNION ALL SELECT 256, from_hex('5C783431') UNION ALL SELECT 257, from_hex('61275C2200FF'))`;
    const t = queryTable(await db.runAndReadAll(sql));
    assert.equal(t.rows.length, 258);
    for (const r of t.rows) {
      assert.equal(r.v, r.cast, `byte ${String(r.b)}`);
      const back = (await db.runAndReadAll(`SELECT hex($1::BLOB) AS h, hex(v) AS want FROM (${sql}) WHERE b = ${String(r.b)}`, [String(r.v)])).getRowObjectsJS()[0]!;
      assert.equal(back.h, back.want, `byte ${String(r.b)} read back`);
    }
    assert.equal(t.rows[256]!.v, '\\x5Cx41');
  } finally {
    db.closeSync();
  }
});

test('NULL stays null at any depth; booleans, texts and plain numbers are as they are', async () => {
  const [r] = await rows(`SELECT NULL AS n, [NULL::DATE] AS ln, {'d': NULL::TIMESTAMP} AS sn, true AS b, 'x' AS t, 0.25::DOUBLE AS f, 7 AS i`);
  assert.deepEqual(r, { n: null, ln: [null], sn: { d: null }, b: true, t: 'x', f: 0.25, i: 7 });
});

test('CLI: the table shows the columns in the query\'s order, a column named as an integer (a PIVOT over rounds) too', () => {
  const file = path.join(tmp(), 'pivot.sql');
  writeFileSync(file, `SELECT 'x' AS name, 10 AS "2", 20 AS "1", 30 AS total`);
  const table = cachelens(['query', file, '--db', ':memory:']);
  assert.equal(table.status, 0, table.stderr);
  // a row's keys put 1 and 2 first: the header read '1  2  name  total', each value under its own name
  assert.deepEqual(table.stdout.split('\n')[0]!.trim().split(/\s+/), ['name', '2', '1', 'total']);
  assert.deepEqual(table.stdout.split('\n')[2]!.trim().split(/\s+/), ['x', '10', '20', '30']);
  const json = cachelens(['query', file, '--db', ':memory:', '--json']);
  assert.deepEqual((JSON.parse(json.stdout) as { columns: string[] }).columns, ['name', '2', '1', 'total']);
  assert.equal(cachelens(['query', file, '--db', ':memory:', '--csv']).stdout.split('\n')[0], 'name,2,1,total');
});

test('CLI: --csv quotes as RFC 4180 does and keeps every text exact, one beginning with =, +, - or @ too (no quote mark added)', () => {
  const file = path.join(tmp(), 'csv.sql');
  writeFileSync(file, `SELECT 'a,b' AS c, E'l1\\r\\nl2' AS crlf, E'q"t\\tx' AS q, '=1+2' AS f1, '+1' AS f2, '-1' AS f3, '@SUM(A1)' AS f4, '' AS e, NULL AS n, -0.0::DOUBLE AS z`);
  const r = cachelens(['query', file, '--db', ':memory:', '--csv']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'c,crlf,q,f1,f2,f3,f4,e,n,z\n"a,b","l1\r\nl2","q""t\tx",=1+2,+1,-1,@SUM(A1),"",,0\n');
});

test('CLI: the table of a result without rows shows its columns above (no rows), as --csv prints its header', () => {
  const file = path.join(tmp(), 'none.sql');
  writeFileSync(file, `SELECT 1 AS "first", 'x' AS second WHERE false`);
  const r = cachelens(['query', file, '--db', ':memory:']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  // it printed '(no rows)' alone
  assert.deepEqual(lines[0]!.trim().split(/\s+/), ['first', 'second']);
  assert.equal(lines.at(-1), '(no rows)');
  assert.equal(cachelens(['query', file, '--db', ':memory:', '--csv']).stdout, 'first,second\n');
});

test('CLI: nested DATE, TIMESTAMP and DECIMAL print as top-level ones do, in the table, --csv and --json', () => {
  const db = path.join(tmp(), 's.duckdb');
  const file = path.join(tmp(), 'nested.sql');
  writeFileSync(file, `SELECT {'d': DATE '2025-01-02', 't': TIMESTAMP '2025-01-02 03:04:05'} AS s, [DATE '2025-01-02'] AS l,
    MAP {'k': 1.5::DECIMAL(10,2)} AS m, [INTERVAL 3 DAY] AS i, ['\\x01ab'::BLOB] AS b, [TIME '01:02:03'] AS tm`);
  const json = cachelens(['query', file, '--db', db, '--json']);
  assert.equal(json.status, 0, json.stderr);
  assert.deepEqual((JSON.parse(json.stdout) as { rows: unknown[] }).rows, [
    { s: { d: '2025-01-02', t: '2025-01-02T03:04:05.000Z' }, l: ['2025-01-02'], m: [{ key: 'k', value: 1.5 }], i: ['3 days'], b: ['\\x01ab'], tm: ['01:02:03'] },
  ]);
  const csv = cachelens(['query', file, '--db', db, '--csv']);
  assert.equal(csv.status, 0, csv.stderr);
  assert.equal(csv.stdout.trim().split('\n')[1],
    `"{""d"":""2025-01-02"",""t"":""2025-01-02T03:04:05.000Z""}","[""2025-01-02""]","[{""key"":""k"",""value"":1.5}]","[""3 days""]","[""\\\\x01ab""]","[""01:02:03""]"`);
  const table = cachelens(['query', file, '--db', db]);
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /\["2025-01-02"\]/);
  assert.doesNotMatch(table.stdout, /T00:00:00|micros|Buffer|3723000000/);
});

test('CLI: query cost_by --csv sums weights and USD without a DOUBLE\'s noise (375407.2, not 375407.19999999995), as every bundled query that sums them', () => {
  const db = path.join(tmp(), 's.duckdb');
  const sampleLogs = path.join(repoRoot, 'sample-logs');
  // as ingest prices them: a cache read weighs $0.30 / $3 = 0.09999999999999999 (a DOUBLE), so 10215
  // read tokens weigh 1021.4999999999999 and 23783 2378.2999999999997, and a sum kept that error
  const set = path.join(tmp(), 'set.sql');
  writeFileSync(set, `UPDATE requests SET model = 'm', cache_read = CASE WHEN hash(key) % 2 = 0 THEN 10215 ELSE 23783 END,
    weight_read = (CASE WHEN hash(key) % 2 = 0 THEN 10215 ELSE 23783 END) * (0.3::DOUBLE / 3),
    weight = (CASE WHEN hash(key) % 2 = 0 THEN 10215 ELSE 23783 END) * (0.3::DOUBLE / 3),
    usd = (CASE WHEN hash(key) % 2 = 0 THEN 10215 ELSE 23783 END) * (0.3::DOUBLE / 3) * 0.000003::DOUBLE RETURNING cache_read`);
  const updated = cachelens(['query', set, sampleLogs, '--db', db, '--json']);
  assert.equal(updated.status, 0, updated.stderr);
  const reads = (JSON.parse(updated.stdout) as { rows: { cache_read: number }[] }).rows.map((r) => BigInt(r.cache_read));
  const tokens = reads.reduce((a, b) => a + b, 0n);
  assert.ok(reads.length > 10);
  // the exact sums: tokens / 10 weight, tokens × 3 / 10^7 USD
  const exact = (units: bigint, decimals: number) => Number(`${units / 10n ** BigInt(decimals)}.${String(units % 10n ** BigInt(decimals)).padStart(decimals, '0')}`);
  const csv = cachelens(['query', 'cost_by', sampleLogs, '--db', db, '--param', 'by=model', '--csv']);
  assert.equal(csv.status, 0, csv.stderr);
  const [header, line] = csv.stdout.trim().split('\n');
  const row = Object.fromEntries(header!.split(',').map((c, i) => [c, line!.split(',')[i]]));
  assert.deepEqual([row.weight_read, row.weight, row.usd], [String(exact(tokens, 1)), String(exact(tokens, 1)), String(exact(tokens * 3n, 7))]);
  const json = JSON.parse(cachelens(['query', 'cost_by', sampleLogs, '--db', db, '--param', 'by=model', '--json']).stdout) as { rows: Record<string, unknown>[] };
  assert.deepEqual([json.rows[0]!.weight_read, json.rows[0]!.usd], [exact(tokens, 1), exact(tokens * 3n, 7)]);
  // every bundled query that sums weights or USD: at most 6 decimals of weight, 12 of USD
  const decimals = (x: unknown) => (x === null ? 0 : /^-?\d+(?:\.(\d+))?(?:e-(\d+))?$/.exec(String(x))!.slice(1).reduce((n, d, i) => n + (i === 0 ? (d?.length ?? 0) : Number(d ?? 0)), 0));
  const columns: Record<string, [string[], string[]]> = {
    write_read_ratio: [['write_weight', 'read_weight'], []],
    sessions: [['weight'], ['usd']],
    hourly: [['weight'], ['usd']],
    report_components: [['weight'], ['usd']],
    skill_listing_by_agent_type: [['weight'], []],
  };
  for (const [query, [weights, usds]] of Object.entries(columns)) {
    const out = cachelens(['query', query, sampleLogs, '--db', db, '--json']);
    assert.equal(out.status, 0, out.stderr);
    const rows = (JSON.parse(out.stdout) as { rows: Record<string, unknown>[] }).rows;
    assert.ok(rows.length > 0, query);
    for (const r of rows) {
      for (const c of weights) assert.ok(decimals(r[c]) <= 6, `${query} ${c} ${String(r[c])}`);
      for (const c of usds) assert.ok(decimals(r[c]) <= 12, `${query} ${c} ${String(r[c])}`);
    }
  }
});

test('the table shows a fraction to 15 significant digits, or to the cent where that is more: 1234.5678 USD is 1,234.5678, not 1235; no DOUBLE noise', () => {
  assert.equal(cellText(1234.5678), '1,234.5678');
  assert.equal(cellText(123.456), '123.456');
  assert.equal(cellText(0.000175), '0.000175');
  assert.equal(cellText(0.1 + 0.2), '0.3');
  assert.equal(cellText(12.340000000000002), '12.34');
  assert.equal(cellText(12345678901234.56), '12,345,678,901,234.56');
  assert.equal(cellText(6.5e-7), '6.5e-7');
  assert.equal(cellText(-1234.5), '-1,234.5');
  assert.equal(cellText(9007199254740991), '9,007,199,254,740,991', 'integers exactly');
  // a column's decimal points line up: units under units
  const lines = formatRows([{ usd: 1234.5678, n: 3 }, { usd: 0.3, n: 12345 }, { usd: 12, n: null }, { usd: null, n: 1 }], false).split('\n');
  assert.deepEqual(lines.slice(2).map((l) => l.padEnd(10).slice(0, 10)), ['1,234.5678', '    0.3   ', '   12     ', '          ']);
  assert.deepEqual(lines.slice(2).map((l) => l.slice(10).trimStart()), ['3', '12,345', '', '1']);
});

test('CLI: query\'s table keeps the cents of a sum, --csv and --json print it exactly', () => {
  const db = path.join(tmp(), 's.duckdb');
  const file = path.join(tmp(), 'sum.sql');
  writeFileSync(file, `SELECT sum(x) AS usd, count(*) AS n FROM (VALUES (1000.5678::DOUBLE), (234::DOUBLE)) t(x)`);
  const table = cachelens(['query', file, '--db', db]);
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /^1,234\.5678 +2$/m);
  const csv = cachelens(['query', file, '--db', db, '--csv']);
  assert.equal(csv.stdout.trim().split('\n')[1], `${1000.5678 + 234},2`);
  const json = JSON.parse(cachelens(['query', file, '--db', db, '--json']).stdout) as { rows: Record<string, unknown>[] };
  assert.deepEqual(json.rows, [{ usd: 1000.5678 + 234, n: 2 }]);
});

test('the table prints integers whose names say they are times or ids (hour_ms, first_t, from_h, file_id, line) without separators; other integers keep them', () => {
  // hourly printed 1,770,714,000,000 for an epoch-millisecond hour, zone_days 483,081 for an hour of UTC
  const table = formatRows([{ hour_ms: 1770714000000, first_t: 1770714132849, from_h: 483081, file_id: 12345, line: 10234, lines: 10234, usd: 1234.5, cache_write_1h: 33028 }], false);
  const [, , row] = table.split('\n');
  assert.deepEqual(row!.trim().split(/\s+/), ['1770714000000', '1770714132849', '483081', '12345', '10234', '10,234', '1,234.5', '33,028']);
  // a fraction in such a column is not an id: printed as any number
  assert.match(formatRows([{ t: 1770714132849.5 }], false), /1,770,714,132,849\.5/);
});

test('CLI: hourly\'s and zone_days\' times print without separators in the table; --json and --csv are unchanged', () => {
  const db = path.join(tmp(), 's.duckdb');
  const sampleLogs = path.join(repoRoot, 'sample-logs');
  for (const [query, columns] of [['hourly', ['hour_ms', 'all_first_ms', 'all_last_ms', 'first_ms', 'last_ms']], ['zone_days', ['from_h', 'to_h']]] as const) {
    const json = cachelens(['query', query, sampleLogs, '--db', db, '--json']);
    assert.equal(json.status, 0, json.stderr);
    const first = (JSON.parse(json.stdout) as { rows: Record<string, number>[] }).rows[0]!;
    const table = cachelens(['query', query, sampleLogs, '--db', db]);
    assert.equal(table.status, 0, table.stderr);
    const [header, , row] = table.stdout.split('\n');
    const names = header!.trim().split(/\s+/);
    const cells = row!.trim().split(/\s+/);
    for (const c of columns) {
      assert.equal(typeof first[c], 'number', `${query} ${c}`);
      assert.equal(cells[names.indexOf(c)], String(first[c]), `${query} ${c}`);
    }
    const csv = cachelens(['query', query, sampleLogs, '--db', db, '--csv']).stdout.split('\n');
    const csvNames = csv[0]!.split(',');
    for (const c of columns) assert.equal(csv[1]!.split(',')[csvNames.indexOf(c)], String(first[c]), `${query} ${c} in --csv`);
  }
});
