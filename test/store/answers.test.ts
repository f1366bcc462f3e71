/**
 * The answers kept beside the store (store/answers.ts): a run keeps them when it closes the
 * store, and a run over the same logs then answers from them without opening the store, with
 * what the store itself answers. They are not used once anything else changed: the store written by
 * anything, a damaged or foreign answers file; a log appended to is added to them (delta.ts), or
 * read into the store. A result they do not hold opens the store, and is kept with them for the
 * next run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { quality, summary } from '../../src/analyses/summary.js';
import { sessions } from '../../src/analyses/sessions.js';
import type { Filters } from '../../src/analyses/filters.js';
import { type AnswerResult, ingest, ingestOrAnswer } from '../../src/ingest/ingest.js';
import { AnsweredStore, storeIdentity } from '../../src/store/answers.js';
import { SCHEMA_VERSION } from '../../src/store/schema.js';
import { DuckDBInstance } from '@duckdb/node-api';
import { Store } from '../../src/store/store.js';
import { assistant, usage } from '../faults/helpers.js';
import { cli } from '../helpers/corpus.js';
import { CONDENSE, MAROT_DOV, corpus, prices, tmp } from './helpers.js';

const filters: Filters = { since: null, until: null, project: null, timezone: 'UTC' };

/** A run as `summary` makes it (an append may be added to the kept results: IngestOptions.delta). */
function answerRun(root: string, db: string): Promise<AnswerResult> {
  return ingestOrAnswer({ paths: [root], dbPath: db, prices, workers: 1, delta: true });
}

/** One run of `summary` (and `sessions`, if asked) as the CLI runs them: ingest or answer, the answers, the store closed. */
async function answer(root: string, db: string, withSessions = false) {
  const r = await answerRun(root, db);
  try {
    const s = await r.store.boundedMemory(() => summary(r.store, filters, r.walkSkips), { mb: 64 });
    const sess = withSessions ? await r.store.boundedMemory(() => sessions(r.store, filters), { mb: 128 }) : null;
    const answered = r.store instanceof AnsweredStore ? { opened: r.store.storeOpened } : null;
    return { summary: s, sessions: sess, answered, stats: r.stats };
  } finally {
    r.store.close();
  }
}

/** What the store answers, asked directly (no answers file involved). */
async function fromStore(db: string) {
  const store = await Store.open(db);
  try {
    return { summary: await summary(store, filters), sessions: await sessions(store, filters), quality: await quality(store) };
  } finally {
    store.close();
  }
}

function setup(): { root: string; db: string; file: string } {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  return { root, db, file: path.join(root, CONDENSE, '61d12533-17ec-4bbe-8876-6cdec3eb838c.jsonl') };
}

test('a first run keeps answers; the next run answers from them, as the store does, without opening it', async () => {
  const { root, db } = setup();
  const cold = await answer(root, db);
  assert.equal(cold.answered, null);
  assert.ok(existsSync(db + '.answers'), 'a run that read the logs whole keeps what it was asked');
  assert.ok(!existsSync(db + '.delta'), 'without a base: only append runs write one');
  const stamp = () => [db, db + '.wal'].map((f) => (existsSync(f) ? statSync(f, { bigint: true }).mtimeNs : null));
  const before = stamp();
  const warm = await answer(root, db);
  assert.deepEqual(warm.answered, { opened: false });
  assert.equal(warm.stats.unchanged, warm.stats.files);
  assert.deepEqual(warm.summary, cold.summary);
  assert.deepEqual(stamp(), before, 'the store (and its log) not touched');
  // a question the answers do not hold opens the store, and is kept with them
  const withSessions = await answer(root, db, true);
  assert.deepEqual(withSessions.answered, { opened: true });
  const third = await answer(root, db, true);
  assert.deepEqual(third.answered, { opened: false });
  assert.deepEqual(third.summary, cold.summary);
  assert.deepEqual(third.sessions, withSessions.sessions);
  assert.deepEqual({ ...third.stats, ms: 0 }, { ...warm.stats, ms: 0 });
  const direct = await fromStore(db);
  assert.deepEqual(third.summary, direct.summary);
  assert.deepEqual(third.sessions, direct.sessions);
});

