/**
 * Chart specs: one vega-lite file per chart in `reports/charts/<name>.vl.json`, compiled to vega
 * here in Node so the page needs only the vega runtime and its expression interpreter. Data is
 * never in a spec: each spec names its data sets and the page binds rows to those names, so text
 * from transcripts reaches a chart only as data values, never as spec code.
 */
import { compile, type TopLevelSpec } from 'vega-lite';
import { reportFile } from './assets.js';

export const CHART_SPECS = [
  'cost-over-time',
  'cost-by',
  'anatomy',
  'chain-rounds',
  'ttl-buckets',
  'keepalive',
  'replay-strategies',
  'replay-turns',
  'blocks',
] as const;

export type ChartSpecName = (typeof CHART_SPECS)[number];

/** One chart on the page: which spec, and the rows for each of its named data sets. */
export interface ChartInstance {
  id: string;
  spec: ChartSpecName;
  data: Record<string, unknown[]>;
  /** accessible label, also shown in the chart's error card */
  label: string;
  /** values for signals the spec declares (its `params`) that are settings, not rows: the blocks' `zone` */
  signals?: Record<string, string | number>;
}

const compiled = new Map<ChartSpecName, object>();

/**
 * vega-lite says this for every chart with a row-per-category height (`height: {step}`) and a
 * container width, and then does what we want: fit the width, step the height.
 */
const BENIGN_WARNING = /^Dropping "fit-y" because spec has discrete height\.$/;

/** The vega spec for a chart, compiled once per process; vega-lite warnings fail loudly. */
export function vegaSpec(name: ChartSpecName): object {
  let spec = compiled.get(name);
  if (!spec) {
    const vl = JSON.parse(reportFile(`charts/${name}.vl.json`)) as TopLevelSpec;
    const config = JSON.parse(reportFile('theme.json'));
    const warnings: string[] = [];
    const logger = {
      level: () => logger,
      error: (...m: unknown[]) => { warnings.push(m.join(' ')); return logger; },
      warn: (...m: unknown[]) => {
        const text = m.join(' ');
        if (!BENIGN_WARNING.test(text)) warnings.push(text);
        return logger;
      },
      info: () => logger,
      debug: () => logger,
    };
    spec = compile(vl, { config, logger: logger as never }).spec;
    if (warnings.length) throw new Error(`chart ${name}: ${warnings.join('; ')}`);
    compiled.set(name, spec);
  }
  return spec;
}

/**
 * Compiles every chart's spec ahead of the render (~0.1 s), for a caller that would otherwise
 * wait: the report does it while the logs are walked. A spec that fails here fails again when
 * the page is rendered.
 */
export function compileCharts(): void {
  for (const name of CHART_SPECS) {
    try {
      vegaSpec(name);
    } catch {
      // reported by the render
    }
  }
}
