/**
 * @duckdb/node-api, loaded with require(). Imported as ESM, this CommonJS package first has its
 * ~100 re-exported files parsed by Node's cjs-module-lexer to learn their export names: ~120 ms
 * added to every run (a third of a warm `summary`). Types are imported from the package as usual
 * (`import type`), which costs nothing at run time.
 */
import { createRequire } from 'node:module';

export const duckdb = createRequire(import.meta.url)('@duckdb/node-api') as typeof import('@duckdb/node-api');
