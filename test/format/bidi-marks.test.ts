import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clean, cleanKeepingLines, jsonText } from '../../src/format/table.js';
import { assistant, cli, writeCorpus } from '../helpers/corpus.js';

/** Every Bidi_Control character: the implicit marks (ALM, LRM, RLM) too, not only embeddings, overrides and isolates. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

test('clean, cleanKeepingLines and jsonText treat the bidi marks (ALM, LRM, RLM) as bidi controls', () => {
  assert.equal(clean('a\u200fb\u061cc\u200ed'), 'a?b?c?d');
  assert.equal(cleanKeepingLines('a\u200f\nb\u061c'), 'a?\nb?');
  const value = ['p\u200f\u061c\u200e'];
  const text = jsonText(value);
  assert.deepEqual(JSON.parse(text), value);
  assert.doesNotMatch(text, BIDI);
});

test('sessions and crosstab tables and --json carry no bidi mark from a transcript', () => {
  const cwd = '/home/\u200fevil\u061c\u200e';
  const dir = writeCorpus({ 'p/s1.jsonl': [assistant({ session: 's1', msg: 'm1', t: '2026-01-01T00:00:00Z', cwd, u: { in: 10, out: 5 } })] });
  for (const args of [['sessions'], ['crosstab', '--rows', 'project', '--cols', 'kind']]) {
    for (const json of [[], ['--json']]) {
      const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC', ...json]);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, BIDI, `${args[0]} ${json.join('')}`);
      if (json.length) assert.ok(JSON.stringify(JSON.parse(r.stdout)).includes(cwd), 'the path survives as data');
      else assert.match(r.stdout, /\/home\/\?evil\?\?/);
    }
  }
});
