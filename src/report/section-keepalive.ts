/** Keepalive what-if (SPEC §5.2): net saving against the ping budget per gap. */
import type { Keepalive, KeepaliveBudget } from './data.js';
import { fmtInt, fmtSignedPct, fmtUsd } from './format.js';
import { html, sortableTable } from './html.js';
import { andList as list, type ChartSink, type SectionOutput } from './section.js';

const label = (b: number | null) => (b === null ? '∞' : fmtInt(b));

/** A budget as the tie reads it: pings per gap (null = unbounded), what it nets, and the pings it sends when known. */
export interface NetOfBudget {
  budget: number | null;
  netSavingUsd: number | null;
  netSavingWeight: number;
  pings?: number;
}

/**
 * The budgets other than `best` that net exactly what it nets: past the pings every gap needs a
 * larger budget sends no more (the analysis names the smallest of them best), or sends more only
 * on gaps of unpriced models, whose pings and savings no sum holds (tiePhrase tells the two apart).
 */
export function tiedBudgets<T extends NetOfBudget>(budgets: readonly T[], best: T): T[] {
  return budgets.filter((b) => b !== best && b.netSavingUsd === best.netSavingUsd && b.netSavingWeight === best.netSavingWeight);
}

/**
 * The tie of `best` with `tied` (tiedBudgets), said after its name, or '' when none ties. A tied budget
 * that sends more pings than `best` sends them on gaps of unpriced models alone (a ping on a priced gap
 * costs weight): its sums are the same, its bill is not, so it does not "net the same".
 * Example: best 3 of 0…20 and ∞, 3 … ∞ net the same → ' (every larger budget, unbounded included, nets the same)';
 * 4 and 6 only → ' (budgets 4 and 6 net the same)'; best 1, 2 … ∞ the same sums with more pings →
 * ' (every larger budget, unbounded included, pings more only on gaps of unpriced models: the same priced net, those pings\' cost and savings unknown)'.
 */
export function tiePhrase(budgets: readonly NetOfBudget[], best: NetOfBudget, tied: readonly NetOfBudget[]): string {
  if (!tied.length) return '';
  const larger = budgets.filter((b) => (b.budget ?? Infinity) > (best.budget ?? Infinity)).sort((a, b) => (a.budget ?? Infinity) - (b.budget ?? Infinity));
  const unbounded = (set: readonly NetOfBudget[]) => (set.some((b) => b.budget === null) ? ', unbounded included,' : '');
  // the budgets named: every larger one, every one from some budget up, or a list
  const who = (set: readonly NetOfBudget[]): { text: string; one: boolean } => {
    if (set.length === larger.length && set.every((b) => larger.includes(b))) return { text: `every larger budget${unbounded(set)}`, one: true };
    const from = larger.length - set.length;
    if (set.length > 2 && larger.slice(from).every((b) => set.includes(b))) return { text: `every budget from ${label(larger[from]!.budget)} up${unbounded(set)}`, one: true };
    return { text: `${set.length === 1 ? 'budget' : 'budgets'} ${list(set.map((b) => label(b.budget)))}`, one: set.length === 1 };
  };
  const more = tied.filter((b) => b.pings !== undefined && best.pings !== undefined && b.pings > best.pings);
  const same = tied.filter((b) => !more.includes(b));
  const parts: string[] = [];
  if (same.length) {
    const w = who(same);
    parts.push(`${w.text} ${w.one ? 'nets' : 'net'} the same`);
  }
  if (more.length) {
    const w = who(more);
    parts.push(`${w.text} ${w.one ? 'pings' : 'ping'} more only on gaps of unpriced models: the same priced net, those pings' cost and savings unknown`);
  }
  return ` (${parts.join('; ')})`;
}

/**
 * Whether the chart's bars, the net saving as a share of subagent weight, are all empty: no
 * subagent weight (null), or 0 at every budget, which is no subagent gap long enough for a ping
 * (a ping's cost and the writes it saves netting exactly 0 is not a case of real logs). The chart
 * then is left out: it drew zero bars under a 'saves / costs more' legend.
 */
export function noSubagentBars(d: Keepalive): boolean {
  return d.budgets.every((b) => !b.netSavingShareSubagent);
}

