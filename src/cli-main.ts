/**
 * cachelens — where the prompt-cache money went.
 *
 *   logs on disk ─▶ ingest (discover · read · de-dup) ─▶ store (DuckDB) ─▶ analyses (SQL + TS)
 *                                                                     └─▶ replay simulator
 *                                   analyses ─▶ reporters (table · json · html)
 *
 * This file is the thin CLI layer: parse arguments → run a command → print → exit code.
 * Known failures (UsageError) print one line and exit 2; anything else is a bug and keeps its stack.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { commands } from './commands/index.js';
import { type Command, expandPathOptions, FLAG_OPTIONS, GLOBAL_FLAGS, type Io, packageVersion } from './commands/command.js';
import { clean, jsonText, setWideTables, terminalWidth, useColor } from './format/table.js';
import { wrap } from './format/wrap.js';
import { progressLine } from './format/progress.js';
import { signalWatch } from './format/signals.js';
import { UsageError } from './errors.js';
import { dropEarlyWalk } from './ingest/early-walk.js';
import { expandHome } from './ingest/discover.js';

export async function cli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // `cachelens help summary` (git's and npm's way) is `summary --help`: it said `Unknown argument: help`;
  // and `help summry` is `summry --help`, whose one line names the command meant (it said `Unknown arguments: help, summry`)
  if (args[0] === 'help' && args.length > 1 && !args[1].startsWith('-')) args = [...args.slice(1), '--help'];
  // Ctrl-C (or a kill) ends the run where it is, as it does without a line to erase: while a line
  // is shown, it is erased, then the same signal, its handler gone, ends the process (a shell sees
  // 130 or 143, and a script running cachelens stops as on any interrupted command). Not
  // process.exit: that would run exit code while DuckDB is mid-statement; a run stopped at any
  // point leaves the store whole (test/faults/store.test.ts). Handled only while a line is shown:
  // a handler runs when this thread is free (it reads directories and files ~1 – 2.5 s at a time
  // on 2 GB of logs), and without one the signal ends the run at once.
  // (format/signals.ts: the handlers stay a turn of the event loop after the line goes, for a
  // signal that came while the thread was busy)
  const watchSignals = signalWatch(() => progress?.clear());
  // Not on a dumb terminal (TERM=dumb: Emacs' shell, some CI logs), which cannot erase a line; and
  // cleared before anything else is written, on stdout or stderr, which may be the same terminal.
  const progress = process.stderr.isTTY && env.TERM !== 'dumb' ? progressLine(process.stderr, undefined, undefined, watchSignals) : undefined;
  // the paths given with spaces in them, as an error or a notice names them: never broken at those spaces
  const paths = spacedPaths(args, env.HOME || homedir());
  const io: Io = {
    color: useColor(process.stdout, env),
    tty: Boolean(process.stdout.isTTY),
    env,
    // notices and errors may quote transcript text (paths, ids): cleaned as tables are. A notice is
    // one line: a line break in what it quotes (a directory or TZ named with one) is a ?, as in a
    // usage error; it was kept, and the notice's text split over two lines
    // (on a terminal wrapped to its width, at word boundaries: format/wrap.ts; off one, as it is)
    stderr: (line) => {
      progress?.clear();
      process.stderr.write(wrap(clean(line), terminalWidth(process.stderr, env), paths) + '\n');
    },
    progress: progress?.update,
    // Ctrl-C or a kill while a large ingest stages its facts removes the staged files before the
    // signal ends the run (130, 143), progress line or not
    whileStaging: (unstage) => {
      const watch = signalWatch(unstage);
      watch(true);
      return () => watch(false);
    },
  };
  let exitCode = 0;
  const parser = yargs(args)
    .scriptName('cachelens')
    .usage('$0 <command> [paths..] [options]\n\nReads Claude Code transcripts, prices every request as billed, and explains prompt-cache costs.')
    // the shell leaves `--db=~/x` as it is: every path is expanded here (expandPathOptions, below)
    .epilogue('A path that begins with ~/ is under your home directory, in --db=~/x, --out=~/r.html and the like too.')
    .strict()
    .demandCommand(1, 'name a command (see --help)')
    .recommendCommands()
    .help()
    .alias('h', 'help')
    // read only when asked for: not a file read on every run
    .version('version', 'show the version', args.includes('--version') ? packageVersion() : '')
    .wrap(Math.min(110, process.stdout.columns || 100))
    // every command's: a table on a terminal too narrow for it leaves out its columns of least weight, and says so
    .option('wide', { type: 'boolean', global: true, describe: 'on a terminal, show tables as piped: every column, ids, paths, free text and lists whole, however wide (text over 120 columns is still cut in its middle)' })
    // -v, -V, --verbose: a flag (never taking the next word for its value, as `replay channel -v FILE` did FILE) that
    // is then refused, cachelens having no verbose mode (verboseError); hidden, as no command has it
    .option('verbose', { type: 'boolean', alias: ['v', 'V'], hidden: true, global: true })
    .fail((msg, err) => {
      // a -v beside another problem: yargs' message whole, with the verbose hint added (verboseToo)
      throw verboseToo(yargsFailure(msg, err), args, commands);
    });
  // yargs' own validation errors (YError, e.g. "Not enough arguments following: db") are usage errors too
  const yargsFailure = (msg: string | undefined, err: Error | undefined): UsageError => {
    // some span lines ("Invalid values:\n  Argument: to, Given: …"): one line, as every usage error
    if (err && err.name !== 'YError') throw err;
    const text = unknownOnce((msg ?? err?.message ?? 'invalid arguments').trim().replace(/:?\s*\n\s*/g, ': '), args);
    // recommendCommands' message alone ("Did you mean blocks?") does not say what was wrong
    // and yargs' "Not enough non-option arguments: got 0, need at least 1" names neither the command nor what it lacks
    const named = /^Not enough non-option arguments/.test(text) ? commandNamed(args, commands) : undefined;
    if (named?.required) return new UsageError(`${named.path}: missing ${named.required}`, `usage: cachelens ${named.path} ${named.usage}; see --help`);
    // `start ~/logs`: start reads the default roots only, and its "Unknown argument: /home/u/logs" did not say so
    const unknownWords = /^Unknown arguments?: (.+)$/.exec(text)?.[1]!.split(', ').filter((w) => args.includes(w)) ?? [];
    if (unknownWords.length > 0 && commandNamed(args, commands)?.path === 'start') {
      return new UsageError(`start reads your default log roots and takes no path: ${unknownWords[0]}`, `cachelens report ${unknownWords[0]} writes the report of those logs`);
    }
    // yargs' "Invalid values: Argument: to, Given: "2h", Choices: "1h", "5m"" in the words of every other flag's error
    // (a value yargs read as a number, `--to 5`, is given bare: `Given: 5`; it is quoted as typed, `--to 05` as 05)
    const invalid = /^Invalid values: Argument: ([\w-]+), Given: ("(?:[^"\\]|\\.)*"|[^,"]+), Choices: ((?:"[^"]*"(?:, )?)+)/.exec(text);
    if (invalid) {
      // as typed, not as case-folded above (`--kind Bogus`, not bogus): of the values typed for the flag, the
      // one yargs refused (`--kind Bogus --kind main` said 'main'), folded as the middleware folds it
      const quoted = invalid[2]!.startsWith('"');
      const reported = quoted ? (JSON.parse(invalid[2]!) as string) : invalid[2]!;
      const typed = typedValues(args, invalid[1]!);
      const given = typed.find((v) => (quoted ? v === reported || v.trim().toLowerCase() === reported : v.trim() !== '' && Number(v) === Number(reported))) ?? reported;
      return new UsageError(`--${invalid[1]} ${given}: expected one of ${invalid[3]!.replace(/"/g, '')}`);
    }
    // yargs' "Arguments csv and json are mutually exclusive" named the flags without their dashes
    const conflict = /^Arguments ([\w-]+) and ([\w-]+) are mutually exclusive$/.exec(text);
    if (conflict) return new UsageError(`--${conflict[1]} and --${conflict[2]} cannot be given together`, 'give one of them');
    // `whatif bogus`: an unknown word where a subcommand goes says which there are, as a bare `whatif` does
    // (the word alone: yargs also named the flags and paths after it, which the subcommand would take)
    const parent = /^Unknown arguments?: /.test(text) ? commandNamed(args, commands) : undefined;
    if (parent?.subcommands) {
      const word = unknownCommand(args, commands);
      return new UsageError(word === undefined ? text : `Unknown argument: ${word}`, needsOneOf(parent.path, parent.subcommands, word));
    }
    const suggested = /^Did you mean (.+)\?$/.exec(text);
    const unknown = suggested ? unknownCommand(args, commands) : undefined;
    // a path where a subcommand goes (`whatif ~/logs`) is no misspelt subcommand: yargs suggested ttl for /tmp
    const at = unknown !== undefined && isPath(unknown) ? commandNamed(args, commands) : undefined;
    if (at?.subcommands) return new UsageError(`Unknown argument: ${unknown}`, needsOneOf(at.path, at.subcommands, unknown));
    return unknown === undefined ? new UsageError(text) : new UsageError(`Unknown argument: ${unknown}`, `did you mean ${suggested![1]}?`);
  };
  const register = (y: Argv, c: Command): Argv =>
    y.command(
      c.command,
      c.describe,
      (sub) => {
        const withOptions = c.options ? c.options(sub) : sub;
        if (!c.subcommands) return notOwnFlags(withOptions);
        for (const s of c.subcommands) register(withOptions, s);
        return withFlags(withOptions).demandCommand(1, `${c.command} needs one of: ${c.subcommands.map((s) => s.command.split(' ')[0]).join(', ')}`);
      },
      async (argv) => {
        const out = await c.run(argv as Record<string, unknown>, io);
        progress?.clear();
        process.stdout.write(argv.json ? jsonText(out.json, 2, out.exactNumbers ? 'exact' : 'rounded') + '\n' : out.text + '\n');
        await out.afterPrint?.();
      },
    );
  for (const c of commands) register(withFlags(parser), c);
  // --wide (above): tables keep every column
  parser.middleware((argv) => setWideTables(Boolean(argv.wide)));
  // a fixed vocabulary is taken in any case (`--kind SUBAGENT`, `--to 1H`, `--encoding CL100K_BASE`), as
  // --rows, --measure and --budget inf are; only --kind, --to and the like were held to lower case
  parser.middleware((argv) => {
    const choices = (parser as unknown as YargsOptions).getOptions().choices;
    for (const k of Object.keys(choices)) {
      const v = argv[k];
      if (typeof v === 'string' && choices[k]!.every((c) => typeof c !== 'string' || c === c.toLowerCase())) argv[k] = v.trim().toLowerCase();
    }
  }, true);
  // -v, -V or --verbose that passed yargs' checks: refused, cachelens having no verbose mode (first, as -vv is a flag
  // given twice)
  parser.middleware(() => {
    const verbose = verboseFlag(args);
    if (verbose !== undefined) throw new UsageError(`Unknown argument: ${verbose}`, verboseHint(verbose, args, commands));
  });
  // an option given twice is a list to yargs; only the repeatable ones (array: true) may be one
  parser.middleware((argv) => {
    const lists = new Set((parser as unknown as YargsOptions).getOptions().array);
    // yargs also keeps a dashed option under its camelCase name (ping-in, pingIn): both are the option
    const listed = (k: string) => lists.has(k) || lists.has(k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
    const twice = Object.keys(argv).find((k) => k !== '_' && Array.isArray(argv[k]) && !listed(k));
    if (twice !== undefined) throw new UsageError(`--${twice} was given more than once`, 'give it once');
    // yargs drops a lone `-`: `cat s.jsonl | cachelens summary -` read the default roots instead, without a word
    // (one after an option that takes a value is that value, which yargs reads as empty)
    if (args.some((a, i) => a === '-' && !(i > 0 && /^--?[^-=][^=]*$/.test(args[i - 1]!) && !FLAGS.includes(args[i - 1]!.replace(/^--?/, ''))))) {
      // said in the command's words: replay channel reads a channel log, not transcripts
      const [cmd, sub] = args.filter((a) => !a.startsWith('-'));
      const hint = cmd === 'replay' && sub === 'channel' ? 'give the channel log as a path; a pipe is /dev/stdin'
        : cmd === 'replay' && sub === 'session' ? 'give a session id or a transcript path'
        : 'give the transcript files or directories as paths';
      throw new UsageError('-: cachelens does not read standard input', hint);
    }
    // `--out -`, `--db -` (the usual word for standard output): a file named - was made in the working directory
    for (const [name, what, hint] of [['out', 'the report', 'give a file name'], ['db', 'a store', 'give a file name, or :memory: for none']] as const) {
      if (argv[name] === '-') throw new UsageError(`--${name} -: cachelens does not write ${what} to standard output`, hint);
    }
    // a flag given a value yargs does not read as a boolean (`--json=1`, `--json=TRUE`, `--rebuild=yes`)
    // was false without a word: a table where JSON was asked for, a store not rebuilt
    const end = args.indexOf('--');
    for (const a of end === -1 ? args : args.slice(0, end)) {
      const m = /^--(?:no-)?([a-z]+)=(.*)$/s.exec(a);
      if (m && FLAGS.includes(m[1]!) && m[2] !== 'true' && m[2] !== 'false') {
        throw new UsageError(`${a}: --${m[1]} is a flag and takes no value`, `give --${m[1]} alone, or leave it out`);
      }
    }
    expandPathOptions(argv, env.HOME || homedir());
  });
  // yargs renders the command's whole help text after calling an async handler (~50 ms of every
  // run), to have it should the handler fail; ours never show help on failure (fail() above throws).
  (parser as unknown as YargsInternals).getInternalMethods().getUsageInstance().cacheHelpMessage = () => undefined;
  try {
    // what follows `--` was dropped without a word: `summary -- ~/logs` read the default roots instead,
    // `-- summary` ran nothing, exit 0
    if (args.includes('--')) throw new UsageError('--: cachelens reads nothing after --', 'give the command and its paths without it; a path that begins with - as ./-name');
    // `summry --help` printed cachelens' own help, exit 0, as if summry were a command: said as without --help;
    // so is every other way yargs reads as help (`cache --help=true`, `cache --h`, `--help cache`, `cache help`)
    const end = args.indexOf('--');
    if ((end === -1 ? args : args.slice(0, end)).some(asksHelp)) {
      const unknown = unknownCommand(args, commands, false);
      // `cachelens help` is the help command itself
      if (unknown !== undefined && !(unknown === 'help' && asksHelp(unknown))) {
        const level = commandNamed(args, commands)?.path;
        // a word close to a command there, as without help (`replay sesion -h=1`: did you mean session?)
        const near = closestCommand(unknown, commandsAt(args, commands, unknown));
        throw new UsageError(`Unknown argument: ${unknown}`, near ? `did you mean ${near}?` : `cachelens ${level ? `${level} ` : ''}--help lists the commands`);
      }
    }
    await parser.parseAsync();
  } catch (err) {
    progress?.clear();
    if (err instanceof UsageError) {
      // one line, whatever a flag's value held (`--agent $'@a\nb'` broke it in two): line breaks as ?, as other controls
      // (wrapped to a terminal's width on one, as a notice is)
      process.stderr.write(wrap(`cachelens: ${clean(err.message)}${err.hint ? ` (${clean(err.hint)})` : ''}`, terminalWidth(process.stderr, env), paths) + '\n');
      exitCode = 2;
    } else throw err;
  } finally {
    // a walk begun for a command that never took it (a usage error, `query --list`, `--parquet`)
    // ends here: its worker, waiting to be asked to walk once the proof beside a warm store held,
    // kept the process alive after its answer or error, forever
    dropEarlyWalk();
  }
  return exitCode;
}

