/**
 * anatomy, whatif ttl, whatif keepalive: why each cache write happened, and what a setting would
 * change. The analyses and their reporters load when one of these runs, not with the CLI.
 */
import type { Argv } from 'yargs';
import type { ChainInput } from '../analyses/chain.js';
import { DEFAULT_INTERVAL_S, DEFAULT_JITTER, DEFAULT_PING_IN, DEFAULT_PING_OUT } from '../analyses/defaults.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { shownId } from '../format/table.js';
import { type Command, decimal, filtersLineOf, type Io, nonEmpty, numberOption, type Output, wholeNumber, withContext, withLogOptions } from './command.js';

/**
 * Runs `f` over the chains in scope, read in batches as they stream (streamChains): `f` is given
 * a function that hands it each chain once, and keeps what it needs of them. DuckDB works within
 * a bound meanwhile (Store.boundedMemory), so neither side holds every request of large logs.
 */
async function withChains<T extends Output>(
  argv: Record<string, unknown>,
  io: Io,
  f: (ctx: Context, forEachChain: (visit: (chain: ChainInput) => void) => Promise<void>) => T | Promise<T>,
): Promise<T> {
  const { streamChains } = await import('../analyses/load-chains.js');
  return withContext(argv, io, (ctx) =>
    ctx.store.boundedMemory(async () =>
      f(ctx, async (visit) => {
        for await (const batch of streamChains(ctx.store, ctx.filters)) for (const chain of batch) visit(chain);
      }),
    ),
  );
}

function jitterOf(argv: Record<string, unknown>): number {
  // no request writes 10⁹ tokens (ingest skips such usage): past that a jitter changes nothing, and past 2^53 it was printed as another number
  return numberOption(argv, 'jitter', DEFAULT_JITTER, 'a whole number of tokens up to 1,000,000,000', (n) => wholeNumber(n) && n <= 1e9);
}

/** anatomy's rows of each list unless --top gives another: printed in --help, and taken, from here */
const ANATOMY_TOP = 20;

const jitterOption = { type: 'string', requiresArg: true, describe: `rewrites below this many tokens are breakpoint jitter (default ${DEFAULT_JITTER})` } as const;

