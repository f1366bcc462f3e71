/**
 * Tables that fit the terminal: on a TTY of known width (table()'s `width`, by default
 * terminalWidth() of stdout) a wider table cuts its text columns with fit(), widest first, each to
 * a floor (MIN_FIT_WIDTH, Column.min, its header), never a number or a `whole` column; off a TTY
 * nothing changes. A list column (Column.list) is shortened to whole items and a count of the rest
 * (fitList), or to the number of its items. And a totals row's label runs into the blank cells to
 * its right instead of widening its column.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Cell, type Column, displayWidth, fitList, listCount, MIN_FIT_WIDTH, shrinkWidths, table, terminalWidth } from '../../src/format/table.js';

const ID = '4d5611e5-241a-462a-8d15-5122611a9569:side:f4ab2bf6-d642-431a-85cb-66691f24c404';
const PATH = '/home/USER/projects/spotter-worktrees/spotter-fum';
const COLS: Column[] = [{ header: 'chain', cut: true }, { header: 'project', cut: true }, { header: 'requests', align: 'num' }, { header: 'weight', align: 'num' }];
const ROWS: Cell[][] = [
  [ID, PATH, 143, 2_299_039],
  ['ae4a77f8-aedd-4bc1-888f-c94edc91af04', '/app', 12, 1_234_567_890],
];

const widest = (text: string) => Math.max(...text.split('\n').map(displayWidth));
/** Column k of each line, the lines split on runs of two spaces or more (no cell here holds two). */
const column = (text: string, k: number) => text.split('\n').map((l) => l.split(/ {2,}/)[k]);

test('a table wider than the width given cuts its text columns to fit it, numbers whole', () => {
  const full = table(COLS, ROWS, { width: Infinity });
  const natural = widest(full);
  assert.ok(natural > 100, `${natural}`);
  const cut = table(COLS, ROWS, { width: 80 });
  assert.equal(widest(cut), 80);
  // every number as it was, right-aligned at the line's end
  for (const n of ['143', '2,299,039', '12', '1,234,567,890']) assert.ok(cut.includes(n), n);
  const lines = cut.split('\n');
  assert.equal(new Set([lines[0], ...lines.slice(2)].map(displayWidth)).size, 1, 'the rows end in one column');
  // the id keeps its start (a prefix --session takes) and its end, cut in the middle
  const shown = column(cut, 0)[2]!;
  assert.ok(shown.includes('…'), shown);
  assert.ok(ID.startsWith(shown.slice(0, shown.indexOf('…'))));
  assert.ok(shown.indexOf('…') >= 8, shown);
  assert.ok(ID.endsWith(shown.slice(shown.indexOf('…') + 1)));
});

test('widest first: the widest text column is cut down to the next before that one is cut', () => {
  // 80 + 2 + 49 + 2 + 8 + 2 + 13 = 156 columns; at 130, the chain column alone gives the 26
  const cut = table(COLS, ROWS, { width: 130 });
  assert.equal(widest(cut), 130);
  assert.equal(column(cut, 1)[2], PATH, 'the project column is whole');
  assert.equal(displayWidth(column(cut, 0)[2]!), 80 - 26);
  // at 100 both are cut, to within a column of each other
  const both = table(COLS, ROWS, { width: 100 });
  assert.equal(widest(both), 100);
  const [a, b] = [displayWidth(column(both, 0)[2]!), displayWidth(column(both, 1)[2]!)];
  assert.ok(Math.abs(a - b) <= 1, `${a} ${b}`);
  assert.equal(shrinkWidths([{ header: 'a', cut: true }, { header: 'b', cut: true }], [40, 39], 60).reduce((s, w) => s + w, 2), 60);
});

test('a text column is cut to its floor at the least, and a table that does not fit then is as wide as it must be', () => {
  const cut = table(COLS, ROWS, { width: 40 });
  // chain and project at MIN_FIT_WIDTH, the numbers whole: wider than 40
  assert.equal(widest(cut), MIN_FIT_WIDTH * 2 + 2 + 8 + 2 + 13 + 2);
  assert.equal(displayWidth(column(cut, 0)[2]!), MIN_FIT_WIDTH);
  // the id's first 8 characters (sessions' short id) stay
  assert.ok(column(cut, 0)[2]!.startsWith(ID.slice(0, 8)));
  // a column shorter than the floor is not cut; Column.min sets the floor; Infinity: never cut; text
  // that is no id or path (no Column.cut: a model, a time, a label) is never cut
  assert.deepEqual(
    shrinkWidths([{ header: 'a', cut: true }, { header: 'b', cut: true, min: 30 }, { header: 'c', cut: true, min: Infinity }, { header: 'n', align: 'num' }, { header: 'model' }], [10, 50, 50, 20, 25], 1),
    [10, 30, 50, 20, 25],
  );
  // a header wider than the floor is its floor: it stays whole
  const header = 'a header of 24 columns..';
  assert.deepEqual(shrinkWidths([{ header, cut: true }], [100], 1), [24]);
  const t = table([{ header, cut: true }, { header: 'n', align: 'num' }], [['x'.repeat(100), 1]], { width: 1 });
  assert.ok(t.startsWith(header));
});

