/**
 * `--json` shapes are stable and documented (SPEC §7): every key docs/json.md lists for a command
 * is in that command's output on sample-logs/. The shapes are read from the doc itself, so the doc
 * and this test cannot drift; a key renamed or removed in an output (or added to the doc but not to
 * the output) fails here. Extra keys in an output are fine.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { REPO, cli, tempDir } from '../helpers/corpus.js';

/** A documented shape: the keys of an object (each with its own shape, or null for a value), or an array's element. */
type Shape = { kind: 'object'; keys: Map<string, Shape | null>; optional: Set<string> } | { kind: 'array'; element: Shape | null };

/**
 * Parses the notation of docs/json.md: `{"a", "b": {…}, "c": [{…}], "d"?, ...path}`. Quoted strings are
 * keys (a value after `:` too, when quoted, is skipped as an example); `"d"?` is a key not every run
 * has (checked where it is, and required in some run); `...a.b` spreads the keys of
 * the object at that path from the root; bare words (`string`, `number`) and `…` are notes, skipped.
 * Example: `{"t": {"x", "y"}, "rows": [{"k", ...t}]}` → t has x and y; each row has k, x and y.
 */
export function parseShape(text: string): Shape {
  const tokens = text.match(/"(?:[^"\\]|\\.)*"|\.\.\.[\w.-]+|[{}[\]:,]|…|[^\s{}[\]:,"…]+/g) ?? [];
  let i = 0;
  const root: { shape?: Shape } = {};
  const peek = () => tokens[i];
  const next = () => tokens[i++];
  const resolve = (path: string): Shape => {
    let s: Shape | null | undefined = root.shape;
    for (const k of path.split('.')) s = s?.kind === 'object' ? s.keys.get(k) : undefined;
    if (!s || s.kind !== 'object') throw new Error(`...${path}: no object at that path`);
    return s;
  };
  /** `place` puts the shape where it belongs as soon as it exists: a spread may name an object still being read */
  function value(place: (s: Shape) => void = (s) => (root.shape ??= s)): Shape | null {
    const t = next();
    if (t === '{') {
      const shape: Shape = { kind: 'object', keys: new Map(), optional: new Set() };
      place(shape);
      while (peek() !== '}') {
        const k = next();
        if (k === undefined) throw new Error('unclosed {');
        if (k.startsWith('...')) {
          const from = resolve(k.slice(3)) as Extract<Shape, { kind: 'object' }>;
          for (const [key, s] of from.keys) shape.keys.set(key, s);
          for (const key of from.optional) shape.optional.add(key);
        } else if (k.startsWith('"')) {
          const key = JSON.parse(k) as string;
          if (peek() === '?') {
            next();
            shape.optional.add(key);
          }
          if (peek() === ':') {
            next();
            shape.keys.set(key, null);
            value((s) => shape.keys.set(key, s));
          } else shape.keys.set(key, null);
        } else if (k !== ',' && k !== '…') throw new Error(`unexpected ${k} in an object`);
      }
      next();
      return shape;
    }
    if (t === '[') {
      const shape: Shape = { kind: 'array', element: null };
      place(shape);
      while (peek() !== ']') {
        if (peek() === undefined) throw new Error('unclosed [');
        if (peek() === '{' || peek() === '[') value((s) => (shape.element = s));
        else next();
      }
      next();
      return shape;
    }
    return null; // an example value or a note
  }
  const shape = value();
  if (!shape) throw new Error(`not a shape: ${text.slice(0, 40)}`);
  return shape;
}

