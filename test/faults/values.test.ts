/**
 * Well-formed JSON with hostile values (docs/faults.md, "Hostile values"): lines of the real logs
 * and the sample corpus, each with one field rewritten (a usage count negative, fractional, huge, a
 * string, an object; a timestamp without its zone or of year 0001; a model of 10 KB or with control
 * characters; ids of the wrong type; …), one case per file, all read together. Deterministic: the
 * seed lines are picked with a fixed seed, so a failure names a case that fails again.
 *
 * For every case: each command exits 0 with no stack trace, JSON and tables hold no NaN, Infinity
 * or undefined, totals are finite and non-negative, and the rewritten line is either a request
 * whose counts are whole, finite and non-negative, or a skip at its own file:line under a reason
 * docs/faults.md lists. A value that is not a token count is never a request (counted as 0 without
 * a word), and a value that is one is never skipped.
 *
 * FAULT_VALUES_KEEP=DIR copies the log tree, the store and the report there after the run, to look
 * at a failing case with the CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { mulberry32 } from '../../src/samples/prng.js';
import { realLogs, removeDir, repoRoot, runCli, tempDir, writeLog } from './helpers.js';

const SEED = 0x5eed49;
const SEEDS_PER_SOURCE = 2;

/**
 * What a rewritten line must come to: a request, a skip, either (no usage to speak of), or a request
 * noted as an `invalid_field` skip (a flag that is no boolean, read as absent).
 */
type Outcome = 'request' | 'skip' | 'any' | 'noted';

interface Case {
  name: string;
  /** the line to rewrite: an assistant line with usage, or a user line */
  on: 'assistant' | 'user';
  edit: (l: Record<string, unknown>) => void;
  outcome: Outcome;
}

/**
 * A case of several lines (out-of-order times, copies of one response, a progress copy): the lines
 * from the seed's request and prompt (`request(i)` is the request with its own message id `i`), and
 * the outcome of each line that has one (1-based).
 */
interface Scenario {
  name: string;
  lines: (prompt: Record<string, unknown>, request: (i: number, edit?: (l: Record<string, unknown>) => void) => Record<string, unknown>) => Record<string, unknown>[];
  expect: [number, Outcome][];
}

const DELETE = Symbol('delete');

function setAt(o: Record<string, unknown>, keys: string[], v: unknown): void {
  let at = o;
  for (const k of keys.slice(0, -1)) {
    if (typeof at[k] !== 'object' || at[k] === null || Array.isArray(at[k])) at[k] = {};
    at = at[k] as Record<string, unknown>;
  }
  if (v === DELETE) delete at[keys.at(-1)!];
  else at[keys.at(-1)!] = v;
}

const set = (keys: string, v: unknown) => (l: Record<string, unknown>) => setAt(l, keys.split('.'), v);

const USAGE_FIELDS = [
  'input_tokens',
  'output_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'cache_creation.ephemeral_5m_input_tokens',
  'cache_creation.ephemeral_1h_input_tokens',
];

/** Values no token count can be: each makes its line a skip. */
const BAD_COUNTS: [string, unknown][] = [
  ['negative', -5],
  ['fractional', 12.5],
  ['1e15', 1e15],
  ['2^53+1', 2 ** 53 + 1],
  ['1e308', 1e308],
  ['string "123"', '123'],
  ['empty string', ''],
  ['true', true],
  ['false', false],
  ['object', { n: 1 }],
  ['array', [1]],
];
/** Values that read as a count: null (no count, 0) and whole numbers written oddly. */
const GOOD_COUNTS: [string, unknown][] = [
  ['null', null],
  ['0', 0],
  ['12.0', 12.0],
];

const LONG = 'x'.repeat(10_240);

