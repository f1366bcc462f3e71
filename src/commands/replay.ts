/**
 * replay channel and replay session: what a different context delivery would cost. The simulator
 * loads when a replay runs, not with the CLI.
 */
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { clean } from '../format/table.js';
import { loadPriceTable } from '../pricing/pricing.js';
import type { SessionReplayResult, ThinkingRule } from '../replay/index.js';
import { CHANNEL_STRATEGIES, DEFAULT_CHANNEL_MODEL, DEFAULT_PREFIX_TOKENS, ENCODINGS, type EncodingName, SESSION_STRATEGIES } from '../replay/names.js';
import { calibrateOf, type Command, decimal, DEFAULT_ROOTS_HELP, nonEmpty, numberOption, wholeNumber, withContext } from './command.js';

function list(v: unknown): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).map((s) => s.trim()).filter(Boolean);
}

/**
 * --strategy's names, in any case as every fixed vocabulary is (`--strategy Recorded`), each once,
 * all of them when none is given; a name not among them is quoted as typed.
 */
function strategiesOf<S extends string>(v: unknown, all: readonly S[]): S[] {
  if (v === undefined) return [...all];
  const typed = list(v);
  if (typed.length === 0) throw new UsageError(`--strategy ${String(v)}: name at least one of ${all.join(', ')}`);
  for (const s of typed) if (!all.includes(s.toLowerCase() as S)) throw new UsageError(`--strategy ${s}: expected ${all.join(', ')}`);
  return [...new Set(typed.map((s) => s.toLowerCase() as S))];
}

function mentions(v: unknown, flag: string): number[] {
  const given = list(v);
  // an empty value (`--evict-at "$K"` with K unset) ran with no event, silently, as an empty --strategy does not
  if (v !== undefined && given.length === 0) throw new UsageError(`${flag} ${String(v)}: expected a mention number (1, 2, …)`);
  return given.map((s) => {
    const n = decimal(s);
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
      .option('agent', { type: 'string', requiresArg: true, default: '@claude', defaultDescription: '@claude', describe: 'the agent handle mentioned in the channel' })
      .option('strategy', { type: 'string', requiresArg: true, array: true, nargs: 1, defaultDescription: CHANNEL_STRATEGIES.join(','), describe: `strategies, comma-separated (or the flag repeated): ${CHANNEL_STRATEGIES.join(', ')}` })
      .option('evict-at', { type: 'string', array: true, nargs: 1, describe: 'evict the process before mention K (comma list, or repeat the flag)' })
      .option('fail-at', { type: 'string', array: true, nargs: 1, describe: 'the run at mention K fails, its watermark discarded (comma list, or repeat the flag)' })
      .option('idle-reap', { type: 'string', requiresArg: true, describe: 'reap processes idle this long by channel time (e.g. 30m); off by default' })
      .option('prefix-tokens', { type: 'string', requiresArg: true, describe: `tokens of framing: system prompt and tool schemas (default ${DEFAULT_PREFIX_TOKENS})` })
      .option('encoding', { requiresArg: true, choices: ENCODINGS as readonly string[], default: 'cl100k_base', defaultDescription: 'cl100k_base', describe: 'js-tiktoken encoding' })
      .option('ttl', { requiresArg: true, choices: ['5m', '1h'] as const, default: '5m', defaultDescription: '5m', describe: 'cache TTL for the weighted cost' })
      .option('model', { type: 'string', requiresArg: true, defaultDescription: DEFAULT_CHANNEL_MODEL, describe: "the agent's model: its prices (in the bundled table, or --pricing's) give the weights and the cost in USD" })
      .option('pricing', { type: 'string', requiresArg: true, describe: 'price table JSON (own format or LiteLLM) that replaces or extends the bundled one' })
      .option('json', { type: 'boolean', describe: 'print JSON instead of tables' }),
  async run(argv, io) {
    // no yargs default: with one, `--strategy` given no value ran every strategy, silently
    // a strategy named twice runs once: run twice, its turns came twice in --json (as two strategies' would)
    const strategies = strategiesOf(argv.strategy, CHANNEL_STRATEGIES);
    const prefix = numberOption(argv, 'prefix-tokens', DEFAULT_PREFIX_TOKENS, 'a whole number of tokens up to 1,000,000', (n) => wholeNumber(n) && n <= 1_000_000);
    // the table every other command prices with: the bundled one, replaced or extended by the file
    const prices = loadPriceTable(argv.pricing as string | undefined);
    const { formatChannelReplay, parseDurationMinutes, runChannelReplay } = await import('../replay/index.js');
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
      model: nonEmpty(argv.model, '--model', 'a model id such as claude-opus-4-6'),
      prices,
    });
    return { json: result, text: formatChannelReplay(result, { color: io.color }) };
  },
};

