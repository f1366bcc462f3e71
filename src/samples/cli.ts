/**
 * `npm run gen:samples -- --seed N --scale S --out DIR [--truth full|summary]`
 *
 *   args ─▶ generateCorpus (recipes × scale ─▶ projects/… + truth.json) ─▶ summary on stdout
 *
 * Writes the channel log too when the channel generator (src/samples/channel.ts) is present.
 */
import { parseArgs } from 'node:util';
import { UsageError } from '../errors.js';
import { loadChannel } from './channel-loader.js';
import { generateCorpus, sessionCount } from './corpus.js';

const USAGE = 'usage: npm run gen:samples -- [--seed N] [--scale S] [--out DIR] [--truth full|summary]';

/** What `--help` prints: the usage line, then each option with its default. */
function help(): string {
  return [
    USAGE,
    '',
    'Writes a synthetic corpus of Claude Code transcripts (DIR/projects/…), the sample chat channel',
    '(DIR/channels/backend.jsonl) and DIR/truth.json, what the corpus holds; the same seed and scale',
    'write the same bytes.',
    '',
    '  --seed N              the random seed, a non-negative integer (default 42)',
    `  --scale S             sessions: S times the ${sessionCount(1)} recipes, rounded, at least 1; a positive`,
    '                        number (default 1)',
    '  --out DIR             where to write, made if not there; a DIR holding a projects/ the generator',
    '                        did not write is refused (default sample-logs)',
    '  --truth full|summary  truth.json with every request, or its totals alone, for large corpora',
    '                        (default full)',
    '  -h, --help            show this help',
    '',
  ].join('\n');
}

function parse(argv: string[]): { seed: number; scale: number; out: string; truth: 'full' | 'summary' } | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        seed: { type: 'string', default: '42' },
        scale: { type: 'string', default: '1' },
        out: { type: 'string', default: 'sample-logs' },
        truth: { type: 'string', default: 'full' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    // node's messages can span lines; the CLI prints one
    throw new UsageError(((err as Error).message.split('\n')[0] as string).trim(), `${USAGE}; --help says more`);
  }
  if (values.help) return 'help';
  const seed = Number(values.seed);
  const scale = Number(values.scale);
  if (!/^\d+$/.test(values.seed)) throw new UsageError(`--seed must be a non-negative integer, got ${values.seed}`);
  if (!Number.isFinite(scale) || scale <= 0) throw new UsageError(`--scale must be a positive number, got ${values.scale}`);
  if (values.truth !== 'full' && values.truth !== 'summary') throw new UsageError(`--truth must be full or summary, got ${values.truth}`);
  return { seed, scale, out: values.out, truth: values.truth };
}

async function main(): Promise<number> {
  try {
    const opts = parse(process.argv.slice(2));
    if (opts === 'help') {
      process.stdout.write(help());
      return 0;
    }
    const channel = await loadChannel();
    const started = process.hrtime.bigint();
    const r = generateCorpus({ ...opts, ...(channel ? { channel } : {}) });
    const secs = Number(process.hrtime.bigint() - started) / 1e9;
    const mb = (r.bytes / 1e6).toFixed(1);
    process.stdout.write(
      `wrote ${r.files} files (${mb} MB) for ${r.sessions} sessions to ${r.out} in ${secs.toFixed(1)} s\n` +
        `requests ${r.totals.requests}, duplicates ${r.counts.duplicates}, truth ${r.truthPath}\n` +
        (channel ? '' : 'channel generator (src/samples/channel.ts) not found: channels/backend.jsonl not written\n'),
    );
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`gen:samples: ${err.message}${err.hint ? ` (${err.hint})` : ''}\n`);
      return 2;
    }
    throw err;
  }
}

process.exitCode = await main();
