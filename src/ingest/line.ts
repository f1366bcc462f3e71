/**
 * What cachelens reads from one transcript line: the projection schema (only these fields are
 * decoded) and the typed view of a projected line.
 */
import { createHash } from 'node:crypto';
import { OTHER_ARRAY, OTHER_OBJECT, type SchemaObject } from './project.js';

/**
 * The usage fields readUsage looks at (usage.ts). Projecting only these, rather than taking the
 * whole block with JSON.parse, is a third of the cost of an assistant line; readUsage gives the
 * same result either way (a block that is not an object, or a field of the wrong type, reads the
 * same, since a mismatched field keeps its scalar value or becomes a marker that is not an object).
 */
const usageBlock: SchemaObject = {
  input_tokens: true,
  output_tokens: true,
  cache_creation_input_tokens: true,
  cache_read_input_tokens: true,
  cache_creation: { ephemeral_5m_input_tokens: true, ephemeral_1h_input_tokens: true },
  server_tool_use: { web_search_requests: true, web_fetch_requests: true },
  service_tier: true,
  speed: true,
};

/**
 * The characters of a content block's `text` the projection keeps (project.ts, number schema): enough
 * for Claude Code's `[Request interrupted by user for tool use]` (42), which userLineKind tells
 * apart from a prompt; a longer text is its marker with its opening tag, so a text block costs no
 * decoding past its first bytes.
 */
export const TEXT_KEPT = 64;

export const LINE_SCHEMA: SchemaObject = {
  type: true,
  subtype: true,
  timestamp: true,
  sessionId: true,
  cwd: true,
  isSidechain: true,
  agentId: true,
  uuid: true,
  parentUuid: true,
  requestId: true,
  isCompactSummary: true,
  isMeta: true,
  message: {
    id: true,
    model: true,
    role: true,
    usage: usageBlock,
    content: [{ type: true, text: TEXT_KEPT, id: true, name: true, tool_use_id: true, input: { subagent_type: true, name: true, prompt: true } }],
  },
  toolUseResult: { agentId: true, status: true },
  attachment: true,
  data: {
    type: true,
    agentId: true,
    message: { type: true, timestamp: true, requestId: true, message: { id: true, model: true, usage: usageBlock } },
  },
};

/** A projected line, as far as the reader relies on it. Every field may be absent or mistyped. */
export interface Line {
  type?: unknown;
  subtype?: unknown;
  timestamp?: unknown;
  sessionId?: unknown;
  cwd?: unknown;
  isSidechain?: unknown;
  agentId?: unknown;
  uuid?: unknown;
  parentUuid?: unknown;
  requestId?: unknown;
  isCompactSummary?: unknown;
  isMeta?: unknown;
  message?: unknown;
  toolUseResult?: unknown;
  attachment?: unknown;
  data?: unknown;
  /**
   * `message.content` unprojected, set by the reader only on a line whose tool_result answers a
   * spawn of its file and has no toolUseResult.agentId (FileParser.needsWholeContent): the agent
   * is then named in the result's text, which the projection does not keep.
   */
  wholeContent?: unknown;
}

export function str(x: unknown): string | null {
  return typeof x === 'string' && x.length > 0 && x.charCodeAt(0) !== 0 ? x : null;
}

/**
 * The flags that decide how a line is read: `isSidechain` (an inline v1.x sidechain or the main
 * thread), `isMeta` and `isCompactSummary` (a user line Claude Code wrote, no prompt: no round).
 */
const FLAGS = ['isSidechain', 'isMeta', 'isCompactSummary'] as const;

/**
 * The ids that place a line: its session (else the file's), its subagent (else the file's, or none),
 * its own and its parent's (an inline v1.x sidechain's thread; a resumed session's copy of a line),
 * its request's (with `message.id`, the request's identity, SPEC §1.3).
 */
const IDS = ['sessionId', 'agentId', 'uuid', 'parentUuid', 'requestId'] as const;

/**
 * Why a line's flags (FLAGS) or ids (IDS) cannot be read, or null when each flag is a boolean and
 * each id a string, or absent or null: the detail of the line's one `invalid_field` skip. The line
 * itself is still read, as if such a field were absent: its file and a string `agentId` place it
 * (SPEC §1.1), its content tells a prompt, its file names its session. Ingest and the session
 * replay note it by this rule.
 * Example: {isSidechain: "true"} → 'isSidechain = "true" is not a boolean: read as absent';
 * {isMeta: 1, isCompactSummary: true} → 'isMeta = 1 is not a boolean: read as absent';
 * {agentId: 7} → 'agentId = 7 is not a string: read as absent'.
 * A `requestId` that is a whole number is read as its decimal text (requestIdOf), and said so:
 * {requestId: 123} → 'requestId = 123 is not a string: read as "123"'.
 */
