import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anatomizeChain, type RequestAnatomy } from '../../src/analyses/anatomy.js';
import { chain, chainASpecs, HOUR, MIN, SEC } from './helpers/fixtures.js';

/** [cold, expiry, break, growth, class] of each request, the shape most assertions compare. */
function split(as: RequestAnatomy[]): [number, number, number, number, string][] {
  return as.map((a) => [a.cold, a.expiry, a.break, a.growth, a.class]);
}

test('a 6-minute gap under a 5-minute TTL is an expiry of the previous cached prefix', () => {
  const as = anatomizeChain(chain('A', chainASpecs));
  assert.deepEqual(split(as), [
    [10_000, 0, 0, 0, 'cold'],
    [0, 0, 0, 2_000, 'growth'],
    [0, 12_000, 0, 1_000, 'expiry'],
    [0, 0, 0, 500, 'growth'],
  ]);
  assert.deepEqual(
    as.map((a) => [a.gapMs, a.ttl, a.cachedPrefix, a.rewriteTokens]),
    [
      [null, null, 0, 0],
      [60_000, '5m', 10_000, 0],
      [360_000, '5m', 12_000, 12_000],
      [30_000, '5m', 13_000, 0],
    ],
  );
});

test('the same usage under a 1-hour TTL is a break, not an expiry (6m ≤ 1h)', () => {
  const as = anatomizeChain(chain('A1h', chainASpecs.map((s) => ({ ...s, ttl: '1h' as const }))));
  assert.equal(as[2]!.ttl, '1h');
  assert.deepEqual(split(as)[2], [0, 0, 12_000, 1_000, 'break']);
});

test('a 1-hour chain that keeps reading across a 6-minute gap has no expiry', () => {
  // #3 reads C2 = 10,000 + 2,000 = 12,000 in full: rw = min(1,000, 12,000 − 12,000) = 0.
  const as = anatomizeChain(
    chain('H', [
      { t: 0, w: 10_000, ttl: '1h' },
      { t: 1 * MIN, r: 10_000, w: 2_000, ttl: '1h' },
      { t: 7 * MIN, r: 12_000, w: 1_000, ttl: '1h' },
    ]),
  );
  assert.deepEqual(split(as), [
    [10_000, 0, 0, 0, 'cold'],
    [0, 0, 0, 2_000, 'growth'],
    [0, 0, 0, 1_000, 'growth'],
  ]);
});

test('the TTL in force comes from the most recent request that wrote (w > 0)', () => {
  // #2 writes nothing, so #3 is judged by #1's 1-hour write: gap 10m ≤ 1h → break.
  // C2 = 10,000 + 0; rw = min(10,100, 10,000 − 0) = 10,000; growth 100.
  const as = anatomizeChain(
    chain('L', [
      { t: 0, w: 10_000, ttl: '1h' },
      { t: 1 * MIN, r: 10_000, w: 0 },
      { t: 11 * MIN, r: 0, w: 10_100 },
    ]),
  );
  assert.deepEqual(as.map((a) => a.ttl), [null, '1h', '1h']);
  assert.deepEqual(split(as), [
    [10_000, 0, 0, 0, 'cold'],
    [0, 0, 0, 0, 'none'],
    [0, 0, 10_000, 100, 'break'],
  ]);
});

test('a break inside the TTL lists what preceded it: attachments after the previous request, a model change', () => {
  // #2 at 30s: C1 = 10,000, r 4,000 → rw = min(8,000, 6,000) = 6,000 break, growth 2,000.
  // #3 at 60s switches to sonnet: C2 = 4,000 + 8,000 = 12,000, r 0 → rw 12,000 break.
  // #4 at 6m: gap exactly 5m = TTL (still inside): C3 = 12,000 → rw 12,000 break, nothing known before it.
  const as = anatomizeChain(
    chain(
      'B',
      [
        { t: 0, w: 10_000 },
        { t: 30 * SEC, r: 4_000, w: 8_000 },
        { t: 60 * SEC, r: 0, w: 12_000, model: 'sonnet' },
        { t: 6 * MIN, r: 0, w: 12_000, model: 'sonnet' },
      ],
      {
        events: [
          { t: 20 * SEC, kind: 'attachment', detail: 'skill_listing' },
          { t: 0, kind: 'attachment', detail: 'hook_success' },
          { t: 25 * SEC, kind: 'attachment', detail: 'skill_listing' },
        ],
      },
    ),
  );
  assert.deepEqual(split(as), [
    [10_000, 0, 0, 0, 'cold'],
    [0, 0, 6_000, 2_000, 'break'],
    [0, 0, 12_000, 0, 'break'],
    [0, 0, 12_000, 0, 'break'],
  ]);
  assert.equal(as[3]!.gapMs, 5 * MIN);
  assert.deepEqual(as.map((a) => a.causes), [[], ['attachment:skill_listing'], ['model:opus→sonnet'], []]);
});

