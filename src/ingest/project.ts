/**
 * Lazy JSON projection: read only the fields a schema names out of one JSON line held in a
 * Buffer, skipping everything else without decoding it. Short strings are scanned in JS; long
 * ones are jumped over with the native `indexOf` (memchr), so a 2 MB tool result costs a few
 * scans, not a 2 MB string. Keys are matched against the schema byte by byte, so a key the schema
 * does not name never becomes a string.
 *
 * A schema is `true` (take the whole value), an object of sub-schemas (take those keys of an
 * object value), a one-element array `[schema]` (an array whose elements are projected), or a
 * number n (a string of at most n characters, kept; a longer one is the long string's marker, as
 * below, decoded from no more than its opening: so a short text can be told without decoding every
 * long one).
 * A value whose JSON type does not match its schema is reduced to a `Mismatch` marker: short
 * strings and scalars are kept as they are, long strings become LONG_STRING (with their opening
 * tag, if any: longStringOf), containers become
 * OTHER_OBJECT / OTHER_ARRAY. The streaming path (stream-project.ts) applies the same rules, so
 * both give identical projections of valid JSON. What is skipped is stepped over, not validated: a
 * line malformed only inside a value the schema does not name (a raw tab in a string, `[1,]`) is
 * read here, where JSON.parse, ccusage and the streaming path reject it (lines of 64 MiB or more,
 * read-file.ts). Such lines come only from damaged files; checking every skipped byte would cost
 * the reading its speed.
 *
 * Example: schema `{type: true, message: {id: true}}` on
 * `{"type":"assistant","uuid":"u1","message":{"id":"m1","content":[…2 MB…]}}` returns
 * `{type: "assistant", message: {id: "m1"}}` after decoding only `"assistant"` and `"m1"`. Every
 * key a schema names is on its object, undefined where the line has none (shapeOf).
 */

export type Schema = true | number | SchemaObject | [Schema];
export interface SchemaObject {
  [key: string]: Schema;
}

/** Strings longer than this (UTF-16 units) are not kept where the schema expected a container. */
export const SHORT_STRING = 4096;
export const LONG_STRING = '\u0000long-string';
export const OTHER_OBJECT = '\u0000object';
export const OTHER_ARRAY = '\u0000array';

/** The longest opening tag a long string's marker keeps (longStringOf), in characters. */
const TAG_MAX = 32;

/**
 * The marker of a string too long to keep where the schema expected a container: LONG_STRING,
 * followed by the string's opening tag when it opens with one (`<` up to the first `>`, at most
 * TAG_MAX characters), so that a reader can tell a long local command output from a long prompt
 * without the text (file-parser.ts userLineKind). `head` is the string, or at least its first
 * TAG_MAX characters. Example: "<local-command-stdout>Compacted…" (4,385 characters) →
 * LONG_STRING + "<local-command-stdout>"; "Please review…" → LONG_STRING.
 */
export function longStringOf(head: string): string {
  if (head.charCodeAt(0) !== 0x3c) return LONG_STRING;
  const end = head.indexOf('>');
  return end > 0 && end < TAG_MAX ? LONG_STRING + head.slice(0, end + 1) : LONG_STRING;
}

/** Whether a projected value is the marker of a long string (longStringOf), with its tag or without. */
export function isLongString(x: unknown): x is string {
  return typeof x === 'string' && x.startsWith(LONG_STRING);
}

export class ProjectionError extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Bytes of a string scanned in JS before handing over to the native `indexOf`. */
const JS_SCAN = 48;

/** A schema object prepared for matching keys as bytes: the keys grouped by byte length. */
interface Compiled {
  byLength: (Field[] | undefined)[];
  schema: SchemaObject;
  /** a new object for this schema's keys (shapeOf) */
  make: () => Record<string, unknown>;
}

interface Field {
  name: string;
  bytes: Uint8Array;
  sub: Schema;
  nested: Compiled | null;
}

const compiledSchemas = new WeakMap<SchemaObject, Compiled>();

function compiled(schema: SchemaObject): Compiled {
  let c = compiledSchemas.get(schema);
  if (c) return c;
  c = { byLength: [], schema, make: shapeOf(schema) };
  compiledSchemas.set(schema, c);
  for (const name of Object.keys(schema)) {
    // a name a plain key can never spell (non-ASCII, backslash) is left to the decoding path (keyField)
    if (/[^\x00-\x7e]|\\/.test(name)) continue;
    const bytes = Buffer.from(name, 'latin1');
    (c.byLength[bytes.length] ??= []).push({ name, bytes, sub: schema[name], nested: nestedOf(schema[name]) });
  }
  return c;
}

