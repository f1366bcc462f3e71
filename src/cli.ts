#!/usr/bin/env node
/**
 * The `cachelens` executable. Before the CLI's modules load (~0.25 s), a command that reads logs
 * from the default roots starts walking them on a second thread (ingest/early-walk.ts); then the
 * CLI itself (cli-main.ts) parses the arguments and runs the command.
 */
import { walkEarly } from './ingest/early-walk.js';

walkEarly(process.argv.slice(2));
await import('./cli-main.js');