function cases(): Case[] {
  const out: Case[] = [];
  for (const f of USAGE_FIELDS) {
    for (const [n, v] of BAD_COUNTS) out.push({ name: `usage.${f} ${n}`, on: 'assistant', edit: set(`message.usage.${f}`, v), outcome: 'skip' });
    for (const [n, v] of GOOD_COUNTS) out.push({ name: `usage.${f} ${n}`, on: 'assistant', edit: set(`message.usage.${f}`, v), outcome: 'request' });
  }
  const split = (w: number, w5: number, w1h: number) => (l: Record<string, unknown>) => {
    setAt(l, ['message', 'usage', 'cache_creation_input_tokens'], w);
    setAt(l, ['message', 'usage', 'cache_creation'], { ephemeral_5m_input_tokens: w5, ephemeral_1h_input_tokens: w1h });
  };
  out.push(
    { name: 'split below the write', on: 'assistant', edit: split(5_000, 1_000, 1_000), outcome: 'request' },
    { name: 'split above the write', on: 'assistant', edit: split(2_000, 3_000, 4_000), outcome: 'request' },
    { name: 'split with a write of 0', on: 'assistant', edit: split(0, 3_000, 4_000), outcome: 'any' },
    { name: 'cache_creation a string', on: 'assistant', edit: set('message.usage.cache_creation', '1h'), outcome: 'skip' },
    { name: 'cache_creation null', on: 'assistant', edit: set('message.usage.cache_creation', null), outcome: 'request' },
    { name: 'usage a string', on: 'assistant', edit: set('message.usage', '{"input_tokens":5}'), outcome: 'skip' },
    { name: 'usage an array', on: 'assistant', edit: set('message.usage', [1, 2]), outcome: 'skip' },
    { name: 'usage null', on: 'assistant', edit: set('message.usage', null), outcome: 'skip' },
    { name: 'web_search_requests negative', on: 'assistant', edit: set('message.usage.server_tool_use.web_search_requests', -1), outcome: 'skip' },
    { name: 'web_search_requests a string', on: 'assistant', edit: set('message.usage.server_tool_use.web_search_requests', '2'), outcome: 'skip' },
    { name: 'server_tool_use a number', on: 'assistant', edit: set('message.usage.server_tool_use', 3), outcome: 'skip' },
    { name: 'service_tier a number', on: 'assistant', edit: set('message.usage.service_tier', 7), outcome: 'request' },
    { name: 'service_tier odd', on: 'assistant', edit: set('message.usage.service_tier', 'priority\u0007\n'), outcome: 'request' },
    { name: 'speed an object', on: 'assistant', edit: set('message.usage.speed', { fast: true }), outcome: 'request' },
    { name: 'speed odd', on: 'assistant', edit: set('message.usage.speed', 'ludicrous'), outcome: 'request' },
  );
  const times: [string, unknown, Outcome][] = [
    ['a number', 1740823200000, 'skip'],
    ['an invalid date', '2025-02-30T10:00:00Z', 'skip'],
    ['prose', 'not a date', 'skip'],
    ['date only', '2025-03-01', 'skip'],
    ['no zone', '2025-03-01T10:00:00', 'skip'],
    ['a +05:30 offset', '2025-03-01T15:30:00+05:30', 'request'],
    ['year 0001', '0001-01-01T00:00:00Z', 'request'],
    ['year 9999', '9999-12-31T23:59:59.999Z', 'request'],
    ['null', null, 'skip'],
    ['absent', DELETE, 'skip'],
  ];
  for (const [n, v, o] of times) out.push({ name: `timestamp ${n}`, on: 'assistant', edit: set('timestamp', v), outcome: o });
  const models: [string, unknown][] = [
    ['a number', 4.6],
    ['empty', ''],
    ['10 KB', `claude-${LONG}`],
    ['with control characters', 'claude-\u001b[31mred\u001b[0m\u0007\r\nINJECTED'],
    ['null', null],
  ];
  for (const [n, v] of models) out.push({ name: `message.model ${n}`, on: 'assistant', edit: set('message.model', v), outcome: 'request' });
  const ids: [string, unknown][] = [
    ['a number', 42],
    ['an object', { id: 'x' }],
    ['empty', ''],
    ['very long', `id_${LONG}`],
  ];
  for (const [n, v] of ids) {
    // a message.id that is not a non-empty string cannot be de-duplicated: a skip
    out.push({ name: `message.id ${n}`, on: 'assistant', edit: set('message.id', v), outcome: n === 'very long' ? 'request' : 'skip' });
    // an id that is no string is read as absent, and noted (invalid_field)
    for (const f of ['requestId', 'sessionId', 'agentId', 'uuid']) out.push({ name: `${f} ${n}`, on: 'assistant', edit: set(f, v), outcome: typeof v !== 'string' ? 'noted' : 'request' });
  }
  for (const [n, v] of [
    ['a number', 7],
    ['relative', 'work/project'],
    ['with a newline', '/work/x\nINJECTED'],
    ['with control characters', '/work/\u001b[2Jx'],
  ] as [string, unknown][]) {
    out.push({ name: `cwd ${n}`, on: 'assistant', edit: set('cwd', v), outcome: 'request' });
    out.push({ name: `cwd ${n} on the prompt`, on: 'user', edit: set('cwd', v), outcome: 'any' });
  }
  for (const [n, v] of [
    ['unknown', 'hologram'],
    ['absent', DELETE],
    ['in another case', 'Assistant'],
    ['a number', 3],
  ] as [string, unknown][]) {
    // usage on a line that is not an assistant line is not a request, and not lost unsaid either
    out.push({ name: `type ${n}`, on: 'assistant', edit: set('type', v), outcome: 'skip' });
    out.push({ name: `type ${n} on the prompt`, on: 'user', edit: set('type', v), outcome: 'any' });
  }
  out.push(
    { name: 'isSidechain a string', on: 'assistant', edit: set('isSidechain', 'true'), outcome: 'noted' },
    { name: 'isSidechain a string on the prompt', on: 'user', edit: set('isSidechain', 'false'), outcome: 'any' },
    { name: 'content a string', on: 'assistant', edit: set('message.content', 'hello'), outcome: 'request' },
    { name: 'content with null elements', on: 'assistant', edit: set('message.content', [null, { type: 'text', text: 'x' }, null]), outcome: 'request' },
    { name: 'prompt content with null elements', on: 'user', edit: set('message.content', [null, 3, 'x']), outcome: 'any' },
    { name: 'prompt content null', on: 'user', edit: set('message.content', null), outcome: 'any' },
    { name: 'attachment a string', on: 'user', edit: (l) => Object.assign(l, { type: 'attachment', attachment: 'skill_listing' }), outcome: 'any' },
    { name: 'attachment null', on: 'user', edit: (l) => Object.assign(l, { type: 'attachment', attachment: null }), outcome: 'any' },
    { name: 'attachment type a number', on: 'user', edit: (l) => Object.assign(l, { type: 'attachment', attachment: { type: 5, content: [null] } }), outcome: 'any' },
    { name: 'message a string', on: 'assistant', edit: set('message', 'hello'), outcome: 'any' },
  );
  return out;
}

