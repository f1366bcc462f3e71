/**
 * Proof that the logs are as a walk found them, without walking them again: a file beside the store
 * holding every directory that walk listed (its device, inode and ctime) and every file it found
 * (its size and mtime), under the walk's listing digest.
 *
 * A warm run's walk is most of its time: a readdir of every directory (five system calls each)
 * and a stat of every file, on two threads, then the listing written, merged and hashed. Whether
 * anything changed takes less: a directory's entries cannot change without its ctime changing
 * (no system call sets a ctime), and a file's contents not without its size or mtime, which the
 * listing holds already. So a stat of every file and directory, compared with this file, tells
 * that a walk would list what it listed then; its digest is then the walk's.
 *
 * A directory is trusted only if its ctime is older than the walk it is recorded after, by a
 * margin (keepUnchanged): one changed while or after it was listed, within the clock's or the
 * file system's granularity, would otherwise keep a ctime that no later change moves past what is
 * recorded ("racy" entries, as git calls them). Such a walk keeps no proof; the next one does.
 *
 * The file is written a piece at a time and checked a chunk at a time, by whichever threads take
 * part (checkChunks: the early walk's worker and the main thread), so that it does not grow the
 * process with the logs: on 10 GB of logs it holds 235,000 files and 112,000 directories (61 MB).
 *
 * Example (1 GB of logs, 23,478 files in 11,181 directories): the early walk's worker and the main
 * thread check them in ~80 ms, where their walk took ~135 ms (BENCHMARKS-log.md, Warm, session 39).
 */
import { randomBytes } from 'node:crypto';
import { type Stats, closeSync, fstatSync, openSync, readSync, readdirSync, renameSync, rmSync, statSync, statfsSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { READ_NOWAIT } from '../store/location.js';
import type { Discovery } from './discover.js';
import { fileListing } from './early-walk.js';

/** The file's name: the store's, then this. */
export const UNCHANGED_SUFFIX = '.unchanged';

const FORMAT = 6;

/** Set by scripts/bundle.mjs: a digest of the build's sources ("source" when run from them, as tests do). */
declare const CACHELENS_BUILD: string | undefined;

/**
 * The build that keeps or checks a proof: another build's walk may list the logs by other rules, and
 * a proof it kept, with answers of its digest, would then answer for logs this build lists otherwise.
 */
const BUILD = typeof CACHELENS_BUILD === 'string' ? CACHELENS_BUILD : 'source';

/** The last line: a proof without it was cut short. */
const END = 'end';

/** How much of the file is written at a time. */
const PIECE = 1 << 20;

/**
 * How much older than the process a directory's ctime must be to be trusted: more than a coarse
 * kernel clock's tick, or a file system's timestamp granularity (2 s on FAT).
 */
export const TRUST_MARGIN_MS = 3000;

/**
 * File systems whose timestamps come from this machine's kernel clock (Linux's statfs magic
 * numbers): ext2 – 4, XFS, Btrfs, tmpfs, overlayfs, ZFS, F2FS, ramfs, bcachefs. A directory on
 * another device than the store is trusted only if both are on one of these, so that the clock
 * read from the store's file system is theirs too; a network file system's server may keep
 * another time, which nothing written beside the store can read (nothing is written among the logs).
 */
const LOCAL_FILE_SYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010, 0x858458f6, 0xca451a4e]);

/**
 * Keeps the proof for the walk `d` (its listing digest `digest`) beside the store at `dbPath`,
 * with the listing key of the answers it goes with (`listing`: the early walk's worker checks a
 * proof only while the answers beside the store are those),
 * when it can be trusted: `d` knows every directory it listed, met no problem, and every directory's
 * ctime is before `trustBefore` (by default the process's start less TRUST_MARGIN_MS, the walk
 * having started after it) as the store's file system's clock tells it (trustedBefore), and it is
 * on the store's device or both are on file systems of this machine's clock (LOCAL_FILE_SYSTEMS).
 * Otherwise removes a proof kept before, which no longer holds. Returns whether it kept one. It
 * only saves time: a failure to write is no error. It also removes what a run killed while
 * writing one left.
 */
