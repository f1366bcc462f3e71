/**
 * A run's answers, kept in a file beside the store (`<store>.answers`), so that a run over logs
 * that have not changed since answers without loading DuckDB or opening the store. A warm run
 * keeps them, and so does a run whose ingest ended whole (a first run, an append run: ingest.ts).
 *
 * What a warm run does besides walking the logs is open the store, read its listing key and its
 * remembered results (Store.readAhead), and answer from those. Loading DuckDB and opening the
 * store took ~55 ms of the main thread's time while the walk ran on the other core, and slowed the
 * walk itself (BENCHMARKS-log.md, Warm, session 29). The answers file holds the same: the listing key
 * the store is at and every remembered result, written by such a run when it closes the store.
 *
 * It holds only for the store it was written beside, as that store was when it closed: the file
 * carries the store's identity (size, modification time and inode of the store file and of its
 * write-ahead log, or that there was none, and a digest of the store file's headers, which every
 * checkpoint rewrites), read while the run still held the store and again once it had closed it:
 * when the two differ (another process wrote in between), nothing is kept. Any write to the store
 * since (by cachelens or anything else) changes that identity, and the file is then ignored; an
 * ingest that changes the store, or a query of the user's own, also deletes it. A run answers from
 * it only when its walk's listing key is the file's: nothing was added, grown or removed since.
 *
 * The file: one line of JSON (format, schema version, store identity, listing key, each result's
 * key and length, the base an append run may add to (delta.ts: the base file's token, the store's
 * listing key, and its results' keys and lengths, or null when they are the results themselves),
 * and a SHA-1 of the listing key, the keys and lengths of both and the texts), then the results'
 * JSON texts one after another, then the base's. A file whose header and texts do not match their
 * digest (damaged, cut short, or edited) is ignored.
 * Example: {"format":4,"schema":11,"store":"…","listing":"3f…","results":[["query:quality:…:[]",212]],
 * "base":{"token":"5d…","listing":"3f…","results":null},"digest":"9b…"}\n{"files":…}
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { SCHEMA_VERSION } from './schema.js';
import { READ_NOWAIT, readBeside, removeLeftParts } from './location.js';
import type { RememberingStore } from './queries.js';
import type { Row, Store } from './store.js';

const ANSWERS_SUFFIX = '.answers';
/** 2: the header carries a digest of the results (a file damaged past its header is none); 3: and the base (delta.ts); 4: the digest covers the header's keys and lengths too */
const FORMAT = 4;

/** DuckDB's main file header and its two database headers, one of which every checkpoint rewrites. */
const HEADER_BYTES = 3 * 4096;

export interface Answers {
  /** the listing key the store was at, or (answers an append run made: delta.ts) the logs are at */
  listing: string;
  /** the remembered results, by key, as JSON texts */
  results: Map<string, string>;
  /** the store's identity the answers hold for (storeIdentity) */
  store: string;
  /** what an append run may add to without DuckDB (delta.ts), when the store's close left it (or, in memory, ingest.ts withBase) */
  base?: AnswersBase;
}

/**
 * The results as the store holds them, at the store's listing key, with the token of the base file
 * (delta.ts) written beside the store for the same state: the answers of a store's close carry them
 * (the same results), and those an append run made carry them on, unchanged.
 */
export interface AnswersBase {
  token: string;
  listing: string;
  results: Map<string, string>;
}

/**
 * The answers kept beside the store at `path`, if they hold for the store as it is now; null when
 * there are none, they cannot be read, or the store has changed since they were written.
 */
