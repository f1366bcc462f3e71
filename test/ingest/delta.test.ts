/**
 * Append runs answered without DuckDB (src/ingest/delta.ts): lines appended to transcripts the
 * store holds are added to the results its answers keep. Each run is checked against the same
 * question asked of a store built afresh from the same logs: the output must be the same to the
 * last digit. And every case it must leave to the store is left there, with the same outcome.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { summary } from '../../src/analyses/summary.js';
import { sessions } from '../../src/analyses/sessions.js';
import { type Filters, filterParams } from '../../src/analyses/filters.js';
import { dayInZone, duckdbHash, e15Of, e15Text, keyHash, toE15, writeDeltaBase, zoneRuns } from '../../src/ingest/delta.js';
import { type AnswerResult, ingest, ingestOrAnswer } from '../../src/ingest/ingest.js';
import { AnsweredStore } from '../../src/store/answers.js';
import { rememberedQuery } from '../../src/store/queries.js';
import { loadPriceTable } from '../../src/pricing/pricing.js';
import { CONDENSE, MAROT_DOV, corpus, prices, repoRoot, tmp } from '../store/helpers.js';

const UTC: Filters = { since: null, until: null, project: null, timezone: 'UTC' };

/** A run as `summary` makes it (an append may be added to the kept results: IngestOptions.delta). */
function run(root: string, db: string, delta = true): Promise<AnswerResult> {
  return ingestOrAnswer({ paths: [root], dbPath: db, prices, workers: 1, delta });
}

/** One `summary` (with `sessions`, if asked) as the CLI runs it; whether the store was opened. */
async function ask(root: string, db: string, filters: Filters[] = [UTC], withSessions = false) {
  const r = await run(root, db);
  try {
    const out = [];
    for (const f of filters) out.push(await r.store.boundedMemory(() => summary(r.store, f, r.walkSkips), { mb: 64 }));
    if (withSessions) await r.store.boundedMemory(() => sessions(r.store, UTC), { mb: 128 });
    const opened = r.store instanceof AnsweredStore ? r.store.storeOpened : true;
    return { out, opened, stats: r.stats };
  } finally {
    r.store.close();
  }
}

/** The summary query's rows as a run keeps them (its answers, or the store's); whether the store was opened. */
async function summaryRows(root: string, db: string, filters: Filters) {
  const r = await run(root, db);
  try {
    const opened = r.store instanceof AnsweredStore ? r.store.storeOpened : true;
    return { opened, rows: await rememberedQuery(r.store, 'summary', filterParams(filters)) };
  } finally {
    r.store.close();
  }
}

/** A `report`'s work on the store: an ingest (nothing changed), a question of its own, the store closed. */
async function report(root: string, db: string) {
  const r = await ingest({ paths: [root], dbPath: db, prices, workers: 1 });
  try {
    await r.store.boundedMemory(() => sessions(r.store, UTC), { mb: 128 });
  } finally {
    r.store.close();
  }
}

/** The same questions of a store built afresh from the logs as they are. */
async function fresh(root: string, filters: Filters[] = [UTC]) {
  return (await ask(root, path.join(tmp(), 'fresh.duckdb'), filters)).out;
}

function sampleLogs(): string {
  const root = path.join(tmp('cachelens-logs-'), 'logs');
  cpSync(path.join(repoRoot, 'sample-logs'), root, { recursive: true });
  return root;
}

/** The store file's and its log's modification times: what shows the store was written. */
function stamp(db: string): (bigint | null)[] {
  return [db, db + '.wal'].map((f) => (existsSync(f) ? statSync(f, { bigint: true }).mtimeNs : null));
}

/** Appends a new response (appendResponse) to each of `files` that `pick` takes; how many took one. */
function appendToSome(files: string[], pick: (i: number) => boolean, id: (i: number) => string, blocks: (i: number) => number): number {
  let n = 0;
  files.forEach((f, i) => {
    if (pick(i) && appendResponse(f, id(i), { blocks: blocks(i) })) n++;
  });
  return n;
}

function transcripts(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.jsonl') && !dir.includes(`${path.sep}channels`)) out.push(p);
    }
  };
  walk(root);
  return out.sort();
}

/** The file's last line that is a response with usage, parsed. */
function lastResponse(file: string): Record<string, any> | null {
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i].includes('"usage"')) continue;
    const l = JSON.parse(lines[i]);
    if (l.type === 'assistant' && l.message?.usage && l.message.model !== '<synthetic>') return l;
  }
  return null;
}

