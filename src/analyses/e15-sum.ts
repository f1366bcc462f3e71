import { e15Text, toE15 } from '../ingest/delta.js';

const TWO_32 = 2 ** 32;
const TWO_64 = 2 ** 64;
const TWO_96 = 2 ** 96;
/** additions of limbs below 2^32 a double holds exactly (2^20 · 2^32 < 2^53), before they are moved to `big` */
const FLUSH_EVERY = 2 ** 20;

/**
 * A sum of doubles each taken as DuckDB casts it to DECIMAL(38, 15) (toE15: units of 10^-15, rounded half away
 * from zero), added exactly: the total toE15's BigInts summed give, without a BigInt per term. A term is an integer
 * held by a double (at most 53 significant bits); one of 0 to 2^96 is split at bits 32 and 64 into three limbs below
 * 2^32, each split exact as it keeps some of the term's bits, and each limb's sum stays exact in a double for 2^20
 * terms, when the limbs are moved to a BigInt. A term outside 0 – 2^96 (negative, or over 7.9·10^13 weight) is added
 * as toE15's BigInt, and a non-finite one throws as toE15 does. The what-ifs add 30 terms a request: as BigInts they
 * cost the report on the 1 GB store ~0.6 s of CPU (BENCHMARKS-log.md, Report, session 56).
 */
export class E15Sum {
  private big = 0n;
  private l0 = 0;
  private l1 = 0;
  private l2 = 0;
  private n = 0;

  add(x: number): void {
    const v = x * 1e15;
    const r = Math.round(v);
    if (!(v >= 0 && r < TWO_96)) {
      this.big += toE15(x);
      return;
    }
    const hi = Math.floor(r / TWO_64);
    const rest = r - hi * TWO_64;
    const mid = Math.floor(rest / TWO_32);
    this.l0 += rest - mid * TWO_32;
    this.l1 += mid;
    this.l2 += hi;
    if (++this.n === FLUSH_EVERY) this.flush();
  }

  private flush(): void {
    this.big += BigInt(this.l0) + (BigInt(this.l1) << 32n) + (BigInt(this.l2) << 64n);
    this.l0 = this.l1 = this.l2 = this.n = 0;
  }

  /** the sum in units of 10^-15 */
  get e15(): bigint {
    return this.big + BigInt(this.l0) + (BigInt(this.l1) << 32n) + (BigInt(this.l2) << 64n);
  }

  /** the sum as the number its DECIMAL(38, 15) text reads as */
  get value(): number {
    return Number(e15Text(this.e15));
  }
}