/** Example: best B = 3 saves 4.1% of subagent weight, ∞ loses 18% → "The best budget is 3 pings per gap: …" */
export function keepaliveReading(d: Keepalive): string {
  const best = d.best === undefined ? undefined : d.budgets.find((b) => b.budget === d.best);
  const unbounded = d.budgets.find((b) => b.budget === null);
  if (!best) return d.gaps ? 'No gap between requests of a priced 5-minute chain: the savings are unknown.' : 'No gaps between requests of 5-minute chains: there is nothing to ping.';
  // no gap for a ping to bridge: nothing to save, and n/a of a subagent weight there may be none of
  if (best.gapsOverTtl === 0) {
    const none = `No gap between requests of 5-minute chains is longer than the ${fmtInt(d.ttlSeconds)} s TTL`;
    // gaps between the interval and the TTL still get pings: pure cost, not "nothing"
    const most = d.budgets.reduce<KeepaliveBudget | undefined>((m, b) => (m === undefined || b.pings > m.pings ? b : m), undefined);
    // no gap outlasts even the interval: not one ping is sent at any budget
    if (!most || most.pings === 0) return `No gap between requests of 5-minute chains is longer than the ${fmtInt(d.intervalSeconds)} s between pings: there is nothing to ping.`;
    // pings on gaps of unpriced models cost what no sum holds: +? as the table marks it, and said as the headline says it
    const unpriced = d.unpricedPingedGaps ?? 0;
    // their effect: the subject is the pings
    const unknown = unpriced > 0 ? `; their effect on ${unpriced === 1 ? '1 gap' : `${fmtInt(unpriced)} gaps`} of unpriced models is unknown` : '';
    return `${none}: keepalive pings would save nothing, and only cost (${fmtInt(most.pings)} ping${most.pings === 1 ? '' : 's'} at budget ${label(most.budget)} on gaps that end before it, net ${fmtSignedPct(most.netSavingShareAll)}${unknown ? ' +?' : ''} of all weight)${unknown}.`;
  }
  const tied = tiedBudgets(d.budgets, best);
  const tie = tiePhrase(d.budgets, best, tied);
  // no subagent weight (logs of main threads alone): the share of all weight, not "n/a of subagent weight";
  // subagent chains with no gap to ping: said plainly, not "net 0.0% of subagent weight" at every budget
  const idle = noSubagentBars(d);
  const net =
    best.netSavingShareSubagent === null
      ? `net ${fmtSignedPct(best.netSavingShareAll)} of all weight (no subagent weight to take a share of)`
      : idle
        ? `net ${fmtSignedPct(best.netSavingShareAll)} of all weight, all of it main threads' (no subagent chain has a gap long enough for a ping)`
        : `net ${fmtSignedPct(best.netSavingShareSubagent)} of subagent weight on subagent chains (${fmtSignedPct(best.netSavingShareAll)} of all weight on all chains, main threads' pings and savings included)`;
  let s = `The best budget is ${label(best.budget)} ping${best.budget === 1 ? '' : 's'} per gap${tie}: ${net}, and ${fmtInt(best.expiredAfterBudget)} of ${best.gapsOverTtl === 1 ? '1 gap over the TTL still expires' : `${fmtInt(best.gapsOverTtl)} gaps over the TTL still expire`}`;
  // both shares, as the best budget's: the subagent share alone ("nets 0.0%" with no subagent gap over the TTL) hid what the main threads' pings cost
  if (unbounded && unbounded !== best && !tied.includes(unbounded)) s += `; unbounded pinging nets ${unbounded.netSavingShareSubagent === null || idle ? `${fmtSignedPct(unbounded.netSavingShareAll)} of all weight` : `${fmtSignedPct(unbounded.netSavingShareSubagent)} of subagent weight (${fmtSignedPct(unbounded.netSavingShareAll)} of all weight)`}`;
  // the shares are of weight and the best budget is chosen by USD: with models of different prices another
  // budget can net more weight (a higher % all), which is said rather than left to look like a mistake
  const mostWeight = d.budgets.reduce((a, b) => (b.netSavingWeight > a.netSavingWeight + 1e-9 * Math.abs(a.netSavingWeight) ? b : a));
  if (mostWeight !== best && mostWeight.netSavingWeight > best.netSavingWeight + 1e-9 * Math.abs(best.netSavingWeight) && (mostWeight.netSavingUsd ?? Infinity) < (best.netSavingUsd ?? -Infinity)) {
    s += `; the best budget is the one that nets the most USD: budget ${label(mostWeight.budget)} nets more weight (${fmtSignedPct(mostWeight.netSavingShareAll)} of all weight) but less USD, the gaps' models having different prices per weight`;
  }
  if (d.unpricedGaps) s += `; ${fmtInt(d.unpricedGaps)} of ${d.gaps === 1 ? '1 gap touches a model without a price and is' : `${fmtInt(d.gaps ?? 0)} gaps touch models without a price and are`} counted, not priced`;
  // the +? in the table: which of them its net savings leave out
  if (d.unpricedPingedGaps) {
    const one = d.unpricedPingedGaps === 1;
    s += ` (${fmtInt(d.unpricedPingedGaps)} of them, longer than the interval, ${one ? 'is' : 'are'} pinged: the net savings marked +? leave ${one ? 'it' : 'them'} out, and the pings' effect on ${one ? 'it' : 'them'} is unknown)`;
  }
  return s + '.';
}

