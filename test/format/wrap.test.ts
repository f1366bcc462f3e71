/**
 * Lines of text outside tables wrapped to a terminal's width (format/wrap.ts): at word boundaries,
 * with a hanging indent of the line's own indent, never cut, never inside an escape sequence or a
 * wide character; off a terminal (Infinity) byte for byte as given.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { displayWidth } from '../../src/format/table.js';
import { visibleWidth, wrap, wrapLine } from '../../src/format/wrap.js';

const NOTE =
  '% subagent wt: net saving on subagent chains over their weight (1,199,824 wt); % all wt: net saving over all weight (8,734,584 wt, $33.91); best budget: the largest net USD';
const words = (s: string) => s.split(/\s+/).filter(Boolean);
const widest = (text: string) => Math.max(...text.split('\n').map(visibleWidth));

test('a line wider than the width is broken at spaces, no line wider than it, every word kept whole and in order', () => {
  for (const width of [80, 60, 40, 24]) {
    const out = wrap(NOTE, width);
    assert.ok(out.split('\n').length > 1, out);
    assert.ok(widest(out) <= width, `${width}: ${out}`);
    assert.deepEqual(words(out), words(NOTE));
    // no line begins or ends with a space
    for (const l of out.split('\n')) assert.equal(l, l.trim(), JSON.stringify(l));
    // a lone '%' begins its term ('% all wt'), it does not end a line
    assert.ok(!out.split('\n').some((l) => l.endsWith(' %')), out);
  }
});

test('off a terminal (width Infinity) and for lines that fit, the text is returned as it is', () => {
  const text = `${NOTE}\n  indented   with  runs  \n\nshort`;
  assert.equal(wrap(text, Infinity), text);
  assert.equal(wrap('short line\n  also short  ', 80), 'short line\n  also short  ');
});

test('continuation lines hang at the line\'s own indent', () => {
  const line = '  skipped bad_json: 3 (p/a.jsonl:1, p/b.jsonl:2, p/c.jsonl:3, p/d.jsonl:4)';
  const out = wrapLine(line, 30).split('\n');
  assert.ok(out.length > 2, out.join('\n'));
  for (const l of out) {
    assert.ok(l.startsWith('  ') && !l.startsWith('   '), JSON.stringify(l));
    assert.ok(displayWidth(l) <= 30, l);
  }
  assert.deepEqual(words(out.join(' ')), words(line));
});

test('fields set apart by two spaces are broken between fields, not inside one', () => {
  const line = 'cold 29,605  growth 208,364  expiry 164,815  break 76,753 (1 event)  hit ratio 96.0%  waste 277,803 wt';
  const out = wrapLine(line, 50).split('\n');
  assert.deepEqual(out, ['cold 29,605  growth 208,364  expiry 164,815', 'break 76,753 (1 event)  hit ratio 96.0%', 'waste 277,803 wt']);
});

test('a lone mark (·, —, →) ends its line rather than beginning the next', () => {
  const out = wrapLine('Session replay · chain 8463c716-a2ea-4c14-9efa-87158ebd9f20 (main) · 143 requests · 2 rounds', 40);
  for (const l of out.split('\n')) assert.ok(!l.startsWith('·'), out);
  assert.ok(widest(out) <= 40, out);
});

test('a word wider than a line is broken, after a / where it can be, never cut: every character stays', () => {
  const path = '/tmp/cachelens-a-rather-long-directory/with/several/levels/of/names/report.html';
  const out = wrapLine(`wrote ${path}`, 30);
  assert.ok(widest(out) <= 30, out);
  // the path begins on the first line, after 'wrote '
  assert.ok(out.startsWith('wrote /tmp/'), out);
  assert.equal(out.replace(/\n/g, ''), `wrote ${path}`);
  // each piece but the last ends after a / or a -, where the path would be read as breaking
  const pieces = out.split('\n').slice(0, -1);
  for (const p of pieces) assert.ok(p.endsWith('/') || p.endsWith('-'), out);
});

test('wide characters and emoji are never split, and count two columns', () => {
  const line = `項目 ${'漢字'.repeat(20)} 👨‍👩‍👧 done`;
  for (const width of [9, 10, 11]) {
    const out = wrapLine(line, width);
    assert.ok(widest(out) <= width, `${width}: ${out}`);
    // every character of the line is there, in order, none split (no lone surrogate, no broken family)
    assert.equal(out.replace(/[\n ]/g, ''), line.replace(/ /g, ''));
    assert.ok(out.includes('👨‍👩‍👧'), out);
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(out), 'no lone surrogate');
  }
});

test('escape sequences take no columns and are never split', () => {
  const bold = `\u001b[1m${'word '.repeat(12).trim()}\u001b[22m`;
  const out = wrapLine(bold, 20);
  assert.ok(widest(out) <= 20, out);
  assert.equal(out.split('\n').length, 3, out);
  assert.ok(out.startsWith('\u001b[1mword') && out.endsWith('word\u001b[22m'), JSON.stringify(out));
  // a word of escapes and text wider than a line keeps each sequence whole
  const long = `\u001b[1m${'x'.repeat(30)}\u001b[22m`;
  const pieces = wrapLine(long, 12).split('\n');
  assert.ok(pieces.length === 3, pieces.join('|'));
  assert.equal(pieces.join(''), long);
  assert.ok(pieces[0]!.startsWith('\u001b[1m') && pieces.at(-1)!.endsWith('\u001b[22m'));
});
