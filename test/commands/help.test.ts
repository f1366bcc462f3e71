/** `--help` of every command and subcommand explains every option it lists: none is a bare flag and its type. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commands } from '../../src/commands/index.js';
import { type Command, FLAG_OPTIONS, GLOBAL_FLAGS } from '../../src/commands/command.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yargs from 'yargs';
import { REPO, cli } from '../helpers/corpus.js';
import { tempDir } from '../helpers/temp.js';

function invocations(list: Command[], prefix: string[] = []): string[][] {
  return list.flatMap((c) => {
    const words = [...prefix, c.command.split(' ')[0]!];
    return c.subcommands ? invocations(c.subcommands, words) : [words];
  });
}

test('every option in every command\'s --help has a description', () => {
  for (const words of invocations(commands)) {
    const r = cli([...words, '--help'], { COLUMNS: '100' });
    assert.equal(r.code, 0, r.stderr);
    // an option without a description: the flag, then only spaces up to its [type]
    const bare = r.stdout.split('\n').filter((l) => /^\s+(-\w, )?--[\w-]+\s+\[/.test(l));
    assert.deepEqual(bare, [], `${words.join(' ')} --help`);
  }
});

test('a flag before the command is a flag: every boolean option of every command is one the CLI declares above the commands', () => {
  // GLOBAL_FLAGS (--wide) are declared above the commands for every one of them
  const flags = new Set<string>([...FLAG_OPTIONS, ...GLOBAL_FLAGS]);
  for (const words of invocations(commands)) {
    const r = cli([...words, '--help'], { COLUMNS: '100' });
    const booleans = r.stdout.split('\n').flatMap((l) => /^\s+(?:-\w, )?--([\w-]+)\s.*\[boolean\]/.exec(l)?.[1] ?? []);
    assert.ok(booleans.includes('help'), words.join(' '));
    for (const b of booleans) assert.ok(b === 'help' || b === 'version' || flags.has(b), `${words.join(' ')} --${b} is not in FLAG_OPTIONS (src/commands/command.ts)`);
  }
  // the flag before the command, the command's own options after it
  const args = [join(REPO, 'sample-logs'), '--db', ':memory:', '--since', '2026-02-11', '--timezone', 'UTC'];
  const before = cli(['--json', 'summary', ...args]);
  const after = cli(['summary', ...args, '--json']);
  assert.equal(before.code, 0, before.stderr);
  assert.ok((JSON.parse(before.stdout) as { totals: { requests: number } }).totals.requests > 0);
  assert.equal(before.stdout, after.stdout);
  // --wide, before the command or after it, takes no value: the next word is the command
  const wide = cli(['--wide', 'summary', ...args]);
  assert.equal(wide.code, 0, wide.stderr);
  assert.equal(wide.stdout, cli(['summary', ...args, '--wide']).stdout);
  assert.equal(cli(['summary', ...args, '--wide=1']).code, 2);
});

test('[paths..] in --help names the default roots as they are read: CLAUDE_CONFIG_DIR, else XDG\'s and ~/.claude', () => {
  // it said "CLAUDE_CONFIG_DIR, ~/.config/claude, ~/.claude", as if all three were read and XDG_CONFIG_HOME were not
  for (const words of [['summary'], ['report'], ['replay', 'session']]) {
    const r = cli([...words, '--help'], { COLUMNS: '100' });
    assert.equal(r.code, 0, r.stderr);
    const text = r.stdout.replace(/\s+/g, ' ');
    assert.match(text, /\(default: the roots in CLAUDE_CONFIG_DIR, comma-separated, else \$XDG_CONFIG_HOME\/claude \(~\/\.config\/claude\) and ~\/\.claude\)/, words.join(' '));
  }
});

test('--version prints the version of package.json, alone or after a command, and exits 0', () => {
  // it was no option at all: `cachelens --version` said 'name a command (see --help)', exit 2
  const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
  for (const args of [['--version'], ['summary', '--version']]) {
    const r = cli(args, { HOME: tempDir('cachelens-version-') });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, `${version}\n`);
    assert.equal(r.stderr, '');
  }
  assert.match(cli(['--help']).stdout, /--version\s+show the version/);
});

test('defaults in --help are written bare, as --rows and --cols show theirs: [default: chains], not [default: "chains"]', () => {
  // crosstab showed [default: definition] beside [default: "chains"] and [default: "all"]
  for (const words of invocations(commands)) {
    const r = cli([...words, '--help'], { COLUMNS: '100' });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /\[default: "/, words.join(' '));
  }
  assert.match(cli(['crosstab', '--help'], { COLUMNS: '100' }).stdout, /\[default: chains\]/);
});

/** Each command (subcommands as their own) with its words on the command line and its declared options. */
function declared(list: Command[], prefix: string[] = []): { words: string[]; command: Command }[] {
  return list.flatMap((c) => {
    const words = [...prefix, c.command.split(' ')[0]!];
    return c.subcommands ? declared(c.subcommands, words) : [{ words, command: c }];
  });
}