export function renderKeepalive(d: Keepalive, charts: ChartSink): SectionOutput {
  const ordered = [...d.budgets].sort((a, b) => (a.budget ?? Infinity) - (b.budget ?? Infinity));
  const budgets = ordered.map((b: KeepaliveBudget) => ({
    label: label(b.budget),
    subagent: b.netSavingShareSubagent,
    all: b.netSavingShareAll,
    // the colour of the bar, which is the subagent share
    sign: (b.netSavingShareSubagent ?? 0) >= 0 ? 'saves' : 'costs more',
    pings: b.pings,
    bridged: b.bridged,
    expired: b.expiredAfterBudget,
  }));
  // every gap touches an unpriced model: no saving is known (not $0)
  const unknown = Boolean(d.gaps) && d.unpricedGaps === d.gaps;
  // a budget that pings gaps of unpriced models leaves their cost and saving out, +? as whatif keepalive marks it
  const leftOut = (b: KeepaliveBudget) => b.pings > 0 && (d.unpricedPingedGaps ?? 0) > 0;
  const table = sortableTable(
    `Pings every ${fmtInt(d.intervalSeconds)} s against a ${fmtInt(d.ttlSeconds)} s TTL`,
    [
      { label: 'budget B', numeric: true },
      { label: 'net saving', numeric: true },
      { label: '% subagent wt', numeric: true },
      { label: '% all wt', numeric: true },
      { label: 'pings', numeric: true },
      { label: 'gaps > TTL', numeric: true },
      { label: 'bridged', numeric: true },
      { label: 'still expired', numeric: true },
    ],
    ordered.map((b) => [
      { text: label(b.budget), sort: b.budget ?? 1e9, className: b.budget === d.best ? 'hit' : '' },
      // sorted by what it shows: by weight, USD and weight order budgets differently when the gaps' models' prices differ
      {
        text: unknown ? 'unknown' : (b.netSavingUsd === null ? `${fmtInt(b.netSavingWeight)} wt` : fmtUsd(b.netSavingUsd)) + (leftOut(b) ? ' +?' : ''),
        sort: unknown || b.netSavingUsd === null ? b.netSavingWeight : b.netSavingUsd,
      },
      // shares of the net saving: +? as it is, and as the reading marks them
      { text: fmtSignedPct(b.netSavingShareSubagent) + (!unknown && leftOut(b) && b.netSavingShareSubagent !== null ? ' +?' : ''), sort: b.netSavingShareSubagent ?? undefined },
      { text: fmtSignedPct(b.netSavingShareAll) + (!unknown && leftOut(b) && b.netSavingShareAll !== null ? ' +?' : ''), sort: b.netSavingShareAll ?? undefined },
      { text: fmtInt(b.pings), sort: b.pings },
      { text: fmtInt(b.gapsOverTtl), sort: b.gapsOverTtl },
      { text: fmtInt(b.bridged), sort: b.bridged },
      { text: fmtInt(b.expiredAfterBudget), sort: b.expiredAfterBudget },
    ]),
  );
  return {
    reading: keepaliveReading(d),
    body: html`${
      noSubagentBars(d)
        ? html`<p class="muted">No chart: its bars, the net saving as a share of subagent weight, would be empty at every budget (${budgets.some((b) => b.subagent === null) ? 'there is no subagent weight' : 'no subagent chain has a gap long enough for a ping'}); the table gives the share of all weight.</p>`
        : charts.figure('keepalive', { budgets }, 'Net saving of keepalive pings per ping budget', 'Bars: net saving as a share of subagent weight; line: as a share of all weight.')
    }${table}`,
  };
}
