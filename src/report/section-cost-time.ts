/** Cost over time, per day (in the report's time zone), stacked by component. */
import type { CostOverTime } from './data.js';
import { fmtPct, fmtUsd } from './format.js';
import type { CostComponent } from './data.js';
import { html, sortableTable } from './html.js';
import { COST_COMPONENT_LABEL, COST_COMPONENT_ORDER, groupBy, maxBy, sum, type ChartSink, type SectionOutput } from './section.js';

export function renderCostOverTime(d: CostOverTime, charts: ChartSink): SectionOutput {
  const total = sum(d.rows, (r) => r.usd);
  const byDay = [...groupBy(d.rows, (r) => r.day)].map(([day, rows]) => ({ day, usd: sum(rows, (r) => r.usd) }));
  const byComponent = [...groupBy(d.rows, (r) => r.component)].map(([c, rows]) => ({ c, usd: sum(rows, (r) => r.usd) }));
  const top = maxBy(byDay, (r) => r.usd);
  const topC = maxBy(byComponent, (r) => r.usd);
  const reading =
    top && topC && total > 0
      ? `${
          // one day is not "the most expensive" of one, at 100.0% of itself
          byDay.length === 1 ? `All on ${top.day}: ${fmtUsd(total)}` : `Over ${byDay.length} days, the most expensive was ${top.day} at ${fmtUsd(top.usd)} (${fmtPct(top.usd / total)} of ${fmtUsd(total)})`
        }; the largest component is ${COST_COMPONENT_LABEL[topC.c as keyof typeof COST_COMPONENT_LABEL]} (${fmtPct(topC.usd / total)}).`
      : 'No priced requests in this period.';
  const rows = d.rows
    .filter((r) => r.usd !== null)
    .map((r) => ({ day: r.day, component: COST_COMPONENT_LABEL[r.component], order: COST_COMPONENT_ORDER[r.component], usd: r.usd, tokens: r.tokens }));
  // a day whose requests all lack a price has no bar: said, not left out silently
  const unknownDays = [...groupBy(d.rows, (r) => r.day)].filter(([, rs]) => rs.every((r) => r.usd === null) && rs.some((r) => r.tokens > 0)).map(([day]) => day);
  const zone = d.timezone && d.timezone !== 'UTC' ? ` (days in ${d.timezone})` : ' (UTC days)';
  const components = Object.keys(COST_COMPONENT_ORDER) as CostComponent[];
  const table = sortableTable(
    `Cost per day${zone} and component (USD)`,
    [{ label: 'day' }, ...components.map((c) => ({ label: COST_COMPONENT_LABEL[c], numeric: true })), { label: 'total', numeric: true }],
    [...groupBy(d.rows, (r) => r.day)].map(([day, rs]) => {
      const usd = (c: CostComponent | null) => {
        const of = rs.filter((r) => c === null || r.component === c);
        return of.length > 0 && of.every((r) => r.usd === null) ? null : sum(of, (r) => r.usd);
      };
      const cell = (v: number | null) => ({ text: fmtUsd(v), sort: v });
      return [{ text: day }, ...components.map((c) => cell(usd(c))), cell(usd(null))];
    }),
  );
  return {
    reading: unknownDays.length ? `${reading} Not drawn, their cost unknown (no price): ${unknownDays.join(', ')}.` : reading,
    body: html`${charts.figure('cost-over-time', { rows }, `Cost per day${zone}, stacked by component`, undefined, table)}`,
  };
}
