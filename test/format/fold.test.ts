/** The one case fold of the case-insensitive matches: --project (SQL's fold_case) and a channel's handles. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { foldCase } from '../../src/format/fold.js';
import { isAgentAuthor, isMention } from '../../src/replay/channel-log.js';
import { loadDuckdb, MACROS } from '../../src/store/duckdb.js';
import { assistant, summaryJson, writeCorpus } from '../helpers/corpus.js';

const TRICKY = ['ΣΟΦΟΣ', 'σοφος', 'σοφοσ', 'ΣΟΦΟΣbot', 'ς', 'İstanbul', 'ISTANBUL', 'ıi', 'straße', 'STRASSE', 'ẞ', 'ſ', 'µ', '\u212a', 'ǅ', 'ﬁ', 'ŉ', 'Ꭰꭰ', 'ᾈ', 'Å', '/home/Ünïcode-App', '項目', '😀A'];

test('foldCase folds the final sigma with σ, ſ with s, µ with μ, and the Turkish I\'s with i; a character stays one character', () => {
  assert.equal(foldCase('ΣΟΦΟΣ'), 'σοφοσ');
  assert.equal(foldCase('σοφος'), 'σοφοσ');
  assert.equal(foldCase('σοφοσ'), 'σοφοσ');
  assert.ok(foldCase('/home/ΣΟΦΟΣbot').includes(foldCase('σοφος')), 'toLowerCase wrote the one ς and the other σ');
  assert.equal(foldCase('İstanbul'), 'istanbul');
  assert.equal(foldCase('ISTANBUL'), foldCase('ıstanbul'));
  assert.equal(foldCase('ſ µ \u212a'), 's μ k');
  assert.equal(foldCase('straße'), 'straße');
  assert.equal(foldCase('ẞ'), 'ß');
  assert.equal(foldCase('Plain ASCII/Path-1'), 'plain ascii/path-1');
  for (const s of TRICKY) assert.equal([...foldCase(s)].length, [...s].length, s);
});

test('foldCase is DuckDB\'s fold_case: a --project matched in SQL and one matched in TypeScript agree', async () => {
  const db = await (await loadDuckdb()).DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    await c.run(MACROS);
    for (const s of TRICKY) {
      const r = await c.runAndReadAll('SELECT fold_case($s) AS f', { s });
      assert.equal(r.getRowObjects()[0]!.f, foldCase(s), s);
    }
  } finally {
    c.closeSync();
    db.closeSync();
  }
});

test('foldCase does not depend on the machine\'s locale: under a Turkish locale I is still i', () => {
  const code = `import('${new URL('../../src/format/fold.ts', import.meta.url).href}').then((m) => process.stdout.write(m.foldCase('TITLE İ')))`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], { encoding: 'utf8', env: { ...process.env, LANG: 'tr_TR.UTF-8', LC_ALL: 'tr_TR.UTF-8' } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'title i');
});

test('--project matches a Greek project whatever sigma the filter or the path spells: σοφος finds ΣΟΦΟΣ, ΣΟΦΟΣ finds σοφος', () => {
  const dir = writeCorpus({
    'a/s1.jsonl': [assistant({ session: 's1', msg: 'm1', t: '2026-01-01T00:00:00Z', cwd: '/home/ΣΟΦΟΣ', u: { in: 10, out: 5 } })],
    'b/s2.jsonl': [assistant({ session: 's2', msg: 'm2', t: '2026-01-01T00:00:00Z', cwd: '/home/σοφος-app', u: { in: 10, out: 5 } })],
    'c/s3.jsonl': [assistant({ session: 's3', msg: 'm3', t: '2026-01-01T00:00:00Z', cwd: '/home/other', u: { in: 10, out: 5 } })],
  });
  for (const filter of ['σοφος', 'ΣΟΦΟΣ', 'σοφοσ', 'Σοφος']) {
    const j = summaryJson([dir], ['--project', filter]);
    assert.equal(j.totals.requests, 2, filter);
    assert.deepEqual(j.by_project.map((p: { project: string }) => p.project).sort(), ['/home/σοφος-app', '/home/ΣΟΦΟΣ'].sort(), filter);
  }
});

test('a channel\'s handles compare by the same fold: the agent @σοφοσ writes as ΣΟΦΟΣ, and @ΣΟΦΟΣ or @İstanbul mention it', () => {
  const msg = (id: string, author: string, text: string) => ({ id, author, text, created_at: '2026-01-01T00:00:00Z' });
  assert.ok(isAgentAuthor('ΣΟΦΟΣ', 'σοφοσ'));
  assert.ok(isAgentAuthor('σοφος', 'ΣΟΦΟΣ'));
  assert.ok(!isMention(msg('1', 'ΣΟΦΟΣ', 'as @σοφοσ I think'), '@σοφοσ'), 'the agent\'s own message');
  assert.ok(isMention(msg('2', 'maya', 'ping @ΣΟΦΟΣ'), '@σοφοσ'));
  assert.ok(isMention(msg('3', 'maya', 'ping @σοφος, please'), '@ΣΟΦΟΣ'));
  assert.ok(isMention(msg('4', 'maya', 'ping @İstanbul'), '@istanbul'));
  assert.ok(!isMention(msg('5', 'maya', 'ping @σοφοσbot'), '@σοφος'), 'still the whole handle');
});
