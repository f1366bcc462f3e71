/**
 * The walk of the default roots, started on a worker thread before the CLI loads its modules.
 *
 * A warm run does little besides starting Node, loading modules (~0.2 s, DuckDB's native binding
 * among them) and walking the logs (~0.3 s for 23,000 files: readdir and stat system
 * calls). Each of those is single-threaded; run side by side on the second core, the walk is
 * mostly done by the time the store is open. This module is what the CLI's entry imports before
 * anything else, so it imports nothing heavy.
 *
 * The walk is speculative: the entry cannot know the parsed arguments yet. It starts only for a
 * command that reads logs and when no argument looks like an explicit path, and ingest takes it
 * only when the parsed arguments name no paths and the environment that decides the default roots
 * is the one the worker walked with; otherwise ingest walks as before and the worker's result is
 * dropped. Either way the answer is the same `discover()`.
 *
 * The result travels as columns, transferred rather than copied: the paths and names as one
 * buffer of UTF-8 text, the numbers in typed arrays. Posting 23,000 file objects cost ~60 ms of
 * cloning, ~40 ms of it on the receiving thread; the text as one string still cost ~50 – 80 ms to
 * join and post (Warm in BENCHMARKS-log.md).
 *
 * The main thread helps (shareWalk): once it takes the walk it has nothing to do but wait for it (a
 * warm run answered from the answers kept beside the store does not even open the store), so the
 * worker hands it the root's entries as units to take from a shared cursor, each
 * thread writing its files into its own half of one shared text buffer; the main thread then puts
 * the two parts in walk order, as one thread's walk lists them (mergeParts). A warm 1 GB run: median
 * 279 → 251 ms; 10 GB, 1.70 – 1.75 → 1.14 – 1.20 s (BENCHMARKS-log.md, Warm, session 29).
 *
 * Before it walks, when answers are kept beside the store the arguments name, the worker checks
 * the proof kept beside them (unchanged.ts) that the logs are as a walk found them, and the main
 * thread takes part in that check (earlyProof); when it holds, nothing is walked (dropEarlyWalk).
 * A warm 1 GB run: 0.21 – 0.23 → 0.16 – 0.18 s (BENCHMARKS-log.md, Warm, session 39).
 */
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { type Discovery, type FileSink, type FoundFile, type Walk, type WalkProblem, type WalkUnit, expandHome, fileFields, newWalk, walkRoots, walkUnit, walkUnits } from './discover.js';
import { snapshotPaths, type ListingSnapshot } from './listing-snapshot.js';
import { startModuleWorker } from './module-worker.js';
import { defaultDbPath } from '../store/location.js';
import type { Proof } from './unchanged.js';

/**
 * The commands that read logs (an `ingest`) from the default roots when given no paths, by their
 * first word. Not `start`: it names the roots it picked as paths (start.ts).
 */
const READS_LOGS = new Set(['summary', 'sessions', 'blocks', 'anatomy', 'whatif', 'report', 'query', 'crosstab', 'export']);

/**
 * The commands that may answer from the answers kept beside the store (ingest.ts ingestOrAnswer,
 * commands/usage.ts), and so go by the proof kept with them (unchanged.ts): for them alone the
 * worker checks it, and keeps the directories it walks for the next one. Another command's worker
 * walks at once: it checked the proof, to no use, before it walked (~0.15 s of a 1 GB report's
 * worker; after appends, until it met a grown file).
 */
const ANSWERED = new Set(['summary', 'sessions', 'blocks']);

/** What of the environment decides the default roots (discover.ts `defaultRoots`). */
const ROOT_ENV = ['CLAUDE_CONFIG_DIR', 'HOME', 'XDG_CONFIG_HOME'] as const;

const KINDS: FoundFile['kind'][] = ['main', 'subagent', 'meta'];

export interface EncodedDiscovery {
  roots: string[];
  problems: WalkProblem[];
  defaults: boolean;
  /**
   * per file, the UTF-8 of path, root, projectDir, agentId, sessionId ("\u0001" for null), every
   * field NUL-terminated but the last (a path cannot hold NUL); of a shared walk (mergeParts), a
   * view of its shared buffer, which may also hold bytes no file starts at (a file met twice, the
   * unwritten room between the two parts): `start` says where each file is
   */
  text: Uint8Array;
  /** where each file's fields start in the text */
  start: Uint32Array;
  kind: Uint8Array;
  size: Float64Array;
  mtimeMs: Float64Array;
  /** SHA-1 of `names` and the size and mtime columns (digestOf): what the listing key hashes for the files (listingDigest) */
  digest: string;
  /**
   * SHA-1 of the text and kind columns, each file's text in order with a NUL between files: equal
   * for two listings of the same files in the same order, whatever their sizes and times (listingNames)
   */
  names: string;
  /** whether the paths are in ascending order (as `discover()` sorts them) */
  inOrder?: boolean;
  /** Discovery.dirs */
  dirs?: string[];
}

const NULL = '\u0001';
const FIELDS = 5;

/**
 * The discovery as columns, written by `listingWriter`.
 */
