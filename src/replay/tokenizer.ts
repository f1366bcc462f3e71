/**
 * Token counts for the replay simulator (SPEC §6): js-tiktoken with bundled ranks, no network.
 * The ranks load once per process and encoding; every distinct text is encoded once per
 * `SegmentTokenizer` (a cache keyed by text), so a replay's tokenization work grows with the
 * number of distinct messages, not with the number of times they are re-sent.
 *
 * The counts approximate Claude's tokenizer: absolute numbers are estimates, ratios are the result.
 */
import { Tiktoken } from 'js-tiktoken/lite';

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

/** The encoder for an encoding, loaded on first use and shared afterwards (loading takes ~0.5 s). */
export function loadEncoder(encoding: EncodingName = 'cl100k_base'): Promise<Tiktoken> {
  let p = encoders.get(encoding);
  if (!p) {
    if (!ENCODINGS.includes(encoding)) throw new RangeError(`unknown encoding ${String(encoding)}`);
    p = loadRanks(encoding).then((ranks) => new Tiktoken(ranks));
    encoders.set(encoding, p);
  }
  return p;
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