export function keepUnchanged(dbPath: string, d: Discovery, digest: string, listing: string, trustBefore = performance.timeOrigin - TRUST_MARGIN_MS): boolean {
  const file = dbPath + UNCHANGED_SUFFIX;
  const tmp = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  let kept = false;
  try {
    if (d.dirs && d.problems.length === 0) {
      fd = openSync(tmp, 'w');
      // the store's file system's time, from the file just made: a directory's ctime is that file
      // system's time, which may run behind this machine's (a network file system's server)
      const made = fstatSync(fd);
      const before = trustedBefore(made.mtimeMs, trustBefore);
      const local = new Map<number, boolean>();
      const sharesClock = (dev: number, dir: string) => {
        let l = local.get(dev);
        if (l === undefined) local.set(dev, (l = isLocal(tmp) && isLocal(dir)));
        return l;
      };
      kept = writeProof(fd, d, d.dirs, { digest, listing }, (st, dir) => st.ctimeMs < before && (st.dev === made.dev || sharesClock(st.dev, dir)));
      closeSync(fd);
      fd = undefined;
      if (kept) renameSync(tmp, file);
    }
  } catch {
    kept = false;
  }
  try {
    if (fd !== undefined) closeSync(fd);
  } catch {
    // the part is removed below
  }
  // each on its own: one that fails (a directory at the proof's name) must not leave a part behind
  if (!kept) rmQuietly(file);
  rmQuietly(tmp);
  try {
    // a run killed while it wrote one left its part behind (another run's, now, only loses its proof)
    const left = `${basename(file)}.`;
    for (const name of readdirSync(dirname(file))) if (name.startsWith(left) && name.endsWith('.tmp')) rmQuietly(join(dirname(file), name));
  } catch {
    // nothing more to do
  }
  return kept;
}

/**
 * The time before which a directory's ctime is trusted, on the clock of the file system whose
 * time is `fsNow` now: `trustBefore` (a time of this machine's clock at or before the walk's start)
 * moved by how far that file system's clock runs behind this machine's. How long ago
 * `trustBefore` was is taken as the longer of the wall clock's and the monotonic clock's account
 * (the time at the thread's start plus the time since): a wall clock stepped back during the run
 * would shorten it, and trust a directory changed after the walk; one stepped forward, the other.
 * Example: fsNow 10,000, the walk began 500 ms ago on both clocks, TRUST_MARGIN_MS 3,000 →
 * ctimes before 6,500.
 */
export function trustedBefore(fsNow: number, trustBefore: number, now = Math.max(Date.now(), performance.timeOrigin + performance.now())): number {
  return Math.min(trustBefore, fsNow - (now - trustBefore));
}

/** Whether the file system holding `path` keeps this machine's kernel clock (LOCAL_FILE_SYSTEMS). */
export function isLocal(path: string): boolean {
  try {
    return LOCAL_FILE_SYSTEMS.has(statfsSync(path).type >>> 0);
  } catch {
    return false;
  }
}

function rmQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // it only saves time
  }
}

/** Removes the proof beside the store at `dbPath` (a check found it does not hold). */
export function dropUnchanged(dbPath: string): void {
  rmQuietly(dbPath + UNCHANGED_SUFFIX);
}

/**
 * Writes the proof: a header line (JSON: the format, an id of its own, the digest, the listing key
 * of the answers it was kept with, the roots, how many files and directories), a line per file
 * (`f size mtimeMs path`, tab-separated) and per directory (`d dev ino ctimeMs path`), then END.
 * The lines go from the latest mtime or ctime to the earliest: what changed since is most likely
 * what changed last before (a session still being written, a project still gaining sessions), and
 * a check that meets it early stops early. Paths are copied as the listing holds them, as UTF-8,
 * not decoded. False when a directory cannot be trusted, or a path holds a newline.
 */
function writeProof(fd: number, d: Discovery, dirs: string[], keys: { digest: string; listing: string }, trusted: (st: Stats, dir: string) => boolean): boolean {
  const listing = fileListing(d);
  const n = listing.count;
  const dev = new Float64Array(dirs.length);
  const ino = new Float64Array(dirs.length);
  const ctime = new Float64Array(dirs.length);
  for (let k = 0; k < dirs.length; k++) {
    const st = statSync(dirs[k], { throwIfNoEntry: false });
    if (!st || !st.isDirectory() || !trusted(st, dirs[k])) return false;
    dev[k] = st.dev;
    ino[k] = st.ino;
    ctime[k] = st.ctimeMs;
  }
  // every line's place, files (0 … n-1) and directories (n …), latest first
  const time = (i: number) => (i < n ? listing.mtimeMs(i) : ctime[i - n]);
  const order = Uint32Array.from({ length: n + dirs.length }, (_, i) => i).sort((a, b) => time(b) - time(a));
  const out = new LineWriter(fd);
  out.line(JSON.stringify({ format: FORMAT, build: BUILD, id: randomBytes(8).toString('hex'), ...keys, roots: d.roots, files: n, dirs: dirs.length }));
  for (const i of order) {
    const written =
      i < n
        ? out.line(`f\t${listing.size(i)}\t${listing.mtimeMs(i)}\t`, listing.path(i))
        : out.line(`d\t${dev[i - n]}\t${ino[i - n]}\t${ctime[i - n]}\t`, Buffer.from(dirs[i - n]));
    if (!written) return false;
  }
  out.line(END);
  out.flush();
  return true;
}