/** Every option that is a flag and takes no value: FLAG_OPTIONS and GLOBAL_FLAGS (--wide). */
const FLAGS: readonly string[] = [...FLAG_OPTIONS, ...GLOBAL_FLAGS];

/** A word yargs reads as asking for help: `--help`, `-h`, `--h`, `--help=…`, `-h=…`, or `help` itself (yargs' help command). */
function asksHelp(a: string): boolean {
  return /^(--?h(elp)?(=.*)?|help)$/s.test(a);
}

/**
 * Where a command is still to come, the flags (FLAG_OPTIONS) as flags: `--json summry` is the flag
 * and an unknown command, `--json summary` the flag and summary. Hidden, and not inherited
 * (global: false): each command takes only the options it declares itself.
 */
function withFlags(y: Argv): Argv {
  for (const flag of FLAG_OPTIONS) y.option(flag, { type: 'boolean', hidden: true, global: false });
  return y;
}

/**
 * A command's refusal of the flags it does not declare, given before it (`replay --rebuild channel
 * FILE`): taken as flags (not as the value `channel`, which left FILE as the channel) and then
 * named, as strict mode names any unknown option.
 */
function notOwnFlags(y: Argv): Argv {
  const own = new Set((y as unknown as YargsOptions).getOptions().boolean);
  const foreign = FLAG_OPTIONS.filter((f) => !own.has(f));
  if (foreign.length === 0) return y;
  for (const flag of foreign) y.option(flag, { type: 'boolean', hidden: true });
  return y.check((argv) => {
    const given = foreign.find((f) => argv[f] !== undefined);
    if (given !== undefined) throw new UsageError(`Unknown argument: ${given}`);
    return true;
  });
}

