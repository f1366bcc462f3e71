/**
 * Tables too wide for their terminal even with their ids, paths and free text cut as far as they go
 * leave out their columns of least weight (Column.drop), lowest first, and say which under the
 * table; the columns without a `drop` (the identifying one, weight, USD) always stay. `wide` (the
 * CLI's --wide) and a width of Infinity (a pipe) leave none out. Every width here is given, so the
 * output does not depend on the terminal the tests run in.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Cell, type Column, displayWidth, fitEnd, fitTable, leftOutNote, table } from '../../src/format/table.js';

const COLS: Column[] = [
  { header: 'model' },
  { header: 'requests', align: 'num', drop: 4 },
  { header: 'input', align: 'num', drop: 1 },
  { header: 'output', align: 'num', drop: 2 },
  { header: 'read', align: 'num', drop: 3 },
  { header: 'weight', align: 'num' },
  { header: 'USD', align: 'num' },
];
const ROWS: Cell[][] = [
  ['claude-opus-4-6', 369, 2_759, 88_685, 33_329_060, 5_187_174, '$25.94'],
  ['claude-haiku-4-5-20251001', 146, 244, 29_912, 11_232_948, 1_477_438, '$1.48'],
  ['total', 515, 3_003, 118_597, 44_562_008, 6_664_612, '$27.42'],
];

const lines = (text: string) => text.split('\n');
const widest = (text: string) => Math.max(...lines(text).map(displayWidth));
/** The header line's words (headers here are one word each). */
const headers = (text: string, title = false) => lines(text)[title ? 1 : 0]!.trim().split(/ {2,}/);
/** Each line's cells, split on runs of two spaces. */
const cells = (text: string) => lines(text).map((l) => l.trim().split(/ {2,}/));

