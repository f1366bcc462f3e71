/**
 * The sample outputs README.md and docs/*.md show ("The outputs below are the commands' own") are the
 * commands' own: each is run with the built CLI on sample-logs/ and its text compared with the doc's.
 *
 * What is an output block. In a doc, an indented block (4 spaces, after a blank line) belongs to the
 * paragraph just above it. A block is a sample output when that paragraph begins with a command in
 * backticks, `` `cachelens summary sample-logs` (first table; …): ``, or mentions `sample-logs`.
 * The first kind is run, and a command that does not read `sample-logs` fails; a block of the second
 * kind, that names no command, must be in NOT_RUN below with the reason, as must a block that
 * cannot be reproduced (abridged with `…`, an illustration). So a block added to a doc under such a
 * paragraph is run without a change here, and EXPECTED_BLOCKS (checked in) lists them all, so that
 * a change to a doc's layout that hides a block from the extractor fails.
 *
 * How a block is matched. Its lines (the indent removed, trailing spaces ignored) must be a
 * contiguous run of the output's lines, blank lines included, that starts at the output's first
 * line or after a blank line and ends at its last line or before a blank line: a block may show
 * only some of the output's paragraphs (`summary`'s first table), never part of one (half a
 * table). A block has at least one line that is not blank, so it cannot match nothing.
 *
 * How it is run: `node dist/cli.js COMMAND --db :memory:` from the repository's root (`replay
 * channel` takes no --db), HOME a temp dir, NO_COLOR=1, no CLAUDE_CONFIG_DIR, TZ=UTC: `blocks`
 * shows its windows' times in the machine's zone (its title says `(UTC)`), and `summary`'s days
 * (its third table, not shown) are in it too; the other blocks' outputs are the same in every zone.
 *
 * On a mismatch the message shows the doc's lines against the output's nearest paragraphs as a
 * diff (`-` the doc, `+` the output), then the whole output indented, to paste into the doc.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { REPO, tempDir } from '../helpers/corpus.js';

/** A sample-output block of a doc: where it is, the command its paragraph names (null: none), its lines. */
export interface OutputBlock {
  file: string;
  line: number;
  intro: string;
  command: string | null;
  lines: string[];
}

/**
 * The sample-output blocks of one markdown text (see the header for the rule).
 * Example: "`cachelens crosstab sample-logs`:\n\n    a\n\n    b\n\nText" → one block at line 3,
 * command `cachelens crosstab sample-logs`, lines ['a', '', 'b'].
 */
