/**
 * Every line fits the terminal it is printed on: a representative set of commands run on a
 * pseudo-terminal 40 columns wide (util-linux's `script`) prints no line wider than 40 columns, its
 * tables cut and left out to fit and its headings' ids cut in their middle; piped, the same commands
 * print their ids whole, as before.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { displayWidth } from '../../src/format/table.js';
import { REAL_LOGS, REPO, cli, tempDir, writeCorpus } from '../helpers/corpus.js';
import { onTerminal } from '../helpers/terminal.js';

const SAMPLES = join(REPO, 'sample-logs');
const DB = ['--db', ':memory:', '--timezone', 'UTC'];
/** A sidechain of the real logs: its id is 78 columns, its session's 36. */
const SIDE = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b:side:f4ab2bf6-d642-431a-85cb-66691f24c404';
const SESSION = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b';

/** The lines of `text` wider than `cols` columns, each with its width. */
const wider = (text: string, cols: number) => text.split('\n').filter((l) => displayWidth(l) > cols).map((l) => `[${displayWidth(l)}] ${l}`);

test('at 40 columns no line of summary, crosstab, anatomy --chain, replay session, replay channel, query --list or a help text is wider than the terminal', () => {
  const runs: string[][] = [
    // summary's By model table: a model of 26 columns beside weight and USD was 46 wide; the model is cut last
    ['summary', REAL_LOGS, ...DB],
    ['crosstab', REAL_LOGS, ...DB],
    ['anatomy', REAL_LOGS, ...DB, '--chain', SIDE],
    ['replay', 'session', SIDE, REAL_LOGS, '--db', ':memory:'],
    ['replay', 'session', 'top', SAMPLES, '--db', ':memory:'],
    ['replay', 'channel', join(SAMPLES, 'channels/backend.jsonl')],
    ['query', '--list'],
    ['--help'],
    ['anatomy', '--help'],
    ['whatif', 'keepalive', '--help'],
  ];
  for (const args of runs) {
    const shown = onTerminal(args, 40);
    assert.ok(shown.trim().length > 0, args.join(' '));
    assert.deepEqual(wider(shown, 40), [], `${args.join(' ')} at 40 columns:\n${shown}`);
  }
  // an unknown command with --help: one line of error, wrapped to the terminal
  const error = onTerminal(['cache', '--help'], 40, {}, 'stderr', 2);
  assert.deepEqual(wider(error, 40), [], error);
  assert.match(error.replace(/\n/g, ' '), /^cachelens: Unknown argument: cache \(cachelens --help lists the commands\)\s*$/);
});

test('anatomy\'s measure table (65 columns and more) fits a narrower terminal: USD left out and said, then its labels cut in their middle; piped it is whole', () => {
  const measure = (text: string) => {
    const lines = text.split('\n');
    const from = lines.findIndex((l) => /^measure\s/.test(l));
    assert.ok(from >= 0, text);
    const to = lines.findIndex((l, i) => i > from && l === '');
    return lines.slice(from, to);
  };
  const piped = cli(['anatomy', REAL_LOGS, ...DB], { HOME: tempDir() });
  assert.equal(piped.code, 0, piped.stderr);
  const whole = measure(piped.stdout);
  assert.ok(Math.max(...whole.map(displayWidth)) >= 65, whole.join('\n'));
  assert.ok(whole.some((l) => l.startsWith('waste (rewrites beyond a read)')));
  for (const cols of [40, 50, 60]) {
    const table = measure(onTerminal(['anatomy', REAL_LOGS, ...DB], cols));
    assert.deepEqual(wider(table.join('\n'), cols), [], `${cols} columns:\n${table.join('\n')}`);
    // USD (of two rows) is left out first, and said under the table
    assert.ok(!table[0]!.includes('USD'), table.join('\n'));
    assert.match(table.join(' '), /\(not shown: USD; see --wide or --json\)/);
    // every value is still there: the waste's share, the hit ratio and the write:read ratio
    for (const value of ['4.6% of weight', '97.2%', '0.40 : 1', '8,734,584']) assert.ok(table.some((l) => l.includes(value)), `${cols}: ${value}\n${table.join('\n')}`);
  }
  // at 60 the labels are whole; at 40 cut in their middle, their ends kept
  assert.ok(measure(onTerminal(['anatomy', REAL_LOGS, ...DB], 60)).some((l) => l.startsWith('waste (rewrites beyond a read)')));
  assert.ok(measure(onTerminal(['anatomy', REAL_LOGS, ...DB], 40)).some((l) => /^waste .*….* read\) /.test(l)));
});