test('whole columns and number columns are never cut', () => {
  const list = 'claude-haiku-4-5-20251001, claude-opus-4-6, claude-sonnet-4-5-20250929';
  const cols: Column[] = [{ header: 'day' }, { header: 'models', whole: true }, { header: 'n', align: 'num' }];
  const t = table(cols, [['2026-02-12', list, 123_456_789]], { width: 30 });
  assert.ok(t.includes(list));
  assert.ok(t.includes('123,456,789'));
  assert.deepEqual(shrinkWidths(cols, [10, 70, 11], 30), [10, 70, 11]);
});

test('a table that fits, or has no width, is the same as without one', () => {
  const full = table(COLS, ROWS, { width: Infinity });
  assert.equal(table(COLS, ROWS, { width: widest(full) }), full);
  assert.equal(table(COLS, ROWS, { width: 1000 }), full);
  assert.ok(full.includes(ID) && full.includes(PATH));
});

test('without a width, a table takes stdout\'s: none off a terminal, the terminal\'s on one', () => {
  const full = table(COLS, ROWS, { width: Infinity });
  const stdout = process.stdout as { isTTY?: boolean; columns?: number };
  const was = { isTTY: Object.getOwnPropertyDescriptor(stdout, 'isTTY'), columns: Object.getOwnPropertyDescriptor(stdout, 'columns') };
  const as = (isTTY: boolean, columns: number) => {
    Object.defineProperty(stdout, 'isTTY', { value: isTTY, configurable: true, writable: true });
    Object.defineProperty(stdout, 'columns', { value: columns, configurable: true, writable: true });
  };
  const columns = process.env.COLUMNS;
  try {
    // a shell's exported COLUMNS would stand for the terminal's width
    delete process.env.COLUMNS;
    // a pipe or a file: no limit
    as(false, 80);
    assert.equal(terminalWidth(), Infinity);
    assert.equal(table(COLS, ROWS), full);
    as(true, 80);
    assert.equal(terminalWidth(process.stdout, {}), 80);
    assert.equal(table(COLS, ROWS), table(COLS, ROWS, { width: terminalWidth() }));
    assert.notEqual(table(COLS, ROWS), full);
  } finally {
    if (columns !== undefined) process.env.COLUMNS = columns;
    for (const [k, d] of Object.entries(was)) {
      if (d) Object.defineProperty(stdout, k, d);
      else delete (stdout as Record<string, unknown>)[k];
    }
  }
});

test('terminalWidth: the terminal\'s columns, COLUMNS over them on a terminal only, else no limit', () => {
  const tty = { isTTY: true, columns: 100 };
  assert.equal(terminalWidth(tty, {}), 100);
  assert.equal(terminalWidth(tty, { COLUMNS: '400' }), 400);
  assert.equal(terminalWidth(tty, { COLUMNS: ' 60 ' }), 60);
  // not a width: the terminal's
  for (const COLUMNS of ['', '0', '-5', 'wide', '80x', '1e3']) assert.equal(terminalWidth(tty, { COLUMNS }), 100, COLUMNS);
  assert.equal(terminalWidth({ isTTY: true }, {}), Infinity);
  assert.equal(terminalWidth({ isTTY: true, columns: 0 }, { COLUMNS: '90' }), 90);
  // a pipe or a file: no limit, COLUMNS or not
  assert.equal(terminalWidth({ isTTY: false, columns: 80 }, { COLUMNS: '80' }), Infinity);
  assert.equal(terminalWidth({}, {}), Infinity);
});

