/**
 * The streaming twin of project.ts, for lines too long to hold as one string (hundreds of MB:
 * V8 cannot make strings past ~512 MB, and JSON.parse would double the memory). stream-json's
 * tokenizer is fed the line in chunks; only the values the schema names are assembled, every
 * other string goes by chunk by chunk and is dropped. Same schema, same mismatch rules, so the
 * projection equals projectLine's for any line both can read.
 *
 * Example: a 300 MB `user` line whose tool_result text is one giant string streams through in
 * 16 MB pieces; the result holds `type`, `message.content[0].type` = "tool_result" and
 * `toolUseResult`, never the text.
 */
import { StringDecoder } from 'node:string_decoder';
import { jsonParser } from 'stream-json/core/parser.js';
import { getManyValues, isMany, none } from 'stream-chain/defs.js';
import { OTHER_ARRAY, OTHER_OBJECT, ProjectionError, SHORT_STRING, type Schema, type SchemaObject, longStringOf, shaped } from './project.js';

/** bytes handed to the tokenizer per call (see write) */
const FEED = 64 * 1024;

type Slot = Record<string, unknown> | unknown[];

type Frame =
  | { t: 'obj'; schema: SchemaObject | null; out: Record<string, unknown>; key: string | null }
  | { t: 'arr'; elem: Schema | null; out: unknown[] }
  | { t: 'skip'; depth: number };

interface OpenString {
  mode: 'full' | 'mismatch' | 'skip';
  /** the most characters a mismatched string keeps (SHORT_STRING, or a number schema's own) */
  limit: number;
  slot: Slot | null;
  key: string | number;
  parts: string[];
  length: number;
}

interface Token {
  name: string;
  value?: unknown;
}

/**
 * Puts a value under a key as JSON.parse does: a key named `__proto__` becomes an own property
 * (a plain assignment would set the object's prototype and lose the key, so an attachment holding
 * one would hash otherwise than on the buffer path). Example: {"__proto__":{"a":1}} keeps its key.
 */
function setKey(slot: Slot, key: string | number, v: unknown): void {
  if (key === '__proto__') Object.defineProperty(slot, key, { value: v, writable: true, enumerable: true, configurable: true });
  else (slot as Record<string | number, unknown>)[key] = v;
}

export class StreamProjector {
  private readonly parse = jsonParser({
    packKeys: true,
    streamKeys: false,
    packStrings: false,
    streamStrings: true,
    packNumbers: true,
    streamNumbers: false,
  });
  private readonly decoder = new StringDecoder('utf8');
  private readonly stack: Frame[] = [];
  private str: OpenString | null = null;
  private result: Record<string, unknown> | null = null;
  private done = false;
  /** the first error met while writing: the line is invalid, the rest of it is only passed over */
  private failed: ProjectionError | null = null;

  constructor(private readonly schema: SchemaObject) {}

  /**
   * stream-json returns every token of one call in one array, and a string body makes a token per
   * 256 characters and per escape: fed a 64 MB chunk at once, a 300 MB line peaked at 3 GB and
   * took 95 s. Fed in FEED-byte slices, the tokens in flight stay small and the tokenizer's
   * buffer short.
   */
  write(chunk: Buffer): void {
    if (this.failed) return;
    try {
      for (let s = 0; s < chunk.length; s += FEED) this.feed(this.decoder.write(chunk.subarray(s, s + FEED)));
    } catch (err) {
      // Kept for end(): the reader still has to reach this line's newline before it skips the
      // line, and a throw here escaped it and lost the whole file.
      this.failed = err instanceof ProjectionError ? err : new ProjectionError((err as Error).message);
    }
  }

  end(): Record<string, unknown> {
    if (this.failed) throw this.failed;
    this.feed(this.decoder.end());
    this.consume(this.call(none));
    if (!this.result || !this.done) throw new ProjectionError('incomplete JSON value');
    return this.result;
  }

  private feed(text: string): void {
    if (text.length > 0) this.consume(this.call(text));
  }

  private call(input: unknown): unknown {
    try {
      return (this.parse as unknown as (x: unknown) => unknown)(input);
    } catch (err) {
      throw new ProjectionError((err as Error).message);
    }
  }

  private consume(r: unknown): void {
    if (r === none) return;
    if (isMany(r)) {
      for (const t of getManyValues(r) as Token[]) this.token(t);
    } else this.token(r as Token);
  }