export function encodeDiscovery(d: Discovery): EncodedDiscovery {
  let chars = 0;
  for (const f of d.files) chars += fieldChars(f.path, f.root, f.projectDir, f.agentId, f.sessionId);
  // ASCII text is one byte a character; other text makes it grow
  const w = listingWriter(d.files.length, chars);
  for (const f of d.files) w.add(f.path, f.root, f.kind, f.size, f.mtimeMs, f.agentId, f.sessionId, f.projectDir, 0, 0);
  return w.finish(d);
}

/**
 * `discover([], env)` as columns, each file written as the walk finds it: no object is made for a
 * file (the walk of 10 GB, 234,780 files, held ~130 MB of them). Within a root the walk gives the
 * files in path order; when it does not (several roots, a link to a directory), the listing is
 * decoded, sorted and written again, as `discover()` sorts it.
 */
export function walkEncoded(env: NodeJS.ProcessEnv, dirs = false): EncodedDiscovery {
  const w = listingWriter(1024, LISTING_ROOM);
  const found = walkRoots([], env, w.add, dirs);
  return inPathOrder(w.finish(found));
}

/**
 * The text's first room (1 GB of logs: 6.9 MB; 10 GB, 234,780 files: 69 MB): memory is taken only
 * as it is written. Growing by copies from 256 KB on cost 46 ms of a 0.6 s walk, mostly in
 * faulting pages in twice; from 32 MB, 10 GB's text was copied at 32 and 64 MB and the old and new
 * copies held at once: warm 10 GB runs peaked at 327 – 336 MiB, against 278 – 279 MiB from 256 MB
 * (2 interleaved runs each; 1 GB unchanged, 6 runs each).
 */
const LISTING_ROOM = 256 * 2 ** 20;

/**
 * How the walk worker shares its walk with the main thread: the units (each entry directly under a
 * root, walkUnits) are taken from a cursor by whichever thread is free, or (tests) alternately, the
 * worker the even ones and the main thread the odd ones, or not at all.
 */
export type Sharing = 'cursor' | 'alternate' | 'none';

/** What the walk worker posts first when it shares its walk: the units, the cursor, the text buffer. */
interface SharedUnits {
  units: WalkUnit[];
  /** the next unit to take (an Int32 at 0) */
  cursor: SharedArrayBuffer;
  /** the listing's text: the worker's files from 0, the main thread's from LISTING_ROOM */
  text: SharedArrayBuffer;
  /** whether the walk keeps the directories it lists (Discovery.dirs) */
  dirs: boolean;
}

/** A thread's part of a shared walk: its files' columns, and which units they are. */
interface WalkPart {
  count: number;
  start: Uint32Array;
  kind: Uint8Array;
  size: Float64Array;
  mtimeMs: Float64Array;
  dev: Float64Array;
  ino: Float64Array;
  /** where its text ends in the shared buffer */
  end: number;
  /** per unit walked, in the order walked: the unit, its first and end file, its first and end problem, its first and end directory */
  ranges: Int32Array;
  problems: WalkProblem[];
  /** a symbolic link was met: which of two paths to a directory is walked then depends on the order of the whole walk */
  links: boolean;
  /** whether its paths came in ascending order */
  inOrder: boolean;
  /** the directories it listed (null: it met a link) */
  dirs: string[] | null;
}

/** The worker's part, with what only it knows: the root, how many units it has, what listing it met (its first problems). */
interface WorkerPart extends WalkPart {
  roots: string[];
  unitCount: number;
  rootProblems: number;
  /** how many of its directories it listed before the units (the root) */
  rootDirs: number;
}

/**
 * The walk worker's side of a shared walk: lists the roots' units, posts them (SharedUnits), walks
 * those it takes, and posts its part (WorkerPart). Posts a whole walk's EncodedDiscovery instead
 * when the roots cannot be shared (walkUnits). `post` is the worker's postMessage.
 */
export function shareWalk(env: NodeJS.ProcessEnv, sharing: Sharing, post: (m: unknown, transfer?: ArrayBuffer[]) => void, dirs = false): void {
  // the text's room for both parts: memory is taken only as it is written
  const text = sharing === 'none' ? null : new SharedArrayBuffer(2 * LISTING_ROOM);
  // each part one byte short of its room: the byte after a part's text stays 0, ending its last field
  const writer = text && listingWriter(1024, 0, { region: Buffer.from(text, 0, LISTING_ROOM - 1), base: 0 });
  const w = writer && newWalk(writer.add, true, dirs);
  const listed = w && walkUnits(env, w);
  if (!text || !writer || !w || !listed) {
    const e = walkEncoded(env, dirs);
    post(e, transferList(e));
    return;
  }
  const cursor = new SharedArrayBuffer(8);
  const flags = new Int32Array(cursor);
  post({ units: listed.units, cursor, text, dirs } satisfies SharedUnits);
  const rootProblems = w.problems.length;
  const rootDirs = w.dirs?.length ?? 0;
  let part: WalkPart;
  try {
    part = walkPart(listed.units, taker(sharing, cursor, 0), w, writer, flags);
  } catch (err) {
    Atomics.store(flags, 1, STOP_FAILED);
    throw err;
  }
  const stopped = Atomics.load(flags, 1);
  if (stopped === STOP_DROPPED) return;
  if (stopped !== 0) {
    // a symbolic link met (by either thread): walked again, here, on one thread
    const e = walkEncoded(env, dirs);
    post(e, transferList(e));
    return;
  }
  const message: WorkerPart = { ...part, roots: listed.roots, unitCount: listed.units.length, rootProblems, rootDirs };
  post(message, [part.start.buffer, part.kind.buffer, part.size.buffer, part.mtimeMs.buffer, part.dev.buffer, part.ino.buffer, part.ranges.buffer] as ArrayBuffer[]);
}

