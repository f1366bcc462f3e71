/** A store written by another version of the tool is rebuilt, never misread; a foreign DuckDB file is never touched. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { UsageError } from '../../src/errors.js';
import { Store } from '../../src/store/store.js';
import { SCHEMA_VERSION, STORE_COLUMNS } from '../../src/store/schema.js';
import { CONDENSE, MAROT_DOV, corpus, runAndDump, tmp } from './helpers.js';

async function sql(db: string, ...statements: string[]): Promise<void> {
  const instance = await DuckDBInstance.create(db);
  const c = await instance.connect();
  for (const s of statements) await c.run(s);
  c.closeSync();
  instance.closeSync();
}

test('a store from a previous schema version is rebuilt with correct totals', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // what version 3 looked like in the parts that matter: an older files layout, a stale row count
  await sql(
    db,
    `UPDATE meta SET value = '${SCHEMA_VERSION - 1}' WHERE key = 'schema_version'`,
    `ALTER TABLE files DROP COLUMN parser_state`,
    `DELETE FROM observations WHERE line % 2 = 0`,
  );
  const reopened = await runAndDump([root], db);
  assert.equal(reopened.stats.read, first.stats.files, 'every file read again');
  assert.equal(reopened.stats.unchanged, 0);
  assert.deepEqual(reopened.dump, first.dump);
  const s = await Store.open(db);
  try {
    assert.equal(await s.getMeta('schema_version'), String(SCHEMA_VERSION));
  } finally {
    s.close();
  }
});

test('a store without a schema version is rebuilt too', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  await sql(db, `DELETE FROM meta`);
  const a = await runAndDump([root], db);
  assert.equal(a.stats.read, first.stats.files);
  assert.deepEqual(a.dump, first.dump);
});

test('a store of a newer cachelens is refused in one line naming both versions and the ways out, and left as it is; --rebuild replaces it', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // an older build dropped it and read the logs again: two installed versions destroyed each other's store at every switch
  await sql(db, `UPDATE meta SET value = '${SCHEMA_VERSION + 1}' WHERE key = 'schema_version'`);
  const counts = async () => {
    const instance = await DuckDBInstance.create(db);
    const c = await instance.connect();
    const rows = (await c.runAndReadAll(`SELECT (SELECT value FROM meta WHERE key = 'schema_version'), (SELECT count(*)::INTEGER FROM requests), (SELECT count(*)::INTEGER FROM observations)`)).getRows();
    c.closeSync();
    instance.closeSync();
    return rows[0];
  };
  const before = await counts();
  for (const open of [() => Store.open(db), () => runAndDump([root], db)]) {
    await assert.rejects(open(), (e: unknown) => {
      assert.ok(e instanceof UsageError, String(e));
      assert.ok(e.message.includes(`store ${db} was written by a newer cachelens (store version ${SCHEMA_VERSION + 1}; this cachelens writes version ${SCHEMA_VERSION})`), e.message);
      assert.match(e.hint ?? '', /--rebuild .*--db/);
      assert.doesNotMatch(e.message, /\n/);
      return true;
    });
  }
  assert.deepEqual(await counts(), before, 'left as it was');
  const rebuilt = await runAndDump([root], db, { rebuild: true });
  assert.equal(rebuilt.stats.read, first.stats.files);
  assert.deepEqual(rebuilt.dump, first.dump);
  assert.equal((await counts())[0], String(SCHEMA_VERSION));
});

test('a store of this version that lacks a fact table (a query dropped it) is rebuilt; one that lacks a derived table is derived again from its facts, no file read again', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // a derived table: every later command failed "Table with name chains does not exist" until --rebuild;
  // rebuilt from the logs, a first run stopped before its derive (which leaves the same) read every file again
  for (const tables of [['chains'], ['requests'], ['chains', 'requests']]) {
    await sql(db, ...tables.map((t) => `DROP TABLE ${t}`));
    const again = await runAndDump([root], db);
    assert.equal(again.stats.read, 0, `no file read again after DROP TABLE ${tables.join(', ')}`);
    assert.equal(again.stats.derived, 'all');
    assert.deepEqual(again.dump, first.dump, `DROP TABLE ${tables.join(', ')}`);
  }
  // a fact table: made again empty, and the files not read again were lost to the next derive
  await sql(db, `DROP TABLE observations`);
  const rebuilt = await runAndDump([root], db);
  assert.equal(rebuilt.stats.read, first.stats.files, 'every file read again after DROP TABLE observations');
  assert.deepEqual(rebuilt.dump, first.dump, 'DROP TABLE observations');
});

test('a store that lost its meta table (a query dropped it) is rebuilt, not refused for good as someone else\'s file', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  await sql(db, `DROP TABLE meta`);
  // it said "is a DuckDB file but not a cachelens store", --rebuild too
  const again = await runAndDump([root], db);
  assert.equal(again.stats.read, first.stats.files);
  assert.deepEqual(again.dump, first.dump);
});

test('a DuckDB file that is not a cachelens store is refused, and left as it was', async () => {
  const db = path.join(tmp(), 'mine.duckdb');
  await sql(db, `CREATE TABLE results (x INTEGER)`, `INSERT INTO results VALUES (42)`);
  await assert.rejects(Store.open(db), (e: unknown) => e instanceof UsageError && /not a cachelens store/.test(e.message));
  await assert.rejects(Store.open(db, { rebuild: true }), UsageError);
  const instance = await DuckDBInstance.create(db);
  const c = await instance.connect();
  const rows = (await c.runAndReadAll(`SELECT x FROM results`)).getRows();
  c.closeSync();
  instance.closeSync();
  assert.deepEqual(rows, [[42]]);
});

test('opening a current store writes nothing to it; one missing a table gets it back', async () => {
  const db = path.join(tmp(), 's.duckdb');
  // a filled store keeps a write-ahead log (folded in only past 4 MiB): what each open used to grow
  await runAndDump([corpus([CONDENSE])], db);
  assert.ok(existsSync(`${db}.wal`));
  const bytes = () => [db, `${db}.wal`].map((f) => (existsSync(f) ? readFileSync(f).toString('base64') : '')).join('|');
  const before = bytes();
  // each open used to log the schema version again (~130 bytes a time)
  (await Store.open(db)).close();
  (await Store.open(db)).close();
  assert.equal(bytes(), before);
  await sql(db, `DROP TABLE prices`);
  const s = await Store.open(db);
  try {
    assert.equal(s.fresh, false, 'a missing table is made again, the rest kept');
    assert.deepEqual(await s.all(`SELECT count(*)::INTEGER AS n FROM prices`), [{ n: 0 }]);
  } finally {
    s.close();
  }
});

test('a view of the user\'s own in the store is left by a rebuild and by an upgrade, which both succeed, and answers again after', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // any DuckDB client may open the store (docs/store.md): DROP TABLE of this view failed the rebuild
  // with "Existing object my_costs is of type View", so such a store could never be rebuilt or upgraded
  await sql(db, `CREATE VIEW my_costs AS SELECT model, count(*) AS n FROM requests GROUP BY model`);
  const costs = async () => {
    const s = await Store.open(db);
    try {
      return await s.all(`SELECT model, n::INTEGER AS n FROM my_costs ORDER BY model`);
    } finally {
      s.close();
    }
  };
  const before = await costs();
  assert.ok(before.length > 0);
  const rebuilt = await runAndDump([root], db, { rebuild: true });
  assert.equal(rebuilt.stats.read, first.stats.files, 'every file read again');
  assert.deepEqual(rebuilt.dump, first.dump);
  assert.deepEqual(await costs(), before);
  await sql(db, `UPDATE meta SET value = '${SCHEMA_VERSION - 1}' WHERE key = 'schema_version'`);
  const upgraded = await runAndDump([root], db);
  assert.equal(upgraded.stats.read, first.stats.files);
  assert.deepEqual(upgraded.dump, first.dump);
  assert.deepEqual(await costs(), before);
});

test('a store this build filled has exactly the columns STORE_COLUMNS lists, table by table', async () => {
  const db = path.join(tmp(), 's.duckdb');
  await runAndDump([corpus([CONDENSE])], db);
  const instance = await DuckDBInstance.create(db);
  const c = await instance.connect();
  const rows = (await c.runAndReadAll(`SELECT table_name, string_agg(column_name || ' ' || data_type, ', ' ORDER BY column_index) FROM duckdb_columns()
    WHERE database_name = current_database() AND schema_name = 'main' GROUP BY table_name ORDER BY table_name`)).getRows();
  c.closeSync();
  instance.closeSync();
  assert.deepEqual(
    rows.map((r) => [String(r[0]), String(r[1])]),
    [...STORE_COLUMNS].sort(([a], [b]) => (a < b ? -1 : 1)).map(([t, cols]) => [t, cols.replace(/ PRIMARY KEY/g, '')]),
  );
});

test('a table a query altered (a column dropped, renamed, retyped or added) is mended at the next open, with one note: derived again, or rebuilt from the logs', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // every later command failed with an internal error ("Referenced column "model" not found", an appender's column count)
  const cases: [string, RegExp, 'derived' | 'rebuilt'][] = [
    ['ALTER TABLE requests DROP COLUMN model', /table requests was altered \(no column model\); it is made again from the stored facts$/, 'derived'],
    ['ALTER TABLE chains RENAME COLUMN agent_type TO kind_of_agent', /table chains was altered \(no column agent_type\)/, 'derived'],
    ['ALTER TABLE requests ALTER COLUMN model TYPE BLOB', /table requests was altered \(model is BLOB, not VARCHAR\)/, 'derived'],
    ['ALTER TABLE results ADD COLUMN mine INTEGER', /table results was altered \(a column mine this cachelens does not write\)/, 'derived'],
    ['ALTER TABLE files ALTER COLUMN size TYPE VARCHAR', /table files was altered \(size is VARCHAR, not BIGINT\); the store is rebuilt from the logs$/, 'rebuilt'],
    ['ALTER TABLE observations DROP COLUMN speed', /table observations was altered \(no column speed\); the store is rebuilt from the logs$/, 'rebuilt'],
    ['ALTER TABLE meta RENAME COLUMN value TO v', /table meta was altered \(no column value\); the store is rebuilt from the logs$/, 'rebuilt'],
  ];
  for (const [alter, note, how] of cases) {
    await sql(db, alter);
    const notes: string[] = [];
    const again = await runAndDump([root], db, { notice: (l) => notes.push(l) });
    assert.equal(notes.length, 1, `${alter}: one note, ${JSON.stringify(notes)}`);
    assert.ok(notes[0]!.startsWith(`cachelens: store ${db}: `), notes[0]);
    assert.match(notes[0]!, note);
    assert.equal(again.stats.read, how === 'rebuilt' ? first.stats.files : 0, `${alter}: files read again`);
    if (how === 'derived') assert.equal(again.stats.derived, 'all', alter);
    assert.deepEqual(again.dump, first.dump, alter);
    // mended for good: the next run says nothing
    const quiet: string[] = [];
    (await runAndDump([root], db, { notice: (l) => quiet.push(l) })).dump;
    assert.deepEqual(quiet, [], `${alter}: mended once`);
  }
});

test('a view or a table of the user\'s own is no damage: the open writes nothing and says nothing, and a mend leaves both', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  await sql(db, `CREATE TABLE my_notes (note VARCHAR)`, `INSERT INTO my_notes VALUES ('mine')`, `CREATE VIEW my_models AS SELECT DISTINCT model FROM requests`, `CHECKPOINT`);
  const bytes = () => [db, `${db}.wal`].map((f) => (existsSync(f) ? readFileSync(f).toString('base64') : '')).join('|');
  const before = bytes();
  const notes: string[] = [];
  (await Store.open(db, { onNote: (l) => notes.push(l) })).close();
  assert.equal(bytes(), before, 'nothing written');
  const warm = await runAndDump([root], db, { notice: (l) => notes.push(l) });
  assert.equal(warm.stats.read, 0);
  assert.deepEqual(notes, []);
  // a mend that rebuilds the store drops the store's own tables only
  await sql(db, `DROP TABLE spawns`);
  const rebuilt = await runAndDump([root], db, { notice: (l) => notes.push(l) });
  assert.equal(rebuilt.stats.read, first.stats.files);
  assert.deepEqual(rebuilt.dump, first.dump);
  assert.equal(notes.length, 1);
  assert.match(notes[0]!, /table spawns is missing; the store is rebuilt from the logs$/);
  const s = await Store.open(db);
  try {
    assert.deepEqual(await s.all(`SELECT note FROM my_notes`), [{ note: 'mine' }]);
    assert.ok((await s.all(`SELECT * FROM my_models`)).length > 0);
  } finally {
    s.close();
  }
});

test('a view under the name of a store table is dropped by the next open, with one note saying so, and the table made again; --rebuild recovers too', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // every later command failed "internal error: … Existing object chains is of type View, trying
  // to replace with type Table" (a Binder Error for files; meta "is unreadable"), --rebuild too
  const cases: [string, 'derived' | 'rebuilt'][] = [
    ['chains', 'derived'],
    ['requests', 'derived'],
    ['prices', 'derived'],
    ['files', 'rebuilt'],
    ['observations', 'rebuilt'],
    ['meta', 'rebuilt'],
  ];
  for (const [table, how] of cases) {
    await sql(db, `DROP TABLE ${table}`, `CREATE VIEW ${table} AS SELECT 1 AS x`);
    const notes: string[] = [];
    const again = await runAndDump([root], db, { notice: (l) => notes.push(l) });
    assert.deepEqual(
      notes,
      [`cachelens: store ${db}: ${table} is a view, not the store's table (dropped, as the name is the store's); ${how === 'derived' ? 'it is made again from the stored facts' : 'the store is rebuilt from the logs'}`],
      table,
    );
    assert.equal(again.stats.read, how === 'rebuilt' ? first.stats.files : 0, `${table}: files read again`);
    assert.deepEqual(again.dump, first.dump, table);
    const quiet: string[] = [];
    await runAndDump([root], db, { notice: (l) => quiet.push(l) });
    assert.deepEqual(quiet, [], `${table}: mended once`);
    // --rebuild, asked for at once, drops the view as well
    await sql(db, `DROP TABLE ${table}`, `CREATE VIEW ${table} AS SELECT 1 AS x`);
    const rebuilt = await runAndDump([root], db, { rebuild: true });
    assert.equal(rebuilt.stats.read, first.stats.files, `${table}: --rebuild`);
    assert.deepEqual(rebuilt.dump, first.dump, `${table}: --rebuild`);
  }
});

test('a store that lost its meta table, or had it altered, or its version deleted, is rebuilt dropping the store\'s own tables only: a table of the user\'s own is kept', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // with no version to read, every table was dropped as for an older layout, the user's own too
  for (const damage of ['DROP TABLE meta', 'ALTER TABLE meta RENAME COLUMN value TO v', 'DELETE FROM meta']) {
    await sql(db, `CREATE OR REPLACE TABLE my_notes AS SELECT 42 AS x`, damage);
    const again = await runAndDump([root], db);
    assert.equal(again.stats.read, first.stats.files, `${damage}: rebuilt from the logs`);
    assert.deepEqual(again.dump, first.dump, damage);
    const s = await Store.open(db);
    try {
      assert.deepEqual(await s.all(`SELECT x FROM my_notes`), [{ x: 42 }], damage);
    } finally {
      s.close();
    }
  }
});

/** The user's own table and view, put in the store; `kept` says whether both are still there, as they were. */
async function userOwn(db: string): Promise<{ kept: () => Promise<void> }> {
  await sql(db, `CREATE OR REPLACE TABLE my_notes AS SELECT 42 AS x`, `CREATE OR REPLACE VIEW my_models AS SELECT DISTINCT model FROM requests`);
  return {
    kept: async () => {
      const s = await Store.open(db);
      try {
        assert.deepEqual(await s.all(`SELECT x FROM my_notes`), [{ x: 42 }]);
        assert.ok((await s.all(`SELECT * FROM my_models`)).length > 0, 'the view answers again');
      } finally {
        s.close();
      }
    },
  };
}

