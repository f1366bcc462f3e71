/**
 * @duckdb/node-api. The bundle (scripts/bundle.mjs) carries its JavaScript, so Node reads, resolves
 * and compiles one file instead of the package's ~100 CommonJS files (`require` of the API alone:
 * 85 – 100 → 45 – 55 ms); only the native binding (@duckdb/node-bindings) is loaded from
 * node_modules at run time. Unbundled (tests under tsx), Node imports the package as ESM, which
 * first has cjs-module-lexer parse every re-exported file to learn its export names (~120 ms).
 */
export * as duckdb from '@duckdb/node-api';