/** Why a shared walk stopped (the Int32 at 1 of its cursor's buffer; 0 while it goes on). */
const STOP_LINK = 1;
const STOP_FAILED = 2;
const STOP_DROPPED = 3;

/** The next unit for the thread that is `first` (worker 0, main thread 1) to walk. */
function taker(sharing: Sharing, cursor: SharedArrayBuffer, first: 0 | 1): () => number {
  if (sharing === 'alternate') {
    let next = first;
    return () => (next += 2) - 2;
  }
  const c = new Int32Array(cursor);
  return () => Atomics.add(c, 0, 1);
}

/**
 * Walks the units `take` gives until there are none left, or the walk stops (`flags` at 1): when
 * this part meets a symbolic link, it stops both.
 */
function walkPart(units: WalkUnit[], take: () => number, w: Walk, writer: ListingWriter, flags: Int32Array): WalkPart {
  const ranges: number[] = [];
  while (Atomics.load(flags, 1) === 0) {
    const u = take();
    if (u >= units.length) break;
    const files = writer.count;
    const problems = w.problems.length;
    const dirs = w.dirs?.length ?? 0;
    walkUnit(w, units[u]);
    ranges.push(u, files, writer.count, problems, w.problems.length, dirs, w.dirs?.length ?? 0);
    if (w.links) Atomics.store(flags, 1, STOP_LINK);
  }
  const c = writer.columns();
  return {
    count: writer.count,
    start: c.start,
    kind: c.kind,
    size: c.size,
    mtimeMs: c.mtimeMs,
    dev: c.dev!,
    ino: c.ino!,
    end: writer.end,
    ranges: Int32Array.from(ranges),
    problems: w.problems,
    links: w.links,
    inOrder: c.inOrder,
    dirs: w.dirs,
  };
}

/** The main thread's side of a shared walk: walks the units it can take. */
function helpWalk(m: SharedUnits, sharing: Sharing): WalkPart {
  const writer = listingWriter(1024, 0, { region: Buffer.from(m.text, LISTING_ROOM, LISTING_ROOM - 1), base: LISTING_ROOM });
  return walkPart(m.units, taker(sharing, m.cursor, 1), newWalk(writer.add, true, m.dirs), writer, new Int32Array(m.cursor));
}

/**
 * The listing of a shared walk, its two parts put in the walk's order (by unit, then as walked),
 * as the walk on one thread lists it: a file reached twice (a hard link, a bind mount) is kept
 * where that walk would have met it first, and the digest is of the same bytes. Null when a part
 * met a symbolic link (which of two paths to a directory is walked, and what is noted, then
 * depends on the whole walk's order): the caller then walks again, alone. (A link the worker
 * learns of before it posts its part, it walks again itself.)
 */
function mergeParts(text: SharedArrayBuffer, worker: WorkerPart, mine: WalkPart): EncodedDiscovery | null {
  if (worker.links || mine.links) return null;
  const parts = [worker, mine];
  const at = new Int32Array(worker.unitCount * RANGE).fill(-1);
  parts.forEach((p, k) => {
    for (let r = 0; r < p.ranges.length; r += RANGE) {
      at.set(p.ranges.subarray(r, r + RANGE), p.ranges[r] * RANGE);
      at[p.ranges[r] * RANGE] = k;
    }
  });
  // the directories in the walk's order too (Discovery.dirs), when neither part met a link
  const dirs = worker.dirs && mine.dirs ? worker.dirs.slice(0, worker.rootDirs) : null;
  const most = worker.count + mine.count;
  const start = new Uint32Array(most);
  const kind = new Uint8Array(most);
  const size = new Float64Array(most);
  const mtimeMs = new Float64Array(most);
  const problems: WalkProblem[] = [];
  // files met twice are looked for only when there are any: a set of 234,780 inodes (10 GB of logs)
  // was ~20 MB of this thread's heap, held committed into the rest of a run
  const seen = metTwice(parts) ? new Map<number, Set<number>>() : null;
  const bytes = new Uint8Array(text);
  const hash = createHash('sha1');
  // the text is hashed in runs of adjacent files (with the NUL between them), a NUL between runs
  let runFrom = -1;
  let runTo = -1;
  let n = 0;
  for (let p = 0; p < worker.rootProblems; p++) problems.push(worker.problems[p]);
  for (let u = 0; u < worker.unitCount; u++) {
    const k = at[u * RANGE];
    if (k < 0) throw new Error(`unit ${u} of the shared walk was not walked`);
    const part = parts[k];
    for (let q = at[u * RANGE + 3]; q < at[u * RANGE + 4]; q++) problems.push(part.problems[q]);
    if (dirs) for (let q = at[u * RANGE + 5]; q < at[u * RANGE + 6]; q++) dirs.push(part.dirs![q]);
    for (let i = at[u * RANGE + 1]; i < at[u * RANGE + 2]; i++) {
      if (seen) {
        let inodes = seen.get(part.dev[i]);
        if (!inodes) seen.set(part.dev[i], (inodes = new Set()));
        if (inodes.has(part.ino[i])) continue;
        inodes.add(part.ino[i]);
      }
      const from = part.start[i];
      const to = i + 1 < part.count ? part.start[i + 1] - 1 : part.end;
      if (n > 0 && from === runTo + 1) runTo = to;
      else {
        if (n > 0) hash.update(bytes.subarray(runFrom, runTo)).update(NUL_BYTE);
        runFrom = from;
        runTo = to;
      }
      start[n] = from;
      kind[n] = part.kind[i];
      size[n] = part.size[i];
      mtimeMs[n] = part.mtimeMs[i];
      n++;
    }
  }
  if (n > 0) hash.update(bytes.subarray(runFrom, runTo));
  const cols = { start: start.slice(0, n), kind: kind.slice(0, n), size: size.slice(0, n), mtimeMs: mtimeMs.slice(0, n) };
  const names = hash.update(cols.kind).digest('hex');
  const digest = digestOf(names, cols.size, cols.mtimeMs);
  // the text as one view: the worker's part, then (after untouched room) the main thread's
  const textView = new Uint8Array(text, 0, mine.count > 0 ? mine.end : worker.end);
  // one root without links is walked in path order (walkRoots): so are its units, whoever walked them
  return { roots: worker.roots, problems, defaults: true, text: textView, ...cols, digest, names, inOrder: worker.inOrder && mine.inOrder, ...(dirs ? { dirs } : {}) };
}

