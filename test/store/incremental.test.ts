/**
 * Incremental ingest (SPEC §7, issue #9): unchanged files are not opened, appended files are read
 * from where they stopped, half-written last lines are counted once complete, vanished files are
 * retired, replaced files are read again, and every incremental store equals a rebuilt one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { type Progress, ingest } from '../../src/ingest/ingest.js';
import { UsageError } from '../../src/errors.js';
import { DERIVE_CHAINS } from '../../src/store/schema.js';
import { CsvFile } from '../../src/store/stage.js';
import { Store } from '../../src/store/store.js';
import { assistant, usage, user } from '../faults/helpers.js';
import { CONDENSE, CONDENSE_61, MAROT_DOV, MAROT_DOV_MAIN, corpus, prices, realBytes, repoRoot, run, runAndDump, tmp } from './helpers.js';

test('a re-run with no change opens no log file and leaves the store as it was', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  // whole-second mtimes, so that they can be put back exactly below
  const stamp = new Date('2026-02-01T10:00:00Z');
  for (const rel of [CONDENSE_61, MAROT_DOV_MAIN]) utimesSync(path.join(root, rel), stamp, stamp);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  assert.equal(first.stats.read, first.stats.files);
  assert.ok(first.dump.totals.requests as number > 100);

  const again = await runAndDump([root], db);
  assert.deepEqual(
    { unchanged: again.stats.unchanged, read: again.stats.read, appended: again.stats.appended, bytesRead: again.stats.bytesRead },
    { unchanged: first.stats.files, read: 0, appended: 0, bytesRead: 0 },
  );
  assert.deepEqual(again.dump, first.dump);

  // Proof that nothing was opened: overwrite every transcript with garbage of the same size and
  // put its mtime back. A reader that opened any of them would now find no requests at all.
  for (const rel of [CONDENSE_61, MAROT_DOV_MAIN]) {
    const p = path.join(root, rel);
    writeFileSync(p, Buffer.alloc(statSync(p).size, 0x78));
    utimesSync(p, stamp, stamp);
  }
  const blind = await runAndDump([root], db);
  assert.equal(blind.stats.unchanged, first.stats.files);
  assert.equal(blind.stats.bytesRead, 0);
  assert.deepEqual(blind.dump, first.dump);
});

/** Cut points in a transcript: after a line, inside a line, or just before a line's newline. */
function cuts(bytes: Buffer): { name: string; at: number }[] {
  const ends: number[] = [];
  for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) ends.push(i + 1);
  const lines = ends.map((e, i) => JSON.parse(bytes.subarray(i === 0 ? 0 : ends[i - 1], e).toString('utf8')) as Record<string, any>);
  const out: { name: string; at: number }[] = [];
  // between two lines of one response (same message.id): the response is split across reads
  const split = lines.findIndex((l, i) => i > 5 && l.type === 'assistant' && lines[i + 1]?.type === 'assistant' && lines[i + 1].message?.id === l.message?.id);
  if (split >= 0) out.push({ name: 'inside a response', at: ends[split] });
  // right after an attachment: its round is only known from what follows
  const att = lines.findIndex((l, i) => i > 3 && l.type === 'attachment');
  if (att >= 0) out.push({ name: 'after an attachment', at: ends[att] });
  const mid = Math.floor(lines.length / 2);
  out.push({ name: 'half-written line', at: ends[mid] + Math.floor((ends[mid + 1] - ends[mid]) / 2) });
  out.push({ name: 'complete line without its newline', at: ends[mid + 1] - 1 });
  return out;
}

for (const rel of [CONDENSE_61, MAROT_DOV_MAIN]) {
  const whole = realBytes(rel);
  for (const cut of cuts(whole)) {
    test(`${path.basename(rel).slice(0, 8)}: appending after a cut ${cut.name} reads only the new bytes and equals a rebuild`, async () => {
      const root = corpus([path.dirname(rel)]);
      const file = path.join(root, rel);
      writeFileSync(file, whole.subarray(0, cut.at));
      const db = path.join(tmp(), 's.duckdb');
      const before = await runAndDump([root], db);
      if (cut.name === 'half-written line') {
        assert.deepEqual(
          before.dump.skipped.filter((s) => s.reason === 'incomplete_last_line').map((s) => s.file),
          [file],
          'the half line is counted as incomplete, not read',
        );
      }
      const readTo = before.dump.files.find((f) => f.path === file)!.read_to as number;

      appendFileSync(file, whole.subarray(cut.at));
      const after = await runAndDump([root], db);
      assert.equal(after.stats.appended, 1);
      assert.equal(after.stats.derived, 'touched', 'only the requests and chains the append touched are derived again');
      assert.equal(after.stats.read, 0);
      assert.equal(after.stats.unchanged, after.stats.files - 1);
      assert.equal(after.stats.bytesRead, whole.length - readTo, 'only the bytes after the last complete line are read');

      const rebuilt = await runAndDump([root], path.join(tmp(), 'fresh.duckdb'));
      assert.deepEqual(after.dump.totals, rebuilt.dump.totals);
      assert.deepEqual(after.dump.requests, rebuilt.dump.requests);
      assert.deepEqual(after.dump.chains, rebuilt.dump.chains);
      assert.deepEqual(after.dump.attachments, rebuilt.dump.attachments);
      assert.deepEqual(after.dump.skipped, rebuilt.dump.skipped);
      assert.deepEqual(after.dump.files, rebuilt.dump.files);
    });
  }
}