test('a store whose meta and a table of facts a query replaced by views is mended, not refused as someone else\'s file: rebuilt with one note, the user\'s own table and view kept', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // it said "is a DuckDB file but not a cachelens store", --rebuild too: the fact table's view did not count as the store's
  for (const fact of ['files', 'observations']) {
    const own = await userOwn(db);
    await sql(db, `DROP TABLE meta`, `CREATE VIEW meta AS SELECT 'k' AS key, 'v' AS value`, `DROP TABLE ${fact}`, `CREATE VIEW ${fact} AS SELECT 1 AS x`);
    const notes: string[] = [];
    const again = await runAndDump([root], db, { notice: (l) => notes.push(l) });
    assert.deepEqual(
      notes,
      [
        `cachelens: store ${db}: meta is a view, not the store's table (dropped, as the name is the store's), ${fact} is a view, not the store's table (dropped, as the name is the store's); the store is rebuilt from the logs`,
      ],
      fact,
    );
    assert.equal(again.stats.read, first.stats.files, `${fact}: rebuilt from the logs`);
    assert.deepEqual(again.dump, first.dump, fact);
    await own.kept();
    const quiet: string[] = [];
    await runAndDump([root], db, { notice: (l) => quiet.push(l) });
    assert.deepEqual(quiet, [], `${fact}: mended once`);
  }
  // a file of views alone under the store's names holds nothing of a store: it is refused, and left
  const views = path.join(tmp(), 'views.duckdb');
  await sql(views, ...[...STORE_COLUMNS.keys()].map((t) => `CREATE VIEW ${t} AS SELECT 1 AS x`));
  await assert.rejects(Store.open(views), (e: unknown) => e instanceof UsageError && /not a cachelens store/.test(e.message));
});

