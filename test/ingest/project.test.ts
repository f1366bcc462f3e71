/**
 * The fast projector (src/ingest/project.ts) against the projector as first written
 * (project-reference.ts): same projection and same error on every real and sample line, on
 * generated JSON shaped like transcript lines, and on those lines damaged byte by byte.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import fc from 'fast-check';
import { LINE_SCHEMA, TEXT_KEPT } from '../../src/ingest/line.js';
import { LONG_STRING, OTHER_ARRAY, OTHER_OBJECT, projectLine, SHARED_MIN, type Schema, type SchemaObject } from '../../src/ingest/project.js';
import { REAL_LOGS, REPO, transcripts } from '../helpers/corpus.js';
import { StreamProjector } from '../../src/ingest/stream-project.js';
import { projectLine as referenceProjectLine } from './project-reference.js';

type Outcome = { value: unknown } | { error: string; cls: string };

function run(f: typeof projectLine, buf: Buffer, s: number, e: number, schema: SchemaObject): Outcome {
  try {
    return { value: f(buf, s, e, schema) };
  } catch (err) {
    return { error: (err as Error).message, cls: (err as Error).constructor.name };
  }
}

/**
 * The fast projector's value as the reference gives it: each object projected under a schema
 * object holds every key of it in its order (project.ts shapeOf), which is checked here, and those
 * the line did not have (undefined) are dropped.
 */
function unshaped(v: unknown, schema: Schema): unknown {
  if (schema === true || v === null || typeof v !== 'object') return v;
  if (Array.isArray(schema)) return Array.isArray(v) ? v.map((x) => unshaped(x, schema[0])) : v;
  if (Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(schema).filter((k) => k !== '__proto__');
  assert.deepStrictEqual(Object.keys(o), keys, 'a projected object has its schema\'s keys, in order');
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) if (o[k] !== undefined) Object.defineProperty(out, k, { value: unshaped(o[k], schema[k]), enumerable: true, writable: true, configurable: true });
  return out;
}

/** projectLine's value without the keys the line did not have (unshaped). */
function projected(buf: Buffer, s: number, e: number, schema: SchemaObject = LINE_SCHEMA): unknown {
  return unshaped(projectLine(buf, s, e, schema), schema);
}

/** Both projectors on buf[s, e); Object.is-exact (keeps -0 apart from 0). */
function agree(buf: Buffer, s = 0, e = buf.length, schema: SchemaObject = LINE_SCHEMA): void {
  const fast = run(projectLine, buf, s, e, schema);
  const ref = run(referenceProjectLine, buf, s, e, schema);
  const asRef = 'value' in fast ? { value: unshaped(fast.value, schema) } : fast;
  assert.deepStrictEqual(asRef, ref, `line: ${buf.toString('utf8', s, Math.min(e, s + 200))}`);
}

function eachLine(file: string, fn: (buf: Buffer, s: number, e: number) => void): number {
  const buf = readFileSync(file);
  let s = 0;
  let n = 0;
  while (s < buf.length) {
    let e = buf.indexOf(0x0a, s);
    if (e < 0) e = buf.length;
    if (e > s) {
      fn(buf, s, e);
      n++;
    }
    s = e + 1;
  }
  return n;
}

test('agrees with the reference on every line of the real logs and the sample corpus', () => {
  const files = [...transcripts(REAL_LOGS), ...transcripts(join(REPO, 'sample-logs'))];
  let lines = 0;
  for (const f of files) lines += eachLine(f, (buf, s, e) => agree(buf, s, e));
  assert.ok(lines > 5000, `only ${lines} lines`);
});

test('a line is projected in the middle of a larger buffer exactly as on its own', () => {
  const line = '{"type":"user","message":{"content":"tail \\" quote"},"sessionId":"s"}';
  const buf = Buffer.from(`garbage"\\\n${line}\n{"more":"`);
  const s = buf.indexOf('{"type"');
  agree(buf, s, s + Buffer.byteLength(line));
  assert.deepEqual(projected(buf, s, s + Buffer.byteLength(line)), {
    type: 'user',
    message: { content: 'tail " quote' },
    sessionId: 's',
  });
});

