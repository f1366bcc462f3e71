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
/** each byte value's decimal digits, as character codes */
const BYTE_DIGITS = Array.from({ length: 256 }, (_, i) => Array.from(String(i), (c) => c.charCodeAt(0)));

/**
 * `new Tiktoken(ranks)`, with its two lookup tables filled here. js-tiktoken's constructor builds
 * an object of 100,000 tokens, decodes each with base64-js, joins its bytes with
 * `Array.prototype.join` and keeps a `Uint8Array` per token: ~0.5 s of a ~1.2 s channel replay,
 * and 100,000 objects for the collector after it. Here one pass over the ranks' text writes every
 * token's bytes into one buffer and its key (the bytes in decimal, comma-joined) into one string;
 * each key is a slice of that string, and a token's bytes are a view made when decoding asks for
 * them (TokenBytes). `test/replay/tokenizer.test.ts` compares both tables entry by entry with the
 * library's. Where the encoder has no such tables (another js-tiktoken), the library builds them.
 * Ranks' format: one line per run of ranks, `<name> <first rank> <base64 token> <base64 token> …`.
 */
export function buildEncoder(ranks: TiktokenBPE): Tiktoken {
  const encoder = new Tiktoken({ ...ranks, bpe_ranks: '' });
  const maps = encoder as unknown as Partial<RankMaps>;
  if (!(maps.rankMap instanceof Map && maps.textMap instanceof Map && maps.rankMap.size === 0)) return new Tiktoken(ranks);
  const tokens = readRanks(ranks.bpe_ranks);
  const rankMap = maps.rankMap;
  for (let t = 0, key = 0; t < tokens.count; t++) {
    rankMap.set(tokens.keys.slice(key, tokens.keyEnd[t]), tokens.rank[t]);
    key = tokens.keyEnd[t];
  }
  maps.textMap = new TokenBytes(tokens) as unknown as Map<number, Uint8Array>;
  return encoder;
}

/** The tokens of a ranks file, in its order: rank, bytes (one buffer) and key (one string). */
interface RankTokens {
  count: number;
  rank: Int32Array;
  /** end of each token's bytes in `bytes` (its start: the previous token's end) */
  byteEnd: Int32Array;
  bytes: Uint8Array;
  /** end of each token's key in `keys` */
  keyEnd: Int32Array;
  keys: string;
}

function readRanks(text: string): RankTokens {
  // at most one token per space; base64 gives 3 bytes per 4 characters, a byte at most 4 key characters
  let spaces = 0;
  for (let i = text.indexOf(' '); i >= 0; i = text.indexOf(' ', i + 1)) spaces++;
  const rank = new Int32Array(spaces);
  const byteEnd = new Int32Array(spaces);
  const keyEnd = new Int32Array(spaces);
  const bytes = new Uint8Array(text.length);
  const keys = Buffer.allocUnsafe(text.length * 3);
  let count = 0;
  let nb = 0;
  let nk = 0;
  for (let from = 0; from < text.length; ) {
    let end = text.indexOf('\n', from);
    if (end < 0) end = text.length;
    const nameEnd = text.indexOf(' ', from);
    const rankEnd = nameEnd < 0 || nameEnd >= end ? -1 : text.indexOf(' ', nameEnd + 1);
    if (rankEnd > 0 && rankEnd < end) {
      let next = Number.parseInt(text.slice(nameEnd + 1, rankEnd), 10);
      for (let i = rankEnd + 1; i <= end; i++) {
        // one base64 token, up to the next space or the line's end ('=' padding skipped)
        const keyStart = nk;
        let acc = 0;
        let bits = 0;
        for (; i < end; i++) {
          const c = text.charCodeAt(i);
          if (c === 32) break;
          if (c === 61) continue;
          acc = ((acc << 6) | (c < 128 && BASE64[c] >= 0 ? BASE64[c] : 0)) & 0xffffff;
          bits += 6;
          if (bits >= 8) {
            bits -= 8;
            const b = (acc >> bits) & 255;
            bytes[nb++] = b;
            if (nk > keyStart) keys[nk++] = 44; // ','
            for (const d of BYTE_DIGITS[b]) keys[nk++] = d;
          }
        }
        rank[count] = next++;
        byteEnd[count] = nb;
        keyEnd[count] = nk;
        count++;
      }
    }
    from = end + 1;
  }
  return { count, rank, byteEnd, bytes, keyEnd, keys: keys.latin1Slice(0, nk) };
}

