/**
 * Files the report inlines, read at render time: the vega runtime and vega's CSP-safe
 * expression interpreter from node_modules, and the template, client scripts and chart specs
 * from `reports/`. Read once per process.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** `reports/` of this package: two levels up from both `src/report/` and `dist/report/`. */
export const reportsDir = fileURLToPath(new URL('../../reports/', import.meta.url));

const cache = new Map<string, string>();

function cached(key: string, load: () => string): string {
  let v = cache.get(key);
  if (v === undefined) {
    v = load();
    cache.set(key, v);
  }
  return v;
}

/** The package's `build/` folder (their `exports` hide subpaths, so resolve the entry point). */
function buildDir(pkg: string): string {
  return path.dirname(require.resolve(pkg));
}

/** vega's UMD build: defines `window.vega`. */
export function vegaRuntime(): string {
  return cached('vega', () => readFileSync(path.join(buildDir('vega'), 'vega.min.js'), 'utf8'));
}

/**
 * vega-interpreter ships only as an ES module that imports from `vega-util`; vega's UMD build
 * re-exports vega-util, so the one import becomes a read of `window.vega` and the one export a
 * global `vegaInterpreter`. A changed file shape fails here rather than in the browser.
 */
export function interpreterRuntime(): string {
  return cached('interpreter', () => {
    const src = readFileSync(path.join(buildDir('vega-interpreter'), 'vega-interpreter.js'), 'utf8');
    const importRe = /^import \{([^}]*)\} from 'vega-util';$/m;
    const exportRe = /^export \{ (\w+) as expressionInterpreter \};$/m;
    const imp = importRe.exec(src);
    const exp = exportRe.exec(src);
    if (!imp || !exp || /^(import|export) /m.test(src.replace(importRe, '').replace(exportRe, ''))) {
      throw new Error('vega-interpreter build changed shape: cannot inline it');
    }
    const body = src.replace(importRe, '').replace(exportRe, '');
    return `(function(){const {${imp[1]}} = window.vega;\n${body}\nwindow.vegaInterpreter = ${exp[1]};})();`;
  });
}

/** A file below `reports/`, e.g. `template.html` or `client/charts.js`. */
export function reportFile(rel: string): string {
  return cached('reports:' + rel, () => readFileSync(path.join(reportsDir, rel), 'utf8'));
}