/**
 * Appends a new response to `file`, `blocks` lines of it (as Claude Code writes one per content
 * block), a minute after the file's last one; `id` makes its message and request ids. With
 * `model`, of that model; with `reuse`, the ids of the file's last response (a copy of it).
 */
function appendResponse(file: string, id: string, opts: { blocks?: number; model?: string; reuse?: boolean; minutes?: number; at?: string } = {}): boolean {
  const last = lastResponse(file);
  // a file whose last line has no newline yet is one Claude Code is still writing
  if (!last || !readFileSync(file, 'utf8').endsWith('\n')) return false;
  const lines: string[] = [];
  for (let b = 0; b < (opts.blocks ?? 1); b++) {
    const l = structuredClone(last);
    if (!opts.reuse) {
      l.message.id = `msg_delta_${id}`;
      l.requestId = `req_delta_${id}`;
    }
    l.uuid = `delta-${id}-${b}`;
    l.timestamp = opts.at ?? new Date(Date.parse(last.timestamp) + (opts.minutes ?? 1) * 60_000).toISOString();
    if (opts.model) l.message.model = opts.model;
    l.message.usage = { ...l.message.usage, output_tokens: 100 + 7 * b + id.length };
    lines.push(JSON.stringify(l));
  }
  appendFileSync(file, lines.join('\n') + '\n');
  return true;
}

/**
 * The state an append run starts from: a cold run, then an append the store reads (a copy of a
 * request it holds), which keeps the answers and their base.
 */
async function settled(root: string, db: string, filters: Filters[] = [UTC]) {
  await ask(root, db, filters);
  assert.ok(appendResponse(transcripts(root)[0], 'settle', { reuse: true }));
  const through = await ask(root, db, filters);
  assert.equal(through.opened, true);
  assert.ok(existsSync(db + '.answers') && existsSync(db + '.delta'));
}

test('an append run adds the new responses to the kept results without opening the store: the same output as a store built afresh', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  await settled(root, db);
  const files = transcripts(root);
  const n = appendToSome(files, (i) => i % 3 === 0, (i) => `a${i}`, (i) => 1 + (i % 4));
  assert.ok(n >= 5);
  const before = stamp(db);
  const first = await ask(root, db);
  assert.equal(first.opened, false, 'answered without the store');
  assert.equal(first.stats.appended, n);
  assert.deepEqual(stamp(db), before, 'the store (and its log) not touched');
  assert.deepEqual(first.out, await fresh(root));
  assert.ok(first.out[0].quality.duplicates_removed > 0);

  // a second append run adds both runs' lines to the store's results: none twice
  files.forEach((f, i) => {
    if (i % 4 === 1) appendResponse(f, `b${i}`, { blocks: 2, minutes: 3 });
  });
  const second = await ask(root, db);
  assert.equal(second.opened, false);
  assert.deepEqual(second.out, await fresh(root));
  assert.notDeepEqual(second.out[0].totals, first.out[0].totals);

  // and a warm run after it answers from what it kept
  const warm = await ask(root, db);
  assert.equal(warm.opened, false);
  assert.equal(warm.stats.appended, 0);
  assert.deepEqual(warm.out, second.out);
});

test('the first append run after a first one writes the base from the store as it is, and adds to the answers that run kept', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  const cold = await ask(root, db);
  assert.ok(existsSync(db + '.answers') && !existsSync(db + '.delta'), 'a first run keeps answers, without a base');
  const files = transcripts(root);
  const n = appendToSome(files, (i) => i % 3 === 1, (i) => `c${i}`, (i) => 1 + (i % 3));
  assert.ok(n >= 5);
  const before = stamp(db);
  const first = await ask(root, db);
  assert.equal(first.opened, false, 'answered without the store\'s ingest');
  assert.equal(first.stats.appended, n);
  assert.ok(existsSync(db + '.delta'));
  assert.deepEqual(stamp(db), before, 'the store (and its log) only read');
  assert.deepEqual(first.out, await fresh(root));
  assert.notDeepEqual(first.out[0].totals, cold.out[0].totals);
  // the next append run adds to the same base
  files.forEach((f, i) => {
    if (i % 5 === 2) appendResponse(f, `d${i}`, { minutes: 2 });
  });
  const second = await ask(root, db);
  assert.equal(second.opened, false);
  assert.deepEqual(second.out, await fresh(root));
  // after a first run, a file added as well as lines appended: the store reads them
  const root2 = sampleLogs();
  const db2 = path.join(tmp(), 's2.duckdb');
  await ask(root2, db2);
  const files2 = transcripts(root2);
  assert.ok(appendResponse(files2[1], 'e1'));
  cpSync(files2[0], path.join(path.dirname(files2[0]), 'added-0000-0000-0000-000000000000.jsonl'));
  const added = await ask(root2, db2);
  assert.equal(added.opened, true);
  assert.deepEqual(added.out, await fresh(root2));
});