const NUL_BYTE = new Uint8Array(1);

/** How many numbers a unit's range takes in WalkPart.ranges. */
const RANGE = 7;

/** Whether a file (device and inode) is in the parts twice; true, to be safe, when they span devices. */
function metTwice(parts: WalkPart[]): boolean {
  const n = parts.reduce((s, p) => s + p.count, 0);
  if (n === 0) return false;
  const dev = parts.find((p) => p.count > 0)!.dev[0];
  const ino = new Float64Array(n);
  let k = 0;
  for (const p of parts) {
    for (let i = 0; i < p.count; i++) {
      if (p.dev[i] !== dev) return true;
      ino[k++] = p.ino[i];
    }
  }
  ino.sort();
  for (let i = 1; i < n; i++) if (ino[i] === ino[i - 1]) return true;
  return false;
}

/** The listing as `discover()` orders it: as walked when that is path order, else sorted. */
function inPathOrder(e: EncodedDiscovery): EncodedDiscovery {
  if (e.inOrder) return e;
  const d = decodeDiscovery(e);
  const files = d.files;
  files.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  return encodeDiscovery({ ...d, files });
}

interface ListingWriter {
  readonly count: number;
  /** where the text written so far ends (in a shared buffer, counted from its start) */
  readonly end: number;
  add: FileSink;
  /** the columns written so far, with no digest (a part of a shared walk) */
  columns(): ListingColumns;
  finish(d: Omit<Discovery, 'files'>): EncodedDiscovery;
}

/** A listing's columns (EncodedDiscovery's), each file's device and inode too when asked for. */
interface ListingColumns {
  text: Uint8Array;
  start: Uint32Array;
  kind: Uint8Array;
  size: Float64Array;
  mtimeMs: Float64Array;
  dev?: Float64Array;
  ino?: Float64Array;
  /** whether the paths came in ascending order */
  inOrder: boolean;
}

/**
 * Writes files into an EncodedDiscovery's columns, growing them as needed (room for `files` files
 * and `bytes` of text at first). The text is written field by field into one buffer; its bytes
 * are the UTF-8 of the five fields of every file joined (NUL between fields and files), so the
 * digest is the one that joined string gave. With `shared`, the text goes into that region of a
 * shared buffer instead, which does not grow (a listing that outgrows it throws), each file's start
 * counted from the shared buffer's start, and each file's device and inode are kept too.
 */
