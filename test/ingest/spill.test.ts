/**
 * A staged read hands on the facts its parser is done with (FileParser's spill), so one giant
 * transcript is not held whole: the facts handed on plus the rest are the file's facts, in order;
 * a store built that way holds what one built without it does; and a file that fails after
 * handing rows on leaves none of them in the stage.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { FileFacts } from '../../src/ingest/file-parser.js';
import { ingest } from '../../src/ingest/ingest.js';
import { type ReadTask, readOne } from '../../src/ingest/pool.js';
import { readTranscriptSync } from '../../src/ingest/read-file.js';
import type { TableColumns } from '../../src/store/fact-columns.js';
import { StagedRows } from '../../src/store/stage.js';
import { REAL_LOGS, REPO, assistant, plain, tempDir, transcripts, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { dump, prices, tmp } from '../store/helpers.js';

const SAMPLE_LOGS = path.join(REPO, 'sample-logs');
const files = [...transcripts(REAL_LOGS), ...transcripts(path.join(SAMPLE_LOGS, 'projects'))];

/** The lists a spill hands on, each concatenated over the spills and the facts left at the end. */
const LISTS = ['observations', 'spawns', 'links', 'sidechainRoots', 'attachments', 'events', 'skipped'] as const;

test('the facts a parser hands on, then the rest, are the file’s facts in order', () => {
  let spilled = 0;
  for (const file of files) {
    const id = { fileId: 3, fileAgentId: null, fileSessionId: null };
    const whole = readTranscriptSync(file, id).facts;
    const spills: FileFacts[] = [];
    const rest = readTranscriptSync(file, id, { spillAt: 8, spillKeep: 4 }, (f) => spills.push(f)).facts;
    const name = path.relative(REPO, file);
    for (const list of LISTS) {
      assert.deepEqual(plain([...spills.flatMap((f) => f[list] as unknown[]), ...(rest[list] as unknown[])]), plain(whole[list]), `${name}: ${list}`);
    }
    // what describes the file comes at the end only
    for (const f of spills) {
      assert.deepEqual([f.chains, f.state.chains, [...f.lineCounts]], [[], [], []], name);
      assert.ok(f.observations.length <= 8 - 4, `${name}: a spill hands on the oldest observations only`);
    }
    assert.deepEqual(plain({ ...rest, ...Object.fromEntries(LISTS.map((l) => [l, []])) }), plain({ ...whole, ...Object.fromEntries(LISTS.map((l) => [l, []])) }), name);
    if (whole.observations.length >= 8) assert.ok(spills.length > 0, `${name}: ${whole.observations.length} observations and no spill`);
    spilled += spills.length;
  }
  assert.ok(spilled > 100, `only ${spilled} spills over ${files.length} files`);
});

test('a store whose reads spilled after every observation holds what one read whole does', async () => {
  // copies of response A around B: with one observation kept, A's second copy comes after A went
  const S = '5e55a5e5-0000-4000-8000-000000000001';
  const straddled = writeCorpus({
    [`projects/-work-demo/${S}.jsonl`]: [
      userPrompt(S, '2026-03-01T10:00:00.000Z'),
      assistant({ session: S, msg: 'msg_A', t: '2026-03-01T10:00:01.000Z', u: { in: 10, out: 5, r: 100 } }),
      assistant({ session: S, msg: 'msg_B', t: '2026-03-01T10:00:02.000Z', u: { in: 1, out: 7 } }),
      assistant({ session: S, msg: 'msg_A', t: '2026-03-01T10:00:03.000Z', u: { in: 10, out: 9, r: 100 } }),
      userPrompt(S, '2026-03-01T10:01:00.000Z'),
      assistant({ session: S, msg: 'msg_C', t: '2026-03-01T10:01:01.000Z', u: { in: 2, out: 3, w5: 40 } }),
    ],
  });
  const roots = [REAL_LOGS, SAMPLE_LOGS, straddled];
  const build = async (read: { spillAt?: number; spillKeep?: number }) => {
    const r = await ingest({ paths: roots, dbPath: path.join(tmp(), 's.duckdb'), prices, workers: 1, stageBytes: 0, read });
    try {
      const [{ split }] = await r.store.all(`SELECT count(*)::INTEGER AS split FROM (SELECT key FROM observations GROUP BY key, file_id, rank HAVING count(*) > 1)`);
      return { split, dump: await dump(r.store) };
    } finally {
      r.store.close();
    }
  };
  const whole = await build({});
  const spilled = await build({ spillAt: 2, spillKeep: 1 });
  assert.ok(whole.dump.requests.length > 1000);
  // the whole read merged A's copies; the spilled one staged them as two rows, which the de-dup merges
  assert.deepEqual([whole.split, spilled.split], [0, 1]);
  assert.deepEqual(spilled.dump, whole.dump);
  const a = whole.dump.requests.find((r) => r.key === 'msg_A\u0000req_msg_A');
  assert.deepEqual([a?.output, a?.copies, a?.sources], [9, 2, 1]);
});

