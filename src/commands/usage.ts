/** summary, sessions, blocks: what was spent, by model / project / day / session / 5-hour window. */
import { blocks } from '../analyses/blocks.js';
import { sessions } from '../analyses/sessions.js';
import { summary } from '../analyses/summary.js';
import { formatBlocks, formatSessions, formatSummary } from '../reporters/summary.js';
import { QUERY_MEMORY_MB, SUMMARY_MEMORY_MB } from '../store/store.js';
import { type Command, filtersLineOf, numberOption, wholeNumber, withAnswers, withLogOptions } from './command.js';

// Each answers from the store's remembered results (or the answers kept beside it: withAnswers), or
// runs its bundled queries within QUERY_MEMORY_MB (summary: SUMMARY_MEMORY_MB) when an ingest has
// changed the store (Store.boundedMemory).

export const summaryCommand: Command = {
  command: 'summary [paths..]',
  describe: 'totals, by model, by project and by day, with data quality',
  options: withLogOptions,
  run: (argv, io) =>
    withAnswers(argv, io, async (ctx) => {
      const result = await ctx.store.boundedMemory(() => summary(ctx.store, ctx.filters, ctx.walkSkips), { mb: SUMMARY_MEMORY_MB });
      // the filters in force head the tables (they were said nowhere, and --project nomatch gave silent zeros)
      const line = await filtersLineOf(ctx, result.totals.requests > 0);
      // text only when printed: formatting 500 days of tables is a tenth of a warm --json run
      return {
        json: result,
        get text() {
          return line + formatSummary(result, io.color);
        },
      };
    }, true),
};

export const sessionsCommand: Command = {
  command: 'sessions [paths..]',
  describe: 'one row per session, most expensive first',
  options: (y) => withLogOptions(y).option('top', { type: 'string', requiresArg: true, describe: 'rows of the table, the most expensive sessions, at least 1 (default: all; --json lists all)' }),
  run: (argv, io) => {
    // as anatomy's --top: checked before the logs are read, and it cuts the table, not --json
    const limit = numberOption(argv, 'top', Infinity, 'a whole number of sessions, at least 1', (n) => wholeNumber(n) && n >= 1);
    return withAnswers(argv, io, async (ctx) => {
      const result = await ctx.store.boundedMemory(() => sessions(ctx.store, ctx.filters), { mb: QUERY_MEMORY_MB });
      const line = await filtersLineOf(ctx, result.sessions.length > 0);
      // the filters echoed as summary's are (they were in no output of sessions, blocks or anatomy)
      return { json: { ...result, filters: ctx.filters }, text: line + formatSessions(result, io.color, ctx.filters.timezone, limit) };
    });
  },
};

export const blocksCommand: Command = {
  command: 'blocks [paths..]',
  describe: '5-hour usage-limit windows with weight and USD per window',
  options: withLogOptions,
  run: (argv, io) =>
    withAnswers(argv, io, async (ctx) => {
      const result = await ctx.store.boundedMemory(() => blocks(ctx.store, ctx.filters), { mb: QUERY_MEMORY_MB });
      const line = await filtersLineOf(ctx, result.blocks.some((b) => b.requests > 0));
      return { json: { ...result, filters: ctx.filters }, text: line + formatBlocks(result, io.color, ctx.filters.timezone) };
    }),
};