test('a complete last line without its newline, written on without one: the file is read again whole and equals a rebuild', async () => {
  const rel = CONDENSE_61;
  const whole = realBytes(rel);
  const root = corpus([CONDENSE]);
  const file = path.join(root, rel);
  const db = path.join(tmp(), 's.duckdb');
  // the file up to a line's end without its newline, then the rest without that newline: one line
  // is two run together, which a fresh read skips as invalid JSON
  const ends: number[] = [];
  for (let i = whole.indexOf(0x0a); i >= 0; i = whole.indexOf(0x0a, i + 1)) ends.push(i);
  const at = ends[Math.floor(ends.length / 2)];
  writeFileSync(file, whole.subarray(0, at));
  (await run([root], db)).store.close();
  appendFileSync(file, whole.subarray(at + 1));
  const inc = await runAndDump([root], db);
  assert.equal(inc.stats.appended, 0);
  assert.equal(inc.stats.read, 1, 'read again from the start');
  const rebuilt = await runAndDump([root], path.join(tmp(), 'fresh.duckdb'));
  assert.deepEqual(inc.dump, rebuilt.dump);
  assert.equal(inc.dump.skipped.filter((s) => s.reason === 'invalid_json').length, 1);
});

test('a truncated last line is counted once after it is completed, in a store read in many appends', async () => {
  const rel = CONDENSE_61;
  const whole = realBytes(rel);
  const root = corpus([CONDENSE]);
  const file = path.join(root, rel);
  const db = path.join(tmp(), 's.duckdb');
  // write the file in 7 uneven pieces, most of them ending inside a line
  const step = Math.floor(whole.length / 7) + 13;
  writeFileSync(file, '');
  for (let at = 0; at < whole.length; at += step) {
    appendFileSync(file, whole.subarray(at, Math.min(whole.length, at + step)));
    (await run([root], db)).store.close();
  }
  const inc = await runAndDump([root], db);
  const rebuilt = await runAndDump([root], path.join(tmp(), 'fresh.duckdb'));
  assert.deepEqual(inc.dump, rebuilt.dump);
  assert.equal(inc.dump.skipped.filter((s) => s.reason === 'incomplete_last_line').length, 0);
});

test('a deleted file is retired: its rows leave the store', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const before = await runAndDump([root], db);
  const gone = path.join(root, CONDENSE_61);
  assert.ok(before.dump.requests.some((r) => r.file === gone));
  rmSync(gone);
  const r = await run([root], db);
  try {
    assert.equal(r.stats.retired, 1);
    const [left] = await r.store.all(`SELECT count(*) AS n FROM files WHERE path = $p`, { p: gone });
    assert.equal(left.n, 0);
    const [facts] = await r.store.all(`SELECT (SELECT count(*) FROM observations) - (SELECT count(*) FROM observations JOIN files USING (file_id)) AS orphans`);
    assert.equal(facts.orphans, 0, 'no observation outlives its file');
  } finally {
    r.store.close();
  }
  const after = await runAndDump([root], db);
  const rebuilt = await runAndDump([root], path.join(tmp(), 'fresh.duckdb'));
  assert.ok(!after.dump.requests.some((r) => r.file === gone));
  assert.deepEqual(after.dump, rebuilt.dump);
});

test('a shrunk or replaced file is read again from the start', async () => {
  const root = corpus([CONDENSE]);
  const file = path.join(root, CONDENSE_61);
  const whole = readFileSync(file);
  const db = path.join(tmp(), 's.duckdb');
  await runAndDump([root], db);

  // shrunk: only its first half of lines
  const half = whole.subarray(0, whole.indexOf(0x0a, whole.length >> 1) + 1);
  writeFileSync(file, half);
  const shrunk = await runAndDump([root], db);
  assert.equal(shrunk.stats.read, 1);
  assert.equal(shrunk.stats.appended, 0);
  assert.deepEqual(shrunk.dump, (await runAndDump([root], path.join(tmp(), 'a.duckdb'))).dump);

  // replaced by a longer file with the same first lines (the same session header) but other
  // bytes before the old end: not an append
  const other = realBytes(`${CONDENSE}/73f1d6f2-34ea-4b4a-84b3-a0bad54e69c9.jsonl`);
  const firstLine = whole.subarray(0, whole.indexOf(0x0a) + 1);
  writeFileSync(file, Buffer.concat([firstLine, other, other]));
  const replaced = await runAndDump([root], db);
  assert.equal(replaced.stats.read, 1);
  assert.equal(replaced.stats.appended, 0);
  assert.deepEqual(replaced.dump, (await runAndDump([root], path.join(tmp(), 'b.duckdb'))).dump);
});

