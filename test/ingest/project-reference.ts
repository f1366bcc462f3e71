/**
 * The oracle for project.test.ts: the lazy projector exactly as first written (commit 190c842),
 * before it was made fast. The fast one must give the same projection, and throw the same
 * ProjectionError message, on every input. Kept as it was below this comment (only the error
 * class is shared, so that errors compare by class too); do not optimise it.
 */
import { ProjectionError } from '../../src/ingest/project.js';

/**
 * Lazy JSON projection: read only the fields a schema names out of one JSON line held in a
 * Buffer, skipping everything else without decoding it. Strings are jumped over with the native
 * `indexOf` (memchr), so a 2 MB tool result costs a few scans, not a 2 MB string.
 *
 * A schema is `true` (take the whole value), an object of sub-schemas (take those keys of an
 * object value), or a one-element array `[schema]` (an array whose elements are projected).
 * A value whose JSON type does not match its schema is reduced to a `Mismatch` marker: short
 * strings and scalars are kept as they are, long strings become LONG_STRING (followed by their
 * opening tag, when they open with one of at most 32 characters), containers become
 * OTHER_OBJECT / OTHER_ARRAY. The streaming path (stream-project.ts) applies the same rules, so
 * both give identical projections.
 *
 * Example: schema `{type: true, message: {id: true}}` on
 * `{"type":"assistant","uuid":"u1","message":{"id":"m1","content":[…2 MB…]}}` returns
 * `{type: "assistant", message: {id: "m1"}}` after parsing only `"assistant"` and `"m1"`.
 */

export type Schema = true | number | SchemaObject | [Schema];
export interface SchemaObject {
  [key: string]: Schema;
}

/** Strings longer than this (UTF-16 units) are not kept where the schema expected a container. */
const SHORT_STRING = 4096;
const LONG_STRING = '\u0000long-string';
const OTHER_OBJECT = '\u0000object';
const OTHER_ARRAY = '\u0000array';

/** A long string's marker: LONG_STRING and the tag `text` opens with (`<…>`, at most 32 characters), if any. */
function longString(text: string): string {
  const tag = /^<[^>]{0,30}>/.exec(text);
  return tag ? LONG_STRING + tag[0] : LONG_STRING;
}



const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Project the JSON object in buf[start, end). Throws ProjectionError on malformed input. */
export function projectLine(buf: Buffer, start: number, end: number, schema: SchemaObject): Record<string, unknown> {
  const p = new Projector(buf, end);
  let i = p.ws(start);
  if (buf[i] !== LBRACE) throw new ProjectionError('not a JSON object');
  const out: Record<string, unknown> = {};
  i = p.object(i, schema, out);
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

  /** i at an opening quote; returns the index after the closing quote. */
  stringEnd(i: number): number {
    const b = this.buf;
    let j = i + 1;
    for (;;) {
      const q = b.indexOf(QUOTE, j);
      if (q < 0 || q >= this.end) throw new ProjectionError('unterminated string');
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

  parse(i: number, j: number): unknown {
    try {
      return JSON.parse(this.buf.toString('utf8', i, j));
    } catch (err) {
      throw new ProjectionError((err as Error).message);
    }
  }

  /** Read a value at i under `schema` into out[key]; returns the index after the value. */
  value(i: number, schema: Schema, out: Record<string, unknown> | unknown[], key: string | number): number {
    const c = this.buf[i];
    if (schema === true) {
      const j = this.skip(i);
      (out as Record<string | number, unknown>)[key] = this.parse(i, j);
      return j;
    }
    // added with the number schema (a text block's first 64 characters): the whole string decoded, then measured
    if (typeof schema === 'number') {
      const j = this.skip(i);
      const s = c === QUOTE ? (this.parse(i, j) as string) : null;
      (out as Record<string | number, unknown>)[key] = s === null ? this.mismatch(i, j) : s.length <= schema ? s : longString(s);
      return j;
    }
    if (Array.isArray(schema)) {
      if (c === LBRACKET) {
        const arr: unknown[] = [];
        const j = this.array(i, schema[0], arr);
        (out as Record<string | number, unknown>)[key] = arr;
        return j;
      }
    } else if (c === LBRACE) {
      const obj: Record<string, unknown> = {};
      const j = this.object(i, schema, obj);
      (out as Record<string | number, unknown>)[key] = obj;
      return j;
    }
    const j = this.skip(i);
    (out as Record<string | number, unknown>)[key] = this.mismatch(i, j);
    return j;
  }

  mismatch(i: number, j: number): unknown {
    const c = this.buf[i];
    if (c === LBRACE) return OTHER_OBJECT;
    if (c === LBRACKET) return OTHER_ARRAY;
    if (c !== QUOTE) return this.parse(i, j);
    // Decoded length is at least a sixth of the encoded one (`\uXXXX`), so a long one is known without decoding.
    if (j - i - 2 > 6 * SHORT_STRING) return longString(this.prefix(i, j));
    const s = this.parse(i, j) as string;
    return s.length > SHORT_STRING ? longString(s) : s;
  }

  /** The text of the first 192 bytes or so of the string token at i (whole escapes and characters), '' if they do not decode. */
  prefix(i: number, j: number): string {
    let k = i + 1;
    while (k < Math.min(j - 1, i + 193)) k += this.buf[k] === BACKSLASH ? (this.buf[k + 1] === 0x75 ? 6 : 2) : 1;
    k = Math.min(k, j - 1);
    while (k > i + 1 && this.buf[k] >= 0x80 && this.buf[k] < 0xc0) k--;
    try {
      return JSON.parse(this.buf.toString('utf8', i, k) + '"') as string;
    } catch {
      return '';
    }
  }

  object(i: number, schema: SchemaObject, out: Record<string, unknown>): number {
    const b = this.buf;
    i = this.ws(i + 1);
    if (b[i] === RBRACE) return i + 1;
    for (;;) {
      if (b[i] !== QUOTE) throw new ProjectionError('expected a key');
      const ke = this.stringEnd(i);
      const key = this.key(i, ke);
      i = this.ws(ke);
      if (b[i] !== COLON) throw new ProjectionError('expected a colon');
      i = this.ws(i + 1);
      const sub = Object.prototype.hasOwnProperty.call(schema, key) ? schema[key] : undefined;
      i = sub === undefined ? this.skip(i) : this.value(i, sub, out, key);
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

  array(i: number, schema: Schema, out: unknown[]): number {
    const b = this.buf;
    i = this.ws(i + 1);
    if (b[i] === RBRACKET) return i + 1;
    for (;;) {
      i = this.value(i, schema, out, out.length);
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

  key(i: number, j: number): string {
    const b = this.buf;
    for (let k = i + 1; k < j - 1; k++) {
      if (b[k] === BACKSLASH || b[k] > 0x7e) return this.parse(i, j) as string;
    }
    return b.toString('latin1', i + 1, j - 1);
  }
}