test('anatomy --chain\'s heading and replay session\'s cut a long id in its middle to the terminal\'s width on a terminal, never piped', () => {
  const chain = ['anatomy', REAL_LOGS, ...DB, '--chain', SIDE];
  const replay = ['replay', 'session', SIDE, REAL_LOGS, '--db', ':memory:'];
  for (const cols of [40, 60]) {
    const shown = onTerminal(chain, cols);
    // the heading: the lines above the request table (whose header begins ' #')
    const head = shown.slice(0, shown.indexOf('\n #'));
    assert.deepEqual(wider(head, cols), [], head);
    // the id's two ends kept, its middle cut: a heading line of the id alone, as the wrap left it
    const cut = head.split('\n').find((l) => l.includes('…') && l.startsWith(SIDE.slice(0, 12)));
    assert.ok(cut && cut.endsWith(SIDE.slice(-12)), head);
    assert.ok(head.includes(SESSION), head);
    const title = onTerminal(replay, cols).split('\n').slice(0, 3).join('\n');
    assert.deepEqual(wider(title, cols), [], title);
    assert.ok(title.includes(SIDE.slice(0, 8)) && title.includes(SIDE.slice(-8)) && !title.includes(SIDE), title);
  }
  // piped: whole, as before
  const piped = cli(chain, { HOME: tempDir() });
  assert.equal(piped.code, 0, piped.stderr);
  assert.ok(piped.stdout.split('\n').some((l) => l.startsWith('Filtered') === false && l.includes(`Chain ${SIDE} (`)), piped.stdout);
  const pipedReplay = cli(replay, { HOME: tempDir() });
  assert.equal(pipedReplay.code, 0, pipedReplay.stderr);
  assert.ok(pipedReplay.stdout.startsWith(`Session replay · chain ${SIDE} (`), pipedReplay.stdout);
  // --wide: the heading as piped, wrapped to the terminal
  assert.ok(onTerminal([...chain, '--wide'], 40).includes(SIDE));
});

test('a label is cut only where that makes its table fit: sample-logs (with +? marks) at 40 columns, each table fits or cuts no label', () => {
  const runs: string[][] = [
    ['summary', SAMPLES, ...DB],
    ['anatomy', SAMPLES, ...DB],
    ['whatif', 'ttl', SAMPLES, ...DB],
    ['whatif', 'keepalive', SAMPLES, ...DB],
    ['summary', REAL_LOGS, ...DB],
  ];
  for (const args of runs) {
    const shown = onTerminal(args, 40);
    assert.ok(shown.includes('+?') || args.includes(REAL_LOGS), args.join(' '));
    // each table (a block between blank lines) fits, or cuts nothing ('…'): a label cut and its table wider than the terminal hid it for nothing
    for (const block of shown.split(/\n\s*\n/)) {
      if (wider(block, 40).length === 0) continue;
      // an id (its first 8 hex digits kept) or a path may be cut as ever; a label (a model, a measure, a bucket) not
      const cut = block.split(/\s+/).filter((w) => w.includes('…') && !/^(\/|[0-9a-f]{8}…)/.test(w));
      assert.deepEqual(cut, [], `${args.join(' ')}: a table too wide with a label cut:\n${block}`);
    }
  }
  // summary's By model at 40 over the sample's models (52 wide): whole, each model as piped
  const summary = onTerminal(['summary', SAMPLES, ...DB], 40);
  assert.ok(summary.includes('claude-sonnet-4-5-20250929 '), summary);
});