test('--rebuild reads every file again and gives the same store', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  const again = await runAndDump([root], db, { rebuild: true });
  assert.equal(again.stats.read, first.stats.files);
  assert.deepEqual(again.dump, first.dump);
});

test('a warm summary is answered from remembered results, which a changed file or price table forgets', async () => {
  const { summary } = await import('../../src/analyses/summary.js');
  const { loadPriceTable } = await import('../../src/pricing/pricing.js');
  const root = corpus([path.dirname(CONDENSE_61)]);
  const file = path.join(root, CONDENSE_61);
  const whole = realBytes(CONDENSE_61);
  const half = whole.indexOf(0x0a, Math.floor(whole.length / 2)) + 1;
  writeFileSync(file, whole.subarray(0, half));
  const db = path.join(tmp(), 's.duckdb');
  const filters = { since: null, until: null, project: null, timezone: 'UTC' };
  const at = async (extra: { prices?: typeof prices } = {}) => {
    const r = await ingest({ paths: [root], dbPath: db, prices, workers: 1, ...extra });
    try {
      const s = await summary(r.store, filters);
      const [{ n }] = await r.store.all(`SELECT count(*) AS n FROM results`);
      return { s, remembered: n as number, stats: r.stats };
    } finally {
      r.store.close();
    }
  };
  const first = await at();
  assert.ok(first.remembered > 0, 'the first summary keeps its results');
  // the remembered rows are what answers: change one behind the store's back and a warm run shows it
  const r = await run([root], db);
  await r.store.run(`UPDATE results SET value = replace(value, '"requests":${first.s.totals.requests},', '"requests":-1,') WHERE key LIKE 'query:summary:%'`);
  r.store.close();
  const warm = await at();
  assert.equal(warm.stats.unchanged, warm.stats.files);
  assert.equal(warm.s.totals.requests, -1);

  appendFileSync(file, whole.subarray(half));
  const grown = await at();
  assert.equal(grown.stats.appended, 1);
  assert.ok(grown.s.totals.requests > first.s.totals.requests, 'an appended file is summed, not the remembered totals');

  // the same files under another price table: derived and summed again
  // every rate doubled: the same weights, twice the dollars
  const doubled = JSON.parse(readFileSync(path.join(repoRoot, 'src/pricing/prices.json'), 'utf8'), (k, v) => (typeof v === 'number' && k !== 'above' ? v * 2 : v));
  const pricing = path.join(tmp(), 'prices.json');
  writeFileSync(pricing, JSON.stringify(doubled));
  const repriced = await at({ prices: loadPriceTable(pricing) });
  assert.equal(repriced.stats.unchanged, repriced.stats.files);
  assert.equal(repriced.s.totals.requests, grown.s.totals.requests);
  assert.ok(Math.abs(repriced.s.totals.usd! - 2 * grown.s.totals.usd!) < 1e-6, `${repriced.s.totals.usd} is twice ${grown.s.totals.usd}`);
});

