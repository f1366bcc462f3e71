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
 * The file is written and read in pieces, its paths front-coded, so that neither grows the
 * process with the logs: on 10 GB of logs it holds 235,000 files and 112,000 directories.
 *
 * Example (1 GB of logs, 23,478 files in 11,181 directories): the early walk's worker checks
 * them in ~80 ms, where the walk took ~135 ms on two threads (BENCHMARKS-log.md, Warm, session 39).
 */
import { closeSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { answersKept } from '../store/answers.js';
import { type Discovery, defaultRoots } from './discover.js';
import { fileListing } from './early-walk.js';

/** The file's name: the store's, then this. */
export const UNCHANGED_SUFFIX = '.unchanged';

const FORMAT = 3;

/** The last line: a proof without it was cut short. */
const END = 'end';

/** How much of the file is written or read at a time. */
const PIECE = 1 << 20;

/**
 * How much older than the process a directory's ctime must be to be trusted: more than a coarse
 * kernel clock's tick, or a file system's timestamp granularity (2 s on FAT).
 */
export const TRUST_MARGIN_MS = 3000;

/**
 * Keeps the proof for the walk `d` (its listing digest `digest`) beside the store at `dbPath`,
 * when it can be trusted: `d` knows every directory it listed, met no problem, and every directory's
 * ctime is before `trustBefore` (by default the process's start less TRUST_MARGIN_MS, the walk
 * having started after it). Otherwise removes a proof kept before, which no longer holds. Returns
 * whether it kept one. It only saves time: a failure to write is no error.
 */
export function keepUnchanged(dbPath: string, d: Discovery, digest: string, trustBefore = performance.timeOrigin - TRUST_MARGIN_MS): boolean {
  const file = dbPath + UNCHANGED_SUFFIX;
  const tmp = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  let kept = false;
  try {
    if (d.dirs && d.problems.length === 0) {
      fd = openSync(tmp, 'w');
      kept = writeProof(fd, d, d.dirs, digest, trustBefore);
      closeSync(fd);
      fd = undefined;
      if (kept) renameSync(tmp, file);
    }
  } catch {
    kept = false;
  }
  try {
    if (fd !== undefined) closeSync(fd);
    if (!kept) rmSync(file, { force: true });
    rmSync(tmp, { force: true });
  } catch {
    // nothing more to do
  }
  return kept;
}

/**
 * Writes the proof: a header line (JSON: the format, the digest, the roots, how many files and
 * directories), a line per file (`size mtimeMs path`, tab-separated), then per directory (`dev
 * ino ctimeMs path`), then END. The files come first: a grown file, what most often changed, is
 * then met soonest. Paths are copied as the listing holds them, as UTF-8, not decoded. False when
 * a directory cannot be trusted, or a path holds a newline.
 */
function writeProof(fd: number, d: Discovery, dirs: string[], digest: string, trustBefore: number): boolean {
  const listing = fileListing(d);
  const out = new LineWriter(fd);
  out.line(JSON.stringify({ format: FORMAT, digest, roots: d.roots, files: listing.count, dirs: dirs.length }));
  for (let i = 0; i < listing.count; i++) {
    if (!out.line(`${listing.size(i)}\t${listing.mtimeMs(i)}\t`, listing.path(i))) return false;
  }
  for (const dir of dirs) {
    const st = statSync(dir, { throwIfNoEntry: false });
    if (!st || !st.isDirectory() || !(st.ctimeMs < trustBefore)) return false;
    if (!out.line(`${st.dev}\t${st.ino}\t${st.ctimeMs}\t`, Buffer.from(dir))) return false;
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

  /** A line: `text`, then `path` as it is; false if the path holds a newline. */
  line(text: string, path: Uint8Array = EMPTY): boolean {
    if (path.includes(0x0a)) return false;
    const bytes = Buffer.byteLength(text) + path.length + 1;
    if (this.at + bytes > this.buf.length) this.flush();
    if (bytes > this.buf.length) throw new Error('a line longer than a piece');
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

/** A proof read (readUnchanged): the digest, roots and file count of the walk it was kept after. */
export interface Proof {
  digest: string;
  roots: string[];
  files: number;
  /** whether the logs are still as that walk found them: a stat of every file and directory */
  holds(): boolean;
}

/**
 * The proof kept beside the store at `dbPath`, for a walk of `roots` when given; null when there
 * is none, or it is for other roots. A damaged or cut proof does not hold.
 */
export function readUnchanged(dbPath: string, roots?: string[]): Proof | null {
  const header = proofLines(dbPath);
  if (!header) return null;
  const { lines, head: first } = header;
  lines.close();
  try {
    const head = JSON.parse(first) as { format?: unknown; digest?: unknown; roots?: unknown; dirs?: unknown; files?: unknown };
    const { format, digest, dirs, files } = head ?? {};
    if (format !== FORMAT || typeof digest !== 'string' || !Number.isInteger(dirs) || !Number.isInteger(files)) return null;
    if (!Array.isArray(head.roots) || !head.roots.every((r) => typeof r === 'string')) return null;
    const kept = head.roots as string[];
    if (roots && JSON.stringify(kept) !== JSON.stringify(roots)) return null;
    return {
      digest,
      roots: kept,
      files: files as number,
      holds: () => {
        // read again from its start: the same proof, or none
        const again = proofLines(dbPath);
        if (!again) return false;
        try {
          return again.head === first && holds(again.lines, files as number, dirs as number);
        } finally {
          again.lines.close();
        }
      },
    };
  } catch {
    return null;
  }
}

/** The proof's lines, its header line read. */
function proofLines(dbPath: string): { lines: LineReader; head: string } | null {
  let lines: LineReader;
  try {
    lines = new LineReader(openSync(dbPath + UNCHANGED_SUFFIX, 'r'));
  } catch {
    return null;
  }
  try {
    const head = lines.first();
    if (head !== null) return { lines, head };
  } catch {
    // unreadable: none
  }
  lines.close();
  return null;
}

/**
 * What the early walk's worker does first when answers are kept beside the store at `dbPath`
 * (answersKept) and a proof for the default roots of `env` beside them: checks the logs against
 * it. Null when there is nothing to check.
 */
export function checkEarly(dbPath: string, env: NodeJS.ProcessEnv): { digest: string; roots: string[]; files: number; holds: boolean } | null {
  if (!answersKept(dbPath)) return null;
  const proof = readUnchanged(dbPath, defaultRoots(env));
  return proof && { digest: proof.digest, roots: proof.roots, files: proof.files, holds: proof.holds() };
}

/** Whether every file (size, mtime) and directory (device, inode, ctime) the proof's lines name is as they say. */
function holds(lines: LineReader, files: number, dirs: number): boolean {
  let i = 0;
  let ended = false;
  for (let text = lines.piece(); text !== null; text = lines.piece()) {
    for (let at = 0; at < text.length; ) {
      let to = text.indexOf('\n', at);
      if (to < 0) to = text.length;
      if (ended) return false;
      if (i === files + dirs) {
        if (text.slice(at, to) !== END) return false;
        ended = true;
      } else if (!lineHolds(text, at, to, i < files)) return false;
      i++;
      at = to + 1;
    }
  }
  return ended;
}

/** Whether the file (`file`) or directory of the line text[at, to) is as it says. */
function lineHolds(text: string, at: number, to: number, file: boolean): boolean {
  const a = text.indexOf('\t', at);
  const b = a < 0 ? -1 : text.indexOf('\t', a + 1);
  if (b < 0 || b >= to) return false;
  if (file) {
    const st = statSync(text.slice(b + 1, to), { throwIfNoEntry: false });
    return st !== undefined && st.isFile() && st.size === Number(text.slice(at, a)) && st.mtimeMs === Number(text.slice(a + 1, b));
  }
  const c = text.indexOf('\t', b + 1);
  if (c < 0 || c >= to) return false;
  const st = statSync(text.slice(c + 1, to), { throwIfNoEntry: false });
  return st !== undefined && st.isDirectory() && st.dev === Number(text.slice(at, a)) && st.ino === Number(text.slice(a + 1, b)) && st.ctimeMs === Number(text.slice(b + 1, c));
}

/** A file's lines, read a piece at a time: each piece decoded whole lines at a time. */
class LineReader {
  private buf = Buffer.allocUnsafe(PIECE);
  private to = 0;
  private eof = false;

  constructor(private readonly fd: number) {}

  /** The first line, alone (the header); null if there is none. */
  first(): string | null {
    this.fill();
    const nl = this.buf.subarray(0, this.to).indexOf(0x0a);
    if (nl < 0) return null;
    const line = this.buf.toString('utf8', 0, nl);
    this.take(nl + 1);
    return line;
  }

  /** The next whole lines, without the newline after the last; null at the end. */
  piece(): string | null {
    this.fill();
    if (this.to === 0) return null;
    let end = this.eof ? this.to : this.buf.lastIndexOf(0x0a, this.to - 1);
    // a line longer than the buffer: the buffer grows until it holds it
    while (end < 0) {
      this.buf = Buffer.concat([this.buf.subarray(0, this.to), Buffer.allocUnsafe(this.buf.length)]);
      this.fill();
      end = this.eof ? this.to : this.buf.lastIndexOf(0x0a, this.to - 1);
    }
    const text = this.buf.toString('utf8', 0, end);
    this.take(Math.min(end + 1, this.to));
    return text;
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // closed already
    }
  }

  /** Reads until the buffer is full or the file ends. */
  private fill(): void {
    while (!this.eof && this.to < this.buf.length) {
      const n = readSync(this.fd, this.buf, this.to, this.buf.length - this.to, null);
      if (n === 0) this.eof = true;
      this.to += n;
    }
  }

  /** Drops the first `n` bytes read. */
  private take(n: number): void {
    this.buf.copy(this.buf, 0, n, this.to);
    this.to -= n;
  }
}
