/** Cost by project, by model and by agent type, each stacked by component. */
import { COST_BY_KEYS, type CostBy, type CostDimension } from './data.js';
import { cleanStrings } from './escape.js';
import { fmtCount, fmtPct, fmtUsd, fmtWeight, leftOutMark } from './format.js';
import { html, sortableTable } from './html.js';
import { andList, axisLabels, COST_COMPONENT_LABEL, COST_COMPONENT_ORDER, groupBy, otherLabel, sum, topTied, type ChartSink, type SectionOutput } from './section.js';

const DIMENSIONS: Array<[CostDimension, string]> = [
  ['project', 'project'],
  ['model', 'model'],
  ['agentType', 'agent type'],
];

export function renderCostBy(d: CostBy, charts: ChartSink): SectionOutput {
  const parts: string[] = [];
  const missing: string[] = [];
  const figures = DIMENSIONS.map(([dim, label]) => {
    const rows = d.rows.filter((r) => r.dimension === dim);
    // the keys by USD; keys beyond COST_BY_KEYS and the rest the data already summed (key null) are one "other" bar
    // a key's requests without a price (on each of its rows): its priced sums leave them out, marked +? as summary marks them
    const unpricedOf = (rs: typeof rows) => sum([...groupBy(rs, (r) => r.key ?? '\u0000other')].map(([, of]) => of[0]!), (r) => r.unpricedRequests ?? 0);
    const totals = [...groupBy(rows.filter((r) => r.key !== null), (r) => r.key!)].map(([key, rs]) => ({ key, usd: sum(rs, (r) => r.usd), unpriced: unpricedOf(rs) }));
    totals.sort((a, b) => b.usd - a.usd);
    const shown = new Set(totals.slice(0, COST_BY_KEYS).map((t) => t.key));
    const rest = rows.filter((r) => r.key === null);
    const other = otherLabel(totals.length - shown.size + Math.max(0, ...rest.map((r) => r.groups)), shown);
    const all = sum(totals, (t) => t.usd) + sum(rest, (r) => r.usd);
    // keys tied at the top (the same USD and share as printed) are named together, not the first of them
    const top = topTied(totals, (t) => t.usd, (v) => `${fmtUsd(v)} ${fmtPct(v / all)}`);
    const topMark = top.some((t) => leftOutMark(t.usd, t.unpriced)) ? ' +?' : '';
    if (top.length && all > 0) parts.push(`${label} ${andList(top.map((t) => `“${t.key}”`))} (${fmtUsd(top[0]!.usd)}${topMark}, ${fmtPct(top[0]!.usd / all)}${top.length > 1 ? ' each' : ''})`);
    // the axis names each bar by a short label of its own, as the page shows it (control characters
    // as ?, so two keys told apart only by them are two bars); the tooltip and the table by the key
    const labels = axisLabels([...shown, other], cleanStrings);
    // one row per bar segment (key and component: the keys folded into "other" summed), its USD
    // written here as the tables write it, for the tooltip (vega's number format wrote nothing as $0)
    const barKey = (r: (typeof rows)[number]) => (r.key !== null && shown.has(r.key) ? r.key : other);
    const chartRows = [...groupBy(rows.filter((r) => r.usd !== null), (r) => `${r.component}\u0000${barKey(r)}`)].map(([, rs]) => {
      const key = barKey(rs[0]!);
      const usd = sum(rs, (r) => r.usd);
      return {
        key,
        label: labels.get(key)!,
        component: COST_COMPONENT_LABEL[rs[0]!.component],
        order: COST_COMPONENT_ORDER[rs[0]!.component],
        usd,
        // +? on a segment whose component the bar's requests without a price have tokens of, as cost over time marks
        // one: every segment of a bar with such requests was marked, its reads beside a 1-hour write they had none of
        usdText: fmtUsd(usd) + leftOutMark(usd, sum(rs, (r) => r.unpricedTokens ?? 0)),
        weight: rs.every((r) => r.weight === null) ? null : sum(rs, (r) => r.weight),
      };
    });
    // a key none of whose requests has a price has no bar: named, not left out silently
    const unknown = [...groupBy(rows.filter((r) => r.key !== null), (r) => r.key!)]
      .filter(([, rs]) => rs.every((r) => r.usd === null))
      .map(([key]) => key);
    // keys without a price folded into "other" are named when the data carries their names (a few),
    // else counted, so the list does not read as all of them (it said '1 agent type', naming none)
    const foldedNames = rest.find((r) => r.unpricedNames !== undefined)?.unpricedNames ?? [];
    const unknownRest = Math.max(0, ...rest.map((r) => r.unpricedGroups ?? 0)) - foldedNames.length;
    const priceless = [...unknown, ...foldedNames];
    if (priceless.length || unknownRest > 0) {
      const named = priceless.length ? `${label} ${priceless.map((k) => `“${k}”`).join(', ')}` : '';
      const more = unknownRest > 0 ? fmtCount(unknownRest, `${named ? 'more ' : ''}${label}`) : '';
      missing.push(named && more ? `${named} and ${more}` : named || more);
    }
    // the bars' totals, and the keys without a price the chart cannot draw
    const byBar = [...groupBy(rows, (r) => (r.key !== null && shown.has(r.key) ? r.key : r.key !== null && unknown.includes(r.key) ? r.key : other))].map(([key, rs]) => ({
      key,
      usd: rs.every((r) => r.usd === null) ? null : sum(rs, (r) => r.usd),
      weight: rs.every((r) => r.weight === null) ? null : sum(rs, (r) => r.weight),
      unpriced: unpricedOf(rs),
    }));
    byBar.sort((a, b) => (b.usd ?? -1) - (a.usd ?? -1));
    const table = sortableTable(
      `Cost by ${label}`,
      [{ label }, { label: 'USD', numeric: true }, { label: 'share', numeric: true, hint: 'of the priced USD' }, { label: 'weight', numeric: true }],
      byBar.map((b) => [
        { text: b.key },
        { text: fmtUsd(b.usd) + leftOutMark(b.usd, b.unpriced), sort: b.usd },
        { text: b.usd === null ? 'n/a' : fmtPct(all > 0 ? b.usd / all : null), sort: b.usd === null || all <= 0 ? null : b.usd / all },
        { text: b.weight === null ? 'unknown' : fmtWeight(b.weight) + leftOutMark(b.weight, b.unpriced), sort: b.weight },
      ]),
    );
    return html`<div class="subchart"><h3>By ${label}</h3>${charts.figure('cost-by', { rows: chartRows }, `Cost by ${label}, stacked by component`, undefined, table)}</div>`;
  });
  let reading = parts.length ? `The most expensive: ${parts.join('; ')}.` : 'No priced requests.';
  if (missing.length) reading += ` Not drawn, their cost unknown (no price): ${missing.join('; ')}.`;
  return { reading, body: html`${figures}` };
}
