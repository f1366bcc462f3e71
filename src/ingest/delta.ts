/**
 * An append run answered without DuckDB: when the logs changed since the answers kept beside the
 * store only by lines appended to transcripts it holds, and those lines are requests it has not
 * seen, `summary`'s results are the store's plus those requests' sums (SPEC §1.3, §2: a new
 * identity's usage, time and attribution are its own copy's, and its price is its own). The new
 * lines are read here, on this thread, and added to the results the store's close kept; the
 * store is not opened and stays as it was, so any question the new answers do not hold (another
 * command, other filters) opens it and ingests the logs as before.
 *
 * What it needs beside the answers is the base file (`<store>.delta`), written from the store by
 * an append run that went to it, or by one that found answers naming none, from the store as it is
 * (writeDeltaBase; ingest.ts withBase): every request's key hash, each transcript's row
 * (where its reading stopped, its fingerprint, parser state, session and project), and each
 * session's project. The answers name the base by a token, so a base file and answers of two
 * different states of the store are never combined, and the answers carry the store's results
 * as they were when the base was written (answers.ts), so that a second append run adds both
 * runs' lines to them, never one run's lines twice.
 *
 * New lines naming the same new request (one response copied into its parent transcript by
 * `agent_progress` lines, or into another session) are de-duplicated here as the store does it.
 * Anything else goes to the store (answerDelta gives null): a file added, removed, rewritten or
 * shrunk; a skipped line; a new line naming a request the store holds (the de-dup's maximum and
 * best copy would need its stored copies); a file whose session or project is not yet known;
 * other prices or roots; more than DELTA_MAX_BYTES of new lines; a request whose identity, model
 * or session holds a lone surrogate (which the store keeps as U+FFFD); a request outside the hours
 * whose UTC offsets DuckDB gave the summary's time zone when the store answered it
 * (queries/zone_days.sql: from a year before its first request to a year after then), or in one
 * whose offset changes within it.
 *
 * Example: 1 GB of logs, one response appended to 156 of 15,652 transcripts: 0.34 – 0.37 s
 * instead of ~0.8 s through DuckDB (BENCHMARKS-log.md, Append, session 32), the same output to the
 * last byte (test/ingest/delta.test.ts asks both over the same appends).
 */