test('after a first run, an append the base cannot take (a copy of a request the store holds) goes to the store, which walks the logs again', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  const cold = await ask(root, db);
  const files = transcripts(root);
  // the walk is let go once the base is to be written (withBase); the delta then refuses the
  // repeated key, and the store's ingest needs a walk of its own
  assert.ok(appendResponse(files[0], 'r', { reuse: true }));
  assert.ok(appendResponse(files[1], 'n'));
  const after = await ask(root, db);
  assert.equal(after.opened, true);
  assert.ok(existsSync(db + '.delta'), 'the base was written before the delta refused');
  assert.equal(after.stats.files, cold.stats.files, 'every file walked again');
  assert.ok(after.stats.appended + after.stats.read >= 2);
  assert.deepEqual(after.out, await fresh(root));
});

test('an append run priced otherwise than the store goes to the store: its answers are of the run\'s prices', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  await ask(root, db);
  assert.ok(existsSync(db + '.answers') && !existsSync(db + '.delta'));
  // every rate doubled: the same weights, twice the dollars
  const doubled = JSON.parse(readFileSync(path.join(repoRoot, 'src/pricing/prices.json'), 'utf8'), (k, v) => (typeof v === 'number' && k !== 'above' ? v * 2 : v));
  const pricing = path.join(tmp(), 'prices.json');
  writeFileSync(pricing, JSON.stringify(doubled));
  const other = loadPriceTable(pricing);
  const files = transcripts(root);
  assert.ok(appendResponse(files[2], 'priced'));
  const askWith = async (dbPath: string) => {
    const r = await ingestOrAnswer({ paths: [root], dbPath, prices: other, workers: 1, delta: true });
    try {
      const out = await r.store.boundedMemory(() => summary(r.store, UTC, r.walkSkips), { mb: 64 });
      return { out, opened: r.store instanceof AnsweredStore ? r.store.storeOpened : true };
    } finally {
      r.store.close();
    }
  };
  const repriced = await askWith(db);
  assert.equal(repriced.opened, true, 'the store priced it all again');
  assert.deepEqual(repriced.out, (await askWith(path.join(tmp(), 'fresh-other.duckdb'))).out);
});

test('over real transcripts too, an append run answered without the store says what a store built afresh says', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  await settled(root, db);
  let n = 0;
  for (const [i, f] of transcripts(root).entries()) if (appendResponse(f, `real${i}`, { blocks: 1 + (i % 3) })) n++;
  assert.ok(n >= 2);
  const after = await ask(root, db);
  assert.equal(after.opened, false);
  assert.equal(after.stats.appended, n);
  assert.deepEqual(after.out, await fresh(root));
});

test('new days, models and unpriced models, time zones and filters come out as a store built afresh gives them', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  const zones: Filters[] = [
    UTC,
    { since: null, until: null, project: null, timezone: 'Pacific/Kiritimati' },
    { since: '2026-02-11', until: null, project: null, timezone: 'America/New_York' },
    { since: null, until: '2026-02-10', project: 'SHOP', timezone: 'Asia/Kolkata' },
  ];
  await settled(root, db, zones);
  const files = transcripts(root);
  appendResponse(files[0], 'late', { minutes: 60 * 30 }); // a day later
  appendResponse(files[1], 'new-model', { model: 'claude-haiku-4-5' });
  appendResponse(files[2], 'unpriced', { model: 'claude-mystery-9' });
  appendResponse(files[3], 'unknown', { model: 'claude-nobody-1', blocks: 3 });
  const after = await ask(root, db, zones);
  assert.equal(after.opened, false);
  assert.deepEqual(after.out, await fresh(root, zones));
  assert.ok(after.out[0].quality.unknown_models.some((m) => m.model === 'claude-nobody-1'));
});

