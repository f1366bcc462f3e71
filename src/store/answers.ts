/**
 * A warm run's answers, kept in a file beside the store (`<store>.answers`), so that a run over
 * logs that have not changed since answers without loading DuckDB or opening the store.
 *
 * What a warm run does besides walking the logs is open the store, read its listing key and its
 * remembered results (Store.readAhead), and answer from those. Loading DuckDB and opening the
 * store took ~55 ms of the main thread's time while the walk ran on the other core, and slowed the
 * walk itself (BENCHMARKS.md, Warm, session 29). The answers file holds the same: the listing key
 * the store is at and every remembered result, written by a warm run when it closes the store.
 *
 * It holds only for the store it was written beside, as that store was when it closed: the file
 * carries the store's identity (its size, modification time and inode, a digest of its headers,
 * which every checkpoint rewrites, and the same of its write-ahead log, or that there was none).
 * Any write to the store since (by cachelens or anything else) changes that identity, and the file
 * is then ignored; an ingest that changes the store also deletes it. A run answers from it only
 * when its walk's listing key is the file's: nothing was added, grown or removed since.
 *
 * The file: one line of JSON (format, schema version, store identity, listing key, and each
 * result's key and length), then the results' JSON texts one after another.
 * Example: {"format":1,"schema":11,"store":"…","listing":"3f…","results":[["query:quality:[]",212]]}\n{"files":…}
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { SCHEMA_VERSION } from './schema.js';
import type { Row, Store } from './store.js';

const ANSWERS_SUFFIX = '.answers';
const FORMAT = 1;

/** DuckDB's main file header and its two database headers, one of which every checkpoint rewrites. */
const HEADER_BYTES = 3 * 4096;

export interface Answers {
  /** the listing key the store was at */
  listing: string;
  /** the remembered results, by key, as JSON texts */
  results: Map<string, string>;
}

/**
 * The answers kept beside the store at `path`, if they hold for the store as it is now; null when
 * there are none, they cannot be read, or the store has changed since they were written.
 */
export function readAnswers(path: string): Answers | null {
  try {
    const text = readFileSync(path + ANSWERS_SUFFIX, 'utf8');
    const end = text.indexOf('\n');
    if (end < 0) return null;
    const head = JSON.parse(text.slice(0, end)) as { format?: unknown; schema?: unknown; store?: unknown; listing?: unknown; results?: unknown };
    if (head.format !== FORMAT || head.schema !== SCHEMA_VERSION || typeof head.listing !== 'string' || !Array.isArray(head.results)) return null;
    if (head.store !== storeIdentity(path)) return null;
    const results = new Map<string, string>();
    let at = end + 1;
    for (const r of head.results as unknown[]) {
      if (!Array.isArray(r) || typeof r[0] !== 'string' || !Number.isInteger(r[1]) || r[1] < 0) return null;
      results.set(r[0], text.slice(at, at + r[1]));
      at += r[1];
    }
    return at === text.length ? { listing: head.listing, results } : null;
  } catch {
    return null;
  }
}

/**
 * Writes the answers for the store at `path`, which must be closed (its identity is read now).
 * Not written when it cannot be: the answers only save time.
 */
export function writeAnswers(path: string, listing: string, results: ReadonlyMap<string, string>): void {
  const file = path + ANSWERS_SUFFIX;
  try {
    const store = storeIdentity(path);
    if (store === null) return;
    const values = [...results];
    const head = JSON.stringify({ format: FORMAT, schema: SCHEMA_VERSION, store, listing, results: values.map(([k, v]) => [k, v.length]) });
    writeFileSync(file + '.tmp', [head, '\n', ...values.map(([, v]) => v)].join(''));
    renameSync(file + '.tmp', file);
  } catch {
    // e.g. a full disk; answers left from before do not hold for the store as it is now anyway
  }
}

/**
 * Deletes the answers beside the store at `path` (its contents are about to change). One that
 * cannot be deleted is left: once the store changed, its identity no longer holds.
 */
export function dropAnswers(path: string): void {
  try {
    rmSync(path + ANSWERS_SUFFIX, { force: true });
  } catch {
    // e.g. a directory this process may not write to: the store cannot be written either
  }
}

/**
 * What tells the store at `path` from itself after any write: size, modification time and inode of
 * the file and of its write-ahead log, and a digest of the file's headers. Null if it is missing.
 */
function storeIdentity(path: string): string | null {
  const st = statOrNull(path);
  if (!st) return null;
  const wal = statOrNull(path + '.wal');
  const header = Buffer.alloc(HEADER_BYTES);
  const fd = openSync(path, 'r');
  let n: number;
  try {
    n = readSync(fd, header, 0, HEADER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  const digest = createHash('sha1').update(header.subarray(0, n)).digest('hex');
  const id = (s: NonNullable<ReturnType<typeof statOrNull>>) => `${s.ino}:${s.size}:${s.mtimeNs}`;
  return `${id(st)}:${digest}/${wal ? id(wal) : 'no-wal'}`;
}

function statOrNull(path: string) {
  return statSync(path, { bigint: true, throwIfNoEntry: false }) ?? null;
}

/** What the commands that answer from remembered results ask of a store (Store has all of it). */
export interface AnswerStore {
  remember<T>(key: string, compute: () => Promise<T>): Promise<T>;
  all(sql: string, params?: Record<string, unknown>): Promise<Row[]>;
  boundedMemory<T>(work: () => Promise<T>, opts: { mb: number }): Promise<T>;
  close(): void;
}

/**
 * A store answered from its answers file until something is asked that the file does not hold (a
 * result no run remembered yet): the store is opened then, with `open`, and everything after goes to
 * it. What `open` gives is expected to keep answers when it closes (Store.keepAnswers), so that
 * the next run finds the new result in the file too.
 */
export class AnsweredStore implements AnswerStore {
  private opening: Promise<Store> | undefined;
  private store: Store | undefined;
  /** the bound of the boundedMemory call running: a result computed inside it is computed within it */
  private bound: { mb: number } | undefined;

  constructor(
    private readonly answers: Answers,
    private readonly open: () => Promise<Store>,
  ) {}

  async remember<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const kept = this.store ? undefined : this.answers.results.get(key);
    if (kept !== undefined) return JSON.parse(kept) as T;
    const store = await this.opened();
    const bound = this.bound;
    return bound ? store.boundedMemory(() => store.remember(key, compute), bound) : store.remember(key, compute);
  }

  async all(sql: string, params?: Record<string, unknown>): Promise<Row[]> {
    return (await this.opened()).all(sql, params);
  }

  async boundedMemory<T>(work: () => Promise<T>, opts: { mb: number }): Promise<T> {
    if (this.store) return this.store.boundedMemory(work, opts);
    this.bound = opts;
    try {
      return await work();
    } finally {
      this.bound = undefined;
    }
  }

  /** Whether the store was opened (a question the answers did not hold). */
  get storeOpened(): boolean {
    return this.opening !== undefined;
  }

  /** Closes the store if it was opened (not while it is being opened: callers await their questions first). */
  close(): void {
    this.store?.close();
  }

  private opened(): Promise<Store> {
    this.opening ??= this.open().then((s) => (this.store = s));
    return this.opening;
  }
}
