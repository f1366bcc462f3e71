/** Invisible characters (zero-width, joiners, variation selectors, tags) in transcript text: '?' in tables and the report, escapes in JSON. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clean, cleanKeepingLines, displayWidth, jsonText, table } from '../../src/format/table.js';
import { assistant, cli, writeCorpus } from '../helpers/corpus.js';

/** The invisible characters the brief's spoofs use: ZWSP, word joiner, BOM, Mongolian vowel separator, soft hyphen, Hangul filler, a tag letter. */
const INVISIBLE = ['\u200b', '\u2060', '\ufeff', '\u180e', '\u00ad', '\u3164', '\u{E0041}'];
const RAW_INVISIBLE = /[\u00ad\u180e\u200b-\u200d\u2060-\u2064\u3164\ufeff]|\u{E0041}/u;

test('clean shows each invisible character as ?: plan\\u200bner is not the agent type planner', () => {
  for (const ch of INVISIBLE) assert.equal(clean(`plan${ch}ner`), 'plan?ner', JSON.stringify(ch));
  assert.equal(clean('\u200b'), '?');
  assert.equal(cleanKeepingLines('a\u200bb\r\nc\ufeff'), 'a?b\r\nc?');
  // a joiner between Latin or Greek letters, or alone, joins nothing a reader can see
  assert.equal(clean('plan\u200dner'), 'plan?ner');
  assert.equal(clean('σοφ\u200cος'), 'σοφ?ος');
  assert.equal(clean('\u200dx'), '?x');
});

test('clean keeps what an emoji or a script draws with them: ZWJ sequences, one variation selector, a flag\'s tags, Persian ZWNJ, a Devanagari ZWJ', () => {
  for (const kept of [
    '👩\u200d🚀', // woman astronaut
    '🧑🏽\u200d🚀', // with a skin tone
    '🏳\ufe0f\u200d🌈', // rainbow flag: VS16 then ZWJ
    '❤\ufe0f', // emoji form of a text character
    '1\ufe0f\u20e3', // keycap
    '漢\u{E0100}', // an ideographic variation sequence
    '🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}', // Scotland
    'می\u200cخواهم', // Persian: the ZWNJ keeps the letters apart
    'क्\u200dष', // Devanagari: ZWJ after a virama
  ]) assert.equal(clean(kept), kept, JSON.stringify(kept));
  // a run of selectors after one emoji carries text nobody sees: only the first is its form
  assert.equal(clean('😀\ufe0f\ufe0f\ufe0f'), '😀\ufe0f??');
  assert.equal(clean('a\ufe0f'), 'a?');
  assert.equal(clean('a+\ufe0fb 1\ufe0f'), 'a+?b 1?', 'of ASCII only a keycap\'s digit takes one');
  // tag letters outside a flag are ASCII smuggled out of sight
  assert.equal(clean('ok\u{E0068}\u{E0069}'), 'ok??');
  assert.equal(clean('🏴\u{E0068}'), '🏴?', 'a flag without its cancel tag');
});

test('jsonText writes the invisible characters clean replaces as \\u escapes, the same value; emoji sequences stay as they are', () => {
  const value = { agent: 'plan\u200bner', path: '/w/\u2060x\ufeff\u00ad\u180e\u3164', tag: 'x\u{E0041}', emoji: '👩\u200d🚀❤\ufe0f' };
  const text = jsonText(value, 2);
  assert.deepEqual(JSON.parse(text), value);
  assert.doesNotMatch(text.replace('👩\u200d🚀', ''), RAW_INVISIBLE);
  assert.ok(text.includes('"plan\\u200bner"'));
  assert.ok(text.includes('"x\\udb40\\udc41"'), 'a tag letter as its surrogate pair');
  assert.ok(text.includes('"👩\u200d🚀❤\ufe0f"'));
});

test('a table\'s columns are as wide as what it shows: an invisible character is a ? of one column, in a cell and in a header', () => {
  const text = table([{ header: 'agent\u200b' }, { header: 'n', align: 'num' }], [['plan\u200bner', 1], ['planner', 22], ['🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}', 3]]);
  const lines = text.split('\n');
  assert.deepEqual(lines.slice(0, 4), ['agent?     n', '────────  ──', 'plan?ner   1', 'planner   22']);
  assert.equal(displayWidth(lines[4]!), displayWidth(lines[3]!), 'a flag\'s tags take no column');
});

test('sessions and crosstab tables show a zero-width space in a project as ?, --json keeps it as an escape', () => {
  const cwd = '/home/plan\u200bner\u2060';
  const dir = writeCorpus({ 'p/s1.jsonl': [assistant({ session: 's1', msg: 'm1', t: '2026-01-01T00:00:00Z', cwd, u: { in: 10, out: 5 } })] });
  for (const args of [['sessions'], ['crosstab', '--rows', 'project', '--cols', 'kind']]) {
    for (const json of [[], ['--json']]) {
      const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC', ...json]);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, RAW_INVISIBLE, `${args[0]} ${json.join('')}`);
      if (json.length) assert.ok(JSON.stringify(JSON.parse(r.stdout)).includes(cwd), 'the path survives as data');
      else assert.match(r.stdout, /\/home\/plan\?ner\?/);
    }
  }
});
