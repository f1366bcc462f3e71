/** TTL override what-if (SPEC §5.1): expiry share per bucket against the break-even share. */
import { breakEvenOutside } from '../analyses/ttl.js';
import type { TtlOverride } from './data.js';
import { fmtCount, fmtInt, fmtPct, fmtSignedPct, fmtUsd } from './format.js';
import { facts, html, sortableTable } from './html.js';
import type { ChartSink, SectionOutput } from './section.js';

/** A change in USD, signed: `+$0.2250`, `−$3.02` (U+2212, as fmtUsd), `$0.0000` for none. */
function signedUsd(x: number): string {
  const s = fmtUsd(x);
  return x > 0 && /[1-9]/.test(s) ? '+' + s : s;
}

const NAME = { force1h: 'Forcing the 1-hour TTL', force5m: 'Forcing the 5-minute TTL' } as const;

/** f* below 0 or above 100% is no share (breakEvenOutside): what it means, else null. */
const outsideOf = (d: TtlOverride) => breakEvenOutside(d.breakEvenShare, d.direction === 'force1h' ? '1h' : '5m');

/** Example: delta +18%, f 16% < f* 39.5%, 6 of 6 buckets lose → "Forcing the 1-hour TTL would cost 18.0% more … every bucket loses." */
export function ttlReading(d: TtlOverride): string {
  if (d.baseline.weight === null) return `${NAME[d.direction]}: the change is unknown (no request in scope has a price).`;
  // chains of unpriced models the override changes: said as `whatif ttl` and the headline say it, not "changes nothing"
  const unknown = unknownEffect(d);
  if (d.deltaShare === null) return unknown ? `${NAME[d.direction]} changes nothing that is priced; its effect on ${unknown} is unknown.` : `${NAME[d.direction]} changes nothing that is priced.`;
  // as `whatif ttl` says it (no change): logs with no chain the override reaches would 'save 0.0%'
  if (d.deltaShare === 0) {
    return unknown
      ? `${NAME[d.direction]} changes nothing priced: no priced request would cost more or less, and its effect on ${unknown} is unknown.`
      : `${NAME[d.direction]} changes nothing: no priced request would cost more or less.`;
  }
  // the buckets the chart and table show: those with writes the override changes
  const judged = d.buckets.filter(shown);
  const losing = judged.filter((b) => b.deltaShare! > 0).length;
  const gaining = judged.filter((b) => b.deltaShare! < 0).length;
  // "cost 18.0% more", not "cost +18.0% more": the sign said twice
  const verdict = d.deltaShare > 0 ? `would cost ${fmtPct(d.deltaShare)} more` : `would save ${fmtPct(-d.deltaShare)}`;
  const outside = outsideOf(d);
  const f =
    d.direction !== 'force1h' || d.expiryShare === null || d.breakEvenShare === null
      ? ''
      : outside
        ? ` (expiry share f = ${fmtPct(d.expiryShare)} of writes; the break-even f* is ${outside.bound}: ${outside.meaning})`
        : ` (expiry share f = ${fmtPct(d.expiryShare)} of writes, ${d.expiryShare > d.breakEvenShare ? 'above' : 'below'} the break-even f* = ${fmtPct(d.breakEvenShare)})`;
  const buckets =
    judged.length === 0
      ? ''
      : losing === judged.length
        ? '; every bucket loses'
        : gaining === judged.length
          ? '; every bucket gains'
          : losing + gaining === 0
            ? '; no bucket changes'
            : `; ${losing} of ${judged.length} buckets lose`;
  return `${NAME[d.direction]} ${verdict}${f}${buckets}${unknown ? `; its effect on ${unknown} is unknown` : ''}.`;
}

/** The chains of unpriced models the override changes, as the headline names them ('1 chain of unpriced models'), else ''. */
function unknownEffect(d: TtlOverride): string {
  const n = d.changedUnpricedChains ?? 0;
  return n > 0 ? `${fmtCount(n, 'chain')} of unpriced models` : '';
}

/** A bucket the chart, the table and the reading's count take: one with writes the override changes and a price. */
function shown(b: TtlOverride['buckets'][number]): boolean {
  return b.expiryShare !== null && b.deltaShare !== null;
}

