/**
 * Bundles the CLI after `tsc`: `dist/bundle/` holds the CLI and the two worker entries, with the
 * lazily loaded commands (cache analyses, replay, report) as chunks of their own, and `dist/cli.js`
 * becomes a one-line entry that imports the bundle. Node then loads a handful of files instead of
 * the 122 compiled modules and yargs' own: a warm `summary` on explicit paths (no early walk) was 30 – 140 ms faster in
 * interleaved runs, depending on the load (BENCHMARKS.md).
 *
 * The bundle sits two directories below the repository like the compiled modules did
 * (`dist/store/…`), so their `new URL('../../queries/', import.meta.url)` still finds the repository's
 * files. DuckDB's JavaScript API is bundled; its native binding stays outside (an addon, loaded with
 * require() at run time), as do the report's vega libraries (resolved with require.resolve and
 * inlined into the report as text).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

// chunk names carry content hashes: without this, every build would leave the last one's behind
rmSync('dist/bundle', { recursive: true, force: true });

await build({
  entryPoints: { cli: 'src/cli.ts', 'read-worker': 'src/ingest/read-worker.ts', 'walk-worker': 'src/ingest/walk-worker.ts' },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // the native binding and its platform packages are found in node_modules at run time
  external: ['@duckdb/node-bindings', '@duckdb/node-bindings-*'],
  // CommonJS dependencies bundled into ESM call require(): give them Node's
  banner: { js: "import { createRequire as __cachelensRequire } from 'node:module'; const require = __cachelensRequire(import.meta.url);" },
  logLevel: 'warning',
});

writeFileSync('dist/cli.js', "#!/usr/bin/env node\n// The CLI, bundled by scripts/bundle.mjs (src/cli.ts is its entry).\nimport './bundle/cli.js';\n");
