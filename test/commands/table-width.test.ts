/**
 * The CLI's tables fit the terminal they are printed on: run under a pseudo-terminal (util-linux's
 * `script`) of a given width, a table wider than it cuts its text columns; COLUMNS widens it again;
 * off a terminal (a pipe, as every other test runs the CLI) the output is the same whatever COLUMNS says.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { displayWidth } from '../../src/format/table.js';
import { visibleWidth } from '../../src/format/wrap.js';
import { REAL_LOGS, REPO, assistant, cli, tempDir, writeCorpus } from '../helpers/corpus.js';
import { onTerminal } from '../helpers/terminal.js';

const widest = (text: string) => Math.max(...text.split('\n').map(displayWidth));
const ARGS = ['summary', REAL_LOGS, '--db', ':memory:', '--timezone', 'UTC'];

test('on a terminal 120 columns wide summary\'s tables fit it, cutting the project paths, numbers whole; off a terminal they are whole', () => {
  const piped = cli(ARGS, { HOME: tempDir() });
  assert.equal(piped.code, 0, piped.stderr);
  assert.ok(widest(piped.stdout) > 120, `${widest(piped.stdout)}`);
  const shown = onTerminal(ARGS, 120);
  assert.equal(widest(shown), 120);
  // the longest project path is cut in the middle, its start and end kept
  const path = /^(\/\S+)/m.exec(piped.stdout.slice(piped.stdout.indexOf('By project')).split('\n').slice(3).join('\n'))![1]!;
  assert.ok(!shown.includes(path));
  const cut = shown.split('\n').find((l) => l.startsWith(path.slice(0, 8)) && l.includes('…'));
  assert.ok(cut, shown);
  // the same numbers, line for line
  const numbers = (t: string) => t.split('\n').map((l) => l.match(/[\d,.$%+-]+$/)?.[0] ?? '');
  assert.deepEqual(numbers(shown), numbers(piped.stdout));
  // a terminal wide enough, or COLUMNS over it: the output of a pipe
  assert.equal(onTerminal(ARGS, 120, { COLUMNS: '400' }), piped.stdout);
  assert.equal(onTerminal(ARGS, 300), piped.stdout);
  // off a terminal COLUMNS is not read
  assert.equal(cli(ARGS, { HOME: tempDir(), COLUMNS: '80' }).stdout, piped.stdout);
});

test('sessions --top 3: the totals row\'s label runs into the blank project cells; the session column is as wide as the ids', () => {
  const r = cli(['sessions', join(REPO, 'sample-logs'), '--db', ':memory:', '--top', '3', '--timezone', 'UTC'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  const id = lines[3]!.split(' ')[0]!;
  assert.equal(lines[1]!.indexOf('project'), Math.max(id.length, 'session'.length) + 2);
  assert.match(lines.at(-1)!, /^total \(all \d+ sessions\) /);
  // every row, the totals too, ends in one column; the rules span the table
  assert.equal(new Set(lines.slice(1).filter((l) => !l.startsWith('─')).map(displayWidth)).size, 1);
  assert.equal(displayWidth(lines[2]!), displayWidth(lines.at(-1)!));
  assert.equal(displayWidth(lines.at(-2)!), displayWidth(lines.at(-1)!));
});

test('sessions on a narrow terminal cuts the project, never the session ids: each is the shortest prefix that names its session', () => {
  // two ids alike but for their last character: shown whole, 36 characters
  const ids = ['4d5611e5-241a-462a-8d15-512261100001', '4d5611e5-241a-462a-8d15-512261100002'];
  const cwd = `/home/u/projects/${'a-long-project-name-'.repeat(3)}end`;
  const dir = writeCorpus(
    Object.fromEntries(ids.map((session, i) => [`p/${session}.jsonl`, [assistant({ session, msg: `m${i}`, t: `2026-02-11T03:0${i}:00.000Z`, cwd, u: { in: 10, w5: 1000 } })]])),
  );
  const shown = onTerminal(['sessions', dir, '--db', ':memory:', '--timezone', 'UTC'], 100);
  const rows = shown.split('\n').filter((l) => l.startsWith('4d5611e5'));
  assert.equal(rows.length, 2, shown);
  for (const row of rows) {
    assert.ok(ids.includes(row.split(' ')[0]!), row);
    // cut in its middle, its start kept (as much of it as the columns left out to fit make room for)
    assert.ok(row.includes(`  ${cwd.slice(0, 8)}`) && row.includes('…') && !row.includes(cwd), row);
  }
});

test('on a terminal too narrow for a table, only its ids and paths are cut: models, times and row labels stay whole', () => {
  // at 60 columns summary's By model was cut to `claude-h…0251001`, anatomy --chain's times to `2025-09-…0:56:41`
  const models = onTerminal(['summary', join(REAL_LOGS, 'marot-spotter'), '--db', ':memory:', '--timezone', 'UTC'], 60);
  assert.match(models, /^claude-haiku-4-5-20251001 /m);
  // --wide: every column, the times whole; without it a time is left out whole (named under the table), never cut
  const chainArgs = ['anatomy', join(REAL_LOGS, 'marot-spotter'), '--db', ':memory:', '--timezone', 'UTC', '--chain', '4d5611e5-241a-462a-8d15-5122611a9569'];
  const chain = onTerminal([...chainArgs, '--wide'], 60);
  assert.match(chain, /\b2026-02-12 16:02:\d\d\b/);
  assert.ok(!chain.includes('…'), chain);
  const fitted = onTerminal(chainArgs, 60);
  assert.ok(!fitted.includes('…'), fitted);
  assert.match(fitted.replace(/\n(?=\S)/g, ' '), /\(not shown: time \(UTC\), [^)]*; see --wide or --json\)/);
  const replay = onTerminal(['replay', 'session', '4d5611e5', join(REAL_LOGS, 'marot-spotter'), '--db', ':memory:'], 60);
  assert.ok(!/\S…\S/.test(replay.split('\n').filter((l) => !l.startsWith('Session replay')).join('\n')), replay);
});

/**
 * The lines of `text` that belong to a table: a rule under a header (runs of ─ apart by two spaces or
 * ┼), the header above it, and the lines below it up to a blank line.
 */
