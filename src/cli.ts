#!/usr/bin/env node
/**
 * The `cachelens` executable. Before the CLI's modules load (~0.25 s), a command that reads logs
 * from the default roots starts walking them on a second thread (ingest/early-walk.ts); then the
 * CLI itself (cli-main.ts) parses the arguments and runs the command.
 */
import { walkEarly } from './ingest/early-walk.js';

// DuckDB's allocator (jemalloc) with one arena for all its threads: memory one thread freed is
// reused by the next instead of kept per thread. Read when DuckDB loads, so set before it; a
// user's own setting wins. Cold 1 GB runs peaked at 338 – 344 MiB against 386 – 394 MiB with
// jemalloc's default, in as long (4 interleaved runs each; BENCHMARKS-log.md).
process.env.DUCKDB_JE_MALLOC_CONF ??= 'narenas:1';
walkEarly(process.argv.slice(2));
await import('./cli-main.js');
