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
 * join and post (Warm in BENCHMARKS.md).
 */
import { createHash } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { type Discovery, type FileSink, type FoundFile, type WalkProblem, walkRoots } from './discover.js';
import { startModuleWorker } from './module-worker.js';

/**
 * The commands that read logs (an `ingest`) from the default roots when given no paths, by their
 * first word. Not `start`: it names the roots it picked as paths (start.ts).
 */
const READS_LOGS = new Set(['summary', 'sessions', 'blocks', 'anatomy', 'whatif', 'report', 'query', 'crosstab', 'export']);

/** What of the environment decides the default roots (discover.ts `defaultRoots`). */
const ROOT_ENV = ['CLAUDE_CONFIG_DIR', 'HOME', 'XDG_CONFIG_HOME'] as const;

const KINDS: FoundFile['kind'][] = ['main', 'subagent', 'meta'];

export interface EncodedDiscovery {
  roots: string[];
  problems: WalkProblem[];
  defaults: boolean;
  /** per file, the UTF-8 of path, root, projectDir, agentId, sessionId ("\u0001" for null), every field NUL-terminated but the last (a path cannot hold NUL) */
  text: Uint8Array;
  /** where each file's fields start in the text */
  start: Uint32Array;
  kind: Uint8Array;
  size: Float64Array;
  mtimeMs: Float64Array;
  /** SHA-1 of the columns above: what the listing key hashes for the files (listingDigest) */
  digest: string;
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
  for (const f of d.files) w.add(f.path, f.root, f.kind, f.size, f.mtimeMs, f.agentId, f.sessionId, f.projectDir);
  return w.finish(d);
}

/**
 * `discover([], env)` as columns, each file written as the walk finds it: no object is made for a
 * file (the walk of 10 GB, 234,780 files, held ~130 MB of them). Within a root the walk gives the
 * files in path order; when it does not (several roots, a link to a directory), the listing is
 * decoded, sorted and written again, as `discover()` sorts it.
 */
export function walkEncoded(env: NodeJS.ProcessEnv): EncodedDiscovery {
  // The text's first room is 256 MB (1 GB of logs: 6.9 MB; 10 GB, 234,780 files: 69 MB): memory
  // is taken only as it is written. Growing by copies from 256 KB on cost 46 ms of a 0.6 s walk,
  // mostly in faulting pages in twice; from 32 MB, 10 GB's text was copied at 32 and 64 MB and
  // the old and new copies held at once: warm 10 GB runs peaked at 327 – 336 MiB, against 278 –
  // 279 MiB from 256 MB (2 interleaved runs each; 1 GB unchanged, 6 runs each).
  const w = listingWriter(1024, 256 * 2 ** 20);
  let last = '';
  let sorted = true;
  const found = walkRoots([], env, (path, root, kind, size, mtimeMs, agentId, sessionId, projectDir) => {
    if (w.count > 0 && !(last < path)) sorted = false;
    last = path;
    w.add(path, root, kind, size, mtimeMs, agentId, sessionId, projectDir);
  });
  const e = w.finish(found);
  if (sorted) return e;
  const files = decodeDiscovery(e).files;
  files.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  return encodeDiscovery({ ...found, files });
}

interface ListingWriter {
  readonly count: number;
  add: FileSink;
  finish(d: Omit<Discovery, 'files'>): EncodedDiscovery;
}

/**
 * Writes files into an EncodedDiscovery's columns, growing them as needed (room for `files` files
 * and `bytes` of text at first). The text is written field by field into one buffer; its bytes
 * are the UTF-8 of the five fields of every file joined (NUL between fields and files), so the
 * digest is the one that joined string gave.
 */
