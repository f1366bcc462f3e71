/** The replay's encoders: built faster than js-tiktoken's constructor builds them, to the same tables and tokens (the rank-to-bytes table a read-only view with a Map's reading methods). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tiktoken } from 'js-tiktoken/lite';
import { buildEncoder } from '../../src/replay/tokenizer.js';

const TEXTS = [
  'Hello, world!',
  '  leading and trailing whitespace \n\n\t tabs\r\n',
  'def f(x):\n    return x ** 2  # squares\n',
  'Ünïcödé — “quotes” … 中文字符 日本語 한국어 العربية',
  'emoji 🎉👩‍💻🏳️‍🌈 and a lone ™ sign',
  '{"type":"assistant","message":{"usage":{"input_tokens":3,"cache_read_input_tokens":12345}}}',
  'a'.repeat(500) + ' ' + 'ab'.repeat(300),
  '',
];

for (const name of ['cl100k_base', 'o200k_base'] as const) {
  test(`${name}: the encoder's tables are js-tiktoken's own, entry by entry, and it encodes and decodes alike`, async () => {
    const ranks = (await import(`js-tiktoken/ranks/${name}`)).default;
    const theirs = new Tiktoken(ranks);
    const ours = buildEncoder(ranks);
    const a = theirs as unknown as { rankMap: Map<string, number>; textMap: Map<number, Uint8Array> };
    const b = ours as unknown as { rankMap: Map<string, number>; textMap: Map<number, Uint8Array> };
    assert.ok(a.rankMap.size > 100_000, 'the library keeps its tables where buildEncoder fills them');
    assert.equal(b.rankMap.size, a.rankMap.size);
    assert.equal(b.textMap.size, a.textMap.size);
    for (const [key, rank] of a.rankMap) if (b.rankMap.get(key) !== rank) assert.fail(`rank of ${key}: ${b.rankMap.get(key)} against ${rank}`);
    for (const [rank, bytes] of a.textMap) {
      const mine = b.textMap.get(rank);
      if (!mine || Buffer.compare(Buffer.from(mine), Buffer.from(bytes)) !== 0) assert.fail(`bytes of rank ${rank}`);
    }
    // ranks no token has: none, as in a Map
    for (const rank of [-1, 0.5, a.textMap.size + 1_000_000, Number.NaN]) {
      assert.equal(b.textMap.get(rank), undefined);
      assert.equal(b.textMap.has(rank), false);
    }
    assert.equal(b.textMap.has(0), true);
    for (const text of TEXTS) {
      const tokens = ours.encode(text);
      assert.deepEqual(tokens, theirs.encode(text), text.slice(0, 40));
      assert.equal(ours.decode(tokens), text);
    }
    // special tokens are decoded from the library's own table
    const special = `a<|endoftext|>b`;
    const tokens = ours.encode(special, 'all');
    assert.deepEqual(tokens, theirs.encode(special, 'all'));
    assert.equal(ours.decode(tokens), special);
  });
}

test('encodeBounded looks for long runs in linear time: runs just short of the limit are not rescanned from each character', async () => {
  const { encodeBounded } = await import('../../src/replay/tokenizer.js');
  // 1 MB of 2,047-character runs (compact JSON, minified code): the search alone took ~3.5 s
  const text = (`${'a,'.repeat(1023)}a `).repeat(500);
  const calls: string[] = [];
  const stub = { encode: (s: string) => (calls.push(s), [s.length]) };
  const t0 = performance.now();
  assert.deepEqual(encodeBounded(stub, text), [text.length]);
  assert.ok(performance.now() - t0 < 500, `${Math.round(performance.now() - t0)} ms`);
  // a run of the limit or more is still cut in pieces, from its first character
  const run = 'x'.repeat(2048);
  calls.length = 0;
  encodeBounded(stub, `ab ${run} cd`);
  assert.deepEqual(calls.map((s) => s.length), [3, ...Array(16).fill(128), 3]);
  assert.equal(calls.join(''), `ab ${run} cd`);
});