test('the kept summary rows an append run adds to are the query\'s own: weight and USD unknown (NULL) for a group none of whose requests is priced', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  await settled(root, db);
  const files = transcripts(root);
  appendResponse(files[0], 'nobody', { model: 'claude-nobody-1' });
  appendResponse(files[1], 'nobody-2', { model: 'claude-nobody-1', blocks: 2 });
  appendResponse(files[2], 'priced', {});
  const rowsOf = (dbPath: string) => summaryRows(root, dbPath, UTC);
  const after = await rowsOf(db);
  assert.equal(after.opened, false);
  const afresh = await rowsOf(path.join(tmp(), 'fresh.duckdb'));
  const nobody = (rows: typeof after.rows) => rows.find((x) => x.grouping === 'model' && x.grp === 'claude-nobody-1');
  assert.equal(nobody(afresh.rows)?.requests, 2);
  assert.equal(nobody(afresh.rows)?.weight, null);
  assert.equal(nobody(afresh.rows)?.usd, null);
  assert.equal(nobody(afresh.rows)?.unpriced_requests, 2);
  const byGroup = (rows: typeof after.rows) => Object.fromEntries(rows.map((x) => [`${String(x.grouping)}/${String(x.grp)}`, x]));
  assert.deepEqual(byGroup(after.rows), byGroup(afresh.rows));
});

test('a new request\'s day comes from DuckDB\'s time zone rules, which Node\'s may differ from: as a store built afresh gives it', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  // with Node 20.20's rules America/Edmonton and America/Vancouver fall back to standard time in
  // November 2026; with DuckDB 1.5.6's they stay 6 and 7 hours behind UTC: 06:30 and 07:30 UTC are
  // then the day before in Node's, the same day in DuckDB's (both agree in summer)
  const zones: Filters[] = [UTC, { since: null, until: null, project: null, timezone: 'America/Edmonton' }, { since: null, until: null, project: null, timezone: 'America/Vancouver' }];
  await settled(root, db, zones);
  const lastAt = (hour: number, minute: number) => {
    const d = new Date();
    d.setUTCHours(hour, minute, 0, 0);
    if (d.getTime() > Date.now()) d.setTime(d.getTime() - 86_400_000);
    return d.toISOString();
  };
  const files = transcripts(root);
  assert.ok(appendResponse(files[0], 'edmonton', { at: lastAt(6, 30) }));
  assert.ok(appendResponse(files[1], 'vancouver', { at: lastAt(7, 30) }));
  const after = await ask(root, db, zones);
  assert.equal(after.opened, false, 'answered without the store');
  assert.deepEqual(after.out, await fresh(root, zones));
});

test('a request whose model or identity holds a lone surrogate goes to the store, which keeps it as U+FFFD', async () => {
  for (const opts of [{ model: 'claude-x\ud800' }, {}]) {
    const root = sampleLogs();
    const db = path.join(tmp(), 's.duckdb');
    await settled(root, db);
    // (JSON.stringify writes a lone surrogate as an escape, as Claude Code's writer would)
    assert.ok(appendResponse(transcripts(root)[0], 'lone\udc00', opts));
    const after = await ask(root, db);
    assert.equal(after.opened, true, JSON.stringify(opts));
    assert.deepEqual(after.out, await fresh(root), JSON.stringify(opts));
  }
});

test('dayInZone: a day from the run of hours an instant falls in; none outside the runs', () => {
  // hours 10 – 20 of 1970 at UTC-7, hour 21 changes its offset, hours 22 – 30 at UTC-6
  const zone = zoneRuns([
    { from_h: 10, to_h: 20, offset_us: -7 * 3_600_000_000 },
    { from_h: 22, to_h: 30, offset_us: -6 * 3_600_000_000 },
  ]);
  const at = (h: number, m = 0) => (h * 60 + m) * 60_000;
  assert.equal(dayInZone(at(10), zone), '1970-01-01');
  assert.equal(dayInZone(at(20, 59), zone), '1970-01-01');
  assert.equal(dayInZone(at(21, 30), zone), null, 'an hour whose offset changes within it');
  assert.equal(dayInZone(at(29, 59), zone), '1970-01-01');
  assert.equal(dayInZone(at(30), zone), '1970-01-02', '06:00 UTC is midnight at UTC-6');
  assert.equal(dayInZone(at(9, 59), zone), null);
  assert.equal(dayInZone(at(31), zone), null);
  assert.equal(dayInZone(at(12), zoneRuns([])), null);
});