/** Lines into a file, a piece at a time. */
class LineWriter {
  private readonly buf = Buffer.allocUnsafe(PIECE);
  private at = 0;

  constructor(private readonly fd: number) {}

  /** A line: `text`, then `path` as it is; false if the path holds a newline, or the line is longer than LONGEST. */
  line(text: string, path: Uint8Array = EMPTY): boolean {
    if (path.includes(0x0a)) return false;
    const bytes = Buffer.byteLength(text) + path.length + 1;
    // (no path is that long: PATH_MAX is 4,096 bytes)
    if (bytes > LONGEST) return false;
    if (this.at + bytes > this.buf.length) this.flush();
    this.at += this.buf.write(text, this.at, 'utf8');
    this.buf.set(path, this.at);
    this.at += path.length;
    this.buf[this.at++] = 0x0a;
    return true;
  }

  flush(): void {
    for (let from = 0; from < this.at; ) from += writeSync(this.fd, this.buf, from, this.at - from);
    this.at = 0;
  }
}

const EMPTY = new Uint8Array(0);

/** A proof's header (readUnchanged): the walk it was kept after, and where its body is. */
export interface Proof {
  /** the header line, whose id tells one proof from another */
  head: string;
  digest: string;
  /** the listing key of the answers it was kept with */
  listing: string;
  roots: string[];
  files: number;
  dirs: number;
  /** where the body starts, and the file's size */
  body: number;
  size: number;
}

/**
 * The header of the proof kept beside the store at `dbPath`, for a walk of `roots` when given;
 * null when there is none, or it is for other roots. A damaged or cut proof does not hold.
 */
export function readUnchanged(dbPath: string, roots?: string[]): Proof | null {
  let fd: number;
  try {
    fd = openSync(dbPath + UNCHANGED_SUFFIX, READ_NOWAIT);
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(Math.min(size, 65536));
    const n = readSync(fd, buf, 0, buf.length, 0);
    const nl = buf.subarray(0, n).indexOf(0x0a);
    if (nl < 0) return null;
    const head = buf.toString('utf8', 0, nl);
    const h = JSON.parse(head) as { format?: unknown; build?: unknown; digest?: unknown; listing?: unknown; roots?: unknown; dirs?: unknown; files?: unknown };
    const { format, build, digest, listing, dirs, files } = h ?? {};
    if (format !== FORMAT || build !== BUILD || typeof digest !== 'string' || typeof listing !== 'string' || !Number.isInteger(dirs) || !Number.isInteger(files)) return null;
    if (!Array.isArray(h.roots) || !h.roots.every((r) => typeof r === 'string')) return null;
    const kept = h.roots as string[];
    if (roots && JSON.stringify(kept) !== JSON.stringify(roots)) return null;
    return { head, digest, listing, roots: kept, files: files as number, dirs: dirs as number, body: nl + 1, size };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * A check of a proof, shared by the threads that take part in it (the early walk's worker and the
 * main thread): Int32s over a SharedArrayBuffer, which postMessage shares rather than copies.
 */
export function newCheck(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * SLOTS));
}

/** The check's slots: the next piece to take, whether a line did not hold, the files, directories and ENDs met. */
const NEXT = 0;
const FAILED = 1;
const FILES = 2;
const DIRS = 3;
const ENDS = 4;
const SLOTS = 5;

/** How much of the body a thread takes at a time. */
const CHUNK = 128 * 1024;

/** Longer than any line of a proof (a path is at most 4,096 bytes here, PATH_MAX). */
const LONGEST = 65536;

/**
 * Checks the lines of the proof `p` (beside the store at `dbPath`), a chunk of its body at a time,
 * the chunks taken from `check` until none is left or a line did not hold (here or in another
 * thread): a line belongs to the chunk it starts in. checkHeld says what was found once every
 * thread that takes part has returned.
 */
