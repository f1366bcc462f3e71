/**
 * Store.readAhead: the remembered results read before they are asked for (ingest reads them while
 * it walks the logs) answer remember() with no query, and stop answering once forget() runs, even
 * when the forgetting transaction is rolled back. Results past the budget are not read ahead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../../src/store/store.js';

/** The store, with its queries counted. */
async function counted(): Promise<{ store: Store; queries: () => number }> {
  const store = await Store.open(':memory:');
  let n = 0;
  const all = store.all.bind(store);
  store.all = (sql, params) => {
    n++;
    return all(sql, params);
  };
  return { store, queries: () => n };
}

const never = async (): Promise<never> => assert.fail('computed again');

test('results read ahead answer without a query; one not kept is computed and then answers too', async () => {
  const { store, queries } = await counted();
  try {
    assert.deepEqual(await store.remember('a', async () => ({ n: 1 })), { n: 1 });
    await store.readAhead();
    const before = queries();
    assert.deepEqual(await store.remember('a', never), { n: 1 });
    assert.equal(queries(), before, 'a result read ahead needs no query');
    // not among those read ahead: computed at once (no lookup), kept, and answered from then on
    let computed = 0;
    const b = async () => ({ n: ++computed });
    assert.deepEqual(await store.remember('b', b), { n: 1 });
    assert.deepEqual(await store.remember('b', b), { n: 1 });
    assert.equal(computed, 1);
    assert.equal(queries(), before);
    const [{ value }] = await store.all(`SELECT value FROM results WHERE key = 'b'`);
    assert.equal(value, '{"n":1}', 'kept in the store as well');
  } finally {
    store.close();
  }
});

test('forget() ends the read-ahead, even when its transaction is rolled back', async () => {
  const { store, queries } = await counted();
  try {
    await store.remember('a', async () => ({ n: 1 }));
    await store.readAhead();
    await store.run('BEGIN TRANSACTION');
    await store.forget();
    await store.run('ROLLBACK');
    // the rollback brought the row back: it answers, looked up in the store
    const before = queries();
    assert.deepEqual(await store.remember('a', never), { n: 1 });
    assert.equal(queries(), before + 1);
    await store.forget();
    assert.deepEqual(await store.remember('a', async () => ({ n: 2 })), { n: 2 });
  } finally {
    store.close();
  }
});

test('results larger than the budget are not read ahead: each lookup queries, as before', async () => {
  const { store, queries } = await counted();
  try {
    await store.remember('a', async () => ({ text: 'x'.repeat(100) }));
    await store.readAhead(50);
    const before = queries();
    assert.deepEqual(await store.remember('a', never), { text: 'x'.repeat(100) });
    assert.equal(queries(), before + 1);
    // one not kept is looked up before it is computed
    assert.deepEqual(await store.remember('b', async () => 2), 2);
    assert.equal(queries(), before + 2);
  } finally {
    store.close();
  }
});

test('results past the budget can be read ahead later with a larger one; once read, they are not read again', async () => {
  const { store, queries } = await counted();
  try {
    await store.remember('a', async () => ({ text: 'x'.repeat(100) }));
    await store.readAhead(50);
    await store.readAhead();
    const before = queries();
    assert.deepEqual(await store.remember('a', never), { text: 'x'.repeat(100) });
    assert.equal(queries(), before, 'read by the second call');
    await store.readAhead();
    assert.equal(queries(), before, 'not read again');
  } finally {
    store.close();
  }
});