test('a totals row\'s label runs into the blank cells to its right; the widths are the other rows\'', () => {
  const cols: Column[] = [{ header: 'session' }, { header: 'project', cut: true }, { header: 'requests', align: 'num' }];
  const rows: Cell[][] = [
    ['8463c716', '/app', 157],
    ['4d5611e5', '/home/u/projects/x', 1_152],
    ['total (all 8 sessions)', '', 4_309],
  ];
  const t = table(cols, rows, { totals: 1 });
  const lines = t.split('\n');
  // the session column as wide as its header and ids: 'session' + 2 spaces + 'project' ...
  assert.equal(lines[0]!.indexOf('project'), 'session '.length + 2);
  assert.equal(lines[2]!.indexOf('/app'), 8 + 2);
  const label = lines.at(-1)!;
  assert.ok(label.startsWith('total (all 8 sessions)'));
  // the numbers end in one column, the rules span the table
  assert.equal(new Set(lines.filter((l) => /\d$/.test(l)).map(displayWidth)).size, 1);
  assert.equal(displayWidth(lines[1]!), displayWidth(label));
  assert.equal(displayWidth(lines.at(-2)!), displayWidth(label));
  assert.match(lines.at(-2)!, /^─+$/);
  // with a cell to its right the label widens its column, as before
  const full = table(cols, [rows[0]!, rows[1]!, ['total (all 8 sessions)', '/x', 4_309]], { totals: 1 });
  assert.equal(full.split('\n')[0]!.indexOf('project'), 'total (all 8 sessions)'.length + 2);
  // longer than its column and the blank ones: its column is widened by what is left over, no more
  const long = 'a totals label longer than both columns';
  const over = table(cols, [rows[0]!, rows[1]!, [long, '', 1]], { totals: 1 }).split('\n');
  assert.ok(over.at(-1)!.startsWith(long + '  '));
  assert.equal(displayWidth(over.at(-1)!), long.length + 2 + 'requests'.length);
  // never across a totals column's rule
  const ruled = table([{ header: 'k' }, { header: 'a', align: 'num' }, { header: 'all', align: 'num', totals: true }], [['x', 1, 1], ['total label', null, 1]], { totals: 1 }).split('\n');
  assert.equal(ruled[0], 'k         a │ all');
  assert.equal(ruled.at(-1), 'total label │   1');
});

test('a table cut to its width cuts an overflowing label to the room it runs into', () => {
  const cols: Column[] = [{ header: 'session' }, { header: 'project', cut: true }, { header: 'requests', align: 'num' }];
  const label = `total (all ${'8'.repeat(60)} sessions)`;
  const rows: Cell[][] = [['8463c716', PATH, 157], [label, '', 4_309]];
  const t = table(cols, rows, { totals: 1, width: 60 }).split('\n');
  assert.ok(t.every((l) => displayWidth(l) <= 60), t.join('\n'));
  assert.equal(displayWidth(t.at(-1)!), 60);
  assert.ok(t.at(-1)!.startsWith('total (all 8'));
  assert.ok(t.at(-1)!.includes('…'));
  assert.ok(t.at(-1)!.endsWith('4,309'));
});

test('fitList: whole items as many as fit, then +N for the rest; the first item whatever its width', () => {
  const models = ['claude-haiku-4-5-20251001', 'claude-opus-4-6', 'claude-sonnet-4-5-20250929'];
  assert.equal(fitList(models, 200), models.join(', '));
  assert.equal(fitList(models, 45), 'claude-haiku-4-5-20251001, claude-opus-4-6 +1');
  assert.equal(fitList(models, 44), 'claude-haiku-4-5-20251001 +2');
  assert.equal(fitList(models, 5), 'claude-haiku-4-5-20251001 +2');
  assert.equal(fitList(['claude-opus-4-6'], 5), 'claude-opus-4-6');
  assert.equal(fitList([], 5), '');
  // with its count: the count when not even the first item fits with the count of the rest
  assert.equal(fitList(models, 30, '3 models'), 'claude-haiku-4-5-20251001 +2');
  assert.equal(fitList(models, 27, '3 models'), '3 models');
  assert.equal(fitList(['claude-opus-4-6'], 15, '1 model'), 'claude-opus-4-6');
  assert.equal(fitList(['claude-opus-4-6'], 14, '1 model'), '1 model');
  assert.equal(listCount(3, 'model'), '3 models');
  assert.equal(listCount(1, 'model'), '1 model');
  assert.equal(listCount(3), '3');
  assert.equal(listCount(0, 'model'), '');
});

