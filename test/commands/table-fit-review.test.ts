/**
 * What a review of the terminal table fitting found, each on a pseudo-terminal of a given width:
 * lists keep their items while a column can be left out instead; causes name their models whole, and
 * --wide cuts no prose; a query result without rows is fit too; titles and legends name only the
 * columns shown; a crosstab keeps a value column, and ranks a ratio's columns by their chains; a query's
 * headline columns go after its other numbers, and its text (grp, component) last.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { displayWidth } from '../../src/format/table.js';
import { REAL_LOGS, REPO, cli, tempDir } from '../helpers/corpus.js';
import { onTerminal } from '../helpers/terminal.js';

const LOGS = [REAL_LOGS, '--db', ':memory:', '--timezone', 'UTC'];
const widest = (text: string) => Math.max(...text.split('\n').map(displayWidth));
/** The note under a table naming what it left out, its wrapped lines joined. */
const note = (t: string) => {
  const ls = t.split('\n');
  const k = ls.findIndex((l) => l.startsWith('(not shown: '));
  if (k < 0) return '';
  let n = ls[k]!;
  for (let j = k + 1; !n.endsWith(')') && j < ls.length; j++) n += ` ${ls[j]}`;
  return n;
};

test('anatomy --chain at 80 and 120: a break row names its cause, a column left out before the causes are counted', () => {
  for (const cols of [80, 120]) {
    const shown = onTerminal(['anatomy', ...LOGS, '--chain', 'ae4a77f8-aedd-4bc1-888f-c94edc91af04'], cols);
    const row = shown.split('\n').find((l) => l.startsWith('  6 '))!;
    assert.match(row, /model:claude-opus-4-6→claude-haiku-4-5-20251001$/, `${cols}: ${row}`);
    assert.ok(widest(shown) <= cols, shown);
    assert.ok(note(shown).includes('model'), note(shown));
  }
});

test('anatomy\'s break causes name their models whole at 80, and --wide at 80 is as piped', () => {
  const piped = cli(['anatomy', ...LOGS], { HOME: tempDir() }).stdout;
  const causes = (t: string) => t.slice(t.indexOf('What preceded the breaks'));
  const shown = causes(onTerminal(['anatomy', ...LOGS], 80));
  assert.ok(shown.includes('model:claude-opus-4-6→claude-haiku-4-5-20251001'), shown);
  assert.ok(!shown.split('\n\n')[0]!.includes('…'), shown);
  assert.equal(causes(onTerminal(['anatomy', ...LOGS, '--wide'], 80)).split('\n\n')[0], causes(piped).split('\n\n')[0]);
});

test('query --list --wide at 80 cuts no purpose: as piped', () => {
  const piped = cli(['query', '--list'], { HOME: tempDir() }).stdout;
  assert.equal(onTerminal(['query', '--list', '--wide'], 80), piped);
});

test('a query result without rows fits its terminal, naming what it left out', () => {
  for (const args of [['query', 'repurchase', ...LOGS], ['query', 'sessions', ...LOGS, '--since', '2030-01-01']]) {
    const shown = onTerminal(args, 80);
    assert.ok(shown.includes('(no rows)'), shown);
    // `(no rows)` under the header's rule, the note below it (it came between them)
    assert.equal(shown.split('\n')[2], '(no rows)', shown);
    assert.ok(widest(shown) <= 80, shown);
    assert.match(note(shown), /; see --wide, --json or --csv\)$/);
  }
});

test('query cost_by at 80 keeps weight and usd; the others are left out from the right', () => {
  const shown = onTerminal(['query', 'cost_by', ...LOGS], 80);
  const header = shown.split('\n')[0]!.trim().split(/ +/);
  assert.ok(header.includes('weight') && header.includes('usd'), header.join(' '));
  assert.ok(!note(shown).includes(' weight,') && !note(shown).includes('usd'), note(shown));
  assert.ok(widest(shown) <= 80, shown);
});