test('a new request with copies in several files is de-duplicated as the store does it: maximum usage, earliest time, the best copy\'s attribution', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  await settled(root, db);
  const files = transcripts(root);
  // the same new response in two main transcripts of other sessions and projects, at other times
  assert.ok(appendResponse(files[0], 'twice', { minutes: 5 }));
  assert.ok(appendResponse(files[files.length - 1], 'twice', { minutes: 2, blocks: 2 }));
  // a subagent's new response, and its agent_progress copy in the parent transcript (lower output: a streaming snapshot)
  const sub = files.find((f) => f.includes(`${path.sep}subagents${path.sep}agent-`) && lastResponse(f))!;
  const main = `${path.dirname(path.dirname(sub))}.jsonl`;
  assert.ok(existsSync(main));
  const last = lastResponse(sub)!;
  // the subagent's copy (the best) a day after its progress copy's time (the request's time and day)
  const t = '2026-02-14T00:00:10.000Z';
  const early = '2026-02-13T23:59:50.000Z';
  const response = structuredClone(last);
  response.message.id = 'msg_delta_sub';
  response.requestId = 'req_delta_sub';
  response.uuid = 'delta-sub';
  response.timestamp = t;
  response.message.usage = { ...response.message.usage, output_tokens: 321 };
  appendFileSync(sub, `${JSON.stringify(response)}\n`);
  const copy = structuredClone(response);
  copy.message.usage = { ...copy.message.usage, output_tokens: 12 };
  const progress = {
    parentUuid: null,
    isSidechain: false,
    cwd: lastResponse(main)!.cwd,
    sessionId: lastResponse(main)!.sessionId,
    type: 'progress',
    data: { message: { type: 'assistant', message: copy.message, requestId: copy.requestId, uuid: 'delta-copy', timestamp: early }, type: 'agent_progress', agentId: last.agentId },
    uuid: 'delta-progress',
    timestamp: t,
  };
  appendFileSync(main, `${JSON.stringify(progress)}\n`);
  const after = await ask(root, db);
  assert.equal(after.opened, false);
  assert.deepEqual(after.out, await fresh(root));
  assert.ok(after.out[0].by_day.some((d) => d.day === '2026-02-13'), 'the earliest copy gives the day');
});

test('copies of a request with and without a 5m/1h split: the write counts once, split by its 1-hour part (append run, store, one file)', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  await settled(root, db);
  const before = (await ask(root, db)).out[0].totals;
  const files = transcripts(root).filter((f) => !f.includes(`${path.sep}subagents${path.sep}`));
  // (a second apart: copies of one time in two files go to the store, whose files' last times decide)
  const copyOf = (file: string, split: boolean) => {
    const l = structuredClone(lastResponse(file)!);
    l.message.id = 'msg_split_mix';
    l.requestId = 'req_split_mix';
    l.uuid = `split-mix-${split}`;
    l.timestamp = split ? '2026-02-14T12:00:01.000Z' : '2026-02-14T12:00:00.000Z';
    const { cache_creation: _, ...usage } = l.message.usage;
    l.message.usage = { ...usage, input_tokens: 3, output_tokens: 7, cache_read_input_tokens: 0, cache_creation_input_tokens: 1_000 };
    if (split) l.message.usage.cache_creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 1_000 };
    return JSON.stringify(l) + '\n';
  };
  // one copy without a split (all 5-minute, as old writers log it), one with the 1-hour split
  appendFileSync(files[0], copyOf(files[0], false));
  appendFileSync(files[files.length - 1], copyOf(files[files.length - 1], true));
  const after = await ask(root, db);
  assert.equal(after.opened, false);
  const t = after.out[0].totals;
  assert.equal(t.cache_write_1h - before.cache_write_1h, 1_000);
  assert.equal(t.cache_write_5m - before.cache_write_5m, 0);
  assert.deepEqual(after.out, await fresh(root));
  // both copies in one file: the reader's own merge
  const one = path.join(tmp('cachelens-logs-'), 'logs');
  mkdirSync(path.join(one, 'p'), { recursive: true });
  writeFileSync(path.join(one, 'p', 's.jsonl'), copyOf(files[0], true) + copyOf(files[0], false));
  const [single] = await fresh(one);
  assert.deepEqual([single.totals.cache_write_5m, single.totals.cache_write_1h], [0, 1_000]);
});