export function fieldProblem(l: Line): string | null {
  const bad: string[] = [];
  let read: string | null = null;
  for (const name of FLAGS) {
    const x = l[name];
    if (x !== undefined && x !== null && typeof x !== 'boolean') bad.push(`${name} = ${shown(x)} is not a boolean`);
  }
  for (const name of IDS) {
    const x = l[name];
    if (x === undefined || x === null || typeof x === 'string') continue;
    if (name === 'requestId' && requestIdOf(x) !== null) read = `requestId = ${shown(x)} is not a string: read as ${JSON.stringify(requestIdOf(x))}`;
    else bad.push(`${name} = ${shown(x)} is not a string`);
  }
  const absent = bad.length ? `${bad.join(', ')}: read as absent` : null;
  return absent && read ? `${absent}; ${read}` : (absent ?? read);
}

/**
 * A `requestId` as a request's identity takes it (SPEC §1.3: message.id and requestId): a string as
 * it is, a whole number (up to 2^53 − 1 either way) as its decimal text, anything else as absent (null).
 * A copy of a response written with `"requestId": 123` and one with `"requestId": "123"` are one request:
 * the number was read as absent, its copy keyed by message.id alone, and the response counted twice.
 * Ingest (both readers, and a progress copy's inner requestId), the store's de-dup (by the key the
 * reader makes) and the session replay take it by this rule.
 * Example: "req_1" → "req_1"; 123 → "123"; 1.5, 2^53, true, {…} → null.
 */
export function requestIdOf(x: unknown): string | null {
  return typeof x === 'number' && Number.isSafeInteger(x) ? String(x) : str(x);
}

/**
 * What a progress copy's `requestId` (`data.message.requestId`, `name` as said) that is no string is
 * read as, said as fieldProblem says a line's: a whole number as its text, else as absent; null for
 * a string or none. It was read so without a word.
 * Example: (17, 'data.message.requestId') → 'data.message.requestId = 17 is not a string: read as "17"'.
 */
export function requestIdProblem(x: unknown, name: string): string | null {
  if (x === undefined || x === null || typeof x === 'string') return null;
  const read = requestIdOf(x);
  return `${name} = ${shown(x)} is not a string: read as ${read === null ? 'absent' : JSON.stringify(read)}`;
}

/**
 * Why a line's `type` cannot be read: there (not absent or null, which are no type: counted as
 * `(none)`, SPEC §1.2) but not a string (a number, a boolean, an object, a list). Such a line is an
 * `invalid_type` skip, not read: it was counted as a line of no type, `(none)`, as if it had none, and
 * its usage as usage on a line of no type. Ingest (both readers) and the session replay skip it by this rule.
 * Example: {type: 42} → 'type = 42 is not a string'; {type: {…}, message: {usage: {…}}} →
 * 'type = {…} is not a string (the line holds usage: not counted)'; {type: "user"}, {} → null.
 */
export function typeProblem(l: Line): string | null {
  const x = l.type;
  if (x === undefined || x === null || (typeof x === 'string' && x !== OTHER_OBJECT && x !== OTHER_ARRAY)) return null;
  const usage = obj(l.message)?.usage;
  const value = x === OTHER_OBJECT ? '{…}' : x === OTHER_ARRAY ? '[…]' : shown(x);
  return `type = ${value} is not a string${usage !== undefined && usage !== null ? ' (the line holds usage: not counted)' : ''}`;
}

/** The characters of a too long `type` its count keeps (longTypeName). */
const TYPE_KEPT = 64;

/**
 * The name a line's `type` (or subtype) longer than SHORT_STRING characters (project.ts: no type Claude Code writes is
 * near it; a damaged line's text) is counted by, as an unknown type: its first TYPE_KEPT characters (a
 * surrogate pair not split), '…' and its length. Kept whole, it was stored and put in the report whole
 * (a 20 MB type in a few files ran DuckDB out of memory). Only a type that long is looked at twice:
 * the caller compares the length first.
 * Characters are UTF-16 units, as `length` counts them and docs/store.md says (an emoji is two).
 * Example: "x" × 5,000 → 64 x, then "… (5,000 characters)"; "user" is never passed here.
 */
export function longTypeName(type: string): string {
  const at = (type.charCodeAt(TYPE_KEPT - 1) & 0xfc00) === 0xd800 ? TYPE_KEPT - 1 : TYPE_KEPT;
  return `${type.slice(0, at)}… (${type.length.toLocaleString('en-US')} characters)`;
}

/** The characters of a too long text field its stored form keeps (longText). */
export const TEXT_FIELD_KEPT = 64;

