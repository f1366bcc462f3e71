/**
 * Proof that the logs are as a walk found them, without walking them again: a file beside the store
 * holding every directory that walk listed (its device, inode and ctime) and every file it found
 * (its size and mtime), under the walk's listing digest.
 *
 * A warm run's walk is most of its time: a readdir of every directory (five system calls each)
 * and a stat of every file, on two threads, then the listing written, merged and hashed. Whether
 * anything changed takes less: a directory's entries cannot change without its ctime changing
 * (no system call sets a ctime), and a file's contents not without its size or mtime, which the
 * listing holds already. So a stat of every directory and file, compared with this file, tells
 * that a walk would list what it listed then; then its digest is the walk's (checkUnchanged).
 *
 * A directory is trusted only if its ctime is older than the walk it is recorded after, by a
 * margin (keepUnchanged): one changed while or after it was listed, within the clock's or the
 * file system's granularity, would otherwise keep a ctime that no later change moves past what is
 * recorded ("racy" entries, as git calls them). Such a walk keeps no file; the next one does.
 *
 * Example (1 GB of logs, 11,180 directories and 23,478 files): a warm run checks them in ~80 ms on
 * one thread, where the walk took ~135 ms on two (BENCHMARKS-log.md, Warm, session 39).
 */
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { answersKept } from '../store/answers.js';
import { type Discovery, defaultRoots } from './discover.js';
import { fileListing } from './early-walk.js';

/** The file's name: the store's, then this. */
export const UNCHANGED_SUFFIX = '.unchanged';

const FORMAT = 1;

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
  const text = d.dirs && d.problems.length === 0 ? proofBytes(d, d.dirs, digest, trustBefore) : null;
  try {
    if (text === null) {
      rmSync(file, { force: true });
      return false;
    }
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, text);
      renameSync(tmp, file);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * The proof's bytes: a header line (JSON: the format, the digest, the roots, the counts of files
 * and directories, and the body's bytes), then a line per file (`size mtimeMs path`,
 * tab-separated), then per directory (`dev ino ctimeMs path`): the files first, as a grown file,
 * which is what most often changed, is then met soonest. The paths are copied as the listing holds
 * them, as UTF-8, not decoded. Null when a directory cannot be trusted, or a path holds a newline.
 */
function proofBytes(d: Discovery, dirs: string[], digest: string, trustBefore: number): Buffer | null {
  const listing = fileListing(d);
  const n = listing.count;
  // a line's numbers and separators take at most 3 × 24 bytes
  let room = 0;
  for (let i = 0; i < n; i++) room += listing.path(i).length + 72;
  for (const dir of dirs) room += Buffer.byteLength(dir) + 72;
  const body = Buffer.allocUnsafe(room);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const path = listing.path(i);
    if (path.includes(0x0a)) return null;
    at += body.write(`${listing.size(i)}\t${listing.mtimeMs(i)}\t`, at, 'latin1');
    body.set(path, at);
    at += path.length;
    body[at++] = 0x0a;
  }
  for (const dir of dirs) {
    const st = statSync(dir, { throwIfNoEntry: false });
    if (!st || !st.isDirectory() || !(st.ctimeMs < trustBefore) || dir.includes('\n')) return null;
    at += body.write(`${st.dev}\t${st.ino}\t${st.ctimeMs}\t`, at, 'latin1');
    at += body.write(dir, at, 'utf8');
    body[at++] = 0x0a;
  }
  // no newline after the last line
  if (at > 0) at--;
  const head = { format: FORMAT, digest, roots: d.roots, files: n, dirs: dirs.length, bytes: at };
  return Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`), body.subarray(0, at)]);
}

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
 * is none, it is for other roots, or it is damaged (its body's bytes and lines are counted: a
 * proof cut short is none).
 */
export function readUnchanged(dbPath: string, roots?: string[]): Proof | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(dbPath + UNCHANGED_SUFFIX);
  } catch {
    return null;
  }
  const end = bytes.indexOf(0x0a);
  if (end < 0) return null;
  let head: { format?: unknown; digest?: unknown; roots?: unknown; dirs?: unknown; files?: unknown; bytes?: unknown };
  try {
    head = JSON.parse(bytes.toString('utf8', 0, end)) as typeof head;
  } catch {
    return null;
  }
  const { format, digest, dirs, files } = head ?? {};
  if (format !== FORMAT || typeof digest !== 'string' || typeof dirs !== 'number' || typeof files !== 'number' || head.bytes !== bytes.length - end - 1) return null;
  if (!Array.isArray(head.roots) || !head.roots.every((r) => typeof r === 'string')) return null;
  const kept = head.roots as string[];
  if (roots && JSON.stringify(kept) !== JSON.stringify(roots)) return null;
  return { digest, roots: kept, files, holds: () => holds(bytes.toString('utf8', end + 1), 0, files, dirs) };
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
/** Whether every file (size, mtime) and directory (device, inode, ctime) of the proof's body, from `at`, is as it says. */
function holds(text: string, from: number, files: number, dirs: number): boolean {
  let at = from;
  for (let i = 0; i < files + dirs; i++) {
    let to = text.indexOf('\n', at);
    if (to < 0) to = text.length;
    const a = text.indexOf('\t', at);
    const b = a < 0 ? -1 : text.indexOf('\t', a + 1);
    if (b < 0 || b >= to) return false;
    if (i >= files) {
      const c = text.indexOf('\t', b + 1);
      if (c < 0 || c >= to) return false;
      const st = statSync(text.slice(c + 1, to), { throwIfNoEntry: false });
      if (!st || !st.isDirectory() || st.dev !== Number(text.slice(at, a)) || st.ino !== Number(text.slice(a + 1, b)) || st.ctimeMs !== Number(text.slice(b + 1, c))) return false;
    } else {
      const st = statSync(text.slice(b + 1, to), { throwIfNoEntry: false });
      if (!st || !st.isFile() || st.size !== Number(text.slice(at, a)) || st.mtimeMs !== Number(text.slice(a + 1, b))) return false;
    }
    at = to + 1;
  }
  return at >= text.length;
}