function listingWriter(files: number, bytes: number, shared?: { region: Buffer; base: number }): ListingWriter {
  const identities = shared !== undefined;
  let room = Math.max(files, 16);
  let start = new Uint32Array(room);
  let kind = new Uint8Array(room);
  let size = new Float64Array(room);
  let mtimeMs = new Float64Array(room);
  let dev = new Float64Array(identities ? room : 0);
  let ino = new Float64Array(identities ? room : 0);
  let buf = shared?.region ?? Buffer.allocUnsafeSlow(Math.max(bytes, 64));
  const base = shared?.base ?? 0;
  let at = 0;
  let n = 0;
  let last = '';
  let inOrder = true;
  const columns = (): ListingColumns => ({
    text: new Uint8Array(buf.buffer, buf.byteOffset, at) as Uint8Array,
    // the number columns as long as the listing (a few MB at most), each its own buffer
    start: start.slice(0, n),
    kind: kind.slice(0, n),
    size: size.slice(0, n),
    mtimeMs: mtimeMs.slice(0, n),
    ...(identities ? { dev: dev.slice(0, n), ino: ino.slice(0, n) } : {}),
    inOrder,
  });
  return {
    get count() {
      return n;
    },
    get end() {
      return base + at;
    },
    columns,
    add(path, root, k, fileSize, mtime, agentId, sessionId, projectDir, fileDev, fileIno) {
      if (n > 0 && !(last < path)) inOrder = false;
      last = path;
      // A character is at most 3 bytes of UTF-8 (a surrogate pair, 2 characters, is 4); only when
      // that might not fit are the bytes counted (growing a buffer sized for an ASCII listing for
      // nothing at its last files cost ~25 ms).
      const most = 3 * fieldChars(path, root, projectDir, agentId, sessionId);
      if (at + most > buf.length && at + fieldBytes(path, root, projectDir, agentId, sessionId) > buf.length) {
        if (shared) throw new Error('the shared walk outgrew its part of the listing buffer');
        const bigger = Buffer.allocUnsafeSlow(Math.max(2 * buf.length, at + most));
        buf.copy(bigger, 0, 0, at);
        buf = bigger;
      }
      if (n === room) {
        room *= 2;
        start = grown(start, new Uint32Array(room));
        kind = grown(kind, new Uint8Array(room));
        size = grown(size, new Float64Array(room));
        mtimeMs = grown(mtimeMs, new Float64Array(room));
        if (identities) {
          dev = grown(dev, new Float64Array(room));
          ino = grown(ino, new Float64Array(room));
        }
      }
      if (n > 0) buf[at++] = 0;
      start[n] = base + at;
      at += buf.write(path, at, 'utf8');
      buf[at++] = 0;
      at += buf.write(root, at, 'utf8');
      buf[at++] = 0;
      at += buf.write(projectDir, at, 'utf8');
      buf[at++] = 0;
      at += buf.write(agentId ?? NULL, at, 'utf8');
      buf[at++] = 0;
      at += buf.write(sessionId ?? NULL, at, 'utf8');
      kind[n] = kindCode(k);
      size[n] = fileSize;
      mtimeMs[n] = mtime;
      if (identities) {
        dev[n] = fileDev;
        ino[n] = fileIno;
      }
      n++;
    },
    finish: (d) => encoded(d, columns()),
  };
}

/**
 * A listing's digest (listingDigest) from its listingNames and its files' sizes and mtimes in walk
 * order: so a listing of the files a walk named `names` found, at other sizes and mtimes, has its
 * digest without its text (ingest.ts, after a proof's check found files grown: checkedDiscovery).
 */
export function digestOf(names: string, size: Float64Array, mtimeMs: Float64Array): string {
  return createHash('sha1').update(names).update(new Uint8Array(size.buffer, size.byteOffset, size.byteLength)).update(new Uint8Array(mtimeMs.buffer, mtimeMs.byteOffset, mtimeMs.byteLength)).digest('hex');
}

/** The discovery `d` with its files' columns, and their digests. */
function encoded(d: Omit<Discovery, 'files'>, c: ListingColumns): EncodedDiscovery {
  const names = createHash('sha1').update(c.text).update(c.kind).digest('hex');
  const digest = digestOf(names, c.size, c.mtimeMs);
  return { roots: d.roots, problems: d.problems, defaults: d.defaults, text: c.text, start: c.start, kind: c.kind, size: c.size, mtimeMs: c.mtimeMs, digest, names, inOrder: c.inOrder, ...(d.dirs ? { dirs: d.dirs } : {}) };
}

/** A file's characters in the encoded text, its five fields' separators included. */
function fieldChars(path: string, root: string, projectDir: string, agentId: string | null, sessionId: string | null): number {
  return path.length + root.length + projectDir.length + (agentId?.length ?? 1) + (sessionId?.length ?? 1) + 5;
}

function fieldBytes(path: string, root: string, projectDir: string, agentId: string | null, sessionId: string | null): number {
  return Buffer.byteLength(path) + Buffer.byteLength(root) + Buffer.byteLength(projectDir) + Buffer.byteLength(agentId ?? NULL) + Buffer.byteLength(sessionId ?? NULL) + 5;
}

function grown<T extends Uint32Array | Uint8Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/** A file kind as a number: its place in KINDS (main 0, subagent 1, meta 2). */
export function kindCode(kind: FoundFile['kind']): number {
  return kind === 'main' ? 0 : kind === 'subagent' ? 1 : 2;
}

/** The buffers of an encoded discovery, to transfer rather than copy with postMessage (not of a shared walk's: its text is shared already). */
export function transferList(e: EncodedDiscovery): ArrayBuffer[] {
  return [e.text.buffer, e.start.buffer, e.kind.buffer, e.size.buffer, e.mtimeMs.buffer] as ArrayBuffer[];
}

/** What a decoded discovery already knows without decoding its files: its columns. */
const decoded = new WeakMap<Discovery, EncodedDiscovery>();

/**
 * A digest of every found file's path, kind, size and mtime (and what the walk derives from its
 * path): equal for equal listings. The early walk's comes with it, taken on the walk's thread.
 */
export function listingDigest(d: Discovery): string {
  return digestsOf(d).digest;
}

/**
 * A digest of every found file's path and kind (and what the walk derives from its path), in walk
 * order: equal for listings of the same files, whatever their sizes and mtimes (listing-snapshot.ts
 * matchSnapshot: equal, every walked file is the snapshot's at the same position).
 */
export function listingNames(d: Discovery): string {
  return digestsOf(d).names;
}

function digestsOf(d: Discovery): { digest: string; names: string } {
  let known = decoded.get(d) ?? digests.get(d);
  if (known === undefined) {
    const { digest, names } = encodeDiscovery(d);
    digests.set(d, (known = { digest, names }));
  }
  return known;
}

