import { test } from 'node:test';
import assert from 'node:assert/strict';
import { E15Sum } from '../../src/analyses/e15-sum.js';
import { e15Text, toE15 } from '../../src/ingest/delta.js';
import { mulberry32 } from '../../src/samples/prng.js';

/** the sum the what-ifs took before E15Sum: each term's BigInt added (test/ingest/delta.test.ts pins toE15 to DuckDB) */
const bigSum = (xs: readonly number[]) => xs.reduce((s, x) => s + toE15(x), 0n);

const sumOf = (xs: readonly number[]) => {
  const s = new E15Sum();
  for (const x of xs) s.add(x);
  return s;
};

test('E15Sum adds terms as the BigInts of toE15 do: weights, USD, halves, negatives, and terms past 2^53 and 2^96 units', () => {
  const rnd = mulberry32(56);
  const xs: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const weight = Math.floor(rnd() * 900_000) * 1.25 + Math.floor(rnd() * 200_000) * 0.1 + Math.floor(rnd() * 2000) * 5;
    xs.push(weight, weight * (3 / 1e6), rnd() * 1e-3, rnd(), rnd() * 10 ** Math.floor(rnd() * 14));
  }
  // a term of 10^-15 units' halves (0.5 rounds away from zero), 0, −0, negatives (as toE15, not Math.round's −0.5 → −0)
  xs.push(0.5e-15, 1.5e-15, 2.5e-15, -0.5e-15, -1.5e-15, 0, -0, -3.25, -1e-16);
  // terms at and past the limbs' bounds: 2^53, 2^64 and 2^96 units of 10^-15
  xs.push(2 ** 53 / 1e15, 2 ** 64 / 1e15, 2 ** 96 / 1e15, 2 ** 97 / 1e15, 7.9e13, 8e13, 1e20, Number.MAX_SAFE_INTEGER);
  const s = sumOf(xs);
  assert.equal(s.e15, bigSum(xs));
  assert.equal(s.value, Number(e15Text(bigSum(xs))));
});

test('E15Sum stays exact past the 2^20 terms after which it moves its limbs to a BigInt', () => {
  // 3·2^20 terms of 2^52 – 2^53 units whose low 32 bits are nearly all ones: their low limbs sum past 2^53, where a
  // double no longer holds every integer, well before the last term, and their middle limbs vary (2^20 + i mod 1021)
  const xs = Array.from({ length: 3 * 2 ** 20 + 7 }, (_, i) => (2 ** 52 + (i % 1021) * 2 ** 32 + 2 ** 32 - 1 - (i % 7)) / 1e15);
  assert.ok(xs.every((x) => Math.round(x * 1e15) < 2 ** 53));
  assert.equal(sumOf(xs).e15, bigSum(xs));
});

test('E15Sum: a sum of nothing is 0, and a term that is not finite throws as toE15 does', () => {
  assert.equal(new E15Sum().e15, 0n);
  assert.equal(new E15Sum().value, 0);
  for (const x of [NaN, Infinity, -Infinity]) {
    assert.throws(() => toE15(x), RangeError);
    assert.throws(() => new E15Sum().add(x), RangeError);
  }
});
