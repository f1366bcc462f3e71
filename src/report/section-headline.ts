/** The headline: what was spent, how much of it was cache, how much was waste, what would help. */
import type { Headline } from './data.js';
import { fmtCompact, fmtCount, fmtInt, fmtPct, fmtSignedPct, fmtUsd, fmtWeight } from './format.js';
import { jsonNumber, jsonNumberText } from '../format/json-numbers.js';
import { attrs, html, type SafeHtml } from './html.js';
import { andList, type SectionOutput } from './section.js';

/** A headline number; `data-metric`/`data-value` carry the raw value, as `--json` writes it, for tests and scripts. */
function tile(metric: string, label: string, value: string, raw: number | null, note: string | SafeHtml, exact?: string): SafeHtml {
  return html`<div class="tile">
<div class="tile-label">${label}</div>
<div class="tile-value" data-metric="${metric}" data-value="${jsonNumberText(raw)}"${attrs({ title: exact })}>${value}</div>
<div class="tile-note">${note}</div>
</div>`;
}

/** What a what-if saves in the measure the headline shows it in: USD when known (its ranking's), else weight; below 0 it costs more. */
function saves(b: NonNullable<Headline['bestWhatIf']>): number {
  return b.savingUsd ?? b.savingWeight;
}

/**
 * Whether a what-if changes nothing priced (its saving 0 in USD and weight as --json writes them, as the ranking
 * compares them): forcing the 1-hour TTL where no chain writes at 5 minutes. The best of the what-ifs only when
 * none saves anything, and then there is nothing to gain, not a "least costly" what-if to name.
 */
function unchanged(b: NonNullable<Headline['bestWhatIf']>): boolean {
  return jsonNumber(b.savingUsd ?? 0) === 0 && jsonNumber(b.savingWeight) === 0;
}

/** The mark of a sum over the priced requests when some have no price (summary's and the TTL section's +?), else ''. */
function partly(h: Headline): string {
  return h.unpricedRequests > 0 && h.weight !== null ? ' +?' : '';
}

/**
 * The mark of the waste: +? when requests without a price wrote expiry or break tokens (the waste they leave out),
 * as `anatomy`'s waste line marks it; requests without a price that wrote neither leave it whole (README: one rule
 * for +?). It was marked whenever any request had no price.
 */
function wastePartly(h: Headline): string {
  if (h.wasteWeight === null) return '';
  return (h.wasteUnpricedTokens ?? h.unpricedRequests) > 0 ? ' +?' : '';
}

/** A what-if's saving as the headline shows it, +? when it changes something no sum holds (the keepalive section's mark). */
function savingText(b: NonNullable<Headline['bestWhatIf']>): string {
  return (b.savingUsd === null ? fmtWeight(b.savingWeight) : fmtUsd(b.savingUsd)) + (b.unknownEffect ? ' +?' : '');
}

export function headlineReading(h: Headline): string {
  const mark = partly(h);
  const spent = h.usd !== null ? fmtUsd(h.usd) + mark : h.weight !== null ? `${fmtWeight(h.weight)}${mark} (USD unknown)` : 'an unknown cost (no request has a price)';
  const waste = h.wasteWeight === null ? 'an unknown amount' : (h.wasteUsd === null ? fmtWeight(h.wasteWeight) : fmtUsd(h.wasteUsd)) + wastePartly(h);
  const wasteShare = h.weight && h.wasteWeight !== null ? h.wasteWeight / h.weight : null;
  const reads = h.hitRatio === null ? 'no prompt tokens were read or written' : `${fmtPct(h.hitRatio)} of prompt tokens were cache reads`;
  let s = `${spent} over ${fmtCount(h.requests, 'request')}; ${reads}, and expiry and break rewrites wasted ${waste}${wasteShare === null ? '' : ` (${fmtPct(wasteShare)} of weight)`}`;
  const b = h.bestWhatIf;
  if (b && unchanged(b)) {
    const names = andList([b.label, ...(b.tiedWith ?? [])]);
    const many = Boolean(b.tiedWith?.length);
    // a label may hold its own parentheses (a keepalive tie): the names stand in the sentence, not in parentheses
    s += b.unknownEffect
      ? `; no what-if tried would save anything on priced requests: ${names} ${many ? 'change' : 'changes'} nothing priced, and ${many ? 'their' : 'its'} effect on ${b.unknownEffect} is unknown.`
      : `; there is nothing to gain: no what-if tried would save anything, and ${names} ${many ? 'change' : 'changes'} nothing.`;
  } else if (b?.tiedWith?.length) {
    // a tie names every what-if in it, as the keepalive section names tied budgets
    const names = andList([b.label, ...b.tiedWith].map((l) => `“${l}”`));
    s +=
      saves(b) > 0
        ? `; the best what-ifs tie: ${names} would each save ${savingText(b)} (${fmtPct(b.savingShare)} of ${b.shareOf}).`
        : `; no what-if tried would save anything (the least costly, ${names}, each change ${b.shareOf} by ${fmtSignedPct(-b.savingShare)}).`;
  } else if (b) {
    s +=
      saves(b) > 0
        ? `; the best what-if, ${b.label}, would save ${savingText(b)} (${fmtPct(b.savingShare)} of ${b.shareOf}).`
        : `; no what-if tried would save anything (the least costly, ${b.label}, changes ${b.shareOf} by ${fmtSignedPct(-b.savingShare)}).`;
  } else s += '.';
  if (b?.unknownEffect && !unchanged(b)) s = s.slice(0, -1) + `; ${b.tiedWith?.length ? 'their' : 'its'} effect on ${b.unknownEffect} is unknown.`;
  return s;
}

