/**
 * A whole derive writes its requests in parts, each a range of time (store.ts deriveRequests,
 * schema.ts requestParts): the parts, written in turn, are the table one ORDER BY t, key gives.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { requestCuts, requestParts } from '../../src/store/schema.js';
import { Store } from '../../src/store/store.js';
import { corpus, MAROT_DOV, run, tmp } from './helpers.js';

test('the parts hold every row once and in order, with ties at the cuts, NaN and no time', async () => {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  // 60 rows over 9 times (so most cuts fall on a time several rows share), then NaN and NULL
  const rows = Array.from({ length: 60 }, (_, i) => `(${(i * 7) % 9}::DOUBLE * 1000, 'k${String((i * 13) % 60).padStart(2, '0')}')`);
  rows.push(`('NaN'::DOUBLE, 'nan1')`, `(NULL, 'none1')`, `(NULL, 'none0')`, `(-0.5, 'neg')`);
  await c.run(`CREATE TABLE request_groups (t DOUBLE, key VARCHAR); INSERT INTO request_groups VALUES ${rows.join(', ')}`);
  const keys = async (where: string) => (await c.runAndReadAll(`SELECT key FROM request_groups WHERE ${where} ORDER BY t, key`)).getRows().map((r) => r[0]);
  const whole = await keys('true');
  assert.equal(whole.length, 64);
  let split = 0;
  for (const parts of [2, 3, 5, 8, 30, 64]) {
    const [[cuts]] = (await c.runAndReadAll(requestCuts(parts))).getRows();
    const values = (cuts as { items: unknown[] }).items.map(Number);
    const wheres = requestParts(values);
    // a cut at NaN (the top quantiles here) leaves one part
    assert.equal(wheres.length, values.every(Number.isFinite) ? parts : 1, `${parts} parts`);
    const inTurn: unknown[] = [];
    for (const w of wheres) inTurn.push(...(await keys(w)));
    assert.deepEqual(inTurn, whole, `${parts} parts, cut at ${values.join(', ')}`);
    if (wheres.length > 1) split++;
  }
  assert.equal(split, 5, 'all but the 64 parts, whose top cut is NaN, are cut');
  // no finite cut: one part, all rows
  assert.deepEqual(requestParts([]), ['true']);
  assert.deepEqual(requestParts([Number.NaN, 5]), ['true']);
});

test('a derive in parts writes the same requests, in the same order, as one part', async () => {
  const root = corpus([MAROT_DOV]);
  const db = path.join(tmp(), 'parts.duckdb');
  (await run([root], db)).store.close();
  const store = await Store.open(db);
  try {
    // times rounded to the minute, so that many requests share one and cuts fall on shared times
    await store.run(`UPDATE observations SET t = floor(t / 60000) * 60000`);
    // every column in stored order (store.all gives plain numbers, -0 and NaN compared exactly)
    const table = async () => store.all(`SELECT * FROM requests ORDER BY rowid`);
    const sum = async () => (await store.all(`SELECT sum(usd) AS usd, count(DISTINCT t) AS times, count(*) AS n FROM requests`))[0];
    await store.derive({ requestsPerPart: 1e9 });
    const one = await table();
    const oneSum = await sum();
    assert.ok(Number(oneSum.n) > 100, `${oneSum.n} requests`);
    assert.ok(Number(oneSum.times) < Number(oneSum.n) / 2, `${oneSum.times} times for ${oneSum.n} requests: shared times`);
    await store.derive({ requestsPerPart: 7 });
    assert.deepEqual(await table(), one);
    assert.equal((await sum()).usd, oneSum.usd);
  } finally {
    store.close();
  }
});