/**
 * Makes the objects a schema's values are projected into: every key of the schema already there,
 * undefined, in the schema's order, whatever the line holds. So every projected object of one
 * schema has one shape (V8's hidden class), and the code reading lines sees one shape where it
 * saw as many as the lines had orders and subsets of keys (deoptimizations in a cold 1 GB run 100
 * → 83). Cold 1 GB ingests, 16 interleaved pairs: faster in 13, by ~0.1 – 0.3 s of ~5.9 (medians
 * 5.87 → 5.78 s and user CPU 8.08 → 7.98 s in the last 9; BENCHMARKS-log.md, Cold, session 34).
 * An object literal made by a function of its own is allocated with its keys in place; spreading
 * a template object gave no gain. Keys are written as JSON strings, which are JS string literals
 * too; a key spelled `__proto__` gets no place (in a literal it would set the prototype), so a
 * line's value for it is set as on any object, as before.
 * Example: shapeOf({type: true, message: {id: true}})() returns `{type: undefined, message: undefined}`.
 */
export function shapeOf(schema: SchemaObject): () => Record<string, unknown> {
  const keys = Object.keys(schema).filter((k) => k !== '__proto__');
  try {
    return new Function(`return () => ({${keys.map((k) => `${JSON.stringify(k)}: undefined`).join(', ')}});`)() as () => Record<string, unknown>;
  } catch {
    // code from strings disallowed (`--disallow-code-generation-from-strings`): unshaped objects,
    // which every reader of lines takes as well
    return () => ({});
  }
}

/** A new object for `schema`'s keys, as projectLine makes them: stream-project.ts makes its own alike. */
export function shaped(schema: SchemaObject): Record<string, unknown> {
  return compiled(schema).make();
}

/** The compiled object schema a value under `s` needs: its own, or its elements' for an array. */
function nestedOf(s: Schema): Compiled | null {
  return s === true || typeof s === 'number' ? null : Array.isArray(s) ? nestedOf(s[0]) : compiled(s);
}

/** Project the JSON object in buf[start, end). Throws ProjectionError on malformed input. */
export function projectLine(buf: Buffer, start: number, end: number, schema: SchemaObject): Record<string, unknown> {
  const p = new Projector(buf, end);
  let i = p.ws(start);
  if (buf[i] !== LBRACE) throw new ProjectionError('not a JSON object');
  const c = compiled(schema);
  const out = c.make();
  i = p.object(i, c, out);
  i = p.ws(i);
  if (i !== end) throw new ProjectionError('unexpected data after the JSON value');
  return out;
}

class Projector {
  constructor(
    private readonly buf: Buffer,
    private readonly end: number,
  ) {}