export function outputBlocks(file: string, text: string): OutputBlock[] {
  const lines = text.split('\n');
  const blocks: OutputBlock[] = [];
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*```/.test(lines[i])) fenced = !fenced;
    if (fenced || !lines[i].startsWith('    ') || (i > 0 && lines[i - 1].trim() !== '')) continue;
    let end = i;
    for (let k = i; k < lines.length; k++) {
      if (lines[k].startsWith('    ')) end = k + 1;
      else if (lines[k].trim() !== '') break;
    }
    const body = lines.slice(i, end).map((l) => l.slice(4).trimEnd());
    // the paragraph above: back from the blank line before the block to a blank line or a heading
    const para: string[] = [];
    for (let k = i - 2; k >= 0 && lines[k].trim() !== '' && !lines[k].startsWith('    '); k--) {
      if (/^#/.test(lines[k])) break;
      para.unshift(lines[k].trim());
    }
    const intro = para.join(' ');
    const named = /^`(cachelens [^`]+)`/.exec(intro);
    if (named || intro.includes('sample-logs')) {
      blocks.push({ file, line: i + 1, intro, command: named ? named[1] : null, lines: body });
    }
    i = end - 1;
  }
  return blocks;
}

/** Blocks that are not run, by file and first line, with the reason. Keep it short: a block run is a block kept true. */
const NOT_RUN: { file: string; first: string; reason: string }[] = [
  {
    file: 'README.md',
    first: '{"totals": {"requests", "input", "output", "cache_write_5m", "cache_write_1h", "cache_read", "weight", "usd", "unpriced_requests"},',
    reason: "summary --json's keys, an abridged shape (…) rather than an output; test/commands/json-shapes.test.ts checks docs/json.md's shapes",
  },
];

/** The blocks the docs hold, by file and command (or `not run`), checked in so that a block the extractor stops finding fails. */
const EXPECTED_BLOCKS = [
  'README.md: not run',
  'README.md: cachelens summary sample-logs',
  'README.md: cachelens blocks sample-logs',
  'README.md: cachelens anatomy sample-logs',
  'README.md: cachelens whatif ttl sample-logs',
  'README.md: cachelens whatif keepalive sample-logs',
  'README.md: cachelens crosstab sample-logs',
  'README.md: cachelens replay channel sample-logs/channels/backend.jsonl',
  'docs/store.md: cachelens crosstab sample-logs',
];

function docs(): { file: string; text: string }[] {
  const inDocs = readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md'));
  const files = ['README.md', ...inDocs.sort().map((f) => `docs/${f}`)];
  return files.map((file) => ({ file, text: readFileSync(join(REPO, file), 'utf8') }));
}

/** Where `block` is a run of whole paragraphs of `output`, or -1. */
export function paragraphMatch(block: string[], output: string[]): number {
  for (let s = 0; s + block.length <= output.length; s++) {
    if (s > 0 && output[s - 1] !== '') continue;
    const e = s + block.length;
    if (e < output.length && output[e] !== '') continue;
    if (block.every((l, k) => output[s + k] === l)) return s;
  }
  return -1;
}

/** The longest-common-subsequence table of two lists of lines: t[i][j] is the LCS length of a[i..] and b[j..]. */
function lcs(a: string[], b: string[]): number[][] {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) t[i][j] = a[i] === b[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
  return t;
}

/** Splits lines into paragraphs: runs of non-blank lines, as [start, end) indices. */
function paragraphs(lines: string[]): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === '') continue;
    const s = i;
    while (i < lines.length && lines[i] !== '') i++;
    out.push([s, i]);
  }
  return out;
}

/**
 * A line diff of the block against the output's paragraphs most like it (as many paragraphs as the
 * block has, the run sharing most lines with it): ` ` both, `-` the doc only, `+` the output only.
 */
export function blockDiff(block: string[], output: string[]): string {
  const want = paragraphs(block).length;
  const paras = paragraphs(output);
  let best: string[] = [];
  let bestScore = -1;
  const n = Math.min(want, paras.length);
  for (let p = 0; p + n <= paras.length; p++) {
    const run = n ? output.slice(paras[p][0], paras[p + n - 1][1]) : [];
    const score = lcs(block, run)[0][0];
    if (score > bestScore) [best, bestScore] = [run, score];
  }
  const t = lcs(block, best);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < block.length || j < best.length) {
    if (i < block.length && j < best.length && block[i] === best[j]) {
      out.push(`  ${block[i++]}`);
      j++;
    } else if (i < block.length && (j === best.length || t[i + 1][j] >= t[i][j + 1])) out.push(`- ${block[i++]}`);
    else out.push(`+ ${best[j++]}`);
  }
  return out.join('\n');
}

const outputs = new Map<string, { code: number; stdout: string; stderr: string }>();
let home: string | undefined;

/** The command's output, run once per command (README and docs/store.md both show crosstab's). */
function run(command: string): { code: number; stdout: string; stderr: string } {
  const cached = outputs.get(command);
  if (cached) return cached;
  const args = command.split(/\s+/).slice(1);
  if (!(args[0] === 'replay' && args[1] === 'channel')) args.push('--db', ':memory:');
  home ??= tempDir('cachelens-readme-');
  const r = spawnSync(process.execPath, [join(REPO, 'dist/cli.js'), ...args], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, HOME: home, NO_COLOR: '1', TZ: 'UTC', CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: '' },
  });
  const result = { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  outputs.set(command, result);
  return result;
}

