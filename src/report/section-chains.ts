/** The top chains by waste, each with its round-by-round reads against writes. */
import type { ChainSummary, TopChains } from './data.js';
import { fmtCount, fmtInt, fmtPct, fmtUsd, fmtWeight, leftOutMark } from './format.js';
import { breakableId, facts, html, sortableTable, type SafeHtml } from './html.js';
import type { ChartSink, SectionOutput } from './section.js';

/** Chains drawn; the analysis may send more, the page stays short. */
const MAX_CHAINS = 8;

/**
 * Writes whose first and last rounds differ by at most this share of the larger are level, not
 * growing or falling: 5% is past what a few tool results more or less move a round's write, and
 * well short of the growth a re-purchase shows as context piles up (202,313 → 204,460 is 1.1%
 * and read "writes grow"; 131,000 → 155,800 is 16%).
 */
const LEVEL_SHARE = 0.05;

/**
 * How the writes move from the first round to the last, as the data has them.
 * Example: (131000, 155800) → 'grow from 131,000 to 155,800'; (202313, 204460) → 'stay level, 202,313 to 204,460,';
 * (155800, 131000) → 'fall from 155,800 to 131,000'.
 */
function writesTrend(first: number, last: number): string {
  if (Math.abs(last - first) <= LEVEL_SHARE * Math.max(first, last)) return `stay level, ${fmtInt(first)} to ${fmtInt(last)},`;
  return `${last > first ? 'grow' : 'fall'} from ${fmtInt(first)} to ${fmtInt(last)}`;
}

/** Example: reads [13818, 13818, 13818], writes [131000, 143400, 155800] → "reads stay at 13,818 …" */
export function chainReading(c: ChainSummary): string {
  const r = c.rounds;
  if (r.length === 0) return 'No rounds recorded.';
  const reads = r.map((x) => x.read);
  const first = r[0]!;
  const last = r[r.length - 1]!;
  // rounds without a request of their own (a prompt answered by nothing billed) have no bar: say so
  const total = c.roundCount ?? r.length;
  const over = total > r.length ? `the ${fmtInt(r.length)} of its ${fmtInt(total)} rounds that sent requests` : `${fmtCount(r.length, 'round')}`;
  const rewrite = r.reduce((s, x) => s + x.rewrite, 0);
  const written = r.reduce((s, x) => s + x.write, 0);
  if (c.repurchase && c.readMedian != null) {
    // the rule's pinned read: each round's first one, not the round's sum the chart draws (a round's
    // later requests read the context it wrote: "reads stay between 20,000 and 1,223,924" was a chain the rule pinned)
    return `Re-purchase pattern: every round's first request reads about ${fmtInt(c.readMedian)} tokens (within 1,024 of that median; the chart's reads sum all of a round's requests) while writes ${writesTrend(first.write, last.write)} over ${over} — the whole context is bought again every round.`;
  }
  if (c.repurchase) {
    const lo = reads.reduce((a, b) => Math.min(a, b));
    const hi = reads.reduce((a, b) => Math.max(a, b));
    const at = lo === hi ? `at ${fmtInt(lo)}` : `between ${fmtInt(lo)} and ${fmtInt(hi)}`;
    return `Re-purchase pattern: reads stay ${at} tokens while writes ${writesTrend(first.write, last.write)} over ${over} — the whole context is bought again every round.`;
  }
  return `${fmtPct(written > 0 ? rewrite / written : 0)} of ${fmtInt(written)} written tokens over ${over} were rewrites of context already cached.`;
}

