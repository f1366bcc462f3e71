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
   * script folds it once the chart is drawn. `signals`: values for the spec's own params.
   */
  figure(spec: ChartSpecName, data: Record<string, unknown[]>, label: string, caption?: string, table?: SafeHtml, signals?: Record<string, string | number>): SafeHtml {
    const id = `chart-${this.charts.length + 1}`;
    this.charts.push({ id, spec, data, label, ...(signals ? { signals } : {}) });
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

/** The most characters an axis label of a key has (section-cost-by's chart). */
export const AXIS_LABEL_MAX = 34;

const SEPARATOR = /[/\\:._ -]/;

/**
 * A short, unique axis label for each key (keys distinct). A key longer than AXIS_LABEL_MAX is
 * cut at its start, where paths share their folders: '…' and its end. Keys whose ends are then
 * the same (two worktrees of one repository, `…/a/src/app` and `…/b/src/app`) would get one label
 * and be read as one bar, so each of them keeps, in front of its end, the path part where it
 * first differs from the others, cut to 12 characters. A label that is still not unique (a key
 * the same as another's label) gets ' (2)', ' (3)'. `text` is a key as the page shows it.
 * Example: axisLabels(['/home/u/alice/projects/some-long-repo-name/app', '/home/u/bob/projects/some-long-repo-name/app'])
 * gives '…alice…cts/some-long-repo-name/app' and '…bob…jects/some-long-repo-name/app' (34 characters each).
 */
export function axisLabels(keys: readonly string[], text: (key: string) => string = (k) => k): Map<string, string> {
  const cut = (k: string) => (k.length > AXIS_LABEL_MAX ? '…' + k.slice(-(AXIS_LABEL_MAX - 1)) : k);
  const shown = keys.map(text);
  const labels = new Map(shown.map((k) => [k, cut(k)]));
  for (const same of groupBy([...new Set(shown)], (k) => labels.get(k)!).values()) {
    if (same.length < 2) continue;
    for (const k of same) {
      // where k first differs from each of the others: the latest such place tells it from all of them
      const at = Math.max(...same.filter((o) => o !== k).map((o) => commonPrefix(k, o)));
      let from = at;
      while (from > 0 && !SEPARATOR.test(k[from - 1]!)) from--;
      let to = at + 1;
      while (to < k.length && !SEPARATOR.test(k[to]!)) to++;
      const part = k.slice(Math.max(from, at - 5), to).slice(0, 12);
      labels.set(k, `…${part}…${k.slice(-(AXIS_LABEL_MAX - 2 - part.length))}`);
    }
  }
  const unique = new Map<string, string>();
  const used = new Set<string>();
  keys.forEach((k, i) => {
    let label = labels.get(shown[i]!)!;
    for (let n = 2; used.has(label); n++) label = `${labels.get(shown[i]!)!} (${n})`;
    used.add(label);
    unique.set(k, label);
  });
  return unique;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * The rows whose `value`, as the reading prints it (`text`), is the largest one's, in their order:
 * a tie names them all, not the first of them; empty for an empty list.
 * Example: days at $1.20, $1.20 and $0.40 → the two at $1.20.
 */
export function topTied<T>(rows: readonly T[], value: (r: T) => number, text: (v: number) => string): T[] {
  const best = maxBy(rows, value);
  return best === undefined ? [] : rows.filter((r) => text(value(r)) === text(value(best)));
}

/** Example: andList(['“a”', '“b”', '“c”']) === '“a”, “b” and “c”' */
export function andList(xs: readonly string[]): string {
  return xs.length > 1 ? `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}` : (xs[0] ?? '');
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