test('what the kept results cannot take goes to the store, with the same outcome', async () => {
  const cases: [string, (root: string, files: string[]) => void][] = [
    ['a copy of a request the store holds', (_root, files) => appendResponse(files[0], 'x', { reuse: true })],
    // of two main-file copies of one time, the one in the file that ends first is the request's (schema.ts
    // fileLastTimes): a file's last time is the store's
    ['a new request copied at one time into two files of other sessions and projects', (_root, files) => {
      const mains = files.filter((f) => !f.includes(`${path.sep}subagents${path.sep}`));
      const [a, z] = [mains[0], mains[mains.length - 1]];
      assert.notEqual(lastResponse(a)!.cwd, lastResponse(z)!.cwd);
      assert.ok(appendResponse(z, 'tie', { at: '2026-02-12T09:00:00.000Z', blocks: 2 }));
      assert.ok(appendResponse(a, 'tie', { at: '2026-02-12T09:00:00.000Z' }));
    }],
    ['a file added', (root, files) => {
      appendResponse(files[0], 'y');
      writeFileSync(path.join(path.dirname(files[0]), 'added-0000.jsonl'), readFileSync(files[1]));
    }],
    ['a file rewritten', (_root, files) => {
      const text = readFileSync(files[0], 'utf8');
      writeFileSync(files[0], text.replace('"type"', '"type" ') + text.slice(0, 200) + '\n');
    }],
    ['a line that does not parse', (_root, files) => appendFileSync(files[0], '{"type":"assistant",\n')],
    ['a file removed and another grown', (root, files) => {
      writeFileSync(files[0], '');
      appendResponse(files[1], 'z');
    }],
  ];
  for (const [what, change] of cases) {
    const root = sampleLogs();
    const db = path.join(tmp(), 's.duckdb');
    await settled(root, db);
    change(root, transcripts(root));
    const after = await ask(root, db);
    assert.equal(after.opened, true, what);
    assert.deepEqual(after.out, await fresh(root), what);
  }
});

test('an append written on to a last line read without its newline goes to the store, which reads the file again: one longer line, as a store built afresh reads it', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  const file = transcripts(root)[1];
  const text = readFileSync(file, 'utf8');
  assert.ok(text.endsWith('\n'));
  writeFileSync(file, text.slice(0, -1));
  await settled(root, db);
  // a new response run onto that line: read from where the last read stopped, it was a line of its own
  const l = structuredClone(lastResponse(file)!);
  l.message.id = 'msg_delta_joined';
  l.requestId = 'req_delta_joined';
  appendFileSync(file, JSON.stringify(l) + '\n');
  const after = await ask(root, db);
  assert.equal(after.opened, true);
  assert.deepEqual(after.out, await fresh(root));
});

test('answers kept again by a run the store answered keep their base; a warm run that finds none keeps answers without one', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  await settled(root, db);
  const files = transcripts(root);
  // sessions are not among the kept results: the store opens, unchanged, and keeps them with the base;
  // a report (a run through the store that changes nothing) then keeps the base too, and the results
  // it read ahead
  const warm = await ask(root, db, [UTC], true);
  assert.equal(warm.opened, true);
  await report(root, db);
  assert.ok(appendResponse(files[4], 'after-report'));
  const afterReport = await ask(root, db);
  assert.equal(afterReport.opened, false);
  assert.deepEqual(afterReport.out, await fresh(root));
  // sessions are not among the kept results: the store opens and ingests the appends, and keeps a
  // base, but its results are sessions' only: the next summary of an append goes to the store
  assert.ok(appendResponse(files[1], 'two'));
  const withSessions = await ask(root, db, [UTC], true);
  assert.equal(withSessions.opened, true);
  assert.deepEqual(withSessions.out, await fresh(root));
  assert.ok(appendResponse(files[2], 'three'));
  const through = await ask(root, db);
  assert.equal(through.opened, true);
  assert.deepEqual(through.out, await fresh(root));
  assert.ok(appendResponse(files[3], 'four'));
  const next = await ask(root, db);
  assert.equal(next.opened, false);
  assert.deepEqual(next.out, await fresh(root));
  // a cold run, then a warm one: answers, but no base (writing one is an append run's work), which
  // the next append run writes from the store as it is
  const other = path.join(tmp(), 'o.duckdb');
  await ask(root, other);
  await ask(root, other);
  assert.ok(existsSync(other + '.answers') && !existsSync(other + '.delta'));
  assert.ok(appendResponse(files[5], 'five'));
  const five = await ask(root, other);
  assert.equal(five.opened, false);
  assert.ok(existsSync(other + '.delta'));
  assert.deepEqual(five.out, await fresh(root));
});