test('a table too wide leaves out its lowest-drop columns until it fits, and names them on one line under it', () => {
  const full = table(COLS, ROWS, { width: Infinity, totals: 1 });
  // the width of the table without input and output: it fits in that; one less and read goes too
  const room = widest(table(COLS.filter((_, k) => k !== 2 && k !== 3), ROWS.map((r) => r.filter((_, k) => k !== 2 && k !== 3)), { width: Infinity, totals: 1 }));
  assert.ok(room < widest(full));
  const fitted = table(COLS, ROWS, { width: room, totals: 1 });
  assert.ok(widest(fitted) <= room, fitted);
  assert.deepEqual(headers(fitted), ['model', 'requests', 'read', 'weight', 'USD']);
  assert.equal(lines(fitted).at(-1), '(not shown: input, output; see --wide or --json)');
  // every cell of a column kept is the full table's, row by row (the rule and note aside)
  const keep = [0, 1, 4, 5, 6];
  const shown = cells(fitted).filter((r) => !/^[─(]/.test(r[0]!));
  const all = cells(full).filter((r) => !/^─/.test(r[0]!));
  assert.deepEqual(shown, all.map((r) => keep.map((k) => r[k])));
  const narrower = table(COLS, ROWS, { width: room - 1, totals: 1 });
  assert.ok(widest(narrower) <= room - 1, narrower);
  // read (wider) left out, output (narrower) put back in the room it leaves
  assert.deepEqual(headers(narrower), ['model', 'requests', 'output', 'weight', 'USD']);
  assert.equal(lines(narrower).at(-1), '(not shown: input, read; see --wide or --json)');
});

test('a column without a drop is never left out: as narrow as it goes, the table stays wider than the width', () => {
  const t = table(COLS, ROWS, { width: 20 });
  assert.deepEqual(headers(t), ['model', 'weight', 'USD']);
  assert.ok(widest(t) > 20);
  // the note is wrapped to the width as any line of text, its words whole and in order
  assert.equal(lines(t).slice(lines(t).findIndex((l) => l.startsWith('(not shown'))).join(' '), '(not shown: requests, input, output, read; see --wide or --json)');
});

test('a column left out for a wider one is put back when the table fits with it', () => {
  // input (drop 1) is narrow; output (drop 2) is wide: leaving out both, then input fits again
  const cols: Column[] = [{ header: 'name' }, { header: 'in', align: 'num', drop: 1 }, { header: 'out', align: 'num', drop: 2 }, { header: 'USD', align: 'num' }];
  const rows: Cell[][] = [['a', 1, 1_234_567_890_123, '$1.00']];
  const full = table(cols, rows, { width: Infinity });
  // one column short: leaving out `in` alone is not enough, leaving out both is more than enough
  const t = table(cols, rows, { width: widest(full) - 5 });
  assert.deepEqual(headers(t), ['name', 'in', 'USD']);
  assert.equal(lines(t).slice(lines(t).findIndex((l) => l.startsWith('(not shown'))).join(' '), '(not shown: out; see --wide or --json)');
});

test('ids, paths and free text are cut as far as they go before any column is left out', () => {
  const cols: Column[] = [{ header: 'project', cut: true }, { header: 'purpose', cut: true, prose: true, whole: true }, ...COLS.slice(1)];
  const rows: Cell[][] = ROWS.map((r) => [`/home/u/projects/${String(r[0])}/${'deep/'.repeat(6)}end`, `what the ${String(r[0])} rows were for, said at some length`, ...r.slice(1)]);
  const full = table(cols, rows, { width: Infinity });
  // room for every column with the two text columns cut: nothing left out, no note
  const cutOnly = table(cols, rows, { width: widest(full) - 50 });
  assert.deepEqual(headers(cutOnly), ['project', 'purpose', 'requests', 'input', 'output', 'read', 'weight', 'USD']);
  assert.ok(!cutOnly.includes('not shown'), cutOnly);
  assert.ok(widest(cutOnly) <= widest(full) - 50);
  // the path is cut in its middle (its end kept), the prose at its end (its start kept)
  const first = cells(cutOnly)[2]!;
  assert.match(first[0]!, /^\/home\/u.*….*end$/);
  assert.match(first[1]!, /^what the claude-opus-4-6 .*…$/);
  // `whole` text off a terminal: shown whole, however long
  assert.ok(full.includes(String(rows[0]![1])));
});

test('wide, and a width of Infinity (off a terminal), leave no column out', () => {
  const full = table(COLS, ROWS, { width: Infinity });
  assert.equal(table(COLS, ROWS, { width: Infinity, wide: true }), full);
  const wide = table(COLS, ROWS, { width: 30, wide: true });
  assert.deepEqual(headers(wide), headers(full));
  assert.ok(!wide.includes('not shown'));
  // a table that fits is as it was: no note
  assert.equal(table(COLS, ROWS, { width: widest(full) }), full);
});

test('a title stays above the table, the note below it', () => {
  const t = table(COLS, ROWS, { width: 50, title: 'By model' });
  assert.equal(lines(t)[0], 'By model');
  assert.deepEqual(headers(t, true).slice(0, 1), ['model']);
  // the note wrapped to the width, as any line of text
  const note = lines(t).slice(lines(t).findIndex((l) => l.startsWith('(not shown')));
  assert.ok(note.every((l) => displayWidth(l) <= 50), note.join('\n'));
  assert.match(note.join(' '), /^\(not shown: .+; see --wide or --json\)$/);
});

test('leftOutNote names the columns in the table\'s order; fitEnd keeps prose\'s start', () => {
  assert.equal(leftOutNote(['input', 'write 1h']), '(not shown: input, write 1h; see --wide or --json)');
  assert.equal(fitEnd('weight and USD by day, project, model or agent type.', 24), 'weight and USD by day, …');
  assert.equal(displayWidth(fitEnd('項目項目項目', 6)), 5);
  assert.equal(fitEnd('short', 24), 'short');
});

test('a table of whole text (a query\'s result, no totals) leaves out its columns as any other, measured once', () => {
  const cols: Column[] = ['id', 'project', 'first', 'weight', 'usd'].map((h, i) => ({ header: h, whole: true, ...(i > 0 ? { drop: 5 - i } : {}) }));
  const rows: Cell[][] = [
    ['8463c716-a2ea-4c14-9efa-87158ebd9f20', '/home/USER/projects/spotter-worktrees/spotter-fum', '2026-02-11 21:41', '2,378,725', '11.66'],
    ['4d5611e5-241a-462a-8d15-5122611a9569', '/app', '2026-02-12 16:02', '2,082,827', '10.11'],
  ];
  const full = table(cols, rows, { width: Infinity });
  assert.ok(widest(full) > 100);
  const t = table(cols, rows, { width: 80, see: '--wide, --json or --csv' });
  assert.ok(widest(t) <= 80, t);
  // the last columns go first, then those left out are put back from the one of most weight as they fit
  const kept = headers(t);
  assert.equal(kept[0], 'id');
  const left = ['project', 'first', 'weight', 'usd'].filter((h) => !kept.includes(h));
  assert.ok(left.length > 0);
  assert.equal(lines(t).at(-1), `(not shown: ${left.join(', ')}; see --wide, --json or --csv)`);
  // the cells shown are the full table's, whole
  for (const r of rows) assert.ok(t.includes(String(r[0])));
  // as laid out column by column: the same table as one made of the kept columns alone, and the note
  const keep = kept.map((h) => cols.findIndex((c) => c.header === h));
  const alone = table(keep.map((k) => cols[k]!), rows.map((r) => keep.map((k) => r[k])), { width: Infinity });
  assert.equal(lines(t).slice(0, -1).join('\n'), alone);
});

test('a list keeps its items while a column can be left out: counted only when leaving out every such column is not enough', () => {
  const cols: Column[] = [{ header: '#', align: 'num' }, { header: 'model', drop: 1 }, { header: 'weight', align: 'num' }, { header: 'preceded by', list: true, noun: 'cause' }];
  const rows: Cell[][] = [[6, 'claude-haiku-4-5-20251001', 49_839, ['model:claude-opus-4-6→claude-haiku-4-5-20251001']]];
  const full = table(cols, rows, { width: Infinity });
  const fitted = fitTable(cols, rows, { width: widest(full) - 5 });
  assert.deepEqual(fitted.left, ['model']);
  assert.ok(fitted.text.includes('model:claude-opus-4-6→claude-haiku-4-5-20251001'), fitted.text);
  // too narrow even without the model: the count, as before
  const narrow = fitTable(cols, rows, { width: 30 });
  assert.ok(narrow.text.includes('1 cause'), narrow.text);
});

test('a title given as a function is told the columns left out', () => {
  const title = (left: readonly string[]) => `left ${left.join('+') || 'none'}`;
  assert.equal(lines(table(COLS, ROWS, { width: Infinity, title }))[0], 'left none');
  const fitted = fitTable(COLS, ROWS, { width: 60, title });
  assert.ok(fitted.left.length > 0);
  assert.equal(lines(fitted.text)[0], `left ${fitted.left.join('+')}`);
});

test('the note naming the columns left out keeps each header whole when it wraps', () => {
  const cols: Column[] = [{ header: 'model' }, { header: 'write 5m', align: 'num', drop: 1 }, { header: 'write 1h', align: 'num', drop: 2 }, { header: 'time (UTC)', drop: 3 }, { header: 'weight', align: 'num' }];
  const rows: Cell[][] = [['claude-opus-4-6', 1_234_567, 7_654_321, '2026-02-12 14:12:01', 5_187_174]];
  const fitted = fitTable(cols, rows, { width: 30 });
  assert.deepEqual(fitted.left, ['write 5m', 'write 1h', 'time (UTC)']);
  const note = lines(fitted.text).slice(lines(fitted.text).findIndex((l) => l.startsWith('(not shown')));
  assert.ok(note.length > 1, note.join('\n'));
  for (const h of fitted.left) assert.ok(note.some((l) => l.includes(h)), `${h}: ${note.join('\n')}`);
});

test('dropsOf: a query result leaves out its other numbers first, from the right, then its headline columns, then its text; never its first', async () => {
  const { dropsOf } = await import('../../src/reporters/rows.js');
  assert.deepEqual(dropsOf(['grp', 'name', 'requests', 'weight', 'chains'], [false, false, true, true, true]), [{}, { drop: 4 }, { drop: 2 }, { drop: 3 }, { drop: 1 }]);
  assert.deepEqual(dropsOf(['model', 'write_read_ratio', 'usd', 'input'], [false, true, true, true]), [{}, { drop: 3 }, { drop: 2 }, { drop: 1 }]);
  assert.deepEqual(dropsOf(['only'], [true]), [{}]);
});

test('a row of fewer cells than columns reads the missing ones as empty: the table stays aligned, cut and left out as with them', () => {
  const cols: Column[] = [{ header: 'name' }, { header: 'path', cut: true }, { header: 'n', align: 'num', drop: 1 }, { header: 'USD', align: 'num' }];
  const short: Cell[][] = [['a', '/home/user/projects/some/very/long/path/to/a/project', 12345, '$1.00'], ['b', '/x/y', 5], ['c']];
  const padded: Cell[][] = short.map((r) => cols.map((_, i) => r[i] ?? ''));
  for (const width of [Infinity, 40, 30]) {
    const fitted = fitTable(cols, short, { width });
    assert.deepEqual(fitted, fitTable(cols, padded, { width }), `${width}`);
    const body = lines(fitted.text).filter((l) => !l.startsWith('(not shown') && !l.startsWith('--json'));
    // every line within the rule's columns: cells drawn where the rule says, none past it
    const rule = body[1]!;
    assert.match(rule, /^[─ ]+$/);
    for (const l of body) assert.ok(displayWidth(l) <= displayWidth(rule) && displayWidth(rule) <= width, `${width}:\n${fitted.text}`);
    assert.ok(!/NaN|undefined|…(path|n|USD)\b/.test(fitted.text), fitted.text);
  }
  assert.ok(fitTable(cols, short, { width: 40 }).text.includes('…'));
  assert.deepEqual(fitTable(cols, short, { width: 40 }).left, []);
  assert.deepEqual(fitTable(cols, short, { width: 30 }).left, ['n']);
});

test('wide shows a table as piped: text over 120 columns is still cut in its middle, as piped; a whole column (a query\'s) is not', () => {
  const long = `/home/user/${'deep/'.repeat(40)}project`;
  const cols: Column[] = [{ header: 'path', cut: true }, { header: 'sql', whole: true, cut: true }, { header: 'n', align: 'num', drop: 1 }];
  const rows: Cell[][] = [[long, long, 1]];
  const wide = fitTable(cols, rows, { width: 40, wide: true });
  assert.deepEqual(wide, fitTable(cols, rows, { width: Infinity }));
  const [path, sql] = lines(wide.text)[2]!.split(/\s{2,}/);
  assert.equal(displayWidth(path!), 120);
  assert.ok(path!.includes('…'));
  assert.equal(sql, long);
});

test('a column cut last is cut in a table with no column to leave out, as in one with every such column left out', () => {
  const cause = 'model:claude-opus-4-6→claude-haiku-4-5-20251001';
  const cols: Column[] = [{ header: 'cause', cutLast: true }, { header: 'weight', align: 'num' }, { header: 'USD', align: 'num' }];
  const rows: Cell[][] = [[cause, 49_839, '$0.1234'], ['ttl_expiry', 1_234, '$0.0012']];
  const whole = table(cols, rows, { width: Infinity });
  for (const width of [34, 40, widest(whole) - 1]) {
    const fitted = fitTable(cols, rows, { width });
    assert.deepEqual(fitted.left, []);
    assert.ok(widest(fitted.text) <= width, `${width}:\n${fitted.text}`);
    assert.ok(fitted.text.includes('…') && fitted.text.includes('model:cl') && fitted.text.includes('1001  '), fitted.text);
    // as the same table with a column left out for it
    const withDrop = fitTable([...cols, { header: 'events', align: 'num', drop: 1 }], rows.map((r) => [...r, 123_456_789]), { width });
    assert.equal(withDrop.text.split('\n(not shown')[0], fitted.text);
  }
  // wide enough: whole
  assert.equal(fitTable(cols, rows, { width: widest(whole) }).text, whole);
});

test('a label (a model) is cut in its middle only where the table does not fit with every column it may leave out left out; a query\'s whole text never', () => {
  const width = (t: string) => Math.max(...t.split('\n').map(displayWidth));
  const cols: Column[] = [{ header: 'model' }, { header: 'weight', align: 'num' }, { header: 'USD', align: 'num' }, { header: 'tokens', align: 'num', drop: 1 }];
  const rows: Cell[][] = [['claude-sonnet-4-5-20250929', 1_475_295, '$4.43', 123_456_789]];
  // 26 + 9 + 5 + 11 and gaps: 57; at 50 tokens is left out and the model stays whole
  const at50 = fitTable(cols, rows, { width: 50 });
  assert.deepEqual(at50.left, ['tokens']);
  assert.ok(at50.text.includes('claude-sonnet-4-5-20250929'), at50.text);
  // at 40 the model is cut in its middle (its ends kept) to fit: it was 44 wide, past the terminal
  const at40 = fitTable(cols, rows, { width: 40 });
  assert.ok(width(at40.text.split('\n(')[0]!) <= 40, at40.text);
  assert.match(at40.text, /^claude-s\S*…\S*0250929  /m);
  // a table with no column to leave out or cut last is cut as well
  const bare = table(cols.slice(0, 3), rows, { width: 36 });
  assert.ok(width(bare) <= 36, bare);
  // whole off a terminal and under wide; a whole column (a query's data) and numbers never cut
  assert.ok(table(cols, rows, { width: Infinity }).includes('claude-sonnet-4-5-20250929'));
  assert.ok(table(cols, rows, { width: 40, wide: true }).includes('claude-sonnet-4-5-20250929'));
  const whole = table([{ header: 'model', whole: true }, ...cols.slice(1, 3)], rows, { width: 30 });
  assert.ok(whole.includes('claude-sonnet-4-5-20250929') && whole.includes('1,475,295'), whole);
});