test('an append re-derives its session’s chains but writes only the requests and chains that changed', async () => {
  const root = corpus([CONDENSE]);
  const file = path.join(root, CONDENSE_61);
  const bytes = readFileSync(file);
  const ends: number[] = [];
  for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) ends.push(i + 1);
  writeFileSync(file, bytes.subarray(0, ends[Math.floor(ends.length / 2)]));
  const db = path.join(tmp(), 's.duckdb');
  const rows = async (r: Awaited<ReturnType<typeof run>>, table: 'requests' | 'chains', id: string) => {
    try {
      const out = await r.store.all(`SELECT ${id} AS id, rowid AS rid, to_json(t) AS row FROM (SELECT rowid, * FROM ${table}) t`);
      return new Map(out.map((x) => [String(x.id), { rid: Number(x.rid), row: JSON.stringify(JSON.parse(String(x.row)), (k, v) => (k === 'rowid' ? undefined : v)) }]));
    } finally {
      r.store.close();
    }
  };
  const sessionId = path.basename(CONDENSE_61, '.jsonl');
  const first = await run([root], db);
  const sessionKeys = new Set((await first.store.all(`SELECT key FROM requests WHERE session_id = '${sessionId}'`)).map((x) => String(x.key)));
  const before = await rows(first, 'requests', 'key');
  const chainsBefore = await rows(await run([root], db), 'chains', 'chain_id');

  appendFileSync(file, bytes.subarray(ends[Math.floor(ends.length / 2)]));
  const after = await run([root], db);
  assert.equal(after.stats.derived, 'touched');
  const touchedSessions = (await after.store.all(`SELECT DISTINCT session_id FROM touched_sessions`)).map((x) => String(x.session_id));
  assert.ok(touchedSessions.includes(sessionId), `the session was derived again (${touchedSessions.join(', ')}; ${sessionId})`);
  // deriving the touched set again rewrites nothing (checked below), and lets the caller work
  // (give its heap back) once, while DuckDB derives the requests
  let calls = 0;
  await after.store.derive({ touched: true, whileDeriving: () => calls++ });
  assert.equal(calls, 1);
  const now = await rows(after, 'requests', 'key');
  const chainsNow = await rows(await run([root], db), 'chains', 'chain_id');
  let kept = 0;
  for (const [key, b] of before) {
    const a = now.get(key);
    if (!sessionKeys.has(key) || !a || a.row !== b.row) continue;
    assert.equal(a.rid, b.rid, `request ${key} is unchanged, so its row is not rewritten`);
    kept++;
  }
  assert.equal(kept, sessionKeys.size, 'every earlier request of the session is unchanged here, and keeps its row');
  assert.ok(now.size > before.size, 'the appended requests are there');
  for (const [id, b] of chainsBefore) {
    const a = chainsNow.get(id);
    if (a && a.row === b.row) assert.equal(a.rid, b.rid, `chain ${id} is unchanged, so its row is not rewritten`);
  }
  // and the store is the one a rebuild gives
  const rebuilt = await runAndDump([root], path.join(tmp(), 'r.duckdb'));
  const incremental = await runAndDump([root], db);
  assert.deepEqual(incremental.dump, rebuilt.dump);
  // a whole derive calls it once too, while DuckDB derives the requests
  const again = await run([root], db);
  try {
    await again.store.derive({ whileDeriving: () => calls++ });
    assert.equal(calls, 2);
  } finally {
    again.store.close();
  }
});

test('a run stopped between committing its requests and deriving the chains is derived again by the next', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const original = Store.prototype.run;
  Store.prototype.run = async function (this: Store, sql: string) {
    if (sql === DERIVE_CHAINS) throw new Error('stopped before the chains');
    return original.call(this, sql);
  };
  try {
    await assert.rejects(run([root], db), /stopped before the chains/);
  } finally {
    Store.prototype.run = original;
  }
  const instance = await DuckDBInstance.create(db);
  const c = await instance.connect();
  const [[requests, derivedFor]] = (await c.runAndReadAll(`SELECT (SELECT count(*) FROM requests), (SELECT value FROM meta WHERE key = 'derived_for')`)).getRows();
  c.closeSync();
  instance.closeSync();
  assert.ok(Number(requests) > 0, 'the requests were committed before the chains');
  assert.equal(derivedFor, '', 'but the store does not claim to be derived');
  const after = await runAndDump([root], db);
  assert.equal(after.stats.derived, 'all');
  const rebuilt = await runAndDump([root], path.join(tmp(), 'fresh.duckdb'));
  assert.deepEqual(after.dump, rebuilt.dump);
});

test('a staged ingest leaves no staging files beside the store, whether it completes or fails while reading or loading', async () => {
  const root = corpus([CONDENSE]);
  const dir = tmp();
  const db = path.join(dir, 's.duckdb');
  const staging = () => readdirSync(dir).filter((e) => e.includes('.facts-'));
  const progress = (p: Progress) => {
    if (p.phase !== 'reading' || p.files === 0) return; // (once a file is read)
    assert.equal(staging().length, 1, 'the rows are staged beside the store while the files are read');
    throw new Error('stopped while reading');
  };
  await assert.rejects(ingest({ paths: [root], dbPath: db, prices, workers: 1, stageBytes: 0, progress }), /stopped while reading/);
  assert.deepEqual(staging(), [], 'a failed read removes the staged files');
  const original = DuckDBConnection.prototype.run;
  let loads = 0;
  DuckDBConnection.prototype.run = async function (this: DuckDBConnection, sql: string, ...rest: unknown[]) {
    if (sql.includes('read_csv(')) {
      loads++;
      assert.equal(staging().length, 1);
      throw new Error('disk full while loading');
    }
    return (original as (...a: unknown[]) => ReturnType<typeof original>).call(this, sql, ...rest);
  } as typeof original;
  try {
    await assert.rejects(ingest({ paths: [root], dbPath: db, prices, workers: 1, stageBytes: 0 }), /disk full while loading/);
  } finally {
    DuckDBConnection.prototype.run = original;
  }
  assert.equal(loads, 1);
  assert.deepEqual(staging(), [], 'a failed load removes the staged files');
  // nothing of the failed run was committed: the next run reads everything, and stages again
  const r = await ingest({ paths: [root], dbPath: db, prices, workers: 1, stageBytes: 0 });
  try {
    assert.equal(r.stats.unchanged, 0);
    assert.ok(r.stats.read > 0);
    const [{ n }] = await r.store.all(`SELECT count(*)::INT AS n FROM observations`);
    assert.ok((n as number) > 0);
  } finally {
    r.store.close();
  }
  assert.deepEqual(staging(), [], 'a completed load removes the staged files');
  const again = await runAndDump([root], db);
  const fresh = await runAndDump([root], path.join(tmp(), 'fresh.duckdb'));
  assert.deepEqual(again.dump, fresh.dump);
});

