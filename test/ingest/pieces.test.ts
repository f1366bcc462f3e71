/**
 * A reading that one transcript dominates has DuckDB load its staged observations in pieces while
 * it goes on, once a core is free (pool.ts PieceOptions; read alone, the transcript goes to a
 * worker, leaving the other core): the pieces and what is left hold the rows a stage without
 * pieces holds, in order; a file that fails after pieces went leaves its rows in those pieces only
 * (the ingest deletes a failed file's facts); and a store built that way holds what one read on
 * the main thread does.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ingest } from '../../src/ingest/ingest.js';
import { DONE, type ReadTask, type StartWorker, readAll, readOne, startWorker } from '../../src/ingest/pool.js';
import { readTranscriptSync } from '../../src/ingest/read-file.js';
import { StagedRows } from '../../src/store/stage.js';
import { REAL_LOGS, tempDir, transcripts } from '../helpers/corpus.js';
import { corpus, dump, prices, tmp } from '../store/helpers.js';

/** The real transcript with the most observations (219, ~60 KB of them staged). */
const [BUSIEST] = transcripts(REAL_LOGS)
  .map((p) => ({ p, n: readTranscriptSync(p, { fileId: 1, fileAgentId: null, fileSessionId: null }).facts.observations.length }))
  .sort((a, b) => b.n - a.n)
  .map((x) => x.p);

/** Its parser hands on what it is done with every few observations (FileParser's spill). */
const SPILL = { spillAt: 8, spillKeep: 4 };

const task = (seq = 0, file = BUSIEST): ReadTask => ({
  seq,
  path: file,
  bytes: statSync(file).size,
  id: { fileId: 7, fileAgentId: null, fileSessionId: null },
  opts: SPILL,
  file: { root: REAL_LOGS, kind: 'main', size: 0, mtimeMs: 0, sessionId: null, agentId: null, project: 'p', synthetic: 0 },
});

/** The text of every staged file of `table` in `dir`, in the order given (paths), then the rest by name. */
function text(dir: string, table: string, first: string[] = []): string {
  const rest = readdirSync(dir)
    .filter((e) => e.startsWith(`${table}.`))
    .map((e) => path.join(dir, e))
    .filter((p) => !first.includes(p))
    .sort();
  return [...first, ...rest].map((p) => readFileSync(p, 'utf8')).join('');
}

test('staged in pieces, a file’s observations are the rows staged whole, in order, and each piece is closed when handed on', () => {
  const whole = tempDir();
  const w = new StagedRows(whole, 't');
  readOne(task(), w);
  w.close();

  const dir = tempDir();
  const pieces: { path: string; text: string }[] = [];
  const s = new StagedRows(dir, 't', { bytes: 4096, done: (p) => pieces.push({ path: p, text: readFileSync(p, 'utf8') }) });
  readOne(task(), s);
  s.close();
  assert.ok(pieces.length > 5, `${pieces.length} pieces`);
  // each piece holds at least its bytes, and nothing was written to it after it was handed on
  for (const p of pieces) {
    assert.ok(Buffer.byteLength(p.text) >= 4096);
    assert.equal(readFileSync(p.path, 'utf8'), p.text);
  }
  assert.equal(new Set(pieces.map((p) => p.path)).size, pieces.length);
  assert.equal(text(dir, 'observations', pieces.map((p) => p.path)), text(whole, 'observations'));
  // the other tables are not cut
  const others = [...new Set(readdirSync(whole).map((e) => e.slice(0, e.indexOf('.'))))].filter((t) => t !== 'observations');
  assert.ok(others.length >= 3, others.join());
  for (const table of others) {
    assert.equal(readdirSync(dir).filter((e) => e.startsWith(`${table}.`)).length, 1, table);
    assert.equal(text(dir, table), text(whole, table), table);
  }
});

