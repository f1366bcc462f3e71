/** Cache anatomy by agent type: what every cache write bought (cold / growth / expiry / break). */
import type { Anatomy, AnatomyComponent } from './data.js';
import { fmtInt, fmtPct, leftOutMark } from './format.js';
import { html, sortableTable } from './html.js';
import { andList, ANATOMY_ORDER, groupBy, otherLabel, sum, topTied, type ChartSink, type SectionOutput } from './section.js';

/** Agent types drawn; the rest fold into one "other" bar (plugins can define dozens). */
const MAX_TYPES = 15;

export function renderAnatomy(d: Anatomy, charts: ChartSink): SectionOutput {
  const total = sum(d.rows, (r) => r.weight);
  const of = (c: AnatomyComponent) => sum(d.rows.filter((r) => r.component === c), (r) => r.weight);
  const types = [...groupBy(d.rows, (r) => r.agentType)].map(([agentType, rows]) => {
    const w = (c: AnatomyComponent) => sum(rows.filter((r) => r.component === c), (r) => r.weight);
    const all = sum(rows, (r) => r.weight);
    // none of its requests has a price: its weights are unknown, shown so, not as 0
    const unknown = rows.every((r) => r.weight === null);
    // a class of writes its requests without a price have tokens of: its weight leaves them out, marked +? (README)
    const left = (c: AnatomyComponent) => sum(rows.filter((r) => r.component === c), (r) => r.unpricedTokens ?? 0);
    const tokens = (c: AnatomyComponent) => sum(rows.filter((r) => r.component === c), (r) => r.tokens);
    return { agentType, cold: w('cold'), growth: w('growth'), expiry: w('expiry'), break: w('break'), all, unknown, left, tokens };
  });
  types.sort((a, b) => b.all - a.all);
  // agent types tied at the top (the same weight as printed) are named together, not the first of them
  const rebought = (t: (typeof types)[number]) => t.expiry + t.break;
  const worstOnes = topTied(types, rebought, fmtInt);
  const worst = worstOnes[0];
  const unknown = types.filter((t) => t.unknown);
  const ofWrites = (t: (typeof types)[number]) => fmtPct(rebought(t) / Math.max(t.all, 1));
  // nothing re-bought: no agent type is named as having re-bought "the most" (0 wt)
  const most =
    worst && rebought(worst) > 0
      ? worstOnes.length === 1
        ? `“${worst.agentType}” re-bought the most (${fmtInt(rebought(worst))} wt, ${ofWrites(worst)} of its writes)`
        : `${andList(worstOnes.map((t) => `“${t.agentType}”`))} re-bought the most (${fmtInt(rebought(worst))} wt each; ${andList(worstOnes.map(ofWrites))} of their writes)`
      : 'no agent type re-bought any';
  let reading =
    total > 0 && worst
      ? `Of ${fmtInt(total)} wt of cache writes, ${fmtPct(of('expiry') / total)} re-bought context after a cache expiry and ${fmtPct(of('break') / total)} after a broken prefix; ${most}.`
      : unknown.length
        ? 'No priced cache writes in scope.'
        : 'No cache writes in scope.';
  if (unknown.length) reading += ` Weight unknown (no price): ${unknown.map((t) => `“${t.agentType}”`).join(', ')}.`;
  // requests of models without a price are in no weight here: said (+?, as anatomy marks its sums), or an agent type
  // with some of them read as whole
  const left = (d.unpricedModels ?? []).reduce((n, m) => n + m.requests, 0);
  if (left > 0 && total > 0) {
    reading += ` +? ${fmtInt(left)} ${left === 1 ? 'request' : 'requests'} of ${d.unpricedModels!.length === 1 ? 'a model' : 'models'} without a price (${d.unpricedModels!.map((m) => m.model).join(', ')}) ${left === 1 ? 'is' : 'are'} left out of these weights.`;
  }
  const shown = new Set(types.slice(0, MAX_TYPES).map((t) => t.agentType));
  const other = otherLabel(types.length - shown.size, shown);
  const rows = d.rows.filter((r) => r.weight !== null).map((r) => ({
    agentType: shown.has(r.agentType) ? r.agentType : other,
    component: r.component,
    order: ANATOMY_ORDER[r.component],
    weight: r.weight,
    tokens: r.tokens,
  }));
  const table = sortableTable(
    'Cache-write weight by agent type (wt = base-input-token equivalents)',
    [
      { label: 'agent type' },
      { label: 'cold', numeric: true },
      { label: 'growth', numeric: true },
      { label: 'expiry', numeric: true },
      { label: 'break', numeric: true },
      { label: 'rewrite share', numeric: true, hint: '(expiry + break) ÷ all writes' },
    ],
    types.map((t) =>
      t.unknown
        ? // a class it wrote no token of weighs 0 whatever its price, as anatomy's tables give it (README's one rule for +?)
          [
            { text: t.agentType },
            ...(['cold', 'growth', 'expiry', 'break'] as const).map((c) => (t.tokens(c) > 0 ? { text: 'unknown' } : { text: fmtInt(0), sort: 0 })),
            t.tokens('expiry') + t.tokens('break') > 0 ? { text: 'unknown' } : { text: fmtPct(0), sort: 0 },
          ]
        : [
            { text: t.agentType },
            { text: fmtInt(t.cold) + leftOutMark(t.cold, t.left('cold')), sort: t.cold },
            { text: fmtInt(t.growth) + leftOutMark(t.growth, t.left('growth')), sort: t.growth },
            { text: fmtInt(t.expiry) + leftOutMark(t.expiry, t.left('expiry')), sort: t.expiry },
            { text: fmtInt(t.break) + leftOutMark(t.break, t.left('break')), sort: t.break },
            { text: fmtPct(t.all > 0 ? (t.expiry + t.break) / t.all : 0), sort: t.all > 0 ? (t.expiry + t.break) / t.all : 0 },
          ],
    ),
  );
  return { reading, body: html`${charts.figure('anatomy', { rows }, 'Cache-write weight by agent type, split into cold, growth, expiry and break')}${table}` };
}
