/**
 * fitTable() measures each choice of columns it tries (the width each column would take: with a
 * list's items, with their counts, with its ids and paths cut) instead of laying the table out again
 * per try. Its measure must be the layout's to the column: on many random tables (ids, paths, prose,
 * lists with and without nouns, totals rows whose label runs into blank cells, a totals column's rule,
 * wide characters) at many widths, the measured width of every choice of columns equals the laid-out
 * one, and the lines drawn take that many columns as a terminal draws them; and fitTable()'s text and
 * left-out columns equal those of fitTableByLayout(), which lays out every try in full, as fitTable did
 * before. One measurer per table across its choices of columns and widths, as fitTable() uses its
 * caches; of the widths at or above a table's natural width (nothing cut, one path) only the first.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Cell, type Column, displayWidth, fit, fitTable, fitTableByLayout, table as drawTable, tableMeasurer } from '../../src/format/table.js';
import { mulberry32 } from '../../src/samples/prng.js';

/** A small seeded generator: the same tables on every run. */
const random = mulberry32;

const WORDS = ['claude-opus-4-6', 'claude-haiku-4-5-20251001', 'total', 'growth', 'tool_result', '項目', 'été', '🚀 launch', 'a', '', 'x'.repeat(30)];

function table(rnd: () => number): { columns: Column[]; rows: Cell[][]; totals: number } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const int = (n: number) => Math.floor(rnd() * n);
  const n = 1 + int(7);
  const drops = [...Array(n).keys()].sort(() => rnd() - 0.5);
  const columns: Column[] = [...Array(n).keys()].map((i) => {
    const kind = i === 0 ? pick(['text', 'id'] as const) : pick(['num', 'text', 'id', 'prose', 'list', 'list'] as const);
    const c: Column = { header: pick(['session', 'project', 'weight', 'USD', 'causes', 'write 1h', '項目名', 'n', 'a much longer header']) };
    if (kind === 'num') c.align = 'num';
    if (kind === 'id') Object.assign(c, { cut: true }, rnd() < 0.3 ? { min: 4 + int(20) } : {});
    if (kind === 'prose') Object.assign(c, { cut: true, prose: true });
    if (kind === 'list') Object.assign(c, { list: true }, rnd() < 0.5 ? { noun: pick(['model', 'cause']) } : {});
    if (i > 0 && rnd() < 0.15) c.totals = true;
    if (i > 0 && rnd() < 0.7) c.drop = 1 + drops[i]!;
    if (rnd() < 0.1) c.whole = true;
    return c;
  });
  const cell = (c: Column): Cell => {
    if (rnd() < 0.1) return rnd() < 0.5 ? null : '';
    if (c.align === 'num') return rnd() < 0.8 ? Math.round((rnd() - 0.2) * 10 ** int(10)) : `$${(rnd() * 100).toFixed(2)}`;
    if (c.list) return [...Array(int(5)).keys()].map(() => pick(WORDS) || 'm');
    if (c.prose) return 'weight and USD by day, project, model or agent type '.repeat(1 + int(3)).slice(0, 10 + int(120));
    if (c.cut) return rnd() < 0.5 ? `/home/user/projects/${'deep/'.repeat(int(12))}${pick(WORDS)}` : `${int(1e9).toString(16)}-${pick(WORDS)}-${int(1e6)}`;
    return pick(WORDS);
  };
  const body = [...Array(int(8)).keys()].map(() => columns.map(cell));
  const totals = int(3);
  // a totals row's label may run into the blank cells after it: `total (all 8 sessions)`
  const foot = [...Array(totals).keys()].map(() => columns.map((c, i) => (i === 0 ? pick(['total', `total (all ${int(5000)} sessions)`, 'total of every chain in every project read']) : rnd() < 0.5 ? '' : cell(c))));
  return { columns, rows: [...body, ...foot], totals };
}

const subsets = (n: number): number[][] => {
  const out: number[][] = [];
  for (let m = 1; m < 1 << n; m++) out.push([...Array(n).keys()].filter((i) => m & (1 << i)));
  return out;
};

/**
 * The columns a terminal draws `s` in, measured apart from displayWidth() (whose measure is what is
 * checked): grapheme by grapheme, 2 for a Han character or an emoji, 0 for one that is only default
 * ignorable characters, else 1. Enough for the text of these tables (WORDS, their headers, '…', rules).
 */
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const ONE_COLUMN = /^[\x20-\x7e─┼│…]*$/;
const WIDE = /\p{Extended_Pictographic}|\p{Script=Han}/u;
const IGNORABLE = /^\p{Default_Ignorable_Code_Point}+$/u;
function drawnWidth(s: string): number {
  // printable ASCII, rules and '…': a column each (most lines)
  if (ONE_COLUMN.test(s)) return s.length;
  let w = 0;
  for (const { segment } of graphemes.segment(s)) w += WIDE.test(segment) ? 2 : IGNORABLE.test(segment) ? 0 : 1;
  return w;
}

