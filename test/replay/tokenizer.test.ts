/** The replay's encoders: built faster than js-tiktoken's constructor builds them, to the same tables and tokens (the rank-to-bytes table a read-only view with a Map's reading methods). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tiktoken } from 'js-tiktoken/lite';
import { buildEncoder, encodeText, loadEncoder, type MergeWork } from '../../src/replay/tokenizer.js';
import { Rng, hashSeed } from '../../src/samples/prng.js';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REAL_LOGS } from '../helpers/corpus.js';

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

/** Pieces of adversarial text: long runs where js-tiktoken's merge is slow, every pattern branch, every kind of character. */
function piece(rng: Rng, long: number): string {
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const base64 = `${letters}0123456789+/`;
  const unicode = ['é', 'ß', 'Ω', 'ж', '中', '文', '日', 'ー', '한', 'ا', '\u0301', '™', '🎉', '👩\u200d💻', '\u{1F3F3}\uFE0F', '\ud800', '\udfff', 'x\ud83d'];
  const n = rng.chance(0.1) ? rng.int(long / 2, long) : rng.int(1, 60);
  switch (rng.int(0, 10)) {
    case 0:
      return rng.pick(['a', 'e', 'Z', ' ', '\n', '-', '=', '.', '中']).repeat(n);
    case 1:
      return rng.pick(['ab', 'aB', 'xy', ' \n', '+/', 'é.']).repeat(Math.ceil(n / 2));
    case 2:
      return rng.chars('abcdefghijklmnopqrstuvwxyz', n);
    case 3:
      return rng.chars(letters, n);
    case 4:
      return rng.chars('0123456789', n);
    case 5:
      return rng.chars(base64, n) + '='.repeat(rng.int(0, 2));
    case 6:
      return Array.from({ length: n }, () => rng.pick(unicode)).join('');
    case 7:
      return rng.chars(' \t\n\r', rng.int(1, 8));
    case 8:
      return rng.pick(['<|endoftext|>', '<|endofprompt|>', '<|fim_prefix|>', '<|endoftext', "'s", "'RE", "don't", "it'll"]);
    case 9:
      return rng.chars('!"#$%&()*,-./:;<>?@[]^_`{|}~\'', n);
    default:
      return rng.pick(['Hello, world!', 'def f(x):\n    return x ** 2\n', '{"a":[1,2,3]}', 'naïve café', '  \n\n  ']);
  }
}

function randomText(rng: Rng, long: number): string {
  let text = '';
  for (let k = rng.int(1, 8); k > 0; k--) text += piece(rng, long) + (rng.chance(0.5) ? rng.pick([' ', '  ', '\n', '\t', ' \r\n', '']) : '');
  return text;
}

const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

for (const name of ['cl100k_base', 'o200k_base'] as const) {
  test(`${name}: encodeText gives js-tiktoken's tokens exactly, on random and adversarial text, and decodes back`, async () => {
    const encoder = await loadEncoder(name);
    const rng = new Rng(hashSeed('encodeText', name));
    // runs of up to 1,500 characters: js-tiktoken's own merge takes ~0.3 s on one
    const texts = [
      'a'.repeat(1500),
      'ab'.repeat(700),
      ' '.repeat(1200),
      new Rng(1).chars('abcdefghijklmnopqrstuvwxyz', 1500),
      `x ${'<|endoftext|>'.repeat(3)} y`,
      ...Array.from({ length: 300 }, () => randomText(rng, 1500)),
    ];
    for (const text of texts) {
      const tokens = encodeText(encoder, text);
      assert.deepEqual(tokens, encoder.encode(text, [], []), JSON.stringify(text.slice(0, 60)));
      if (!lone.test(text)) assert.equal(encoder.decode(tokens), text);
    }
  });
}

test('encodeText stays exact when its heap, full of pairs that changed, drops them instead of growing', async () => {
  for (const encoding of ['cl100k_base', 'o200k_base'] as const) {
    const encoder = await loadEncoder(encoding);
    for (const text of ['abc'.repeat(300), 'the'.repeat(300), 'ing'.repeat(100), 'aab'.repeat(30)]) {
      const w: MergeWork = { lookups: 0, heapSteps: 0, compactions: 0 };
      const tokens = encodeText(encoder, text, w);
      assert.deepEqual(tokens, encoder.encode(text, [], []), `${encoding} ${text.slice(0, 12)}… (${text.length})`);
      if (encoding === 'cl100k_base') assert.ok(w.compactions! >= 1, `${text.slice(0, 6)}: ${JSON.stringify(w)}`);
    }
  }
});

test('encodeText merges a 1 MB pre-token in O(n log n) work: a run of one letter, and of random letters', async () => {
  const encoder = await loadEncoder('cl100k_base');
  const work = (text: string) => {
    const w: MergeWork = { lookups: 0, heapSteps: 0 };
    const tokens = encodeText(encoder, text, w);
    assert.equal(encoder.decode(tokens), text);
    return w;
  };
  const n = 1 << 20;
  for (const text of ['a'.repeat(n), new Rng(2).chars('abcdefghijklmnopqrstuvwxyz', n)]) {
    const whole = work(text);
    // each pair is looked up once, when it forms: n - 1, then at most two per join (js-tiktoken: ~n² / 2);
    // each enters the heap once and leaves it once, at most log2 of the heap's size levels each way
    // and the merge is this one, not the library's (which counts nothing): js-tiktoken's own tables were found
    assert.ok(whole.lookups >= n - 1, `${whole.lookups} lookups`);
    assert.ok(whole.lookups <= 3 * n, `${whole.lookups} lookups`);
    assert.ok(whole.heapSteps <= 2 * 3 * n * Math.log2(3 * n), `${whole.heapSteps} heap steps`);
    // twice the text, about twice the work (a quadratic merge: four times)
    const half = work(text.slice(0, n / 2));
    assert.ok(whole.lookups <= 2.2 * half.lookups && whole.heapSteps <= 2.5 * half.heapSteps, JSON.stringify({ whole, half }));
  }
});

test('encodeText gives js-tiktoken\'s tokens for every string of the real logs (cl100k_base)', async () => {
  const encoder = await loadEncoder('cl100k_base');
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((e) => {
      const p = join(dir, e);
      return statSync(p).isDirectory() ? files(p) : p.endsWith('.jsonl') ? [p] : [];
    });
  const strings = (v: unknown): string[] =>
    typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(strings) : v !== null && typeof v === 'object' ? Object.values(v).flatMap(strings) : [];
  const texts = new Set<string>();
  for (const f of files(REAL_LOGS)) {
    for (const line of readFileSync(f, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      for (const s of strings(JSON.parse(line))) texts.add(s);
    }
  }
  assert.ok(texts.size > 10_000, `${texts.size} strings`);
  let differ = 0;
  for (const text of texts) {
    const mine = encodeText(encoder, text);
    const theirs = encoder.encode(text, [], []);
    if (mine.length !== theirs.length || mine.some((t, i) => t !== theirs[i])) differ++;
  }
  assert.equal(differ, 0, `${differ} of ${texts.size} strings encode differently`);
});