export function checkChunks(dbPath: string, p: Proof, check: Int32Array): void {
  let fd: number | undefined;
  try {
    fd = openSync(dbPath + UNCHANGED_SUFFIX, READ_NOWAIT);
    // the same proof: its size, and its header (its id)
    const head = Buffer.allocUnsafe(p.body);
    if (fstatSync(fd).size !== p.size || readSync(fd, head, 0, p.body, 0) !== p.body || head.toString('utf8', 0, p.body - 1) !== p.head) throw new Error('another proof');
    const chunks = Math.ceil((p.size - p.body) / CHUNK);
    let buf = Buffer.allocUnsafe(CHUNK + LONGEST);
    const counts = [0, 0, 0];
    for (;;) {
      if (Atomics.load(check, FAILED) !== 0) break;
      const k = Atomics.add(check, NEXT, 1);
      if (k >= chunks) break;
      const start = p.body + k * CHUNK;
      const end = Math.min(start + CHUNK, p.size);
      // from the byte before the chunk (a newline when a line starts at its start) to the end of
      // the last line that starts in it: no line is longer than LONGEST
      const from = start - 1;
      const length = Math.min(p.size, end + LONGEST) - from;
      if (buf.length < length) buf = Buffer.allocUnsafe(length);
      for (let got = 0; got < length; ) {
        const n = readSync(fd, buf, got, length - got, from + got);
        if (n === 0) throw new Error('the proof is shorter than it was');
        got += n;
      }
      const bytes = buf.subarray(0, length);
      const first = bytes.indexOf(0x0a) + 1;
      // no line starts in this chunk: one that started before goes on through it
      if (first === 0 || first >= end - from) continue;
      const last = bytes.indexOf(0x0a, end - from - 1);
      if (last < 0) throw new Error('a line longer than any proof writes');
      if (!linesHold(bytes.toString('utf8', first, last), counts, from + last === p.size - 1)) {
        Atomics.store(check, FAILED, 1);
        break;
      }
    }
    Atomics.add(check, FILES, counts[0]);
    Atomics.add(check, DIRS, counts[1]);
    Atomics.add(check, ENDS, counts[2]);
  } catch {
    Atomics.store(check, FAILED, 1);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether a line of the check did not hold (so far). */
export function checkFailed(check: Int32Array): boolean {
  return Atomics.load(check, FAILED) !== 0;
}

/** Whether the check of `p` found every line to hold, once every thread that took part has returned. */
export function checkHeld(p: Proof, check: Int32Array): boolean {
  return Atomics.load(check, FAILED) === 0 && Atomics.load(check, FILES) === p.files && Atomics.load(check, DIRS) === p.dirs && Atomics.load(check, ENDS) === 1;
}

/** The proof `p` checked on this thread alone. */
export function proofHolds(dbPath: string, p: Proof): boolean {
  const check = newCheck();
  checkChunks(dbPath, p, check);
  return checkHeld(p, check);
}

/**
 * Whether every line of `text` (whole lines, no newline after the last) holds, each counted in
 * `counts` (files, directories, ENDs). `atEnd`: the last line ends the file, where END must be.
 */
function linesHold(text: string, counts: number[], atEnd: boolean): boolean {
  for (let at = 0; at < text.length; ) {
    let to = text.indexOf('\n', at);
    if (to < 0) to = text.length;
    const kind = text.charCodeAt(at);
    if (kind === 0x66 /* f */ && text.charCodeAt(at + 1) === 9) {
      const a = text.indexOf('\t', at + 2);
      const b = a < 0 ? -1 : text.indexOf('\t', a + 1);
      if (b < 0 || b >= to) return false;
      const st = statSync(text.slice(b + 1, to), { throwIfNoEntry: false });
      if (!st || !st.isFile() || st.size !== Number(text.slice(at + 2, a)) || st.mtimeMs !== Number(text.slice(a + 1, b))) return false;
      counts[0]++;
    } else if (kind === 0x64 /* d */ && text.charCodeAt(at + 1) === 9) {
      const a = text.indexOf('\t', at + 2);
      const b = a < 0 ? -1 : text.indexOf('\t', a + 1);
      const c = b < 0 ? -1 : text.indexOf('\t', b + 1);
      if (c < 0 || c >= to) return false;
      const st = statSync(text.slice(c + 1, to), { throwIfNoEntry: false });
      if (!st || !st.isDirectory() || st.dev !== Number(text.slice(at + 2, a)) || st.ino !== Number(text.slice(a + 1, b)) || st.ctimeMs !== Number(text.slice(b + 1, c))) return false;
      counts[1]++;
    } else if (text.slice(at, to) === END && to === text.length && atEnd) counts[2]++;
    else return false;
    at = to + 1;
  }
  return true;
}
