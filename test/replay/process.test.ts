import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProcessPool, decideDelivery } from '../../src/replay/process.js';

const MIN = 60_000;

test('decideDelivery: alive → warm, saved session → reloaded, nothing → cold', () => {
  const pool = new ProcessPool();
  const { process } = pool.acquire('c1', 0);
  assert.equal(decideDelivery(process, undefined), 'warm');
  assert.equal(decideDelivery(process, process.session), 'warm');
  assert.equal(decideDelivery(undefined, process.session), 'reloaded');
  assert.equal(decideDelivery(undefined, undefined), 'cold');
});

test('an evicted process is replaced by a cold one with a new native id and empty history', () => {
  const pool = new ProcessPool();
  const a = pool.acquire('c1', 0);
  assert.equal(a.delivery, 'cold');
  a.process.session.shownIds.add('r1');
  assert.equal(pool.acquire('c1', MIN).delivery, 'warm');
  pool.evict('c1');
  const b = pool.acquire('c1', 2 * MIN);
  assert.equal(b.delivery, 'cold');
  assert.notEqual(b.process.session.native, a.process.session.native);
  assert.equal(b.process.session.history.length, 0);
  assert.equal(b.process.session.shownIds.size, 0);
});

test('idle reap by the channel clock: after 30 idle minutes the next turn is cold', () => {
  const pool = new ProcessPool({ idleMs: 30 * MIN });
  const a = pool.acquire('c1', 0);
  assert.equal(pool.acquire('c1', 29 * MIN).delivery, 'warm');
  assert.equal(pool.acquire('c1', 59 * MIN).delivery, 'warm'); // idle 30 min exactly: still alive
  const b = pool.acquire('c1', 90 * MIN);
  assert.equal(b.delivery, 'cold');
  assert.notEqual(b.process.session.native, a.process.session.native);
  assert.equal(pool.reaped, 1);
});

test('a reaped process whose session is kept is reloaded with the same native id', () => {
  const pool = new ProcessPool({ idleMs: 30 * MIN, keepReapedSessions: true });
  const a = pool.acquire('c1', 0);
  const b = pool.acquire('c1', 60 * MIN);
  assert.equal(b.delivery, 'reloaded');
  assert.equal(b.process.session, a.process.session);
  assert.equal(pool.acquire('c1', 61 * MIN).delivery, 'warm');
});

test('at most 4 alive: a fifth binding reaps the least recently active', () => {
  const pool = new ProcessPool();
  for (const [i, k] of ['a', 'b', 'c', 'd'].entries()) pool.acquire(k, i * MIN);
  pool.acquire('a', 10 * MIN);
  pool.acquire('e', 11 * MIN);
  assert.equal(pool.acquire('b', 12 * MIN).delivery, 'cold');
  assert.equal(pool.acquire('a', 13 * MIN).delivery, 'warm');
});
