/**
 * The chunked StoreWriter, and the one that stages rows as CSV, against the row-by-row writer they
 * replaced (writer-reference.ts): the same facts leave every fact table identical, row for row and
 * byte for byte (NUL inside keys, lone surrogates, quotes and newlines, non-ASCII, nulls and empty
 * strings, -0, more rows than one chunk), whether the facts come as FileFacts, as the columns a
 * reader worker sends, or staged by a reader in files of its own.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import type { FileFacts } from '../../src/ingest/file-parser.js';
import { readTranscript } from '../../src/ingest/read-file.js';
import { encodeFacts } from '../../src/store/fact-columns.js';
import { StagedRows } from '../../src/store/stage.js';
import { FACT_TABLES } from '../../src/store/schema.js';
import { type FileRow, Store } from '../../src/store/store.js';
import { StoreWriter } from '../../src/store/writer.js';
import { REAL_LOGS, REPO, transcripts } from '../helpers/corpus.js';
import { tmp } from './helpers.js';
import { ReferenceWriter } from './writer-reference.js';

/** Facts with every awkward value a string or number column can hold, and 5,000 observations. */
function awkward(fileId: number): FileFacts {
  const odd = ['a\u0000b', 'lone\ud800x', 'é😀', '', 'quote"\n\\', 'x'.repeat(5000)];
  const observations = Array.from({ length: 5000 }, (_, i) => ({
    fileId,
    line: i + 1,
    key: i % 3 ? `${odd[i % odd.length]}${i}\u0000r${i}` : `${odd[i % odd.length]}${i}`,
    t: 1.7e12 + i / 7,
    model: i % 2 ? 'claude-opus-4-6' : odd[i % odd.length],
    rank: i % 3,
    sessionId: 's',
    chainId: 's',
    agentId: i % 5 ? null : 'a1',
    input: i,
    output: 2 ** 31 - 1 - i,
    cacheWrite: 0,
    cacheWrite5m: 0,
    cacheWrite1h: 0,
    cacheRead: 999_999_999,
    webSearch: 0,
    webFetch: 1,
    splitMissing: i % 2 === 0,
    serviceTier: i % 4 ? 'standard' : null,
    speed: i % 4 === 1 ? '' : null,
    copies: 1,
    segment: 0,
    round: i,
  }));
  return {
    fileId,
    sessionId: 's',
    cwd: null,
    lines: 5000,
    observations,
    chains: [],
    spawns: [{ sessionId: 's', toolUseId: 't\u0000', requestedType: null, spawnName: 'é', promptHash: null }],
    links: [{ sessionId: 's', toolUseId: 't', agentId: 'a\ud800' }],
    sidechainRoots: [{ chainId: 'c', promptHash: null }],
    attachments: [{ chainId: 'c', fileId, line: 3, t: 0.1 + 0.2, type: 'skill_listing', bytes: 12, hash: 'h', round: 1, uuid: 'u-3' }],
    // a text longer than the staging buffer (1 MB) is written on its own; a row longer than
    // DuckDB's CSV reader takes by default (2 MiB) has the loader told the longest row
    events: [
      { chainId: 'c', line: 4, t: -0, kind: 'compaction', detail: 'compact_boundary', uuid: 'u-4' },
      { chainId: 'c', line: 5, t: 1, kind: 'compaction', detail: `${'é"'.repeat(200_000)}\ud800`, uuid: null },
      { chainId: 'c', line: 6, t: 2, kind: 'compaction', detail: `${'y'.repeat(3_000_000)}"`, uuid: 'u\u0000"6' },
    ],
    lineCounts: new Map([
      ['user', 3],
      ['progress\u0000agent_progress', 2],
    ]),
    skipped: [{ fileId, line: 9, reason: 'invalid_json', detail: 'bad \u0000 line' }],
    synthetic: 0,
    state: { chains: [{ chainId: 'c', sessionId: 's', agentId: null, kind: 'main', rounds: 2, compactions: 1, requests: 3, firstT: 5.5, lastKey: 'msg_1\u0000req_1' }], sidechainOf: [] },
  };
}