test('a full disk while staging is one clear line, and the store is left as it was', async () => {
  const root = corpus([CONDENSE]);
  const dir = tmp();
  const db = path.join(dir, 's.duckdb');
  const original = CsvFile.prototype.rows;
  CsvFile.prototype.rows = function () {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  };
  try {
    const err = await ingest({ paths: [root], dbPath: db, prices, workers: 1, stageBytes: 0 }).then(
      () => assert.fail('the ingest should fail'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof UsageError, String(err));
    assert.equal(err.message, `cannot stage the facts in ${dir}: ENOSPC: no space left on device, write`);
    assert.match(err.hint ?? '', /free disk there, or choose another --db/);
  } finally {
    CsvFile.prototype.rows = original;
  }
  assert.deepEqual(readdirSync(dir).filter((e) => e.includes('.facts-')), []);
  // other failures keep their own error
  const progress = (p: Progress) => {
    if (p.phase === 'reading' && p.files > 0) throw new Error('a bug');
  };
  await assert.rejects(ingest({ paths: [root], dbPath: db, prices, workers: 1, stageBytes: 0, progress }), (e: unknown) => !(e instanceof UsageError) && (e as Error).message === 'a bug');
  const after = await runAndDump([root], db);
  const fresh = await runAndDump([root], path.join(tmp(), 'fresh.duckdb'));
  assert.equal(after.stats.read, after.stats.files);
  assert.deepEqual(after.dump, fresh.dump);
});

test('a staged ingest into a kept store appends, re-reads and retires files as an appending one does', async () => {
  // one run that stages while it also appends to a file, re-reads a rewritten one, retires a
  // deleted one and reads a new one, in the same transaction as the deletes those need
  const root = corpus([CONDENSE, MAROT_DOV]);
  const grown = path.join(root, CONDENSE_61);
  const rewritten = path.join(root, MAROT_DOV_MAIN);
  const whole = realBytes(CONDENSE_61);
  const cut = whole.indexOf(0x0a, whole.length >> 1) + 1;
  writeFileSync(grown, whole.subarray(0, cut));
  const added = path.join(root, `${CONDENSE}/73f1d6f2-34ea-4b4a-84b3-a0bad54e69c9.jsonl`);
  const addedBytes = readFileSync(added);
  rmSync(added);
  const gone = readdirSync(path.join(root, CONDENSE)).map((e) => path.join(root, CONDENSE, e)).find((p) => p.endsWith('.jsonl') && p !== grown)!;

  const stagedDb = path.join(tmp(), 'staged.duckdb');
  const appendedDb = path.join(tmp(), 'appended.duckdb');
  for (const db of [stagedDb, appendedDb]) (await run([root], db)).store.close();

  appendFileSync(grown, whole.subarray(cut));
  const lines = readFileSync(rewritten, 'utf8').split('\n');
  writeFileSync(rewritten, lines.slice(0, Math.floor(lines.length / 2)).join('\n') + '\n');
  writeFileSync(added, addedBytes);
  rmSync(gone);

  const dumps = [];
  for (const [db, stageBytes] of [
    [stagedDb, 0],
    [appendedDb, Infinity],
  ] as const) {
    const r = await ingest({ paths: [root], dbPath: db, prices, workers: 1, touchedShare: 1, stageBytes });
    r.store.close();
    assert.equal(r.stats.appended, 1, 'the grown file is read from where it stopped');
    assert.ok(r.stats.read >= 2, 'the rewritten and the new file are read whole');
    assert.equal(r.stats.retired, 1);
    const again = await runAndDump([root], db);
    assert.equal(again.stats.bytesRead, 0);
    dumps.push(again.dump);
  }
  const fresh = await runAndDump([root], path.join(tmp(), 'fresh.duckdb'));
  assert.deepEqual(dumps[0], fresh.dump, 'staged');
  assert.deepEqual(dumps[1], fresh.dump, 'appended');
});

test('a run that reads few files whole takes them from the walk before it lets the walk go: a rewritten transcript and a changed .meta.json among 42 files', async () => {
  // 2 whole reads of 42 files is under FEW_WHOLE_READS (5%): the files to read are taken out of
  // the listing before the store notes what they touch, and the listing is let go
  const root = tmp('cachelens-logs-');
  cpSync(path.join(repoRoot, 'sample-logs/projects'), path.join(root, 'projects'), { recursive: true });
  const transcripts = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('.jsonl')).sort();
  const metas = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('.meta.json')).sort();
  assert.equal(transcripts.length + metas.length, 42);
  const db = path.join(tmp(), 's.duckdb');
  (await run([root], db)).store.close();

  const rewritten = path.join(root, transcripts[3]);
  const lines = readFileSync(rewritten, 'utf8').split('\n');
  writeFileSync(rewritten, lines.slice(0, Math.floor(lines.length / 2)).join('\n') + '\n');
  const meta = path.join(root, metas[0]);
  writeFileSync(meta, JSON.stringify({ ...JSON.parse(readFileSync(meta, 'utf8')), agentType: 'renamed-by-test' }));
  const grown = path.join(root, transcripts[7]);
  const last = readFileSync(grown, 'utf8').trimEnd().split('\n').at(-1)!;
  appendFileSync(grown, `${last}\n`);

  const changed = await runAndDump([root], db);
  assert.equal(changed.stats.read, 1, 'the rewritten transcript is read whole');
  assert.equal(changed.stats.appended, 1);
  assert.equal(changed.stats.derived, 'touched');
  assert.ok(changed.dump.chains.some((c) => c.agent_type === 'renamed-by-test'), 'the changed .meta.json is read: its chain takes the new agent type');
  assert.deepEqual(changed.dump, (await runAndDump([root], path.join(tmp(), 'fresh.duckdb'))).dump);
});