export function renderHeadline(h: Headline): SectionOutput {
  const wasteShare = h.weight && h.wasteWeight !== null ? h.wasteWeight / h.weight : 0;
  const b = h.bestWhatIf;
  // the weight and waste are sums over the priced requests: +? when some have no price, as summary, anatomy and
  // the TTL section mark the same sums (the cost tile says it in words under its value)
  const mark = partly(h);
  const wasteMark = wastePartly(h);
  const body = html`<div class="tiles">
${tile('usd', 'Cost', h.usd === null ? fmtUsd(h.usd) : fmtUsd(h.usd) + mark, h.usd, h.unpricedRequests > 0 ? `${fmtCount(h.unpricedRequests, 'request')} without a price not included` : `${fmtCount(h.requests, 'request')}, ${fmtCount(h.sessions, 'session')}, ${fmtCount(h.chains, 'chain')}`)}
${tile('weight', 'Weight', h.weight === null ? 'unknown' : `${fmtCompact(h.weight)} wt${mark}`, h.weight, 'base-input-token equivalents', h.weight === null ? 'no request has a price' : fmtWeight(h.weight) + mark)}
${tile('hitRatio', 'Cache hit ratio', fmtPct(h.hitRatio), h.hitRatio, 'reads ÷ all prompt tokens (writes included)')}
${
  // the waste is what the rewrites cost beyond a read of the same tokens (anatomy's "waste (rewrites beyond a read)"),
  // less than the rewrites' own weight the anatomy section shows: said, so the two do not read as one number disagreeing
  h.wasteWeight === null
    ? tile('wasteUsd', 'Waste', 'unknown', null, html`<span data-metric="wasteWeight" data-value="null">no request has a price</span>: expiry + break rewrites beyond a read`)
    : tile('wasteUsd', 'Waste', (h.wasteUsd === null ? fmtWeight(h.wasteWeight) : fmtUsd(h.wasteUsd)) + wasteMark, h.wasteUsd, html`<span data-metric="wasteWeight" data-value="${jsonNumberText(h.wasteWeight)}">${fmtWeight(h.wasteWeight)}</span>${wasteMark}, ${fmtPct(wasteShare)} of weight${wasteMark ? ` (${fmtCount(h.wasteUnpricedRequests ?? h.unpricedRequests, 'request')} without a price left out)` : ''}: expiry + break rewrites beyond a read`)
}
${b && unchanged(b)
  ? tile('bestSavingUsd', 'Best what-if', b.unknownEffect ? 'nothing priced to gain' : 'nothing to gain', b.savingUsd, html`<span data-metric="bestSavingShare" data-value="${jsonNumberText(b.savingShare)}">${andList([b.label, ...(b.tiedWith ?? [])])}</span> ${b.tiedWith?.length ? 'change' : 'changes'} nothing${b.unknownEffect ? ` priced; the effect on ${b.unknownEffect} is unknown` : ''}`)
  : tile('bestSavingUsd', 'Best what-if', b ? savingText(b) : 'not computed', b ? b.savingUsd : null, b ? html`${saves(b) > 0 ? 'saves' : saves(b) < 0 ? 'costs' : `changes ${b.shareOf} by`} <span data-metric="bestSavingShare" data-value="${jsonNumberText(b.savingShare)}">${fmtPct(Math.abs(b.savingShare))}</span>${saves(b) > 0 ? ` of ${b.shareOf}` : saves(b) < 0 ? ` more ${b.shareOf === 'cost' ? '' : 'weight '}`.trimEnd() : ''} with ${b.tiedWith?.length ? `each of ${andList([b.label, ...b.tiedWith].map((l) => `“${l}”`))}` : b.label}${b.unknownEffect ? `; +? ${b.unknownEffect} left out` : ''}` : '')}
</div>
<p class="meta">Tokens: ${fmtInt(h.tokens.input)} input, ${fmtInt(h.tokens.output)} output, ${fmtInt(h.tokens.write5m)} 5m-write, ${fmtInt(h.tokens.write1h)} 1h-write, ${fmtInt(h.tokens.read)} read tokens</p>`;
  return { reading: headlineReading(h), body };
}