test('the measured width of every choice of columns is the laid-out width and the drawn one, at every width and way of counting lists', () => {
  const rnd = random(20261207);
  let cut = 0;
  let checked = 0;
  for (let t = 0; t < 150; t++) {
    const { columns, rows, totals } = table(rnd);
    const measure = tableMeasurer(columns, rows, totals);
    for (const kept of subsets(columns.length).filter(() => rnd() < 0.5)) {
      const whole = measure(kept, Infinity).laidOut;
      let uncut = false;
      for (const width of [8, 20, 30, 40, 50, 60, 80, 100, 120, 200].filter(() => rnd() < 0.5)) {
        // at or above the natural width nothing is cut: one such width is enough
        if (width >= whole && uncut) continue;
        uncut ||= width >= whole;
        // counts: true takes the path of undefined (lists may be counted); false keeps their items
        for (const counts of [undefined, false]) {
          const { measured, laidOut, lines } = measure(kept, width, counts);
          const at = () => JSON.stringify({ columns, rows, totals, kept, width, counts });
          // the message made only on a failure: made for every check it took most of the test's time
          if (measured !== laidOut) assert.equal(measured, laidOut, at());
          const drawn = Math.max(...lines.map(drawnWidth));
          if (drawn !== laidOut) assert.equal(drawn, laidOut, `${at()}\n${lines.join('\n')}`);
          checked++;
          if (laidOut < whole) cut++;
        }
      }
    }
  }
  // the tables are cut often enough to measure something
  assert.ok(cut > 10000 && checked > 15000, `${cut} ${checked}`);
});

test('fitTable() leaves out and puts back the same columns, with the same text, as laying every try out in full', () => {
  const rnd = random(7);
  let left = 0;
  let counted = 0;
  for (let t = 0; t < 400; t++) {
    const { columns, rows, totals } = table(rnd);
    const title = (l: readonly string[]) => `a title naming ${l.length} left out`;
    const whole = Math.max(...drawTable(columns, rows, { width: Infinity, totals }).split('\n').map(displayWidth));
    let uncut = false;
    for (let width = 10; width <= 160; width += 1 + Math.floor(rnd() * 16)) {
      // at or above the natural width the table is laid out once, as it is: one such width is enough
      if (width >= whole && uncut) continue;
      uncut ||= width >= whole;
      const opts = { width, totals, title, wide: false };
      const fast = fitTable(columns, rows, opts);
      const slow = fitTableByLayout(columns, rows, opts);
      if (fast.text !== slow.text || fast.left.join('\n') !== slow.left.join('\n')) assert.deepEqual(fast, slow, JSON.stringify({ columns, rows, totals, width }));
      if (fast.left.length > 0) left++;
      if (/\b\d+ (models?|causes?)\b/.test(fast.text)) counted++;
    }
  }
  // both ways of fitting are reached: columns left out, lists shown by their count
  assert.ok(left > 1000 && counted > 30, `${left} ${counted}`);
});

/** fit() as it cut every text before: grapheme by grapheme, each measured. */
function fitByGraphemes(s: string, max: number): string {
  if (s.length <= max / 2 || displayWidth(s) <= max) return s;
  const chars = Array.from(new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(s), (g) => g.segment);
  const take = (from: number, step: number, room: number): number => {
    let i = from;
    for (let w = 0; i >= 0 && i < chars.length; i += step) {
      w += displayWidth(chars[i]!);
      if (w > room) break;
    }
    return i;
  };
  const head = take(0, 1, Math.ceil((max - 1) / 2));
  const tail = take(chars.length - 1, -1, max - 1 - Math.ceil((max - 1) / 2));
  return `${chars.slice(0, head).join('')}…${chars.slice(tail + 1).join('')}`;
}

test('fit() cuts a text of one-column characters by index as it cuts it grapheme by grapheme', () => {
  const rnd = random(3);
  const chars = ['a', 'b', '/', '-', '.', ' ', 'é', 'ÿ', '\u00ad', '\u02b0', 'Ł', '\r\n', '\u0301', '項'];
  let cut = 0;
  for (let t = 0; t < 5000; t++) {
    // mostly one-column characters; now and then one that is not (CR LF, a combining accent, a wide one)
    const s = [...Array(Math.floor(rnd() * 60))].map(() => chars[Math.floor(rnd() * (rnd() < 0.9 ? 11 : chars.length))]).join('');
    const max = Math.floor(rnd() * 40);
    assert.equal(fit(s, max), fitByGraphemes(s, max), JSON.stringify({ s, max }));
    if (fit(s, max) !== s) cut++;
  }
  assert.ok(cut > 1000, `${cut}`);
});