test('a table\'s list column is shortened on a narrow terminal: whole items and +N; too narrow for that, the count; whole off a terminal', () => {
  const cols: Column[] = [{ header: 'start' }, { header: 'requests', align: 'num' }, { header: 'models', list: true }];
  const rows: Cell[][] = [
    ['2026-02-12 14:00', 251, ['claude-haiku-4-5-20251001', 'claude-opus-4-6', 'claude-sonnet-4-5-20250929']],
    ['2026-02-12 20:00', 122, ['claude-opus-4-6']],
    ['total', 373, ''],
  ];
  const whole = table(cols, rows, { width: Infinity });
  assert.ok(whole.includes('claude-haiku-4-5-20251001, claude-opus-4-6, claude-sonnet-4-5-20250929'), whole);
  const at = (width: number) => table(cols, rows, { width, totals: 1 });
  // 28 columns before the list: 50 leave it 22 (no names, a count), 60 leave it 32, 80 leave it 52
  const shortened = at(80);
  assert.ok(displayWidth(shortened.split('\n')[2]!) <= 80, shortened);
  assert.match(shortened, /claude-haiku-4-5-20251001, claude-opus-4-6 \+1$/m);
  assert.match(at(60), /claude-haiku-4-5-20251001 \+2$/m);
  assert.match(at(60), /claude-opus-4-6$/m);
  // 50 leave the list 22: the row of one short model shows it, the row whose first model does not fit its count
  const counted = at(50);
  assert.ok(Math.max(...counted.split('\n').map(displayWidth)) <= 50, counted);
  assert.match(counted, / 251 {2}3$/m);
  assert.match(counted, / 122 {2}claude-opus-4-6$/m);
  // 40 leave it 12: no name fits, every row its count (the header says what of)
  const numbers = at(40);
  assert.ok(Math.max(...numbers.split('\n').map(displayWidth)) <= 40, numbers);
  assert.match(numbers, / 251 {2}3$/m);
  assert.match(numbers, / 122 {2}1$/m);
  assert.ok(!numbers.includes('claude'), numbers);
  // no model name is ever cut
  for (const t of [shortened, at(60), counted, numbers]) assert.ok(!t.includes('…'), t);
  // a table too wide for its other columns anyway (30 < 28 + 2 + the header 'models') keeps its first models and counts
  const over = at(30);
  assert.match(over, /claude-haiku-4-5-20251001 \+2$/m);
  assert.match(over, /claude-opus-4-6$/m);
  // the items are cleaned as any cell is
  assert.ok(table(cols, [['x', 1, ['a\u001b[2Jb']]], { width: Infinity }).includes('a?[2Jb'));
});

test('one wide row of a list column does not make every row a count: each row its whole items and +N, a count only where not one fits', () => {
  const cols: Column[] = [{ header: 'start' }, { header: 'requests', align: 'num' }, { header: 'models', list: true, noun: 'model' }];
  const rows: Cell[][] = [
    ['2026-02-11 21:00', 157, ['claude-haiku-4-5-20251001', 'claude-opus-4-6']],
    ['2026-02-12 14:00', 251, ['claude-haiku-4-5-20251001', 'claude-opus-4-6', 'claude-sonnet-4-5-20250929']],
    ['2025-06-08 11:00', 62, ['claude-sonnet-4-20250514']],
    ['2026-02-12 20:00', 122, ['claude-opus-4-6']],
  ];
  // 28 columns before the list: 54 leave it 26, room for the 24-character model but not for the haiku's +N
  const out = table(cols, rows, { width: 54 });
  const cells = out.split('\n').slice(2).map((l) => l.slice(28));
  assert.deepEqual(cells, ['2 models', '3 models', 'claude-sonnet-4-20250514', 'claude-opus-4-6']);
  // the column as wide as its widest cell, not the 26 columns it had
  assert.equal(out.split('\n')[1]!.split('  ').at(-1), '─'.repeat(24));
  // 58 leave it 30: the haiku and +N where the whole list does not fit
  const wider = table(cols, rows, { width: 58 }).split('\n').slice(2).map((l) => l.slice(28));
  assert.deepEqual(wider, ['claude-haiku-4-5-20251001 +1', 'claude-haiku-4-5-20251001 +2', 'claude-sonnet-4-20250514', 'claude-opus-4-6']);
  // a list without a noun counts with the number alone
  const bare = table(cols.map((c) => ({ ...c, noun: undefined })), rows, { width: 54 }).split('\n').slice(2).map((l) => l.slice(28));
  assert.deepEqual(bare.slice(0, 2), ['2', '3']);
});