import { type Hash, createHash, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { PriceTable } from '../pricing/pricing.js';
import type { Answers, AnswersBase } from '../store/answers.js';
import { writeAnswers } from '../store/answers.js';
import { READ_NOWAIT, readBeside, removeLeftParts } from '../store/location.js';
import { querySql, queryParams, rememberedKey, rememberedPrefix } from '../store/queries.js';
import { SCHEMA_VERSION } from '../store/schema.js';
import { type Row, type Store, outOfMemory } from '../store/store.js';
import type { Observation } from '../types.js';
import type { Discovery, FoundFile } from './discover.js';
import { fileListing, kindCode } from './early-walk.js';
import type { ParserState } from './file-parser.js';
import { appendFingerprint } from './fingerprint.js';
import { LISTING_SUFFIX, decodeSnapshot, matchSnapshot } from './listing-snapshot.js';
import { readTranscriptSync } from './read-file.js';
import { isoDay } from '../format/days.js';
import { foldCase } from '../format/fold.js';

const BASE_SUFFIX = '.delta';
const FORMAT = 2;
/** The base file's header: one line of JSON, padded with spaces. */
const HEAD_BYTES = 1024;
/** numbers a file has in the base's index */
const SPAN = 4;
/** New bytes beyond this go to the store, whose readers run on worker threads. */
export const DELTA_MAX_BYTES = 64 * 1024 * 1024;

/**
 * A transcript's row as the base file keeps it. `incomplete`: its last line was left half-written,
 * a skip an appended read takes back (Store.prepareAppend).
 */
type BaseRow = [readTo: number, lines: number, headHash: string, sessionId: string | null, project: string | null, parserState: string | null, incomplete: boolean];

interface Base {
  token: string;
  listing: string;
  prices: string;
  /** session → its project, as the de-dup finds it; null where two files of its rank disagree */
  sessions: Map<string, string | null>;
  /** the file's row; throws when it cannot be read, or is damaged */
  row(fileId: number): BaseRow | null;
  /** whether a request's key may be among the store's: its keyHash is (or another's with the same 53 bits) */
  hasKey(hash: number): boolean;
  close(): void;
}

/** The digest of a price table the base was priced with (as ingest keys `derived_prices`). */
export function pricesDigest(prices: PriceTable): string {
  return createHash('sha1').update(JSON.stringify([...prices.entries()])).digest('hex');
}

const M64 = (1n << 64n) - 1n;
const MUL = 0xd6e8feb86659fd93n;

/**
 * A request key's hash as the base keeps it: the upper 53 bits of DuckDB's hash() of the VARCHAR
 * (its HashBytes of the UTF-8, then MurmurHash64), ~25 times cheaper for DuckDB to make than an
 * MD5 (10 GB of logs' 1.5 million keys: 33 against 377 ms), and a number a double holds exactly.
 * A new key that shares them with a stored one sends the run to the store: for m new keys among
 * n stored, a chance of about m·n / 2^53 a run (10 GB of logs, 1.48 million keys, 1,565 new in the
 * bench's append round: ~3·10^-7). With the upper 32 bits, kept until session 33, 1 − e^(−m·n/2^32):
 * ~42% of such runs there went to the store. The base carries the hashes of
 * HASH_PROBES as DuckDB made them, so a DuckDB that hashes otherwise leaves the base unused.
 */
export function keyHash(key: string): number {
  return Number(duckdbHash(key) >> 11n);
}

/** DuckDB's hash() of a VARCHAR. */
export function duckdbHash(key: string): bigint {
  const b = Buffer.from(key, 'utf8');
  let h = (0xe17a1465n ^ ((BigInt(b.length) * 0xc6a4a7935bd1e995n) & M64)) & M64;
  const rest = b.length & 7;
  let p = 0;
  for (; p < b.length - rest; p += 8) h = ((h ^ b.readBigUInt64LE(p)) * MUL) & M64;
  if (rest) {
    const tail = Buffer.alloc(8);
    b.copy(tail, 0, p);
    h = ((h ^ tail.readBigUInt64LE(0)) * MUL) & M64;
  }
  h ^= h >> 32n;
  h = (h * MUL) & M64;
  h ^= h >> 32n;
  h = (h * MUL) & M64;
  return h ^ (h >> 32n);
}

/** Keys of lengths 0 – 19 and one beyond ASCII, whose hashes tell DuckDB's hash() from keyHash. */
const HASH_PROBES = ['', 'a', 'msg_0', 'msg_01ABCDEF', 'msg_01ABCDEF\u0000req_01', 'héllo\u0000ü'];

/** What a base that ran out of memory gives writeDeltaBase. */
const RAN_OUT: unique symbol = Symbol('ran out of memory');

/**
 * Writes the base file for the store as it is now, at `listing`, and gives its token (null when it
 * could not be written: the answers then carry no base). Written by an append run that went to the
 * store, or that found answers naming no base (ingest.ts withBase); 1 GB of logs: 6.3 MB in ~0.1 –
 * 0.17 s.
 */
export async function writeDeltaBase(store: Store, listing: string, prices: PriceTable): Promise<string | null> {
  if (!store.keepsFiles) return null;
  // One query after another within a bound that 10 GB of logs fit (two at once did not, at 64 MB).
  // What DuckDB holds of the run's committed changes until a checkpoint folds them into the file
  // counts against that bound: after the first append run over a fresh 10 GB store, ~22 MB of it
  // (and ~25 MB spilled), and the base ran out of memory. Out of memory, then, the changes are
  // folded in (~0.45 s there) and the base is written again: that run took 6.8 – 7.3 s instead of
  // 5.5, and the next append run 2.0 s instead of 6.3 – 6.9 (BENCHMARKS-log.md, Append, session 33).
  // Out of memory again, there is no base (the next append run tries again: ingest.ts withBase;
  // else it goes to the store). Nothing here runs without the bound: a bound DuckDB refuses (it
  // cannot free enough to fit it) counts as running out.
  const ranOut = (err: unknown) => (outOfMemory(err) ? RAN_OUT : null);
  // on one thread: on two the transcripts' rows of a 10 GB store ran out of memory at 32 MB (a
  // store just opened, as an append run after a first run finds it: ingest.ts withBase)
  let threads: unknown;
  try {
    [{ threads }] = await store.all(`SELECT current_setting('threads') AS threads`);
    await store.run('SET threads = 1');
  } catch {
    return null;
  }
  try {
    return await foldedIfNeeded(store, listing, prices, ranOut);
  } finally {
    await store.run(`SET threads = ${Number(threads)}`).catch(() => undefined);
  }
}

/** writeDeltaBase's two tries: as the store is, then (out of memory) with its changes folded in. */
async function foldedIfNeeded(store: Store, listing: string, prices: PriceTable, ranOut: (err: unknown) => typeof RAN_OUT | null): Promise<string | null> {
  for (const fold of [false, true]) {
    try {
      // The fold too runs within the bound: at the store's own (141 MB on 10 GB) the run peaked at
      // ~400 MiB in it. A checkpoint needs little: 100 MB of committed rows held in memory were
      // folded within 4 MB in a scratch run (below that DuckDB refused the bound).
      const work = async () => (fold ? store.run('CHECKPOINT').then(() => writeBase(store, listing, prices), ranOut) : writeBase(store, listing, prices)).catch(ranOut);
      const token = await store.boundedMemory(work, { mb: BASE_MEMORY_MB, refused: (): typeof RAN_OUT => RAN_OUT });
      if (token !== RAN_OUT) return token;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * DuckDB's bound while the base is read from the store. 10 GB of logs, after an append run's
 * touched derive: ~0.9 s, that run's peak 349 MiB against 339 without the base (24 MB ran out of
 * memory there; 64 MB, with the hashes and index in JavaScript arrays: 391 – 394).
 */
const BASE_MEMORY_MB = 32;

async function writeBase(store: Store, listing: string, prices: PriceTable): Promise<string | null> {
  const file = store.path + BASE_SUFFIX;
  const tmp = `${file}.${process.pid}.tmp`;
  const token = randomBytes(12).toString('hex');
  let fd: number | undefined;
  removeLeftParts(file);
  try {
    // The file: a header of HEAD_BYTES (written last, once the lengths and digest are known), each
    // transcript's row (BaseRow) as a line of JSON made by DuckDB, the sessions, padding to 8
    // bytes, the index (by file id: start and end of its row, and the row's CRC-32), the key
    // hashes. The rows are written as DuckDB hands them on, not held (10 GB of logs: ~45 MB of
    // them), and an append run reads only those of the files that grew: the digest in the header
    // is of what follows them, each row has its CRC.
    fd = openSync(tmp, 'w');
    let at = HEAD_BYTES;
    let digest: Hash | null = null;
    const put = (b: Buffer) => {
      writeSync(fd!, b, 0, b.length, at);
      at += b.length;
      digest?.update(b);
    };
    // (file id, start and end of its row, its CRC-32), in the order DuckDB gives the rows, then sorted by file id
    let spans = new Float64Array(SPAN * 4096);
    let files = 0;
    // each session's project as the de-dup's session_project finds it (schema.ts: its main
    // transcript's, else its other files'), or null where the files of that rank disagree (DuckDB's
    // arg_min then picks one of them); found here, as the rows go by: as a query of its own, it
    // needed more memory than the rest (a 16 MB allocation at 32 MB on 10 GB of logs)
    const sessions = new Map<string, { rank: number; project: string | null; agree: boolean }>();
    for await (const chunk of store.chunks(`
      SELECT f.file_id, json_array(f.read_to, f.lines, f.head_hash, f.session_id, f.project, f.parser_state, s.file_id IS NOT NULL)::VARCHAR AS row,
             f.session_id, f.project, f.kind = 'main' AS main
      FROM files f JOIN scope USING (file_id) LEFT JOIN (SELECT DISTINCT file_id FROM skipped WHERE reason = 'incomplete_last_line') s USING (file_id)
      WHERE f.kind <> 'meta'`)) {
      const [id, row, session, project, main] = [0, 1, 2, 3, 4].map((c) => chunk.column(c));
      let text = '';
      let bytes = at - HEAD_BYTES;
      for (let i = 0; i < chunk.rowCount; i++) {
        const json = row.getItem(i) as string;
        text += `${json}\n`;
        if (SPAN * (files + 1) > spans.length) {
          const more = new Float64Array(2 * spans.length);
          more.set(spans);
          spans = more;
        }
        spans.set([Number(id.getItem(i)), bytes, (bytes += Buffer.byteLength(json) + 1) - 1, crc32(json)], SPAN * files++);
        const sid = session.getItem(i) as string | null;
        if (sid === null) continue;
        const rank = main.getItem(i) ? 0 : 1;
        const p = project.getItem(i) as string | null;
        const seen = sessions.get(sid);
        if (!seen || rank < seen.rank) sessions.set(sid, { rank, project: p, agree: p !== null });
        else if (rank === seen.rank && p !== seen.project) seen.agree = false;
      }
      put(Buffer.from(text));
    }
    const rowBytes = at - HEAD_BYTES;
    const order = new Uint32Array(files).map((_, i) => i).sort((x, y) => spans[SPAN * x] - spans[SPAN * y]);
    const index = new Float64Array(SPAN * files);
    order.forEach((from, i) => index.set(spans.subarray(SPAN * from, SPAN * from + SPAN), SPAN * i));
    // (no prototype: a session id "__proto__" is a key like any other)
    const projects: Record<string, string | null> = Object.create(null);
    for (const [sid, x] of sessions) projects[sid] = x.agree ? x.project : null;
    const [probes] = await store.all(`SELECT ${HASH_PROBES.map((_, i) => `hash($p${i})::VARCHAR AS p${i}`).join(', ')}`, Object.fromEntries(HASH_PROBES.map((p, i) => [`p${i}`, p])));
    const sessionText = Buffer.from(JSON.stringify(projects));
    digest = createHash('sha1');
    put(sessionText);
    put(pad8(at));
    put(Buffer.from(index.buffer));
    // every request's key hash, its upper 53 bits (keyHash), in order (binary search): sorted here,
    // not by DuckDB, whose sort of 10 GB of logs' 1.5 million would take memory beyond the 12 MB of the array
    const [{ n }] = await store.all(`SELECT count(*) AS n FROM requests`);
    const keys = new Float64Array(Number(n));
    let k = 0;
    for await (const chunk of store.chunks(`SELECT (hash(key) >> 11)::DOUBLE AS h FROM requests`)) {
      const c = chunk.column(0);
      for (let i = 0; i < chunk.rowCount && k < keys.length; i++) keys[k++] = c.getItem(i) as number;
    }
    if (k !== keys.length) return null;
    put(Buffer.from(keys.sort().buffer));
    const head = JSON.stringify({
      format: FORMAT,
      schema: SCHEMA_VERSION,
      token,
      listing,
      prices: pricesDigest(prices),
      probes: HASH_PROBES.map((_, i) => String(probes[`p${i}`])),
      rows: rowBytes,
      sessions: sessionText.length,
      files,
      keys: keys.length,
      digest: digest.digest('hex'),
    });
    if (head.length >= HEAD_BYTES) return null;
    writeSync(fd, Buffer.from(head.padEnd(HEAD_BYTES - 1) + '\n'), 0, HEAD_BYTES, 0);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, file);
    return token;
  } finally {
    if (fd !== undefined) closeSync(fd);
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing more to do
    }
  }
}

function pad8(n: number): Buffer {
  return Buffer.alloc((8 - (n % 8)) % 8);
}

function readBase(path: string): Base | null {
  let fd: number;
  try {
    fd = openSync(path + BASE_SUFFIX, READ_NOWAIT);
  } catch {
    return null;
  }
  let base: Base | null = null;
  try {
    base = baseOf(fd);
  } catch {
    // damaged, or cut short
  }
  // a base given out is closed by its user
  if (!base) closeSync(fd);
  return base;
}

/** The base file open at `fd`; null when it is of another format or DuckDB, or damaged. */
function baseOf(fd: number): Base | null {
  const read = (from: number, length: number): Buffer => {
    const b = Buffer.allocUnsafe(length);
    if (readSync(fd, b, 0, length, from) !== length) throw new Error('cut short');
    return b;
  };
  const head = JSON.parse(read(0, HEAD_BYTES).toString()) as Record<string, unknown>;
  if (head.format !== FORMAT || head.schema !== SCHEMA_VERSION) return null;
  if (JSON.stringify(head.probes) !== JSON.stringify(HASH_PROBES.map((p) => duckdbHash(p).toString()))) return null;
  const [sessionsLength, rowsLength, files, keyCount] = [head.sessions, head.rows, head.files, head.keys].map(Number);
  // what follows the rows, read whole (1 GB of logs: ~2 MB of ~6); a row is read when asked for
  const from = HEAD_BYTES + rowsLength;
  const indexAt = from + sessionsLength + ((8 - ((from + sessionsLength) % 8)) % 8);
  const size = indexAt + 8 * SPAN * files + 8 * keyCount;
  if (fstatSync(fd).size !== size) return null;
  // read from the 8-byte boundary at or before the tail into a buffer of its own, so that the index
  // and the hashes (8-byte aligned in the file) are views of it, not copies (10 GB of logs: 17 MB)
  const start = from - (from % 8);
  const whole = Buffer.allocUnsafeSlow(size - start);
  if (readSync(fd, whole, 0, whole.length, start) !== whole.length) return null;
  const tail = whole.subarray(from - start);
  if (createHash('sha1').update(tail).digest('hex') !== head.digest) return null;
  const index = new Float64Array(whole.buffer, indexAt - start, SPAN * files);
  const keys = new Float64Array(whole.buffer, size - start - 8 * keyCount, keyCount);
  const sessions = new Map(Object.entries(JSON.parse(tail.subarray(0, sessionsLength).toString()) as Record<string, string | null>));
  return {
    token: String(head.token),
    listing: String(head.listing),
    prices: String(head.prices),
    sessions,
    row(fileId) {
      let lo = 0;
      let hi = files - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const id = index[SPAN * mid];
        if (id === fileId) {
          const [start, end, crc] = [index[SPAN * mid + 1], index[SPAN * mid + 2], index[SPAN * mid + 3]];
          const text = read(HEAD_BYTES + start, end - start);
          if (crc32(text) !== crc) throw new Error('a damaged row');
          return JSON.parse(text.toString()) as BaseRow;
        }
        if (id < fileId) lo = mid + 1;
        else hi = mid - 1;
      }
      return null;
    },
    hasKey(hash) {
      let lo = 0;
      let hi = keys.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const x = keys[mid];
        if (x === hash) return true;
        if (x < hash) lo = mid + 1;
        else hi = mid - 1;
      }
      return false;
    },
    close: () => closeSync(fd),
  };
}

