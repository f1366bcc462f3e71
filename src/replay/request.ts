/**
 * A simulated request as runs of already-tokenized segments, and the cacheable prefix between
 * two requests of one process (SPEC §6: the longest common token prefix with the previous request).
 *
 * A process's history is one append-only SegmentList shared by all its requests, so comparing
 * consecutive requests never walks the shared history segment by segment: a run that is the same
 * list at the same offset is skipped whole, using the list's running token totals. Segments are
 * interned (same text → same object), so equal segments are skipped by identity; only the first
 * differing segment is compared token by token. Each comparison costs O(runs + segments of the
 * new turn), so a replay's cost grows linearly with its turns.
 */
import type { Segment } from './tokenizer.js';

/** Append-only list of segments with running token totals (`cum[i]` = tokens before segment i). */
export class SegmentList {
  readonly segments: Segment[] = [];
  private readonly cum: number[] = [0];

  constructor(segments: Iterable<Segment> = []) {
    for (const s of segments) this.push(s);
  }

  push(...segs: Segment[]): void {
    this.pushAll(segs);
  }

  /** As push, for a list of any length (push(...list) overflows the call's arguments past ~120,000). */
  pushAll(segs: readonly Segment[]): void {
    for (const s of segs) {
      this.segments.push(s);
      this.cum.push(this.cum[this.cum.length - 1]! + s.tokens.length);
    }
  }

  get length(): number {
    return this.segments.length;
  }

  /** Tokens of segments [from, to). */
  tokensBetween(from: number, to: number): number {
    return this.cum[to]! - this.cum[from]!;
  }

  get tokens(): number {
    return this.cum[this.cum.length - 1]!;
  }
}

/** A run: the first `len` segments of a list (the list may grow later; the run does not). */
export interface Run {
  list: SegmentList;
  len: number;
}

/** One request: its runs in order. Build with `requestOf`. */
export interface RequestView {
  runs: Run[];
  tokens: number;
}

export function requestOf(...lists: SegmentList[]): RequestView {
  const runs = lists.filter((l) => l.length > 0).map((list) => ({ list, len: list.length }));
  return { runs, tokens: runs.reduce((a, r) => a + r.list.tokensBetween(0, r.len), 0) };
}

class Cursor {
  run = 0;
  off = 0;
  constructor(private readonly req: RequestView) {}
  get done(): boolean {
    return this.run >= this.req.runs.length;
  }
  get current(): Run {
    return this.req.runs[this.run]!;
  }
  get remaining(): number {
    return this.current.len - this.off;
  }
  segment(): Segment {
    return this.current.list.segments[this.off]!;
  }
  advance(n: number): void {
    this.off += n;
    if (this.off >= this.current.len) {
      this.run++;
      this.off = 0;
    }
  }
}

function commonTokens(a: Uint32Array, b: Uint32Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * Longest common token prefix of two requests, compared segment by segment.
 *
 * Example: prev = [system, tools] + history[0..3) + [payload₂, brief, rows…];
 * cur = [system, tools] + history[0..8) + [payload₃, brief, rows…], where history[3..8) are
 * payload₂, brief, rows… and reply₂. The lead run and history[0..3) are skipped whole (same list,
 * same offset); prev's last run matches history[3..) by segment identity; prev then ends, so the
 * result is prev.tokens — the whole previous request was cacheable. With a status line before the
 * system prompt the first segments differ, and the result is the tokens the two status lines
 * share (e.g. `Channel #backend · ` ≈ 5).
 */
export function commonPrefixTokens(prev: RequestView, cur: RequestView): number {
  const a = new Cursor(prev);
  const b = new Cursor(cur);
  let common = 0;
  while (!a.done && !b.done) {
    if (a.current.list === b.current.list && a.off === b.off) {
      const n = Math.min(a.remaining, b.remaining);
      common += a.current.list.tokensBetween(a.off, a.off + n);
      a.advance(n);
      b.advance(n);
      continue;
    }
    const sa = a.segment();
    const sb = b.segment();
    if (sa === sb) {
      common += sa.tokens.length;
      a.advance(1);
      b.advance(1);
      continue;
    }
    // Segments are tokenized separately, so a match cannot be continued across this boundary.
    return common + commonTokens(sa.tokens, sb.tokens);
  }
  return common;
}