/** The awkward facts and those of every real and sample transcript. */
async function allFacts(): Promise<FileFacts[]> {
  const facts: FileFacts[] = [awkward(1)];
  const files = [...transcripts(REAL_LOGS), ...transcripts(join(REPO, 'sample-logs'))];
  for (const [i, f] of files.entries()) facts.push((await readTranscript(f, { fileId: i + 2, fileAgentId: null, fileSessionId: null })).facts);
  return facts;
}

/** Writes `facts` with the reference writer into `ref` and with `write` into the store's own tables, then compares every fact table. */
async function compareWithReference(store: Store, facts: FileFacts[], write: () => Promise<void>): Promise<void> {
  await store.run(`ATTACH ':memory:' AS ref`);
  await store.run(`USE ref`);
  const { CREATE_TABLES } = await import('../../src/store/schema.js');
  await store.run(CREATE_TABLES);
  const ref = await ReferenceWriter.create(store.db);
  for (const x of facts) ref.facts(x);
  ref.close();
  await store.run(`USE ${store.path === ':memory:' ? 'memory' : 'store'}`);

  await write();

  let rows = 0;
  const own = await store.all(`SELECT current_database() AS db`);
  for (const t of FACT_TABLES) {
    const db = own[0].db as string;
    const [n] = await store.all(`SELECT (SELECT count(*) FROM ${db}.main.${t})::INT AS ours, (SELECT count(*) FROM ref.main.${t})::INT AS theirs`);
    assert.equal(n.ours, n.theirs, `${t}: row count`);
    // hash(...) compares strings byte for byte (NUL, U+FFFD for lone surrogates) and NULL apart from '';
    // of the text form, so that doubles compare exactly and -0 apart from 0 (hash(-0.0) = hash(0.0))
    const [d] = await store.all(
      `SELECT count(*)::INT AS d FROM (SELECT hash(COLUMNS(*)::VARCHAR) FROM ${db}.main.${t} EXCEPT ALL SELECT hash(COLUMNS(*)::VARCHAR) FROM ref.main.${t})`,
    );
    assert.equal(d.d, 0, `${t}: rows differ`);
    rows += n.ours as number;
  }
  assert.ok(rows > 6000, `only ${rows} rows compared`);
}

test('the chunked writer leaves every fact table as the row-by-row writer did', async () => {
  const facts = await allFacts();
  const store = await Store.open(':memory:');
  try {
    await compareWithReference(store, facts, async () => {
      const writer = await store.writer();
      assert.equal(writer.stageDir, null);
      // half as FileFacts, half as the columns a worker sends
      for (const [i, x] of facts.entries()) {
        if (i % 2) writer.facts(x);
        else writer.columns(encodeFacts(x));
      }
      let calls = 0;
      await writer.close(() => calls++);
      assert.equal(calls, 0, 'nothing is staged, so nothing runs while staged files load');
    });
  } finally {
    store.close();
  }
});

test('the staging writer leaves every fact table as the row-by-row writer did, and removes its files', async () => {
  const facts = await allFacts();
  const dir = tmp();
  const db = join(dir, 'store.duckdb');
  // what a killed run left behind is removed; a name that only looks alike is not
  const stale = join(dir, 'store.duckdb.facts-AbC123');
  const other = join(dir, 'store.duckdb.facts-mine');
  mkdirSync(stale);
  mkdirSync(other);
  const store = await Store.open(db);
  try {
    await compareWithReference(store, facts, async () => {
      const writer = await store.writer(true);
      assert.ok(writer.stageDir);
      assert.equal(existsSync(stale), false, 'a stale staging directory is removed');
      const staging = readdirSync(dir).filter((e) => e.startsWith('store.duckdb.facts-') && e !== 'store.duckdb.facts-mine');
      assert.deepEqual(staging, [basename(writer.stageDir)], 'one staging directory while writing');
      // a third each as FileFacts, as columns, and staged by two "readers" of their own
      const readers = [new StagedRows(writer.stageDir, 'w0'), new StagedRows(writer.stageDir, 'w1')];
      for (const [i, x] of facts.entries()) {
        if (i % 3 === 0) writer.facts(x);
        else if (i % 3 === 1) writer.columns(encodeFacts(x));
        else readers[i % 2].facts(encodeFacts(x));
      }
      for (const r of readers) r.close();
      let calls = 0;
      await writer.close(() => calls++);
      assert.equal(calls, 1, 'whileLoading runs once');
    });
    assert.deepEqual(readdirSync(dir).filter((e) => e.includes('.facts-')), ['store.duckdb.facts-mine'], 'close() removes the staging directory');
  } finally {
    store.close();
  }
});