/**
 * The first word of `args` that is not a command where a command is expected (undefined if none is).
 * A word right after an option (`--db x summry`) is most likely that option's value: it is named
 * only when no other word is the unknown one (never, with `orOptionValue` false).
 */
function unknownCommand(args: string[], level: Command[], orOptionValue = true): string | undefined {
  let afterOption: string | undefined;
  for (const [i, word] of args.entries()) {
    if (word.startsWith('-')) continue;
    const c = level.find((k) => k.command.split(' ')[0] === word);
    if (c) {
      if (!c.subcommands) return afterOption;
      level = c.subcommands;
      continue;
    }
    const prev = args[i - 1];
    // --help and --version take no value either: `--help cache` names cache
    if (prev === undefined || !prev.startsWith('-') || prev.includes('=') || [...FLAGS, 'help', 'h', 'version'].includes(prev.replace(/^--?/, ''))) return word;
    afterOption ??= word;
  }
  return orOptionValue ? afterOption : undefined;
}

/** The commands among which `word` of `args` stands: the top level's, or a command's subcommands (`replay sesion`: replay's). */
function commandsAt(args: string[], level: Command[], word: string): Command[] {
  for (const w of args) {
    if (w === word) return level;
    const c = level.find((k) => k.command.split(' ')[0] === w);
    if (c?.subcommands) level = c.subcommands;
  }
  return level;
}