function tableLines(text: string): Set<number> {
  const lines = text.split('\n');
  const out = new Set<number>();
  lines.forEach((l, k) => {
    if (!/^─[─┼ ]*$/.test(l) || !/^─+( {2}─+| ┼ ─+)*$/.test(l)) return;
    out.add(k - 1);
    for (let j = k; j < lines.length && lines[j] !== ''; j++) out.add(j);
  });
  return out;
}
/** The lines of `text` outside its tables. */
const textLines = (text: string) => {
  const tables = tableLines(text);
  return text.split('\n').filter((_, k) => !tables.has(k));
};
const words = (s: string) => s.split(/\s+/).filter(Boolean);

const BLOCKS = ['blocks', REAL_LOGS, '--db', ':memory:', '--timezone', 'UTC'];

test('blocks on a terminal fits it: its models whole and +N for the rest at 120 columns, at 80 with requests and tokens left out; with --wide and piped, every model as before', () => {
  const piped = cli(BLOCKS, { HOME: tempDir() });
  assert.equal(piped.code, 0, piped.stderr);
  // the real logs' block of three models made the table 144 columns wide
  assert.ok(widest(piped.stdout) > 120, `${widest(piped.stdout)}`);
  assert.match(piped.stdout, /claude-haiku-4-5-20251001, claude-opus-4-6, claude-sonnet-4-5-20250929$/m);
  const at120 = onTerminal(BLOCKS, 120);
  assert.ok(widest(at120) <= 120, at120);
  assert.match(at120, /  claude-haiku-4-5-20251001, claude-opus-4-6 \+1$/m);
  // no model cut: each shown is a model of the piped table, whole
  assert.ok(!at120.includes('…'), at120);
  const counts = (t: string) => t.split('\n').filter((l) => /^\d{4}-\d\d-\d\d /.test(l)).map((l) => l.replace(/^.*\$[\d.,]+ {2}/, ''));
  // at 80 columns are left out before a list is shown by its count: each row its first model whole
  const at80 = onTerminal(BLOCKS, 80);
  assert.ok(widest(at80) <= 80, at80);
  assert.match(at80, /^\(not shown: requests, tokens; see --wide or --json\)$/m);
  counts(at80).forEach((shown, k) => {
    const listed = counts(piped.stdout)[k]!;
    assert.ok(shown === listed || (shown.startsWith(listed.split(', ')[0]!) && / \+\d+$/.test(shown)), shown);
  });
  // with --wide at 80 no column is left out and every model is named: the piped table
  const wide80 = onTerminal([...BLOCKS, '--wide'], 80);
  assert.equal(wide80, piped.stdout);
  // at 100 columns, 26 left for the list: each row its models that fit, a count ('3 models') only where none does
  const at100 = onTerminal(BLOCKS, 100);
  assert.ok(widest(at100) <= 100, at100);
  const lists100 = counts(at100);
  const piped100 = counts(piped.stdout);
  lists100.forEach((shown, k) => {
    const models = piped100[k]!.split(', ');
    if (/^\d+ models?$/.test(shown)) assert.equal(shown, `${models.length} model${models.length === 1 ? '' : 's'}`);
    else assert.ok(shown === piped100[k] || models.some((m) => shown.startsWith(`${m}`)), shown);
  });
  // every row of one model of 24 characters shows it, and the column is as wide as its widest cell
  piped100.forEach((m, k) => {
    if (!m.includes(', ') && m.length <= 24) assert.equal(lists100[k], m);
  });
  const rule100 = at100.split('\n')[at100.split('\n').findIndex((l) => l.startsWith('block start')) + 1]!;
  assert.equal(rule100.split('  ').at(-1)!.length, Math.max(...lists100.map(displayWidth), 'models'.length));
  // every other cell as piped, line for line
  const cells = (t: string) => t.split('\n').filter((l) => !l.startsWith('─')).map((l) => l.split(/ {2,}/).slice(0, 6).join('|'));
  assert.deepEqual(cells(wide80).slice(3), cells(piped.stdout).slice(3));
  // a terminal as wide as the table, or COLUMNS over it, and any COLUMNS off a terminal: the piped text, byte for byte
  assert.equal(onTerminal(BLOCKS, 200), piped.stdout);
  assert.equal(onTerminal(BLOCKS, 80, { COLUMNS: '400' }), piped.stdout);
  assert.equal(cli(BLOCKS, { HOME: tempDir(), COLUMNS: '40' }).stdout, piped.stdout);
});

