import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Set by scripts/bundle.mjs, whose workers are single CommonJS files; the compiled modules' are `.js`. */
declare const CACHELENS_WORKER_EXT: string | undefined;
const WORKER_EXT = typeof CACHELENS_WORKER_EXT === 'string' ? CACHELENS_WORKER_EXT : '.js';

/**
 * A worker thread running one of this directory's modules: the built `.js`, or under tsx (tests,
 * scripts run from source) the `.ts` with tsx registered in the worker, which does not inherit
 * the parent's loader.
 * Example: startModuleWorker('read-worker', { workerData }) runs read-worker.js beside this module:
 * dist/bundle/read-worker.cjs in the bundled CLI (scripts/bundle.mjs).
 */
export function startModuleWorker(name: string, options: WorkerOptions): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${name}${WORKER_EXT}`, import.meta.url), options);
  const url = new URL(`./${name}.ts`, import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url)}); });`, { ...options, eval: true });
}