const at = (iso: string) => set('timestamp', iso);
const counts = (n: number) => set('message.usage', { input_tokens: n, output_tokens: n, cache_creation_input_tokens: n, cache_read_input_tokens: n });

function scenarios(): Scenario[] {
  return [
    {
      name: 'requests out of time order',
      lines: (p, r) => [p, r(1, at('2025-03-01T10:10:00Z')), r(2, at('2025-03-01T10:00:00Z')), r(3, at('2025-03-01T10:11:00Z'))],
      expect: [[2, 'request'], [3, 'request'], [4, 'request']],
    },
    {
      name: 'a bad copy before a good one',
      lines: (p, r) => [p, r(1, set('message.usage.input_tokens', '12')), r(1)],
      expect: [[2, 'skip'], [3, 'request']],
    },
    {
      name: 'year 0001 and year 9999 in one chain, every count at 999,999,999',
      lines: (p, r) => [p, r(1, (l) => (at('0001-01-01T00:00:00Z')(l), counts(999_999_999)(l))), r(2, (l) => (at('9999-12-31T23:59:59.999Z')(l), counts(999_999_999)(l)))],
      expect: [[2, 'request'], [3, 'request']],
    },
    {
      name: 'writes split at 1 hour, then at 5 minutes, not summing',
      lines: (p, r) => [
        p,
        r(1, (l) => setAt(l, ['message', 'usage'], { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 50_000, cache_creation: { ephemeral_1h_input_tokens: 70_000 } })),
        r(2, (l) => (at('2025-03-01T11:00:00Z')(l), setAt(l, ['message', 'usage'], { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 60_000, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 1, ephemeral_1h_input_tokens: 1 } }))),
      ],
      expect: [[2, 'request'], [3, 'request']],
    },
    ...(
      [
        ['a negative count', { input_tokens: -1 }, 'skip'],
        ['a count as a string', { output_tokens: '7' }, 'skip'],
        ['null counts', { input_tokens: null, output_tokens: 3 }, 'request'],
      ] as [string, Record<string, unknown>, Outcome][]
    ).map(([n, u, o]): Scenario => ({
      name: `an agent_progress copy with ${n}`,
      lines: (p, r) => {
        const inner = r(9, (l) => setAt(l, ['message', 'usage'], u));
        return [p, { type: 'progress', sessionId: p.sessionId, timestamp: '2025-03-01T10:00:05Z', data: { type: 'agent_progress', agentId: 'a1', message: { type: 'assistant', timestamp: inner.timestamp, requestId: inner.requestId, message: inner.message } } }];
      },
      expect: [[2, o]],
    })),
    {
      name: 'a compaction and an attachment with hostile times between requests',
      lines: (p, r) => [
        p,
        r(1, at('2025-03-01T10:00:00Z')),
        { type: 'system', subtype: 'compact_boundary', sessionId: p.sessionId, timestamp: 12345, uuid: 7 },
        { type: 'attachment', sessionId: p.sessionId, timestamp: 'yesterday', attachment: { type: 'skill_listing', content: [null, 1e308, -0] } },
        r(2, at('2025-03-01T10:20:00Z')),
      ],
      expect: [[2, 'request'], [5, 'request']],
    },
  ];
}

