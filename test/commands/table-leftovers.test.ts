/**
 * What the last review of terminal tables left, each on a pseudo-terminal of a given width: the
 * crosstab's attachments-per-round lines name only the cells of the columns shown; `--wide` shows
 * ids and paths (a crosstab's projects) whole, the table as piped; anatomy's break causes are cut,
 * in their middle, where nothing else makes their table fit, never piped.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { displayWidth } from '../../src/format/table.js';
import { REPO, cli, tempDir } from '../helpers/corpus.js';
import { onTerminal } from '../helpers/terminal.js';

const SAMPLES = [join(REPO, 'sample-logs'), '--db', ':memory:', '--timezone', 'UTC'];
const widest = (text: string) => Math.max(...text.split('\n').map(displayWidth));
/** The text's lines joined where a line was wrapped (a continuation is indented deeper or starts lower-case). */
const unwrapped = (t: string) => {
  const out: string[] = [];
  for (const l of t.replace(/\n(?=\S)(?![A-Z(])/g, ' ').split('\n')) {
    const prev = out[out.length - 1];
    // a crosstab's cell line wrapped: its continuations start with two spaces, as the line itself does
    if (prev !== undefined && /^ {2}\S/.test(l) && /^ {2}\S/.test(prev) && !/(— \d+ of \d+ chains?|\))$/.test(prev)) out[out.length - 1] = `${prev} ${l.trim()}`;
    else out.push(l);
  }
  return out.join('\n');
};
/** The attachments-per-round lines under a crosstab: `  row × col: yes — 4 of 4 chains`. */
const cellLines = (t: string) => unwrapped(t).split('\n').filter((l) => / × .+: (yes|no) — \d+ of \d+ chains?$/.test(l)).map((l) => l.trim());

test('crosstab on a narrow terminal: the attachments lines name only cells of the columns shown, and say how many are left out', () => {
  const piped = cli(['crosstab', ...SAMPLES], { HOME: tempDir() });
  assert.equal(piped.code, 0, piped.stderr);
  const all = cellLines(piped.stdout);
  assert.ok(all.some((l) => / × yes:/.test(l)), piped.stdout);
  // at 24 the cell lines wrap (each continuation indented as its line): unwrapped() rejoins them
  for (const cols of [24, 28, 40, 60, 80]) {
    const shown = onTerminal(['crosstab', ...SAMPLES], cols);
    // the header: the line above the table's first rule (its first column's header may be cut: `defin…sting`)
    const rows = shown.split('\n');
    const header = rows[rows.findIndex((l) => l.startsWith('─')) - 1]!.trim().split(/\s{2,}|\s*│\s*/);
    const columns = header.slice(1).filter((h) => h !== 'total');
    // the table fits the terminal, its header cut in its middle where it must be (it was 42 wide at 40)
    const table = rows.slice(rows.findIndex((l) => l.startsWith('─')) - 1, rows.findIndex((l) => l.startsWith('total')) + 1);
    for (const l of table) assert.ok(displayWidth(l) <= cols, `${cols}:\n${table.join('\n')}`);
    if (cols <= 40) assert.ok(table[0]!.includes('…'), table.join('\n'));
    const lines = cellLines(shown);
    // each line names a column the table shows, and is one of the piped lines
    for (const l of lines) {
      assert.ok(columns.includes(/ × (.+):/.exec(l)![1]!), `${cols}: ${l} (${columns.join(', ')})`);
      assert.ok(all.includes(l), l);
    }
    const unsaid = all.length - lines.length;
    if (unsaid === 0) assert.ok(!/cells? of the columns not shown/.test(shown), shown);
    else assert.match(shown.replace(/\s+/g, ' '), new RegExp(`\\(${unsaid} cells? of the columns not shown: yes; see --wide or --json\\)`));
    if (cols === 24) assert.ok(unsaid > 0 && !columns.includes('yes'), shown);
    if (cols >= 28) assert.ok(unsaid === 0 && columns.includes('yes'), shown);
  }
  // --wide: every column, every line
  assert.deepEqual(cellLines(onTerminal(['crosstab', ...SAMPLES, '--wide'], 40)), all);
});