test('hand-picked edge cases agree', () => {
  const cases = [
    '{}',
    ' {"type":"assistant"} ',
    '{"type":-0,"uuid":12345678901234567890,"requestId":1e3,"cwd":-12.5,"isMeta":true,"agentId":false,"subtype":null}',
    '{"type":01}',
    '{"type":-}',
    '{"type":tru}',
    '{"type":nulll}',
    '{"type":"a\\u0000b","sessionId":"\\ud800","cwd":"caf\u00e9","uuid":"\\/"}',
    '{"t\\u0079pe":"escaped key","\u00e9":"non-ascii key","type\\"x":1}',
    '{"type":"raw\ttab"}',
    `{"message":{"content":"${'x'.repeat(5000)}"},"attachment":"${'y'.repeat(30000)}"}`,
    `{"message":{"content":"${'\\n'.repeat(4097)}"}}`,
    '{"message":{"content":[{"type":"tool_use","name":"Task","input":{"prompt":"p","subagent_type":"x"}},"str",1,[2]]}}',
    '{"message":{"content":{"type":"object where an array is expected"}},"data":[1,2]}',
    '{"message":[1],"toolUseResult":"Error: string result","attachment":{"b":1,"a":[{"y":2,"x":1}]}}',
    '{"type":"x",}',
    '{"type":"x" "uuid":"y"}',
    '{"type":"unterminated',
    '{"type":"x"',
    '{"type" "x"}',
    '{type:"x"}',
    '[1,2]',
    '{"type":"x"} trailing',
    '{"message":{"usage":{"input_tokens":1,"cache_creation":{"ephemeral_5m_input_tokens":2}}}}',
    `{"${'k'.repeat(60)}":1,"${'type'}":"after a long key"}`,
    '{"type":"\\\\","uuid":"\\\\\\"","cwd":"a\\\\\\\\"}',
    `{"type":"${'\\\\'.repeat(30)}\\"${'a'.repeat(40)}"}`,
  ];
  for (const c of cases) agree(Buffer.from(c));
  assert.deepEqual(projected(Buffer.from(cases[10]), 0, Buffer.byteLength(cases[10])), {
    message: { content: LONG_STRING },
    attachment: 'y'.repeat(30000),
  });
  const mixed = Buffer.from(cases[13]);
  assert.deepEqual(projected(mixed, 0, mixed.length), {
    message: { content: OTHER_OBJECT },
    data: OTHER_ARRAY,
  });
});

test('a long string keeps its opening tag in its marker (a long local command output), on every path and at every length', () => {
  const tag = '<local-command-stdout>';
  const content = (body: string) => `{"type":"user","message":{"content":${JSON.stringify(body)}}}`;
  const cases: [string, string][] = [
    // decoded whole (at most 6 × SHORT_STRING bytes), then too long to keep
    [content(`${tag}\u001b[2mCompacted\u001b[22m ${'x'.repeat(5000)}`), LONG_STRING + tag],
    // not decoded: only the head is (escapes and multi-byte characters right after the tag)
    [content(`${tag}\u001b[2m${'é😀\u0001"'.repeat(6000)}`), LONG_STRING + tag],
    [content(`${'😀'.repeat(20)}${tag}${'\u0001'.repeat(30000)}`), LONG_STRING],
    // no tag: an opening '<' without a '>' within 32 characters, or text before the tag
    [content(`<${'a'.repeat(31)}>${'y'.repeat(30000)}`), LONG_STRING],
    [content(`<${'a'.repeat(30)}>${'y'.repeat(30000)}`), LONG_STRING + `<${'a'.repeat(30)}>`],
    [content(` ${tag}${'y'.repeat(5000)}`), LONG_STRING],
    // short strings are kept whole, tag or not
    [content(`${tag}ok`), `${tag}ok`],
  ];
  for (const [l, expected] of cases) {
    const buf = Buffer.from(l);
    agree(buf);
    const p = projectLine(buf, 0, buf.length, LINE_SCHEMA);
    assert.equal((p.message as { content: unknown }).content, expected, l.slice(0, 80));
    for (const chunk of [7, 4096, buf.length]) {
      const sp = new StreamProjector(LINE_SCHEMA);
      for (let i = 0; i < buf.length; i += chunk) sp.write(buf.subarray(i, i + chunk));
      assert.deepStrictEqual(sp.end(), p, `streamed in ${chunk}-byte pieces: ${l.slice(0, 80)}`);
    }
  }
});

