/**
 * `--json` shapes are stable and documented (SPEC §7): every key docs/json.md lists for a command
 * is in that command's output on sample-logs/. The shapes are read from the doc itself, so the doc
 * and this test cannot drift; a key renamed or removed in an output (or added to the doc but not to
 * the output) fails here. The other way too: a key an output has that its section does not list fails,
 * except inside an object whose shape says `…` (a query's rows and params, named per query). And a value
 * of another form: an object or array where the doc writes a plain value or `[string]` (whose keys no
 * check would read), a value where it writes `{…}` or `[…]`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { REPO, cli, tempDir } from '../helpers/corpus.js';

/** A documented shape: the keys of an object (each with its own shape, or null for a value), or an array's element. */
type Shape =
  | { kind: 'object'; keys: Map<string, Shape | null>; optional: Set<string>; open: boolean }
  | { kind: 'array'; element: Shape | null };

/**
 * Parses the notation of docs/json.md: `{"a", "b": {…}, "c": [{…}], "d"?, ...path}`. Quoted strings are
 * keys (a value after `:` too, when quoted, is skipped as an example); `"d"?` is a key not every run
 * has (checked where it is, and required in some run); `...a.b` spreads the keys of
 * the object at that path from the root; bare words (`string`, `number`) are notes, skipped; `…` in an
 * object says it has more keys than those listed (it is open).
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
      const shape: Shape = { kind: 'object', keys: new Map(), optional: new Set(), open: false };
      place(shape);
      while (peek() !== '}') {
        const k = next();
        if (k === undefined) throw new Error('unclosed {');
        if (k.startsWith('...')) {
          const from = resolve(k.slice(3)) as Extract<Shape, { kind: 'object' }>;
          for (const [key, s] of from.keys) shape.keys.set(key, s);
          for (const key of from.optional) shape.optional.add(key);
          if (from.open) shape.open = true;
        } else if (k === '…') shape.open = true;
        else if (k.startsWith('"')) {
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
        } else if (k !== ',') throw new Error(`unexpected ${k} in an object`);
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
 * Checks `value` against `shape`, both ways. Into `missing` goes every documented key absent where its
 * parent is an object (a null parent has nothing to check; an optional key may be absent), and every value
 * of another form than documented: an object or array where the doc writes a plain value (`"a"`, or an
 * element of `[string]`), a non-array for `[…]`, a non-object for `{…}`. Into `extra` goes every key the
 * output has that its object's shape does not list (but in an open object, `…`). Into `reached` go the key
 * paths found, to say which documented keys the sample outputs reached at all.
 */