/** Every `.jsonl` below `dir`, sorted, so the pick does not depend on the listing order. */
function transcripts(dir: string): string[] {
  const out: string[] = [];
  const visit = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.name.endsWith('.jsonl')) out.push(p);
    }
  };
  visit(dir);
  return out;
}

interface Seed {
  from: string;
  assistant: Record<string, unknown>;
  user: Record<string, unknown>;
}

/** A request line and a prompt line of the same transcript, from each of a few transcripts of each source. */
function seeds(rand: () => number): Seed[] {
  const out: Seed[] = [];
  for (const source of [realLogs, path.join(repoRoot, 'sample-logs')]) {
    const files = transcripts(source);
    for (let n = 0, tries = 0; n < SEEDS_PER_SOURCE && tries < 200; tries++) {
      const file = files[Math.floor(rand() * files.length)]!;
      const lines = readFileSync(file, 'utf8').split('\n').flatMap((s) => {
        try {
          const l = JSON.parse(s) as unknown;
          return typeof l === 'object' && l !== null && !Array.isArray(l) ? [l as Record<string, unknown>] : [];
        } catch {
          return [];
        }
      });
      const requests = lines.filter((l) => l.type === 'assistant' && typeof (l.message as { usage?: unknown })?.usage === 'object' && (l.message as { model?: unknown }).model !== '<synthetic>');
      const prompts = lines.filter((l) => l.type === 'user' && typeof l.timestamp === 'string');
      if (requests.length === 0 || prompts.length === 0) continue;
      out.push({ from: path.relative(source, file), assistant: requests[Math.floor(rand() * requests.length)]!, user: prompts[Math.floor(rand() * prompts.length)]! });
      n++;
    }
  }
  return out;
}

/** The skip reasons docs/faults.md lists (its table's first column). */
function documentedReasons(): Set<string> {
  const doc = readFileSync(path.join(repoRoot, 'docs/faults.md'), 'utf8');
  const table = doc.slice(doc.indexOf('## Skip reasons'), doc.indexOf('## Cases'));
  return new Set([...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!));
}

