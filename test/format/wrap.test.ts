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

test('a word is never broken: a path, a file:line, an id wider than a line stands whole on a line of its own', () => {
  const path = '/tmp/cachelens-a-rather-long-directory/with/several/levels/of/names/report.html';
  const skipped = '  skipped bad_json: 1 (/tmp/logs/-home-user-a-rather-long-project-directory-name-here/d3ad0000-1111-2222-3333-444455556666.jsonl:138)';
  const chain = 'no chain 8463c716-a2ea-4c14-9efa-87158ebd9f20-and-a-long-tail in these logs';
  for (const width of [80, 40, 30, 12]) {
    for (const line of [`wrote ${path}`, skipped, chain]) {
      const out = wrapLine(line, width).split('\n');
      // each word of the line is a word of one line of the output, whole
      assert.deepEqual(words(out.join('\n')), words(line), `${width}: ${out.join('|')}`);
      for (const w of words(line)) assert.ok(out.some((l) => words(l).includes(w)), `${width}: ${w} broken: ${out.join('|')}`);
      // a line wider than the width holds one word (and its indent) only
      for (const l of out) if (visibleWidth(l) > width) assert.equal(words(l).length, 1, `${width}: ${l}`);
    }
  }
  assert.equal(wrapLine(`wrote ${path}`, 30), `wrote\n${path}`);
});

test('wrap(text, width, keep): a kept span (a path with spaces inside) is never broken at its own spaces', () => {
  const path = '/tmp/x/My Reports/the december cache report for the team.html';
  const text = `wrote ${path}\n(sections that failed and show an error card: headline, cost_over_time, models)`;
  for (const width of [80, 60, 40, 20]) {
    const out = wrap(text, width, [path]);
    assert.ok(out.split('\n').includes(path) || out.split('\n').includes(`wrote ${path}`), `${width}: ${out}`);
    assert.deepEqual(words(out), words(text));
    // the rest of the text is wrapped as ever
    assert.ok(out.split('\n').every((l) => l.includes(path) || visibleWidth(l) <= width), `${width}: ${out}`);
  }
  // a span the text does not hold changes nothing, and off a terminal nothing is wrapped
  assert.equal(wrap(text, 40, ['elsewhere with spaces']), wrap(text, 40));
  assert.equal(wrap(text, Infinity, [path]), text);
  // a text that already holds the private-use character keeps it
  const odd = `wrote \ue000 ${path}`;
  assert.equal(wrap(odd, 30, [path]).replace(/\n/g, ' '), odd);
});

test('a number stays with the word after it, and a lone operator with its neighbours, at every width', () => {
  const quality = 'Data quality: 18 files, 6,754 lines, 0 skipped, 747 duplicate usage lines removed, 0 <synthetic> lines ignored';
  const prefix = 'prefix 25,861 tokens (request 1: P 25,897 − 36 message tokens) · cl100k_base · thinking keep';
  const ping = 'Keepalive pings every 270 s on 5-minute chains (TTL 300 s), each 30 tokens in / 10 out; 673 gaps';
  const sum = 'the weight is 5 × 1.25 + 3 = 9.25 in all, with f* 39.5% of it';
  for (const width of [80, 60, 40, 30, 24]) {
    for (const text of [quality, prefix, ping, sum]) {
      const out = wrapLine(text, width);
      const lines = out.split('\n');
      assert.deepEqual(words(out), words(text));
      assert.ok(widest(out) <= width, `${width}: ${out}`);
      for (const [k, l] of lines.entries()) {
        if (k === lines.length - 1) break;
        // no line but the last ends in a bare number, a lone operator or a one-letter symbol
        assert.ok(!/(^| )(\p{N}([\p{N},.]*\p{N})?%?|[/−+=×]|P|f\*)$/u.test(l), `${width}: ${out}`);
      }
      for (const l of lines.slice(1)) assert.ok(!/^[/−+=×] /.test(l.trim()), `${width}: ${out}`);
    }
  }
  assert.equal(wrapLine(ping, 40), 'Keepalive pings every 270 s on 5-minute\nchains (TTL 300 s), each 30 tokens\nin / 10 out; 673 gaps');
});

test('a group held together that is wider than a line is broken between its words, never inside one', () => {
  const line = '1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 = 78';
  const out = wrapLine(line, 20);
  assert.ok(widest(out) <= 20, out);
  assert.deepEqual(words(out), words(line));
});

test('wide characters and emoji are never split, and count two columns', () => {
  const line = `項目 ${'漢字'.repeat(3)} 👨‍👩‍👧 done ${'漢字'.repeat(20)}`;
  for (const width of [9, 10, 11, 14]) {
    const out = wrapLine(line, width);
    // every word of the line is there whole, in order (no lone surrogate, no broken family)
    assert.deepEqual(words(out), words(line));
    assert.ok(out.includes('👨‍👩‍👧'), out);
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(out), 'no lone surrogate');
    for (const l of out.split('\n')) if (visibleWidth(l) > width) assert.equal(words(l).length, 1, `${width}: ${l}`);
  }
  assert.equal(wrapLine('項目 漢字漢字 done', 8), '項目\n漢字漢字\ndone');
});

test('escape sequences take no columns and are never split', () => {
  const bold = `\u001b[1m${'word '.repeat(12).trim()}\u001b[22m`;
  const out = wrapLine(bold, 20);
  assert.ok(widest(out) <= 20, out);
  assert.equal(out.split('\n').length, 3, out);
  assert.ok(out.startsWith('\u001b[1mword') && out.endsWith('word\u001b[22m'), JSON.stringify(out));
  // a word of escapes and text wider than a line is kept whole, its sequences with it
  const long = `\u001b[1m${'x'.repeat(30)}\u001b[22m`;
  assert.equal(wrapLine(long, 12), long);
  assert.equal(wrapLine(`a ${long} b`, 12), `a\n${long}\nb`);
});