test('a file that fails after pieces were handed on leaves its rows in those pieces only', () => {
  const dir = tempDir();
  const pieces: string[] = [];
  // 6,000 bytes a piece: the first file's last rows are in a file still open at the mark
  const s = new StagedRows(dir, 't', { bytes: 6000, done: (p) => pieces.push(p) });
  readOne(task(0), s);
  const before = pieces.length;
  assert.ok(s.mark().get('observations')!.at > 0);
  // the second file's reader fails after handing on 90 observations: past two pieces, and part way
  // into the file opened after the last
  let handed = 0;
  const failing: typeof readTranscriptSync = (p, id, opts, spill) =>
    readTranscriptSync(p, id, opts, (f) => {
      spill!(f);
      if ((handed += f.observations.length) >= 90) throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
    });
  assert.deepEqual(readOne({ ...task(1), id: { ...task(1).id, fileId: 8 } }, s, failing), { seq: 1, error: { code: 'EIO', message: 'EIO: i/o error, read' } });
  s.close();
  assert.ok(pieces.length >= before + 2, `${before} pieces, then ${pieces.length}`);

  /** The observation rows in `files`, by the file id each begins with. */
  const rows = (files: string[]) => {
    const by = new Map<string, string[]>();
    for (const f of files) for (const row of readFileSync(f, 'utf8').split('\n').filter(Boolean)) by.set(row.slice(0, row.indexOf(',')), [...(by.get(row.slice(0, row.indexOf(','))) ?? []), row]);
    return by;
  };
  const all = readdirSync(dir).filter((e) => e.startsWith('observations.')).map((e) => path.join(dir, e));
  const after = pieces.slice(before);
  // nothing of the first file is lost; the second's rows are only in pieces handed on after it began
  const alone = tempDir();
  const only = new StagedRows(alone, 't');
  readOne(task(0), only);
  only.close();
  assert.deepEqual(rows(all).get('7')?.sort(), rows(readdirSync(alone).filter((e) => e.startsWith('observations.')).map((e) => path.join(alone, e))).get('7')?.sort());
  assert.ok((rows(after).get('8') ?? []).length > 0);
  assert.deepEqual(rows(all.filter((f) => !after.includes(f))).get('8'), undefined);
  // the file still open was emptied
  const open = all.filter((f) => !pieces.includes(f));
  assert.equal(open.length, 1);
  assert.equal(statSync(open[0]).size, 0);
});

test('one file read alone goes to a worker that hands on its pieces; the rows are those read on the main thread', async () => {
  const stage = (pieces: boolean) => {
    const dir = tempDir();
    const handed: string[] = [];
    const seen: number[] = [];
    return {
      dir,
      handed,
      seen,
      read: () =>
        readAll(
          [task(0)],
          statSync(BUSIEST).size,
          (o) => {
            assert.ok('seqs' in o, JSON.stringify(o));
            seen.push(...o.seqs);
          },
          2,
          undefined,
          dir,
          pieces ? { from: 1024, bytes: 4096, done: (p) => handed.push(p) } : null,
        ),
    };
  };
  const onMain = stage(false);
  await onMain.read();
  const inPieces = stage(true);
  await inPieces.read();
  assert.deepEqual([onMain.seen, inPieces.seen], [[0], [0]]);
  assert.equal(onMain.handed.length, 0);
  assert.ok(inPieces.handed.length > 2, `${inPieces.handed.length} pieces`);
  // the main thread stages under its own tag, a worker under w0
  assert.ok(readdirSync(onMain.dir).every((e) => e.includes('.main.')));
  assert.ok(readdirSync(inPieces.dir).every((e) => /\.w0[.-]/.test(e)));
  for (const table of ['observations', 'attachments', 'files', 'line_counts', 'chain_facts']) {
    assert.equal(text(inPieces.dir, table, table === 'observations' ? inPieces.handed : []), text(onMain.dir, table), table);
  }
  // below `from`, or on one core, the file is read here as before
  const below = stage(true);
  await readAll([task(0)], statSync(BUSIEST).size, () => undefined, 2, undefined, below.dir, { from: statSync(BUSIEST).size + 1, bytes: 1024, done: (p) => below.handed.push(p) });
  await readAll([task(0)], statSync(BUSIEST).size, () => undefined, 1, undefined, tempDir(), { from: 0, bytes: 1024, done: (p) => below.handed.push(p) });
  assert.deepEqual(below.handed, []);
});

