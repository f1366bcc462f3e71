/** Every CLI command, in the order `--help` lists them. */
import type { Command } from './command.js';
import { anatomyCommand, whatifCommand } from './cache.js';
import { replayCommand } from './replay.js';
import { reportCommand } from './report.js';
import { startCommand } from './start.js';
import { crosstabCommand, exportCommand, queryCommand } from './store.js';
import { blocksCommand, sessionsCommand, summaryCommand } from './usage.js';

export const commands: Command[] = [startCommand, summaryCommand, sessionsCommand, blocksCommand, anatomyCommand, whatifCommand, replayCommand, reportCommand, queryCommand, crosstabCommand, exportCommand];