/**
 * Example: 1, ['my-model'] → '1 request of a model without a price (my-model) is left out of the baseline, the
 * scenario, f and the buckets; a bucket with no priced request has no row'.
 */
export function unpricedLeftOut(requests: number, models: readonly string[]): string {
  const which = models.length ? ` (${models.join(', ')})` : '';
  return `${fmtCount(requests, 'request')} of ${models.length > 1 ? 'models' : 'a model'} without a price${which} ${requests === 1 ? 'is' : 'are'} left out of the baseline, the scenario, f and the buckets; a bucket with no priced request has no row`;
}

export function renderTtlOverride(d: TtlOverride, charts: ChartSink): SectionOutput {
  const buckets = d.buckets.filter(shown).map((b) => ({
    label: `${b.dimension}: ${b.bucket}`,
    expiryShare: b.expiryShare,
    deltaShare: b.deltaShare,
    verdict: b.deltaShare! < 0 ? 'override saves' : b.deltaShare! > 0 ? 'override costs more' : 'no change',
  }));
  // the change leaves out what the override does to a bucket's chains of unpriced models: +?, as whatif ttl's rows
  // mark it (the chart's data stays the numbers)
  const marks = d.buckets.filter(shown).map((b) => ((b.changedUnpricedChains ?? 0) > 0 ? ' +?' : ''));
  const outside = outsideOf(d);
  // f* outside 0…100% is no share to draw a rule at on the expiry-share axis
  const breakEven = d.breakEvenShare === null || outside ? [] : [{ share: d.breakEvenShare, text: `break-even f* = ${fmtPct(d.breakEvenShare)}` }];
  const table = sortableTable(
    'Expiry share and change in cost per bucket',
    [{ label: 'bucket' }, { label: 'expiry share f', numeric: true }, { label: 'change', numeric: true, hint: 'the change in cost (USD) the override makes, as the total’s' }, { label: 'verdict' }],
    buckets.map((b, i) => [
      { text: b.label },
      { text: fmtPct(b.expiryShare), sort: b.expiryShare },
      { text: fmtSignedPct(b.deltaShare) + marks[i], sort: b.deltaShare ?? 0 },
      { text: b.verdict },
    ]),
  );
  // requests without a price are left out of the sums, +? as whatif ttl marks them, and said under the facts:
  // the sums read as the whole bill, and a model's bucket without a price was left out of the table without a word
  const some = d.baseline.weight !== null && (d.unpricedRequests ?? 0) > 0;
  const mark = some ? ' +?' : '';
  // the change leaves out what the override does to chains of unpriced models: +?, as the headline marks its saving
  const unknown = d.baseline.weight === null ? '' : unknownEffect(d);
  return {
    reading: ttlReading(d),
    body: html`${facts([
      ['baseline', d.baseline.weight === null ? 'unknown (no request has a price)' : `${fmtUsd(d.baseline.usd)} (${fmtInt(d.baseline.weight)} wt)${mark}`],
      ['scenario', d.scenario.weight === null ? 'unknown (no request has a price)' : `${fmtUsd(d.scenario.usd)} (${fmtInt(d.scenario.weight)} wt)${mark}`],
      // the change in USD beside its share, as `whatif ttl` prints it (the change itself, rounded once, not the difference
      // of the two amounts above as printed: $150 to $151 for a change of $0.2250, which the headline says)
      ['change', (d.baseline.usd === null || d.scenario.usd === null ? '' : `${signedUsd(d.scenario.usd - d.baseline.usd)} (`) + fmtSignedPct(d.deltaShare) + (d.baseline.usd === null || d.scenario.usd === null ? '' : ')') + (unknown ? ' +?' : '')],
      ['expiry share f', fmtPct(d.expiryShare)],
      ['break-even f*', outside ? `${outside.bound} (${outside.meaning})` : fmtPct(d.breakEvenShare)],
    ])}
${some ? html`<p class="muted unpriced">+? ${unpricedLeftOut(d.unpricedRequests!, d.unpricedModels ?? [])}${unknown ? `; the override changes ${unknown}, and its effect on them is unknown` : ''}</p>` : ''}
${buckets.length ? charts.figure('ttl-buckets', { buckets, breakEven }, 'Expiry share per bucket against the break-even share', undefined, table) : html`<p class="muted">No bucket has writes the override changes.</p>`}`,
  };
}