/** `n` rows of `skipped` (4 columns), numbered from `from`, ~60 bytes each. */
function skippedRows(from: number, n: number): TableColumns {
  const at = (i: number) => from + i;
  return {
    rows: n,
    cols: [Int32Array.from({ length: n }, (_, i) => at(i)), Int32Array.from({ length: n }, (_, i) => at(i)), Array(n).fill('invalid_json'), Array.from({ length: n }, (_, i) => `line ${at(i)} ${'x'.repeat(30)}`)],
  };
}

/** Every staged file in `dir` by table, with its text ('' for an empty file). */
function stagedText(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((e) => [e.slice(0, e.indexOf('.')), readFileSync(path.join(dir, e), 'utf8')]));
}

test('rows staged after a mark are taken back, whether still buffered or written', () => {
  // 20,000 rows are ~1.2 MB: past the 1 MB buffer, so part of them is in the file already
  for (const n of [10, 20_000]) {
    const dir = tempDir();
    const s = new StagedRows(dir, 't');
    s.add('skipped', skippedRows(0, 5));
    const mark = s.mark();
    s.add('skipped', skippedRows(5, n));
    s.add('line_counts', { rows: 1, cols: [Int32Array.of(1), ['user'], [null], Int32Array.of(2)] });
    s.rollback(mark);
    s.add('skipped', skippedRows(100_000, 2));
    s.close();

    const want = tempDir();
    const w = new StagedRows(want, 't');
    w.add('skipped', skippedRows(0, 5));
    w.add('skipped', skippedRows(100_000, 2));
    w.close();
    // a table first staged after the mark is left empty, which the loader skips
    assert.deepEqual(stagedText(dir), { ...stagedText(want), line_counts: '' }, `${n} rows`);
  }
});

test('a staged file that fails after handing on rows leaves none of them; the file before it stays', () => {
  const [first, second] = files.filter((f) => readTranscriptSync(f, { fileId: 1, fileAgentId: null, fileSessionId: null }).facts.observations.length > 60);
  const task = (p: string, seq: number): ReadTask => ({
    seq,
    path: p,
    id: { fileId: seq + 1, fileAgentId: null, fileSessionId: null },
    opts: {},
    file: { root: REAL_LOGS, kind: 'main', size: 0, mtimeMs: 0, sessionId: null, agentId: null, project: 'p', synthetic: 0 },
  });
  const dir = tempDir();
  const staged = new StagedRows(dir, 't');
  assert.ok('seqs' in readOne(task(first, 0), staged));
  // a reader that hands on rows, then fails half-way (an I/O error)
  let handed = 0;
  const failing: typeof readTranscriptSync = (p, id, opts, spill) =>
    readTranscriptSync(p, id, { ...opts, spillAt: 2, spillKeep: 1 }, (f) => {
      spill!(f);
      if ((handed += f.observations.length) >= 50) throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
    });
  assert.deepEqual(readOne(task(second, 1), staged, failing), { seq: 1, error: { code: 'EIO', message: 'EIO: i/o error, read' } });
  assert.ok(handed >= 50);
  staged.close();

  const alone = tempDir();
  const only = new StagedRows(alone, 't');
  readOne(task(first, 0), only);
  only.close();
  const got = stagedText(dir);
  assert.deepEqual(got, { ...stagedText(alone), ...Object.fromEntries(Object.keys(got).filter((t) => !(t in stagedText(alone))).map((t) => [t, ''])) });
  assert.ok(got.observations.length > 0);
});

test('a stage that cannot be written while a file is read fails the run, not the file', () => {
  const [file] = files.filter((f) => readTranscriptSync(f, { fileId: 1, fileAgentId: null, fileSessionId: null }).facts.observations.length > 60);
  const staged = new StagedRows(tempDir(), 't');
  // the disk fills as the parser hands on its first rows
  staged.facts = () => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  };
  const task: ReadTask = { seq: 0, path: file, id: { fileId: 1, fileAgentId: null, fileSessionId: null }, opts: { spillAt: 2, spillKeep: 1 } };
  assert.throws(() => readOne(task, staged), /ENOSPC/);
  staged.close();
});