const KEEPALIVE = ['whatif', 'keepalive', REAL_LOGS, '--db', ':memory:', '--timezone', 'UTC'];

test('whatif keepalive at 80 columns: every line outside its tables fits, wrapped at words; the tables as piped; piped output unchanged', () => {
  const piped = cli(KEEPALIVE, { HOME: tempDir() });
  assert.equal(piped.code, 0, piped.stderr);
  // the '% subagent wt' note was ~172 columns on the real logs
  const note = piped.stdout.split('\n').find((l) => l.startsWith('% subagent wt'))!;
  assert.ok(displayWidth(note) > 160, note);
  const shown = onTerminal(KEEPALIVE, 80);
  const text = textLines(shown);
  assert.ok(text.length > textLines(piped.stdout).length, 'some lines were wrapped');
  for (const l of text) assert.ok(visibleWidth(l) <= 80, `${visibleWidth(l)}: ${l}`);
  // the same words in the same order: wrapped, not cut; but the legend of % subagent wt, which the table leaves out at 80
  assert.ok(shown.includes('(not shown: ') && /\(not shown: [^)]*% subagent wt/.test(shown.replace(/\n/g, ' ')), shown);
  const legendless = textLines(piped.stdout).join('\n').replace(/% subagent wt: net saving on subagent chains over their weight \([^)]*\); /, '');
  assert.deepEqual(words(text.join('\n')), words(legendless));
  assert.ok(!text.some((l) => l.includes('…')), shown);
  // the note's continuation lines begin where it does (no indent of its own)
  const at = text.findIndex((l) => l.startsWith('% all wt'));
  assert.ok(visibleWidth(text[at]!) <= 80 && text[at + 1] !== '' && !text[at + 1]!.startsWith(' '), text.slice(at, at + 3).join('\n'));
  // the tables fit, leaving out columns (named under each); with --wide they are the piped tables' lines
  const tables = (t: string) => t.split('\n').filter((_, k) => tableLines(t).has(k));
  for (const l of tables(shown)) assert.ok(visibleWidth(l) <= 80, l);
  assert.equal(shown.split('\n').filter((l) => /^\(not shown: .+; see --wide or --json\)$/.test(l)).length, 2, shown);
  assert.deepEqual(tables(onTerminal([...KEEPALIVE, '--wide'], 80)), tables(piped.stdout));
  assert.equal(onTerminal(KEEPALIVE, 300), piped.stdout);
  assert.equal(cli(KEEPALIVE, { HOME: tempDir(), COLUMNS: '40' }).stdout, piped.stdout);
});

