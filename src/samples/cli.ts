/**
 * `npm run gen:samples -- --seed N --scale S --out DIR [--truth full|summary]`
 *
 *   args ─▶ generateCorpus (recipes × scale ─▶ projects/… + truth.json) ─▶ summary on stdout
 *
 * Writes the channel log too when the channel generator (src/samples/channel.ts) is present.
 */
import { UsageError } from '../errors.js';
import { help, parse } from './args.js';
import { loadChannel } from './channel-loader.js';
import { generateCorpus } from './corpus.js';

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