  ws(i: number): number {
    const b = this.buf;
    while (i < this.end) {
      const c = b[i];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    return i;
  }

  /**
   * i at an opening quote; returns the index after the closing quote. The first bytes are
   * scanned here (escapes step over the byte they escape); a longer string is finished with
   * `indexOf` and the backslash-parity rule, which holds wherever the search starts.
   */
  stringEnd(i: number): number {
    const b = this.buf;
    const end = this.end;
    let j = i + 1;
    const stop = Math.min(end, j + JS_SCAN);
    while (j < stop) {
      const c = b[j];
      if (c === QUOTE) return j + 1;
      j += c === BACKSLASH ? 2 : 1;
    }
    for (;;) {
      const q = b.indexOf(QUOTE, j);
      if (q < 0 || q >= end) throw new ProjectionError('unterminated string');
      let k = q - 1;
      while (b[k] === BACKSLASH) k--;
      if ((q - 1 - k) % 2 === 0) return q + 1;
      j = q + 1;
    }
  }

  /** Skip one value starting at i (no leading whitespace); returns the index after it. */
  skip(i: number): number {
    const b = this.buf;
    const c = b[i];
    if (c === QUOTE) return this.stringEnd(i);
    if (c === LBRACE || c === LBRACKET) {
      let depth = 0;
      while (i < this.end) {
        const d = b[i];
        if (d === QUOTE) {
          i = this.stringEnd(i);
          continue;
        }
        if (d === LBRACE || d === LBRACKET) depth++;
        else if (d === RBRACE || d === RBRACKET) {
          depth--;
          if (depth === 0) return i + 1;
        }
        i++;
      }
      throw new ProjectionError('unterminated object or array');
    }
    // number, true, false, null
    let j = i;
    while (j < this.end) {
      const d = b[j];
      if (d === COMMA || d === RBRACE || d === RBRACKET || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
      j++;
    }
    if (j === i) throw new ProjectionError('missing value');
    return j;
  }

  /**
   * The value in [i, j), as JSON.parse would give it. Plain strings (no escape, no control
   * character), small integers and literals are decoded here; anything else, and anything
   * malformed, goes to JSON.parse, so results and error messages are JSON.parse's own.
   */
  parse(i: number, j: number): unknown {
    const b = this.buf;
    const c = b[i];
    if (c === QUOTE) {
      if (b[j - 1] === QUOTE && j - i >= 2) {
        let ascii = true;
        let k = i + 1;
        for (; k < j - 1; k++) {
          const d = b[k];
          if (d === BACKSLASH || d < 0x20) break;
          if (d > 0x7e) ascii = false;
        }
        if (k === j - 1) return ascii ? b.latin1Slice(i + 1, j - 1) : b.utf8Slice(i + 1, j - 1);
      }
    } else if ((c >= ZERO && c <= NINE) || c === MINUS) {
      const n = smallInteger(b, i, j);
      if (n !== null) return n;
    } else if (j - i === 4 && c === 0x74 && b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65) return true;
    else if (j - i === 5 && c === 0x66 && b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65) return false;
    else if (j - i === 4 && c === 0x6e && b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c) return null;
    try {
      return JSON.parse(b.toString('utf8', i, j));
    } catch (err) {
      throw new ProjectionError((err as Error).message);
    }
  }

  /** Read a value at i under `schema` (`nested` = nestedOf(schema)) into out[key]; returns the index after the value. */
  value(i: number, schema: Schema, nested: Compiled | null, out: Record<string, unknown> | unknown[], key: string | number): number {
    const c = this.buf[i];
    if (schema === true) {
      const j = this.skip(i);
      (out as Record<string | number, unknown>)[key] = (c === LBRACE || c === LBRACKET) && j - i >= SHARED_MIN ? this.shared(i, j) : this.parse(i, j);
      return j;
    }
    if (typeof schema === 'number') {
      const j = this.skip(i);
      (out as Record<string | number, unknown>)[key] = c === QUOTE ? this.bounded(i, j, schema) : this.mismatch(i, j);
      return j;
    }
    if (Array.isArray(schema)) {
      if (c === LBRACKET) {
        const arr: unknown[] = [];
        const j = this.array(i, schema[0], nested, arr);
        (out as Record<string | number, unknown>)[key] = arr;
        return j;
      }
    } else if (c === LBRACE) {
      const c = nested ?? compiled(schema);
      const obj = c.make();
      const j = this.object(i, c, obj);
      (out as Record<string | number, unknown>)[key] = obj;
      return j;
    }
    const j = this.skip(i);
    (out as Record<string | number, unknown>)[key] = this.mismatch(i, j);
    return j;
  }

  /** The container in [i, j), parsed once per thread for the same bytes (SHARED_MIN). */
  shared(i: number, j: number): unknown {
    // latin1 maps bytes to chars one to one, so equal keys are equal bytes whatever the encoding
    const key = this.buf.latin1Slice(i, j);
    const known = sharedValues.get(key);
    if (known !== undefined) return known;
    const value = this.parse(i, j);
    if (sharedBytes + key.length > SHARED_BUDGET) {
      sharedValues.clear();
      sharedBytes = 0;
    }
    sharedValues.set(key, value);
    sharedBytes += key.length;
    return value;
  }

  mismatch(i: number, j: number): unknown {
    const c = this.buf[i];
    if (c === LBRACE) return OTHER_OBJECT;
    if (c === LBRACKET) return OTHER_ARRAY;
    if (c !== QUOTE) return this.parse(i, j);
    // Decoded length is at least a sixth of the encoded one (`\uXXXX`), so a long one is known without decoding.
    if (j - i - 2 > 6 * SHORT_STRING) return longStringOf(this.head(i, j));
    const s = this.parse(i, j) as string;
    return s.length > SHORT_STRING ? longStringOf(s) : s;
  }

  /**
   * The string token in [i, j) under a number schema n: itself when it has at most n characters,
   * else its marker (longStringOf). Its bytes bound its length (each character takes 1 to 6), so
   * only a string of n to 6n bytes is decoded to be measured; a longer one that opens with neither
   * `<` nor an escape is the bare marker without decoding any of it.
   */
  bounded(i: number, j: number, n: number): string {
    const bytes = j - i - 2;
    if (bytes > 6 * n) {
      const c = this.buf[i + 1];
      return c === 0x3c || c === BACKSLASH ? longStringOf(this.head(i, j)) : LONG_STRING;
    }
    const s = this.parse(i, j) as string;
    return bytes <= n || s.length <= n ? s : longStringOf(s);
  }

  /**
   * The first TAG_MAX characters (or more) of the string token in [i, j), decoded from no more of
   * it than they take (6 bytes each at most), cut after a whole escape and before a UTF-8
   * sequence's continuation; '' when that prefix does not decode.
   */
  head(i: number, j: number): string {
    const b = this.buf;
    const stop = Math.min(j - 1, i + 1 + 6 * TAG_MAX);
    let k = i + 1;
    while (k < stop) k += b[k] === BACKSLASH ? (b[k + 1] === 0x75 ? 6 : 2) : 1;
    k = Math.min(k, j - 1);
    while (k > i + 1 && (b[k] & 0xc0) === 0x80) k--;
    try {
      return JSON.parse(`${b.toString('utf8', i, k)}"`) as string;
    } catch {
      return '';
    }
  }

  object(i: number, schema: Compiled, out: Record<string, unknown>): number {
    const b = this.buf;
    i = this.ws(i + 1);
    if (b[i] === RBRACE) return i + 1;
    for (;;) {
      if (b[i] !== QUOTE) throw new ProjectionError('expected a key');
      // A plain key (printable ASCII, no escape) is matched as bytes; any other is decoded first.
      let k = i + 1;
      let field: Field | undefined | null = null;
      let ke = -1;
      const stop = Math.min(this.end, k + JS_SCAN);
      for (; k < stop; k++) {
        const d = b[k];
        if (d === QUOTE) {
          ke = k + 1;
          field = match(b, i + 1, k, schema);
          break;
        }
        if (d === BACKSLASH || d > 0x7e) break;
      }
      if (ke < 0) {
        ke = this.stringEnd(i);
        field = this.keyField(i, ke, schema);
      }
      i = this.ws(ke);
      if (b[i] !== COLON) throw new ProjectionError('expected a colon');
      i = this.ws(i + 1);
      i = field ? this.value(i, field.sub, field.nested, out, field.name) : this.skip(i);
      i = this.ws(i);
      const d = b[i];
      if (d === COMMA) {
        i = this.ws(i + 1);
        continue;
      }
      if (d === RBRACE) return i + 1;
      throw new ProjectionError('expected a comma or a closing brace');
    }
  }

  array(i: number, schema: Schema, nested: Compiled | null, out: unknown[]): number {
    const b = this.buf;
    i = this.ws(i + 1);
    if (b[i] === RBRACKET) return i + 1;
    for (;;) {
      i = this.value(i, schema, nested, out, out.length);
      i = this.ws(i);
      const d = b[i];
      if (d === COMMA) {
        i = this.ws(i + 1);
        continue;
      }
      if (d === RBRACKET) return i + 1;
      throw new ProjectionError('expected a comma or a closing bracket');
    }
  }

  /** The field of a key that needs decoding (escapes, non-ASCII, or longer than the byte scan). */
  keyField(i: number, j: number, schema: Compiled): Field | undefined {
    const b = this.buf;
    let key: string | null = null;
    for (let k = i + 1; k < j - 1; k++) {
      if (b[k] === BACKSLASH || b[k] > 0x7e) {
        key = this.parse(i, j) as string;
        break;
      }
    }
    key ??= b.latin1Slice(i + 1, j - 1);
    if (!Object.prototype.hasOwnProperty.call(schema.schema, key)) return undefined;
    const sub = schema.schema[key];
    return { name: key, bytes: new Uint8Array(0), sub, nested: nestedOf(sub) };
  }
}

/**
 * Whole containers of at least this many bytes are parsed once per thread and shared: Claude Code
 * writes the same attachment (a skill listing of ~16 KB, an agent listing) into every session, so
 * most of them are byte-for-byte repeats. A shared value is the same object for the same bytes
 * (callers may key their own caches on it) and must not be mutated.
 */
export const SHARED_MIN = 512;
/** Bytes of keys kept before the table is emptied (latin1 strings: one byte per byte of JSON). */
const SHARED_BUDGET = 4 * 1024 * 1024;
const sharedValues = new Map<string, unknown>();
let sharedBytes = 0;

/** The schema field whose name is exactly the bytes [s, e), if any. */
function match(b: Buffer, s: number, e: number, schema: Compiled): Field | undefined {
  const fields = schema.byLength[e - s];
  if (fields === undefined) return undefined;
  for (let f = 0; f < fields.length; f++) {
    const bytes = fields[f].bytes;
    let k = 0;
    while (k < bytes.length && b[s + k] === bytes[k]) k++;
    if (k === bytes.length) return fields[f];
  }
  return undefined;
}

/** An integer of at most 15 digits in JSON syntax, or null (leave it to JSON.parse). */
function smallInteger(b: Buffer, i: number, j: number): number | null {
  let k = i;
  const negative = b[k] === MINUS;
  if (negative) k++;
  const digits = j - k;
  if (digits < 1 || digits > 15) return null;
  if (b[k] === ZERO && digits > 1) return null;
  let n = 0;
  for (; k < j; k++) {
    const d = b[k] - ZERO;
    if (d < 0 || d > 9) return null;
    n = n * 10 + d;
  }
  return negative ? (n === 0 ? -0 : -n) : n;
}

// Node's Buffer has these (toString without its argument checks); @types/node does not list them.
declare global {
  interface Buffer {
    latin1Slice(start: number, end: number): string;
    utf8Slice(start: number, end: number): string;
  }
}