/** The digests of discoveries walked on this thread (an early walk's come with its columns): ingestOrAnswer and ingest both ask. */
const digests = new WeakMap<Discovery, { digest: string; names: string }>();

/** How many files the discovery found, without decoding an early walk's files. */
export function fileCount(d: Discovery): number {
  return decoded.get(d)?.kind.length ?? listed.get(d)?.count ?? d.files.length;
}

/**
 * The found files as a plan reads them: every file's path, kind (kindCode), size and mtime in
 * walk order, and whole objects only for the files asked for. Over an early walk's columns no
 * object is made for an unchanged file, and the objects asked for hold strings of their own
 * rather than slices of one decoded text, which would keep all of it alive (BENCHMARKS-log.md, Memory).
 */
export interface FileListing {
  count: number;
  /** calls `fn` for every file, in walk order */
  each(fn: (path: string, kind: number, size: number, mtimeMs: number, i: number) => void): void;
  /** the file at position i, as an object */
  file(i: number): FoundFile;
  /** the UTF-8 of the file's path at position i (of an early walk, a view of its text) */
  path(i: number): Uint8Array;
  kind(i: number): number;
  size(i: number): number;
  mtimeMs(i: number): number;
  /** listingNames of the discovery */
  names(): string;
}

export function fileListing(d: Discovery): FileListing {
  const e = decoded.get(d);
  const made = listed.get(d);
  if (made) return made;
  if (!e) {
    const files = d.files;
    return {
      count: files.length,
      each: (fn) => files.forEach((f, i) => fn(f.path, kindCode(f.kind), f.size, f.mtimeMs, i)),
      file: (i) => files[i],
      path: (i) => Buffer.from(files[i].path),
      kind: (i) => kindCode(files[i].kind),
      size: (i) => files[i].size,
      mtimeMs: (i) => files[i].mtimeMs,
      names: () => listingNames(d),
    };
  }
  const text = Buffer.from(e.text.buffer, e.text.byteOffset, e.text.byteLength);
  const n = e.kind.length;
  // a field ends at the next NUL, or at the end of the text
  const end = (from: number) => {
    const at = text.indexOf(0, from);
    return at < 0 ? text.length : at;
  };
  const file = (i: number): FoundFile => {
    const fields: string[] = [];
    for (let k = 0, from = e.start[i]; k < FIELDS; k++) {
      const to = end(from);
      fields.push(text.toString('utf8', from, to));
      from = to + 1;
    }
    const [path, root, projectDir, agentId, sessionId] = fields;
    return {
      path,
      root,
      kind: KINDS[e.kind[i]],
      size: e.size[i],
      mtimeMs: e.mtimeMs[i],
      agentId: agentId === NULL ? null : agentId,
      sessionId: sessionId === NULL ? null : sessionId,
      projectDir,
    };
  };
  return {
    count: n,
    each(fn) {
      for (let i = 0; i < n; i++) {
        const from = e.start[i];
        fn(text.toString('utf8', from, end(from)), e.kind[i], e.size[i], e.mtimeMs[i], i);
      }
    },
    file,
    path: (i) => text.subarray(e.start[i], end(e.start[i])),
    kind: (i) => e.kind[i],
    size: (i) => e.size[i],
    mtimeMs: (i) => e.mtimeMs[i],
    names: () => e.names,
  };
}

/**
 * The discovery an EncodedDiscovery holds. Its files are decoded when first asked for: a warm run
 * needs only listingDigest and fileCount, and a plan only fileListing.
 */
export function decodeDiscovery(e: EncodedDiscovery): Discovery {
  let files: FoundFile[] | undefined;
  const d: Discovery = {
    roots: e.roots,
    get files() {
      if (!files) {
        const listing = fileListing(d);
        files = Array.from(e.kind, (_, i) => listing.file(i));
      }
      return files;
    },
    problems: e.problems,
    defaults: e.defaults,
    ...(e.dirs ? { dirs: e.dirs } : {}),
  };
  decoded.set(d, e);
  return d;
}

/**
 * The discovery a walk of the one root `root` makes when it finds the files of the listing
 * snapshot `snap`, in its order, at the sizes and mtimes `size` and `mtimeMs` (by position): what
 * an append run walked for, when a proof's check found every directory as it was and only files
 * grown or touched (unchanged.ts checkOutcome); null unless the snapshot is of the walk the
 * proof was kept after (its listingNames are `names`). Nothing is decoded to make it: its digest
 * comes from `names` and the columns (digestOf), and a file's path is rebuilt from the snapshot,
 * and its other fields derived from it as the walk derives them (fileFields), when asked for.
 * Example: a snapshot of `/r/p/s1.jsonl` (100 bytes) and sizes [140] → that file at 140 bytes,
 * session s1, project `p`.
 */
