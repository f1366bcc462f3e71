/**
 * gen:samples' arguments: `parse` reads them, `help` prints them. Both take each default from DEFAULTS, so
 * the defaults `--help` prints are the ones a run uses.
 */
import { parseArgs } from 'node:util';
import { UsageError } from '../errors.js';
import { sessionCount } from './corpus.js';

export const USAGE = 'usage: npm run gen:samples -- [--seed N] [--scale S] [--out DIR] [--truth full|summary]';

/** Each option's default, as parseArgs takes it (text). */
export const DEFAULTS = { seed: '42', scale: '1', out: 'sample-logs', truth: 'full' } as const;

export interface GenOptions {
  seed: number;
  scale: number;
  out: string;
  truth: 'full' | 'summary';
}

/** What `--help` prints: the usage line, then each option with its default. */
export function help(): string {
  return [
    USAGE,
    '',
    'Writes a synthetic corpus of Claude Code transcripts (DIR/projects/…), the sample chat channel',
    '(DIR/channels/backend.jsonl) and DIR/truth.json, what the corpus holds; the same seed and scale',
    'write the same bytes.',
    '',
    `  --seed N              the random seed, a non-negative integer (default ${DEFAULTS.seed})`,
    `  --scale S             sessions: S times the ${sessionCount(1)} recipes, rounded, at least 1; a positive`,
    `                        number (default ${DEFAULTS.scale})`,
    '  --out DIR             where to write, made if not there; a DIR holding a projects/ the generator',
    `                        did not write is refused (default ${DEFAULTS.out})`,
    '  --truth full|summary  truth.json with every request, or its totals alone, for large corpora',
    `                        (default ${DEFAULTS.truth})`,
    '  -h, --help            show this help',
    '',
  ].join('\n');
}

/**
 * parseArgs' error in one line a user reads: `--seed` with no value (`--seed --out X` is "argument is
 * ambiguous", its explaining lines cut) is `--seed needs a value`; others keep their first line.
 */
function argsError(err: Error & { code?: string }, argv: string[]): UsageError {
  const first = (err.message.split('\n')[0] as string).trim();
  const flag = /^Option '(?:-\w, )?(--[\w-]+)/.exec(first)?.[1];
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag !== undefined) {
    if (/does not take an argument/.test(first)) return new UsageError(`${flag} takes no value`, `${USAGE}; --help says more`);
    // the word after it that parseArgs would not take for its value: an option, or a value that begins with -
    const next = argv[argv.indexOf(flag) + 1];
    const why = next === undefined ? '' : `${next} is read as an option; a value that begins with - is written ${flag}=VALUE; `;
    return new UsageError(`${flag} needs a value`, `${why}${USAGE}`);
  }
  return new UsageError(first, `${USAGE}; --help says more`);
}

export function parse(argv: string[]): GenOptions | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        seed: { type: 'string', default: DEFAULTS.seed },
        scale: { type: 'string', default: DEFAULTS.scale },
        out: { type: 'string', default: DEFAULTS.out },
        truth: { type: 'string', default: DEFAULTS.truth },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    // node's messages can span lines; the CLI prints one
    throw argsError(err as Error, argv);
  }
  if (values.help) return 'help';
  const seed = Number(values.seed);
  const scale = Number(values.scale);
  if (!/^\d+$/.test(values.seed)) throw new UsageError(`--seed must be a non-negative integer, got ${values.seed}`);
  if (!Number.isFinite(scale) || scale <= 0) throw new UsageError(`--scale must be a positive number, got ${values.scale}`);
  if (values.truth !== 'full' && values.truth !== 'summary') throw new UsageError(`--truth must be full or summary, got ${values.truth}`);
  return { seed, scale, out: values.out, truth: values.truth };
}