/** A copy of a new request: its observation, the path of its file, and that file's project. */
interface Copy {
  obs: Observation;
  path: Buffer;
  project: string | null;
}

/**
 * A new request: its usage, time, model and copies (`obs`, as the de-dup makes them of its
 * copies), its project, priced.
 */
interface NewRequest {
  obs: Observation;
  project: string;
  /** weight and USD in units of 10^-15, as DuckDB casts a DOUBLE to DECIMAL(38, 15); null when unpriced */
  weight: bigint | null;
  usd: bigint | null;
}

export interface DeltaAnswer {
  answers: Answers;
  appended: number;
  unchanged: number;
  bytesRead: number;
}

/**
 * The answers for the logs as walked (`discovery`, whose listing key is `listing`): the base's
 * results with the appended lines' requests added, written beside the store; null when they
 * cannot be made so (see the file's comment), and the run goes to the store. With `grown`, the
 * transcripts that grew since the base's listing as the caller found them from that walk, the
 * walk itself may be gone (null: ingest.ts withBase lets it go before writing the base).
 */
export function answerDelta(dbPath: string, answers: Answers, discovery: Discovery | null, listing: string, prices: PriceTable, grown?: Grown): DeltaAnswer | null {
  const kept = answers.base;
  if (!kept || (discovery ? discovery.problems.length > 0 : !grown)) return null;
  // the run that wrote the base answered another command (a report, sessions): nothing to add to
  const summaryPrefix = rememberedPrefix('summary');
  if (![...kept.results.keys()].some((k) => k.startsWith(summaryPrefix))) return null;
  const base = readBase(dbPath);
  if (!base) return null;
  try {
    if (base.token !== kept.token || base.listing !== kept.listing || base.prices !== pricesDigest(prices)) return null;
    return deltaFrom(base, dbPath, answers, kept, discovery, listing, prices, grown);
  } catch {
    // a row that cannot be read, or is damaged
    return null;
  } finally {
    base.close();
  }
}

