/**
 * @duckdb/node-api. The bundle (scripts/bundle.mjs) carries its JavaScript, so Node reads, resolves
 * and compiles one file instead of the package's ~100 CommonJS files (~40 – 60 ms less per run);
 * only the native binding (@duckdb/node-bindings) is loaded from node_modules at run time.
 * Unbundled (tests under tsx), Node imports the package as ESM, which first has cjs-module-lexer
 * parse every re-exported file to learn its export names (~120 ms).
 */
import * as duckdbApi from '@duckdb/node-api';

export const duckdb = duckdbApi;