/**
 * js-tiktoken's rank-to-bytes table (`textMap`, read only when decoding) as views of one buffer,
 * each made when asked for: a `Uint8Array` per token made up front cost more than the rest of
 * the tables. Read-only, with a Map's reading methods.
 */
class TokenBytes implements ReadonlyMap<number, Uint8Array> {
  /** token index (in `tokens`) by rank, -1 where no token has that rank */
  private readonly at: Int32Array;

  constructor(private readonly tokens: RankTokens) {
    let max = -1;
    for (let t = 0; t < tokens.count; t++) max = Math.max(max, tokens.rank[t]);
    this.at = new Int32Array(max + 1).fill(-1);
    for (let t = 0; t < tokens.count; t++) this.at[tokens.rank[t]] = t;
  }

  get size(): number {
    return this.tokens.count;
  }

  private bytesOf(t: number): Uint8Array {
    return this.tokens.bytes.subarray(t === 0 ? 0 : this.tokens.byteEnd[t - 1], this.tokens.byteEnd[t]);
  }

  private indexOf(rank: number): number {
    return Number.isInteger(rank) && rank >= 0 && rank < this.at.length ? this.at[rank] : -1;
  }

  get(rank: number): Uint8Array | undefined {
    const t = this.indexOf(rank);
    return t < 0 ? undefined : this.bytesOf(t);
  }

  has(rank: number): boolean {
    return this.indexOf(rank) >= 0;
  }

  *entries(): MapIterator<[number, Uint8Array]> {
    for (let t = 0; t < this.tokens.count; t++) yield [this.tokens.rank[t], this.bytesOf(t)];
  }

  *keys(): MapIterator<number> {
    for (let t = 0; t < this.tokens.count; t++) yield this.tokens.rank[t];
  }

  *values(): MapIterator<Uint8Array> {
    for (let t = 0; t < this.tokens.count; t++) yield this.bytesOf(t);
  }

  [Symbol.iterator](): MapIterator<[number, Uint8Array]> {
    return this.entries();
  }

  forEach(f: (value: Uint8Array, key: number, map: ReadonlyMap<number, Uint8Array>) => void, thisArg?: unknown): void {
    for (const [rank, bytes] of this.entries()) f.call(thisArg, bytes, rank, this);
  }
}

/** Work done by a SegmentTokenizer: what the linearity test counts. */
export interface TokenizerWork {
  encode_calls: number;
  tokens_encoded: number;
}

/** What encodeText reads of js-tiktoken's encoder (1.0.21): the pre-token pattern and the rank table. */
interface EncoderTables {
  patStr: string;
  /** a token's bytes in decimal, comma-joined, to its rank */
  rankMap: Map<string, number>;
}

/** Work done merging pre-tokens (PreTokenMerge): what the bounded-work test counts. */
export interface MergeWork {
  /** rank lookups of two adjacent parts joined */
  lookups: number;
  /** levels an entry moved up or down the heap, and entries read dropping stale ones */
  heapSteps: number;
  /** times a full heap dropped its stale entries (optional: counted when present) */
  compactions?: number;
}

const UTF8 = new TextEncoder();

/**
 * `encoder.encode(text, [], [])`, token for token, with a byte pair merge that is O(n log n) in
 * a pre-token's n bytes where js-tiktoken's is quadratic: 16,000 repeats of a letter took it 36 s,
 * and a session holding a 3 MB run of letters never ended its replay. No special token is
 * allowed, so `<|endoftext|>` in a message is ordinary text (channel text is untrusted).
 * The rest is the library's `encode`: its pattern splits the whole text into pre-tokens, each
 * pre-token's UTF-8 bytes (a lone surrogate as U+FFFD) are looked up whole, and only a pre-token
 * that is no token is merged. Where the encoder has no such tables (another js-tiktoken), the
 * library encodes.
 */
