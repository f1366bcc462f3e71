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
import { generateCorpus } from './corpus.js';

function parse(argv: string[]): { seed: number; scale: number; out: string; truth: 'full' | 'summary' } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        seed: { type: 'string', default: '42' },
        scale: { type: 'string', default: '1' },
        out: { type: 'string', default: 'sample-logs' },
        truth: { type: 'string', default: 'full' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    // node's messages can span lines; the CLI prints one
    throw new UsageError(((err as Error).message.split('\n')[0] as string).trim(), 'usage: --seed N --scale S --out DIR');
  }
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
