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
import { createHash, randomBytes } from 'node:crypto';
import { type Stats, closeSync, fstatSync, openSync, readSync, readdirSync, renameSync, rmSync, statSync, statfsSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { READ_NOWAIT } from '../store/location.js';
import type { Discovery } from './discover.js';
import { fileListing } from './early-walk.js';

/** The file's name: the store's, then this. */
export const UNCHANGED_SUFFIX = '.unchanged';

const FORMAT = 8;

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
      kept = writeProof(fd, d, d.dirs, { digest, listing, names: fileListing(d).names() }, (st, dir) => st.ctimeMs < before && (st.dev === made.dev || sharesClock(st.dev, dir)));
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

/**
 * Keeps, beside the store at `dbPath`, the proof `p` made over for the logs as this run's check of
 * it found them (`columns`: every directory as `p` has it, some files grown or touched;
 * checkOutcome), for the listing they make now (its digest `digest`) and the answers of that
 * listing (`listing`): `p`'s lines copied as they are, but for the changed files', which get their
 * sizes and mtimes now. The directories' lines hold as they are: each was trusted when `p` was
 * kept, and the check found it as recorded. A run that answered after appends keeps it so, in a
 * copy of the file, rather than the stat of every directory that keepUnchanged takes. Returns
 * whether it kept one; a proof that cannot be made over (another run replaced `p`) is removed, as
 * it no longer holds.
 * Example: `f\t100\t5\t3\t/r/p/s.jsonl` of a file now 140 bytes at mtime 9 → `f\t140\t9\t3\t/r/p/s.jsonl`.
 */
export function keepChecked(dbPath: string, p: Proof, columns: CheckColumns, listingDigest: string, listing: string): boolean {
  const file = dbPath + UNCHANGED_SUFFIX;
  const tmp = `${file}.${process.pid}.tmp`;
  let from: number | undefined;
  let to: number | undefined;
  let kept = false;
  try {
    const buf = Buffer.allocUnsafe(Math.max(PIECE, p.body));
    from = openProof(dbPath, p, buf);
    to = openSync(tmp, 'w');
    const digest = new BodyDigest();
    // the body's bytes, digested as they are written (the header is written first, and again once the digest is known)
    const write = (b: Uint8Array) => {
      digest.update(b);
      writeAll(to!, b);
    };
    // the bytes of `p` from `start` to `end`, as they are
    const copy = (start: number, end: number) => {
      for (let at = start; at < end; ) {
        const n = readSync(from!, buf, 0, Math.min(buf.length, end - at), at);
        if (n === 0) throw new Error('the proof is shorter than it was');
        write(buf.subarray(0, n));
        at += n;
      }
    };
    const id = randomBytes(8).toString('hex');
    const header = (body: string) => Buffer.from(`${JSON.stringify({ format: FORMAT, build: BUILD, id, digest: listingDigest, listing, names: p.names, body, roots: p.roots, files: p.files, dirs: p.dirs })}\n`);
    writeAll(to, header(NO_DIGEST));
    const changed: number[] = [];
    for (let i = 0; i < p.files; i++) {
      if (columns.met[i] === 2) changed.push(i);
      else if (columns.met[i] !== 1) throw new Error('a file the check did not meet');
    }
    changed.sort((a, b) => columns.line[a] - columns.line[b]);
    let at = p.body;
    const room = Buffer.allocUnsafe(LONGEST);
    for (const i of changed) {
      const start = columns.line[i];
      if (start < at) throw new Error('not the lines the check met');
      copy(at, start);
      const path = fileLinePath(from, p, start, i, room);
      if (!path) throw new Error('not the line the check met');
      write(Buffer.from(`f\t${columns.size[i]}\t${columns.mtimeMs[i]}\t${i}\t`));
      write(path);
      write(NEWLINE);
      at = start + (path.byteOffset - room.byteOffset) + path.length + 1;
    }
    copy(at, p.size);
    writeAll(to, header(digest.finish()), 0);
    closeSync(to);
    to = undefined;
    renameSync(tmp, file);
    kept = true;
  } catch {
    kept = false;
  }
  for (const fd of [from, to]) {
    try {
      if (fd !== undefined) closeSync(fd);
    } catch {
      // nothing more to do
    }
  }
  if (!kept) rmQuietly(file);
  rmQuietly(tmp);
  return kept;
}

/**
 * Whether the lines of the proof `p` (beside the store at `dbPath`) that the check `columns` met at
 * the positions `positions` name the paths `pathAt` gives for them: that the sizes and mtimes a
 * listing takes from the check at those positions are those of its files there (the check stats
 * each line's path, and puts what it finds at the line's position). A proof damaged in a way
 * that still reads, two lines' positions swapped, would otherwise give one file's size to another.
 */
export function linesName(dbPath: string, p: Proof, columns: CheckColumns, positions: number[], pathAt: (i: number) => Uint8Array): boolean {
  let fd: number | undefined;
  try {
    const room = Buffer.allocUnsafe(Math.max(LONGEST, p.body));
    fd = openProof(dbPath, p, room);
    for (const i of positions) {
      if (columns.met[i] === 0) return false;
      const path = fileLinePath(fd, p, columns.line[i], i, room);
      if (!path || !path.equals(pathAt(i))) return false;
    }
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The proof beside the store at `dbPath` opened, when it is still `p`: its size, and its header
 * (which holds an id of its own), read into `room` (`p.body` bytes at least). Throws for another
 * proof, or none.
 */
function openProof(dbPath: string, p: Proof, room: Buffer): number {
  const fd = openSync(dbPath + UNCHANGED_SUFFIX, READ_NOWAIT);
  try {
    if (fstatSync(fd).size !== p.size || readSync(fd, room, 0, p.body, 0) !== p.body || room.toString('utf8', 0, p.body - 1) !== p.head) throw new Error('another proof');
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * The path of the file line of position `i` that starts at `start` in the proof `p` (open as `fd`),
 * read into `room` (LONGEST bytes at least); null when no such line starts there.
 */
function fileLinePath(fd: number, p: Proof, start: number, i: number, room: Buffer): Buffer | null {
  if (!(Number.isInteger(start) && start >= p.body && start < p.size)) return null;
  // a path is at most 4,096 bytes (PATH_MAX): a line's first 8 KiB hold it, but where none could
  let n = readSync(fd, room, 0, Math.min(8192, p.size - start), start);
  let end = room.subarray(0, n).indexOf(0x0a);
  if (end < 0 && n < LONGEST) {
    n = readSync(fd, room, 0, Math.min(LONGEST, p.size - start), start);
    end = room.subarray(0, n).indexOf(0x0a);
  }
  if (end < 0 || room[0] !== 0x66 || room[1] !== 9) return null;
  const a = room.indexOf(9, 2);
  const b = a < 0 ? -1 : room.indexOf(9, a + 1);
  const c = b < 0 ? -1 : room.indexOf(9, b + 1);
  if (!(c > 0 && c < end) || room.toString('latin1', b + 1, c) !== String(i)) return null;
  return room.subarray(c + 1, end);
}

const NEWLINE = Buffer.from('\n');

/** Removes the proof beside the store at `dbPath` (a check found it does not hold). */
export function dropUnchanged(dbPath: string): void {
  rmQuietly(dbPath + UNCHANGED_SUFFIX);
}

/**
 * Writes the proof: a header line (JSON: the format, an id of its own, the digest, the listing key
 * of the answers it was kept with, the walk's listingNames, the roots, how many files and
 * directories), a line per file (`f size mtimeMs position path`, tab-separated, its position in
 * the walk's listing) and per directory (`d dev ino ctimeMs path`), then END.
 * The lines go from the latest mtime or ctime to the earliest: what changed since is most likely
 * what changed last before (a session still being written, a project still gaining sessions), and
 * a check that meets it early stops early. Paths are copied as the listing holds them, as UTF-8,
 * not decoded. False when a directory cannot be trusted, or a path holds a newline.
 */
function writeProof(fd: number, d: Discovery, dirs: string[], keys: { digest: string; listing: string; names: string }, trusted: (st: Stats, dir: string) => boolean): boolean {
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
  const header = (body: string) => Buffer.from(`${JSON.stringify({ format: FORMAT, build: BUILD, id, ...keys, body, roots: d.roots, files: n, dirs: dirs.length })}\n`);
  const id = randomBytes(8).toString('hex');
  const head = header(NO_DIGEST);
  writeAll(fd, head);
  const digest = new BodyDigest();
  const out = new LineWriter(fd, digest);
  for (const i of order) {
    const written =
      i < n
        ? out.line(`f\t${listing.size(i)}\t${listing.mtimeMs(i)}\t${i}\t`, listing.path(i))
        : out.line(`d\t${dev[i - n]}\t${ino[i - n]}\t${ctime[i - n]}\t`, Buffer.from(dirs[i - n]));
    if (!written) return false;
  }
  out.line(END);
  out.flush();
  // the header again, with the body's digest: as long as the one written first
  writeAll(fd, header(digest.finish()), 0);
  return true;
}

/** Writes all of `b` to `fd`, at `position` if given. */
function writeAll(fd: number, b: Uint8Array, position?: number): void {
  for (let at = 0; at < b.length; ) at += writeSync(fd, b, at, b.length - at, position === undefined ? null : position + at);
}

/** The body digest a header holds while its body is written (as long as any digest). */
const NO_DIGEST = '0'.repeat(40);

/**
 * The digest of a proof's body: of each CHUNK of it (counted from the body's start), the SHA-1 of
 * its index (4 bytes, little-endian) and its bytes, all XORed together; so each thread of a check
 * hashes the chunks it takes (chunkDigest), and a line changed anywhere, or one line put in
 * another's place (two lines naming one directory, and so another left unchecked), is no proof.
 */
class BodyDigest {
  private readonly sum = Buffer.alloc(20);
  private hash = chunkHash(0);
  private k = 0;
  private inChunk = 0;

  update(b: Uint8Array): void {
    for (let at = 0; at < b.length; ) {
      const take = Math.min(CHUNK - this.inChunk, b.length - at);
      this.hash.update(b.subarray(at, at + take));
      this.inChunk += take;
      at += take;
      if (this.inChunk === CHUNK) {
        xorInto(this.sum, this.hash.digest());
        this.hash = chunkHash(++this.k);
        this.inChunk = 0;
      }
    }
  }

  finish(): string {
    if (this.inChunk > 0) xorInto(this.sum, this.hash.digest());
    return this.sum.toString('hex');
  }
}

function chunkHash(k: number) {
  const index = Buffer.alloc(4);
  index.writeUInt32LE(k);
  return createHash('sha1').update(index);
}

/** The digest of the chunk `k` of a proof's body (its bytes `bytes`), as BodyDigest folds it in. */
export function chunkDigest(k: number, bytes: Uint8Array): Buffer {
  return chunkHash(k).update(bytes).digest();
}

function xorInto(sum: Buffer, d: Buffer): void {
  for (let j = 0; j < 20; j++) sum[j] ^= d[j];
}

/** Lines into a file, a piece at a time. */
class LineWriter {
  private readonly buf = Buffer.allocUnsafe(PIECE);
  private at = 0;

  constructor(
    private readonly fd: number,
    private readonly digest: BodyDigest,
  ) {}

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
    this.digest.update(this.buf.subarray(0, this.at));
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
  /** listingNames of the walk it was kept after */
  names: string;
  /** the digest of its body (BodyDigest) */
  bodyDigest: string;
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
    const h = JSON.parse(head) as { format?: unknown; build?: unknown; digest?: unknown; listing?: unknown; names?: unknown; body?: unknown; roots?: unknown; dirs?: unknown; files?: unknown };
    const { format, build, digest, listing, names, body, dirs, files } = h ?? {};
    if (format !== FORMAT || build !== BUILD || typeof digest !== 'string' || typeof listing !== 'string' || typeof names !== 'string') return null;
    if (typeof body !== 'string' || !/^[0-9a-f]{40}$/.test(body)) return null;
    if (!Number.isInteger(dirs) || !Number.isInteger(files) || (files as number) < 0 || (dirs as number) < 0) return null;
    // every line takes at least 10 bytes (`d\t0\t0\t0\t/`): a header that names more is damaged, and
    // would have the check's columns (newCheck) sized by it
    if (((files as number) + (dirs as number)) * 10 > size - nl - 1) return null;
    if (!Array.isArray(h.roots) || !h.roots.every((r) => typeof r === 'string')) return null;
    const kept = h.roots as string[];
    if (roots && JSON.stringify(kept) !== JSON.stringify(roots)) return null;
    return { head, digest, listing, names, bodyDigest: body, roots: kept, files: files as number, dirs: dirs as number, body: nl + 1, size };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * A check of a proof of `files` files, shared by the threads that take part in it (the early walk's
 * worker and the main thread): Int32s over a SharedArrayBuffer, which postMessage shares rather
 * than copies, followed in that buffer by the files' sizes and mtimes as the check finds them, by
 * their positions in the walk's listing (checkColumns), and a byte per file once its line is met.
 */
export function newCheck(files: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(COLUMNS + files * COLUMN_BYTES), 0, SLOTS);
}

/** The check's slots: the next piece to take, whether a line did not hold, the files, directories and ENDs met, the files found grown or touched. */
const NEXT = 0;
const FAILED = 1;
const FILES = 2;
const DIRS = 3;
const ENDS = 4;
const CHANGED = 5;
/** the body's digest as the chunks checked fold into it (BodyDigest): five Int32s */
const DIGEST = 6;
const SLOTS = 11;
/** where the columns start in the check's buffer (8-byte aligned, after the slots) */
const COLUMNS = 48;
/** the columns' bytes per file */
const COLUMN_BYTES = 25;

/**
 * A check's files as it found them, by their positions in the walk's listing: each file's size and
 * mtime, where its line starts in the proof, and whether its line was met (1) and found grown or
 * touched (2).
 */
export interface CheckColumns {
  size: Float64Array;
  mtimeMs: Float64Array;
  line: Float64Array;
  met: Uint8Array;
}

/** The columns of the check `check` of a proof of `files` files (newCheck). */
export function checkColumns(check: Int32Array, files: number): CheckColumns {
  const b = check.buffer;
  if (b.byteLength !== COLUMNS + files * COLUMN_BYTES) throw new Error('a check of another proof');
  const at = (k: number) => COLUMNS + 8 * k * files;
  return { size: new Float64Array(b, at(0), files), mtimeMs: new Float64Array(b, at(1), files), line: new Float64Array(b, at(2), files), met: new Uint8Array(b, at(3), files) };
}

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
    fd = openProof(dbPath, p, Buffer.allocUnsafe(p.body));
    const chunks = Math.ceil((p.size - p.body) / CHUNK);
    let buf = Buffer.allocUnsafe(CHUNK + LONGEST);
    const counts = [0, 0, 0, 0];
    const columns = checkColumns(check, p.files);
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
      const d = chunkDigest(k, bytes.subarray(start - from, end - from));
      for (let j = 0; j < 5; j++) Atomics.xor(check, DIGEST + j, d.readInt32LE(4 * j));
      const first = bytes.indexOf(0x0a) + 1;
      // no line starts in this chunk: one that started before goes on through it
      if (first === 0 || first >= end - from) continue;
      const last = bytes.indexOf(0x0a, end - from - 1);
      if (last < 0) throw new Error('a line longer than any proof writes');
      if (!linesHold(bytes, first, last, from, counts, from + last === p.size - 1, columns)) {
        Atomics.store(check, FAILED, 1);
        break;
      }
    }
    Atomics.add(check, FILES, counts[0]);
    Atomics.add(check, DIRS, counts[1]);
    Atomics.add(check, ENDS, counts[2]);
    Atomics.add(check, CHANGED, counts[3]);
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
  return checkOutcome(p, check) === 'held';
}

/**
 * What the check of `p` found, once every thread that took part has returned: 'held', every line
 * held; the files' sizes and mtimes as they are now, when every directory held and every file is
 * still a file but some grew or were touched (a walk would list the same files, in the same order,
 * with those sizes and mtimes: ingest.ts then makes that walk's listing without walking,
 * snapshotDiscovery); null when anything else changed, or the check was cut short.
 */
export function checkOutcome(p: Proof, check: Int32Array): 'held' | CheckColumns | null {
  if (Atomics.load(check, FAILED) !== 0 || Atomics.load(check, FILES) !== p.files || Atomics.load(check, DIRS) !== p.dirs || Atomics.load(check, ENDS) !== 1) return null;
  const body = Buffer.from(p.bodyDigest, 'hex');
  for (let j = 0; j < 5; j++) if (Atomics.load(check, DIGEST + j) !== body.readInt32LE(4 * j)) return null;
  return Atomics.load(check, CHANGED) === 0 ? 'held' : checkColumns(check, p.files);
}

/** The proof `p` checked on this thread alone: checkOutcome. */
export function checkProof(dbPath: string, p: Proof): 'held' | CheckColumns | null {
  let check: Int32Array;
  try {
    check = newCheck(p.files);
  } catch {
    return null; // no memory for its columns: the walk
  }
  checkChunks(dbPath, p, check);
  return checkOutcome(p, check);
}

/** Whether the proof `p` holds, checked on this thread alone: nothing changed. */
export function proofHolds(dbPath: string, p: Proof): boolean {
  return checkProof(dbPath, p) === 'held';
}

/** The decimal digits of `text` from `from` to `to` as a number (no sign, no exponent, no leading zero but 0 itself); −1 for anything else. */
function position(text: string, from: number, to: number): number {
  if (to <= from || to - from > 15 || (text.charCodeAt(from) === 0x30 && to - from > 1)) return -1;
  let n = 0;
  for (let k = from; k < to; k++) {
    const d = text.charCodeAt(k) - 0x30;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * Whether every line of `bytes` from `first` to `last` (whole lines, no newline after the last;
 * `bytes` begins at `from` in the proof) holds, each counted in `counts` (files, directories, ENDs,
 * files grown or touched). `atEnd`: the last line ends the file, where END must be. A file line
 * holds while its path is a file; its size and mtime now go into `columns` at its position, with
 * where its line starts when they are not the line's (it grew or was touched). Paths are passed to
 * the system as their bytes; the rest is read a byte a character.
 */
function linesHold(bytes: Buffer, first: number, last: number, from: number, counts: number[], atEnd: boolean, columns: CheckColumns): boolean {
  const text = bytes.toString('latin1', first, last);
  const files = columns.met.length;
  for (let at = 0; at < text.length; ) {
    let to = text.indexOf('\n', at);
    if (to < 0) to = text.length;
    const kind = text.charCodeAt(at);
    if (kind === 0x66 /* f */ && text.charCodeAt(at + 1) === 9) {
      const a = text.indexOf('\t', at + 2);
      const b = a < 0 ? -1 : text.indexOf('\t', a + 1);
      const c = b < 0 ? -1 : text.indexOf('\t', b + 1);
      if (c < 0 || c >= to) return false;
      const i = position(text, b + 1, c);
      // each position once: a damaged proof must not leave one unmet
      if (i < 0 || i >= files || Atomics.exchange(columns.met, i, 1) !== 0) return false;
      const st = statSync(bytes.subarray(first + c + 1, first + to), { throwIfNoEntry: false });
      if (!st || !st.isFile()) return false;
      columns.size[i] = st.size;
      columns.mtimeMs[i] = st.mtimeMs;
      columns.line[i] = from + first + at;
      if (st.size !== Number(text.slice(at + 2, a)) || st.mtimeMs !== Number(text.slice(a + 1, b))) {
        columns.met[i] = 2;
        counts[3]++;
      }
      counts[0]++;
    } else if (kind === 0x64 /* d */ && text.charCodeAt(at + 1) === 9) {
      const a = text.indexOf('\t', at + 2);
      const b = a < 0 ? -1 : text.indexOf('\t', a + 1);
      const c = b < 0 ? -1 : text.indexOf('\t', b + 1);
      if (c < 0 || c >= to) return false;
      const st = statSync(bytes.subarray(first + c + 1, first + to), { throwIfNoEntry: false });
      if (!st || !st.isDirectory() || st.dev !== Number(text.slice(at + 2, a)) || st.ino !== Number(text.slice(a + 1, b)) || st.ctimeMs !== Number(text.slice(b + 1, c))) return false;
      counts[1]++;
    } else if (text.slice(at, to) === END && to === text.length && atEnd) counts[2]++;
    else return false;
    at = to + 1;
  }
  return true;
}
