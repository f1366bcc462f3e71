/**
 * Preload (`node --import`) for the fault suite: on exit, records the process's peak resident set
 * size (getrusage ru_maxrss, in KiB: worker threads included, since they share the process).
 */
import { isMainThread } from 'node:worker_threads';
import { record } from './record.mjs';

if (isMainThread) process.on('exit', () => record({ maxRssKb: process.resourceUsage().maxRSS }));