test('every option that takes a value, given without one, is the one-line error summary --pricing gives, never its default run silently', () => {
  // replay session --pricing (and --db) said '--pricing: expected a file name', whatif ttl --to and --scope,
  // whatif keepalive --scope, crosstab --kind and --measure ran their defaults without a word, crosstab --rows
  // said '--rows : not a dimension', query --parquet and export --parquet 'expected a directory name'
  const home = tempDir('cachelens-bare-');
  const positional: Record<string, string[]> = { 'replay channel': [join(REPO, 'sample-logs/channels/backend.jsonl')], 'replay session': ['top'], query: ['sessions'] };
  let checked = 0;
  for (const { words, command } of declared(commands)) {
    const options = (command.options!(yargs([])) as unknown as { getOptions(): { string: string[]; choices: Record<string, unknown>; narg: Record<string, number> } }).getOptions();
    const positionals = new Set([...command.command.matchAll(/[<[]([\w-]+)(?:\.\.)?[>\]]/g)].map((m) => m[1]!));
    const valued = [...options.string, ...Object.keys(options.choices)].filter((o) => !positionals.has(o));
    for (const option of valued) {
      // requiresArg (NaN) or nargs 1: yargs refuses the flag alone
      assert.ok(option in options.narg, `${words.join(' ')} --${option} takes a value but not requiresArg`);
      const r = cli([...words, ...(positional[words.join(' ')] ?? []), `--${option}`], { HOME: home });
      assert.equal(r.code, 2, `${words.join(' ')} --${option}: ${r.stderr}`);
      assert.equal(r.stdout, '', `${words.join(' ')} --${option}`);
      assert.equal(r.stderr, `cachelens: Not enough arguments following: ${option}\n`, `${words.join(' ')} --${option}`);
      checked++;
    }
  }
  assert.ok(checked > 60, `${checked} options checked`);
});

test('--help lists each command\'s positionals in the order its usage line gives them', () => {
  for (const name of ['query', 'replay session']) {
    const help = cli([...name.split(' '), '--help']).stdout;
    const usage = [...help.split('\n')[0]!.matchAll(/[<[](\w+)(?:\.\.)?[>\]]/g)].map((m) => m[1]);
    const section = help.slice(help.indexOf('Positionals:'), help.indexOf('Options:'));
    const listed = [...section.matchAll(/^ {2}(\w+) /gm)].map((m) => m[1]);
    assert.deepEqual(listed, usage, `${name} --help`);
  }
});