export function snapshotDiscovery(snap: ListingSnapshot, root: string, size: Float64Array, mtimeMs: Float64Array, names: string): Discovery | null {
  const n = snap.count;
  if (snap.names !== names || size.length !== n || mtimeMs.length !== n) return null;
  // positions asked for in increasing order (a plan, the delta's grown files) take one pass over the snapshot
  const pathAt = snapshotPaths(snap);
  const file = (i: number): FoundFile => {
    const path = pathAt(i).toString('utf8');
    const f = fileFields(path, path.slice(path.lastIndexOf('/') + 1));
    return { path, root, kind: f.kind, size: size[i], mtimeMs: mtimeMs[i], agentId: f.agentId, sessionId: f.sessionId, projectDir: f.projectDir };
  };
  let files: FoundFile[] | undefined;
  const d: Discovery = {
    roots: [root],
    get files() {
      return (files ??= Array.from({ length: n }, (_, i) => file(i)));
    },
    problems: [],
    defaults: true,
  };
  listed.set(d, {
    count: n,
    each(fn) {
      for (let i = 0; i < n; i++) fn(pathAt(i).toString('utf8'), snap.kind[i], size[i], mtimeMs[i], i);
    },
    file,
    // a copy: the next position's path is rebuilt in the same bytes
    path: (i) => Buffer.from(pathAt(i)),
    kind: (i) => snap.kind[i],
    size: (i) => size[i],
    mtimeMs: (i) => mtimeMs[i],
    names: () => names,
  });
  digests.set(d, { digest: digestOf(names, size, mtimeMs), names });
  return d;
}

/** The listings of discoveries made from a listing snapshot (snapshotDiscovery). */
const listed = new WeakMap<Discovery, FileListing>();

/**
 * Whether the arguments (after `node cli.js`) are worth a speculative walk: a command that reads
 * logs, and every bare word after it the value of the option before it (`--db x`), so probably
 * no explicit path. A wrong guess costs only the walk, never the answer.
 * Example: `summary --db x --json` → true, `whatif ttl --json` → true; `summary ~/logs` → false;
 * `replay channel f` → false.
 */
export function wantsEarlyWalk(args: string[]): boolean {
  if (!READS_LOGS.has(args[0] ?? '')) return false;
  // `whatif ttl …`: the subcommand is the second word
  const first = args[0] === 'whatif' ? 2 : 1;
  for (let i = first; i < args.length; i++) {
    if (args[i] === '--') return false;
    if (args[i].startsWith('-')) continue;
    const prev = args[i - 1];
    if (i === first || !prev.startsWith('-') || prev.includes('=')) return false;
  }
  return true;
}

interface Early {
  env: string[];
  result: Promise<Discovery | null>;
  /** the walk is wanted: a worker that waits (its proof held) walks */
  go: () => void;
  /** the walk is waited for: this thread may help */
  take: () => void;
  /** the proof the worker checks the logs against before it walks, and its check's end (earlyProof) */
  proof: Promise<EarlyCheck | null>;
  /** the walk is not wanted: its worker stops */
  stop: () => void;
}

let early: Early | undefined;

/**
 * The proof kept beside the store at `store` (unchanged.ts) that the early walk's worker checks the
 * logs against before it walks, as it posts it when it begins, and the check it takes chunks of
 * the proof from, which another thread can take part in (checkChunks).
 */
export interface EarlyProof extends Proof {
  store: string;
  check: Int32Array;
}

/** An early proof, and the end of the worker's part of its check: whether it found no line that did not hold. */
export interface EarlyCheck {
  proof: EarlyProof;
  done: Promise<boolean>;
}

function rootEnv(env: NodeJS.ProcessEnv): string[] {
  return ROOT_ENV.map((k) => env[k] ?? NULL);
}

/** Starts the walk of the default roots on a worker thread when `wantsEarlyWalk(args)`. */
export function walkEarly(args: string[], env: NodeJS.ProcessEnv = process.env, sharing: Sharing = 'cursor'): void {
  if (early || !wantsEarlyWalk(args)) return;
  let worker: Worker;
  try {
    // the walk's garbage is short-lived: a young generation of at most 12 MB (V8's default grows
    // to 48) took a warm 10 GB run's peak from 270 to 249 MiB, in as long (BENCHMARKS-log.md, Warm)
    const resourceLimits = { maxYoungGenerationSizeMb: 12 };
    const workerEnv = Object.fromEntries(ROOT_ENV.map((k) => [k, env[k]]));
    worker = startModuleWorker('walk-worker', { workerData: { env: workerEnv, sharing, store: ANSWERED.has(args[0] ?? '') ? storeOf(args, env) : null }, resourceLimits });
  } catch {
    return; // no worker: ingest walks on the main thread as it would anyway
  }
  // a command that never takes the walk must not wait for it to exit
  worker.unref();
  early = { env: rootEnv(env), ...walkResult(worker, env, sharing) };
}

/**
 * The discovery a walk worker (walk-worker.ts, given `env` and `sharing`) posts, or null if it
 * failed; its walk shared with this thread once `take` is called (the caller is about to wait for
 * it: a thread still loading modules or opening the store does not walk beside that).
 */
