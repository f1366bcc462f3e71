/**
 * `--json`'s numbers (src/format/json-numbers.ts): non-integers to 12 significant digits, and
 * nothing else changed. Properties over every kind of double, and the noise the rule is for.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { JSON_DIGITS, JSON_LARGE_DECIMALS, jsonNumber } from '../../src/format/json-numbers.js';
import { jsonText } from '../../src/format/table.js';

/** Significant digits of a number's shortest text (the text JSON.stringify writes). */
function significantDigits(x: number): number {
  const digits = String(Math.abs(x)).replace(/e.*$/, '').replace('.', '');
  return digits.replace(/^0+/, '').replace(/0+$/, '').length || 1;
}

const doubles = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  // the magnitudes of weights, dollars and shares, where noise is read
  fc.double({ min: 1e-9, max: 1e13, noNaN: true }),
  fc.integer({ min: 0, max: 1e9 }).map((n) => n * 0.05 + 0.1 * 3 - 0.3),
  fc.integer({ min: 1, max: 1e8 }).map((n) => (n * 1.25 * 3) / 1e6),
);

test('jsonNumber changes a number by at most half a unit in its 12th significant digit, and never to another kind', () => {
  fc.assert(
    fc.property(doubles, (x) => {
      const r = jsonNumber(x);
      assert.equal(typeof r, 'number');
      assert.ok(Number.isFinite(r), `${x} → ${r}`);
      if (Number.isInteger(x)) assert.ok(Object.is(r, x), `integer ${x} → ${r}`);
      // 5·10⁻¹² of |x|, and the half unit in the last place of r (r is the double nearest the decimal),
      // and for subnormals the smallest double
      const bound = 0.5 * 10 ** (1 - JSON_DIGITS) * Math.abs(x) + Number.EPSILON * Math.abs(r) + Number.MIN_VALUE;
      assert.ok(Math.abs(r - x) <= bound, `${x} → ${r}: off by ${Math.abs(r - x)} > ${bound}`);
      // from 10¹⁰ its whole part and two decimals, where they are more than 12 digits
      const whole = Math.abs(x) < 1 ? 0 : Math.floor(Math.log10(Math.abs(x))) + 1;
      if (!Number.isInteger(x)) assert.ok(significantDigits(r) <= Math.max(JSON_DIGITS, whole + JSON_LARGE_DECIMALS), `${x} → ${r}`);
      // printed again, the same: rounding is a function of the number alone
      assert.ok(Object.is(jsonNumber(r), r), `${x} → ${r} → ${jsonNumber(r)}`);
    }),
    { numRuns: 20_000 },
  );
});

test('jsonNumber: the noise of sums and products of doubles goes, the numbers they stand for stay', () => {
  assert.equal(jsonNumber(1475294.5999999999), 1475294.6);
  assert.equal(jsonNumber(12.340000000000002), 12.34);
  assert.equal(jsonNumber(11961558.549999999), 11961558.55);
  assert.equal(jsonNumber(0.1 + 0.2), 0.3);
  assert.equal(jsonNumber(0.7149600000000002), 0.71496);
  assert.equal(jsonNumber(3811.0999999999913), 3811.1);
  // a price of one cache-read token of Haiku 3.5, and shares, keep their 12 digits
  assert.equal(jsonNumber(0.1 * 0.8e-6), 8e-8);
  assert.equal(jsonNumber(2 / 3), 0.666666666667);
  assert.equal(jsonNumber(0.979749636344768), 0.979749636345);
  // weights are multiples of 0.05: exact below 10¹⁰
  assert.equal(jsonNumber(9_999_999_999.95), 9_999_999_999.95);
  // from 10¹⁰ (11 whole digits), two decimals, where 12 digits would leave one: as the module's comment and README say
  assert.equal(jsonNumber(12_345_678_901.234), 12_345_678_901.23);
  assert.equal(jsonNumber(9_876_543_210.123), 9_876_543_210.12);
  // integers, however large, and what JSON has no number for, as they were
  for (const x of [0, -0, 13748195, 2 ** 53 + 2, 1e300, Number.NaN, Infinity, -Infinity]) assert.ok(Object.is(jsonNumber(x), x), String(x));
});

test('jsonNumber keeps the whole part of a number past 12 digits, and two decimals (a weight\'s): 10¹² tokens\' weight was rounded to its tens', () => {
  // a weight as the store sums it, and the same weight a little off, as a sum of doubles is
  assert.equal(jsonNumber(8_827_349_978_442.05), 8_827_349_978_442.05);
  assert.equal(jsonNumber(8_827_349_978_442.049), 8_827_349_978_442.05);
  assert.equal(jsonNumber(1_234_567_890_123.4999), 1_234_567_890_123.5);
  assert.equal(jsonNumber(-999_999_999_999.95), -999_999_999_999.95);
  // up to 2⁵³ its whole part stays, whatever the double holds past it
  for (let x = 1e12 + 0.25; x < Number.MAX_SAFE_INTEGER; x = x * 3 + 0.5) {
    const r = jsonNumber(x);
    assert.equal(Math.trunc(r), Math.trunc(x), `${x} → ${r}`);
  }
  assert.equal(jsonNumber(Number.MAX_SAFE_INTEGER - 0.5), Number.MAX_SAFE_INTEGER - 0.5);
});

test('jsonText: rounded numbers only when asked, at any depth; integers, strings and nulls as they are', () => {
  const value = { weight: 1475294.5999999999, rows: [{ usd: 12.340000000000002, tokens: 1155431, day: '2026-02-11', usd_unknown: null }], nan: Number.NaN };
  assert.equal(jsonText(value), JSON.stringify(value));
  assert.equal(
    jsonText(value, undefined, 'rounded'),
    '{"weight":1475294.6,"rows":[{"usd":12.34,"tokens":1155431,"day":"2026-02-11","usd_unknown":null}],"nan":null}',
  );
  // the escapes of exact text are there in rounded text too
  assert.equal(jsonText({ p: 'a\u202eb', x: 0.1 + 0.2 }, undefined, 'rounded'), '{"p":"a\\u202eb","x":0.3}');
});