test('every command\'s lines outside tables fit an 80-column terminal; piped, they are as before', () => {
  const logs = ['--db', ':memory:', '--timezone', 'UTC'];
  for (const args of [
    ['summary', REAL_LOGS, ...logs],
    ['anatomy', REAL_LOGS, ...logs],
    ['anatomy', REAL_LOGS, ...logs, '--chain', '4d5611e5-241a-462a-8d15-5122611a9569'],
    ['whatif', 'ttl', REAL_LOGS, ...logs],
    ['crosstab', REAL_LOGS, ...logs],
    ['replay', 'session', 'top', REAL_LOGS, '--db', ':memory:'],
    ['replay', 'channel', join(REPO, 'sample-logs/channels/backend.jsonl')],
  ]) {
    const piped = cli(args, { HOME: tempDir() });
    assert.equal(piped.code, 0, piped.stderr);
    const shown = onTerminal(args, 80);
    for (const l of textLines(shown)) assert.ok(visibleWidth(l) <= 80, `${args.slice(0, 2).join(' ')}: ${l}`);
    assert.deepEqual(words(textLines(shown).join('\n')), words(textLines(piped.stdout).join('\n')), args.join(' '));
    assert.equal(onTerminal(args, 400), piped.stdout, args.join(' '));
  }
});

test('a notice or an error on a terminal is wrapped to it; piped, one line as before', () => {
  const missing = join(tempDir(), 'a-directory-with-a-rather-long-name', 'and-another-below-it', 'logs');
  const args = ['summary', missing, '--db', ':memory:'];
  const piped = cli(args, { HOME: tempDir() });
  assert.equal(piped.code, 2);
  assert.equal(piped.stderr.trimEnd().split('\n').length, 1, piped.stderr);
  assert.ok(displayWidth(piped.stderr.trimEnd()) > 60, piped.stderr);
  for (const cols of [60, 40]) {
    const shown = onTerminal(args, cols, {}, 'stderr', 2).trimEnd();
    assert.ok(shown.split('\n').length > 1, shown);
    // a line wider than the terminal is one word alone: the path, never broken, which the terminal soft-wraps
    for (const l of shown.split('\n')) assert.ok(visibleWidth(l) <= cols || words(l).length === 1, l);
    assert.ok(shown.split('\n').some((l) => l.includes(missing)), shown);
    // every character but the spaces at the breaks, in order
    assert.equal(shown.replace(/\s/g, ''), piped.stderr.replace(/\s/g, ''));
  }
});

test('report --out a path with spaces on a terminal: `wrote PATH` never breaks the path, at any width; piped, one line as before', () => {
  const dir = tempDir();
  const out = join(dir, 'My Reports', 'the december cache report for the team.html');
  mkdirSync(join(dir, 'My Reports'));
  const args = ['report', REAL_LOGS, '--db', ':memory:', '--timezone', 'UTC', '--out', out];
  const piped = cli(args, { HOME: tempDir() });
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stdout, `wrote ${out}\n`);
  for (const cols of [80, 40]) {
    const shown = onTerminal(args, cols);
    // the path whole on one line (with `wrote` when they fit together)
    assert.ok(shown.split('\n').some((l) => l === out || l === `wrote ${out}`), `${cols}: ${shown}`);
  }
});