export function encodeText(encoder: Tiktoken, text: string, work?: MergeWork): number[] {
  const { patStr, rankMap } = encoder as unknown as Partial<EncoderTables>;
  if (typeof patStr !== 'string' || !(rankMap instanceof Map)) return encoder.encode(text, [], []);
  const out: number[] = [];
  const memo: PairMemo = new Map();
  const longest = longestToken(rankMap);
  for (const m of text.matchAll(new RegExp(patStr, 'ug'))) {
    const bytes = UTF8.encode(m[0]);
    const whole = bytes.length > longest ? undefined : rankMap.get(bytes.join(','));
    if (whole !== undefined) out.push(whole);
    else new PreTokenMerge(bytes, rankMap, memo, longest, work).tokens(out);
  }
  return out;
}

const longestTokens = new WeakMap<Map<string, number>, number>();

/**
 * The most bytes a token of the ranks has (cl100k: 128, o200k: 128): bytes longer than that are
 * no token, and are not joined into a key to find so (a 5 MB pre-token's key is a ~19 MB string).
 */
function longestToken(rankMap: Map<string, number>): number {
  let longest = longestTokens.get(rankMap);
  if (longest === undefined) {
    longest = 0;
    for (const key of rankMap.keys()) {
      let bytes = 1;
      for (let i = key.indexOf(','); i >= 0; i = key.indexOf(',', i + 1)) bytes++;
      if (bytes > longest) longest = bytes;
    }
    longestTokens.set(rankMap, longest);
  }
  return longest;
}

/**
 * Ranks of the token two parts make, by the parts' tokens (left * PAIR + right): the same two
 * tokens make the same bytes, and a long run repeats few pairs (5 MB of one letter: 40% of the
 * time went to building and looking up byte keys). One per encodeText call, shared by its
 * pre-tokens: base64's many short ones repeat pairs too (1 MB: 0.74 s of CPU with one per
 * pre-token, 0.45 s). A part of one byte that is no token in the ranks is named by its byte
 * (BYTE + byte); cl100k and o200k ranks are below 2^18.
 */
type PairMemo = Map<number, number>;
const BYTE = 1 << 23;
const PAIR = 1 << 24;

/** A heap entry is rank * SLOT + the part's start: ordered by rank, then position. */
const SLOT = 2 ** 31;

/**
 * js-tiktoken's bytePairMerge, with the same joins in the same order. There, the pre-token's
 * bytes start as one part each; while two adjacent parts make a token, the pair whose token has
 * the lowest rank is joined (on equal ranks the leftmost: its scan keeps the first minimum); the
 * parts left are the tokens (one that is no token is left out). It looks up every adjacent pair
 * again at each join, n² lookups in all. Here a pair is looked up once, when it forms (n - 1 at
 * the start, at most two per join), and the pairs that make a token wait in a binary heap ordered
 * by (rank, position), whose top is the pair the library's scan would pick.
 * A part is named by its first byte's offset; the arrays are indexed by it. A pair that changes
 * is not taken out of the heap: its entry is skipped when it comes up, its rank no longer the
 * part's (a part's pair only grows, so never makes the same token again). Entries are numbers in
 * one array, compared without reading the parts: 5 MB of random letters took 9.7 s with a heap of
 * part names that looked up each one's rank, mostly waiting on memory.
 */
