/**
 * The listing an ingest planned from, kept in a file beside the store (Store.keepListingSnapshot)
 * under its listing key: every walked file's path, kind, size, mtime and file id, in walk order.
 *
 * An ingest that is not warm compares the walk with the stored files. Reading them (every path
 * as a string from DuckDB, into a map) took ~0.13 – 0.2 s of a 1 GB append run and ~1.2 s of a
 * 10 GB one, and matching the walked paths against the map ~0.3 s more there (BENCHMARKS-log.md,
 * Append). While the store is as the last ingest left it (its listing key and this snapshot's
 * are the same, and the files table holds exactly the snapshot's ids), the plan instead reads
 * this one file and merges it with the walk: both are sorted by path, so every walked file finds
 * its stored twin, or finds it has none, without a string made for it.
 *
 * The paths are front-coded (how many leading bytes a path shares with the one before, then the
 * rest): sorted paths under one root share most of their bytes, and 1 GB of logs' 23,478 paths
 * take ~0.5 MB so instead of ~2.5 MB.
 * Example: "/r/p/a.jsonl", "/r/p/b.jsonl" are stored as (0, "/r/p/a.jsonl"), (5, "b.jsonl").
 */
import { createHash } from 'node:crypto';
import type { FileListing } from './early-walk.js';

export interface ListingSnapshot {
  /** the listing key of the walk it was made from (ingest.ts listingKey) */
  key: string;
  roots: string[];
  /** listingNames of the walk it was made from (null in a snapshot written before it carried them) */
  names: string | null;
  count: number;
  fileId: Uint32Array;
  kind: Uint8Array;
  size: Float64Array;
  mtimeMs: Float64Array;
  /** per file, how many leading bytes of its path are those of the path before */
  shared: Uint32Array;
  /** per file, where the rest of its path ends in `tail` (it starts where the one before ends) */
  tailEnd: Uint32Array;
  tail: Uint8Array;
  /** the largest file id, and the sum of them: what the files table must hold too */
  maxId: number;
  idSum: number;
}

/** The snapshot file's name: the store's, then this. */
export const LISTING_SUFFIX = '.listing';

/** 'CLLS', then the layout's version */
const MAGIC = 0x534c4c43;
const VERSION = 2;
const HEADER = 24;
/** the SHA-1 of everything before it, last: a file damaged anywhere is none (~3 ms on 1 GB's) */
const DIGEST = 20;
const EMPTY: Uint8Array = new Uint8Array(0);

/**
 * The snapshot of a walk's listing (under its listing key) and the file ids the plan gave its
 * files (`scope`, in walk order), as bytes; null when the paths are not in strictly increasing
 * byte order (the walk sorts them as JavaScript strings, which differs for characters beyond
 * U+D7FF), so that no merge could match them, or when they do not fit the layout's 32-bit sizes.
 */
export function encodeSnapshot(found: FileListing, scope: ArrayLike<number>, roots: string[], key: string): Uint8Array | null {
  const n = found.count;
  if (scope.length !== n) return null;
  const shared = new Uint32Array(n);
  const tailEnd = new Uint32Array(n);
  let prev = EMPTY;
  let tailBytes = 0;
  for (let i = 0; i < n; i++) {
    const path = found.path(i);
    const s = sharedBytes(prev, path);
    if (i > 0 && !(s === prev.length ? path.length > s : s < path.length && path[s] > prev[s])) return null;
    const id = scope[i];
    if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) return null;
    shared[i] = s;
    tailBytes += path.length - s;
    if (tailBytes > 0xffffffff) return null;
    tailEnd[i] = tailBytes;
    prev = path;
  }
  const rootBytes = Buffer.from(JSON.stringify({ key, roots, names: found.names() }));
  const rootsRoom = align8(rootBytes.length);
  const out = Buffer.alloc(HEADER + rootsRoom + n * (8 + 8 + 4 + 4 + 4 + 1) + tailBytes + DIGEST);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(VERSION, 4);
  out.writeUInt32LE(n, 8);
  out.writeUInt32LE(rootBytes.length, 12);
  out.writeUInt32LE(tailBytes, 16);
  rootBytes.copy(out, HEADER);
  let at = HEADER + rootsRoom;
  const column = <T extends Float64Array | Uint32Array | Uint8Array>(col: T): T => {
    out.set(new Uint8Array(col.buffer, col.byteOffset, col.byteLength), at);
    const view = new (col.constructor as new (b: ArrayBuffer, o: number, l: number) => T)(out.buffer as ArrayBuffer, out.byteOffset + at, col.length);
    at += col.byteLength;
    return view;
  };
  const size = column(new Float64Array(n));
  const mtimeMs = column(new Float64Array(n));
  const fileId = column(new Uint32Array(n));
  column(shared);
  column(tailEnd);
  const kind = column(new Uint8Array(n));
  for (let i = 0; i < n; i++) {
    size[i] = found.size(i);
    mtimeMs[i] = found.mtimeMs(i);
    fileId[i] = scope[i];
    kind[i] = found.kind(i);
    const path = found.path(i);
    out.set(path.subarray(shared[i]), at + (i === 0 ? 0 : tailEnd[i - 1]));
  }
  createHash('sha1').update(out.subarray(0, out.length - DIGEST)).digest().copy(out, out.length - DIGEST);
  return out;
}