test('every command with a table fits an 80- and a 120-column terminal, leaving columns out and naming them; --wide keeps them; piped, as before', () => {
  const logs = [REAL_LOGS, '--db', ':memory:', '--timezone', 'UTC'];
  // a line under a table naming what it left out (wrapped as any line of text)
  const notes = (t: string) => {
    const ls = t.split('\n');
    return ls.flatMap((l, k) => {
      if (!l.startsWith('(not shown: ')) return [];
      let note = l;
      for (let j = k + 1; !note.endsWith(')') && j < ls.length; j++) note += ` ${ls[j]}`;
      return [note];
    });
  };
  for (const args of [['summary', ...logs], ['sessions', ...logs], ['anatomy', ...logs], ['whatif', 'ttl', ...logs], ['whatif', 'keepalive', ...logs], ['query', '--list'], ['query', 'sessions', ...logs], ['crosstab', ...logs, '--rows', 'project', '--cols', 'model', '--measure', 'weight']]) {
    const name = args.slice(0, 2).join(' ');
    const piped = cli(args, { HOME: tempDir() });
    assert.equal(piped.code, 0, piped.stderr);
    assert.ok(widest(piped.stdout) > 120, `${name}: ${widest(piped.stdout)}`);
    assert.ok(!piped.stdout.includes('(not shown'), name);
    for (const cols of [80, 120]) {
      const shown = onTerminal(args, cols);
      assert.ok(widest(shown) <= cols, `${name} at ${cols}: ${widest(shown)}`);
      // each note names columns of the piped output's headers, and says how to see them
      for (const n of notes(shown)) {
        // a query's result can be seen as CSV too
        const see = args[0] === 'query' ? '--wide, --json or --csv' : '--wide or --json';
        const named = new RegExp(`^\\(not shown: (.+); see ${see}\\)$`).exec(n)![1]!.split(', ');
        for (const h of named) assert.ok(piped.stdout.includes(`  ${h}`), `${name}: ${h}`);
      }
      // a table left out columns only where it had to: at 80 every command but query --list did
      if (cols === 80) assert.equal(notes(shown).length > 0, args[1] !== '--list', `${name}: ${shown}`);
    }
    // --wide: no column left out, the tables as wide as before
    const wide = onTerminal([...args, '--wide'], 80);
    assert.ok(!wide.includes('(not shown'), name);
    if (args[1] !== '--list') assert.ok(widest(wide) > 100, `${name} --wide: ${widest(wide)}`);
    // off a terminal --wide changes nothing
    assert.equal(cli([...args, '--wide'], { HOME: tempDir() }).stdout, piped.stdout, name);
  }
});

test('query --list on a narrow terminal cuts each purpose at its end, the names whole', () => {
  const piped = cli(['query', '--list'], { HOME: tempDir() });
  const shown = onTerminal(['query', '--list'], 80);
  const rows = (t: string) => t.trimEnd().split('\n').slice(2).map((l) => l.split(/ {2,}/));
  const full = rows(piped.stdout);
  rows(shown).forEach(([name, purpose], k) => {
    assert.equal(name, full[k]![0]);
    if (purpose !== full[k]![1]) assert.ok(purpose!.endsWith('…') && full[k]![1]!.startsWith(purpose!.slice(0, -1)), purpose);
  });
  assert.ok(rows(shown).some(([, p]) => p!.endsWith('…')), shown);
});

test('an error naming a path with spaces keeps the path whole on a narrow terminal, as given and as made absolute', () => {
  const dir = join(tempDir(), 'my project dir');
  mkdirSync(dir);
  // a path that does not exist, named in the error as given
  const missing = join(dir, 'no such logs here');
  const err = onTerminal(['summary', missing, '--db', ':memory:'], 40, {}, 'stderr', 2);
  assert.ok(err.split('\n').some((l) => l.includes(missing)), err);
  assert.match(err.replace(/\n/g, ' '), /^cachelens: no such file or directory: /);
  // a store inside the logs read: both paths named, each whole, the words around them wrapped
  const db = join(dir, 'store dir', 's.duckdb');
  const inside = onTerminal(['summary', dir, '--db', db], 40, {}, 'stderr', 2);
  assert.ok(inside.split('\n').some((l) => l.includes(db)), inside);
  assert.ok(inside.split('\n').some((l) => l.includes(`(${dir})`)), inside);
  // a relative path, given with ~/ or =: whole too
  const home = tempDir();
  mkdirSync(join(home, 'my logs'));
  const tilde = onTerminal(['summary', '--db=~/my logs/x y.duckdb', '~/my logs'], 40, { HOME: home }, 'stderr', 2);
  assert.ok(tilde.split('\n').some((l) => l.includes(join(home, 'my logs/x y.duckdb'))), tilde);
});