test('labels cut to fit stay distinct: a Sonnet and a Haiku of one date are never cut to one label', () => {
  const lines: object[] = [];
  let i = 0;
  for (const [k, model] of ['claude-3-5-sonnet-20241022', 'claude-3-5-haiku-20241022'].entries()) {
    for (let j = 0; j < 3; j++) {
      i++;
      lines.push({
        type: 'assistant', sessionId: `s${k}`, cwd: '/p', timestamp: new Date(Date.UTC(2025, 2, 1, 10) + i * 6e4).toISOString(), requestId: `r${i}`,
        message: { id: `m${i}`, model, role: 'assistant', content: [], usage: { input_tokens: 123456, output_tokens: 23456, cache_creation_input_tokens: 345678, cache_read_input_tokens: 4567890 } },
      });
    }
  }
  const root = writeCorpus({ 'projects/p/s.jsonl': lines });
  for (const args of [['summary'], ['whatif', 'ttl'], ['whatif', 'keepalive']]) {
    const shown = onTerminal([...args, join(root, 'projects'), ...DB], 40);
    const labels = shown.split('\n').map((l) => l.match(/(?:^|\s)(claude-3-5\S*)/)?.[1]).filter((l): l is string => l !== undefined);
    // each table names each model once: no two of its rows read the same
    for (const block of shown.split(/\n\s*\n/)) {
      const rows = block.split('\n').map((l) => l.match(/(?:^|\s)(claude-3-5\S*)/)?.[1]).filter((l): l is string => l !== undefined);
      assert.equal(new Set(rows).size, rows.length, `${args.join(' ')}:\n${block}`);
    }
    assert.ok(labels.length >= 2, `${args.join(' ')}:\n${shown}`);
  }
});

test('replay session\'s heading at 40 columns cuts the chain id once in its middle, as anatomy --chain\'s does: replay session and anatomy --chain take the id printed back', () => {
  const title = onTerminal(['replay', 'session', SIDE, REAL_LOGS, '--db', ':memory:'], 40).split('\n').slice(0, 3).join('\n');
  const heads = onTerminal(['anatomy', REAL_LOGS, ...DB, '--chain', SIDE], 40);
  for (const shown of [title, heads.slice(0, heads.indexOf('\n #'))]) {
    const cut = shown.split(/\s+/).filter((w) => w.includes('…') && w.startsWith(SIDE.slice(0, 8)));
    assert.equal(cut.length, 1, shown);
    // one '…': its head and tail, as a table's cut id is
    assert.equal(cut[0]!.split('…').length, 2, shown);
    const replay = cli(['replay', 'session', cut[0]!, REAL_LOGS, '--db', ':memory:'], { HOME: tempDir() });
    assert.equal(replay.code, 0, replay.stderr);
    assert.ok(replay.stdout.startsWith(`Session replay · chain ${SIDE} (`), replay.stdout);
    const chain = cli(['anatomy', REAL_LOGS, ...DB, '--chain', cut[0]!], { HOME: tempDir() });
    assert.equal(chain.code, 0, chain.stderr);
    assert.ok(chain.stdout.includes(`Chain ${SIDE} (`), chain.stdout);
  }
});

test('anatomy --chain\'s heading with an agent type of 56 columns fits 40: the type is cut to leave room for the ( and , around it', () => {
  const root = tempDir();
  cpSync(SAMPLES, root, { recursive: true });
  const meta = join(root, 'projects/-home-USER-projects-spotter-lite/e58378b6-618d-4c3d-95c3-ee87a7182497/subagents/agent-a3e09915aeac3e715.meta.json');
  const type = 'an-agent-type-of-fifty-six-columns-'.padEnd(56, 'x');
  writeFileSync(meta, JSON.stringify({ ...JSON.parse(readFileSync(meta, 'utf8')), agentType: type }));
  const args = ['anatomy', join(root, 'projects'), ...DB, '--chain', 'a3e09915aeac3e715'];
  const piped = cli(args, { HOME: tempDir() });
  assert.equal(piped.code, 0, piped.stderr);
  assert.ok(piped.stdout.includes(`(${type}, subagent)`), piped.stdout);
  const shown = onTerminal(args, 40);
  const head = shown.slice(0, shown.indexOf('\n #'));
  assert.ok(head.includes(`(${type.slice(0, 10)}`), head);
  assert.deepEqual(wider(head, 40), [], head);
});

test('replay channel\'s heading at 40 columns cuts a long channel id so that the · after it ends its line, as the wrap keeps it', () => {
  const root = tempDir();
  const log = join(root, 'a-channel-whose-name-is-quite-a-lot-longer-than-forty-columns.jsonl');
  cpSync(join(SAMPLES, 'channels/backend.jsonl'), log);
  const head = onTerminal(['replay', 'channel', log], 40).split('\n').slice(0, 3);
  assert.deepEqual(wider(head.join('\n'), 40), [], head.join('\n'));
  const id = head.find((l) => l.startsWith('#a-channel'));
  assert.ok(id?.includes('…') && id.endsWith(' ·'), head.join('\n'));
  assert.ok(!head.some((l) => l.startsWith('·')), head.join('\n'));
});