test('an in-memory store stages in the temp directory under its pid; what a killed in-memory run staged is removed, a running one\'s is not', async () => {
  // in-memory stores hold no lock and share the temp directory: a `--db :memory:` run killed while
  // it read left its staged rows there for good, as nothing told whose they were
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const stale = join(tmpdir(), `cachelens-facts-${gone}-AbC123`);
  const running = join(tmpdir(), `cachelens-facts-${process.ppid}-XyZ789`);
  mkdirSync(stale);
  mkdirSync(running);
  const store = await Store.open(':memory:');
  try {
    const writer = await store.writer(true);
    assert.ok(writer.stageDir?.startsWith(join(tmpdir(), `cachelens-facts-${process.pid}-`)), String(writer.stageDir));
    assert.equal(existsSync(stale), false, 'the directory of a run no longer running is removed');
    assert.equal(existsSync(running), true, 'that of a run still running is its own');
    await writer.close();
    assert.equal(existsSync(writer.stageDir), false);
  } finally {
    store.close();
    rmSync(stale, { recursive: true, force: true });
    rmSync(running, { recursive: true, force: true });
  }
});

test('staged files rows equal appended ones', async () => {
  const row = (fileId: number, parserState: FileRow['parserState']): FileRow => ({
    fileId,
    path: `/logs/p/é "${fileId}",\n.jsonl`,
    root: '/logs',
    kind: fileId % 2 ? 'main' : 'meta',
    size: 2 ** 40 + fileId,
    mtimeMs: 1.7e12 + 0.123,
    readTo: 2 ** 40,
    lines: 0,
    headHash: '',
    sessionId: fileId % 2 ? 's' : null,
    agentId: null,
    project: 'p\u0000q',
    synthetic: 3,
    metaAgentType: fileId % 2 ? null : 'Explore',
    metaToolUseId: null,
    parserState,
  });
  const rows = [row(1, null), row(2, { chains: [], sidechainOf: [] } as unknown as FileRow['parserState'])];
  const dumps: unknown[] = [];
  for (const stage of [false, true]) {
    const dir = tmp();
    const store = await Store.open(join(dir, 's.duckdb'));
    try {
      const writer = await store.writer(stage);
      for (const r of rows) writer.file(r);
      await writer.close();
      dumps.push(await store.all(`SELECT *, hash(COLUMNS(*)::VARCHAR) FROM files ORDER BY file_id`));
    } finally {
      store.close();
    }
  }
  assert.equal((dumps[0] as unknown[]).length, 2);
  assert.deepEqual(dumps[1], dumps[0]);
});

test("a file's parser state comes back whole: its chains from chain_facts, in order, the rest from files.parser_state", async () => {
  const facts = await allFacts();
  for (const stage of [false, true]) {
    const dir = tmp();
    const store = await Store.open(join(dir, 's.duckdb'));
    try {
      const writer = await store.writer(stage);
      for (const x of facts) {
        writer.facts(x);
        writer.file({
          fileId: x.fileId,
          path: `/logs/${x.fileId}.jsonl`,
          root: '/logs',
          kind: 'main',
          size: 1,
          mtimeMs: 1,
          readTo: 1,
          lines: x.lines,
          headHash: '',
          sessionId: x.sessionId,
          agentId: null,
          project: 'p',
          synthetic: 0,
          metaAgentType: null,
          metaToolUseId: null,
          parserState: x.state,
        });
      }
      await writer.close();
      const [stored] = await store.all(`SELECT parser_state FROM files WHERE file_id = 1`);
      assert.ok(!('chains' in JSON.parse(stored.parser_state as string)), 'the chains are not stored twice');
      const rows = await store.fileRows(facts.map((x) => x.fileId));
      let chains = 0;
      for (const x of facts) {
        assert.deepEqual(rows.get(x.fileId)!.parserState, JSON.parse(JSON.stringify(x.state)), `file ${x.fileId}`);
        chains += x.state.chains.length;
      }
      assert.ok(chains > facts.length, `only ${chains} chains compared`);
      assert.ok(facts.some((x) => x.state.chains.length > 1), 'a file with several chains');
    } finally {
      store.close();
    }
  }
});