function chainCard(c: ChainSummary, rank: number, charts: ChartSink): SafeHtml {
  const writes = c.rounds.flatMap((x) => [
    { round: x.round, kind: 'write: growth', order: 0, tokens: Math.max(0, x.write - x.rewrite) },
    { round: x.round, kind: 'write: rewrite', order: 1, tokens: x.rewrite },
  ]);
  const reads = c.rounds.map((x) => ({ round: x.round, tokens: x.read }));
  const table = sortableTable(
    'Tokens per round',
    [{ label: 'round', numeric: true }, { label: 'read', numeric: true }, { label: 'written: growth', numeric: true }, { label: 'written: rewrite', numeric: true }],
    c.rounds.map((x) => [
      { text: fmtInt(x.round), sort: x.round },
      { text: fmtInt(x.read), sort: x.read },
      { text: fmtInt(Math.max(0, x.write - x.rewrite)), sort: Math.max(0, x.write - x.rewrite) },
      { text: fmtInt(x.rewrite), sort: x.rewrite },
    ]),
  );
  return html`<article class="chain" data-chain-rank="${String(rank)}">
<h3>${String(rank)}. ${c.agentType} · ${c.project}${c.repurchase ? html`<span class="flag">re-purchase</span>` : ''}</h3>
${facts([
  // +? where a sum leaves the chain's requests without a price out, as anatomy marks its sums; the waste where they
  // wrote expiry or break tokens, as anatomy marks its waste
  ['waste', c.wasteWeight === null ? 'unknown (no price)' : `${fmtUsd(c.wasteUsd)} (${fmtWeight(c.wasteWeight)})${leftOutMark(c.wasteWeight, c.wasteUnpricedTokens ?? c.unpricedRequests)}`],
  ['cost', c.weight === null ? 'unknown (no price)' : `${fmtUsd(c.usd)} (${fmtWeight(c.weight)})${leftOutMark(c.weight, c.unpricedRequests)}`],
  ['hit ratio', fmtPct(c.hitRatio)],
  ['requests', fmtInt(c.requests)],
  ['rounds', (c.roundCount ?? c.rounds.length) > c.rounds.length ? `${fmtInt(c.roundCount!)} (${fmtInt(c.rounds.length)} with requests)` : fmtInt(c.rounds.length)],
  ['model', c.model],
  ['chain', html`<span class="mono">${breakableId(c.chainId)}</span>`],
  ['session', html`<span class="mono">${breakableId(c.sessionId)}</span>`],
])}
<p class="reading">${chainReading(c)}</p>
${charts.figure('chain-rounds', { writes, reads }, `Chain ${c.chainId}: tokens written and read per round`, undefined, table)}
</article>`;
}

export function renderTopChains(d: TopChains, charts: ChartSink): SectionOutput {
  const shown = d.chains.slice(0, MAX_CHAINS);
  const flagged = d.chains.filter((c) => c.repurchase).length;
  const top = shown[0];
  const none = d.withoutWaste === 1 ? '1 chain' : `${fmtInt(d.withoutWaste)} chains`;
  const reading = top
    ? `The most wasteful chain, “${top.agentType}” in ${top.project}, wasted ${top.wasteWeight === null ? 'an unknown amount (no price)' : `${fmtUsd(top.wasteUsd)} (${fmtWeight(top.wasteWeight)})${leftOutMark(top.wasteWeight, top.wasteUnpricedTokens ?? top.unpricedRequests)}`}; ${d.chains.length === 1 ? (flagged ? 'it shows' : 'it does not show') : `${flagged} of the ${d.chains.length} chains listed show`} the re-purchase pattern (reads pinned, writes re-bought every round).`
    : d.withoutWaste > 0
      ? `No chain wasted anything: the ${none} in scope re-bought no context after an expiry or a break.`
      : // the chains analysed are those with requests; the cross-tab counts those without too
        'No chain with a request in scope.';
  // a list titled by waste holds only chains that wasted something; the rest are counted, not drawn
  const rest = top && d.withoutWaste > 0 ? html`<p class="muted" data-without-waste="${String(d.withoutWaste)}">${d.withoutWaste === 1 ? '1 other chain' : `${fmtInt(d.withoutWaste)} other chains`} re-bought nothing.</p>` : '';
  return {
    reading,
    body: html`${shown.map((c, i) => chainCard(c, i + 1, charts))}${d.chains.length > shown.length ? html`<p class="muted">${String(d.chains.length - shown.length)} more chains not drawn.</p>` : ''}${rest}`,
  };
}
