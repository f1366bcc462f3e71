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
  kind: Uint8Array;
  size: Float64Array;
  mtimeMs: Float64Array;
  /** SHA-1 of the columns above: what the listing key hashes for the files (listingDigest) */
  digest: string;
}

const NULL = '\u0001';
const FIELDS = 5;

/**
 * The discovery as columns. The text is written into one buffer, field by field: joining 117,000
 * strings into one took 50 – 90 ms on the 1 GB corpus, writing them 15 – 40 ms. Its bytes are the
 * UTF-8 of that join, so the digest is the one the joined string gave.
 */
export function encodeDiscovery(d: Discovery): EncodedDiscovery {
  const n = d.files.length;
  const kind = new Uint8Array(n);
  const size = new Float64Array(n);
  const mtimeMs = new Float64Array(n);
  const text = new TextBuffer(d.files.reduce((s, f) => s + f.path.length + f.root.length + f.projectDir.length + 48, 0));
  d.files.forEach((f, i) => {
    if (i > 0) text.nul();
    text.field(f.path);
    text.field(f.root);
    text.field(f.projectDir);
    text.field(f.agentId ?? NULL);
    text.write(f.sessionId ?? NULL);
    kind[i] = KINDS.indexOf(f.kind);
    size[i] = f.size;
    mtimeMs[i] = f.mtimeMs;
  });
  const bytes = text.bytes();
  const digest = createHash('sha1').update(bytes).update(kind).update(new Uint8Array(size.buffer)).update(new Uint8Array(mtimeMs.buffer)).digest('hex');
  return { roots: d.roots, problems: d.problems, defaults: d.defaults, text: bytes, kind, size, mtimeMs, digest };
}

/** The buffers of an encoded discovery, to transfer rather than copy with postMessage. */
export function transferList(e: EncodedDiscovery): ArrayBuffer[] {
  return [e.text.buffer, e.kind.buffer, e.size.buffer, e.mtimeMs.buffer] as ArrayBuffer[];
}

/** UTF-8 text written at the end of a buffer that grows when a string may not fit. */
class TextBuffer {
  private buf: Buffer;
  private at = 0;

  /** `capacity`: the bytes expected (ASCII text fills one byte a character) */
  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafeSlow(Math.max(capacity, 64));
  }

  write(s: string): void {
    // a character is at most 3 bytes of UTF-8 (a surrogate pair, 2 characters, is 4)
    if (this.at + 3 * s.length > this.buf.length) this.fit(Buffer.byteLength(s));
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  field(s: string): void {
    this.write(s);
    this.nul();
  }

  nul(): void {
    if (this.at === this.buf.length) this.fit(1);
    this.buf[this.at++] = 0;
  }

  /** What was written, as a view of the whole buffer (for transferring it without a copy). */
  bytes(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.at);
  }

  private fit(more: number): void {
    if (this.at + more <= this.buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(2 * this.buf.length, this.at + more));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }
}

/** What a decoded discovery already knows without decoding its files. */
const decoded = new WeakMap<Discovery, { digest: string; count: number }>();

/**
 * A digest of every found file's path, kind, size and mtime (and what the walk derives from its
 * path): equal for equal listings. The early walk's comes with it, taken on the walk's thread.
 */
export function listingDigest(d: Discovery): string {
  return decoded.get(d)?.digest ?? encodeDiscovery(d).digest;
}

/** How many files the discovery found, without decoding an early walk's files. */
export function fileCount(d: Discovery): number {
  return decoded.get(d)?.count ?? d.files.length;
}

/**
 * The discovery an EncodedDiscovery holds. Its files are decoded when first asked for: a warm run
 * needs only listingDigest and fileCount (23,000 file objects are ~25 ms).
 */
export function decodeDiscovery(e: EncodedDiscovery): Discovery {
  let files: FoundFile[] | undefined;
  const d: Discovery = {
    roots: e.roots,
    get files() {
      return (files ??= decodeFiles(e));
    },
    problems: e.problems,
    defaults: e.defaults,
  };
  decoded.set(d, { digest: e.digest, count: e.kind.length });
  return d;
}

function decodeFiles(e: EncodedDiscovery): FoundFile[] {
  const parts = e.kind.length === 0 ? [] : Buffer.from(e.text.buffer, e.text.byteOffset, e.text.byteLength).toString('utf8').split('\0');
  const files: FoundFile[] = new Array(e.kind.length);
  for (let i = 0; i < files.length; i++) {
    const agentId = parts[i * FIELDS + 3];
    const sessionId = parts[i * FIELDS + 4];
    files[i] = {
      path: parts[i * FIELDS],
      root: parts[i * FIELDS + 1],
      kind: KINDS[e.kind[i]],
      size: e.size[i],
      mtimeMs: e.mtimeMs[i],
      agentId: agentId === NULL ? null : agentId,
      sessionId: sessionId === NULL ? null : sessionId,
      projectDir: parts[i * FIELDS + 2],
    };
  }
  return files;
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
 * the same root-deciding environment. Taken once; null when there is none to take or it failed.
 */
export async function takeEarlyWalk(paths: string[] | undefined, env: NodeJS.ProcessEnv): Promise<Discovery | null> {
  const e = early;
  early = undefined;
  if (!e || (paths && paths.length > 0)) return null;
  const want = rootEnv(env);
  if (want.some((v, i) => v !== e.env[i])) return null;
  return e.result;
}

