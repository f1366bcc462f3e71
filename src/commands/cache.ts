/**
 * anatomy, whatif ttl, whatif keepalive: why each cache write happened, and what a setting would
 * change. The analyses and their reporters load when one of these runs, not with the CLI.
 */
import type { Argv } from 'yargs';
import type { loadChains } from '../analyses/load-chains.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { type Command, type Io, type Output, withContext, withLogOptions } from './command.js';

async function withChains<T extends Output>(argv: Record<string, unknown>, io: Io, f: (ctx: Context, chains: Awaited<ReturnType<typeof loadChains>>) => T | Promise<T>): Promise<T> {
  const { loadChains } = await import('../analyses/load-chains.js');
  return withContext(argv, io, async (ctx) => f(ctx, await loadChains(ctx.store, ctx.filters)));
}

function jitterOf(argv: Record<string, unknown>): number {
  const j = argv.jitter === undefined ? 1024 : Number(argv.jitter);
  if (!Number.isInteger(j) || j < 0) throw new UsageError(`--jitter ${String(argv.jitter)}: expected a whole number of tokens`);
  return j;
}

export const anatomyCommand: Command = {
  command: 'anatomy [paths..]',
  describe: 'why each cache write happened: cold, growth, expiry or break; waste and re-purchase chains',
  options: (y: Argv) =>
    withLogOptions(y)
      .option('chain', { type: 'string', describe: 'print one chain round by round (chain id or a unique prefix)' })
      .option('jitter', { type: 'number', describe: 'rewrites below this many tokens are breakpoint jitter (default 1024)' })
      .option('top', { type: 'number', describe: 'chains to list (default 10)' }),
  run: (argv, io) =>
    withChains(argv, io, async (ctx, chains) => {
      const { analyzeAnatomy, chainDetail } = await import('../analyses/anatomy-summary.js');
      const { formatAnatomy, formatChain } = await import('../reporters/anatomy.js');
      const options = { jitter: jitterOf(argv), weightsFor: (m: string, p: number) => ctx.prices.weightsFor(m, p) };
      if (argv.chain) {
        const want = String(argv.chain);
        const hits = chains.filter((c) => c.chainId === want || c.chainId.startsWith(want));
        const exact = hits.find((c) => c.chainId === want);
        if (!exact && hits.length !== 1) throw new UsageError(hits.length ? `--chain ${want} matches ${hits.length} chains; give more of the id` : `--chain ${want}: no such chain in scope`);
        const detail = chainDetail(exact ?? hits[0], options);
        return { json: detail, text: formatChain(detail, io.color) };
      }
      const result = analyzeAnatomy(chains, options);
      return { json: result, text: formatAnatomy(result, { color: io.color, limit: argv.top === undefined ? undefined : Number(argv.top) }) };
    }),
};

function ttlCommand(): Command {
  return {
    command: 'ttl [paths..]',
    describe: 'price forcing the 1-hour TTL (or the 5-minute one) on your real sessions',
    options: (y: Argv) =>
      withLogOptions(y)
        .option('to', { choices: ['1h', '5m'] as const, default: '1h', describe: 'the TTL to force' })
        .option('scope', { choices: ['all', 'main', 'subagents'] as const, default: 'all', describe: 'which chains the override applies to' })
        .option('jitter', { type: 'number' }),
    run: (argv, io) =>
      withChains(argv, io, async (ctx, chains) => {
        const { whatifTtl } = await import('../analyses/ttl.js');
        const { formatTtl } = await import('../reporters/whatif.js');
        const result = whatifTtl(chains, {
          to: argv.to as '1h' | '5m',
          scope: argv.scope as 'all' | 'main' | 'subagents',
          jitter: jitterOf(argv),
          weightsFor: (m, p) => ctx.prices.weightsFor(m, p),
        });
        return { json: result, text: formatTtl(result, io.color) };
      }),
  };
}

function parseBudget(v: unknown, sweep: readonly number[]): number | readonly number[] {
  if (v === undefined || v === 'sweep') return sweep;
  if (v === 'inf' || v === 'infinity') return Infinity;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--budget ${String(v)}: expected a whole number, inf or sweep`);
  return n;
}

function keepaliveCommand(): Command {
  return {
    command: 'keepalive [paths..]',
    describe: 'price keepalive pings that refresh a 5-minute cache, for budgets 0…20 and ∞',
    options: (y: Argv) =>
      withLogOptions(y)
        .option('interval', { type: 'number', default: 270, describe: 'seconds between pings (below the 5-minute TTL)' })
        .option('budget', { type: 'string', describe: 'pings per gap: N, inf, or sweep (default: sweep 0…20 and ∞)' })
        .option('ping-in', { type: 'number', default: 30, describe: 'input tokens of one ping (written at the 5-minute weight)' })
        .option('ping-out', { type: 'number', default: 10, describe: 'output tokens of one ping' })
        .option('jitter', { type: 'number' }),
    run: (argv, io) =>
      withChains(argv, io, async (ctx, chains) => {
        const interval = Number(argv.interval);
        if (!(interval > 0 && interval < 300)) throw new UsageError(`--interval ${String(argv.interval)}: must be between 0 and 300 seconds (below the 5-minute TTL)`);
        const { DEFAULT_BUDGETS, whatifKeepalive } = await import('../analyses/keepalive.js');
        const { formatKeepalive } = await import('../reporters/whatif.js');
        const result = whatifKeepalive(chains, {
          intervalS: interval,
          budgets: parseBudget(argv.budget, DEFAULT_BUDGETS),
          pingIn: Number(argv['ping-in']),
          pingOut: Number(argv['ping-out']),
          jitter: jitterOf(argv),
          weightsFor: (m, p) => ctx.prices.weightsFor(m, p),
        });
        return { json: result, text: formatKeepalive(result, io.color) };
      }),
  };
}

export const whatifCommand: Command = {
  command: 'whatif',
  describe: 'what-ifs on your real sessions: ttl (force 1h/5m TTL), keepalive (ping budgets)',
  subcommands: [ttlCommand(), keepaliveCommand()],
  run: async () => {
    throw new UsageError('whatif needs a what-if: ttl or keepalive');
  },
};