/** grownSince's answer: the transcripts that grew, and how many files the walk found. */
export interface Grown {
  grown: { f: FoundFile; fileId: number }[];
  files: number;
}

/**
 * The transcripts that grew since the store's listing snapshot (`storeListing`, its key), as the
 * walk (`discovery`) found them, each with its file id; null unless every other file is as the
 * snapshot has it (none added, removed, rewritten, shrunk; no .meta.json changed), at least one
 * grew, and by DELTA_MAX_BYTES at most in all.
 */
export function grownSince(dbPath: string, storeListing: string, discovery: Discovery): Grown | null {
  let snapBytes: Buffer;
  try {
    snapBytes = readBeside(dbPath + LISTING_SUFFIX);
  } catch {
    return null;
  }
  const snap = decodeSnapshot(snapBytes);
  if (!snap || snap.key !== storeListing || JSON.stringify(snap.roots) !== JSON.stringify(discovery.roots)) return null;
  const found = fileListing(discovery);
  if (found.count !== snap.count) return null;
  const at = matchSnapshot(found, snap);
  if (!at) return null;
  const grown: { f: FoundFile; fileId: number }[] = [];
  let newBytes = 0;
  for (let pos = 0; pos < found.count; pos++) {
    const j = at[pos];
    if (j < 0) return null; // a file added (and, the counts being equal, one removed)
    if (snap.kind[j] !== found.kind(pos)) return null;
    if (snap.size[j] === found.size(pos) && snap.mtimeMs[j] === found.mtimeMs(pos)) continue;
    if (found.size(pos) <= snap.size[j] || found.kind(pos) === kindCode('meta')) return null;
    newBytes += found.size(pos) - snap.size[j];
    if (newBytes > DELTA_MAX_BYTES) return null;
    grown.push({ f: found.file(pos), fileId: snap.fileId[j] });
  }
  return grown.length === 0 ? null : { grown, files: found.count };
}

