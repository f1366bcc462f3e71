/**
 * Bundles the CLI after `tsc`: `dist/bundle/` holds the CLI, with the lazily loaded commands (cache
 * analyses, replay, report) as chunks of their own, and its two workers as files of their own; `dist/cli.js`
 * becomes a one-line entry that imports the bundle. Node then loads the chunks a command needs, a few
 * dozen files, instead of the compiled modules (one per source file) and yargs' own: a warm `summary` on explicit paths (no early walk) was 30 – 140 ms faster in
 * interleaved runs, depending on the load (BENCHMARKS-log.md).
 *
 * The bundle sits two directories below the repository like the compiled modules did
 * (`dist/store/…`), so their `new URL('../../queries/', import.meta.url)` still finds the repository's
 * files. DuckDB's JavaScript API is bundled; its native binding stays outside (an addon, loaded with
 * require() at run time), as do the report's vega libraries (resolved with require.resolve and
 * inlined into the report as text).
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

/**
 * yargs and its cliui measure text with `string-width`, only to lay out help and error text; its
 * modules build their regular expressions and `Intl.Segmenter`s when loaded, and string-width 8's
 * `\p{RGI_Emoji}` expression alone took 14 – 21 ms to construct, in every run of every command.
 * Each import of it becomes a function that loads the module on its first call: a module reached
 * only through `require()` is bundled to run when first required.
 */
const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, async (args) => {
      // (the resolve below comes back here: it is left to esbuild)
      if (args.pluginData === 'real') return undefined;
      const real = await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: 'real' });
      if (real.errors.length > 0) return undefined;
      return { path: real.path, namespace: 'lazy-string-width' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-string-width' }, (args) => ({
      contents: `let width;\nexport default function stringWidth(text, options) {\n  width ??= require(${JSON.stringify(args.path)}).default;\n  return width(text, options);\n}\n`,
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

// chunk names carry content hashes: without this, every build would leave the last one's behind
rmSync('dist/bundle', { recursive: true, force: true });

/**
 * The build's identity, a digest of its sources: a proof kept beside the store by another build,
 * whose walk may list the logs by other rules, is not taken (src/ingest/unchanged.ts).
 */
const sources = readdirSync('src', { recursive: true }).map(String).filter((f) => /\.(ts|json)$/.test(f)).sort();
const hash = createHash('sha1');
for (const f of sources) hash.update(f).update('\0').update(readFileSync(join('src', f))).update('\0');
const CACHELENS_BUILD = JSON.stringify(hash.digest('hex').slice(0, 16));

const common = {
  outdir: 'dist/bundle',
  bundle: true,
  platform: 'node',
  target: 'node20',
  // the native binding and its platform packages are found in node_modules at run time
  external: ['@duckdb/node-bindings', '@duckdb/node-bindings-*'],
  logLevel: 'warning',
};

await build({
  ...common,
  entryPoints: { cli: 'src/cli.ts' },
  splitting: true,
  format: 'esm',
  // CommonJS dependencies bundled into ESM call require(): give them Node's
  banner: { js: "import { createRequire as __cachelensRequire } from 'node:module'; const require = __cachelensRequire(import.meta.url);" },
  // module-worker.ts starts the workers below
  define: { CACHELENS_WORKER_EXT: '".cjs"', CACHELENS_BUILD },
  plugins: [lazyStringWidth],
});

// Each worker is one CommonJS file: a thread then starts without Node's ESM loader and without
// loading shared chunks (a worker doing nothing: 22 instead of 27 ms; the walk worker is on a
// warm run's critical path, BENCHMARKS-log.md).
await build({
  ...common,
  entryPoints: { 'read-worker': 'src/ingest/read-worker.ts', 'walk-worker': 'src/ingest/walk-worker.ts' },
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  define: { 'import.meta.url': '__cachelensUrl', CACHELENS_BUILD },
  banner: { js: "const __cachelensUrl = require('node:url').pathToFileURL(__filename).href;" },
});

writeFileSync('dist/cli.js', "#!/usr/bin/env node\n// The CLI, bundled by scripts/bundle.mjs (src/cli.ts is its entry).\nimport './bundle/cli.js';\n");