test('README\'s command table and its list of the options every command takes name each command\'s --help options, and no other', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  // the options the paragraph above the table says every command that reads logs takes, and the commands that take only some
  const paragraph = readme.slice(readme.indexOf('Every command that reads logs takes'), readme.indexOf('Every command takes `--wide`'));
  const common = new Set(['--json', '--since', '--until', '--project', '--timezone', '--db', '--pricing', '--rebuild']);
  for (const o of common) assert.ok(paragraph.includes(o), `${o} in README's paragraph`);
  const only = new Map([...paragraph.matchAll(/`((?:start|replay \w+))`\s+(?:takes\s+)?only\s+((?:`--[\w-]+`(?:,\s+|\s+and\s+)?)+)/g)].map((m) => [m[1]!, new Set(m[2]!.match(/--[\w-]+/g))]));
  // the usage cells of the table: `cachelens CMD [options]`, one per command
  const rows = new Map<string, Set<string>>();
  for (const line of readme.split('\n')) {
    const cell = /^\| (.*?) \| /.exec(line)?.[1];
    if (cell === undefined) continue;
    for (const m of cell.matchAll(/`(?:npm start \/ )?cachelens ([a-z]+(?: (?:ttl|keepalive|channel|session))?)([^`]*)`/g)) rows.set(m[1]!, new Set([...(m[2]!.match(/--[a-z][\w-]*/g) ?? []), ...(m[1] === 'query' ? ['--list'] : [])]));
  }
  for (const words of invocations(commands)) {
    const cmd = words.join(' ');
    const row = rows.get(cmd);
    assert.ok(row, `README's table has a row for cachelens ${cmd}`);
    const help = cli([...words, '--help'], { COLUMNS: '100' }).stdout;
    const listed = new Set([...help.matchAll(/^\s+(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1]!).filter((o) => !['--version', '--help', '--wide'].includes(o)));
    const takes = only.get(cmd) ?? common;
    for (const o of row) assert.ok(listed.has(o), `README names cachelens ${cmd} ${o}, which its --help does not list`);
    for (const o of listed) assert.ok(row.has(o) || takes.has(o), `cachelens ${cmd} --help lists ${o}, which README's row and paragraph do not name`);
    for (const o of takes) assert.ok(listed.has(o), `README says cachelens ${cmd} takes ${o}, which its --help does not list`);
  }
});

test('anatomy --chain\'s --help says what it prints as README does: the chain request by request (one row per request), not round by round', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const example = /anatomy --chain \S+\s+# one chain (\w+ by \w+)/.exec(readme);
  assert.ok(example, 'README\'s example of anatomy --chain says what it prints');
  const help = cli(['anatomy', '--help'], { COLUMNS: '200' }).stdout;
  const chain = /^\s+--chain\s+(.*)$/m.exec(help)?.[1] ?? '';
  assert.match(chain, new RegExp(`one chain ${example[1]}`), `anatomy --help's --chain: ${chain}`);
});

test('a default README\'s command table writes in an option\'s cell (`[--interval 270]`, the first of `[--to 1h|5m]`) is the one its --help gives', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  let checked = 0;
  for (const line of readme.split('\n')) {
    const cell = /^\| (.*?) \| /.exec(line)?.[1];
    if (cell === undefined) continue;
    for (const m of cell.matchAll(/`(?:npm start \/ )?cachelens ([a-z]+(?: (?:ttl|keepalive|channel|session))?)([^`]*)`/g)) {
      // `[--opt VALUE]` where VALUE, or its first alternative, is a value, not a placeholder (N, FILE, ID, k=v)
      for (const [, option, value] of m[2]!.matchAll(/\[(--[a-z][\w-]*) ([^\]\s]+)\]/g)) {
        const first = value!.split('\\|')[0]!;
        if (!/^[a-z0-9@][\w@.-]*$/.test(first) || first.includes('=')) continue;
        const help = cli([...m[1]!.split(' '), '--help'], { COLUMNS: '300' }).stdout;
        // the option's line and the lines under it that yargs wraps its choices and default onto
        const row = (new RegExp(`^\\s+${option}\\s+(.*(?:\\n {10,}.*)*)`, 'm').exec(help)?.[1] ?? '').replace(/\s+/g, ' ');
        const given = /\[default: ([^\]]+)\]/.exec(row)?.[1] ?? /\(default:? ([^;)\s]+)/.exec(row)?.[1];
        assert.equal(given, first, `README's cachelens ${m[1]} [${option} ${value}]: its --help says ${row}`);
        checked++;
      }
    }
  }
  assert.ok(checked >= 10, `${checked} defaults checked`);
});
