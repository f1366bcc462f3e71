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
import type { Discovery, FoundFile, WalkProblem } from './discover.js';
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
 * The discovery as columns. The text is written into one buffer, field by field, in one plain
 * loop: joining 117,000 strings into one took 50 – 90 ms on the 1 GB corpus, writing them through
 * a small class 75 ms, and this loop ~45 ms, on the walk's thread (the loop runs once, mostly
 * before V8 optimises it). Its bytes are the UTF-8 of that join, so the digest is the one the
 * joined string gave.
 */
export function encodeDiscovery(d: Discovery): EncodedDiscovery {
  const files = d.files;
  const n = files.length;
  const start = new Uint32Array(n);
  const kind = new Uint8Array(n);
  const size = new Float64Array(n);
  const mtimeMs = new Float64Array(n);
  let chars = 0;
  for (const f of files) chars += fileChars(f);
  // ASCII text is one byte a character; other text makes it grow
  let buf = Buffer.allocUnsafeSlow(Math.max(chars, 64));
  let at = 0;
  for (let i = 0; i < n; i++) {
    const f = files[i];
    // A character is at most 3 bytes of UTF-8 (a surrogate pair, 2 characters, is 4); only when
    // that might not fit are the bytes counted (growing the buffer for nothing at the last files
    // of an ASCII listing cost ~25 ms).
    if (at + 3 * fileChars(f) > buf.length && at + fileBytes(f) > buf.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(2 * buf.length, at + 3 * fileChars(f)));
      buf.copy(bigger, 0, 0, at);
      buf = bigger;
    }
    if (i > 0) buf[at++] = 0;
    start[i] = at;
    at += buf.write(f.path, at, 'utf8');
    buf[at++] = 0;
    at += buf.write(f.root, at, 'utf8');
    buf[at++] = 0;
    at += buf.write(f.projectDir, at, 'utf8');
    buf[at++] = 0;
    at += buf.write(f.agentId ?? NULL, at, 'utf8');
    buf[at++] = 0;
    at += buf.write(f.sessionId ?? NULL, at, 'utf8');
    kind[i] = kindCode(f.kind);
    size[i] = f.size;
    mtimeMs[i] = f.mtimeMs;
  }
  const text = new Uint8Array(buf.buffer, buf.byteOffset, at);
  const digest = createHash('sha1').update(text).update(kind).update(new Uint8Array(size.buffer)).update(new Uint8Array(mtimeMs.buffer)).digest('hex');
  return { roots: d.roots, problems: d.problems, defaults: d.defaults, text, start, kind, size, mtimeMs, digest };
}

/** A file kind as a number: its place in KINDS (main 0, subagent 1, meta 2). */
export function kindCode(kind: FoundFile['kind']): number {
  return kind === 'main' ? 0 : kind === 'subagent' ? 1 : 2;
}

/** A file's characters in the encoded text, its five fields' separators included. */
function fileChars(f: FoundFile): number {
  return f.path.length + f.root.length + f.projectDir.length + (f.agentId?.length ?? 1) + (f.sessionId?.length ?? 1) + 5;
}

function fileBytes(f: FoundFile): number {
  return Buffer.byteLength(f.path) + Buffer.byteLength(f.root) + Buffer.byteLength(f.projectDir) + Buffer.byteLength(f.agentId ?? NULL) + Buffer.byteLength(f.sessionId ?? NULL) + 5;
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
  return decoded.get(d)?.digest ?? encodeDiscovery(d).digest;
}

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
  size(i: number): number;
}

export function fileListing(d: Discovery): FileListing {
  const e = decoded.get(d);
  if (!e) {
    const files = d.files;
    return {
      count: files.length,
      each: (fn) => files.forEach((f, i) => fn(f.path, kindCode(f.kind), f.size, f.mtimeMs, i)),
      file: (i) => files[i],
      size: (i) => files[i].size,
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
    size: (i) => e.size[i],
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

