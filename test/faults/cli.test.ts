/**
 * Bad invocations (SPEC §8): a bad --pricing file, an unknown flag or command, a missing path, a
 * flag without its value. Each ends in exactly one stderr line that names the problem, nothing
 * on stdout, and exit code 2 — never a stack trace, never a run that silently ignores the flag.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { assistant, cliPath, pricingSetup, removeDir, repoRoot, runCli, tempDir, usage, usageError, writeLog } from './helpers.js';

test('bad --pricing files: missing, a directory, not JSON, empty, an array, no models, wrong types, zero, negative or absurd prices', async (t) => {
  const { dir, logs, file } = pricingSetup(t);
  mkdirSync(path.join(dir, 'prices-dir'));
  const cases: [string, RegExp][] = [
    [path.join(dir, 'nope.json'), /--pricing .*nope\.json: no such file/],
    [path.join(dir, 'prices-dir'), /--pricing .*prices-dir: EISDIR/],
    [file('trunc.json', '{"models": {"claude-opus-4-6": {"input": 5,'), /--pricing .*trunc\.json: .*JSON/],
    [file('empty.json', ''), /--pricing .*empty\.json: Unexpected end of JSON input/],
    [file('array.json', '[1,2]'), /--pricing .*array\.json: expected a JSON object/],
    [file('none.json', '{"models": {}}'), /--pricing .*none\.json: no model prices found/],
    [file('litellm-none.json', '{"gpt-x": {"mode": "chat"}}'), /--pricing .*litellm-none\.json: no model prices found/],
    [file('string.json', '{"models": {"m": {"input": "5", "output": 25}}}'), /--pricing .*string\.json: m\.input must be a number above 0$/],
    // a negative input price said as 0 is (it read 'must be a non-negative number', and 0 'must be above 0'; review)
    [file('negative-input.json', '{"models": {"m": {"input": -1, "output": 25}}}'), /--pricing .*negative-input\.json: m\.input must be a number above 0$/],
    [file('negative.json', '{"models": {"m": {"input": 5, "output": -25}}}'), /--pricing .*negative\.json: m\.output must be a non-negative number/],
    [file('zero.json', '{"models": {"claude-opus-4-6": {"input": 0, "output": 25}}}'), /--pricing .*zero\.json: claude-opus-4-6\.input must be a number above 0$/],
    [file('model.json', '{"models": {"m": 5}}'), /--pricing .*model\.json: model m is not an object/],
    // finite but beyond any price: infinite weights, or sums past the store's DECIMAL(38, 15)
    [file('huge.json', '{"models": {"claude-opus-4-6": {"input": 1e30, "output": 1e30}}}'), /--pricing .*huge\.json: claude-opus-4-6\.input must be at most 1000000 \(USD per million tokens\)$/],
    [file('tiny.json', '{"models": {"claude-opus-4-6": {"input": 5e-324, "output": 25}}}'), /--pricing .*tiny\.json: claude-opus-4-6\.output is more than a million times claude-opus-4-6\.input$/],
    [file('huge-lc.json', '{"models": {"m": {"input": 1, "output": 5, "long_context": {"above": 1, "input": 2, "output": 1e300}}}}'), /--pricing .*huge-lc\.json: m\.long_context\.output must be at most 1000000/],
    [file('tiny-lc.json', '{"models": {"m": {"input": 1e-9, "output": 1e-9, "long_context": {"above": 1, "input": 1000, "output": 1000}}}}'), /--pricing .*tiny-lc\.json: m\.long_context\.input is more than a million times m\.input$/],
    [file('litellm-huge.json', '{"claude-opus-4-6": {"input_cost_per_token": 5e-6, "output_cost_per_token": 1e20}}'), /--pricing .*litellm-huge\.json: no model prices found/],
    // JSON.parse's message quotes the text, line breaks and all: still one line, whole
    [file('text.json', 'not json\nat all\n'), /--pricing .*text\.json: Unexpected token 'o', "not json at all ?" is not valid JSON$/],
    // NULs or other control bytes are quoted as ?, not written raw to the terminal
    [file('nul.json', '\u0000\u0000{\u001b[31m'), /--pricing .*nul\.json: Unexpected token '\?', "\?\?\{\?\[31m" is not valid JSON$/],
    // a device or pipe with no end is read up to a bound, not until memory runs out
    ['/dev/zero', /--pricing \/dev\/zero: larger than 256 MiB: no price table$/],
  ];
  for (const [pricing, expected] of cases) await usageError(['summary', logs, '--db', ':memory:', '--pricing', pricing], expected);
});

test('unknown flags and commands, missing paths and flags without a value: one line, exit 2', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  await usageError(['summary', logs, '--db', ':memory:', '--bogus'], /Unknown argument: bogus/);
  await usageError(['summary', logs, '--db', ':memory:', '--jsn'], /Unknown argument: jsn/);
  await usageError(['frobnicate'], /Unknown argument: frobnicate/);
  // a hyphenated flag is named once, as typed: yargs named it camel-cased too ('Unknown arguments: foo-bar, fooBar')
  await usageError(['summary', logs, '--db', ':memory:', '--foo-bar'], /^cachelens: Unknown argument: foo-bar$/);
  await usageError(['summary', logs, '--db', ':memory:', '--foo-bar=1', '--baz-qux'], /^cachelens: Unknown arguments: foo-bar, baz-qux$/);
  await usageError(['summary', logs, '--db', ':memory:', '--no-foo-bar'], /^cachelens: Unknown argument: no-foo-bar$/);
  await usageError(['summary', logs, '--db', ':memory:', '--fooBar'], /^cachelens: Unknown argument: fooBar$/);
  await usageError(['start', '--foo-bar'], /^cachelens: Unknown argument: foo-bar$/);
  await usageError(['summary', '--foo-bar', '-v'], new RegExp(`^cachelens: Unknown arguments: foo-bar, v \\(cachelens has no verbose mode`));
  // the did-you-mean of a command named wrong is kept
  await usageError(['sumary', '--foo-bar'], /^cachelens: Unknown argument: sumary \(did you mean summary\?\)$/);
  // -v and -V, many tools' version flag, said only 'name a command (see --help)'
  await usageError(['-v'], /^cachelens: Unknown argument: v \(did you mean --version\?\)$/);
  await usageError(['-V'], /^cachelens: Unknown argument: V \(did you mean --version\?\)$/);
  // with a command, -v is most likely verbose, which cachelens has not: `-v summary` said 'name a command (see --help)'
  // (yargs took summary for -v's value), `summary -v` only 'Unknown argument: v'
  const noVerbose = (cmd: string, flag = '-v') => `\\(cachelens has no verbose mode: give ${cmd} without ${flag}; --version shows the version\\)$`;
  await usageError(['summary', logs, '--db', ':memory:', '-v'], new RegExp(`^cachelens: Unknown argument: v ${noVerbose('summary')}`));
  await usageError(['-v', 'summary'], new RegExp(`^cachelens: Unknown argument: v ${noVerbose('summary')}`));
  await usageError(['-V', 'summary', logs, '--db', ':memory:'], new RegExp(`^cachelens: Unknown argument: V ${noVerbose('summary', '-V')}`));
  await usageError(['-vv', 'whatif', 'ttl'], new RegExp(`^cachelens: Unknown argument: v ${noVerbose('whatif ttl')}`));
  await usageError(['-vV', 'summary'], new RegExp(`^cachelens: Unknown argument: v ${noVerbose('summary')}`));
  await usageError(['--verbose', 'report', logs], new RegExp(`^cachelens: Unknown argument: verbose ${noVerbose('report', '--verbose')}`));
  await usageError(['--verbose'], /^cachelens: Unknown argument: verbose \(cachelens has no verbose mode; --version shows the version\)$/);
  // -v is a flag, never the value of one: before a required positional it took that for its value ('missing <file>')
  await usageError(['replay', 'channel', '-v', logs], new RegExp(`^cachelens: Unknown argument: v ${noVerbose('replay channel')}`));
  await usageError(['replay', 'session', '-v', 'abc', '--db', ':memory:'], new RegExp(`^cachelens: Unknown argument: v ${noVerbose('replay session')}`));
  // beside other problems, yargs' message is kept whole, the verbose hint added: it said only 'Unknown argument: v'
  await usageError(['summary', '--jsn', '-v'], new RegExp(`^cachelens: Unknown arguments: jsn, v ${noVerbose('summary')}`));
  await usageError(['summary', '-v', '--to', '2h'], new RegExp(`^cachelens: Unknown arguments: to, v ${noVerbose('summary')}`));
  await usageError(['whatif', 'tll', '-v'], /^cachelens: Unknown arguments: tll, v \(did you mean ttl\?; cachelens has no verbose mode; --version shows the version\)$/);
  await usageError(['whatif', 'ttl', '-v', '--to', '2h'], new RegExp(`^cachelens: --to 2h: expected one of 1h, 5m ${noVerbose('whatif ttl')}`));
  // --help after a command that is not one printed cachelens' own help, exit 0, as if it were; one close to a command
  // there is named as without help (`summry`: did you mean summary?), in every form of help; another is sent to the list
  for (const help of [['--help'], ['-h'], ['--help=true'], ['--h'], ['help'], ['-h=1']]) {
    await usageError(['summry', ...help], /^cachelens: Unknown argument: summry \(did you mean summary\?\)$/);
    await usageError(['--json', 'whatif', 'tll', ...help], /^cachelens: Unknown argument: tll \(did you mean ttl\?\)$/);
    await usageError(['replay', '--json', 'sesion', ...help], /^cachelens: Unknown argument: sesion \(did you mean session\?\)$/);
  }
  await usageError(['--help', 'summry'], /^cachelens: Unknown argument: summry \(did you mean summary\?\)$/);
  await usageError(['whatif', 'bogusword', '--help'], /^cachelens: Unknown argument: bogusword \(cachelens whatif --help lists the commands\)$/);
  await usageError(['replay', '--json', 'xyzzyq', '--help'], /^cachelens: Unknown argument: xyzzyq \(cachelens replay --help lists the commands\)$/);
  // every other way yargs reads as help printed cachelens' own help, exit 0: `cache --help=true`, `cache --h`, `--help cache` (--help taken for a flag's value), `cache help`
  for (const args of [['cache', '--help'], ['cache', '--help=true'], ['cache', '--h'], ['--help', 'cache'], ['-h', 'cache'], ['cache', 'help'], ['--wide', 'cache', '-h=1']]) {
    await usageError(args, /^cachelens: Unknown argument: cache \(cachelens --help lists the commands\)$/);
  }
  for (const args of [['--help'], ['help'], ['summary', logs, '--help'], ['whatif', '--help'], ['--db', 'x.duckdb', '--help'], ['query', 'cost_by', '--help']]) {
    const r = await runCli(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, /^cachelens /, args.join(' '));
  }
  // `cachelens help summary` is summary's help, as `summary --help` (it said `Unknown argument: help`)
  for (const command of [['summary'], ['replay', 'session'], ['whatif', 'ttl']]) {
    const asked = await runCli(['help', ...command]);
    const given = await runCli([...command, '--help']);
    assert.equal(asked.code, 0, asked.stderr);
    assert.equal(asked.stdout, given.stdout, command.join(' '));
    assert.match(asked.stdout, new RegExp(`^cachelens ${command.join(' ')} `));
  }
  // and a word close to a command after `help` names the command meant (it said `Unknown arguments: help, summry`)
  await usageError(['help', 'summry'], /^cachelens: Unknown argument: summry \(did you mean summary\?\)$/);
  await usageError(['help', 'replay', 'sesion'], /^cachelens: Unknown argument: sesion \(did you mean session\?\)$/);
  await usageError(['help', 'whatif', 'bogusword'], /^cachelens: Unknown argument: bogusword \(cachelens whatif --help lists the commands\)$/);
  const helpHelp = await runCli(['help', 'help']);
  assert.equal(helpHelp.code, 0, helpHelp.stderr);
  assert.match(helpHelp.stdout, /^cachelens /);
  // what follows -- was dropped: `summary -- LOGS` read the default roots instead, `-- summary` ran nothing, exit 0
  const afterDashes = /^cachelens: --: cachelens reads nothing after -- \(give the command and its paths without it; a path that begins with - as \.\/-name\)$/;
  await usageError(['--', 'summary'], afterDashes);
  await usageError(['summary', '--db', ':memory:', '--', logs], afterDashes);
  // a command close to a known one: yargs' suggestion alone ('Did you mean blocks?') named no problem
  await usageError(['bogus'], /^cachelens: Unknown argument: bogus \(did you mean blocks\?\)$/);
  await usageError(['summry', logs, '--db', ':memory:'], /^cachelens: Unknown argument: summry \(did you mean summary\?\)$/);
  await usageError(['whatif', 'tll', logs, '--db', ':memory:'], /^cachelens: Unknown argument: tll \(did you mean ttl\?\)$/);
  // a word near none where a subcommand goes: which there are, as a bare `whatif` says (it said only 'Unknown argument: bogus'; review)
  await usageError(['whatif', 'bogus', logs, '--db', ':memory:'], /^cachelens: Unknown argument: bogus \(whatif needs one of: ttl, keepalive\)$/);
  await usageError(['replay', '--json', 'bogus'], /^cachelens: Unknown argument: bogus \(replay needs one of: channel, session\)$/);
  await usageError(['whatif'], /^cachelens: whatif needs one of: ttl, keepalive$/);
  // a path there is no misspelt subcommand (yargs suggested ttl for /tmp, and for `.`)
  for (const word of ['.', 'logs']) {
    const here = await runCli(['whatif', word], { cwd: path.dirname(logs) });
    assert.deepEqual([here.code, here.stderr], [2, `cachelens: Unknown argument: ${word} (whatif needs one of: ttl, keepalive, before the paths)\n`]);
  }
  await usageError(['whatif', logs], new RegExp(`^cachelens: Unknown argument: ${logs.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(whatif needs one of: ttl, keepalive, before the paths\\)$`));
  // an unknown flag of a subcommand is the flag's alone
  await usageError(['whatif', 'ttl', logs, '--bogus'], /^cachelens: Unknown argument: bogus$/);
  // an option's value before the command is not the unknown word
  await usageError(['--db', ':memory:', 'summry'], /^cachelens: Unknown argument: summry \(did you mean summary\?\)$/);
  await usageError(['replay', '--db', 'x.duckdb', 'sesion'], /^cachelens: Unknown argument: sesion \(did you mean session\?\)$/);
  // a flag before the command is a flag, not the value of one: the command is still the unknown word
  await usageError(['--json', 'summry'], /^cachelens: Unknown argument: summry \(did you mean summary\?\)$/);
  await usageError(['--json', 'whatif', 'tll'], /^cachelens: Unknown argument: tll \(did you mean ttl\?\)$/);
  await usageError(['whatif', '--json', 'tll'], /^cachelens: Unknown argument: tll \(did you mean ttl\?\)$/);
  await usageError(['replay', '--rebuild', 'sesion'], /^cachelens: Unknown argument: sesion \(did you mean session\?\)$/);
  // and before a command that has no such flag, it is that command's unknown argument
  await usageError(['--csv', 'summary', logs, '--db', ':memory:'], /^cachelens: Unknown argument: csv$/);
  await usageError(['replay', '--rebuild', 'channel', path.join(dir, 'channel.jsonl')], /^cachelens: Unknown argument: rebuild$/);
  await usageError(['summary', logs, '--db', ':memory:', '--no-csv'], /^cachelens: Unknown argument: csv$/);
  await usageError([], /name a command/);
  // a required positional left out: yargs said 'Not enough non-option arguments: got 0, need at least 1', naming neither
  await usageError(['replay', 'channel'], /^cachelens: replay channel: missing <file> \(usage: cachelens replay channel <file>; see --help\)$/);
  await usageError(['replay', '--json', 'channel', '--agent', '@x'], /^cachelens: replay channel: missing <file> /);
  await usageError(['replay', 'session', '--db', ':memory:'], /^cachelens: replay session: missing <target> \(usage: cachelens replay session <target> \[paths\.\.\]; see --help\)$/);
  // start takes no path: it said 'Unknown argument: LOGS', not that start reads the default roots and report reads LOGS
  await usageError(['start', logs, '--db', ':memory:'], new RegExp(`^cachelens: start reads your default log roots and takes no path: ${logs.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(cachelens report .* writes the report of those logs\\)$`));
  await usageError(['start', '--bogus', '--db', ':memory:'], /^cachelens: Unknown argument: bogus$/);
  // yargs dropped a lone '-': `cat s.jsonl | cachelens summary -` read the default roots instead, without a word
  await usageError(['summary', '-', '--db', ':memory:'], /^cachelens: -: cachelens does not read standard input \(give the transcript files or directories as paths\)$/);
  // in the command's words: a channel log is no transcript (it said 'give the transcript files or directories as paths')
  await usageError(['replay', 'channel', '--json', '-'], /^cachelens: -: cachelens does not read standard input \(give the channel log as a path; a pipe is \/dev\/stdin\)$/);
  await usageError(['replay', 'session', '-', '--db', ':memory:'], /^cachelens: -: cachelens does not read standard input \(give a session id or a transcript path\)$/);
  await usageError(['summary', path.join(dir, 'no-such-dir'), '--db', ':memory:'], /no such file or directory: .*no-such-dir/);
  await usageError(['summary', logs, path.join(dir, 'missing.jsonl'), '--db', ':memory:'], /no such file or directory: .*missing\.jsonl/);
  // said before the store is opened: no store, WAL or directory is made for a run that reads nothing
  const unmade = path.join(dir, 'unmade');
  await usageError(['summary', path.join(dir, 'no-such-dir'), '--db', path.join(unmade, 's.duckdb')], /no such file or directory: .*no-such-dir/);
  assert.equal(existsSync(unmade), false, 'the store\'s directory was made for a path that is not there');
  await usageError(['summary', logs, '--db'], /Not enough arguments following: db/);
  await usageError(['summary', logs, '--db', ':memory:', '--pricing'], /Not enough arguments following: pricing/);
  await usageError(['summary', logs, '--pricing', '--json'], /Not enough arguments following: pricing/);
  // a value holding a line break still makes one line of error
  await usageError(['summary', logs, '--db', ':memory:', '--since', '2025\n01'], /^cachelens: --since 2025\?01: expected a day/);
  await usageError(['replay', 'channel', path.join(repoRoot, 'sample-logs/channels/backend.jsonl'), '--agent', '@a\nb'], /^cachelens: --agent @a\?b: expected a handle/);
  // or an empty one (`--chain=`): not the flag left out
  await usageError(['replay', 'session', logs, '--db', ':memory:', '--chain='], /^cachelens: --chain: expected a chain id/);
  await usageError(['replay', 'session', logs, '--db', ':memory:', '--reinject-type='], /^cachelens: --reinject-type: expected an attachment type/);
  // anatomy --chain empty (an unset "$ID") or without a value printed every chain's anatomy, exit 0
  await usageError(['anatomy', logs, '--db', ':memory:', '--chain='], /^cachelens: --chain: expected a chain id/);
  await usageError(['anatomy', logs, '--db', ':memory:', '--chain', ' '], /^cachelens: --chain: expected a chain id/);
  await usageError(['anatomy', logs, '--db', ':memory:', '--chain'], /Not enough arguments following: chain/);
  // replay session's flags given no value: one-line errors, not their defaults run silently (as replay channel's)
  for (const flag of ['strategy', 'thinking', 'encoding', 'calibrate', 'chain', 'reinject-type']) {
    await usageError(['replay', 'session', logs, '--db', ':memory:', `--${flag}`], new RegExp(`Not enough arguments following: ${flag}`));
  }
  await usageError(['summary', logs, '--db', ':memory:', '--pricing='], /--pricing: expected a file name/);
  await usageError(['summary', logs, '--db='], /--db: expected a file name/);
  // an empty filter (`--since="$START"`, START unset) counted every day, project or this machine's zone without a word
  await usageError(['summary', logs, '--db', ':memory:', '--since='], /^cachelens: --since: expected a day as YYYY-MM-DD or YYYYMMDD$/);
  await usageError(['anatomy', logs, '--db', ':memory:', '--until', ' '], /^cachelens: --until: expected a day/);
  await usageError(['summary', logs, '--db', ':memory:', '--timezone='], /^cachelens: --timezone: expected an IANA time zone/);
  await usageError(['sessions', logs, '--db', ':memory:', '--project='], /^cachelens: --project: expected text the project's path contains$/);
  await usageError(['query', 'cost_by', '--parquet', logs, '--project', ''], /^cachelens: --project: expected text/);
  // two output flags: named as flags (it said "Arguments csv and json are mutually exclusive")
  await usageError(['query', 'cost_by', logs, '--db', ':memory:', '--csv', '--json'], /^cachelens: --csv and --json cannot be given together \(give one of them\)$/);
  // on the default roots of a HOME without logs: the one line, not 'no Claude Code logs found' before it
  await usageError(['summary', '--db='], /--db: expected a file name/);
  await usageError(['anatomy', '--db='], /--db: expected a file name/);
  await usageError(['summary', logs, '--db', ':memory:', '--since'], /Not enough arguments following: since/);
  await usageError(['summary', logs, '--db', ':memory:', '--since', '2025-13-45'], /--since 2025-13-45: no such day \(month 13: a month is 01 to 12\)$/);
  await usageError(['summary', logs, '--db', ':memory:', '--timezone', 'Mars/Olympus'], /--timezone Mars\/Olympus: not a known IANA time zone/);
  // a day that does not exist (Date.parse would take it as 2 March)
  await usageError(['summary', logs, '--db', ':memory:', '--since', '2026-02-30'], /--since 2026-02-30: no such day \(February 2026 has 28 days\)$/);
  await usageError(['summary', logs, '--db', ':memory:', '--until', '20250229'], /--until 20250229: no such day \(February 2025 has 28 days\)$/);
  // a range that ends before it starts answered with empty tables and exit 0, as if no day had usage
  await usageError(['summary', logs, '--db', ':memory:', '--since', '2026-02-12', '--until', '20260201'], /^cachelens: --since 2026-02-12 is after --until 20260201: no day is in that range$/);
  await usageError(['anatomy', logs, '--db', ':memory:', '--since', '2026-02-12', '--until', '2026-02-11'], /--since 2026-02-12 is after --until 2026-02-11/);
  await usageError(['query', 'cost_by', logs, '--db', ':memory:', '--since', '2026-02-12', '--until', '2026-02-11'], /--since 2026-02-12 is after --until 2026-02-11/);
  await usageError(['crosstab', '--parquet', logs, '--since', '2026-02-12', '--until', '2026-02-11'], /--since 2026-02-12 is after --until 2026-02-11/);
  // an option given twice is a list to the parser: only the repeatable ones may be
  await usageError(['summary', logs, '--db', ':memory:', '--since', '2026-03-01', '--since', '2026-03-02'], /--since was given more than once/);
  await usageError(['summary', logs, '--db', ':memory:', '--project', 'a', '--project', 'b'], /--project was given more than once/);
  await usageError(['summary', logs, '--db', ':memory:', '--pricing', 'a.json', '--pricing', 'b.json'], /--pricing was given more than once/);
  await usageError(['whatif', 'keepalive', logs, '--db', ':memory:', '--budget', '3', '--budget', '4'], /--budget was given more than once/);
  // numbers: what was typed is quoted, an empty value is no number, choices fit on one line
  const keepalive = ['whatif', 'keepalive', logs, '--db', ':memory:'];
  await usageError([...keepalive, '--ping-in', 'abc'], /--ping-in abc: expected a whole number of tokens/);
  await usageError([...keepalive, '--ping-in', '-1000'], /--ping-in -1000: expected a whole number of tokens/);
  await usageError([...keepalive, '--ping-out', 'Infinity'], /--ping-out Infinity: expected a whole number of tokens/);
  // finite but absurd: 1e300 tokens a ping printed weights of 300 digits; 1e20 pings a gap printed as 100000000000000000000
  await usageError([...keepalive, '--ping-in', '1e300'], /--ping-in 1e300: expected a whole number of tokens up to 1,000,000$/);
  await usageError([...keepalive, '--ping-out', '1000001'], /--ping-out 1000001: expected a whole number of tokens up to 1,000,000$/);
  await usageError([...keepalive, '--budget', '99999999999999999999'], /--budget 99999999999999999999: expected a whole number up to 1,000,000, inf or sweep$/);
  await usageError([...keepalive, '--interval', '270s'], /--interval 270s: expected seconds between 0\.001 and 299\.999 \(below the 5-minute TTL\)$/);
  // in whole milliseconds: these passed the flag's check and failed the what-if's, in other words ("must be above 0 …, got 0.0001")
  await usageError([...keepalive, '--interval', '0.0001'], /--interval 0\.0001: expected seconds between 0\.001 and 299\.999/);
  await usageError([...keepalive, '--interval', '299.9999'], /--interval 299\.9999: expected seconds between 0\.001 and 299\.999/);
  await usageError([...keepalive, '--interval='], /--interval : expected seconds/);
  await usageError([...keepalive, '--budget='], /--budget : expected a whole number up to 1,000,000, inf or sweep/);
  await usageError([...keepalive, '--budget'], /Not enough arguments following: budget/);
  await usageError(['anatomy', logs, '--db', ':memory:', '--top', 'x'], /--top x: expected a whole number of chains/);
  // past any token count a request has (and past 2^53, printed as another number; 1e30 as 1e+30)
  await usageError(['anatomy', logs, '--db', ':memory:', '--jitter', '9007199254740993'], /--jitter 9007199254740993: expected a whole number of tokens up to 1,000,000,000$/);
  await usageError([...keepalive, '--jitter', '1e30'], /--jitter 1e30: expected a whole number of tokens up to 1,000,000,000$/);
  // decimal only: Number() read 0x10 as 16 and 0b11 as 3
  await usageError(['anatomy', logs, '--db', ':memory:', '--top', '0x10'], /--top 0x10: expected a whole number of chains/);
  await usageError([...keepalive, '--budget', '0b11'], /--budget 0b11: expected a whole number up to 1,000,000, inf or sweep$/);
  await usageError([...keepalive, '--interval', '0o7'], /--interval 0o7: expected seconds/);
  await usageError(['replay', 'channel', path.join(dir, 'none.jsonl'), '--evict-at', '0x1'], /--evict-at 0x1: expected a mention number/);
  // a value outside a flag's choices, in the words of the other flags' errors (it was yargs' 'Invalid values: Argument: to, Given: "2h", Choices: "1h", "5m"')
  await usageError(['whatif', 'ttl', logs, '--db', ':memory:', '--to', '2h'], /^cachelens: --to 2h: expected one of 1h, 5m$/);
  await usageError(['crosstab', logs, '--db', ':memory:', '--kind', 'sub, "x"'], /^cachelens: --kind sub, "x": expected one of all, main, subagent, subagents$/);
  // a value yargs reads as a number (no quotes in its message: 'Given: 5') was left in yargs' words; it is quoted as typed
  await usageError(['whatif', 'ttl', logs, '--db', ':memory:', '--to', '5'], /^cachelens: --to 5: expected one of 1h, 5m$/);
  await usageError(['crosstab', logs, '--db', ':memory:', '--kind=03'], /^cachelens: --kind 03: expected one of all, main, subagent, subagents$/);
  await usageError(['replay', 'channel', path.join(dir, 'none.jsonl'), '--prefix-tokens', '-3'], /--prefix-tokens -3: expected a whole number of tokens/);
});

test('fixed vocabularies are taken in any case, as --rows, --measure and --budget inf are; a bad value is said as typed', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const json = async (args: string[]) => {
    const r = await runCli([...args, logs, '--db', ':memory:', '--json']);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };
  // each in upper or mixed case answers as in lower case
  const pairs: [string[], string[]][] = [
    [['crosstab', '--kind', 'SUBAGENT'], ['crosstab', '--kind', 'subagent']],
    [['crosstab', '--kind', 'Main'], ['crosstab', '--kind', 'main']],
    [['whatif', 'ttl', '--to', '5M', '--scope', 'MAIN'], ['whatif', 'ttl', '--to', '5m', '--scope', 'main']],
    [['whatif', 'keepalive', '--scope', 'Subagents', '--budget', 'SWEEP'], ['whatif', 'keepalive', '--scope', 'subagents', '--budget', 'sweep']],
  ];
  for (const [upper, lower] of pairs) assert.deepEqual(await json(upper), await json(lower), upper.join(' '));
  await usageError(['crosstab', logs, '--db', ':memory:', '--kind', 'Bogus'], /^cachelens: --kind Bogus: expected one of all, main, subagent, subagents$/);
  await usageError(['whatif', 'ttl', logs, '--db', ':memory:', '--to=2H'], /^cachelens: --to 2H: expected one of 1h, 5m$/);
  // given twice, the bad one first: the bad one is said (it said '--kind main: expected one of all, main, …')
  await usageError(['crosstab', logs, '--db', ':memory:', '--kind', 'Bogus', '--kind', 'main'], /^cachelens: --kind Bogus: expected one of all, main, subagent, subagents$/);
  await usageError(['whatif', 'ttl', logs, '--db', ':memory:', '--to', '2h', '--to', '1h'], /^cachelens: --to 2h: expected one of 1h, 5m$/);
  await usageError(['whatif', 'ttl', logs, '--db', ':memory:', '--to', '05'], /^cachelens: --to 05: expected one of 1h, 5m$/);
  // a strategy is said as typed too (it said '--strategy bogus')
  await usageError(['replay', 'channel', path.join(dir, 'none.jsonl'), '--strategy', 'Window,Bogus'], /^cachelens: --strategy Bogus: expected window, watermark, unstable$/);
  // replay session's choices and strategies too: the value is checked before any log is read
  const file = path.join(dir, 'none.jsonl');
  await usageError(['replay', 'session', file, '--thinking', 'KEEPS'], /^cachelens: --thinking KEEPS: expected one of keep, drop$/);
  const r = await runCli(['replay', 'session', file, '--thinking', 'DROP', '--encoding', 'O200K_BASE', '--strategy', 'Recorded']);
  assert.doesNotMatch(r.stderr, /--thinking|--encoding|--strategy/, r.stderr);
});

test('anatomy, whatif and crosstab say a bad flag value before the logs are read: no store is made, and no note on logs precedes the line', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const store = path.join(dir, 'store', 's.duckdb');
  const cases: [string[], RegExp][] = [
    [['anatomy', '--jitter', 'x'], /--jitter x: expected a whole number of tokens/],
    [['anatomy', '--top', '-1'], /--top -1: expected a whole number of chains/],
    [['whatif', 'ttl', '--jitter', '1e10'], /--jitter 1e10: expected a whole number of tokens/],
    [['whatif', 'keepalive', '--interval', '400'], /--interval 400: expected seconds between/],
    [['whatif', 'keepalive', '--budget', 'x'], /--budget x: expected a whole number/],
    [['whatif', 'keepalive', '--ping-out', 'x'], /--ping-out x: expected a whole number of tokens/],
    [['crosstab', '--rows', 'bogus'], /--rows bogus: not a dimension/],
    [['crosstab', '--cols', 'bogus'], /--cols bogus: not a dimension/],
    [['crosstab', '--measure', 'bogus'], /--measure bogus: not a measure/],
  ];
  for (const [args, expected] of cases) {
    // on the logs given, the store is not made (the logs were read into it first); on the default
    // roots of a HOME without logs, 'no Claude Code logs found' came before the line
    await usageError([...args, logs, '--db', store], expected);
    assert.equal(existsSync(path.dirname(store)), false, `${args.join(' ')}: no store made`);
    await usageError([...args, '--db', store], expected);
  }
});

test('a repeatable option takes one value per flag: the paths after it stay paths', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(5, 1, 1, 1) })]);
  const out = path.join(dir, 'r.html');
  const r = await runCli(['report', '--session', 'top', logs, '--db', ':memory:', '--out', out], { env: { HOME: dir } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /wrote .*r\.html/);
});

test('a leap day, a --pricing file with a byte-order mark, and repeatable options given twice are accepted', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const pricing = path.join(dir, 'bom.json');
  writeFileSync(pricing, '\ufeff{"models": {"claude-opus-4-6": {"input": 5, "output": 25}}}');
  for (const args of [
    ['summary', logs, '--db', ':memory:', '--since', '2024-02-29', '--pricing', pricing],
    ['query', 'cost_by', logs, '--db', ':memory:', '--param', 'by=model', '--param', 'since=2024-02-29'],
  ]) {
    const r = await runCli(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  }
});

test('a missing path under CLAUDE_CONFIG_DIR is no error: the default roots that exist are read', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  writeLog(dir, 'config/projects/proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(7, 0, 0, 0) })]);
  const r = await runCli(['summary', '--db', ':memory:', '--json'], {
    env: { CLAUDE_CONFIG_DIR: `${path.join(dir, 'gone')},${path.join(dir, 'config')}` },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { totals: { input: number } }).totals.input, 7);
});

test('a notice quoting a path or TZ with a line break in it is still one line on stderr', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  // a directory given as a path that holds no transcript, named with a line break (and an escape)
  const empty = path.join(dir, 'em\npty\u001b[2J');
  mkdirSync(empty);
  const r = await runCli(['summary', empty, '--db', ':memory:', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stderr.split('\n').filter(Boolean), [`cachelens: no Claude Code transcript (*.jsonl) in ${path.join(dir, 'em?pty?[2J')}`]);
  // a TZ Node cannot read, holding a line break: the line that says days are in UTC stays one line
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const tz = await runCli(['summary', logs, '--db', ':memory:', '--json'], { env: { TZ: 'UTC\ncachelens: forged' } });
  assert.equal(tz.code, 0, tz.stderr);
  assert.deepEqual(tz.stderr.split('\n').filter(Boolean), ['cachelens: TZ=UTC?cachelens: forged is not a time zone name Node can read (an IANA name such as America/New_York): days are in UTC; give --timezone']);
  // CLAUDE_CONFIG_DIR roots without logs, one named with a line break
  const none = await runCli(['summary', '--db', ':memory:', '--json'], { env: { CLAUDE_CONFIG_DIR: path.join(dir, 'no\nlogs') } });
  assert.equal(none.code, 0, none.stderr);
  assert.deepEqual(none.stderr.split('\n').filter(Boolean), [`cachelens: no Claude Code logs found: none of ${path.join(dir, 'no?logs')} holds a projects/ directory`]);
});

test('query --param project= empty or blank leaves $project to --project, as an empty since= does: it matched every project, over --project too, or none', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'a/s1.jsonl', [assistant({ session: 's1', msg: 'm1', cwd: '/home/u/alpha', usage: usage(1, 1, 1, 1) })]);
  writeLog(logs, 'b/s2.jsonl', [assistant({ session: 's2', msg: 'm2', cwd: '/home/u/beta', usage: usage(1, 1, 1, 1) })]);
  const projects = async (extra: string[]) => {
    const r = await runCli(['query', 'cost_by', logs, '--db', ':memory:', '--param', 'by=project', '--json', ...extra]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { params: { project: string | null }; rows: { grp: string }[] };
    return { project: out.params.project, rows: out.rows.map((x) => x.grp) };
  };
  assert.deepEqual(await projects(['--project', 'alpha']), { project: 'alpha', rows: ['/home/u/alpha'] });
  assert.deepEqual(await projects(['--param', 'project=beta']), { project: 'beta', rows: ['/home/u/beta'] });
  // trimmed, as --project is
  assert.deepEqual(await projects(['--param', 'project= beta ']), { project: 'beta', rows: ['/home/u/beta'] });
  // empty beside --project: --project's text (it was '', every project)
  assert.deepEqual(await projects(['--project', 'alpha', '--param', 'project=']), { project: 'alpha', rows: ['/home/u/alpha'] });
  // empty or blank alone: no filter, as without it (a blank one matched no project: no rows)
  assert.deepEqual(await projects(['--param', 'project=']), { project: null, rows: ['/home/u/alpha', '/home/u/beta'] });
  assert.deepEqual(await projects(['--param', 'project= ']), { project: null, rows: ['/home/u/alpha', '/home/u/beta'] });
});

test('--out - and --db - (standard output, as a lone - is standard input) are one line, exit 2: no file named - is made', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const work = path.join(dir, 'work');
  mkdirSync(work);
  for (const [args, expected] of [
    [['report', logs, '--db', ':memory:', '--out', '-'], /^cachelens: --out -: cachelens does not write the report to standard output \(give a file name\)$/],
    [['report', logs, '--db', ':memory:', '--out=-'], /^cachelens: --out -: cachelens does not write the report/],
    [['start', '--db', ':memory:', '--out', '-'], /^cachelens: --out -: cachelens does not write the report/],
    [['summary', logs, '--db', '-'], /^cachelens: --db -: cachelens does not write a store to standard output \(give a file name, or :memory: for none\)$/],
    [['anatomy', logs, '--db=-'], /^cachelens: --db -: cachelens does not write a store/],
  ] as [string[], RegExp][]) {
    const r = await runCli(args, { cwd: work });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, expected);
    assert.deepEqual(readdirSync(work), [], `${args.join(' ')}: nothing written in the working directory`);
  }
});

test('a flag given a value other than true or false (--json=1, --json=TRUE, --rebuild=yes) is one line, exit 2: it was false without a word', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  await usageError(['summary', logs, '--db', ':memory:', '--json=1'], /^cachelens: --json=1: --json is a flag and takes no value \(give --json alone, or leave it out\)$/);
  await usageError(['summary', logs, '--db', ':memory:', '--json=TRUE'], /^cachelens: --json=TRUE: --json is a flag/);
  await usageError(['summary', logs, '--db', ':memory:', '--json='], /^cachelens: --json=: --json is a flag/);
  await usageError(['sessions', logs, '--db', ':memory:', '--rebuild=yes'], /^cachelens: --rebuild=yes: --rebuild is a flag/);
  await usageError(['query', 'cost_by', logs, '--db', ':memory:', '--csv=1'], /^cachelens: --csv=1: --csv is a flag/);
  await usageError(['report', logs, '--db', ':memory:', '--out', path.join(dir, 'r.html'), '--open=x'], /^cachelens: --open=x: --open is a flag/);
  assert.equal(existsSync(path.join(dir, 'r.html')), false);
  // true and false are read as yargs reads them
  const yes = await runCli(['summary', logs, '--db', ':memory:', '--json=true']);
  assert.equal(yes.code, 0, yes.stderr);
  assert.equal((JSON.parse(yes.stdout) as { totals: { input: number } }).totals.input, 1);
  const no = await runCli(['summary', logs, '--db', ':memory:', '--json=false']);
  assert.equal(no.code, 0, no.stderr);
  assert.match(no.stdout, /^By model$/m);
});

test('a reader that closes the pipe before the output (`cachelens summary | head -0`) ends the run quietly, not with a stack trace', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const child = spawn(process.execPath, [cliPath, 'summary', logs, '--db', ':memory:', '--json'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  child.stdout.destroy(); // the read end closes before anything is written: the write meets EPIPE
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(stderr, '');
  assert.equal(code, 0);
});

test('output that cannot be written (`> /dev/full`: no space left) is one line and exit 2, not a stack trace, for text and --json alike', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  for (const args of [['summary', logs, '--db', ':memory:', '--json'], ['summary', logs, '--db', ':memory:'], ['query', '--list']]) {
    const full = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', full, 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    closeSync(full);
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(stderr, 'cachelens: cannot write the output: ENOSPC: no space left on device (check the file or device it goes to, and the free space)\n', args.join(' '));
    assert.equal(code, 2, args.join(' '));
  }
});

test('a report --out that cannot be written is one line, exit 2: no value, an empty one, a directory, a place no directory can be made (no hang)', { timeout: 120_000 }, async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  // each was an internal error with a stack trace (EISDIR, ENOENT), and /proc/… spun in Node 20's recursive mkdir
  await usageError(['report', logs, '--db', ':memory:', '--out'], /Not enough arguments following: out/);
  await usageError(['report', logs, '--db', ':memory:', '--out='], /--out: expected a file name/);
  await usageError(['report', logs, '--db', ':memory:', '--out', dir], /--out .*: is a directory/);
  await usageError(['report', logs, '--db', ':memory:', '--out', '/proc/cachelens-no-such/r.html'], /--out \/proc\/cachelens-no-such\/r\.html: no directory \/proc\/cachelens-no-such /);
  // below a file: the stat of --out threw ENOTDIR, an internal error (exit 1, a stack trace)
  writeFileSync(path.join(dir, 'file'), '');
  await usageError(['report', logs, '--db', ':memory:', '--out', path.join(dir, 'file/r.html')], /--out .*file\/r\.html: cannot write the report: ENOTDIR/);
  // start says which logs it reads first, then the one error line
  const r = await runCli(['start', '--db', ':memory:', '--out', dir]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr.trim().split('\n').at(-1)!, /^cachelens: --out .*: is a directory/);
});

test('--out and --db in a directory not there (a typo) are one line naming the outermost directory missing, exit 2: nothing is made; the default store\'s directory is made', { timeout: 120_000 }, async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const typo = path.join(dir, 'reprots');
  const refused = (flag: string, given: string, missing: string, choose: string) =>
    new RegExp(`^cachelens: ${flag} ${esc(given)}: no directory ${esc(missing)} \\(cachelens makes no directory for ${flag}; create it first, or choose another ${choose}\\)$`);
  // each made the whole tree (reprots/2026/) without a word, and wrote the report or the store there
  const out = path.join(typo, '2026', 'r.html');
  await usageError(['report', logs, '--db', ':memory:', '--out', out], refused('--out', out, typo, 'FILE'));
  const db = path.join(typo, '2026', 's.duckdb');
  for (const cmd of [['summary'], ['whatif', 'ttl'], ['query', 'cost_by'], ['report', '--out', path.join(dir, 'r.html')]]) {
    await usageError([...cmd, logs, '--db', db], refused('--db', db, typo, 'PATH'));
  }
  // an export's DIR is made, not the directories above it
  const pq = path.join(typo, '2026', 'pq');
  await usageError(['export', logs, '--db', ':memory:', '--parquet', pq], new RegExp(`^cachelens: --parquet ${esc(pq)}: no directory ${esc(typo)} \\(cachelens makes DIR, not the directories above it; create it first, or choose another DIR\\)$`));
  // relative to the working directory: named absolute
  const r = await runCli(['report', logs, '--db', ':memory:', '--out', 'new/r.html'], { cwd: dir });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr.trim(), refused('--out', 'new/r.html', path.join(dir, 'new'), 'FILE'));
  assert.deepEqual(readdirSync(dir).sort(), ['logs'], 'nothing was made');
  // a link that leads nowhere on the way is named as one: --out and --parquet said EEXIST
  const dangling = path.join(dir, 'dangling');
  symlinkSync(path.join(dir, 'nowhere'), dangling);
  const nowhere = (flag: string, given: string, choose: string) =>
    new RegExp(`^cachelens: ${flag} ${esc(given)}: ${esc(dangling)} is a link that leads nowhere, not a directory \\(create what it leads to first, or choose another ${choose}\\)$`);
  await usageError(['report', logs, '--db', ':memory:', '--out', path.join(dangling, 'r.html')], nowhere('--out', path.join(dangling, 'r.html'), 'FILE'));
  await usageError(['report', logs, '--db', ':memory:', '--out', path.join(dangling, 'a', 'r.html')], nowhere('--out', path.join(dangling, 'a', 'r.html'), 'FILE'));
  await usageError(['export', logs, '--db', ':memory:', '--parquet', path.join(dangling, 'pq')], nowhere('--parquet', path.join(dangling, 'pq'), 'DIR'));
  await usageError(['summary', logs, '--db', path.join(dangling, 's.duckdb')], nowhere('--db', path.join(dangling, 's.duckdb'), 'PATH'));
  assert.deepEqual(readdirSync(dir).sort(), ['dangling', 'logs'], 'nothing was made');
  unlinkSync(dangling);
  // the default store's directory (~/.cache/cachelens) is the tool's own to make
  const home = path.join(dir, 'home');
  mkdirSync(home);
  const ok = await runCli(['summary', logs, '--json'], { env: { HOME: home, XDG_CACHE_HOME: undefined } });
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(existsSync(path.join(home, '.cache', 'cachelens', 'store.duckdb')));
  // and inside the logs, a directory not there yet is refused as inside them, made neither
  await usageError(['report', logs, '--db', ':memory:', '--out', path.join(logs, 'new', 'r.html')], /is inside the logs being read/);
  await usageError(['summary', logs, '--db', path.join(logs, 'new', 's.duckdb')], /is inside the logs being read/);
  assert.deepEqual(readdirSync(logs), ['proj']);
});

test('a path flag given as --flag=~/x (which the shell leaves as it is) is below HOME, not in a directory named ~ here; ~user is left as given', { timeout: 120_000 }, async (t) => {
  const home = tempDir();
  const here = tempDir();
  t.after(() => (removeDir(home), removeDir(here)));
  writeLog(home, 'logs/proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  writeFileSync(path.join(home, 'p.json'), '{"models": {"claude-opus-4-6": {"input": 5, "output": 25}}}');
  copyFileSync(path.join(repoRoot, 'sample-logs/channels/backend.jsonl'), path.join(home, 'c.jsonl'));
  const opts = { cwd: here, env: { HOME: home, XDG_CACHE_HOME: path.join(home, '.cache') } };
  for (const args of [
    // DuckDB expanded the store's ~ itself, the files kept beside it went to ./~/
    ['summary', '~/logs', '--db=~/s.duckdb', '--pricing=~/p.json', '--json'],
    ['report', '~/logs', '--db=:memory:', '--out=~/r.html', '--channel=~/c.jsonl'],
    ['export', '~/logs', '--db=:memory:', '--parquet=~/exp'],
    ['query', 'cost_by', '--parquet=~/exp', '--param', 'by=model'],
    ['replay', 'channel', '~/c.jsonl', '--strategy', 'window'],
    ['replay', 'session', '~/logs/proj/s1.jsonl', '--pricing=~/p.json', '--strategy', 'recorded'],
  ]) {
    const r = await runCli(args, opts);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  }
  assert.deepEqual(readdirSync(here), [], 'nothing written in the working directory');
  for (const f of ['s.duckdb', 's.duckdb.listing', 'r.html', 'exp']) assert.ok(existsSync(path.join(home, f)), f);
  await usageError(['summary', '~/logs', '--db=:memory:', '--pricing=~nobody/p.json'], /--pricing ~nobody\/p\.json: no such file/);
});

test('a very long id given (--chain, --session, a replay target, --agent, a query name) or held (sessions a prefix fits) is cut to 120 columns with … in an error, escaped', { timeout: 120_000 }, async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  // two sessions whose ids of 502 characters share a prefix, as an ambiguous one names them
  const held = (n: number) => `pq${'q'.repeat(499)}${n}`;
  writeLog(logs, 'proj/s1.jsonl', [1, 2].map((n) => assistant({ msg: `m${n}`, session: held(n), usage: usage(1, 1, 1, 1) })));
  const given = `${'ab'.repeat(300)}\u001b[31m`;
  const channel = path.join(repoRoot, 'sample-logs/channels/backend.jsonl');
  const cases: [string[], string][] = [
    [['anatomy', logs, '--db', ':memory:', '--chain', given], '--chain '],
    [['replay', 'session', given, logs, '--db', ':memory:'], 'no session '],
    [['replay', 'session', 'top', logs, '--db', ':memory:', '--chain', given], '--chain '],
    [['replay', 'session', path.join(logs, 'proj/s1.jsonl'), '--chain', given], '--chain '],
    [['report', logs, '--db', ':memory:', '--session', given, '--out', path.join(dir, 'r.html')], 'no session '],
    [['query', given, logs, '--db', ':memory:'], 'no such query: '],
    [['replay', 'channel', channel, '--agent', `@${given} x`], '--agent @'],
    [['replay', 'session', 'pqqq', logs, '--db', ':memory:'], 'session pqqq matches 2 sessions ('],
  ];
  for (const [args, before] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, r.stderr);
    const line = lines[0]!;
    // its id: the start and the end kept about a '…', 120 columns in all, the escape shown as ?
    assert.ok(line.length < 400, `${args.join(' ').slice(0, 60)}: ${line.length} characters: ${line.slice(0, 300)}`);
    assert.ok(!line.includes('\u001b'), line);
    const id = line.slice(line.indexOf(before) + before.length).split(/[: )]/)[0]!;
    if (before.includes('matches')) {
      for (const n of [1, 2]) assert.ok(line.includes(`${held(n).slice(0, 40)}`) && line.includes(`${held(n).slice(-40)}`), line);
      assert.equal((line.match(/…/g) ?? []).length, 2, line);
      continue;
    }
    assert.ok(id.includes('…') && id.startsWith('abab') && id.endsWith('?[31m'), `${args[0]}: ${id}`);
    // (--agent's value is cut whole: `@…?[31m x`)
    if (before === '--agent @') assert.ok([...id].length < 120, id);
    else assert.equal([...id].length, 120, id);
  }
});