export function walkResult(worker: Worker, env: NodeJS.ProcessEnv, sharing: Sharing): Omit<Early, 'env'> {
  let shared: SharedUnits | undefined;
  let mine: WalkPart | null | undefined;
  let taken = false;
  // this thread's part, walked once (when the walk is taken and the units are known, or, taken or
  // not, when the worker's part arrives: the units left then, if any)
  const help = () => {
    if (!shared || mine !== undefined) return;
    try {
      mine = helpWalk(shared, sharing);
    } catch {
      mine = null;
      Atomics.store(new Int32Array(shared.cursor), 1, STOP_FAILED);
    }
  };
  // The worker's listeners live as long as the worker does, and a promise's resolve function
  // holds the promise, and so the discovery it was resolved with: they reach it only until it is
  // settled (`settle`), so that the listing can go with the plan's last use of it (ingest.ts) even
  // if the worker has yet to exit (BENCHMARKS-log.md, Append, session 31).
  let settle: ((d: Discovery | null) => void) | undefined;
  // settled with the proof the worker checks, or null once it walks without one (or is done); and
  // once the worker's part of the check is done
  let checking: (p: EarlyCheck | null) => void = () => undefined;
  const proof = new Promise<EarlyCheck | null>((resolve) => (checking = resolve));
  let checked: (held: boolean) => void = () => undefined;
  const done = new Promise<boolean>((resolve) => (checked = resolve));
  // the proof held: the worker waits to be asked to walk; and whether the walk was asked for (go),
  // perhaps before the proof's message came
  let waits = false;
  let wanted = false;
  const finish = (d: Discovery | null) => {
    const s = settle;
    settle = undefined;
    shared = undefined;
    mine = null;
    checking(null);
    checked(false);
    s?.(d);
  };
  const result = new Promise<Discovery | null>((resolve) => {
    settle = resolve;
    worker.on('message', (m: EncodedDiscovery | SharedUnits | WorkerPart | { error: string } | { proof: EarlyProof } | { checked: boolean }) => {
      try {
        if ('error' in m) finish(null);
        else if ('proof' in m) checking({ proof: m.proof, done });
        else if ('checked' in m) {
          waits = m.checked;
          if (wanted) go();
          checked(m.checked);
        } else if ('units' in m) {
          shared = m;
          checking(null);
          checked(false);
          if (taken) help();
        } else if ('ranges' in m) {
          help();
          // a link this thread met after the worker had finished: walked again here, alone
          const merged = mine ? mergeParts(shared!.text, m, mine) : null;
          finish(merged ? decodeDiscovery(inPathOrder(merged)) : mine === null ? null : decodeDiscovery(walkEncoded(env)));
        } else {
          finish(decodeDiscovery(m));
        }
      } catch {
        // the parts did not fit together, or the walk again failed: ingest walks
        finish(null);
      }
    });
    worker.once('error', () => finish(null));
    worker.once('exit', () => finish(null));
  });
  const go = () => {
    wanted = true;
    if (waits) {
      waits = false;
      worker.postMessage('walk');
    }
  };
  const take = () => {
    taken = true;
    // after what the caller starts before it waits (ingest opens the store)
    setImmediate(help);
  };
  const stop = () => {
    worker.removeAllListeners('message');
    if (shared) Atomics.store(new Int32Array(shared.cursor), 1, STOP_DROPPED);
    finish(null);
    void worker.terminate();
  };
  return { result, go, take, stop, proof };
}

/**
 * The early walk's discovery, when it walked what `discover(paths, env)` would: no explicit paths,
 * the same root-deciding environment. Taken once; null (at once) when there is none to take, and a
 * promise of null if the walk failed. With `help`, this thread walks part of it once the caller
 * waits (ingestOrAnswer, which has nothing else to do); without, the worker walks it all (ingest,
 * which loads DuckDB and opens the store meanwhile).
 */
export function takeEarlyWalk(paths: string[] | undefined, env: NodeJS.ProcessEnv, help = true): Promise<Discovery | null> | null {
  const e = early;
  early = undefined;
  if (!e || (paths && paths.length > 0)) return null;
  const want = rootEnv(env);
  if (want.some((v, i) => v !== e.env[i])) return null;
  e.go();
  if (help) e.take();
  return e.result;
}

/**
 * Stops the early walk, if there is one: the run knows the logs are as its answers found them
 * without it (unchanged.ts). A later takeEarlyWalk finds none, and the caller walks itself.
 */
export function dropEarlyWalk(): void {
  const e = early;
  early = undefined;
  e?.stop();
}

/**
 * What the early walk's worker found when it checked the logs against the proof beside the store
 * (EarlyProof), once it has: null when it walks without one, and null at once when there is no
 * early walk of what `discover(paths, env)` would walk (as takeEarlyWalk). Taken once.
 */
export function earlyProof(paths: string[] | undefined, env: NodeJS.ProcessEnv): Promise<EarlyCheck | null> | null {
  if (!early || (paths && paths.length > 0)) return null;
  const want = rootEnv(env);
  if (want.some((v, i) => v !== early!.env[i])) return null;
  // taken once: a check that was settled is no answer to a later question
  const proof = early.proof;
  early.proof = Promise.resolve(null);
  return proof;
}

/**
 * The store the command given `args` would open, as far as the arguments say it before they are
 * parsed (`--db PATH` or `--db=PATH`, the last one given, `~` expanded as the CLI does, else the
 * default); null for `:memory:`.
 * A wrong guess only means the worker checks no proof, or one the main thread does not take
 * (ingestOrAnswer compares the store).
 */
export function storeOf(args: string[], env: NodeJS.ProcessEnv): string | null {
  let db: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') break;
    if (a === '--db') db = args[i + 1];
    else if (a.startsWith('--db=')) db = a.slice(5);
  }
  if (db === ':memory:' || db === '') return null;
  return db === undefined ? defaultDbPath(env) : expandHome(db, env.HOME || homedir());
}