function deltaFrom(base: Base, dbPath: string, answers: Answers, kept: AnswersBase, discovery: Discovery | null, listing: string, prices: PriceTable, known?: Grown): DeltaAnswer | null {
  const since = known ?? (discovery && grownSince(dbPath, kept.listing, discovery));
  if (!since) return null;
  const { grown, files } = since;

  // every copy of each new request: one response's lines in a file are one copy, and a subagent's
  // request is copied into its parent's transcript by `agent_progress` lines
  const copiesOf = new Map<string, Copy[]>();
  let lines = 0;
  let copies = 0;
  let synthetic = 0;
  let bytesRead = 0;
  for (const { f, fileId } of grown) {
    const row = base.row(fileId);
    if (!row) return null;
    const [readTo, before, headHash, sessionId, project, stateText, incomplete] = row;
    if (incomplete || stateText === null || sessionId === null) return null;
    const state = JSON.parse(stateText) as Omit<ParserState, 'chains'>;
    // a file whose session or project its new lines could still set (an appended read keeps the first seen)
    if (!state.cwd || !state.sessionId) return null;
    let r;
    try {
      // as walked: a file that grew again since is left to the store's reading, not read here, and
      // so is one whose new bytes continue a last line read without its newline (read again whole)
      if (statSync(f.path).size !== f.size || appendFingerprint(f.path, readTo) !== headHash) return null;
      r = readTranscriptSync(f.path, { fileId, fileAgentId: f.agentId, fileSessionId: f.sessionId }, { from: readTo, linesBefore: before, state: { ...state, chains: [] } });
    } catch {
      return null;
    }
    // still as walked once read, and no line skipped
    if (r.size !== f.size || r.facts.skipped.length > 0) return null;
    lines += r.lines - before;
    synthetic += r.facts.synthetic;
    bytesRead += r.bytesRead;
    const path = Buffer.from(f.path);
    for (const obs of r.facts.observations) {
      if (!Number.isInteger(obs.t) || obs.t < 0) return null;
      // text the store keeps as UTF-8, where a lone surrogate becomes U+FFFD: its identity, model or
      // session would group otherwise here (left to the store)
      if (LONE_SURROGATE.test(obs.key) || LONE_SURROGATE.test(obs.model) || LONE_SURROGATE.test(obs.sessionId)) return null;
      let list = copiesOf.get(obs.key);
      if (!list) {
        if (base.hasKey(keyHash(obs.key))) return null;
        copiesOf.set(obs.key, (list = []));
      }
      list.push({ obs, path, project });
      copies += obs.copies;
    }
  }
  const requests: NewRequest[] = [];
  for (const list of copiesOf.values()) {
    // two files' copies of one rank and time: the one in the file that ends first is the request's
    // (schema.ts fileLastTimes), and a file's last time before its new lines is the store's
    if (list.some((a) => list.some((b) => a.path !== b.path && a.obs.rank === b.obs.rank && a.obs.t === b.obs.t))) return null;
    const q = newRequest(list, base.sessions, prices);
    if (!q) return null;
    requests.push(q);
  }

  const results = new Map<string, string>();
  const summaryPrefix = rememberedPrefix('summary');
  const zonesPrefix = rememberedPrefix('zone_days');
  const summaryParams = queryParams(querySql('summary'));
  for (const [key, text] of kept.results) {
    if (key.startsWith(summaryPrefix)) {
      const values = JSON.parse(key.slice(summaryPrefix.length)) as unknown[];
      const params = Object.fromEntries(summaryParams.map((p, i) => [p, values[i] ?? null])) as Record<string, string | null>;
      const zone = params.tz === null ? undefined : kept.results.get(rememberedKey('zone_days', { tz: params.tz }));
      if (zone === undefined) return null;
      const rows = addToSummary(JSON.parse(text) as Row[], requests, params, zoneRuns(JSON.parse(zone) as Row[]));
      if (!rows) return null;
      results.set(key, JSON.stringify(rows));
    } else if (key === `${rememberedPrefix('quality')}[]`) {
      const [q] = JSON.parse(text) as Row[];
      const n = requests.length;
      const add = (name: string, by: number) => (q[name] = Number(q[name]) + by);
      add('lines', lines);
      add('usage_lines', copies);
      add('requests', n);
      add('duplicates_removed', copies - n);
      add('synthetic', synthetic);
      results.set(key, JSON.stringify([q]));
    } else if (key === `${rememberedPrefix('skipped')}[]` || key.startsWith(zonesPrefix)) {
      results.set(key, text);
    } else if (key === `${rememberedPrefix('unknown_models')}[]`) {
      results.set(key, JSON.stringify(addToUnknown(JSON.parse(text) as Row[], requests)));
    }
    // every other result is left out: the store answers it, after an ingest
  }
  const made: Answers = { listing, results, store: answers.store, base: kept };
  writeAnswers(dbPath, answers.store, listing, results, kept);
  return { answers: made, appended: grown.length, unchanged: files - grown.length, bytesRead };
}