function listingWriter(files: number, bytes: number): ListingWriter {
  let room = Math.max(files, 16);
  let start = new Uint32Array(room);
  let kind = new Uint8Array(room);
  let size = new Float64Array(room);
  let mtimeMs = new Float64Array(room);
  let buf = Buffer.allocUnsafeSlow(Math.max(bytes, 64));
  let at = 0;
  let n = 0;
  return {
    get count() {
      return n;
    },
    add(path, root, k, fileSize, mtime, agentId, sessionId, projectDir) {
      // A character is at most 3 bytes of UTF-8 (a surrogate pair, 2 characters, is 4); only when
      // that might not fit are the bytes counted (growing a buffer sized for an ASCII listing for
      // nothing at its last files cost ~25 ms).
      const most = 3 * fieldChars(path, root, projectDir, agentId, sessionId);
      if (at + most > buf.length && at + fieldBytes(path, root, projectDir, agentId, sessionId) > buf.length) {
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
      }
      if (n > 0) buf[at++] = 0;
      start[n] = at;
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
      n++;
    },
    finish(d) {
      const text = new Uint8Array(buf.buffer, buf.byteOffset, at);
      // the number columns as long as the listing (a few MB at most), each its own buffer
      const cols = { start: start.slice(0, n), kind: kind.slice(0, n), size: size.slice(0, n), mtimeMs: mtimeMs.slice(0, n) };
      const digest = createHash('sha1').update(text).update(cols.kind).update(new Uint8Array(cols.size.buffer)).update(new Uint8Array(cols.mtimeMs.buffer)).digest('hex');
      return { roots: d.roots, problems: d.problems, defaults: d.defaults, text, ...cols, digest };
    },
  };
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

/** The buffers of an encoded discovery, to transfer rather than copy with postMessage. */
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
  let digest = decoded.get(d)?.digest ?? digests.get(d);
  if (digest === undefined) digests.set(d, (digest = encodeDiscovery(d).digest));
  return digest;
}

/** The digests of discoveries walked on this thread (an early walk's come with its columns): ingestOrAnswer and ingest both ask. */
const digests = new WeakMap<Discovery, string>();

/** How many files the discovery found, without decoding an early walk's files. */
export function fileCount(d: Discovery): number {
  return decoded.get(d)?.kind.length ?? d.files.length;
}

/**
 * The found files as a plan reads them: every file's path, kind (kindCode), size and mtime in
 * walk order, and whole objects only for the files asked for. Over an early walk's columns no
 * object is made for an unchanged file, and the objects asked for hold strings of their own
 * rather than slices of one decoded text, which would keep all of it alive (BENCHMARKS.md, Memory).
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
}

export function fileListing(d: Discovery): FileListing {
  const e = decoded.get(d);
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
  };
  decoded.set(d, e);
  return d;
}

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
}

let early: Early | undefined;

function rootEnv(env: NodeJS.ProcessEnv): string[] {
  return ROOT_ENV.map((k) => env[k] ?? NULL);
}

/** Starts the walk of the default roots on a worker thread when `wantsEarlyWalk(args)`. */
export function walkEarly(args: string[], env: NodeJS.ProcessEnv = process.env): void {
  if (early || !wantsEarlyWalk(args)) return;
  let worker: Worker;
  try {
    worker = startModuleWorker('walk-worker', { workerData: { env: Object.fromEntries(ROOT_ENV.map((k) => [k, env[k]])) } });
  } catch {
    return; // no worker: ingest walks on the main thread as it would anyway
  }
  // a command that never takes the walk must not wait for it to exit
  worker.unref();
  const result = new Promise<Discovery | null>((resolve) => {
    worker.once('message', (m: EncodedDiscovery | { error: string }) => resolve('error' in m ? null : decodeDiscovery(m)));
    worker.once('error', () => resolve(null));
    worker.once('exit', () => resolve(null));
  });
  early = { env: rootEnv(env), result };
}

/**
 * The early walk's discovery, when it walked what `discover(paths, env)` would: no explicit paths,
 * the same root-deciding environment. Taken once; null (at once) when there is none to take, and a
 * promise of null if the walk failed.
 */
export function takeEarlyWalk(paths: string[] | undefined, env: NodeJS.ProcessEnv): Promise<Discovery | null> | null {
  const e = early;
  early = undefined;
  if (!e || (paths && paths.length > 0)) return null;
  const want = rootEnv(env);
  if (want.some((v, i) => v !== e.env[i])) return null;
  return e.result;
}

