/** replay channel (and, when built, replay session): what a different context delivery would cost. */
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { CHANNEL_STRATEGIES, type ChannelStrategy, formatChannelReplay, parseDurationMinutes, runChannelReplay } from '../replay/index.js';
import { ENCODINGS, type EncodingName } from '../replay/index.js';
import type { Command } from './command.js';

function list(v: unknown): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).map((s) => s.trim()).filter(Boolean);
}

function mentions(v: unknown, flag: string): number[] {
  return list(v).map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} ${s}: expected a mention number (1, 2, …)`);
    return n;
  });
}

const channelCommand: Command = {
  command: 'channel <file>',
  describe: 'replay a chat channel log under window / watermark / unstable context delivery',
  options: (y: Argv) =>
    y
      .positional('file', { type: 'string', describe: 'channel log (JSONL: id, author, created_at, text, optional thread_root_id)' })
      .option('agent', { type: 'string', default: '@claude', describe: 'the agent handle mentioned in the channel' })
      .option('strategy', { type: 'string', default: CHANNEL_STRATEGIES.join(','), describe: `strategies, comma-separated: ${CHANNEL_STRATEGIES.join(', ')}` })
      .option('evict-at', { type: 'string', describe: 'evict the process before mention K (comma list allowed)' })
      .option('fail-at', { type: 'string', describe: 'the run at mention K fails (its watermark is discarded)' })
      .option('idle-reap', { type: 'string', describe: 'reap processes idle this long by channel time (e.g. 30m); off by default' })
      .option('prefix-tokens', { type: 'number', default: 2120, describe: 'tokens of framing (system prompt and tool schemas)' })
      .option('encoding', { choices: ENCODINGS as readonly string[], default: 'cl100k_base', describe: 'js-tiktoken encoding' })
      .option('ttl', { choices: ['5m', '1h'] as const, default: '5m', describe: 'cache TTL for the weighted cost' })
      .option('json', { type: 'boolean', describe: 'print JSON instead of tables' }),
  async run(argv) {
    const strategies = list(argv.strategy) as ChannelStrategy[];
    for (const s of strategies) if (!CHANNEL_STRATEGIES.includes(s)) throw new UsageError(`--strategy ${s}: expected ${CHANNEL_STRATEGIES.join(', ')}`);
    const prefix = Number(argv['prefix-tokens']);
    if (!Number.isInteger(prefix) || prefix < 0) throw new UsageError(`--prefix-tokens ${String(argv['prefix-tokens'])}: expected a whole number`);
    const result = await runChannelReplay({
      file: String(argv.file),
      agent: String(argv.agent),
      strategies,
      evictAt: mentions(argv['evict-at'], '--evict-at'),
      failAt: mentions(argv['fail-at'], '--fail-at'),
      idleReapMinutes: argv['idle-reap'] === undefined ? null : parseDurationMinutes(String(argv['idle-reap'])),
      prefixTokens: prefix,
      encoding: argv.encoding as EncodingName,
      ttl: argv.ttl as '5m' | '1h',
    });
    return { json: result, text: formatChannelReplay(result) };
  },
};

export const replayCommand: Command = {
  command: 'replay',
  describe: 'replay context delivery token by token: channel (a chat channel log)',
  subcommands: [channelCommand],
  run: async () => {
    throw new UsageError('replay needs a replay: channel');
  },
};