test('a store that lost its meta and has a table of facts altered is rebuilt keeping the user\'s own tables and views, with one note naming both', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // taken for an older layout, whose every table was dropped: my_notes went with the store's
  const cases: [string, string][] = [
    ['ALTER TABLE files ALTER COLUMN size TYPE VARCHAR', 'table files was altered (size is VARCHAR, not BIGINT)'],
    ['ALTER TABLE observations DROP COLUMN speed', 'table observations was altered (no column speed)'],
  ];
  for (const [alter, what] of cases) {
    const own = await userOwn(db);
    await sql(db, `DROP TABLE meta`, alter);
    const notes: string[] = [];
    const again = await runAndDump([root], db, { notice: (l) => notes.push(l) });
    await own.kept();
    assert.equal(again.stats.read, first.stats.files, `${alter}: rebuilt from the logs`);
    assert.deepEqual(again.dump, first.dump, alter);
    assert.deepEqual(notes, [`cachelens: store ${db}: table meta is missing, ${what}; the store is rebuilt from the logs`], alter);
  }
});

test('an older layout is still told and rebuilt, its tables dropped by name and the user\'s own kept: with its version, and having lost its meta', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  const tableNames = async () => {
    const instance = await DuckDBInstance.create(db);
    const c = await instance.connect();
    const rows = (await c.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY table_name`)).getRows();
    c.closeSync();
    instance.closeSync();
    return rows.map((r) => String(r[0]));
  };
  const ours = [...STORE_COLUMNS.keys()].sort();
  // what versions 22 – 23 looked like in the parts that matter: attachment_copies, not line_copies;
  // an older files layout
  const older = [`ALTER TABLE line_copies RENAME TO attachment_copies`, `ALTER TABLE files DROP COLUMN parser_state`];
  for (const version of [`UPDATE meta SET value = '23' WHERE key = 'schema_version'`, `DROP TABLE meta`]) {
    const own = await userOwn(db);
    await sql(db, ...older, version);
    const notes: string[] = [];
    const again = await runAndDump([root], db, { notice: (l) => notes.push(l) });
    assert.equal(again.stats.read, first.stats.files, `${version}: rebuilt from the logs`);
    assert.deepEqual(again.dump, first.dump, version);
    // the older layout's table is gone; the user's is not (an upgrade dropped every table)
    assert.deepEqual(await tableNames(), [...ours, 'my_notes'].sort(), version);
    await own.kept();
    // an upgrade is expected, and said nothing; a lost meta says what it found
    if (version.startsWith('UPDATE')) assert.deepEqual(notes, [], version);
    else assert.equal(notes.length, 1, JSON.stringify(notes));
  }
});

/** Each table's rows, by name, sorted: what a refusal must leave as it was. */
async function contents(db: string): Promise<string> {
  const instance = await DuckDBInstance.create(db);
  const c = await instance.connect();
  try {
    const names = (await c.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY table_name`)).getRows().map((r) => String(r[0]));
    const out: Record<string, unknown> = {};
    for (const t of names) out[t] = (await c.runAndReadAll(`SELECT * FROM "${t}" ORDER BY ALL`)).getRows().map((r) => r.map(String));
    return JSON.stringify(out);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

test('another program\'s DuckDB file with a key/value meta of its own (no store version, or an older one) is refused, --rebuild too, and left as it was; so is a files table of other columns beside views under the store\'s names', async () => {
  const refused = async (db: string) => {
    const before = await contents(db);
    for (const rebuild of [false, true]) {
      await assert.rejects(Store.open(db, { rebuild }), (e: unknown) => {
        assert.ok(e instanceof UsageError, String(e));
        assert.equal(e.message, `${db} is a DuckDB file but not a cachelens store`);
        return true;
      });
    }
    assert.equal(await contents(db), before, `${db}: left as it was`);
  };
  // it was taken for a store that lost its version, and its tables dropped by the store's names: files went
  for (const version of [[], [`INSERT INTO meta VALUES ('schema_version', '3')`]]) {
    const db = path.join(tmp(), 'theirs.duckdb');
    await sql(
      db,
      `CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)`,
      `INSERT INTO meta VALUES ('app', 'mine')`,
      ...version,
      `CREATE TABLE files (id INT, name VARCHAR)`,
      `INSERT INTO files VALUES (1, 'precious')`,
    );
    await refused(db);
  }
  // a table of any columns under one name of the store's counted, views under the others too
  const views = path.join(tmp(), 'views.duckdb');
  await sql(
    views,
    `CREATE TABLE files (id INT, name VARCHAR)`,
    `INSERT INTO files VALUES (1, 'precious')`,
    ...['observations', 'chain_facts', 'spawns', 'agent_links', 'sidechain_roots', 'attachments', 'chain_events', 'line_counts', 'skipped'].map((t) => `CREATE VIEW ${t} AS SELECT 1 AS x`),
  );
  await refused(views);
});

test('an older store, or one that lost its meta, lacking a table of facts is refused in one line naming it with --rebuild as the way out, and left as it was; --rebuild rebuilds it', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // it said "is a DuckDB file but not a cachelens store (choose another --db)", --rebuild too: the user's own old store could not be rebuilt
  const cases: [string[], string][] = [
    [[`UPDATE meta SET value = '23' WHERE key = 'schema_version'`, `DROP TABLE chain_events`], 'a cachelens store by its meta (store version 23), lacks table chain_events'],
    [[`DROP TABLE meta`, `DROP TABLE spawns`, `DROP TABLE agent_links`], 'a cachelens store by its tables, lacks tables spawns, agent_links'],
  ];
  for (const [damage, what] of cases) {
    const copy = path.join(tmp(), 'c.duckdb');
    for (const end of ['', '.wal']) if (existsSync(db + end)) copyFileSync(db + end, copy + end);
    await sql(copy, ...damage);
    const before = await contents(copy);
    await assert.rejects(runAndDump([root], copy), (e: unknown) => {
      assert.ok(e instanceof UsageError, String(e));
      assert.equal(e.message, `store ${copy}, ${what}, which every cachelens store holds, and is left as it is`);
      assert.equal(e.hint, 'run with --rebuild to rebuild it from the logs, or use --db to choose another store');
      return true;
    });
    assert.equal(await contents(copy), before, `${damage.join('; ')}: left as it was`);
    const rebuilt = await runAndDump([root], copy, { rebuild: true });
    assert.equal(rebuilt.stats.read, first.stats.files, damage.join('; '));
    assert.deepEqual(rebuilt.dump, first.dump, damage.join('; '));
  }
  // someone else's file with a key/value meta holding a store version and a table of facts of other columns is still no store
  const theirs = path.join(tmp(), 'theirs.duckdb');
  await sql(theirs, `CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)`, `INSERT INTO meta VALUES ('schema_version', '23')`, `CREATE TABLE spawns (id INT, name VARCHAR)`);
  for (const rebuild of [false, true]) {
    await assert.rejects(Store.open(theirs, { rebuild }), (e: unknown) => e instanceof UsageError && e.message === `${theirs} is a DuckDB file but not a cachelens store`);
  }
});