/**
 * A request of a new identity from its copies, as the de-dup makes it (schema.ts groupsSelect and
 * pricedSelect): each usage field the maximum over the copies (the write's 5-minute part what the
 * 1-hour part leaves of the largest write), time the earliest, model, session
 * and file from the best copy (subagent file > main file > progress copy, then the earliest, then
 * the first by path and line: copies of one rank and time in two files are left to the store,
 * which orders them by the files' last times first), project its session's, else its file's; null when its session's
 * files disagree on the project, or its price is not finite (left to the store).
 */
function newRequest(copies: Copy[], sessions: Map<string, string | null>, prices: PriceTable): NewRequest | null {
  const best = copies.reduce((a, b) => (bestFirst(a, b) <= 0 ? a : b));
  const max = (field: 'input' | 'output' | 'cacheWrite' | 'cacheWrite5m' | 'cacheWrite1h' | 'cacheRead') => Math.max(...copies.map((c) => c.obs[field]));
  const obs: Observation = {
    ...best.obs,
    t: Math.min(...copies.map((c) => c.obs.t)),
    input: max('input'),
    output: max('output'),
    cacheWrite: max('cacheWrite'),
    // the split of the largest write, as groupsSelect makes it
    cacheWrite5m: max('cacheWrite') - Math.min(max('cacheWrite1h'), max('cacheWrite')),
    cacheWrite1h: Math.min(max('cacheWrite1h'), max('cacheWrite')),
    cacheRead: max('cacheRead'),
    copies: copies.reduce((n, c) => n + c.obs.copies, 0),
  };
  const sessionProject = sessions.get(obs.sessionId);
  if (sessionProject === null) return null;
  const cost = priceOf(prices, obs);
  if (cost === undefined) return null;
  return { obs, project: sessionProject ?? best.project ?? 'unknown', weight: cost && toE15(cost.weight), usd: cost && toE15(cost.usd) };
}