/**
 * The command of `level` nearest `word` by edit distance, when within 3 edits as yargs' own suggestion
 * (recommendCommands) is; undefined for none. Example: ('sesion', replay's) → 'session'.
 */
function closestCommand(word: string, level: Command[]): string | undefined {
  let best: string | undefined;
  let bestD = 4;
  for (const name of level.map((k) => k.command.split(' ')[0]!)) {
    const row = Array.from({ length: name.length + 1 }, (_, j) => j);
    for (let i = 1; i <= word.length; i++) {
      let diag = row[0]!;
      row[0] = i;
      for (let j = 1; j <= name.length; j++) {
        const up = row[j]!;
        row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diag + (word[i - 1] === name[j - 1] ? 0 : 1));
        diag = up;
      }
    }
    if (row[name.length]! < bestD) (bestD = row[name.length]!), (best = name);
  }
  return best;
}

/**
 * The command `args` name, down to the last subcommand, with its required positionals ('' when none).
 * Example: ['replay', '--json', 'channel'] → { path: 'replay channel', usage: '<file>', required: '<file>', leaf: true };
 * ['whatif', 'bogus'] → { path: 'whatif', …, leaf: false, subcommands: ['ttl', 'keepalive'] }.
 */
function commandNamed(args: string[], level: Command[]): { path: string; usage: string; required: string; leaf: boolean; subcommands?: string[] } | undefined {
  const path: string[] = [];
  let found: Command | undefined;
  for (const word of args) {
    if (word.startsWith('-')) continue;
    const c = level.find((k) => k.command.split(' ')[0] === word);
    if (!c) continue;
    path.push(word);
    found = c;
    if (!c.subcommands) break;
    level = c.subcommands;
  }
  const usage = found?.command.split(' ').slice(1).join(' ') ?? '';
  const required = usage.split(' ').filter((w) => w.startsWith('<'));
  if (!found) return undefined;
  const subcommands = found.subcommands?.map((k) => k.command.split(' ')[0]!);
  return { path: path.join(' '), usage, required: required.join(' '), leaf: !found.subcommands, ...(subcommands ? { subcommands } : {}) };
}

