/**
 * Token counts for the replay simulator (SPEC §6): js-tiktoken with bundled ranks, no network.
 * The ranks load once per process and encoding; every distinct text is encoded once per
 * `SegmentTokenizer` (a cache keyed by text), so a replay's tokenization work grows with the
 * number of distinct messages, not with the number of times they are re-sent.
 *
 * The counts approximate Claude's tokenizer: absolute numbers are estimates, ratios are the result.
 */
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';

import { ENCODINGS, type EncodingName } from './names.js';

export { ENCODINGS, type EncodingName };

/**
 * One tokenized piece of a request (a system prompt, a brief, one row line, one reply).
 * Segments are interned: the same text yields the same object, so two requests can be compared
 * segment by segment by identity.
 */
export interface Segment {
  /** unique per tokenizer, in order of first use */
  readonly id: number;
  readonly text: string;
  readonly tokens: Uint32Array;
}

const encoders = new Map<EncodingName, Promise<Tiktoken>>();

async function loadRanks(encoding: EncodingName) {
  switch (encoding) {
    case 'cl100k_base':
      return (await import('js-tiktoken/ranks/cl100k_base')).default;
    case 'o200k_base':
      return (await import('js-tiktoken/ranks/o200k_base')).default;
  }
}

/** The encoder for an encoding, loaded on first use and shared afterwards (loading takes ~0.35 s). */
export function loadEncoder(encoding: EncodingName = 'cl100k_base'): Promise<Tiktoken> {
  let p = encoders.get(encoding);
  if (!p) {
    if (!ENCODINGS.includes(encoding)) throw new RangeError(`unknown encoding ${String(encoding)}`);
    p = loadRanks(encoding).then(buildEncoder);
    encoders.set(encoding, p);
  }
  return p;
}

/** js-tiktoken's lookup tables (1.0.21): a token's bytes, comma-joined, to its rank, and back. */
interface RankMaps {
  rankMap: Map<string, number>;
  textMap: Map<number, Uint8Array>;
}

const BASE64 = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) BASE64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
const BYTE_TEXT = Array.from({ length: 256 }, (_, i) => String(i));

/**
 * `new Tiktoken(ranks)`, with its two lookup tables filled here: js-tiktoken's constructor builds
 * an object of 100,000 tokens, decodes each with base64-js and joins its bytes with
 * `Array.prototype.join`, ~0.5 s of a ~1.2 s channel replay; this fills the same tables in
 * ~0.35 s (`test/replay/tokenizer.test.ts` compares them entry by entry). Where the encoder has no
 * such tables (another js-tiktoken), the library builds them itself.
 * Ranks' format: one line per run of ranks, `<name> <first rank> <base64 token> <base64 token> …`.
 */
export function buildEncoder(ranks: TiktokenBPE): Tiktoken {
  const encoder = new Tiktoken({ ...ranks, bpe_ranks: '' });
  const maps = encoder as unknown as Partial<RankMaps>;
  if (!(maps.rankMap instanceof Map && maps.textMap instanceof Map && maps.rankMap.size === 0)) return new Tiktoken(ranks);
  const { rankMap, textMap } = maps as RankMaps;
  const text = ranks.bpe_ranks;
  for (let from = 0; from < text.length; ) {
    let to = text.indexOf('\n', from);
    if (to < 0) to = text.length;
    const fields = text.slice(from, to).split(' ');
    from = to + 1;
    if (fields.length < 2) continue;
    const first = Number.parseInt(fields[1], 10);
    for (let i = 2; i < fields.length; i++) {
      const bytes = fromBase64(fields[i]);
      let key = bytes.length > 0 ? BYTE_TEXT[bytes[0]] : '';
      for (let j = 1; j < bytes.length; j++) key += `,${BYTE_TEXT[bytes[j]]}`;
      rankMap.set(key, first + i - 2);
      textMap.set(first + i - 2, bytes);
    }
  }
  return encoder;
}

/** Standard base64 (padding optional) to bytes. */
function fromBase64(s: string): Uint8Array {
  let n = s.length;
  while (n > 0 && s.charCodeAt(n - 1) === 61) n--;
  const out = new Uint8Array((n * 3) >> 2);
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    acc = ((acc << 6) | (c < 128 && BASE64[c] >= 0 ? BASE64[c] : 0)) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 255;
    }
  }
  return out;
}

/** Work done by a SegmentTokenizer: what the linearity test counts. */
export interface TokenizerWork {
  encode_calls: number;
  tokens_encoded: number;
}

/** Interns texts as segments, encoding each distinct text exactly once. */
export class SegmentTokenizer {
  private readonly cache = new Map<string, Segment>();
  private readonly work: TokenizerWork = { encode_calls: 0, tokens_encoded: 0 };

  constructor(
    private readonly encoder: Tiktoken,
    readonly encoding: EncodingName,
  ) {}

  static async load(encoding: EncodingName = 'cl100k_base'): Promise<SegmentTokenizer> {
    return new SegmentTokenizer(await loadEncoder(encoding), encoding);
  }

  /** The segment for a text; encodes it only the first time it is seen. */
  segment(text: string): Segment {
    let seg = this.cache.get(text);
    if (!seg) {
      // Channel text is untrusted: `<|endoftext|>` in a message is ordinary text, never a special token.
      const tokens = Uint32Array.from(this.encoder.encode(text, [], []));
      this.work.encode_calls++;
      this.work.tokens_encoded += tokens.length;
      seg = { id: this.cache.size, text, tokens };
      this.cache.set(text, seg);
    }
    return seg;
  }

  count(text: string): number {
    return this.segment(text).tokens.length;
  }

  /** The text of the first `n` tokens of a text (used to size the prefix to a token budget). */
  head(text: string, n: number): string {
    const seg = this.segment(text);
    return seg.tokens.length <= n ? text : this.encoder.decode(Array.from(seg.tokens.subarray(0, n)));
  }

  get stats(): TokenizerWork {
    return { ...this.work };
  }
}