/** Each `## cachelens …` section of docs/json.md and the shape in its ```shape block. */
export function documentedShapes(markdown: string): Map<string, Shape> {
  const out = new Map<string, Shape>();
  for (const section of markdown.split(/^## /m).slice(1)) {
    const title = section.slice(0, section.indexOf('\n')).trim();
    const block = /^```shape\n([\s\S]*?)^```/m.exec(section);
    assert.ok(block, `docs/json.md: section "${title}" has no \`\`\`shape block`);
    out.set(title, parseShape(block[1]));
  }
  return out;
}

/**
 * Checks `value` against `shape`: every documented key is present wherever its parent is an
 * object (a null parent has nothing to check). Returns the key paths checked, to say which
 * documented keys the sample outputs reached at all.
 */
function check(shape: Shape, value: unknown, path: string, missing: string[], reached: Set<string>): void {
  if (value === null || value === undefined) return;
  if (shape.kind === 'array') {
    if (!Array.isArray(value)) return void missing.push(`${path || '(root)'}: expected an array`);
    if (shape.element) for (const e of value) check(shape.element, e, `${path}[]`, missing, reached);
    return;
  }
  if (typeof value !== 'object' || Array.isArray(value)) return void missing.push(`${path || '(root)'}: expected an object`);
  for (const [key, child] of shape.keys) {
    const p = path ? `${path}.${key}` : key;
    if (!(key in value)) {
      if (!shape.optional.has(key)) missing.push(p);
      continue;
    }
    reached.add(p);
    if (child) check(child, (value as Record<string, unknown>)[key], p, missing, reached);
  }
}

/** Every key path a shape lists: `a`, `a.b`, `rows[].k`. */
function keyPaths(shape: Shape, path = ''): string[] {
  if (shape.kind === 'array') return shape.element ? keyPaths(shape.element, `${path}[]`) : [];
  return [...shape.keys].flatMap(([k, s]) => {
    const p = path ? `${path}.${k}` : k;
    return [p, ...(s ? keyPaths(s, p) : [])];
  });
}

const doc = readFileSync(join(REPO, 'docs/json.md'), 'utf8');
const shapes = documentedShapes(doc);
const SAMPLES = join(REPO, 'sample-logs');
const CHANNEL = join(SAMPLES, 'channels/backend.jsonl');

let dir = '';
let db = '';
/** The sample channel log with one bad line, so that `skipped_lines` has a row to check. */
let badChannel = '';

/**
 * The runs behind each documented section (every one with `--json`): a documented key must be in
 * every run's output where its parent is, and in at least one run (keys that are null or absent in
 * one run — a chain without attachments, --calibrate off — are reached by another).
 */
const logs = () => [SAMPLES, '--db', db, '--timezone', 'UTC'];
const runs: Record<string, () => string[][]> = {
  'cachelens start': () => [['start', '--db', db, '--out', join(dir, 'start.html')]],
  'cachelens summary': () => [['summary', ...logs()]],
  'cachelens sessions': () => [['sessions', ...logs()]],
  'cachelens blocks': () => [['blocks', ...logs()]],
  'cachelens anatomy': () => [['anatomy', ...logs()]],
  'cachelens whatif ttl': () => [['whatif', 'ttl', ...logs()]],
  'cachelens whatif keepalive': () => [['whatif', 'keepalive', ...logs()]],
  'cachelens replay channel': () => [['replay', 'channel', CHANNEL], ['replay', 'channel', badChannel, '--idle-reap', '30m', '--evict-at', '5', '--fail-at', '7']],
  'cachelens replay session': () => [
    ['replay', 'session', 'top', SAMPLES, '--db', db, '--calibrate', '5'], // calibration's keys are null without it
    ['replay', 'session', '53c5d8e8', SAMPLES, '--db', db], // a chain without attachments: reinject is not run
  ],
  'cachelens crosstab': () => [['crosstab', ...logs()]],
  'cachelens query': () => [['query', 'cost_by', ...logs(), '--param', 'by=agent_type']],
  'cachelens query --list': () => [['query', '--list']],
  'cachelens export': () => [['export', ...logs(), '--parquet', join(dir, 'export')]],
  'cachelens report': () => [['report', ...logs(), '--out', join(dir, 'report.html')]],
};

function runJson(args: string[]): unknown {
  // start reads ~/.claude: a home without logs has it report sample-logs/
  const r = cli([...args, '--json'], { HOME: join(dir, 'home'), CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: '' });
  assert.equal(r.code, 0, `cachelens ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe('--json shapes (docs/json.md)', () => {
  before(() => {
    dir = tempDir('cachelens-json-');
    db = join(dir, 'store.duckdb');
    badChannel = join(dir, 'channel.jsonl');
    mkdirSync(join(dir, 'home/.claude/projects/empty'), { recursive: true });
    writeFileSync(badChannel, `${readFileSync(CHANNEL, 'utf8')}not json\n`);
    const r = cli(['summary', SAMPLES, '--db', db, '--timezone', 'UTC']); // the store every run below shares
    assert.equal(r.code, 0, r.stderr);
  });

  test('the notation parses as documented', () => {
    const s = parseShape('{"t": {"x", "y": 1, "z"?}, "rows": [{"k", ...t}], "tags": [string], …}');
    assert.deepEqual(keyPaths(s), ['t', 't.x', 't.y', 't.z', 'rows', 'rows[].k', 'rows[].x', 'rows[].y', 'rows[].z', 'tags']);
    const missing: string[] = [];
    check(s, { t: { x: 1, y: null }, rows: [{ k: 1, x: 2, y: 3, z: 4 }, { k: 1, y: 3 }], tags: [] }, '', missing, new Set());
    assert.deepEqual(missing, ['rows[].x'], 'a missing key fails, an optional one does not');
    assert.deepEqual(keyPaths(parseShape('[{"name", "purpose"}]')), ['[].name', '[].purpose']);
  });

  test('every command with --json has a section, and every section a run', () => {
    const withJson: string[] = [];
    const top = cli(['--help']).stdout;
    for (const [, cmd] of top.matchAll(/^ {2}cachelens (\w+)/gm)) {
      const help = cli([cmd, '--help']).stdout;
      const subs = [...help.matchAll(new RegExp(`^ {2}cachelens ${cmd} (\\w+)`, 'gm'))].map((m) => m[1]);
      for (const name of subs.length ? subs.map((s) => `${cmd} ${s}`) : [cmd]) {
        if (/^\s+--json\b/m.test(cli([...name.split(' '), '--help']).stdout)) withJson.push(`cachelens ${name}`);
      }
    }
    assert.ok(withJson.length >= 12, `found ${withJson.join(', ')}`);
    for (const c of withJson) assert.ok(shapes.has(c), `docs/json.md has no section "## ${c}"`);
    for (const title of shapes.keys()) assert.ok(title in runs, `no run for "${title}"`);
  });

  for (const [title, shape] of shapes) {
    test(`${title} --json has every documented key`, () => {
      const outputs = runs[title]().map(runJson);
      const missing: string[] = [];
      const reached = new Set<string>();
      for (const out of outputs) check(shape, out, '', missing, reached);
      assert.deepEqual([...new Set(missing)], [], `${title} --json lacks documented keys`);
      const unreached = keyPaths(shape).filter((p) => !reached.has(p));
      assert.deepEqual(unreached, [], `${title}: documented keys no sample run reached (their parent was null or empty); add a run that has them`);
    });
  }
});