test('a rewrite below the jitter tolerance is growth; exactly the tolerance counts', () => {
  // #2: C1 − r = 10,000 − 9,000 = 1,000 < 1,024 → rw 0, growth 1,500; C2 = 10,500.
  // #3: C2 − r = 10,500 − 9,476 = 1,024 → rw 1,024 break, growth 2,000 − 1,024 = 976.
  const specs = [
    { t: 0, w: 10_000 },
    { t: 30 * SEC, r: 9_000, w: 1_500 },
    { t: 60 * SEC, r: 9_476, w: 2_000 },
  ];
  assert.deepEqual(split(anatomizeChain(chain('J', specs))), [
    [10_000, 0, 0, 0, 'cold'],
    [0, 0, 0, 1_500, 'growth'],
    [0, 0, 1_024, 976, 'break'],
  ]);
  // jitter 0: #2 rw = 1,000, growth 500
  assert.deepEqual(split(anatomizeChain(chain('J', specs), { jitter: 0 }))[1], [0, 0, 1_000, 500, 'break']);
  // jitter 2,000: nothing counts
  assert.deepEqual(
    split(anatomizeChain(chain('J', specs), { jitter: 2_000 })).map((r) => r[2]),
    [0, 0, 0],
  );
});

test('the first request after a compaction is cold, whatever it reads; the next segment continues normally', () => {
  // #3 (segment 1): all of w = 3,000 is cold although C2 − r = 12,000 − 4,000 = 8,000.
  // #4: C3 = 4,000 + 3,000 = 7,000 = r → growth 500. #5 after 11 minutes: C4 = 7,500 → expiry 7,500, growth 500.
  const as = anatomizeChain(
    chain(
      'E',
      [
        { t: 0, w: 10_000 },
        { t: 30 * SEC, r: 10_000, w: 2_000 },
        { t: 50 * SEC, r: 4_000, w: 3_000, segment: 1 },
        { t: 60 * SEC, r: 7_000, w: 500, segment: 1 },
        { t: 12 * MIN, r: 0, w: 8_000, segment: 1 },
      ],
      { events: [{ t: 40 * SEC, kind: 'compaction', detail: 'auto' }] },
    ),
  );
  assert.deepEqual(split(as), [
    [10_000, 0, 0, 0, 'cold'],
    [0, 0, 0, 2_000, 'growth'],
    [3_000, 0, 0, 0, 'cold'],
    [0, 0, 0, 500, 'growth'],
    [0, 7_500, 0, 500, 'expiry'],
  ]);
  assert.equal(as[2]!.coldStart, true);
  assert.equal(as[2]!.rewriteTokens, 0);
  assert.equal(as[2]!.cachedPrefix, 12_000);
});

test('the TTL in force looks back across a compaction', () => {
  // #2 (segment 1) writes nothing; #3 after 20 minutes is judged by #1's 1-hour write → break.
  const as = anatomizeChain(
    chain('C', [
      { t: 0, w: 5_000, ttl: '1h' },
      { t: 1 * MIN, r: 2_000, w: 0, segment: 1 },
      { t: 21 * MIN, r: 0, w: 3_000, segment: 1 },
    ]),
  );
  assert.equal(as[2]!.ttl, '1h');
  assert.deepEqual(split(as)[2], [0, 0, 2_000, 1_000, 'break']);
  assert.ok(as[2]!.gapMs! > 5 * MIN && as[2]!.gapMs! < HOUR);
});

test('the doc example of anatomizeChain', () => {
  // #4 t=7m30s r 4,000 w 10,000: gap 30s ≤ 5m, rw = min(10,000, 13,000 − 4,000) = 9,000 break, growth 1,000
  const specs = [
    { t: 0, w: 10_000 },
    { t: 1 * MIN, r: 10_000, w: 2_000 },
    { t: 7 * MIN, r: 0, w: 13_000 },
    { t: 7 * MIN + 30 * SEC, r: 4_000, w: 10_000 },
  ];
  assert.deepEqual(split(anatomizeChain(chain('X', specs))), [
    [10_000, 0, 0, 0, 'cold'],
    [0, 0, 0, 2_000, 'growth'],
    [0, 12_000, 0, 1_000, 'expiry'],
    [0, 0, 9_000, 1_000, 'break'],
  ]);
  // out of order input is put in time order first
  const shuffled = chain('X', [specs[2]!, specs[0]!, specs[3]!, specs[1]!]);
  assert.deepEqual(split(anatomizeChain(shuffled)), split(anatomizeChain(chain('X', specs))));
});
