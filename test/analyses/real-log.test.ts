import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { anatomizeChain } from '../../src/analyses/anatomy.js';
import { loadMainChain, realLogs } from './helpers/load-main-chain.js';

const MAROT = path.join(
  realLogs,
  'marot-spotter/projects/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569.jsonl',
);
const FUM = path.join(
  realLogs,
  'marot-spotter/projects/-home-USER-projects-spotter-worktrees-spotter-fum/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl',
);

test('SPEC §3 example on marot-spotter 4d5611e5 (main chain, 5-minute TTL)', () => {
  const main = loadMainChain(MAROT);
  assert.equal(main.requests.length, 139);
  const as = anatomizeChain(main);
  const at = (iso: string) => {
    const a = as.find((x) => x.request.t === Date.parse(iso));
    assert.ok(a, `no request at ${iso}`);
    return a;
  };
  // after a 251-minute gap one request reads 0 and writes 82,720: rw = 81,957 is expiry
  const e1 = at('2026-02-12T20:19:04.146Z');
  assert.equal(Math.round(e1.gapMs! / 60_000), 251);
  assert.deepEqual([e1.request.cacheRead, e1.request.cacheWrite, e1.ttl, e1.class, e1.expiry], [0, 82_720, '5m', 'expiry', 81_957]);
  // after the compaction at 20:30:28 the next request is cold (14,600)
  const cold = at('2026-02-12T20:30:31.624Z');
  assert.deepEqual([cold.class, cold.cold, cold.request.segment], ['cold', 14_600, 1]);
  // a 19.2-minute gap later: expiry 82,858
  const e2 = at('2026-02-12T20:58:58.016Z');
  assert.equal((e2.gapMs! / 60_000).toFixed(1), '19.2');
  assert.deepEqual([e2.class, e2.expiry], ['expiry', 82_858]);
  // five seconds after that, reads fall to 21,478 and rw = 76,753 is a break
  const b = at('2026-02-12T21:03:30.594Z');
  assert.equal(Math.round(b.gapMs! / 1000), 5);
  assert.deepEqual([b.request.cacheRead, b.class, b.break], [21_478, 'break', 76_753]);
  // and those are all the rewrites of the chain: elsewhere r_i = C_{i−1} (within the jitter)
  assert.deepEqual(
    as.filter((a) => a.class === 'expiry' || a.class === 'break' || a.class === 'cold').map((a) => [a.class, a.cold + a.expiry + a.break]),
    [
      ['cold', as[0]!.request.cacheWrite],
      ['expiry', 81_957],
      ['cold', 14_600],
      ['expiry', 82_858],
      ['break', 76_753],
    ],
  );
});

test('the 1-hour session 8463c716 (fum) shows no expiry under its own TTL', () => {
  const main = loadMainChain(FUM);
  const as = anatomizeChain(main);
  assert.ok(as.length > 100);
  assert.ok(as.every((a) => a.request.cacheWrite5m === 0));
  assert.ok(as.slice(1).every((a) => a.ttl === '1h'));
  assert.equal(as.reduce((s, a) => s + a.expiry, 0), 0);
  // its longest gap (7.6 minutes) would have expired under a 5-minute TTL
  const longest = Math.max(...as.slice(1).map((a) => a.gapMs!));
  assert.ok(longest > 5 * 60_000 && longest < 60 * 60_000);
});