test('copies tied on rank and time: an append run keeps the first by path as the best copy, as a rebuild does', async () => {
  // c.jsonl is read first (lowest file id); a.jsonl and b.jsonl come later with the same request,
  // at the same time and rank, so only the tie-break by path picks a's copy
  const root = tmp('cachelens-logs-');
  const dir = path.join(root, 'proj');
  const shared = assistant({ session: 's1', msg: 'msg_tie', usage: usage(10, 20, 300, 4000) });
  const write = (name: string, lines: string[]) => writeFileSync(path.join(dir, name), lines.map((l) => `${l}\n`).join(''));
  mkdirSync(dir, { recursive: true });
  write('c.jsonl', [user('hi'), shared]);
  const db = path.join(tmp(), 's.duckdb');
  (await run([root], db)).store.close();
  write('a.jsonl', [user('hi'), shared]);
  write('b.jsonl', [user('hi'), shared]);
  (await run([root], db)).store.close();
  appendFileSync(path.join(dir, 'b.jsonl'), `${assistant({ session: 's1', msg: 'msg_later', t: '2025-03-01T10:05:00.000Z', usage: usage(1, 2, 3, 4) })}\n`);
  const after = await run([root], db);
  assert.equal(after.stats.derived, 'touched');
  const ids = await after.store.all(`SELECT path, file_id FROM files ORDER BY path`);
  assert.ok((ids[0].file_id as number) > (ids[2].file_id as number), `a.jsonl's id (${ids[0].file_id}) is above c.jsonl's (${ids[2].file_id})`);
  after.store.close();
  const incremental = await runAndDump([root], db);
  const rebuilt = await runAndDump([root], path.join(tmp(), 'r.duckdb'));
  const best = (d: typeof incremental) => d.dump.requests.find((r) => r.message_id === 'msg_tie');
  assert.equal(path.basename(String(best(rebuilt)?.file)), 'a.jsonl');
  assert.deepEqual(best(incremental), best(rebuilt));
  assert.deepEqual(incremental.dump.requests, rebuilt.dump.requests);
});

test("a subagent working in a sub-directory counts in its session's project, in a first run and after an append to its file", async () => {
  // the subagent's own lines name /work/app/web; its session's main transcript names /work/app
  const root = tmp('cachelens-logs-');
  const session = '22222222-2222-4222-8222-222222222222';
  const dir = path.join(root, 'projects', '-work-app');
  const main = path.join(dir, `${session}.jsonl`);
  const sub = path.join(dir, session, 'subagents', 'agent-a7.jsonl');
  const lines = (xs: string[]) => xs.map((l) => `${l}\n`).join('');
  const subLine = (msg: string, t: string) =>
    assistant({ session, msg, t, cwd: '/work/app/web', usage: usage(5, 6, 70, 800), extra: { agentId: 'a7', isSidechain: true } });
  mkdirSync(path.dirname(sub), { recursive: true });
  writeFileSync(main, lines([user('go', { session, cwd: '/work/app' }), assistant({ session, msg: 'msg_main', cwd: '/work/app', usage: usage(1, 2, 30, 400) })]));
  writeFileSync(sub, lines([user('sub task', { session, t: '2025-03-01T10:00:30.000Z', cwd: '/work/app/web' }), subLine('msg_sub1', '2025-03-01T10:01:00.000Z')]));
  const db = path.join(tmp(), 's.duckdb');
  const projects = async (r: Awaited<ReturnType<typeof run>>) => {
    try {
      const files = await r.store.all(`SELECT kind, project FROM files WHERE kind <> 'meta' ORDER BY kind`);
      const requests = await r.store.all(`SELECT split_part(key, chr(0), 1) AS msg, project FROM requests ORDER BY 1`);
      return { files: files.map((x) => `${x.kind} ${x.project}`), requests: requests.map((x) => `${x.msg} ${x.project}`) };
    } finally {
      r.store.close();
    }
  };
  const first = await projects(await run([root], db));
  // the files keep their own; the requests take the session's
  assert.deepEqual(first.files, ['main /work/app', 'subagent /work/app/web']);
  assert.deepEqual(first.requests, ['msg_main /work/app', 'msg_sub1 /work/app']);
  appendFileSync(sub, lines([subLine('msg_sub2', '2025-03-01T10:02:00.000Z')]));
  const after = await run([root], db);
  assert.equal(after.stats.derived, 'touched');
  assert.deepEqual((await projects(after)).requests, ['msg_main /work/app', 'msg_sub1 /work/app', 'msg_sub2 /work/app']);
  const incremental = await runAndDump([root], db);
  const rebuilt = await runAndDump([root], path.join(tmp(), 'r.duckdb'));
  assert.deepEqual(incremental.dump, rebuilt.dump);
});

