/** summary, sessions, blocks: what was spent, by model / project / day / session / 5-hour window. */
import { blocks } from '../analyses/blocks.js';
import { sessions } from '../analyses/sessions.js';
import { summary } from '../analyses/summary.js';
import { openContext } from '../context.js';
import { formatBlocks, formatSessions, formatSummary } from '../reporters/summary.js';
import { type Command, commonOptions, withLogOptions } from './command.js';

export const summaryCommand: Command = {
  command: 'summary [paths..]',
  describe: 'totals, by model, by project and by day, with data quality',
  options: withLogOptions,
  async run(argv, io) {
    const ctx = await openContext(commonOptions(argv, io));
    try {
      const result = await summary(ctx.store, ctx.filters, ctx.walkSkips);
      return { json: result, text: formatSummary(result, io.color) };
    } finally {
      ctx.store.close();
    }
  },
};

export const sessionsCommand: Command = {
  command: 'sessions [paths..]',
  describe: 'one row per session, most expensive first',
  options: withLogOptions,
  async run(argv, io) {
    const ctx = await openContext(commonOptions(argv, io));
    try {
      const result = await sessions(ctx.store, ctx.filters);
      return { json: result, text: formatSessions(result.sessions, io.color) };
    } finally {
      ctx.store.close();
    }
  },
};

export const blocksCommand: Command = {
  command: 'blocks [paths..]',
  describe: '5-hour usage-limit windows with weight and USD per window',
  options: withLogOptions,
  async run(argv, io) {
    const ctx = await openContext(commonOptions(argv, io));
    try {
      const result = await blocks(ctx.store, ctx.filters);
      return { json: result, text: formatBlocks(result.blocks, io.color) };
    } finally {
      ctx.store.close();
    }
  },
};