test('sessions and blocks, which the kept summary results do not answer, do not add an append to them', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  await settled(root, db);
  const kept = readFileSync(db + '.answers', 'utf8');
  assert.ok(appendResponse(transcripts(root)[1], 'n'));
  const r = await run(root, db, false);
  try {
    assert.ok(!(r.store instanceof AnsweredStore), 'straight to the store');
  } finally {
    r.store.close();
  }
  assert.notEqual(readFileSync(db + '.answers', 'utf8'), kept);
});

test('a DOUBLE becomes DECIMAL(38, 15) as DuckDB casts it; key hashes are DuckDB\'s hash()', async () => {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  try {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const ws = [1, 1.25, 2, 0.1, 5, 3.75 / 3, 0.3 / 3, 15 / 3, 0.08 / 0.8, 4 / 0.8, 22.5 / 3, 7.5 / 6];
    const xs: number[] = [0, 0.5e-15, 1.5e-15, 2.5, 1e-16, 123456789.123456789];
    for (let i = 0; i < 50_000; i++) {
      const w = () => ws[Math.floor(rnd() * ws.length)];
      const weight = Math.floor(rnd() * 50) * w() + Math.floor(rnd() * 2000) * w() + Math.floor(rnd() * 200000) * w() + Math.floor(rnd() * 900000) * w();
      xs.push(weight, weight * (3 / 1e6), weight * (0.8 / 1e6), rnd() * 1e-3, rnd(), -rnd());
    }
    // a table (i INTEGER, `column` of `type`) of `values` in order
    const table = async (name: string, column: string, type: 'DOUBLE' | 'VARCHAR', values: (number | string)[]) => {
      await c.run(`CREATE TABLE ${name} (i INTEGER, ${column} ${type})`);
      const app = await c.createAppender(name);
      values.forEach((v, i) => {
        app.appendInteger(i);
        if (type === 'DOUBLE') app.appendDouble(v as number);
        else app.appendVarchar(v as string);
        app.endRow();
      });
      app.closeSync();
    };
    await table('t', 'x', 'DOUBLE', xs);
    const rows = (await c.runAndReadAll('SELECT i, x::DECIMAL(38, 15)::VARCHAR AS d FROM t ORDER BY i')).getRows();
    let differ = 0;
    for (const [i, d] of rows) {
      const mine = toE15(xs[Number(i)]);
      if (e15Of(String(d)) !== mine || (mine !== 0n && e15Text(mine) !== String(d))) differ++;
    }
    assert.equal(differ, 0);
    const [[sum]] = (await c.runAndReadAll('SELECT sum(x::DECIMAL(38, 15))::VARCHAR FROM t')).getRows();
    assert.equal(e15Text(xs.reduce((s, x) => s + toE15(x), 0n)), String(sum));
    // keys of every length to 40 bytes, and beyond ASCII
    const keys = Array.from({ length: 400 }, (_, i) => {
      const id = `msg_${Math.floor(rnd() * 1e12).toString(36)}${'é'.repeat(i % 3)}`.slice(0, i % 41);
      return i % 2 ? `${id}\u0000req_${i}` : id;
    });
    await table('k', 'key', 'VARCHAR', keys);
    const hashes = (await c.runAndReadAll('SELECT i, hash(key)::VARCHAR FROM k ORDER BY i')).getRows();
    assert.deepEqual(hashes.map(([, h]) => String(h)), keys.map((key) => duckdbHash(key).toString()));
    // the base's form of it, as the base file is written from DuckDB: a double, exact
    const kept = (await c.runAndReadAll('SELECT i, (hash(key) >> 11)::DOUBLE FROM k ORDER BY i')).getRows();
    assert.deepEqual(kept.map(([, h]) => h), keys.map(keyHash));
    assert.ok(keys.map(keyHash).some((h) => h > 2 ** 52), 'hashes use the top bit of the 53');
  } finally {
    c.closeSync();
    instance.closeSync();
  }
});