export const anatomyCommand: Command = {
  command: 'anatomy [paths..]',
  describe: 'why each cache write happened: cold, growth, expiry or break; waste and re-purchase chains',
  options: (y: Argv) =>
    withLogOptions(y)
      .option('chain', { type: 'string', requiresArg: true, describe: 'print one chain request by request (its chain id or agent id, or a unique prefix of one)' })
      .option('jitter', jitterOption)
      .option('top', { type: 'string', requiresArg: true, describe: `rows of the session, chain and re-purchase lists, at least 1 (default ${ANATOMY_TOP})` }),
  run: (argv, io) => {
    // `--chain=` or an empty `--chain "$ID"` is a mistake, not the flag left out (it printed every chain's anatomy)
    const want = nonEmpty(argv.chain, '--chain', 'a chain id or agent id, or a unique prefix of one');
    // flag values are checked before the logs are read (a bad --top was said after a whole ingest)
    const jitter = jitterOf(argv);
    // --top 0 printed each list as an empty table
    const limit = numberOption(argv, 'top', ANATOMY_TOP, 'a whole number of chains, at least 1', (n) => wholeNumber(n) && n >= 1);
    return withChains(argv, io, async (ctx, forEachChain) => {
      const { AnatomyAnalysis, chainDetail } = await import('../analyses/anatomy-summary.js');
      const { formatAnatomy, formatChain } = await import('../reporters/anatomy.js');
      const options = { jitter, weightsFor: (m: string, p: number) => ctx.prices.weightsFor(m, p) };
      if (want !== undefined) {
        // the chain of that id or agent id, else the one chain whose id starts with it (ChainMatch), as
        // replay session --chain takes it: a chain id cut to a narrow terminal keeps its agent id's end
        const { ChainMatch, manyChainsError } = await import('../replay/session-locate.js');
        const match = new ChainMatch<ChainInput>(want);
        await forEachChain((c) => match.offer(c, c.chainId, c.agentId));
        const found = match.result();
        if (found === null) {
          // a chain the logs hold but the filters leave out was said as one that is not there at all
          const { since, until, project } = ctx.filters;
          const given = [since !== null && `--since ${since}`, until !== null && `--until ${until}`, project !== null && `--project ${project}`].filter((x) => x !== false);
          if (given.length > 0) {
            const { streamChains } = await import('../analyses/load-chains.js');
            const all = new ChainMatch<ChainInput>(want);
            for await (const batch of streamChains(ctx.store, { ...ctx.filters, since: null, until: null, project: null })) for (const c of batch) all.offer(c, c.chainId, c.agentId);
            const hit = all.result();
            const choose = `${given.join(' ')} ${given.length === 1 ? 'chooses' : 'choose'}`;
            if (hit !== null && !('many' in hit)) {
              throw new UsageError(`--chain ${shownId(want)}: chain ${shownId(hit.hit.chainId)} has no request that ${choose}`, 'leave the filters out to see it whole, or widen them');
            }
            // a prefix of several chains, all left out, was 'no such chain in scope' too
            if (hit !== null) {
              const more = hit.many > hit.ids.length ? ', …' : '';
              throw new UsageError(
                `--chain ${shownId(want)} matches ${hit.many} chains (${hit.ids.map(shownId).join(', ')}${more}), none with a request that ${choose}`,
                'leave the filters out or widen them, and give more of the id to name one',
              );
            }
          }
          throw new UsageError(`--chain ${shownId(want)}: no such chain in scope`);
        }
        if ('many' in found) throw manyChainsError(want, found);
        const detail = chainDetail(found.hit, options);
        // the filters head the text and are echoed, and the times are in --timezone, as the rest of
        // anatomy's (the chain's table was in UTC under any --timezone, and named no filter)
        const line = await filtersLineOf(ctx, detail.summary.requests > 0);
        return { json: { ...detail, filters: ctx.filters }, text: line + formatChain(detail, io.color, ctx.filters.timezone) };
      }
      const analysis = new AnatomyAnalysis(options);
      await forEachChain((c) => void analysis.add(c));
      const result = analysis.result();
      const line = await filtersLineOf(ctx, result.totals.requests > 0);
      return { json: { ...result, filters: ctx.filters }, text: line + formatAnatomy(result, { color: io.color, limit }) };
    });
  },
};

function ttlCommand(): Command {
  return {
    command: 'ttl [paths..]',
    describe: 'price forcing the 1-hour TTL (or the 5-minute one) on your real sessions',
    options: (y: Argv) =>
      withLogOptions(y)
        .option('to', { requiresArg: true, choices: ['1h', '5m'] as const, default: '1h', defaultDescription: '1h', describe: 'the TTL to force' })
        .option('scope', { requiresArg: true, choices: ['all', 'main', 'subagents', 'subagent'] as const, default: 'all', defaultDescription: 'all', describe: 'which chains the what-if covers (the others are left out of every sum)' })
        .option('jitter', jitterOption),
    run: (argv, io) => {
      const jitter = jitterOf(argv);
      return withChains(argv, io, async (ctx, forEachChain) => {
        const { TtlWhatIf } = await import('../analyses/ttl.js');
        const { formatTtl } = await import('../reporters/whatif.js');
        const whatif = new TtlWhatIf({
          to: argv.to as '1h' | '5m',
          scope: scopeOf(argv.scope),
          jitter,
          weightsFor: (m, p) => ctx.prices.weightsFor(m, p),
        });
        await forEachChain((c) => whatif.add(c));
        const result = whatif.result();
        // the filters in force head the text and are echoed, as anatomy's are (the what-ifs said neither)
        const line = await filtersLineOf(ctx, result.chains > 0);
        return { json: { ...result, filters: ctx.filters }, text: line + formatTtl(result, io.color) };
      });
    },
  };
}