/** Every number in a JSON value is finite; the path of the first that is not, else null. */
function badNumber(v: unknown, at = '$'): string | null {
  if (typeof v === 'number') return Number.isFinite(v) ? null : at;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const b = badNumber(v[i], `${at}[${i}]`);
      if (b) return b;
    }
  } else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      const b = badNumber(x, `${at}.${k}`);
      if (b) return b;
    }
  }
  return null;
}

const ORACLE_SQL = `
SELECT f.path, o.line, 'request' AS what, NULL AS reason,
       [o.input, o.output, o.cache_write, o.cache_write_5m, o.cache_write_1h, o.cache_read, o.web_search, o.web_fetch]::DOUBLE[] AS counts
FROM observations o JOIN files f USING (file_id)
UNION ALL
SELECT f.path, s.line, 'skip', s.reason || ': ' || coalesce(s.detail, ''), NULL FROM skipped s JOIN files f USING (file_id)
ORDER BY 1, 2`;

test('hostile field values: every command runs, every rewritten line is a request or a documented skip', async (t) => {
  const dir = tempDir();
  t.after(() => (process.env.FAULT_VALUES_KEEP ? cpSync(dir, process.env.FAULT_VALUES_KEEP, { recursive: true }) : removeDir(dir)));
  const rand = mulberry32(SEED);
  const from = seeds(rand);
  assert.ok(from.length >= 3, `seed lines from ${from.length} transcripts`);
  const logs = path.join(dir, 'logs');
  const expected = new Map<string, { name: string; at: [number, Outcome][]; from: string }>();
  let n = 0;
  const write = (name: string, from: string, build: (own: (l: Record<string, unknown>, i?: number) => Record<string, unknown>) => Record<string, unknown>[], at: [number, Outcome][]) => {
    n++;
    const id = `fz${String(n).padStart(4, '0')}`;
    const session = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    // each case its own session, messages and requests, so that no two cases de-duplicate
    const own = (l: Record<string, unknown>, i = 0) => {
      const copy = structuredClone(l);
      copy.sessionId = session;
      delete copy.agentId;
      delete copy.isSidechain;
      if (typeof copy.message === 'object' && copy.message !== null) (copy.message as Record<string, unknown>).id = `msg_${id}_${i}`;
      copy.requestId = `req_${id}_${i}`;
      return copy;
    };
    const lines = build(own);
    const file = writeLog(logs, `projects/-fuzz/${session}.jsonl`, [...lines.map((l) => JSON.stringify(l)), ''].join('\n'));
    expected.set(file, { name, at, from });
  };
  for (const seed of from) {
    for (const c of cases()) {
      write(c.name, seed.from, (own) => {
        const prompt = own(seed.user);
        const request = own(seed.assistant);
        c.edit(c.on === 'user' ? prompt : request);
        return [prompt, request];
      }, [[c.on === 'user' ? 1 : 2, c.outcome]]);
    }
    for (const sc of scenarios()) {
      write(sc.name, seed.from, (own) => sc.lines(own(seed.user), (i, edit) => {
        const l = own(seed.assistant, i);
        edit?.(l);
        return l;
      }), sc.expect);
    }
  }
  // subagents: a spawn's subagent_type and name, a .meta.json's agentType and toolUseId of each kind
  const spawnValues: [string, unknown][] = [
    ['a number', 7],
    ['an object', { type: 'x' }],
    ['empty', ''],
    ['6,000 characters with controls', `plugin:${'y'.repeat(6_000)}\u001b[31m\u202e\nINJECTED`],
  ];
  for (const [vn, v] of spawnValues) {
    for (const where of ['subagent_type', 'name', 'agentType', 'toolUseId']) {
      n++;
      const session = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
      const onSpawn = where === 'subagent_type' || where === 'name';
      const spawn = { type: 'tool_use', id: 'toolu_1', name: 'Task', input: { subagent_type: 'plugin:planner', name: 'planner', prompt: 'look', ...(onSpawn ? { [where]: v } : {}) } };
      const request = (msg: string, t: string, extra: object, content: object[]) =>
        JSON.stringify({ type: 'assistant', sessionId: session, timestamp: t, requestId: `req_${msg}`, cwd: '/work/fuzz', ...extra, message: { id: `msg_${n}_${msg}`, model: 'claude-opus-4-6', content, usage: { input_tokens: 3, output_tokens: 5, cache_creation_input_tokens: 2_000, cache_read_input_tokens: 0 } } });
      const main = writeLog(logs, `projects/-fuzz/${session}.jsonl`, [request('main', '2025-03-01T10:00:00Z', {}, [spawn]), '']);
      const sub = writeLog(logs, `projects/-fuzz/${session}/subagents/agent-a1.jsonl`, [request('sub', '2025-03-01T10:00:05Z', { agentId: 'a1', isSidechain: true }, [{ type: 'text', text: 'ok' }]), '']);
      writeLog(logs, `projects/-fuzz/${session}/subagents/agent-a1.meta.json`, JSON.stringify({ agentType: 'plugin:planner', toolUseId: 'toolu_1', ...(onSpawn ? {} : { [where]: v }) }));
      expected.set(main, { name: `spawn ${where} ${vn}`, at: [[1, 'request']], from: 'subagent' });
      expected.set(sub, { name: `subagent of a spawn ${where} ${vn}`, at: [[1, 'request']], from: 'subagent' });
    }
  }
  assert.ok(n >= 300, `${n} cases`);

  const db = path.join(dir, 's.duckdb');
  const run = async (args: string[]) => {
    const ran = await runCli(args, {});
    const what = args.slice(0, 2).join(' ');
    assert.equal(ran.code, 0, `${what} exited ${ran.code}: ${ran.stderr}`);
    assert.doesNotMatch(ran.stderr, /\n\s+at /, `${what}: a stack trace on stderr`);
    assert.doesNotMatch(ran.stdout, /\bNaN\b|\bInfinity\b|\bundefined\b/, `${what}: NaN, Infinity or undefined in the output`);
    // a control character from a transcript never reaches the terminal raw, a newline never starts a row
    assert.doesNotMatch(ran.stdout, /[\u0000-\u0008\u000b-\u001f\u007f]/, `${what}: a raw control character in the output`);
    assert.doesNotMatch(ran.stdout, /^INJECTED/m, `${what}: a transcript's newline started a line of the output`);
    // a 10 KB model or id does not make a table as wide as itself
    const wide = args.includes('--json') ? undefined : ran.stdout.split('\n').find((l) => l.length > 1_000);
    assert.equal(wide?.slice(0, 200), undefined, `${what}: a line ${wide?.length} characters long`);
    return ran.stdout;
  };

  const summary = JSON.parse(await run(['summary', logs, '--db', db, '--json'])) as {
    totals: Record<string, number | null>;
    quality: { skipped: { reason: string }[] };
  };
  assert.equal(badNumber(summary), null, `summary --json: a number that is not finite at ${badNumber(summary)}`);
  for (const [k, v] of Object.entries(summary.totals)) assert.ok(v === null || (typeof v === 'number' && v >= 0), `summary totals.${k} = ${v}`);
  const documented = documentedReasons();
  for (const g of summary.quality.skipped) assert.ok(documented.has(g.reason), `skip reason ${g.reason} is not in docs/faults.md`);

  for (const args of [['anatomy'], ['sessions'], ['whatif', 'keepalive'], ['whatif', 'ttl'], ['crosstab'], ['crosstab', '--rows', 'definition', '--cols', 'agent_type'], ['blocks']]) {
    const json = JSON.parse(await run([...args, logs, '--db', db, '--json'])) as unknown;
    assert.equal(badNumber(json), null, `${args.join(' ')} --json: a number that is not finite at ${badNumber(json)}`);
  }
  for (const args of [['summary'], ['sessions'], ['anatomy'], ['crosstab', '--rows', 'agent_type', '--cols', 'definition'], ['crosstab', '--rows', 'definition', '--cols', 'agent_type'], ['whatif', 'ttl']]) await run([...args, logs, '--db', db]);
  const out = path.join(dir, 'report.html');
  await run(['report', logs, '--db', db, '--out', out]);
  const html = readFileSync(out, 'utf8');
  const raw = /\u001b\[31m|\u001b\[2Jx|\u202e|\nINJECTED/.exec(html);
  assert.equal(raw && html.slice(Math.max(0, raw.index - 80), raw.index + 40), null, 'report: transcript text unescaped');

  const sql = path.join(dir, 'oracle.sql');
  writeFileSync(sql, ORACLE_SQL);
  const rows = (JSON.parse(await run(['query', sql, logs, '--db', db, '--json'])) as { rows: { path: string; line: number; what: string; reason: string | null; counts: number[] | null }[] }).rows;
  const failures: string[] = [];
  const outcomes = { request: 0, skip: 0 };
  for (const [file, e] of expected) {
    for (const [line, outcome] of e.at) {
      const here = rows.filter((r) => r.path === file && r.line === line);
      const requests = here.filter((r) => r.what === 'request');
      const skips = here.filter((r) => r.what === 'skip');
      const label = `${e.name}, line ${line} (${e.from})`;
      for (const s of skips) if (!documented.has(s.reason!.split(':')[0]!)) failures.push(`${label}: undocumented skip ${s.reason}`);
      for (const r of requests) {
        if (!r.counts!.every((x) => Number.isInteger(x) && x >= 0 && x < 1e9)) failures.push(`${label}: counts ${JSON.stringify(r.counts)}`);
      }
      if (outcome === 'noted' && !(requests.length && skips.some((s) => s.reason!.startsWith('invalid_field:')))) failures.push(`${label}: not a request noted as invalid_field (${skips.map((s) => s.reason).join('; ') || 'no skip'})`);
      if (outcome === 'request' && requests.length === 0) failures.push(`${label}: not a request${skips.length ? ` (skipped: ${skips.map((s) => s.reason).join('; ')})` : ''}`);
      if (outcome === 'skip' && skips.length === 0) failures.push(`${label}: not skipped${requests.length ? ` (a request of ${JSON.stringify(requests[0]!.counts)})` : ''}`);
      if (requests.length) outcomes.request++;
      if (skips.length) outcomes.skip++;
    }
  }
  // the oracle saw both kinds (a query that matched no row would pass every 'any' case)
  assert.ok(outcomes.request >= 100 && outcomes.skip >= 100, `requests ${outcomes.request}, skips ${outcomes.skip}`);
  assert.deepEqual(failures, []);

  // the session replay reads a transcript whole, not through the projection: a case of each kind
  // (the first seed's) is replayed, and skips the lines ingest skips
  const replayed = new Set<string>();
  for (const [file, e] of expected) {
    const kind = e.name.split(' ')[0]!;
    if (replayed.has(kind) || e.at.length !== 1 || e.at[0]![1] === 'any') continue;
    replayed.add(kind);
    const ran = await runCli(['replay', 'session', file, '--db', db, '--strategy', 'recorded', '--json']);
    const what = `replay session of ${e.name} (${e.from})`;
    assert.doesNotMatch(ran.stderr, /\n\s+at |internal error/, `${what}: ${ran.stderr}`);
    if (ran.code === 2) {
      // a transcript whose one request is skipped has none to replay: said in one line
      assert.equal(e.at[0]![1], 'skip', `${what}: ${ran.stderr}`);
      assert.match(ran.stderr, /^cachelens: .*no requests in this transcript to replay.*\n$/, what);
      continue;
    }
    assert.equal(ran.code, 0, `${what}: ${ran.stderr}`);
    const skippedLines = (JSON.parse(ran.stdout) as { chain: { skipped: { lines: number[] }[] } }).chain.skipped.flatMap((g) => g.lines);
    assert.equal(skippedLines.includes(e.at[0]![0]), e.at[0]![1] === 'skip' || e.at[0]![1] === 'noted', `${what}: skipped lines ${JSON.stringify(skippedLines)}`);
  }
  assert.ok(replayed.size >= 10, `${replayed.size} kinds replayed`);
});