/**
 * What a text field read from a line (an id, a session id, a cwd, a model, an attachment's type…)
 * longer than SHORT_STRING characters (project.ts; none Claude Code writes is near it: a damaged
 * line's text) is stored and shown as: its first TEXT_FIELD_KEPT characters (a surrogate pair not
 * split), '…', its length and the first 16 hex digits of the SHA-256 of the whole (UTF-8). Two
 * different ids so long stay two (the hash), the same one stays one; kept whole, each was stored,
 * keyed and put in the report whole, and a 20 MB one in 12 files ran DuckDB out of memory. The
 * reader looks at a line's fields only when the line is longer than SHORT_STRING bytes (one
 * comparison a line: read-file.ts), then compares each field's length (FileParser.longField), and
 * notes each such field as an invalid_field (`sessionId of 5,000 characters: read as …`).
 * Example: "x" × 5,000 → 64 x, then "… (5,000 characters, sha256 " + 16 hex digits + ")".
 */
export function longText(s: string): string {
  const at = (s.charCodeAt(TEXT_FIELD_KEPT - 1) & 0xfc00) === 0xd800 ? TEXT_FIELD_KEPT - 1 : TEXT_FIELD_KEPT;
  const hash = createHash('sha256').update(s).digest('hex').slice(0, 16);
  return `${s.slice(0, at)}… (${s.length.toLocaleString('en-US')} characters, sha256 ${hash})`;
}

/** A value of the wrong type as a skip's detail names it: short, and the same whether the line was projected or parsed whole. */
function shown(x: unknown): string {
  return typeof x === 'string' ? JSON.stringify(x.slice(0, 40)) : Array.isArray(x) ? '[…]' : typeof x === 'object' ? '{…}' : String(x);
}

export function obj(x: unknown): Record<string, unknown> | null {
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : null;
}

/**
 * A timestamp as an instant: an ISO 8601 date and time with its offset (Z, ±hh:mm, ±hhmm or ±hh),
 * whose date and time exist; anything else null. Date.parse alone takes far more: a time without an offset
 * (read in the machine's own zone), "March 1, 2025", "2025", 2025-02-30 (as 2 March), so the same
 * transcript would land on other days, or count where it should be skipped, by machine. It takes
 * less, too: an offset of hours alone (`+02`), a decimal comma (`00,5`) and a leap second (`23:59:60`
 * UTC at a month's end), each ISO 8601's (RFC 3339's leap second), are read here (each was
 * `usage without a valid timestamp`). A leap second is its day's last millisecond: a millisecond
 * clock has no 61st second, and the line stays before the next day's.
 * Example: parseInstant("2025-03-01T10:00:00.000Z") = 1740823200000; "2025-03-01T10:00:00" → null;
 * "2016-12-31T23:59:60Z" → the time of "2016-12-31T23:59:59.999Z"; "2025-03-01T10:00:60Z" → null.
 */
export function parseInstant(s: string): number | null {
  if (!INSTANT.test(s)) return null;
  if (!isCalendarDay(digits2(s, 0) * 100 + digits2(s, 2), digits2(s, 5), digits2(s, 8))) return null;
  // with a space for the T, V8 falls back to its legacy parser, which reads years 0000-0099 as 19xx/20xx
  let iso = s.charCodeAt(10) === 32 ? `${s.slice(0, 10)}T${s.slice(11)}` : s;
  const leap = iso.charCodeAt(16) === 58 && iso.startsWith('60', 17);
  if (leap || iso.includes(',') || /[+-]\d{2}$/.test(iso)) iso = plainInstant(iso, leap);
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return null;
  if (!leap) return t;
  // a leap second is 23:59:60 UTC on a month's last day, whatever the offset it is written in
  const d = new Date(t);
  return d.getUTCHours() === 23 && d.getUTCMinutes() === 59 && new Date(t + 1000).getUTCDate() === 1 ? t - (((t % 1000) + 1000) % 1000) + 999 : null;
}

/** The forms Date.parse reads of what INSTANT takes: a decimal point, an offset with minutes, second 59 for a leap second's 60. */
function plainInstant(iso: string, leap: boolean): string {
  let out = iso.replace(',', '.');
  if (leap) out = `${out.slice(0, 17)}59${out.slice(19)}`;
  return /[+-]\d{2}$/.test(out) ? `${out}:00` : out;
}

/**
 * A day that exists, by arithmetic (no Date: this runs for every line read, and Date.UTC reads years
 * 0–99 as 1900–1999). Example: isCalendarDay(2024, 2, 29) → true; (2026, 2, 30) → false.
 */
export function isCalendarDay(y: number, m: number, d: number): boolean {
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = m === 2 ? (leap ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
  return m >= 1 && m <= 12 && d >= 1 && d <= days;
}

/** A line's `timestamp` field as epoch milliseconds (parseInstant), NaN when it is no instant. */
export function timeOf(x: unknown): number {
  return typeof x === 'string' ? (parseInstant(x) ?? NaN) : NaN;
}

const INSTANT = /^\d{4}-\d{2}-\d{2}[Tt ]([01]\d|2[0-3]):[0-5]\d(?::(?:[0-5]\d|60)(?:[.,]\d{1,9})?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$/;

function digits2(s: string, i: number): number {
  return (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;
}