export function readAnswers(path: string): Answers | null {
  try {
    const text = readBeside(path + ANSWERS_SUFFIX, 'utf8');
    const end = text.indexOf('\n');
    if (end < 0) return null;
    const head = JSON.parse(text.slice(0, end)) as { format?: unknown; schema?: unknown; store?: unknown; listing?: unknown; results?: unknown; base?: unknown; digest?: unknown };
    if (head.format !== FORMAT || head.schema !== SCHEMA_VERSION || typeof head.listing !== 'string' || !Array.isArray(head.results)) return null;
    const store = storeIdentity(path);
    if (store === null || head.store !== store) return null;
    // ~1 ms for 1 GB of logs' 0.5 MB of results
    if (head.digest !== newDigest(head.listing, head.results, head.base).update(text.slice(end + 1)).digest('hex')) return null;
    let at = end + 1;
    const take = (list: unknown): Map<string, string> | null => {
      if (!Array.isArray(list)) return null;
      const results = new Map<string, string>();
      for (const r of list as unknown[]) {
        if (!Array.isArray(r) || typeof r[0] !== 'string' || !Number.isInteger(r[1]) || r[1] < 0) return null;
        results.set(r[0], text.slice(at, at + r[1]));
        at += r[1];
      }
      return results;
    };
    const results = take(head.results);
    if (!results) return null;
    const answers: Answers = { listing: head.listing, results, store };
    const b = head.base as { token?: unknown; listing?: unknown; results?: unknown } | undefined;
    if (b !== undefined) {
      if (typeof b.token !== 'string' || typeof b.listing !== 'string') return null;
      // null: the same results (a store's close)
      const baseResults = b.results === null ? results : take(b.results);
      if (!baseResults) return null;
      answers.base = { token: b.token, listing: b.listing, results: baseResults };
    }
    return at === text.length ? answers : null;
  } catch {
    return null;
  }
}

/**
 * The token of the base (delta.ts) that the answers beside the store at `path` name for `listing`,
 * if they hold for the store as it is now: what a run that keeps answers again without writing a
 * base carries on. Only the header is read (the token is all it takes from them).
 */
export function answersBaseToken(path: string, listing: string): string | undefined {
  const h = heldHead(path);
  if (!h || h.listing !== listing) return undefined;
  return h.base?.listing === listing && typeof h.base.token === 'string' ? h.base.token : undefined;
}

/**
 * The listing key of the answers kept beside the store at `path`, if they hold for the store as it
 * is now; else null. Their header only (the early walk's worker asks before it checks the logs
 * against a proof kept for those answers, unchanged.ts).
 */
export function keptListing(path: string): string | null {
  const h = heldHead(path);
  return h && typeof h.listing === 'string' ? h.listing : null;
}