test('results too large to read while the logs are walked are read once the run is known warm, and kept', async () => {
  const { root, db } = setup();
  await answer(root, db);
  // a remembered result of 5 million characters: more than an ingest reads ahead beside its walk
  const store = await Store.open(db);
  await store.remember('large', async () => 'x'.repeat(5_000_000));
  store.close();
  const warm = await answer(root, db);
  assert.equal(warm.answered, null);
  assert.ok(existsSync(db + '.answers'), 'the warm run read them after its walk, and kept them');
  const next = await answerRun(root, db);
  try {
    assert.ok(next.store instanceof AnsweredStore);
    assert.equal(await next.store.remember('large', async () => assert.fail('computed again')), 'x'.repeat(5_000_000));
    assert.deepEqual(await next.store.boundedMemory(() => summary(next.store, filters, next.walkSkips), { mb: 64 }), warm.summary);
    assert.equal(next.store.storeOpened, false);
  } finally {
    next.store.close();
  }
});

test('a result the answers do not hold opens the store; it is kept, and answers the run after', async () => {
  const { root, db } = setup();
  await answer(root, db);
  await answer(root, db); // keeps answers: summary's only
  const withSessions = await answer(root, db, true);
  assert.deepEqual(withSessions.answered, { opened: true });
  const direct = await fromStore(db);
  assert.deepEqual(withSessions.sessions, direct.sessions);
  assert.ok(withSessions.sessions!.sessions.length > 0);
  const again = await answer(root, db, true);
  assert.deepEqual(again.answered, { opened: false }, 'the new result was kept with the answers');
  assert.deepEqual(again.sessions, direct.sessions);
  assert.deepEqual(again.summary, direct.summary);
});

test('a log appended to: the run adds it to the answers, with a base written from the store; the next append is added to them, and a question they do not hold reads it into the store', async () => {
  const { root, db, file } = setup();
  await answer(root, db);
  const warm = await answer(root, db);
  assert.ok(existsSync(db + '.answers'));
  const append = (msg: string, day: number) =>
    appendFileSync(file, `${assistant({ session: '61d12533-17ec-4bbe-8876-6cdec3eb838c', msg, t: `2026-01-0${day}T10:00:00.000Z`, usage: usage(11, 22, 0, 0) })}\n`);
  append('msg_appended', 2);
  // a warm run keeps no base (ingest/delta.ts): the append run writes one from the store as it is,
  // and adds the appended line to the answers
  assert.ok(!existsSync(db + '.delta'));
  const appended = await answer(root, db);
  assert.deepEqual(appended.answered, { opened: false }, 'answered from the answers');
  assert.equal(appended.stats.appended, 1);
  assert.equal(appended.summary.totals.requests, warm.summary.totals.requests + 1);
  assert.equal(appended.summary.totals.output, warm.summary.totals.output + 22);
  assert.ok(existsSync(db + '.answers') && existsSync(db + '.delta'), 'the append run kept answers, and their base');
  // the next new line is added to them without the store
  append('msg_appended_2', 3);
  const added = await answer(root, db);
  assert.deepEqual(added.answered, { opened: false });
  assert.equal(added.stats.appended, 1);
  assert.equal(added.summary.totals.requests, warm.summary.totals.requests + 2);
  const next = await answer(root, db);
  assert.deepEqual(next.answered, { opened: false });
  assert.deepEqual(next.summary, added.summary);
  // sessions is not among them: the store reads the appended line, and answers as it does directly
  const withSessions = await answer(root, db, true);
  assert.deepEqual(withSessions.answered, { opened: true });
  const direct = await fromStore(db);
  assert.deepEqual(direct.summary, added.summary);
  assert.deepEqual(withSessions.sessions, direct.sessions);
  assert.deepEqual(direct.quality, added.summary.quality);
});

test('parts of the answers and of their base that killed runs left are removed by the next run that writes them; a running writer\'s part is left', async () => {
  const { root, db, file } = setup();
  mkdirSync(path.dirname(db), { recursive: true });
  // a run killed (Ctrl-C, SIGKILL) while it wrote them left `<file>.<its pid>.tmp`: no later run
  // removed them, and each such run left another
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const left = [`${db}.answers.${gone}.tmp`, `${db}.delta.${gone}.tmp`];
  const writing = `${db}.answers.${process.ppid}.tmp`;
  for (const f of [...left, writing]) writeFileSync(f, 'part of a file');
  const first = await answer(root, db);
  assert.equal(existsSync(left[0]), false, 'the answers kept removed the part of answers left');
  appendFileSync(file, `${assistant({ session: '61d12533-17ec-4bbe-8876-6cdec3eb838c', msg: 'msg_parts', t: '2026-01-02T10:00:00.000Z', usage: usage(11, 22, 0, 0) })}\n`);
  const appended = await answer(root, db);
  assert.deepEqual(appended.answered, { opened: false }, 'answered from the answers, with a base written');
  assert.ok(existsSync(db + '.delta'));
  assert.equal(existsSync(left[1]), false, 'the base written removed the part of a base left');
  assert.equal(existsSync(writing), true, 'a part of a process still running is its own');
  assert.equal(appended.summary.totals.requests, first.summary.totals.requests + 1);
});

