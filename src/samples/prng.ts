/**
 * Seeded randomness for the sample corpus. Every byte the generator writes comes from here,
 * never from Math.random or the wall clock, so one seed always gives the same corpus.
 */

/** mulberry32: a tiny 32-bit PRNG, good enough for plausible data and fast. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Mixes parts into one 32-bit seed (FNV-1a over their text), so a session's stream depends only
 * on (seed, session index) and sessions can be generated independently.
 * Example: hashSeed(42, 'session', 3) is the same number on every run and machine.
 */
export function hashSeed(...parts: (number | string)[]): number {
  let h = 0x811c9dc5;
  const text = parts.join('\u0001');
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const HEX = '0123456789abcdef';

export class Rng {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** A child stream for an independent part of the plan. */
  fork(...label: (number | string)[]): Rng {
    return new Rng(hashSeed(Math.floor(this.next() * 4294967296), ...label));
  }

  float(): number {
    return this.next();
  }

  /** Integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  chars(alphabet: string, n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }

  hex(n: number): string {
    return this.chars(HEX, n);
  }

  /** RFC 4122 version-4 shaped uuid. */
  uuid(): string {
    const variant = HEX[8 + Math.floor(this.next() * 4)];
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${variant}${this.hex(3)}-${this.hex(12)}`;
  }

  /** `msg_01` + 22 base62 characters, as the API writes message ids. */
  messageId(): string {
    return `msg_01${this.chars(BASE62, 22)}`;
  }

  /** `req_011C` + 20 base62 characters, as the API writes request ids. */
  requestId(): string {
    return `req_011C${this.chars(BASE62, 20)}`;
  }

  toolUseId(): string {
    return `toolu_01${this.chars(BASE62, 22)}`;
  }
}