/** A snapshot's bytes as encodeSnapshot wrote them; null for anything else (another layout, cut short, damaged). */
export function decodeSnapshot(bytes: Uint8Array): ListingSnapshot | null {
  if (bytes.length < HEADER + DIGEST) return null;
  const whole = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const b = whole.subarray(0, whole.length - DIGEST);
  if (b.readUInt32LE(0) !== MAGIC || b.readUInt32LE(4) !== VERSION) return null;
  if (!createHash('sha1').update(b).digest().equals(whole.subarray(b.length))) return null;
  const n = b.readUInt32LE(8);
  const rootsLength = b.readUInt32LE(12);
  const tailBytes = b.readUInt32LE(16);
  let at = HEADER + align8(rootsLength);
  if (b.length !== at + n * 29 + tailBytes) return null;
  let head: { key?: unknown; roots?: unknown; names?: unknown };
  try {
    head = JSON.parse(b.toString('utf8', HEADER, HEADER + rootsLength)) as typeof head;
  } catch {
    return null;
  }
  const { key, roots, names } = head ?? {};
  if (typeof key !== 'string' || !Array.isArray(roots) || !roots.every((r) => typeof r === 'string')) return null;
  if (names !== undefined && typeof names !== 'string') return null;
  // each column copied out, so that it is aligned whatever the bytes' offset
  const take = (width: number) => {
    const part = new Uint8Array(b.subarray(at, at + width * n));
    at += width * n;
    return part.buffer;
  };
  const size = new Float64Array(take(8));
  const mtimeMs = new Float64Array(take(8));
  const fileId = new Uint32Array(take(4));
  const shared = new Uint32Array(take(4));
  const tailEnd = new Uint32Array(take(4));
  const kind = new Uint8Array(take(1));
  const tail = new Uint8Array(b.subarray(at, at + tailBytes));
  let maxId = 0;
  let idSum = 0;
  for (let i = 0; i < n; i++) {
    maxId = Math.max(maxId, fileId[i]);
    idSum += fileId[i];
    // a path shares at most the bytes the one before has, and its rest lies within the tail
    const prevLength = i === 0 ? 0 : shared[i - 1] + tailEnd[i - 1] - (i === 1 ? 0 : tailEnd[i - 2]);
    if (tailEnd[i] > tailBytes || (i > 0 && tailEnd[i] < tailEnd[i - 1]) || shared[i] > prevLength) return null;
  }
  return { key, roots: roots as string[], names: names ?? null, count: n, fileId, kind, size, mtimeMs, shared, tailEnd, tail, maxId, idSum };
}

/**
 * For each walked file (by position), the index of the snapshot's file with the same path, or −1;
 * null when the walk's paths are not in strictly increasing byte order. Both lists are sorted,
 * so one pass over each matches them. When the walk found the snapshot's files (its listingNames
 * are the snapshot's: the same paths and kinds in the same order), each is the snapshot's at its
 * own position, and no path is compared: an append run's usual case, where comparing 1 GB of
 * logs' 23,478 paths took 17 – 39 ms (BENCHMARKS-log.md, Append, session 37). A snapshot is written
 * only of paths in strictly increasing order, so the walk's are too.
 * Example: walked a, c, d against a snapshot of a, b, d → [0, −1, 2] (b is gone, c is new).
 */
export function matchSnapshot(found: FileListing, snap: ListingSnapshot): Int32Array | null {
  if (snap.names !== null && found.count === snap.count && found.names() === snap.names) {
    const same = new Int32Array(snap.count);
    for (let i = 0; i < same.length; i++) same[i] = i;
    return same;
  }
  const at = new Int32Array(found.count).fill(-1);
  const pathAt = snapshotPaths(snap);
  let j = 0;
  let prev: Uint8Array | null = null;
  for (let i = 0; i < found.count; i++) {
    const walked = found.path(i);
    if (prev !== null && Buffer.compare(prev, walked) >= 0) return null;
    prev = walked;
    while (j < snap.count) {
      const c = Buffer.compare(pathAt(j), walked);
      if (c > 0) break;
      if (c === 0) at[i] = j;
      j++;
      if (c === 0) break;
    }
  }
  return at;
}

/**
 * The snapshot's path at a position, rebuilt from the one before it (front-coded) in bytes that
 * the next call rebuilds: positions asked for in increasing order take one pass over the
 * snapshot, and one asked for before the last starts again from the first.
 * Example: a snapshot of `/r/a`, `/r/b` (`b` sharing 3 bytes) → pathAt(1) is `/r/b`.
 */
export function snapshotPaths(snap: ListingSnapshot): (i: number) => Buffer {
  let buf = Buffer.alloc(4096);
  let length = 0;
  let at = -1;
  return (i) => {
    if (i < at) at = -1;
    while (at < i) {
      at++;
      const from = at === 0 ? 0 : snap.tailEnd[at - 1];
      const rest = snap.tailEnd[at] - from;
      length = snap.shared[at] + rest;
      if (length > buf.length) {
        const bigger = Buffer.alloc(2 * length);
        buf.copy(bigger, 0, 0, snap.shared[at]);
        buf = bigger;
      }
      buf.set(snap.tail.subarray(from, from + rest), snap.shared[at]);
    }
    return buf.subarray(0, length);
  };
}

/** How many leading bytes a and b share. */
function sharedBytes(a: Uint8Array, b: Uint8Array): number {
  const most = Math.min(a.length, b.length);
  let s = 0;
  while (s < most && a[s] === b[s]) s++;
  return s;
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
