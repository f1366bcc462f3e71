/**
 * A stream from a DuckDB connection is never cut short without a word (src/store/connection.ts):
 * DuckDB ends a connection's pending stream when the connection runs anything else, and the
 * stream's next fetch then looks like its end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { streamChunks, tracked } from '../../src/store/connection.js';
import { Store } from '../../src/store/store.js';
import { tmp } from './helpers.js';

const ROWS = 10_000; // several chunks of DuckDB's 2,048 rows
const SQL = `SELECT range AS x FROM range(${ROWS})`;

async function connection() {
  const instance = await DuckDBInstance.create(':memory:');
  const db = tracked(await instance.connect());
  return {
    db,
    close() {
      db.closeSync();
      instance.closeSync();
    },
  };
}

test('a tracked connection streams every row, and answers as the connection does', async () => {
  const { db, close } = await connection();
  try {
    let n = 0;
    let sum = 0;
    for await (const chunk of streamChunks(db, SQL)) {
      const v = chunk.getColumnVector(0);
      for (let i = 0; i < chunk.rowCount; i++, n++) sum += Number(v.getItem(i));
    }
    assert.equal(n, ROWS);
    assert.equal(sum, (ROWS * (ROWS - 1)) / 2);
    assert.deepEqual((await db.runAndReadAll(`SELECT 6 * 7 AS x`)).getRowObjectsJS(), [{ x: 42 }]);
    // a failing statement counts as settled: a stream can be asked for after it
    await assert.rejects(db.run(`SELECT * FROM no_such_table`), /no_such_table/);
    let after = 0;
    for await (const chunk of streamChunks(db, SQL)) after += chunk.rowCount;
    assert.equal(after, ROWS);
  } finally {
    close();
  }
});

test('a statement run on the connection while its stream is read makes the stream throw, not end early', async () => {
  const { db, close } = await connection();
  try {
    let read = 0;
    await assert.rejects(
      (async () => {
        for await (const chunk of streamChunks(db, SQL)) {
          read += chunk.rowCount;
          await db.run(`SELECT 1`);
        }
      })(),
      /another statement ran on a DuckDB connection while a stream from it was read/,
    );
    assert.ok(read > 0 && read < ROWS, `read ${read} rows before the throw`);
    // and a stream asked for while a statement is still running on the connection
    const running = db.runAndReadAll(`SELECT count(*) FROM range(1000000)`);
    await assert.rejects(streamChunks(db, SQL).next(), /a stream was asked of a DuckDB connection while another statement ran on it/);
    await running;
  } finally {
    close();
  }
});

test('Store.chunks and Store.all at once on the store\'s own connection: the stream throws; on two connections both answer whole', async () => {
  const store = await Store.open(path.join(tmp(), 's.duckdb'));
  try {
    await store.run(`CREATE TABLE t AS SELECT range AS x FROM range(${ROWS})`);
    const count = async (chunks: AsyncGenerator<{ rowCount: number }>) => {
      let n = 0;
      for await (const c of chunks) n += c.rowCount;
      return n;
    };
    const clash = Promise.all([store.all(`SELECT count(*) AS n FROM t`), count(store.chunks(`SELECT x FROM t`))]);
    await assert.rejects(clash, /DuckDB connection/);
    const side = await store.beside();
    const [all, streamed] = await Promise.all([store.all(`SELECT count(*)::INTEGER AS n FROM t`), count(side.chunks(`SELECT x FROM t`))]);
    assert.deepEqual(all, [{ n: ROWS }]);
    assert.equal(streamed, ROWS);
  } finally {
    store.close();
  }
});