const sessionCommand: Command = {
  command: 'session <target> [paths..]',
  describe: 'replay a real Claude Code chain under recorded / dedupe-attachments / volatile-prefix / reinject / cold-replay',
  options: (y: Argv) =>
    y
      .positional('target', { type: 'string', describe: 'a session id (or unique prefix) in the logs read, top (the most expensive session), or a transcript path (a .jsonl name, or one with a /)' })
      .positional('paths', { type: 'string', array: true, describe: `transcript files or directories to read for a session id (default: ${DEFAULT_ROOTS_HELP}); with a transcript path, the logs that tell its copies of other transcripts (default: none, the file alone)` })
      .option('chain', { type: 'string', requiresArg: true, describe: 'the chain to replay: chain id, agent id or a unique prefix (default: the main chain)' })
      .option('strategy', { type: 'string', requiresArg: true, array: true, nargs: 1, defaultDescription: SESSION_STRATEGIES.join(','), describe: `strategies, comma-separated (or the flag repeated): ${SESSION_STRATEGIES.join(', ')}` })
      .option('reinject-type', { type: 'string', requiresArg: true, describe: 'attachment type reinject re-inserts every round (default: skill_listing if any, else the largest attachment)' })
      .option('thinking', { requiresArg: true, choices: ['keep', 'drop'] as const, default: 'keep', defaultDescription: 'keep', describe: 'whether logged thinking text counts in later prompts' })
      .option('encoding', { requiresArg: true, choices: ENCODINGS as readonly string[], default: 'cl100k_base', defaultDescription: 'cl100k_base', describe: 'js-tiktoken encoding' })
      .option('calibrate', { type: 'string', requiresArg: true, default: '0', defaultDescription: '0', describe: 'fit a conversation scale on requests 2..K+1, apply it to every strategy, report fidelity on the rest (0 = off)' })
      .option('db', { type: 'string', requiresArg: true, describe: 'DuckDB store file (default ~/.cache/cachelens/store.duckdb; :memory: for none)' })
      .option('pricing', { type: 'string', requiresArg: true, describe: 'price table JSON (own format or LiteLLM) that replaces or extends the bundled one' })
      .option('rebuild', { type: 'boolean', describe: 'drop the store and read every log again' })
      .option('json', { type: 'boolean', describe: 'print JSON instead of tables' }),
  async run(argv, io) {
    // no yargs default: with one, `--strategy` given no value ran every strategy, silently (as replay channel's)
    // a strategy named twice runs once: `recorded,recorded` listed its turns twice and measured fidelity on 2(n − 1) requests
    const strategies = strategiesOf(argv.strategy, SESSION_STRATEGIES);
    // `top` in any case, as a fixed word is (no session id holds a t, o or p: ids are hex)
    const target = String(argv.target).toLowerCase() === 'top' ? 'top' : String(argv.target);
    const opts = {
      strategies,
      encoding: argv.encoding as EncodingName,
      thinking: argv.thinking as ThinkingRule,
      calibrate: calibrateOf(argv.calibrate),
      reinjectType: nonEmpty(argv['reinject-type'], '--reinject-type', 'an attachment type'),
      chain: nonEmpty(argv.chain, '--chain', 'a chain id, agent id or prefix'),
    };
    const { elsewhereOfFile, formatSessionReplay, locateChain, otherFilesOfFile, replaySessionFile, topSession, transcriptPath } = await import('../replay/index.js');
    let result: SessionReplayResult;
    // a path that is not there, or a directory, is said as such, not as an unknown session id
    const path = transcriptPath(target, `replay session ID ${target}`);
    const paths = (argv.paths as string[] | undefined) ?? [];
    if (path !== undefined && paths.length > 0) {
      // logs named beside the file: the store says which of its requests another transcript's copies
      // are (a resumed session's), as for a session id; they were read, and their word passed over
      const { elsewhere, otherFiles, prices } = await withContext(argv, io, async (ctx) => ({
        elsewhere: await elsewhereOfFile(ctx.store, path),
        otherFiles: await otherFilesOfFile(ctx.store, path),
        prices: ctx.prices,
      }));
      if (elsewhere === undefined) {
        throw new UsageError(`${clean(path)}: not among the logs read (${paths.map(clean).join(', ')})`, 'name logs that hold it, or give the transcript alone to replay it without the store');
      }
      result = await replaySessionFile(path, { ...opts, elsewhere, otherFiles, prices });
    } else if (path !== undefined) {
      result = await replaySessionFile(path, { ...opts, prices: loadPriceTable(argv.pricing as string | undefined) });
    } else {
      const { located, prices } = await withContext(argv, io, async (ctx) => ({ located: await locateChain(ctx.store, target === 'top' ? await topSession(ctx.store) : target, opts.chain), prices: ctx.prices }));
      result = await replaySessionFile(located.path, { ...opts, chain: located.chain_id, elsewhere: located.elsewhere, progressOnly: located.progress_only, otherFiles: { requests: located.other_file_requests, files: located.other_files }, otherCopies: located.other_copies, otherCopiesBy: located.other_copies_by, otherCopiesTied: located.other_copies_tied, prices });
    }
    return { json: result, text: formatSessionReplay(result, { color: io.color }) };
  },
};

export const replayCommand: Command = {
  command: 'replay',
  describe: 'replay context delivery token by token: channel (a chat channel log) or session (a real Claude Code chain)',
  subcommands: [channelCommand, sessionCommand],
  run: async () => {
    throw new UsageError('replay needs a replay: channel or session');
  },
};