class PreTokenMerge {
  private readonly n: number;
  /**
   * each part's length in bytes, at its first byte and at its last: the next part starts at
   * i + len[i], the previous one at i - len[i - 1]. A part is one byte or a token, so its length
   * is at most `longest` (128): one byte each where a next and a previous start took 8.
   */
  private readonly len: Uint8Array | Uint16Array | Int32Array;
  /** rank of the token a part and the next make, -1 where they make none or the part joined the one before */
  private readonly rank: Int32Array;
  /** a part's token: its rank once joined, BYTE + its byte while one byte (PairMemo) */
  private readonly token: Int32Array;
  /**
   * pairs that make a token (rank * SLOT + start), the lowest on top; at most 3n are ever added,
   * but at most n - 1 are current (one per part), so a full heap drops its stale entries (compact)
   * rather than growing: 5/4 n entries, where doubling reached 4n (and 6n while copying).
   */
  private readonly heap: Float64Array;
  private size = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly ranks: Map<string, number>,
    private readonly memo: PairMemo,
    /** the most bytes a token has: a longer pair is no token */
    private readonly longest: number,
    private readonly work?: MergeWork,
  ) {
    const n = (this.n = bytes.length);
    this.len = longest < 256 ? new Uint8Array(n) : longest < 65536 ? new Uint16Array(n) : new Int32Array(n);
    this.rank = new Int32Array(n);
    this.token = new Int32Array(n);
    this.heap = new Float64Array(n + (n >> 2) + 4);
    for (let i = 0; i < n; i++) {
      this.len[i] = 1;
      this.token[i] = BYTE + bytes[i];
    }
    for (let i = 0; i < n; i++) this.pair(i);
  }

  /** Joins pairs until no two adjacent parts make a token; appends the parts' ranks to `out`. */
  tokens(out: number[]): void {
    while (this.size > 0) {
      const top = this.pop();
      const rank = Math.floor(top / SLOT);
      const i = top - rank * SLOT;
      if (this.rank[i] === rank) this.join(i);
    }
    for (let i = 0; i < this.n; i += this.len[i]) {
      const r = this.token[i] < BYTE ? this.token[i] : this.ranks.get(String(this.bytes[i]));
      if (r !== undefined) out.push(r);
    }
  }

  /** Joins part `i` and the next; the pairs of `i` and of the part before it change. */
  private join(i: number): void {
    const j = i + this.len[i];
    const k = j + this.len[j];
    this.len[i] = this.len[k - 1] = k - i;
    this.token[i] = this.rank[i];
    this.rank[j] = -1;
    this.pair(i);
    if (i > 0) this.pair(i - this.len[i - 1]);
  }

  /** Looks up the token part `i` and the next make, and adds it to the heap. */
  private pair(i: number): void {
    const j = i + this.len[i];
    this.rank[i] = j < this.n ? this.lookup(i, j) : -1;
    if (this.rank[i] >= 0) this.push(this.rank[i] * SLOT + i);
  }

  /** The rank of the token parts `i` and `j` (the next) make, -1 when they make none. */
  private lookup(i: number, j: number): number {
    if (this.work) this.work.lookups++;
    const key = this.token[i] * PAIR + this.token[j];
    let rank = this.memo.get(key);
    if (rank === undefined) {
      const end = j + this.len[j];
      rank = end - i > this.longest ? -1 : (this.ranks.get(this.bytes.subarray(i, end).join(',')) ?? -1);
      this.memo.set(key, rank);
    }
    return rank;
  }

  private push(entry: number): void {
    if (this.size === this.heap.length) this.compact();
    let h = this.size++;
    while (h > 0) {
      const up = (h - 1) >> 1;
      if (this.heap[up] <= entry) break;
      this.heap[h] = this.heap[up];
      h = up;
      if (this.work) this.work.heapSteps++;
    }
    this.heap[h] = entry;
  }

  private pop(): number {
    const top = this.heap[0];
    const last = this.heap[--this.size];
    this.siftDown(0, last);
    return top;
  }

  /** Places `entry` at `h` or below it, moving smaller children up. */
  private siftDown(h: number, entry: number): void {
    for (;;) {
      let child = 2 * h + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && this.heap[child + 1] < this.heap[child]) child++;
      if (this.heap[child] >= entry) break;
      this.heap[h] = this.heap[child];
      h = child;
      if (this.work) this.work.heapSteps++;
    }
    this.heap[h] = entry;
  }

  /**
   * Drops the entries whose pair has changed (their rank no longer the part's) and rebuilds the
   * heap (O(size)). The parts number n - joins, so at most n - 1 - joins entries stay: each
   * compaction frees at least n / 4 slots, and its O(5/4 n) work is O(5) per push after it.
   */
  private compact(): void {
    let kept = 0;
    for (let e = 0; e < this.size; e++) {
      const entry = this.heap[e];
      const rank = Math.floor(entry / SLOT);
      if (this.rank[entry - rank * SLOT] === rank) this.heap[kept++] = entry;
    }
    if (this.work) {
      this.work.heapSteps += this.size;
      if (this.work.compactions !== undefined) this.work.compactions++;
    }
    this.size = kept;
    for (let h = (kept >> 1) - 1; h >= 0; h--) this.siftDown(h, this.heap[h]);
    if (kept === this.heap.length) throw new Error('PreTokenMerge: heap full of current pairs'); // cannot happen: kept < n
  }
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
      const tokens = Uint32Array.from(encodeText(this.encoder, text));
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
