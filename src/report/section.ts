/** What every section renderer returns, and the chart figure they share. */
import type { ChartInstance, ChartSpecName } from './charts.js';
import { html, type SafeHtml } from './html.js';

export interface SectionOutput {
  /** one sentence read off the data, shown under the title */
  reading: string;
  body: SafeHtml;
}

/** Hands out page-unique chart ids and collects the charts a section places. */
export class ChartSink {
  readonly charts: ChartInstance[] = [];

  /**
   * Registers a chart and returns its figure; `label` is its accessible name. `table`, for a chart
   * the section has no table beside, is the chart's numbers as HTML: it shows open in the page as
   * written, so they read without JavaScript, when vega fails and to a screen reader, and the page
   * script folds it once the chart is drawn.
   */
  figure(spec: ChartSpecName, data: Record<string, unknown[]>, label: string, caption?: string, table?: SafeHtml): SafeHtml {
    const id = `chart-${this.charts.length + 1}`;
    this.charts.push({ id, spec, data, label });
    return html`<figure class="chart" data-chart="${id}" data-spec="${spec}">
<div class="chart-canvas" role="img" aria-label="${label}"></div>
${caption ? html`<figcaption>${caption}</figcaption>` : ''}
${table ? html`<details class="chart-data" open><summary>The chart’s numbers<span class="visually-hidden">: ${label}</span></summary>${table}</details>` : ''}
</figure>`;
  }
}

export const COST_COMPONENT_LABEL = {
  input: 'input',
  output: 'output',
  write5m: '5m write',
  write1h: '1h write',
  read: 'read',
} as const;

/** Stacking order of cost components, so colours and stacks read the same in every chart. */
export const COST_COMPONENT_ORDER = { input: 0, output: 1, write5m: 2, write1h: 3, read: 4 } as const;

export const ANATOMY_ORDER = { cold: 0, growth: 1, expiry: 2, break: 3 } as const;

/** Sum of `f` over `rows`, treating null as 0. */
export function sum<T>(rows: readonly T[], f: (r: T) => number | null): number {
  let s = 0;
  for (const r of rows) s += f(r) ?? 0;
  return s;
}

/** Groups rows by a key, keeping first-seen order. */
export function groupBy<T>(rows: readonly T[], key: (r: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    const g = m.get(k);
    if (g) g.push(r);
    else m.set(k, [r]);
  }
  return m;
}

/**
 * The label of the bar that sums the keys not drawn on their own: `other (N)`, made distinct from
 * the drawn keys (a project or agent type may be named so: its bar and the sum's would merge).
 * Example: otherLabel(3, new Set(['other (3)'])) === 'other (3) ·'
 */
export function otherLabel(n: number, shown: ReadonlySet<string>): string {
  let label = `other (${n})`;
  while (shown.has(label)) label += ' ·';
  return label;
}

/** The entry with the largest value of `f`, or undefined for an empty list. */
export function maxBy<T>(rows: Iterable<T>, f: (r: T) => number): T | undefined {
  let best: T | undefined;
  let bestV = -Infinity;
  for (const r of rows) {
    const v = f(r);
    if (v > bestV) {
      best = r;
      bestV = v;
    }
  }
  return best;
}