/** The order of BEST_COPY_ORDER (schema.ts): rank, most first; time; path, by its bytes; line (ties of rank and time across files never reach it). */
function bestFirst(a: Copy, b: Copy): number {
  return b.obs.rank - a.obs.rank || a.obs.t - b.obs.t || Buffer.compare(a.path, b.path) || a.obs.line - b.obs.line;
}

/**
 * A request's weight and USD as the de-dup prices it (schema.ts pricedSelect: the same products
 * and sums, in the same order); null when its model has no price; undefined when they are not
 * finite (left to the store).
 */
function priceOf(prices: PriceTable, o: Observation): { weight: number; usd: number } | null | undefined {
  const p = prices.lookup(o.model);
  if (!p) return null;
  const b = p.input;
  const prompt = o.input + o.cacheWrite + o.cacheRead;
  const lc = p.long_context;
  const rates = lc !== undefined && prompt > lc.above ? lc : p;
  const weight = o.input * (rates.input / b) + o.output * (rates.output / b) + o.cacheWrite5m * (rates.write_5m / b) + o.cacheWrite1h * (rates.write_1h / b) + o.cacheRead * (rates.read / b);
  const usd = weight * (b / 1e6);
  return Number.isFinite(weight) && Number.isFinite(usd) ? { weight, usd } : undefined;
}

/**
 * A DOUBLE as DuckDB casts it to DECIMAL(38, 15), in units of 10^-15: the product by 10^15,
 * rounded half away from zero (the same as DuckDB for 1.6 million weights and prices: test/delta.test.ts).
 */
export function toE15(x: number): bigint {
  const v = x * 1e15;
  return BigInt(v < 0 ? -Math.round(-v) : Math.round(v));
}