test('a query at 80 keeps the columns that say what a row is (grp, component), leaving out its other numbers first, then its headline columns', () => {
  // left out from the right with weight and usd kept, query summary lost grp: rows `day 62 …`, `model 369 …`
  for (const [query, keep] of [
    ['summary', ['grouping', 'grp']],
    ['report_components', ['grp', 'component']],
    ['write_read_ratio', ['agent_type', 'model', 'write_read_ratio']],
  ] as const) {
    const shown = onTerminal(['query', query, ...LOGS], 80);
    const header = shown.split('\n')[0]!.trim().split(/ +/);
    for (const h of keep) assert.ok(header.includes(h), `${query}: ${header.join(' ')} / ${note(shown)}`);
    assert.ok(widest(shown) <= 80, shown);
  }
  // sample-logs' repurchase: a 54-character chain id beside weight, waste_weight and waste_usd was 93 columns
  const repurchase = onTerminal(['query', 'repurchase', join(REPO, 'sample-logs'), '--db', ':memory:'], 80);
  assert.ok(widest(repurchase) <= 80, repurchase);
  assert.ok(repurchase.split('\n')[0]!.trim().startsWith('chain_id'), repurchase);
});

test('sessions at 80 says the zone of first and last only of those shown', () => {
  const shown = onTerminal(['sessions', ...LOGS], 80);
  const title = shown.split('\n')[0]!;
  const left = note(shown);
  for (const h of ['first', 'last']) {
    if (new RegExp(`[ ,]${h}[,;]`).test(left)) assert.ok(!new RegExp(`\\b${h}\\b`).test(title), `${title} / ${left}`);
  }
  assert.ok(/[ ,]first[,;]/.test(left) && /[ ,]last[,;]/.test(left), left);
  assert.equal(title, 'Sessions');
});

test('whatif keepalive at 80: no legend line for % subagent wt when it is left out', () => {
  const shown = onTerminal(['whatif', 'keepalive', ...LOGS], 80);
  assert.ok(note(shown).includes('% subagent wt'), note(shown));
  assert.ok(!shown.includes('% subagent wt: '), shown);
  assert.ok(cli(['whatif', 'keepalive', ...LOGS], { HOME: tempDir() }).stdout.includes('% subagent wt: '));
});

test('crosstab at 40 keeps its heaviest value column beside the totals', () => {
  const args = ['crosstab', ...LOGS, '--rows', 'project', '--cols', 'model', '--measure', 'weight'];
  const piped = cli(args, { HOME: tempDir() }).stdout;
  const shown = onTerminal(args, 40);
  const header = shown.split('\n')[1]!;
  // the heaviest model of these logs is claude-opus-4-6
  assert.ok(header.includes('claude-opus-4-6'), shown);
  assert.ok(piped.includes('claude-opus-4-6'));
});

test('crosstab with a ratio measure leaves out the columns of fewest chains, not of the smallest ratio', () => {
  const base = ['crosstab', ...LOGS, '--rows', 'project', '--cols', 'model'];
  const chains = onTerminal([...base, '--measure', 'chains'], 60);
  for (const m of ['hit_ratio', 'write_read_ratio']) {
    const shown = onTerminal([...base, '--measure', m], 60);
    assert.equal(shown.split('\n')[1]!.split('│')[0]!.trim().split(/ {2,}/).slice(1).join(','), chains.split('\n')[1]!.split('│')[0]!.trim().split(/ {2,}/).slice(1).join(','), `${m}: ${shown}`);
  }
});

test('replay session at 80 leaves out reinject and does not name its attachment in the header; piped, it does', () => {
  const args = ['replay', 'session', '1f517242', join(REPO, 'sample-logs'), '--db', ':memory:'];
  const piped = cli(args, { HOME: tempDir() }).stdout;
  assert.match(piped, / · reinject skill_listing \(/);
  const shown = onTerminal(args, 80);
  assert.ok(note(shown).includes('reinject'), shown);
  assert.ok(!/reinject skill_listing/.test(shown.replace(/\n/g, ' ')), shown);
});

test('summary at 40: a skipped line\'s path with spaces in it stays whole on stdout, as on stderr', () => {
  const root = join(tempDir(), 'my logs dir');
  mkdirSync(join(root, 'proj one'), { recursive: true });
  const file = join(root, 'proj one', 'sess ion file.jsonl');
  const sample = readdirSync(join(REPO, 'sample-logs', 'projects'), { withFileTypes: true }).find((d) => d.isDirectory())!;
  const dir = join(REPO, 'sample-logs', 'projects', sample.name);
  const first = readdirSync(dir).find((f) => f.endsWith('.jsonl'))!;
  writeFileSync(file, readFileSync(join(dir, first), 'utf8').split('\n').slice(0, 3).join('\n') + '\n{bad\n');
  const shown = onTerminal(['summary', root, '--db', ':memory:'], 40);
  assert.ok(shown.split('\n').some((l) => l.includes(`${file}:4`)), shown);
});