/** `--scope`: crosstab's `--kind` spells subagents `subagent`, and both spellings are taken here too. */
function scopeOf(v: unknown): 'all' | 'main' | 'subagents' {
  return v === 'subagent' ? 'subagents' : (v as 'all' | 'main' | 'subagents');
}

function parseBudget(v: unknown, sweep: readonly number[]): number | readonly number[] {
  // in any case, as inf is (`--budget Sweep` was not a number)
  if (v === undefined || (typeof v === 'string' && v.trim().toLowerCase() === 'sweep')) return sweep;
  // ∞ as the sweep's table prints it
  if (typeof v === 'string' && ['inf', 'infinity', '∞'].includes(v.trim().toLowerCase())) return Infinity;
  const n = decimal(v);
  // past 1,000,000 pings (8.5 years of a gap at 270 s) a budget is ∞, and past 2^53 it was printed as another number
  if (!Number.isInteger(n) || n < 0 || n > 1_000_000) throw new UsageError(`--budget ${String(v)}: expected a whole number up to 1,000,000, inf or sweep`);
  return n;
}

function keepaliveCommand(): Command {
  return {
    command: 'keepalive [paths..]',
    describe: 'price keepalive pings that refresh a 5-minute cache, for budgets 0…20 and ∞',
    options: (y: Argv) =>
      withLogOptions(y)
        .option('interval', { type: 'string', requiresArg: true, describe: `seconds between pings, below the 5-minute TTL (default ${DEFAULT_INTERVAL_S})` })
        .option('budget', { type: 'string', requiresArg: true, describe: 'pings per gap: N, inf (or ∞), or sweep (default: sweep 0…20 and ∞)' })
        .option('ping-in', { type: 'string', requiresArg: true, describe: `input tokens of one ping, written at the 5-minute weight (default ${DEFAULT_PING_IN})` })
        .option('ping-out', { type: 'string', requiresArg: true, describe: `output tokens of one ping (default ${DEFAULT_PING_OUT})` })
        .option('scope', { requiresArg: true, choices: ['all', 'main', 'subagents', 'subagent'] as const, default: 'all', defaultDescription: 'all', describe: 'which chains get pings (the others still count in every weight)' })
        .option('jitter', jitterOption),
    run: async (argv, io) => {
      // flag values are checked before the logs are read (a bad --budget was said after a whole ingest)
      // the what-if counts in whole milliseconds: 0.0001 s or 299.9999 s round to 0 or to the TTL itself
      const interval = numberOption(argv, 'interval', DEFAULT_INTERVAL_S, 'seconds between 0.001 and 299.999 (below the 5-minute TTL)', (n) => Math.round(n * 1000) > 0 && Math.round(n * 1000) < 300_000);
      // as --prefix-tokens: a ping is a few tokens, and 1e300 of them printed weights of 300 digits and e+295 %
      const pingTokens = (n: number) => wholeNumber(n) && n <= 1_000_000;
      const pingIn = numberOption(argv, 'ping-in', DEFAULT_PING_IN, 'a whole number of tokens up to 1,000,000', pingTokens);
      const pingOut = numberOption(argv, 'ping-out', DEFAULT_PING_OUT, 'a whole number of tokens up to 1,000,000', pingTokens);
      const jitter = jitterOf(argv);
      const { DEFAULT_BUDGETS, KeepaliveWhatIf } = await import('../analyses/keepalive.js');
      const budgets = parseBudget(argv.budget, DEFAULT_BUDGETS);
      return withChains(argv, io, async (ctx, forEachChain) => {
        const { formatKeepalive } = await import('../reporters/whatif.js');
        const whatif = new KeepaliveWhatIf({
          intervalS: interval,
          budgets,
          pingIn,
          pingOut,
          scope: scopeOf(argv.scope),
          jitter,
          weightsFor: (m, p) => ctx.prices.weightsFor(m, p),
        });
        let chains = 0;
        await forEachChain((c) => {
          chains++;
          whatif.add(c);
        });
        const result = whatif.result();
        const line = await filtersLineOf(ctx, chains > 0);
        return { json: { ...result, filters: ctx.filters }, text: line + formatKeepalive(result, io.color) };
      });
    },
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