test('a text block keeps its first TEXT_KEPT characters, a longer text its marker with its opening tag, on every path and at every length', () => {
  const block = (text: string) => `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x"},{"type":"text","text":${JSON.stringify(text)}}]}}`;
  const n = TEXT_KEPT;
  // [the text as JSON writes it, what is kept: null for the whole text, else the marker]
  const cases: [string, string | null][] = [
    ['[Request interrupted by user for tool use]', null],
    ['a'.repeat(n), null],
    ['a'.repeat(n + 1), LONG_STRING],
    // more bytes than characters: escapes and multi-byte characters, n characters kept, n + 1 not
    ['\\n'.repeat(n), null],
    ['é'.repeat(n), null],
    ['😀'.repeat(n / 2), null],
    ['\\u0001'.repeat(n), null],
    ['\\u0001'.repeat(n + 1), LONG_STRING],
    ['<task-notification>\\n<task-id>b7636e2</task-id>\\n<status>completed</status>\\n', LONG_STRING + '<task-notification>'],
    [`<task-notification>${'x'.repeat(5000)}`, LONG_STRING + '<task-notification>'],
    // past 6 × TEXT_KEPT bytes only the opening is decoded: an escaped '<' still gives the tag
    [`\\u003csystem-reminder>${'\\u0001'.repeat(500)}`, LONG_STRING + '<system-reminder>'],
    [`[Request interrupted by user]${'y'.repeat(500)}`, LONG_STRING],
  ];
  for (const [raw, long] of cases) {
    const text = JSON.parse(`"${raw}"`) as string;
    const buf = Buffer.from(block(text));
    agree(buf);
    const p = projectLine(buf, 0, buf.length, LINE_SCHEMA);
    const got = (p.message as { content: { text: unknown }[] }).content[1]!.text;
    assert.equal(got, long ?? text, raw.slice(0, 80));
    for (const chunk of [5, 4096, buf.length]) {
      const sp = new StreamProjector(LINE_SCHEMA);
      for (let i = 0; i < buf.length; i += chunk) sp.write(buf.subarray(i, i + chunk));
      assert.deepStrictEqual(sp.end(), p, `streamed in ${chunk}-byte pieces: ${raw.slice(0, 80)}`);
    }
  }
  // a text that is no string is a value of another kind, as elsewhere
  for (const [raw, expected] of [['{"a":1}', OTHER_OBJECT], ['[1]', OTHER_ARRAY], ['7', 7], ['null', null]] as const) {
    const buf = Buffer.from(`{"type":"user","message":{"content":[{"type":"text","text":${raw}}]}}`);
    agree(buf);
    const p = projectLine(buf, 0, buf.length, LINE_SCHEMA);
    assert.equal((p.message as { content: { text: unknown }[] }).content[0]!.text, expected);
    const sp = new StreamProjector(LINE_SCHEMA);
    sp.write(buf);
    assert.deepStrictEqual(sp.end(), p);
  }
});

const key = fc.constantFrom(
  'type', 'subtype', 'timestamp', 'sessionId', 'cwd', 'isSidechain', 'agentId', 'uuid', 'parentUuid', 'requestId',
  'isMeta', 'message', 'id', 'model', 'usage', 'content', 'name', 'input', 'prompt', 'toolUseResult', 'attachment',
  'data', 'tool_use_id', 'subagent_type', 'other', 'text', 'é', 't\u0000', '',
);
const scalar = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ maxLength: 4 }).map((s) => s.repeat(1500)),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('object'), tie('array')),
  object: fc.dictionary(key, tie('value'), { maxKeys: 8 }),
  array: fc.array(tie('value'), { maxLength: 5 }),
}));
const line = fc.dictionary(key, value, { maxKeys: 12 }).map((o) => JSON.stringify(o));

test('generated transcript-shaped lines agree', () => {
  fc.assert(fc.property(line, (l) => agree(Buffer.from(l))), { numRuns: 1500 });
});

test('the streaming path projects real and generated lines as projectLine does, shapes and all', () => {
  const same = (buf: Buffer, s: number, e: number) => {
    const sp = new StreamProjector(LINE_SCHEMA);
    sp.write(buf.subarray(s, e));
    assert.deepStrictEqual(sp.end(), projectLine(buf, s, e, LINE_SCHEMA));
  };
  let lines = 0;
  for (const f of transcripts(REAL_LOGS)) lines += eachLine(f, same);
  assert.ok(lines > 1000, `only ${lines} lines`);
  fc.assert(fc.property(line, (l) => same(Buffer.from(l), 0, Buffer.byteLength(l))), { numRuns: 300 });
});