test('a reading one file dominates hands on pieces once a worker has read its last file; one no file dominates, none', async () => {
  const bySize = transcripts(REAL_LOGS)
    .map((p) => ({ p, size: statSync(p).size }))
    .sort((a, b) => b.size - a.size);
  // BUSIEST (2.7 MB) with a file under a third its size: 2 workers, one of them soon done
  const small = bySize.find((x) => x.size < statSync(BUSIEST).size / 3 && x.size > 200_000)!;
  const tasks = [BUSIEST, small.p].map((p, i) => ({ ...task(i, p), id: { ...task(i).id, fileId: 7 + i } }));
  const read = async (list: ReadTask[], pieces: boolean) => {
    const dir = tempDir();
    const events: string[] = [];
    const handed: string[] = [];
    const bytes = list.reduce((sum, t) => sum + statSync(t.path).size, 0);
    // a worker's last message, seen before the pool sees it
    const start: StartWorker = (options) => {
      const w = startWorker(options);
      w.on('message', (m) => m === DONE && events.push('done'));
      return w;
    };
    await readAll(
      list,
      bytes,
      (o) => events.push(`outcome ${'seqs' in o ? o.seqs.join() : JSON.stringify(o)}`),
      2,
      start,
      dir,
      pieces ? { from: 1024, bytes: 4096, done: (p) => (handed.push(p), events.push('piece')) } : null,
    );
    return { dir, events, handed };
  };
  const onMain = await read(tasks, false);
  const inPieces = await read(tasks, true);
  assert.ok(inPieces.handed.length > 2, `${inPieces.handed.length} pieces`);
  // no piece before a worker is done (the one that read the small file, or, when one worker took
  // both files before the other started, that other)
  const firstDone = inPieces.events.indexOf('done');
  assert.ok(firstDone >= 0 && firstDone < inPieces.events.indexOf('piece'), inPieces.events.join(', '));
  assert.deepEqual(inPieces.events.filter((e) => e.startsWith('outcome')).flatMap((e) => e.slice('outcome '.length).split(',')).sort(), ['0', '1']);
  const observations = (dir: string, first: string[]) => text(dir, 'observations', first).split('\n').sort();
  assert.deepEqual(observations(inPieces.dir, inPieces.handed), observations(onMain.dir, []));

  // three files of 2.7 – 3.2 MB: none holds half the bytes
  const even = bySize.slice(0, 3).map((x, i) => ({ ...task(i, x.p), id: { ...task(i).id, fileId: 7 + i } }));
  assert.ok(even.every((t) => 2 * statSync(t.path).size < even.reduce((sum, u) => sum + statSync(u.path).size, 0)));
  assert.deepEqual((await read(even, true)).handed, []);
});

test('a store whose one file was loaded in pieces as it was read holds what one read on the main thread does', async () => {
  // one transcript: BUSIEST
  const root = corpus([path.relative(REAL_LOGS, BUSIEST)]);
  const build = async (opts: { workers: number; pieces?: { from: number; bytes: number } }) => {
    const r = await ingest({ paths: [root], dbPath: path.join(tmp(), 'p.duckdb'), prices, stageBytes: 0, read: SPILL, ...opts });
    try {
      // DuckDB's bounds, set while the pieces load, are set back as after any run
      const settings = await r.store.all(`SELECT current_setting('memory_limit') AS m, current_setting('threads') AS t`);
      return { pieces: r.stats.pieces, dump: await dump(r.store), settings };
    } finally {
      r.store.close();
    }
  };
  const onMain = await build({ workers: 1 });
  const inPieces = await build({ workers: 2, pieces: { from: 0, bytes: 4096 } });
  assert.equal(onMain.pieces, 0);
  assert.ok(inPieces.pieces > 2, `${inPieces.pieces} pieces`);
  assert.ok(onMain.dump.requests.length > 100, `${onMain.dump.requests.length} requests`);
  assert.deepEqual(inPieces.dump, onMain.dump);
  assert.deepEqual(inPieces.settings, onMain.settings);
});

test('an appended read loaded in pieces, its requests derived as touched, leaves the store a fresh read gives', async () => {
  const root = corpus([path.relative(REAL_LOGS, BUSIEST)]);
  const file = path.join(root, path.relative(REAL_LOGS, BUSIEST));
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  const db = path.join(tmp(), 'a.duckdb');
  const run = async (dbPath: string, opts: { workers: number; pieces?: { from: number; bytes: number } }) => {
    const r = await ingest({ paths: [root], dbPath, prices, stageBytes: 0, touchedShare: 1, read: SPILL, ...opts });
    try {
      return { stats: r.stats, dump: await dump(r.store) };
    } finally {
      r.store.close();
    }
  };
  const inPieces = { workers: 2, pieces: { from: 0, bytes: 1024 } };
  // the file without its last 200 lines, then those lines appended
  writeFileSync(file, lines.slice(0, -200).join('\n') + '\n');
  assert.ok((await run(db, inPieces)).stats.pieces > 2);
  appendFileSync(file, lines.slice(-200).join('\n') + '\n');
  const appended = await run(db, inPieces);
  assert.deepEqual([appended.stats.appended, appended.stats.derived], [1, 'touched']);
  assert.ok(appended.stats.pieces > 0, `${appended.stats.pieces} pieces`);
  const fresh = await run(path.join(tmp(), 'f.duckdb'), { workers: 1 });
  assert.equal(fresh.stats.pieces, 0);
  assert.deepEqual(appended.dump, fresh.dump);
});