test("a request whose best copy moves to another session's file moves its count between the sessions' chains, as a rebuild does", async () => {
  // one response copied into two sessions' transcripts (a resumed session repeats its history):
  // the earliest copy is the best, so the request counts in that copy's session
  const root = tmp('cachelens-logs-');
  const dir = path.join(root, 'proj');
  const a = path.join(dir, 'a.jsonl');
  const b = path.join(dir, 'b.jsonl');
  const lines = (xs: string[]) => xs.map((l) => `${l}\n`).join('');
  const copy = (session: string, t: string) => assistant({ session, msg: 'msg_shared', t, usage: usage(10, 20, 300, 4000) });
  mkdirSync(dir, { recursive: true });
  writeFileSync(a, lines([user('hi', { session: 's1' }), copy('s1', '2025-03-01T10:00:00.000Z')]));
  writeFileSync(b, lines([user('hi', { session: 's2' }), assistant({ session: 's2', msg: 'msg_b1', usage: usage(1, 2, 30, 400) })]));
  const db = path.join(tmp(), 's.duckdb');
  const counts = async () => {
    const r = await run([root], db);
    try {
      const [shared] = await r.store.all(`SELECT session_id FROM requests WHERE split_part(key, chr(0), 1) = 'msg_shared'`);
      const chains = await r.store.all(`SELECT session_id, requests FROM chains WHERE kind = 'main' ORDER BY session_id`);
      return { derived: r.stats.derived, shared: shared.session_id, chains: chains.map((c) => `${c.session_id} ${c.requests}`) };
    } finally {
      r.store.close();
    }
  };
  assert.deepEqual(await counts(), { derived: 'all', shared: 's1', chains: ['s1 1', 's2 1'] });
  // s2's transcript gains an earlier copy: only b changed, yet s1's chain loses the request
  appendFileSync(b, lines([copy('s2', '2025-03-01T09:30:00.000Z')]));
  assert.deepEqual(await counts(), { derived: 'touched', shared: 's2', chains: ['s1 0', 's2 2'] });
  const rebuilt = await runAndDump([root], path.join(tmp(), 'r.duckdb'));
  assert.deepEqual((await runAndDump([root], db)).dump, rebuilt.dump);
  // and back: b rewritten without it (read again whole), and s1's chain counts it again
  writeFileSync(b, lines([user('hi', { session: 's2' }), assistant({ session: 's2', msg: 'msg_b1', usage: usage(1, 2, 30, 400) })]));
  assert.deepEqual(await counts(), { derived: 'touched', shared: 's1', chains: ['s1 1', 's2 1'] });
  assert.deepEqual((await runAndDump([root], db)).dump, (await runAndDump([root], path.join(tmp(), 'r2.duckdb'))).dump);
});

/** A transcript of `session` under root's projects/-work-app; returns its path. */
function transcript(root: string, session: string, xs: string[]): string {
  const file = path.join(root, 'projects', '-work-app', `${session}.jsonl`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, xs.map((l) => `${l}\n`).join(''));
  return file;
}

/** The run's derive and the message ids it derived again (`touched`, which Store.derive leaves). */
async function derivedAgain(r: Awaited<ReturnType<typeof run>>): Promise<{ derived: string; msgs: string[] }> {
  try {
    const msgs = r.stats.derived === 'touched' ? await r.store.all(`SELECT split_part(key, chr(0), 1) AS msg FROM touched ORDER BY 1`) : [];
    return { derived: r.stats.derived, msgs: msgs.map((x) => String(x.msg)) };
  } finally {
    r.store.close();
  }
}