/** The header of the answers beside the store at `path`, if they hold for the store as it is now (its format, schema and identity); else null. */
function heldHead(path: string): { listing?: unknown; base?: { token?: unknown; listing?: unknown } } | null {
  let fd: number | undefined;
  try {
    fd = openSync(path + ANSWERS_SUFFIX, READ_NOWAIT);
    const head = Buffer.alloc(65536);
    const n = readSync(fd, head, 0, head.length, 0);
    const end = head.subarray(0, n).indexOf(0x0a);
    if (end < 0) return null;
    const h = JSON.parse(head.subarray(0, end).toString()) as { format?: unknown; schema?: unknown; store?: unknown; listing?: unknown; base?: { token?: unknown; listing?: unknown } };
    return h.format === FORMAT && h.schema === SCHEMA_VERSION && typeof h.store === 'string' && h.store === storeIdentity(path) ? h : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Writes the answers for the store at `path`, just closed, whose identity was `held` (storeIdentity)
 * while this process still held it: only if the store is still as it was then. Not written when
 * it cannot be: the answers only save time.
 */
export function writeAnswers(path: string, held: string, listing: string, results: ReadonlyMap<string, string>, base?: AnswersBase): void {
  const file = path + ANSWERS_SUFFIX;
  const tmp = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    removeLeftParts(file);
    if (storeIdentity(path) !== held) return;
    const values = [...results];
    const same = base?.results === results;
    const baseValues = base && !same ? [...base.results] : [];
    // the texts written one by one, not joined first: on 10 GB of logs they are ~7 MB each for the
    // results and the base's, and the joined body, the file's text and its bytes held at once were
    // ~40 MB more of the run's peak (an append run answered without DuckDB: delta.ts)
    const texts = [...values, ...baseValues].map(([, v]) => v);
    const lengths = (list: [string, string][]) => list.map(([k, v]) => [k, v.length]);
    const baseHead = base ? { token: base.token, listing: base.listing, results: same ? null : lengths(baseValues) } : undefined;
    const digest = newDigest(listing, lengths(values), baseHead);
    for (const t of texts) digest.update(t);
    const head = JSON.stringify({ format: FORMAT, schema: SCHEMA_VERSION, store: held, listing, results: lengths(values), base: baseHead, digest: digest.digest('hex') });
    fd = openSync(tmp, 'w');
    for (const t of [`${head}\n`, ...texts]) {
      const bytes = Buffer.from(t);
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    }
    const done = fd;
    fd = undefined;
    closeSync(done);
    renameSync(tmp, file);
  } catch {
    // e.g. a full disk; answers left from before do not hold for the store as it is now anyway
    try {
      if (fd !== undefined) closeSync(fd);
    } catch {
      // closed or not, the file is removed
    }
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing more to do
    }
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
 * the file and of its write-ahead log, and a digest of the file's headers. Null if it is missing or
 * cannot be read.
 */
export function storeIdentity(path: string): string | null {
  let st, wal;
  const header = Buffer.alloc(HEADER_BYTES);
  let n: number;
  try {
    st = statOrNull(path);
    if (!st) return null;
    wal = statOrNull(path + '.wal');
    const fd = openSync(path, 'r');
    try {
      n = readSync(fd, header, 0, HEADER_BYTES, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  const digest = createHash('sha1').update(header.subarray(0, n)).digest('hex');
  const id = (s: NonNullable<ReturnType<typeof statOrNull>>) => `${s.ino}:${s.size}:${s.mtimeNs}`;
  return `${id(st)}:${digest}/${wal ? id(wal) : 'no-wal'}`;
}

/**
 * The answers' digest, begun with what their header says of the texts (the listing key, each
 * result's key and length, the base's), so that a header edited apart from them does not hold.
 */
function newDigest(listing: unknown, results: unknown, base: unknown) {
  return createHash('sha1').update(JSON.stringify([listing, results, base ?? null]));
}

function statOrNull(path: string) {
  return statSync(path, { bigint: true, throwIfNoEntry: false }) ?? null;
}

/** What the commands that answer from remembered results ask of a store (Store has all of it). */
export interface AnswerStore extends RememberingStore {
  boundedMemory<T>(work: () => Promise<T>, opts: { mb: number }): Promise<T>;
  close(): void;
}

/** Thrown inside a work answered from the answers file when it asks what the file does not hold. */
class NotAnswered extends Error {}

/**
 * A store answered from its answers file while every question is one the file holds. A question it
 * does not hold (a result no run remembered yet) opens the store, with `open`, and the whole work
 * that asked it (a boundedMemory call) runs again over the store, so that no answer mixes the two;
 * everything after goes to the store. What `open` gives must be the store as the file described it,
 * or as an ingest of the logs left it, keeping answers when it closes (Store.keepAnswers), so
 * that the next run finds the new result in the file too.
 */
export class AnsweredStore implements AnswerStore {
  private opening: Promise<Store> | undefined;
  private store: Store | undefined;
  /** true while a work runs over the answers: a question they do not hold then stops it */
  private answering = false;

  constructor(
    private readonly answers: Answers,
    private readonly open: () => Promise<Store>,
  ) {}

  async remember<T>(key: string, compute: () => Promise<T>): Promise<T> {
    if (!this.opening) {
      const kept = this.answers.results.get(key);
      if (kept !== undefined) {
        try {
          return JSON.parse(kept) as T;
        } catch {
          // (a file its digest held for, yet not JSON here: the store answers)
        }
      }
      if (this.answering) throw new NotAnswered(key);
    }
    return (await this.opened()).remember(key, compute);
  }

  async all(sql: string, params?: Record<string, unknown>): Promise<Row[]> {
    if (this.answering) throw new NotAnswered(sql);
    return (await this.opened()).all(sql, params);
  }

  async boundedMemory<T>(work: () => Promise<T>, opts: { mb: number }): Promise<T> {
    if (!this.opening) {
      this.answering = true;
      try {
        return await work();
      } catch (err) {
        if (!(err instanceof NotAnswered)) throw err;
      } finally {
        this.answering = false;
      }
    }
    const store = await this.opened();
    return store.boundedMemory(work, opts);
  }

  /** Whether a question went to the store (the answers did not hold it). */
  get storeOpened(): boolean {
    return this.opening !== undefined;
  }

  /** Closes the store if it was opened (once it has opened, if it still is opening). */
  close(): void {
    if (this.store) this.store.close();
    else this.opening?.then((s) => s.close(), () => undefined);
  }

  private opened(): Promise<Store> {
    this.opening ??= this.open().then((s) => (this.store = s));
    return this.opening;
  }
}