test('a base that runs out of memory is written again once the run\'s changes are folded into the store file', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  const r = await ingest({ paths: [root], dbPath: db, prices, workers: 1 });
  try {
    const listing = await r.store.getMeta('listing_key');
    assert.ok(listing);
    // DuckDB as it was after an append run over a 10 GB store: the run's committed changes, held
    // until a checkpoint, left the base's queries too little of its bound
    const ranOut = () => new Error('Out of Memory Error: could not allocate block of size 256.0 KiB (30.3 MiB/30.5 MiB used)');
    const as = (foldFrees: boolean) => {
      const seen: string[] = [];
      let folded = false;
      const store = new Proxy(r.store, {
        get(target, prop, receiver) {
          if (prop === 'run')
            return async (sql: string) => {
              seen.push(sql);
              if (sql === 'CHECKPOINT') folded = foldFrees;
              return target.run(sql);
            };
          if (prop === 'chunks')
            return (sql: string, ...rest: unknown[]) => {
              if (!folded) throw ranOut();
              return (target.chunks as (...a: unknown[]) => unknown)(sql, ...rest);
            };
          const v = Reflect.get(target, prop, receiver);
          return typeof v === 'function' ? v.bind(receiver) : v;
        },
      });
      return { store, seen };
    };
    const freed = as(true);
    const token = await writeDeltaBase(freed.store, listing, prices);
    assert.equal(typeof token, 'string');
    assert.ok(freed.seen.includes('CHECKPOINT'));
    assert.ok(existsSync(`${db}.delta`));
    // still out of memory after the fold: no base, and never a query without DuckDB's bound
    const stuck = as(false);
    assert.equal(await writeDeltaBase(stuck.store, listing, prices), null);
    const bounds = stuck.seen.filter((q) => q.startsWith('SET memory_limit'));
    assert.deepEqual(bounds.filter((q) => q.includes("'32MB'")).length, 2, bounds.join('; '));
    // a bound DuckDB refuses (it cannot free enough to fit it) is no licence to run without one
    let queried = 0;
    const refusing = new Proxy(r.store, {
      get(target, prop, receiver) {
        if (prop === 'run')
          return async (sql: string) => {
            if (sql.includes("memory_limit = '32MB'")) throw new Error('Out of Memory Error: Failed to change memory limit to 32000000: could not free up enough memory for the new limit');
            return target.run(sql);
          };
        if (prop === 'chunks' || prop === 'all')
          return (...a: unknown[]) => {
            if (prop === 'chunks' || !String(a[0]).includes('current_setting')) queried++;
            return (target[prop] as (...x: unknown[]) => unknown).apply(target, a);
          };
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(receiver) : v;
      },
    });
    assert.equal(await writeDeltaBase(refusing, listing, prices), null);
    assert.equal(queried, 0, 'no query of the base ran');
  } finally {
    r.store.close();
  }
});

test('an append run\'s summary total of unpriced requests only, where the kept rows had none, is unknown (NULL) as the query gives it', async () => {
  const root = sampleLogs();
  const db = path.join(tmp(), 's.duckdb');
  // no request of the sample logs lies on or after this day: the kept total row counts 0 requests, weight 0
  const LATER: Filters = { ...UTC, since: '2026-06-01' };
  await settled(root, db, [UTC, LATER]);
  appendResponse(transcripts(root)[0], 'nobody-later', { model: 'claude-nobody-1', at: '2026-06-02T00:00:00.000Z' });
  const rowsOf = (dbPath: string) => summaryRows(root, dbPath, LATER);
  const after = await rowsOf(db);
  assert.equal(after.opened, false);
  const afresh = await rowsOf(path.join(tmp(), 'fresh.duckdb'));
  const total = (rows: typeof after.rows) => rows.find((x) => x.grouping === 'total');
  assert.equal(total(afresh.rows)?.requests, 1);
  assert.equal(total(afresh.rows)?.weight, null);
  const byGroup = (rows: typeof after.rows) => Object.fromEntries(rows.map((x) => [`${String(x.grouping)}/${String(x.grp)}`, x]));
  assert.deepEqual(byGroup(after.rows), byGroup(afresh.rows));
});