function check(shape: Shape | null, value: unknown, path: string, missing: string[], reached: Set<string>, extra: string[] = []): void {
  if (value === null || value === undefined) return;
  // a plain value (a key without `: {…}`, an element of `[string]`): keys inside it would never be checked
  if (shape === null) {
    if (typeof value === 'object') missing.push(`${path || '(root)'}: documented as a plain value, is ${Array.isArray(value) ? 'an array' : 'an object'}`);
    return;
  }
  if (shape.kind === 'array') {
    if (!Array.isArray(value)) return void missing.push(`${path || '(root)'}: expected an array`);
    for (const e of value) check(shape.element, e, `${path}[]`, missing, reached, extra);
    return;
  }
  if (typeof value !== 'object' || Array.isArray(value)) return void missing.push(`${path || '(root)'}: expected an object`);
  if (!shape.open) for (const key of Object.keys(value)) if (!shape.keys.has(key)) extra.push(path ? `${path}.${key}` : key);
  for (const [key, child] of shape.keys) {
    const p = path ? `${path}.${key}` : key;
    if (!(key in value)) {
      if (!shape.optional.has(key)) missing.push(p);
      continue;
    }
    reached.add(p);
    check(child, (value as Record<string, unknown>)[key], p, missing, reached, extra);
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
  // a transcript saved as UTF-16: quality.skipped[].utf16_files has a row
  'cachelens summary': () => [['summary', ...logs()], ['summary', join(dir, 'utf16'), '--db', ':memory:']],
  'cachelens sessions': () => [['sessions', ...logs()]],
  'cachelens blocks': () => [['blocks', ...logs()]],
  'cachelens anatomy': () => [['anatomy', ...logs()]],
  'cachelens anatomy --chain': () => [['anatomy', ...logs(), '--chain', '1f517242-e624-462c-80f4-9aab96cd61a2:afe431875d602779e']],
  'cachelens whatif ttl': () => [['whatif', 'ttl', ...logs()]],
  'cachelens whatif keepalive': () => [['whatif', 'keepalive', ...logs()]],
  'cachelens replay channel': () => [
    ['replay', 'channel', CHANNEL],
    ['replay', 'channel', badChannel, '--idle-reap', '30m', '--evict-at', '5', '--fail-at', '7'],
    ['replay', 'channel', CHANNEL, '--strategy', 'watermark'], // one strategy: the others' keys are absent
  ],
  'cachelens replay session': () => [
    ['replay', 'session', 'top', SAMPLES, '--db', db, '--calibrate', '5'], // calibration's keys are null without it
    ['replay', 'session', '53c5d8e8', SAMPLES, '--db', db], // a chain without attachments: reinject is not run
    ['replay', 'session', 'top', SAMPLES, '--db', db, '--strategy', 'reinject'], // one strategy: the others' keys are absent
  ],
  'cachelens crosstab': () => [['crosstab', ...logs()]],
  'cachelens query': () => [['query', 'cost_by', ...logs(), '--param', 'by=agent_type']],
  'cachelens query --list': () => [['query', '--list']],
  'cachelens export': () => [['export', ...logs(), '--parquet', join(dir, 'export')]],
  'cachelens report': () => [['report', ...logs(), '--out', join(dir, 'report.html')]],
};

/** Each section's outputs, for the checks of the keys added beside others (below). */
const outputsOf = new Map<string, any[]>();

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
    mkdirSync(join(dir, 'utf16/proj'), { recursive: true });
    writeFileSync(join(dir, 'utf16/proj/s1.jsonl'), Buffer.from(`${readFileSync(CHANNEL, 'utf8').split('\n')[0]}\n`, 'utf16le'));
    const r = cli(['summary', SAMPLES, '--db', db, '--timezone', 'UTC']); // the store every run below shares
    assert.equal(r.code, 0, r.stderr);
  });

  test('the notation parses as documented', () => {
    const s = parseShape('{"t": {"x", "y": 1, "z"?}, "rows": [{"k", ...t}], "tags": [string], "p": {…}, …}');
    assert.deepEqual(keyPaths(s), ['t', 't.x', 't.y', 't.z', 'rows', 'rows[].k', 'rows[].x', 'rows[].y', 'rows[].z', 'tags', 'p']);
    const missing: string[] = [];
    const extra: string[] = [];
    const value = { t: { x: 1, y: null, w: 0 }, rows: [{ k: 1, x: 2, y: 3, z: 4 }, { k: 1, y: 3, v: 5 }], tags: [], p: { any: 1 }, more: 1 };
    check(s, value, '', missing, new Set(), extra);
    assert.deepEqual(missing, ['rows[].x'], 'a missing key fails, an optional one does not');
    assert.deepEqual(extra, ['t.w', 'rows[].v'], 'a key not listed fails, except in an object that says …');
    assert.deepEqual(keyPaths(parseShape('[{"name", "purpose"}]')), ['[].name', '[].purpose']);
    // a plain value or an element of [string] that is an object or array: its keys were never checked
    const wrong: string[] = [];
    const form = parseShape('{"a", "tags": [string], "t": {"x", "y"}, "u": [{"k"}]}');
    check(form, { a: { b: 1 }, tags: ['x', { y: 1 }], t: { x: [{ z: 1 }], y: 'ok' }, u: [{ k: 1 }] }, '', wrong, new Set(), []);
    assert.deepEqual(wrong, ['a: documented as a plain value, is an object', 'tags[]: documented as a plain value, is an object', 't.x: documented as a plain value, is an array']);
    const objects: string[] = [];
    check(form, { a: 1, tags: {}, t: [], u: {} }, '', objects, new Set(), []);
    assert.deepEqual(objects, ['tags: expected an array', 't: expected an object', 'u: expected an array']);
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
    test(`${title} --json has every documented key, in its documented form, and no other`, () => {
      const outputs = runs[title]().map(runJson);
      outputsOf.set(title, outputs);
      const missing: string[] = [];
      const extra: string[] = [];
      const reached = new Set<string>();
      for (const out of outputs) check(shape, out, '', missing, reached, extra);
      assert.deepEqual([...new Set(missing)], [], `${title} --json lacks documented keys, or has one in another form`);
      assert.deepEqual([...new Set(extra)], [], `${title} --json has keys docs/json.md does not list`);
      const unreached = keyPaths(shape).filter((p) => !reached.has(p));
      assert.deepEqual(unreached, [], `${title}: documented keys no sample run reached (their parent was null or empty); add a run that has them`);
    });
  }

  test('keys added beside others say the same thing in another unit or form', () => {
    const near = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
    const [sessions] = outputsOf.get('cachelens sessions')!;
    for (const r of sessions.sessions) {
      assert.equal(r.first_request.slice(0, 16).replace('T', ' '), r.first); // --timezone UTC
      assert.equal(r.last_request.slice(0, 16).replace('T', ' '), r.last);
    }
    const [keepalive] = outputsOf.get('cachelens whatif keepalive')!;
    for (const b of keepalive.budgets) assert.ok(near(b.saved_usd - b.ping_usd, b.net_saving_usd), `budget ${b.budget}`);
    const best = keepalive.budgets.find((b: any) => b.budget === keepalive.best_budget);
    assert.ok(best && keepalive.buckets.length > 0);
    for (const k of keepalive.buckets) assert.equal(k.budget, keepalive.best_budget);
    const kind = keepalive.buckets.filter((k: any) => k.dimension === 'kind');
    assert.ok(near(kind.reduce((n: number, k: any) => n + k.ping_usd, 0), best.ping_usd), 'main + subagent pings are all pings');
    const [anatomy] = outputsOf.get('cachelens anatomy')!;
    for (const b of anatomy.breaks) {
      assert.equal(b.request_id === null ? b.message_id : `${b.message_id}\u0000${b.request_id}`, b.key);
      if (b.usd !== null) assert.ok(near(b.waste_usd * b.weight, b.usd * b.waste_weight), 'waste priced as the rewrite is');
    }
    for (const c of anatomy.break_causes) assert.ok(c.waste_usd <= c.usd && (c.waste_usd > 0) === (c.waste_weight > 0), c.cause);
    for (const r of anatomy.repurchase) {
      const chain = anatomy.chains.find((c: any) => c.chain_id === r.chain_id);
      assert.deepEqual([r.usd, r.waste_usd], [chain.usd, chain.waste_usd]);
    }
    for (const channel of outputsOf.get('cachelens replay channel')!) {
      const { settings } = channel;
      assert.equal(settings.idle_reap_s, settings.idle_reap_minutes === null ? null : settings.idle_reap_minutes * 60);
      for (const [name, summary] of Object.entries<any>(channel.strategies)) {
        const turns = channel.turns.filter((t: any) => t.strategy === name);
        for (const t of turns) assert.ok(near(t.usd, t.weight * settings.usd_per_input_token), `${name} turn`);
        assert.ok(near(turns.reduce((n: number, t: any) => n + t.usd, 0), summary.usd), name);
      }
    }
  });
});