  private token(tk: Token): void {
    const top = this.stack[this.stack.length - 1];
    if (top?.t === 'skip') {
      if (tk.name === 'startObject' || tk.name === 'startArray') top.depth++;
      else if (tk.name === 'endObject' || tk.name === 'endArray') {
        if (--top.depth === 0) this.pop();
      }
      return;
    }
    switch (tk.name) {
      case 'keyValue':
        if (top?.t === 'obj') top.key = tk.value as string;
        return;
      case 'startString':
        this.startValue('string');
        return;
      case 'stringChunk':
        this.stringChunk(tk.value as string);
        return;
      case 'endString':
        this.endString();
        return;
      case 'startObject':
        this.startValue('object');
        return;
      case 'startArray':
        this.startValue('array');
        return;
      case 'endObject':
      case 'endArray':
        this.pop();
        return;
      case 'numberValue':
        this.scalar(Number(tk.value));
        return;
      case 'trueValue':
      case 'falseValue':
      case 'nullValue':
        this.scalar(tk.value);
        return;
    }
  }

  /** The schema for the value about to start, and the slot it goes to. */
  private slot(): { sub: Schema | undefined; slot: Slot | null; key: string | number } {
    const top = this.stack[this.stack.length - 1];
    if (!top) return { sub: undefined, slot: null, key: '' };
    if (top.t === 'obj') {
      const key = top.key ?? '';
      top.key = null;
      const sub = top.schema === null ? true : Object.prototype.hasOwnProperty.call(top.schema, key) ? top.schema[key] : undefined;
      return { sub, slot: top.out, key };
    }
    if (top.t === 'arr') return { sub: top.elem === null ? true : top.elem, slot: top.out, key: top.out.length };
    return { sub: undefined, slot: null, key: '' };
  }

  private startValue(kind: 'string' | 'object' | 'array'): void {
    if (this.stack.length === 0) {
      if (this.result || kind !== 'object') throw new ProjectionError('not a JSON object');
      this.result = shaped(this.schema);
      this.stack.push({ t: 'obj', schema: this.schema, out: this.result, key: null });
      return;
    }
    const { sub, slot, key } = this.slot();
    if (kind === 'string') {
      const mode = sub === undefined ? 'skip' : sub === true ? 'full' : 'mismatch';
      this.str = { mode, limit: typeof sub === 'number' ? sub : SHORT_STRING, slot, key, parts: [], length: 0 };
      return;
    }
    if (sub === undefined) {
      this.stack.push({ t: 'skip', depth: 1 });
      return;
    }
    const put = (v: unknown) => setKey(slot!, key, v);
    if (kind === 'object' && (sub === true || (typeof sub === 'object' && !Array.isArray(sub)))) {
      const out = sub === true ? {} : shaped(sub as SchemaObject);
      put(out);
      this.stack.push({ t: 'obj', schema: sub === true ? null : (sub as SchemaObject), out, key: null });
    } else if (kind === 'array' && (sub === true || Array.isArray(sub))) {
      const out: unknown[] = [];
      put(out);
      this.stack.push({ t: 'arr', elem: sub === true ? null : sub[0], out });
    } else {
      put(kind === 'object' ? OTHER_OBJECT : OTHER_ARRAY);
      this.stack.push({ t: 'skip', depth: 1 });
    }
  }

  private stringChunk(s: string): void {
    const o = this.str;
    if (!o || o.mode === 'skip') return;
    if (o.mode === 'mismatch' && o.length > o.limit) return;
    o.parts.push(s);
    o.length += s.length;
  }

  private endString(): void {
    const o = this.str;
    this.str = null;
    if (!o || o.mode === 'skip' || !o.slot) return;
    const value = o.mode === 'mismatch' && o.length > o.limit ? longStringOf(o.parts.join('')) : o.parts.join('');
    setKey(o.slot, o.key, value);
  }

  private scalar(v: unknown): void {
    if (this.stack.length === 0) throw new ProjectionError('not a JSON object');
    const { sub, slot, key } = this.slot();
    if (sub !== undefined && slot) setKey(slot, key, v);
  }

  private pop(): void {
    this.stack.pop();
    if (this.stack.length === 0) this.done = true;
  }
}
