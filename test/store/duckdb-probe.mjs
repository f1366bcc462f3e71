// Loaded with --import by test/store/answers.test.ts: says at the main thread's exit whether
// DuckDB's native library was loaded into this process (mapped in /proc/self/maps).
import { readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  process.on('exit', () => {
    const mapped = readFileSync('/proc/self/maps', 'utf8').includes('libduckdb');
    process.stderr.write(`duckdb-loaded: ${mapped}\n`);
  });
}