/**
 * The hint for an unknown `word` where a subcommand of `path` goes: which there are, and, for a path
 * (isPath), that they come before it. Example: ('whatif', ['ttl', 'keepalive'], '/tmp') →
 * 'whatif needs one of: ttl, keepalive, before the paths'.
 */
function needsOneOf(path: string, subcommands: string[], word: string | undefined): string {
  return `${path} needs one of: ${subcommands.join(', ')}${word !== undefined && isPath(word) ? ', before the paths' : ''}`;
}

/** Whether a word given is a path: it has a / (`~/logs`, `./x`), or names a file or directory here (`.`, `logs`). */
function isPath(word: string): boolean {
  return word.includes('/') || existsSync(word);
}

/**
 * What to do of a -v, -V or --verbose (yargs' name `flag`): cachelens has no verbose mode; the command to give without
 * it, when `args` name one whole. Example: ('v', ['summary', '-v']) → 'cachelens has no verbose mode: give summary
 * without -v; --version shows the version'.
 */
function verboseHint(flag: string, args: string[], commands: Command[]): string {
  const named = commandNamed(args, commands);
  const typed = flag === 'verbose' ? '--verbose' : `-${flag}`;
  return `cachelens has no verbose mode${named?.leaf ? `: give ${named.path} without ${typed}` : ''}; --version shows the version`;
}

