/** Cost over time, per day (in the report's time zone), stacked by component. */
import { isUtc } from '../analyses/filters.js';
import type { CostOverTime } from './data.js';
import { fmtPct, fmtUsd, leftOutMark } from './format.js';
import type { CostComponent } from './data.js';
import { html, sortableTable } from './html.js';
import { andList, COST_COMPONENT_LABEL, COST_COMPONENT_ORDER, groupBy, sum, topTied, type ChartSink, type SectionOutput } from './section.js';

export function renderCostOverTime(d: CostOverTime, charts: ChartSink): SectionOutput {
  const total = sum(d.rows, (r) => r.usd);
  // a day's requests without a price (on each of its rows): its priced sums leave them out, marked +? as summary's by-day table marks them
  const unpricedOf = (rows: CostOverTime['rows']) => rows[0]?.unpricedRequests ?? 0;
  const byDay = [...groupBy(d.rows, (r) => r.day)].map(([day, rows]) => ({ day, usd: sum(rows, (r) => r.usd), unpriced: unpricedOf(rows) }));
  const totalMark = leftOutMark(total, sum(byDay, (r) => r.unpriced));
  const dayMark = (r: { usd: number; unpriced: number }) => leftOutMark(r.usd, r.unpriced);
  const byComponent = [...groupBy(d.rows, (r) => r.component)].map(([c, rows]) => ({ c, usd: sum(rows, (r) => r.usd) }));
  // days and components tied at the top (the same USD, the same share, as printed) are named together, not the first of them
  const top = topTied(byDay, (r) => r.usd, (v) => `${fmtUsd(v)} ${fmtPct(v / total)}`);
  const topC = topTied(byComponent, (r) => r.usd, (v) => fmtPct(v / total));
  const days = (): string => {
    const [t] = top;
    // one day is not "the most expensive" of one, at 100.0% of itself
    if (byDay.length === 1) return `All on ${t!.day}: ${fmtUsd(total)}${totalMark}`;
    if (top.length === 1) return `Over ${byDay.length} days, the most expensive was ${t!.day} at ${fmtUsd(t!.usd)}${dayMark(t!)} (${fmtPct(t!.usd / total)} of ${fmtUsd(total)}${totalMark})`;
    if (top.length === byDay.length) return `Over ${byDay.length} days, each cost ${fmtUsd(t!.usd)}${top.some(dayMark) ? ' +?' : ''} (${fmtPct(t!.usd / total)} of ${fmtUsd(total)}${totalMark})`;
    return `Over ${byDay.length} days, the most expensive were ${andList(top.map((r) => r.day))} at ${fmtUsd(t!.usd)} each${top.some(dayMark) ? ' +?' : ''} (${fmtPct(t!.usd / total)} each of ${fmtUsd(total)}${totalMark})`;
  };
  const largest = andList(topC.map((r) => COST_COMPONENT_LABEL[r.c as keyof typeof COST_COMPONENT_LABEL]));
  const reading =
    top.length && topC.length && total > 0
      ? `${days()}; ${topC.length === 1 ? `the largest component is ${largest} (${fmtPct(topC[0]!.usd / total)})` : `the largest components are ${largest} (${fmtPct(topC[0]!.usd / total)} each)`}.`
      : 'No priced requests in this period.';
  // one row per bar segment (day and component), its USD written here as the tables write it: the
  // tooltip shows that text (vega's number format wrote nothing as $0 and a dollar as $1)
  const rows = [...groupBy(d.rows.filter((r) => r.usd !== null), (r) => `${r.day} ${r.component}`)].map(([, rs]) => {
    const usd = sum(rs, (r) => r.usd);
    const usdText = fmtUsd(usd) + leftOutMark(usd, sum(rs, (r) => r.unpricedTokens ?? 0));
    return { day: rs[0]!.day, component: COST_COMPONENT_LABEL[rs[0]!.component], order: COST_COMPONENT_ORDER[rs[0]!.component], usd, usdText, tokens: sum(rs, (r) => r.tokens) };
  });
  // a day whose requests all lack a price has no bar: said, not left out silently
  const unknownDays = [...groupBy(d.rows, (r) => r.day)].filter(([, rs]) => rs.every((r) => r.usd === null) && rs.some((r) => r.tokens > 0)).map(([day]) => day);
  const zone = d.timezone && !isUtc(d.timezone) ? ` (days in ${d.timezone})` : ' (UTC days)';
  const components = Object.keys(COST_COMPONENT_ORDER) as CostComponent[];
  const table = sortableTable(
    `Cost per day${zone} and component (USD)`,
    [{ label: 'day' }, ...components.map((c) => ({ label: COST_COMPONENT_LABEL[c], numeric: true })), { label: 'total', numeric: true }],
    [...groupBy(d.rows, (r) => r.day)].map(([day, rs]) => {
      const usd = (c: CostComponent | null) => {
        const of = rs.filter((r) => c === null || r.component === c);
        return of.length > 0 && of.every((r) => r.usd === null) ? null : sum(of, (r) => r.usd);
      };
      // +? where the cell leaves out requests without a price: a component's tokens of them, the day's requests for its total
      const cell = (v: number | null, unpriced: number) => ({ text: fmtUsd(v) + leftOutMark(v, unpriced), sort: v });
      return [
        { text: day },
        ...components.map((c) => cell(usd(c), sum(rs.filter((r) => r.component === c), (r) => r.unpricedTokens ?? 0))),
        cell(usd(null), unpricedOf(rs)),
      ];
    }),
  );
  return {
    reading: unknownDays.length ? `${reading} Not drawn, their cost unknown (no price): ${unknownDays.join(', ')}.` : reading,
    body: html`${charts.figure('cost-over-time', { rows }, `Cost per day${zone}, stacked by component`, undefined, table)}`,
  };
}
