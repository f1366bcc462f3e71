/**
 * Preload (`node --import`) for test/store/lock.test.ts: records each time the process opens the
 * DuckDB file OPEN_PROBE_PATH, as a line appended to OPEN_PROBE_OUT when DuckDB answers: `locked`
 * (refused: another process holds it) or `opened`. So a test sees, off a terminal where the run
 * says nothing of it, that the run waited: it was refused first, and opened later.
 *
 * It wraps `open` of @duckdb/node-bindings as test/faults/preload/kill-at-sql.mjs wraps its SQL
 * functions: the module's exports are replaced by a copy, before the CLI first loads it.
 */
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const out = process.env.OPEN_PROBE_OUT;
const watched = process.env.OPEN_PROBE_PATH;
if (isMainThread && out && watched) {
  const require = createRequire(new URL('../../node_modules/@duckdb/node-api/package.json', import.meta.url));
  const id = require.resolve('@duckdb/node-bindings');
  const binding = require('@duckdb/node-bindings');
  const wrapped = {};
  for (const k of Object.getOwnPropertyNames(binding)) wrapped[k] = binding[k];
  const real = binding.open;
  wrapped.open = function (path, ...rest) {
    const opening = real.call(this, path, ...rest);
    if (path !== watched) return opening;
    return opening.then(
      (db) => {
        appendFileSync(out, 'opened\n');
        return db;
      },
      (err) => {
        appendFileSync(out, /\block\b/i.test(String(err?.message)) ? 'locked\n' : `failed: ${String(err?.message).split('\n')[0]}\n`);
        throw err;
      },
    );
  };
  require.cache[id].exports = wrapped;
}