test('where code cannot be made from strings, lines are projected into unshaped objects, to the same values', () => {
  const line = '{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":3}}}';
  const src = `import { projectLine } from ${JSON.stringify(pathToFileURL(join(REPO, 'src/ingest/project.ts')).href)};
import { LINE_SCHEMA } from ${JSON.stringify(pathToFileURL(join(REPO, 'src/ingest/line.ts')).href)};
const b = Buffer.from(${JSON.stringify(line)});
const p = projectLine(b, 0, b.length, LINE_SCHEMA);
console.log(JSON.stringify([p, Object.keys(p)]));`;
  const out = execFileSync(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e', src], { cwd: REPO, encoding: 'utf8' });
  const [value, keys] = JSON.parse(out) as [unknown, string[]];
  assert.deepEqual(keys, ['type', 'message']);
  assert.deepEqual(value, projected(Buffer.from(line), 0, Buffer.byteLength(line)));
});

test('damaged lines (bytes replaced, dropped or inserted) agree, errors included', () => {
  const edit = fc.record({ at: fc.nat(), byte: fc.constantFrom(0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x30, 0x2d, 0x61, 0xc3, 0xff, 0x00), kind: fc.constantFrom('replace', 'drop', 'insert') });
  fc.assert(
    fc.property(line, fc.array(edit, { minLength: 1, maxLength: 4 }), (l, edits) => {
      let buf = Buffer.from(l);
      for (const { at, byte, kind } of edits) {
        const i = buf.length === 0 ? 0 : at % buf.length;
        const b = Buffer.from([byte]);
        if (kind === 'replace' && buf.length > 0) buf[i] = byte;
        else if (kind === 'drop') buf = Buffer.concat([buf.subarray(0, i), buf.subarray(i + 1)]);
        else buf = Buffer.concat([buf.subarray(0, i), b, buf.subarray(i)]);
      }
      agree(buf);
    }),
    { numRuns: 1500 },
  );
});

test('the schema is honoured beyond LINE_SCHEMA: nested arrays, keys with escapes and non-ASCII keys', () => {
  const schema: SchemaObject = { a: [[{ b: true }]], 'q"k': true, 'é': { x: true } };
  for (const c of ['{"a":[[{"b":1,"c":2}],[3]],"q\\"k":5,"\\u00e9":{"x":1,"y":2}}', '{"a":[{"b":1}],"é":[]}']) {
    agree(Buffer.from(c), 0, Buffer.byteLength(c), schema);
  }
});

test('a whole container of SHARED_MIN bytes or more is parsed once: the same object for the same bytes, still right past the budget', () => {
  const line = (listing: string) => Buffer.from(JSON.stringify({ type: 'attachment', attachment: { type: 'skill_listing', content: listing } }));
  const big = 'x'.repeat(SHARED_MIN);
  const a = projectLine(line(big), 0, line(big).length, LINE_SCHEMA);
  const framed = Buffer.concat([Buffer.from('{}\n'), line(big), Buffer.from('\n')]);
  const b = projectLine(framed, 3, framed.length - 1, LINE_SCHEMA);
  assert.equal(a.attachment, b.attachment, 'equal bytes in another buffer give the same object');
  const other = projectLine(line(`${big}y`), 0, line(`${big}y`).length, LINE_SCHEMA);
  assert.notEqual(other.attachment, a.attachment);
  assert.deepEqual(other.attachment, { type: 'skill_listing', content: `${big}y` });
  const small = line('x');
  assert.notEqual(projectLine(small, 0, small.length, LINE_SCHEMA).attachment, projectLine(small, 0, small.length, LINE_SCHEMA).attachment);
  // ~6 MB of distinct listings overflow the table (4 MB); every value stays what JSON.parse gives
  for (let k = 0; k < 3000; k++) {
    const text = `${k}:${'z'.repeat(2000)}`;
    const buf = line(text);
    assert.deepEqual(projectLine(buf, 0, buf.length, LINE_SCHEMA).attachment, { type: 'skill_listing', content: text });
  }
  const again = projectLine(line(big), 0, line(big).length, LINE_SCHEMA);
  assert.deepEqual(again.attachment, a.attachment);
});