test('answers do not hold once the store was written by anything, nor when damaged or of another schema', async () => {
  const { root, db } = setup();
  await answer(root, db);
  const warm = await answer(root, db);
  const kept = readFileSync(db + '.answers', 'utf8');
  // a write to the store (here: a row of meta) leaves the answers file as it was, and unused
  const store = await Store.open(db);
  await store.setMeta('something', 'else');
  store.close();
  const written = await answer(root, db);
  assert.equal(written.answered, null);
  assert.deepEqual(written.summary, warm.summary);
  // that warm run kept answers for the store as it is now; each damage below makes them unused
  const good = readFileSync(db + '.answers', 'utf8');
  assert.notEqual(good, kept, 'kept again for the store as it is now');
  const head = JSON.parse(good.slice(0, good.indexOf('\n')));
  const damaged = [
    good.slice(0, -1), // a value cut short
    `${good}x`, // bytes after the last value
    'not json\n',
    good.replace(/^\{/, '['),
    `${JSON.stringify({ ...head, schema: head.schema + 1 })}${good.slice(good.indexOf('\n'))}`,
    `${JSON.stringify({ ...head, store: head.store.replace(/^\d+/, '1') })}${good.slice(good.indexOf('\n'))}`,
    `${good.slice(0, -8)}${'\0'.repeat(8)}`, // bytes of a value damaged, the lengths as they were
    good.replace(/("requests":)(\d)/, (_, k: string, d: string) => `${k}${(Number(d) + 1) % 10}`), // still JSON, a wrong count
    // the header edited alone: two results' keys swapped, or a byte of one's length given to the next
    `${JSON.stringify({ ...head, results: [[head.results[1][0], head.results[0][1]], [head.results[0][0], head.results[1][1]], ...head.results.slice(2)] })}${good.slice(good.indexOf('\n'))}`,
    `${JSON.stringify({ ...head, results: [[head.results[0][0], head.results[0][1] + 1], [head.results[1][0], head.results[1][1] - 1], ...head.results.slice(2)] })}${good.slice(good.indexOf('\n'))}`,
  ];
  assert.ok(head.results.length >= 2);
  for (const text of damaged) {
    writeFileSync(db + '.answers', text);
    const r = await answer(root, db);
    assert.equal(r.answered, null, `not answered from ${JSON.stringify(text.slice(0, 40))}…`);
    assert.deepEqual(r.summary, warm.summary);
  }
  // and the last of those runs, a warm one, kept good answers again
  assert.deepEqual((await answer(root, db)).answered, { opened: false });
});

test('the store changed by another process: the problems reported are those of the walk the store was then read with', async () => {
  const { root, db, file } = setup();
  await answer(root, db);
  await answer(root, db); // keeps answers
  const r = await answerRun(root, db);
  assert.ok(r.store instanceof AnsweredStore);
  assert.deepEqual(r.walkSkips, []);
  // meanwhile: a response appended, a transcript's link left dangling, and another run ingests the logs
  appendFileSync(file, `${assistant({ session: '61d12533-17ec-4bbe-8876-6cdec3eb838c', msg: 'msg_meanwhile', t: '2026-01-03T10:00:00.000Z', usage: usage(5, 7, 0, 0) })}\n`);
  symlinkSync(path.join(root, 'nowhere.jsonl'), path.join(root, CONDENSE, 'dangling.jsonl'));
  (await answerRun(root, db)).store.close();
  let asked: Awaited<ReturnType<typeof summary>>;
  try {
    // sessions is not among the answers: the store opens, finds its listing key is not this run's,
    // and the logs are read again (with the link); the work runs again, with that walk's problems
    asked = await r.store.boundedMemory(async () => {
      await sessions(r.store, filters);
      return summary(r.store, filters, r.walkSkips);
    }, { mb: 128 });
  } finally {
    r.store.close();
  }
  assert.deepEqual(
    asked.quality.skipped.map((g) => g.reason),
    ['vanished_file'],
  );
  assert.deepEqual(asked.quality, (await answer(root, db)).summary.quality, 'as a run over the logs as they are now reports');
});

test('a rebuild or an in-memory store never answers from a file', async () => {
  const { root, db } = setup();
  await answer(root, db);
  await answer(root, db);
  const kept = readFileSync(db + '.answers', 'utf8');
  const rebuilt = await ingestOrAnswer({ paths: [root], dbPath: db, prices, workers: 1, rebuild: true });
  try {
    assert.ok(rebuilt.store instanceof Store);
    assert.equal(rebuilt.stats.read, rebuilt.stats.files);
    assert.ok(!existsSync(db + '.answers'), 'the rebuild changed the store and dropped them');
  } finally {
    rebuilt.store.close();
  }
  // what it keeps at its close is of the store it built: nothing asked, so no summary
  assert.notEqual(readFileSync(db + '.answers', 'utf8'), kept);
  const after = await answer(root, db);
  assert.deepEqual(after.answered, { opened: true });
  const mem = await ingestOrAnswer({ paths: [root], dbPath: ':memory:', prices, workers: 1 });
  mem.store.close();
  assert.ok(mem.store instanceof Store);
});

test('the CLI: a second and a third `summary` over the default roots answer as the first did, without loading DuckDB', async () => {
  const { root, db } = setup();
  // the probe says at exit whether DuckDB's library was loaded into the process
  const probe = path.join(path.dirname(fileURLToPath(import.meta.url)), 'duckdb-probe.mjs');
  const env = { CLAUDE_CONFIG_DIR: root, HOME: tmp(), NODE_OPTIONS: `--import ${probe}` };
  const summaryRun = () => {
    const r = cli(['summary', '--db', db, '--json', '--timezone', 'UTC'], env);
    assert.equal(r.code, 0, r.stderr);
    return { out: r.stdout, duckdb: /duckdb-loaded: (true|false)/.exec(r.stderr)?.[1] };
  };
  const first = summaryRun();
  assert.ok(existsSync(db + '.answers'));
  const before = statSync(db, { bigint: true }).mtimeNs;
  const second = summaryRun();
  const third = summaryRun();
  assert.deepEqual([first.duckdb, second.duckdb, third.duckdb], ['true', 'false', 'false']);
  assert.equal(third.out, first.out);
  assert.equal(second.out, first.out);
  assert.equal(statSync(db, { bigint: true }).mtimeNs, before);
  // a command whose result is not among them opens the store and answers as a fresh store does
  const sessionsOf = (dbPath: string) => cli(['sessions', '--db', dbPath, '--json', '--timezone', 'UTC'], env);
  const s = sessionsOf(db);
  assert.equal(s.code, 0, s.stderr);
  assert.equal(s.stdout, sessionsOf(path.join(tmp(), 'fresh.duckdb')).stdout);
  // a query of the user's own may change the store: the answers go, even when it fails
  for (const sql of ['SELECT count(*) AS n FROM requests', 'SELECT no_such_column FROM requests']) {
    summaryRun();
    assert.ok(existsSync(db + '.answers'));
    const file = path.join(tmp(), 'own.sql');
    writeFileSync(file, `${sql}\n`);
    cli(['query', file, '--db', db], env);
    assert.ok(!existsSync(db + '.answers'), sql);
    assert.equal(summaryRun().out, first.out);
  }
});

test('the store changed by another process before a question the answers do not hold: the logs are read into it, and the whole answer comes from it', async () => {
  const { root, db, file } = setup();
  await answer(root, db);
  const before = await answer(root, db); // keeps answers (summary's)
  const r = await answerRun(root, db);
  assert.ok(r.store instanceof AnsweredStore);
  // meanwhile: a response appended, and another run ingests it
  appendFileSync(file, `${assistant({ session: '61d12533-17ec-4bbe-8876-6cdec3eb838c', msg: 'msg_meanwhile', t: '2026-01-03T10:00:00.000Z', usage: usage(5, 7, 0, 0) })}\n`);
  (await ingest({ paths: [root], dbPath: db, prices, workers: 1 })).store.close();
  let asked: { s: Awaited<ReturnType<typeof summary>>; sess: Awaited<ReturnType<typeof sessions>> };
  try {
    // summary is among the answers, sessions is not: the work runs again over the store
    asked = await r.store.boundedMemory(async () => ({ s: await summary(r.store, filters), sess: await sessions(r.store, filters) }), { mb: 128 });
    assert.equal((r.store as AnsweredStore).storeOpened, true);
  } finally {
    r.store.close();
  }
  const direct = await fromStore(db);
  assert.deepEqual(asked.s, direct.summary, 'the summary too comes from the store as it is now');
  assert.deepEqual(asked.sess, direct.sessions);
  assert.equal(asked.s.totals.requests, before.summary.totals.requests + 1, 'with the response appended meanwhile');
  const freshDb = path.join(tmp(), 'fresh.duckdb');
  (await answerRun(root, freshDb)).store.close();
  assert.deepEqual(asked.s, (await fromStore(freshDb)).summary, 'as a fresh store over the logs as they are now');
  // the answers kept at its close hold for the store as it is now
  const next = await answer(root, db, true);
  assert.deepEqual(next.answered, { opened: false });
  assert.deepEqual(next.summary, asked.s);
  assert.deepEqual(next.sessions, asked.sess);
});

test('a sessions run in another zone keeps its summary totals with their zone\'s days: an append run after it is still answered without the store', async () => {
  const { root, db, file } = setup();
  const warm = await answer(root, db);
  // sessions' totals row is summary's total (scopeTotals), asked in Tokyo: kept in the answers as
  // summary keeps its own, with the zone's days an append run needs to add to it (ingest/delta.ts)
  const r = await answerRun(root, db);
  try {
    await r.store.boundedMemory(() => sessions(r.store, { ...filters, timezone: 'Asia/Tokyo' }), { mb: 128 });
  } finally {
    r.store.close();
  }
  appendFileSync(file, `${assistant({ session: '61d12533-17ec-4bbe-8876-6cdec3eb838c', msg: 'msg_after_tokyo', t: '2026-01-02T10:00:00.000Z', usage: usage(11, 22, 0, 0) })}\n`);
  const appended = await answer(root, db);
  assert.deepEqual(appended.answered, { opened: false }, 'answered from the answers, as without the Tokyo run');
  assert.equal(appended.summary.totals.requests, warm.summary.totals.requests + 1);
  // the same answer as a store built afresh from the logs
  const fresh = await answer(root, path.join(tmp(), 'fresh.duckdb'));
  assert.deepEqual(appended.summary, fresh.summary);
});

test('a newer cachelens\'s answers beside its store answer nothing here: `summary`, `sessions` and `blocks` refuse the store as newer in one line, as without them, and leave both as they were', async () => {
  const { root, db } = setup();
  const probe = path.join(path.dirname(fileURLToPath(import.meta.url)), 'duckdb-probe.mjs');
  const env = { HOME: tmp(), NODE_OPTIONS: `--import ${probe}` };
  const run = (command: string) => cli([command, root, '--db', db, '--json', '--timezone', 'UTC'], env);
  for (const loaded of ['true', 'false']) {
    const r = run('summary');
    assert.equal(r.code, 0, r.stderr);
    // the second answers from the answers the first kept
    assert.equal(r.stderr, `duckdb-loaded: ${loaded}\n`);
  }
  // what a newer cachelens leaves: the store at its version, and answers it kept at its close,
  // carrying that version and the store's identity (their digest covers neither)
  const instance = await DuckDBInstance.create(db);
  const c = await instance.connect();
  await c.run(`UPDATE meta SET value = '${SCHEMA_VERSION + 1}' WHERE key = 'schema_version'`);
  c.closeSync();
  instance.closeSync();
  const kept = readFileSync(db + '.answers', 'utf8');
  const head = JSON.parse(kept.slice(0, kept.indexOf('\n')));
  writeFileSync(db + '.answers', `${JSON.stringify({ ...head, schema: SCHEMA_VERSION + 1, store: storeIdentity(db) })}${kept.slice(kept.indexOf('\n'))}`);
  const beside = () => ['', '.wal', '.answers'].map((s) => (existsSync(db + s) ? readFileSync(db + s).toString('base64') : '')).join('|');
  const before = beside();
  for (const command of ['summary', 'sessions', 'blocks']) {
    const r = run(command);
    assert.equal(r.code, 2, `${command}: ${r.stderr}`);
    assert.equal(r.stdout, '', command);
    const lines = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('duckdb-loaded'));
    assert.deepEqual(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`was written by a newer cachelens \\(store version ${SCHEMA_VERSION + 1}; this cachelens writes version ${SCHEMA_VERSION}\\) and is left as it is`), command);
    assert.equal(beside(), before, `${command}: the store and the answers left as they were`);
  }
});