test('--wide on a narrow terminal shows ids and paths whole: a crosstab\'s projects, anatomy\'s chain ids, as piped', () => {
  const byProject = ['crosstab', ...SAMPLES, '--rows', 'project', '--cols', 'model'];
  const piped = cli(byProject, { HOME: tempDir() }).stdout;
  const projects = piped.split('\n').filter((l) => l.startsWith('/')).map((l) => l.split(/ {2,}/)[0]!);
  assert.ok(projects.length > 2 && projects.every((p) => p.length > 16), piped);
  for (const cols of [40, 60]) {
    const wide = onTerminal([...byProject, '--wide'], cols);
    // the table's lines are the piped table's (the lines of text under it are wrapped to the terminal)
    const table = (t: string) => t.split('\n').filter((l) => /[│┼]/.test(l));
    assert.deepEqual(table(wide), table(piped));
    for (const p of projects) assert.ok(wide.includes(`${p}  `), `${cols}: ${p}`);
    // without --wide the projects are cut to fit
    assert.ok(onTerminal(byProject, cols).includes('…'));
  }
  const chains = cli(['anatomy', ...SAMPLES, '--json'], { HOME: tempDir() });
  const ids = (JSON.parse(chains.stdout).chains as { chain_id: string }[]).map((c) => c.chain_id);
  const wide = onTerminal(['anatomy', ...SAMPLES, '--wide'], 60);
  assert.ok(ids.slice(0, 5).every((id) => wide.includes(id)), wide);
});

test('anatomy\'s break causes: whole while a column can be left out, cut in their middle below that, whole piped and with --wide', () => {
  const causes = (t: string) => {
    const ls = t.split('\n');
    const at = ls.findIndex((l) => l.startsWith('What preceded the breaks'));
    const from = ls.findIndex((l, k) => k > at && l.startsWith('cause '));
    const end = ls.findIndex((l, k) => k > from && (l === '' || l.startsWith('(not shown')));
    return ls.slice(from, end < 0 ? undefined : end);
  };
  const piped = causes(cli(['anatomy', ...SAMPLES], { HOME: tempDir() }).stdout);
  const names = piped.slice(2).map((l) => l.split(/ {2,}/)[0]!);
  assert.ok(names.some((n) => n.length > 30), names.join('\n'));
  // at 60 the table fits with its causes whole (tokens, events and waste left out)
  const at60 = causes(onTerminal(['anatomy', ...SAMPLES], 60));
  assert.ok(widest(at60.join('\n')) <= 60, at60.join('\n'));
  assert.deepEqual(at60.slice(2).map((l) => l.split(/ {2,}/)[0]), names);
  for (const cols of [50, 40]) {
    const shown = causes(onTerminal(['anatomy', ...SAMPLES], cols));
    // it ran past the terminal: 57 columns at 40 and at 50
    assert.ok(widest(shown.join('\n')) <= cols, `${cols}:\n${shown.join('\n')}`);
    shown.slice(2).forEach((l, k) => {
      const cause = l.split(/ {2,}/)[0]!;
      const whole = names[k]!;
      if (cause === whole) return;
      // cut in its middle: its start and its end are the cause's
      const [head, tail] = cause.split('…') as [string, string];
      assert.ok(whole.startsWith(head) && whole.endsWith(tail) && head.length > 0 && tail.length > 0, `${cause} of ${whole}`);
    });
    assert.ok(shown.some((l) => l.includes('…')), shown.join('\n'));
    // --wide: every column, every cause whole
    assert.deepEqual(causes(onTerminal(['anatomy', ...SAMPLES, '--wide'], cols)).slice(2).map((l) => l.split(/ {2,}/)[0]), names);
  }
});
