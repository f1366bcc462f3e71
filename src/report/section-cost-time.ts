/** Cost over time, per UTC day, stacked by component. */
import type { CostOverTime } from './data.js';
import { fmtPct, fmtUsd } from './format.js';
import { html } from './html.js';
import { COST_COMPONENT_LABEL, COST_COMPONENT_ORDER, groupBy, maxBy, sum, type ChartSink, type SectionOutput } from './section.js';

export function renderCostOverTime(d: CostOverTime, charts: ChartSink): SectionOutput {
  const total = sum(d.rows, (r) => r.usd);
  const byDay = [...groupBy(d.rows, (r) => r.day)].map(([day, rows]) => ({ day, usd: sum(rows, (r) => r.usd) }));
  const byComponent = [...groupBy(d.rows, (r) => r.component)].map(([c, rows]) => ({ c, usd: sum(rows, (r) => r.usd) }));
  const top = maxBy(byDay, (r) => r.usd);
  const topC = maxBy(byComponent, (r) => r.usd);
  const reading =
    top && topC && total > 0
      ? `Over ${byDay.length} day${byDay.length === 1 ? '' : 's'}, the most expensive was ${top.day} at ${fmtUsd(top.usd)} (${fmtPct(top.usd / total)} of ${fmtUsd(total)}); the largest component is ${COST_COMPONENT_LABEL[topC.c as keyof typeof COST_COMPONENT_LABEL]} (${fmtPct(topC.usd / total)}).`
      : 'No priced requests in this period.';
  const rows = d.rows
    .filter((r) => r.usd !== null)
    .map((r) => ({ day: r.day, component: COST_COMPONENT_LABEL[r.component], order: COST_COMPONENT_ORDER[r.component], usd: r.usd, tokens: r.tokens }));
  return {
    reading,
    body: html`${charts.figure('cost-over-time', { rows }, 'Cost per day, stacked by component')}`,
  };
}