/** DECIMAL(38, 15) text as DuckDB writes it, from units of 10^-15, and back. */
export function e15Text(v: bigint): string {
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(16, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -15)}.${digits.slice(-15)}`;
}

export function e15Of(text: string): bigint {
  const m = /^(-?)(\d+)\.(\d{15})$/.exec(text);
  if (!m) throw new Error(`not a DECIMAL(38, 15): ${text}`);
  const v = BigInt(m[2] + m[3]);
  return m[1] ? -v : v;
}

/** A lone surrogate (in a string as JavaScript holds it): what UTF-8 cannot hold. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * A time zone's UTC offsets as DuckDB gives them (queries/zone_days.sql), by hour of UTC: the
 * hours each run begins and ends with (inclusive) and its offset in milliseconds.
 */
export interface ZoneRuns {
  from: Float64Array;
  to: Float64Array;
  offsetMs: Float64Array;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export function zoneRuns(rows: Row[]): ZoneRuns {
  return {
    from: Float64Array.from(rows, (r) => Number(r.from_h)),
    to: Float64Array.from(rows, (r) => Number(r.to_h)),
    offsetMs: Float64Array.from(rows, (r) => Number(r.offset_us) / 1000),
  };
}

/**
 * The day (YYYY-MM-DD) of epoch milliseconds `t` in the zone of `zone`, as summary.sql finds it:
 * t plus the zone's offset then, in whole days. Null when `zone` does not hold t's hour (outside
 * its window, or an hour whose offset changes within it): left to the store. Node's own time zone
 * data (Intl) is not asked: it may hold other rules than DuckDB's.
 * Example: t = 2026-12-05T06:30Z, America/Edmonton's run at -6 h → '2026-12-05' (Node 20.20's
 * rules, at -7 h, give '2026-12-04').
 */
export function dayInZone(t: number, zone: ZoneRuns): string | null {
  const h = Math.floor(t / HOUR_MS);
  let lo = 0;
  let hi = zone.from.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (h < zone.from[mid]) hi = mid - 1;
    else if (h > zone.to[mid]) lo = mid + 1;
    else return isoDay(Math.floor((t + zone.offsetMs[mid]) / DAY_MS) * DAY_MS);
  }
  return null;
}

/** Text whose case JavaScript and DuckDB fold alike. */
const ASCII = /^[\x20-\x7e]*$/;

/**
 * The summary query's rows (queries/summary.sql) with `requests` added, for its parameters, their
 * days in the zone of `zone` (its time zone's runs of offsets); null when they cannot be added here
 * (a project filter that is not plain ASCII, which DuckDB's fold_case may fold otherwise by its
 * own Unicode version; a request in an hour `zone` does not hold).
 */
function addToSummary(rows: Row[], requests: NewRequest[], params: Record<string, string | null>, zone: ZoneRuns): Row[] | null {
  const { since, until, project, group } = params;
  if (project !== null && !ASCII.test(project)) return null;
  const byGroup = new Map<string, Row>(rows.map((r) => [`${String(r.grouping)}\u0000${String(r.grp)}`, r]));
  // each touched row's exact sums, read from its text once and written back once at the end
  const exact = new Map<Row, { weight: bigint; usd: bigint }>();
  const rowFor = (grouping: string, grp: string): Row => {
    const id = `${grouping}\u0000${grp}`;
    let r = byGroup.get(id);
    if (!r) {
      r = { grouping, grp, requests: 0, input: 0, output: 0, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0, weight: null, usd: null, unpriced_requests: 0, weight_exact: e15Text(0n), usd_exact: e15Text(0n) };
      byGroup.set(id, r);
      rows.push(r);
    }
    return r;
  };
  for (const q of requests) {
    if (project !== null) {
      if (!ASCII.test(q.project)) return null;
      if (!foldCase(q.project).includes(foldCase(project))) continue;
    }
    const day = dayInZone(q.obs.t, zone);
    if (day === null) return null;
    if ((since !== null && day < since) || (until !== null && day > until)) continue;
    const groups: [string, string][] = [
      ['model', q.obs.model],
      ['project', q.project],
      ['day', day],
      ['total', 'total'],
    ];
    for (const [grouping, grp] of groups) {
      if (group !== null && group !== grouping) continue;
      const r = rowFor(grouping, grp);
      const o = q.obs;
      r.requests = Number(r.requests) + 1;
      r.input = Number(r.input) + o.input;
      r.output = Number(r.output) + o.output;
      r.cache_write_5m = Number(r.cache_write_5m) + o.cacheWrite5m;
      r.cache_write_1h = Number(r.cache_write_1h) + o.cacheWrite1h;
      r.cache_read = Number(r.cache_read) + o.cacheRead;
      if (q.weight === null || q.usd === null) {
        r.unpriced_requests = Number(r.unpriced_requests) + 1;
        // a kept row of no requests (the total of a filter that chose none) has weight 0, not NULL
        if (!exact.has(r) && Number(r.unpriced_requests) === Number(r.requests)) r.weight = r.usd = null;
      } else {
        let sums = exact.get(r);
        if (!sums) exact.set(r, (sums = { weight: e15Of(String(r.weight_exact)), usd: e15Of(String(r.usd_exact)) }));
        sums.weight += q.weight;
        sums.usd += q.usd;
      }
    }
  }
  // as the query gives them: NULL where none of a group's requests is priced (a new group of unpriced
  // requests only stays so; the first priced request makes the sums numbers)
  for (const [r, sums] of exact) {
    r.weight_exact = e15Text(sums.weight);
    r.usd_exact = e15Text(sums.usd);
    r.weight = Number(r.weight_exact);
    r.usd = Number(r.usd_exact);
  }
  return rows;
}

/** The unknown_models query's rows with the unpriced `requests` added, in its order. */
function addToUnknown(rows: Row[], requests: NewRequest[]): Row[] {
  const byModel = new Map<string, Row>(rows.map((r) => [String(r.model), r]));
  for (const q of requests) {
    if (q.weight !== null) continue;
    const o = q.obs;
    let r = byModel.get(o.model);
    if (!r) {
      byModel.set(o.model, (r = { model: o.model, requests: 0, tokens: 0 }));
      rows.push(r);
    }
    r.requests = Number(r.requests) + 1;
    r.tokens = Number(r.tokens) + o.input + o.output + o.cacheWrite + o.cacheRead;
  }
  return rows.sort((a, b) => Number(b.requests) - Number(a.requests) || Buffer.compare(Buffer.from(String(a.model)), Buffer.from(String(b.model))));
}