const found = docs().flatMap(({ file, text }) => outputBlocks(file, text));
const notRun = (b: OutputBlock) => NOT_RUN.some((n) => n.file === b.file && n.first === b.lines[0]);

describe('the extractor', () => {
  test('finds every sample-output block the docs hold, and no more', () => {
    assert.deepEqual(
      found.map((b) => `${b.file}: ${notRun(b) ? 'not run' : b.command}`),
      EXPECTED_BLOCKS,
      'a block was added or removed: update EXPECTED_BLOCKS (its output is checked below either way)',
    );
  });

  test('a block about sample-logs that names no command is listed as not run, with its reason', () => {
    for (const b of found.filter((b) => !b.command)) {
      assert.ok(
        notRun(b),
        `${b.file}:${b.line} shows a block under a paragraph about sample-logs that names no command: begin the paragraph with the command in backticks, or list the block in NOT_RUN with the reason (paragraph: ${b.intro})`,
      );
    }
    for (const n of NOT_RUN) {
      assert.ok(found.some((b) => n.file === b.file && n.first === b.lines[0]), `NOT_RUN lists a block no doc holds: ${n.file}: ${n.first}`);
    }
  });

  test('reads a paragraph that begins with a command and its block, blank lines inside it included', () => {
    const text = 'Intro.\n\n`cachelens crosstab sample-logs` — the\nsplit:\n\n    a\n\n      b\n\nAfter.\n\n    not output\n';
    assert.deepEqual(outputBlocks('x.md', text), [
      { file: 'x.md', line: 6, intro: '`cachelens crosstab sample-logs` — the split:', command: 'cachelens crosstab sample-logs', lines: ['a', '', '  b'] },
    ]);
    // a block under a heading, a fence or a paragraph that neither names a command nor sample-logs is not one
    assert.deepEqual(outputBlocks('x.md', '## `cachelens query`\n\n    cachelens query --list\n\nsample-logs:\n```\n\n    x\n```\n'), []);
    assert.equal(outputBlocks('x.md', 'On the bundled `sample-logs/`:\n\n    a\n')[0].command, null);
  });

  test('a block matches whole paragraphs of the output, never a part of one or nothing', () => {
    const output = ['T', 'a', 'b', '', 'c', 'd', '', 'e'];
    assert.equal(paragraphMatch(['T', 'a', 'b'], output), 0);
    assert.equal(paragraphMatch(['c', 'd', '', 'e'], output), 4);
    assert.equal(paragraphMatch(['a', 'b'], output), -1, 'part of a paragraph');
    assert.equal(paragraphMatch(['c'], output), -1, 'part of a paragraph');
    assert.equal(paragraphMatch(['c', 'x'], output), -1);
    assert.equal(blockDiff(['c', 'x'], output), '  c\n- x\n+ d');
  });
});

describe('the sample outputs in README.md and docs/*.md are the commands\' own', () => {
  for (const block of found) {
    if (!block.command || notRun(block)) continue; // listed in NOT_RUN with the reason, and checked above
    test(`${block.file}:${block.line} ${block.command}`, () => {
      assert.ok(block.lines.some((l) => l.trim() !== ''), 'an empty block');
      assert.ok(/(^| )sample-logs(\/| |$)/.test(block.command!), `the command does not read sample-logs: ${block.command}`);
      const r = run(block.command!);
      assert.equal(r.code, 0, `${block.command} exited ${r.code}: ${r.stderr}`);
      const output = r.stdout.split('\n').map((l) => l.trimEnd());
      if (paragraphMatch(block.lines, output) >= 0) return;
      assert.fail(
        `${block.file}:${block.line}: the block is not the output of \`${block.command}\` ` +
          `(- ${block.file}, + the output):\n${blockDiff(block.lines, output)}\n\n` +
          `The whole output, indented as the doc shows it:\n${output.map((l) => (l ? `    ${l}` : l)).join('\n')}`,
      );
    });
  }
});