test('a store of this layout that lost both meta and line_copies is rebuilt with a note naming both missing, not said to be an older layout', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  await sql(db, `DROP TABLE meta`, `DROP TABLE line_copies`);
  const notes: string[] = [];
  // it said "table meta is missing, and its tables are an older cachelens layout's", of a store whose every other table is this layout's
  const again = await runAndDump([root], db, { notice: (l) => notes.push(l) });
  assert.deepEqual(notes, [`cachelens: store ${db}: table meta is missing, table line_copies is missing; the store is rebuilt from the logs`]);
  assert.equal(again.stats.read, first.stats.files);
  assert.deepEqual(again.dump, first.dump);
});

/** The rows of table `t` of the DuckDB file `db`, sorted. */
async function rowsOf(db: string, t: string): Promise<unknown[][]> {
  const instance = await DuckDBInstance.create(db);
  const c = await instance.connect();
  try {
    return (await c.runAndReadAll(`SELECT * FROM "${t}" ORDER BY ALL`)).getRowsJS();
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

test('near misses of a store (another program\'s meta with a store version beside keys of its own, one or half of the tables of facts, a meta of other columns) are refused as not a cachelens store, --rebuild too, and left as they were', async () => {
  const table = (t: string) => `CREATE TABLE ${t} (${STORE_COLUMNS.get(t)})`;
  const facts = ['files', 'observations', 'chain_facts', 'spawns', 'agent_links', 'sidechain_roots', 'attachments', 'chain_events', 'line_counts', 'skipped'];
  const kv = `CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)`;
  const cases: [string, string[]][] = [
    // it was "a cachelens store by its meta (store version 3), lacks tables …", and --rebuild dropped the program's meta and skipped rows, exit 0
    [
      'importer',
      [
        kv,
        `INSERT INTO meta VALUES ('schema_version', '3'), ('owner', 'importer')`,
        `CREATE TABLE skipped (line INTEGER, reason VARCHAR, detail VARCHAR)`,
        `INSERT INTO skipped VALUES (7, 'dup', 'row 7 twice')`,
        `CREATE TABLE imports (id INT, name VARCHAR)`,
        `INSERT INTO imports VALUES (1, 'precious')`,
      ],
    ],
    // the same with this build's store version
    [
      'importer, this version',
      [
        kv,
        `INSERT INTO meta VALUES ('schema_version', '${SCHEMA_VERSION}'), ('owner', 'importer')`,
        `CREATE TABLE skipped (line INTEGER, reason VARCHAR, detail VARCHAR)`,
        `INSERT INTO skipped VALUES (7, 'dup', 'row 7 twice')`,
      ],
    ],
    // a meta of the store's keys alone, and one table of facts with the store's columns
    ['one table of facts', [kv, `INSERT INTO meta VALUES ('schema_version', '23')`, table('skipped'), `INSERT INTO skipped VALUES (1, 2, 'x', 'y')`]],
    // half of the tables of facts, no more
    ['half of the tables', [kv, `INSERT INTO meta VALUES ('schema_version', '23')`, ...facts.slice(0, facts.length / 2).map(table)]],
    // every table of facts but one, and a key of another program's in meta
    ['a key not the store\'s', [kv, `INSERT INTO meta VALUES ('schema_version', '23'), ('owner', 'importer')`, ...facts.slice(1).map(table), `INSERT INTO skipped VALUES (1, 2, 'x', 'y')`]],
    // every table of facts but one, and a meta of other columns
    [
      'meta of other columns',
      [`CREATE TABLE meta (key VARCHAR, value VARCHAR, updated VARCHAR)`, `INSERT INTO meta VALUES ('schema_version', '23', 'today')`, ...facts.slice(1).map(table), `INSERT INTO skipped VALUES (1, 2, 'x', 'y')`],
    ],
  ];
  for (const [name, statements] of cases) {
    const db = path.join(tmp(), 'imp.duckdb');
    await sql(db, ...statements);
    const before = await contents(db);
    for (const rebuild of [false, true]) {
      await assert.rejects(Store.open(db, { rebuild }), (e: unknown) => {
        assert.ok(e instanceof UsageError, `${name}: ${String(e)}`);
        assert.equal(e.message, `${db} is a DuckDB file but not a cachelens store`, name);
        return true;
      });
    }
    assert.equal(await contents(db), before, `${name}: left as it was`);
  }
});

test('a table of the user\'s own with a foreign key to a store table is refused at the open only where DuckDB would fail, in one line naming it and the way out, the store left as it was; empty, or referring to no row, the store is rebuilt and run over with the table kept', async () => {
  const root = corpus([CONDENSE]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  /** the one line of the refusal, the store left as it was */
  const refused = async (db: string, rebuild: boolean, message: string, hint: string) => {
    const before = await contents(db);
    await assert.rejects(runAndDump([root], db, { rebuild }), (e: unknown) => {
      assert.ok(e instanceof UsageError, String(e));
      assert.equal(e.message, message);
      assert.equal(e.hint, hint);
      return true;
    });
    assert.equal(await contents(db), before, 'left as it was');
  };
  const emptyOrDrop =
    'empty or drop table my_notes with a DuckDB client (DELETE FROM my_notes, or DROP TABLE my_notes: cachelens query opens the store as this run does), or use --db to choose another store';
  const drop = 'drop table my_notes with a DuckDB client (DROP TABLE my_notes: cachelens query opens the store as this run does), or use --db to choose another store';
  /** a copy of the store with `damage` done to it, and my_notes in it */
  const copyWith = async (damage: string[]) => {
    const copy = path.join(tmp(), 'c.duckdb');
    for (const end of ['', '.wal']) if (existsSync(db + end)) copyFileSync(db + end, copy + end);
    await sql(copy, ...damage, `CREATE TABLE my_notes (file_id INTEGER REFERENCES files(file_id), note VARCHAR)`);
    return copy;
  };
  // An empty my_notes, or one whose rows refer to no file (NULL), refused each of these (`… but table my_notes, not the store's,
  // has a foreign key to its table files, and DuckDB drops no table another refers to`; and every run, rebuilding or not), though
  // DuckDB drops no such table only: files, of this build's columns, is emptied in place of dropped. Rows that refer to a
  // file are refused, as a rebuild deletes every row of files (it failed "Could not drop the table because this table is main
  // key table of the table my_notes", --rebuild the same way).
  const cases: [string[], boolean, string][] = [
    [[], true, 'is to be rebuilt (--rebuild)'],
    [[`DROP TABLE meta`], false, 'must be rebuilt from the logs (table meta is missing)'],
    [[`DROP TABLE meta`], true, 'is to be rebuilt (--rebuild)'],
    [[`UPDATE meta SET value = '23' WHERE key = 'schema_version'`], false, 'must be rebuilt from the logs (it was written by an older cachelens)'],
    [[`DROP TABLE spawns`], false, 'must be mended (table spawns is missing)'],
  ];
  for (const [damage, rebuild, why] of cases) {
    for (const notes of [[], [`INSERT INTO my_notes VALUES (NULL, 'no file')`]]) {
      const copy = await copyWith(damage);
      await sql(copy, ...notes);
      const again = await runAndDump([root], copy, { rebuild });
      assert.equal(again.stats.read, first.stats.files, `${damage.join()} ${notes.join()}`);
      assert.deepEqual(again.dump, first.dump, `${damage.join()} ${notes.join()}`);
      assert.deepEqual(await rowsOf(copy, 'my_notes'), notes.length === 0 ? [] : [[null, 'no file']], 'kept as it was');
      const warm = await runAndDump([root], copy);
      assert.equal(warm.stats.read, 0, 'the next run reads nothing again');
    }
    const copy = await copyWith(damage);
    await sql(copy, `INSERT INTO my_notes SELECT min(file_id), 'mine' FROM files`);
    await refused(copy, rebuild, `store ${copy} ${why}, but rows of table my_notes, not the store's, refer to rows of its table files by a foreign key, and DuckDB deletes no row another refers to; the store is left as it is`, emptyOrDrop);
    // the way out works
    await sql(copy, `DELETE FROM my_notes`);
    const again = await runAndDump([root], copy, { rebuild });
    assert.equal(again.stats.read, first.stats.files, damage.join());
    assert.deepEqual(again.dump, first.dump, damage.join());
  }
  // files of an older layout's columns must be dropped, which DuckDB refuses while any table refers to it, an empty one too
  const older = await copyWith([`UPDATE meta SET value = '23' WHERE key = 'schema_version'`, `ALTER TABLE files DROP COLUMN parser_state`]);
  await refused(
    older,
    false,
    `store ${older} must be rebuilt from the logs (it was written by an older cachelens), but table my_notes, not the store's, has a foreign key to its table files, which must be dropped (no column parser_state), and DuckDB drops no table another refers to; the store is left as it is`,
    drop,
  );
  await sql(older, `DROP TABLE my_notes`);
  assert.equal((await runAndDump([root], older)).stats.read, first.stats.files);
  // A run that read a changed or a gone log again failed "internal error: … Violates foreign key constraint because key
  // "file_id: 1" is still referenced by a foreign key in a different table"; then every open was refused, a warm run's too
  // (DuckDB deletes no row another refers to, even one written again in the same transaction, but lets an UPDATE or an
  // INSERT OR REPLACE write over it). Only the run that must delete a row referred to is refused now: a warm run, one over
  // a log appended to (its row written over) or over another log changed reads the store, the user's rows kept.
  const logs = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl')).sort();
  const noted = path.join(root, logs[0]!);
  const whole = readFileSync(noted);
  // the noted log first without its last lines, to be appended later
  const cut = whole.lastIndexOf(0x0a, whole.lastIndexOf(0x0a, whole.length - 2) - 1) + 1;
  writeFileSync(noted, whole.subarray(0, cut));
  const fk = path.join(tmp(), 'fk.duckdb');
  await runAndDump([root], fk);
  await sql(
    fk,
    `CREATE TABLE my_notes (file_id INTEGER REFERENCES files(file_id), note VARCHAR)`,
    `INSERT INTO my_notes SELECT file_id, 'mine' FROM files WHERE path = '${noted.replaceAll("'", "''")}'`,
  );
  const mine = await rowsOf(fk, 'my_notes');
  assert.equal(mine.length, 1);
  // warm: nothing changes
  assert.equal((await runAndDump([root], fk)).stats.read, 0);
  // the noted log appended to: read from where it stopped, its row written over in place, by the appending writer and
  // by the staging one (a large ingest's, which loads the staged rows in bulk)
  const staged = path.join(tmp(), 'staged.duckdb');
  for (const end of ['', '.wal']) if (existsSync(fk + end)) copyFileSync(fk + end, staged + end);
  writeFileSync(noted, whole);
  for (const [db, stageBytes] of [[fk, undefined], [staged, 0]] as const) {
    const appended = await runAndDump([root], db, { stageBytes });
    assert.equal(appended.stats.appended, 1, JSON.stringify(appended.stats));
    assert.deepEqual(appended.dump, first.dump, 'as a fresh store');
    assert.deepEqual(await rowsOf(db, 'my_notes'), mine, 'the rows of yours kept');
  }
  // another log gone: its row, which no row of yours refers to, is deleted
  const other = path.join(root, logs[1]!);
  const otherBytes = readFileSync(other);
  rmSync(other);
  const retired = await runAndDump([root], fk);
  assert.equal(retired.stats.retired, 1);
  writeFileSync(other, otherBytes);
  assert.equal((await runAndDump([root], fk)).stats.read, 1);
  // the noted log touched (the same bytes, a new mtime: cp without -p, git checkout), or rewritten (its first bytes
  // changed), is read again whole under its own file id: its row is written over in place, by both writers, not
  // deleted (every later run was refused, saying the log was rewritten)
  for (const [db, stageBytes] of [[fk, undefined], [staged, 0]] as const) {
    const later = new Date(Date.now() + 60_000);
    utimesSync(noted, later, later);
    const touched = await runAndDump([root], db, { stageBytes });
    // (the staged copy, made before the other log went and came back, reads that one again too)
    assert.equal(touched.stats.read, db === fk ? 1 : 2, JSON.stringify(touched.stats));
    assert.deepEqual(touched.dump, first.dump, 'touched: as a fresh store');
    assert.deepEqual(await rowsOf(db, 'my_notes'), mine, 'touched: the rows of yours kept');
  }
  writeFileSync(noted, Buffer.concat([Buffer.from(' '), whole.subarray(1)]));
  const rewritten = await runAndDump([root], fk);
  assert.deepEqual(rewritten.dump, (await runAndDump([root], path.join(tmp(), 'rewritten.duckdb'))).dump, 'rewritten: as a fresh store');
  assert.deepEqual(await rowsOf(fk, 'my_notes'), mine, 'rewritten: the rows of yours kept');
  // gone: its row must go, refused
  const rows = `store ${fk}: rows of table my_notes, not the store's, refer by a foreign key to the row of its table files for ${noted}, which this run must delete (that log is gone or could not be read), and DuckDB deletes no row another refers to; the store is left as it is`;
  rmSync(noted);
  await refused(fk, false, rows, emptyOrDrop);
  // emptied, the table is kept: the gone log's row is deleted from files beside it
  await sql(fk, `DELETE FROM my_notes`);
  const gone = await runAndDump([root], fk);
  assert.equal(gone.stats.retired, 1);
  assert.deepEqual(await rowsOf(fk, 'my_notes'), []);
  // a row of yours that refers to a remembered result, which any run that changes a fact forgets: such a run was
  // refused ("… which this run must delete (the logs changed since they were kept)"); now the result's value is
  // emptied (NULL: not kept) in place, the other results deleted, and the run reads the logs, your rows kept
  writeFileSync(noted, whole);
  await runAndDump([root], fk);
  await sql(fk, `INSERT INTO results VALUES ('a result', '1'), ('another', '2')`, `CREATE TABLE my_results (k VARCHAR REFERENCES results(key))`, `INSERT INTO my_results VALUES ('a result')`);
  assert.equal((await runAndDump([root], fk)).stats.read, 0);
  rmSync(other);
  const changed = await runAndDump([root], fk);
  assert.equal(changed.stats.retired, 1);
  assert.deepEqual(await rowsOf(fk, 'my_results'), [['a result']]);
  const kept = await rowsOf(fk, 'results');
  assert.deepEqual(
    kept.filter((r) => r[0] === 'a result' || r[0] === 'another'),
    [['a result', null]],
    'the result referred to emptied in place, the other deleted',
  );
});

test('the names of tables and views are told case aside, as DuckDB takes them: a view Chains in place of chains is mended, a table META with the store\'s version is its meta', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  // an internal error: "Existing object chains is of type View, trying to replace with type Table", --rebuild too
  for (const rebuild of [false, true]) {
    await sql(db, `DROP TABLE chains`, `CREATE VIEW Chains AS SELECT 1 AS x`);
    const notes: string[] = [];
    const again = await runAndDump([root], db, { rebuild, notice: (l) => notes.push(l) });
    assert.deepEqual(notes, rebuild ? [] : [`cachelens: store ${db}: chains is a view, not the store's table (dropped, as the name is the store's); it is made again from the stored facts`]);
    assert.deepEqual(again.dump, first.dump, `rebuild ${rebuild}`);
  }
  // every later run rebuilt the store (meta taken for lost), and failed "Table with name requests does not exist!"
  await sql(db, `DROP TABLE meta`, `CREATE TABLE META (key VARCHAR PRIMARY KEY, value VARCHAR)`, `INSERT INTO META VALUES ('schema_version', '${SCHEMA_VERSION}')`);
  for (let run = 0; run < 2; run++) {
    const notes: string[] = [];
    const again = await runAndDump([root], db, { notice: (l) => notes.push(l) });
    assert.deepEqual(notes, []);
    assert.equal(again.stats.read, 0, 'not rebuilt');
    assert.deepEqual(again.dump, first.dump);
  }
  const rebuilt = await runAndDump([root], db, { rebuild: true });
  assert.equal(rebuilt.stats.read, first.stats.files);
  assert.deepEqual(rebuilt.dump, first.dump);
});

test('a store that lost its version says so in its one note, naming every view it drops in place of the store\'s tables; an older layout that lost its meta is said to be one', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const first = await runAndDump([root], db);
  const view = (t: string) => `${t} is a view, not the store's table (dropped, as the name is the store's)`;
  const cases: [string[], string][] = [
    // rebuilt without a word, the view dropped unsaid
    [[`DELETE FROM meta WHERE key = 'schema_version'`, `DROP TABLE spawns`, `CREATE VIEW spawns AS SELECT 1 AS x`], `table meta holds no store version, ${view('spawns')}`],
    [[`DELETE FROM meta WHERE key = 'schema_version'`], 'table meta holds no store version'],
    // the views in place of requests and chains were dropped unsaid
    [[`DROP TABLE meta`, `DROP TABLE requests`, `CREATE VIEW requests AS SELECT 1 AS x`, `DROP TABLE chains`, `CREATE VIEW chains AS SELECT 1 AS x`], `table meta is missing, ${view('requests')}, ${view('chains')}`],
    // versions 22 – 23, and 4, having lost meta: each table of facts of theirs was named altered or missing
    [
      [`DROP TABLE meta`, `ALTER TABLE line_copies RENAME TO attachment_copies`, `ALTER TABLE chain_events DROP COLUMN uuid`],
      "table meta is missing, and its tables are an older cachelens layout's",
    ],
    [
      [
        `DROP TABLE meta`,
        `DROP TABLE line_copies`,
        `DROP TABLE results`,
        `ALTER TABLE chain_events DROP COLUMN uuid`,
        `ALTER TABLE attachments DROP COLUMN uuid`,
        `ALTER TABLE chain_facts DROP COLUMN last_key`,
        `ALTER TABLE observations ADD COLUMN message_id VARCHAR`,
      ],
      "table meta is missing, and its tables are an older cachelens layout's",
    ],
  ];
  for (const [damage, what] of cases) {
    await sql(db, ...damage);
    const notes: string[] = [];
    const again = await runAndDump([root], db, { notice: (l) => notes.push(l) });
    assert.deepEqual(notes, [`cachelens: store ${db}: ${what}; the store is rebuilt from the logs`], damage.join('; '));
    assert.equal(again.stats.read, first.stats.files, damage.join('; '));
    assert.deepEqual(again.dump, first.dump, damage.join('; '));
  }
});