/**
 * yargs' error `err` with a -v, -V or --verbose among `args` (now a flag it takes, then refused): the message kept
 * whole, -v added to its unknown arguments (`summary --jsn -v`: 'Unknown arguments: jsn, v'), and verboseHint to its
 * hint. Alone (`cachelens -v`: 'name a command'), -v is taken for the version flag of many tools.
 */
function verboseToo(err: UsageError, args: string[], commands: Command[]): UsageError {
  const verbose = verboseFlag(args);
  if (verbose === undefined) return err;
  const hint = verboseHint(verbose, args, commands);
  if (commandNamed(args, commands) === undefined && /^name a command/.test(err.message)) {
    return new UsageError(`Unknown argument: ${verbose}`, verbose === 'verbose' ? hint : 'did you mean --version?');
  }
  const unknown = /^Unknown arguments?: (.+)$/s.exec(err.message);
  const message = unknown ? `Unknown arguments: ${unknown[1]}, ${verbose}` : err.message;
  return new UsageError(message, err.hint ? `${err.hint}; ${hint}` : hint);
}

/**
 * yargs' "Unknown arguments: foo-bar, fooBar" names an unknown `--foo-bar` twice, as typed and camel-cased:
 * once, as typed (`--no-foo-bar` as no-foo-bar, which yargs reads as foo-bar set false). Other messages as they are.
 */
export function unknownOnce(text: string, args: readonly string[]): string {
  const m = /^Unknown arguments?: (.+)$/s.exec(text);
  if (!m) return text;
  const words = m[1]!.split(', ');
  const camel = (w: string) => w.replace(/-+([^-])/g, (_, c: string) => c.toUpperCase());
  const end = args.indexOf('--');
  const typed = (end === -1 ? args : args.slice(0, end)).map((a) => /^--([^=]*)/s.exec(a)?.[1]).filter((a) => a !== undefined);
  const named = words
    .filter((w) => !words.some((v) => v !== w && camel(v) === w && !typed.includes(w)))
    .map((w) => (!typed.includes(w) && typed.includes(`no-${w}`) ? `no-${w}` : w));
  const once = [...new Set(named)];
  return `Unknown argument${once.length === 1 ? '' : 's'}: ${once.join(', ')}`;
}