test("an append derives only the requests its new lines name, even to a scope's only transcript", async () => {
  const root = tmp('cachelens-logs-');
  const session = '33333333-3333-4333-8333-333333333333';
  const reply = (msg: string, s: number) => assistant({ session, msg, t: `2025-03-01T10:00:0${s}.000Z`, cwd: '/work/app', usage: usage(1, 2, 30, 400) });
  const file = transcript(root, session, [user('go', { session, cwd: '/work/app' }), reply('msg_1', 1), reply('msg_2', 2), reply('msg_3', 3)]);
  const db = path.join(tmp(), 's.duckdb');
  // the default share: one file is the whole scope, but one response is not the whole file
  const runShared = () => ingest({ paths: [root], dbPath: db, prices, workers: 1 });
  assert.deepEqual(await derivedAgain(await runShared()), { derived: 'all', msgs: [] });
  appendFileSync(file, `${reply('msg_4', 4)}\n`);
  assert.deepEqual(await derivedAgain(await runShared()), { derived: 'touched', msgs: ['msg_4'] });
  // a copy of an earlier response: that request is derived again, with both copies
  appendFileSync(file, `${assistant({ session, msg: 'msg_2', t: '2025-03-01T10:00:05.000Z', cwd: '/work/app', usage: usage(1, 9, 30, 400) })}\n`);
  assert.deepEqual(await derivedAgain(await runShared()), { derived: 'touched', msgs: ['msg_2'] });
  assert.deepEqual((await runAndDump([root], db)).dump, (await runAndDump([root], path.join(tmp(), 'r.duckdb'))).dump);
});

test("an append that gives a transcript its first working directory derives its session's requests again", async () => {
  // no line names a cwd at first: the file's project is its directory's (-work-app: /work/app);
  // then one does
  const root = tmp('cachelens-logs-');
  const session = '44444444-4444-4444-8444-444444444444';
  const other = '55555555-5555-4555-8555-555555555555';
  const reply = (s: string, msg: string, t: number, cwd?: string) => assistant({ session: s, msg, t: `2025-03-01T10:00:0${t}.000Z`, cwd, usage: usage(1, 2, 30, 400) });
  const file = transcript(root, session, [reply(session, 'msg_a', 1), reply(session, 'msg_b', 2)]);
  transcript(root, other, [user('go', { session: other, cwd: '/work/app' }), reply(other, 'msg_other', 1, '/work/app')]);
  const db = path.join(tmp(), 's.duckdb');
  const projects = async () => {
    const r = await run([root], db);
    const rows = await r.store.all(`SELECT split_part(key, chr(0), 1) AS msg, project FROM requests ORDER BY 1`);
    return { ...(await derivedAgain(r)), projects: rows.map((x) => `${x.msg} ${x.project}`) };
  };
  assert.deepEqual((await projects()).projects, ['msg_a /work/app', 'msg_b /work/app', 'msg_other /work/app']);
  appendFileSync(file, `${user('more', { session, cwd: '/work/elsewhere' })}\n${reply(session, 'msg_c', 3, '/work/elsewhere')}\n`);
  assert.deepEqual(await projects(), {
    derived: 'touched',
    msgs: ['msg_a', 'msg_b', 'msg_c'],
    projects: ['msg_a /work/elsewhere', 'msg_b /work/elsewhere', 'msg_c /work/elsewhere', 'msg_other /work/app'],
  });
  assert.deepEqual((await runAndDump([root], db)).dump, (await runAndDump([root], path.join(tmp(), 'r.duckdb'))).dump);
});

test('an appended transcript that cannot be read when its turn comes leaves none of its requests', async () => {
  // both grow; the second is deleted once the first has been read (between the walk and its read)
  const root = tmp('cachelens-logs-');
  const [s1, s2] = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
  const reply = (s: string, msg: string, t: number) => assistant({ session: s, msg, t: `2025-03-01T10:00:0${t}.000Z`, cwd: '/work/app', usage: usage(1, 2, 30, 400) });
  const first = transcript(root, s1, [user('go', { session: s1, cwd: '/work/app' }), reply(s1, 'msg_11', 1)]);
  const second = transcript(root, s2, [user('go', { session: s2, cwd: '/work/app' }), reply(s2, 'msg_21', 1), reply(s2, 'msg_22', 2)]);
  const db = path.join(tmp(), 's.duckdb');
  (await run([root], db)).store.close();
  appendFileSync(first, `${reply(s1, 'msg_12', 2)}\n`);
  appendFileSync(second, `${reply(s2, 'msg_23', 3)}\n`);
  const r = await ingest({ paths: [root], dbPath: db, prices, workers: 1, touchedShare: 1, progress: (p) => void (p.phase === 'reading' && p.files === 1 && rmSync(second)) });
  try {
    assert.equal(r.stats.derived, 'touched');
    const msgs = await r.store.all(`SELECT split_part(key, chr(0), 1) AS msg FROM requests ORDER BY 1`);
    assert.deepEqual(msgs.map((x) => x.msg), ['msg_11', 'msg_12']);
  } finally {
    r.store.close();
  }
  // the store is the one a rebuild of what is left gives
  const rebuilt = await runAndDump([root], path.join(tmp(), 'r.duckdb'));
  assert.deepEqual((await runAndDump([root], db)).dump, rebuilt.dump);
});