/**
 * The name of a verbose or short version flag among `args` (before a `--`), as yargs names an
 * unknown argument: `-v`, `-V`, `-vv` → v, V; `--verbose`, `--verbose=1` → verbose; else undefined.
 */
function verboseFlag(args: readonly string[]): string | undefined {
  const end = args.indexOf('--');
  for (const a of end === -1 ? args : args.slice(0, end)) {
    const short = /^-([vV])[vV]*(?:=.*)?$/s.exec(a);
    if (short) return short[1];
    if (/^--(?:no-)?verbose(?:=.*)?$/s.test(a)) return 'verbose';
  }
  return undefined;
}

/**
 * The values of `--name` as typed (`--name V` or `--name=V`), in the order given; none when it is not there.
 * Example: (['whatif', 'ttl', '--to', '05'], 'to') → ['05'].
 */
function typedValues(args: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}` && i + 1 < args.length) values.push(args[i + 1]!);
    else if (args[i]!.startsWith(`--${name}=`)) values.push(args[i]!.slice(name.length + 3));
  }
  return values;
}

/**
 * The arguments (an option's value after `=` too) with a space in them, as an error or a notice may
 * name them: as given, with `~/` expanded, and absolute (a path given relative to the working
 * directory is named so by the store and the log walk), cleaned as the message is, longest first.
 * wrap() keeps each whole (its `keep`): `no such file or directory: /home/u/my logs/x` was broken
 * at `my` and `logs`, and a path copied from the terminal was two.
 * Example: (['summary', 'my logs'], '/home/u') in /work → ['/work/my logs', 'my logs'].
 */
function spacedPaths(args: readonly string[], home: string): string[] {
  const out = new Set<string>();
  for (const a of args) {
    const v = /^--[^=\s]+=/.test(a) ? a.slice(a.indexOf('=') + 1) : a;
    if (!v.includes(' ')) continue;
    const expanded = expandHome(v, home);
    for (const p of [v, expanded, resolve(expanded)]) out.add(clean(p));
  }
  return [...out].sort((x, y) => y.length - x.length);
}

/** clean() for each line of a text that may hold several. */
function cleanLines(s: string): string {
  return s.split('\n').map(clean).join('\n');
}

/** yargs' list of the options it declared, by kind (public, not in @types/yargs). */
interface YargsOptions {
  getOptions(): { array: string[]; boolean: string[]; choices: Record<string, unknown[]> };
}

/** The one yargs internal we touch (yargs 18.2, pinned): its usage instance's help cache. */
interface YargsInternals {
  getInternalMethods(): { getUsageInstance(): { cacheHelpMessage: () => void } };
}

// `cachelens summary | head` closes the pipe early: that is the reader's choice, not an error. Any
// other failure to write the output (`> /dev/full`, a full disk) is one line and exit 2, as a report
// that cannot be written is, not a stack
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  process.stderr.write(`cachelens: cannot write the output: ${clean(outputError(err))} (check the file or device it goes to, and the free space)\n`);
  process.exit(2);
});

/**
 * A failure to write the output as its code and Node's words without the call they name.
 * Example: ENOSPC's "ENOSPC: no space left on device, write" → 'ENOSPC: no space left on device'.
 */
function outputError(err: NodeJS.ErrnoException): string {
  const message = String(err.message ?? err).split('\n')[0]!.replace(/, write$/, '');
  const code = err.code ?? 'error';
  return message.startsWith(`${code}: `) ? message : `${code}: ${message}`;
}

cli(hideBin(process.argv)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`cachelens: internal error: ${cleanLines(String((err as Error).stack ?? err))}\n`);
    process.exitCode = 1;
  },
);
