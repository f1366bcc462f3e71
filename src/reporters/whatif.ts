/**
 * Text reporters for `cachelens whatif ttl` and `cachelens whatif keepalive`: one result object
 * in, text out.
 */
import type { KeepaliveResult } from '../analyses/keepalive.js';
import { breakEvenOutside, type TtlResult } from '../analyses/ttl.js';
import { allUnpriced } from '../analyses/weigh.js';
import { jsonNumber } from '../format/json-numbers.js';
import { type Cell, type Column, clean, fit, fitTable, int, pct, table, usd } from '../format/table.js';
import { tiedBudgets, tiePhrase } from '../report/section-keepalive.js';
import { wrap } from '../format/wrap.js';
import { counted, signedInt, signedPct, signedUsd } from './units.js';

/** A number column; `drop`: the order a table too wide for its terminal leaves it out in (Column.drop), never when not given. */
const num = (header: string, drop?: number): Column => ({ header, align: 'num', ...(drop === undefined ? {} : { drop }) });

export function formatTtl(result: TtlResult, color = false): string {
  const from = result.to === '1h' ? '5-minute' : '1-hour';
  const out: string[] = [];
  // the chains the override applies to, by their writes of any day (under --since a chain can be one of
  // them by its writes before the window, and the window's verdict 'no change'): it said 'N chains change'
  // lines of text are wrapped to a terminal's width (format/wrap.ts); the tables fit theirs
  out.push(wrap(`TTL override: force ${result.to} on ${from} chains (scope ${result.scope}); ${int(result.changed_chains)} of ${counted(result.chains, 'chain')} ${result.changed_chains === 1 ? 'writes' : 'write'} ${from} tokens`));
  // nothing priced: the cost is unknown, not $0; some unpriced: +?, as summary and anatomy mark the same sums
  const known = !allUnpriced(result);
  const w = (v: number): Cell => (known ? partly(result, v) : 'unknown');
  const d = (v: number): string => (known ? partly(result, usd(v)) : 'unknown');
  // the change leaves out what the override does to chains of unpriced models: +?, as the report's TTL section marks it
  const changeMark = known && (result.changed_unpriced_chains ?? 0) > 0 ? ' +?' : '';
  out.push(
    table(
      [{ header: '' }, num('weight'), num('USD')],
      [
        ['baseline', w(result.baseline_weight), d(result.baseline_usd)],
        ['scenario', w(result.scenario_weight), d(result.scenario_usd)],
        // the weight's change as the USD's is given, the amount and its share (the weight column held a share alone);
        // the amount is of the two weights as printed above it, so that the three lines add up (14,580,698 − 11,961,559
        // is 2,619,139, where the unrounded difference, 2,619,139.5, prints as 2,619,140). The USD's is the change itself,
        // rounded once as --json writes it (usd()): the amounts above it are rounded to whole dollars from $100, so their
        // difference, $150 to $151, printed +$1.00 for a change of $0.225 (and $0.0000 for one of $0.0225), beside the
        // report's headline saying −$0.2250
        ['delta', known ? `${signedInt(whole(result.scenario_weight) - whole(result.baseline_weight))} (${signedPct(result.delta_pct)})${changeMark}` : signedPct(result.delta_pct), known ? `${signedUsd(result.scenario_usd - result.baseline_usd)} (${signedPct(result.delta_usd_pct)})${changeMark}` : 'unknown'],
      ],
      { color },
    ),
  );
  const unpriced = result.unpriced_requests > 0 ? `\n${counted(result.unpriced_requests, 'request')} of ${unpricedModels(result.unpriced_models)} left out` : '';
  // f* below 0 or above 100% is no share: what it means, not '-15.0%'
  const outside = breakEvenOutside(result.break_even_share, result.to);
  const fStar = outside ? `${outside.bound} (${outside.meaning})` : pct(result.break_even_share);
  out.push(wrap(`expiry share f ${pct(result.expiry_share)}, break-even f* ${fStar}: ${verdict(result)}${unpriced}`));
  // no request, no bucket: no table of headers alone
  if (result.buckets.length === 0) return out.join('\n\n') + '\n';
  out.push(
    table(
      [
        { header: 'dimension' },
        // a kind, an agent type, a model or a rounds bucket: no id or path, cut (in its middle) only where the table
        // does not fit its terminal with every column it may leave out left out (format/table.ts lastCut)
        { header: 'bucket' },
        // on a narrow terminal the changed count goes first, then the two weights, f, the chains, the
        // baseline USD and the weight's delta: the scenario's USD and its delta stay
        num('chains', 5),
        num('changed', 1),
        num('baseline wt', 2),
        num('scenario wt', 3),
        num('baseline USD', 6),
        num('scenario USD'),
        // shares, as the keepalive buckets' 'net %' says: 'delta wt' over '+36.54%' read as an amount of weight
        num('delta wt %', 7),
        num('delta USD %'),
        num('f', 4),
      ],
      result.buckets.map((b): Cell[] => {
        // a bucket of unpriced requests only has an unknown cost, never $0
        const unknown = allUnpriced(b);
        // the change leaves out what the override does to the bucket's chains of unpriced models: +?, as the delta
        // line above marks the total's (the bucket's shares were printed whole)
        const change = !unknown && b.changed_unpriced_chains > 0 ? ' +?' : '';
        return [
          b.dimension,
          b.bucket,
          b.chains,
          b.changed_chains,
          unknown ? 'unknown' : partly(b, b.baseline_weight),
          unknown ? 'unknown' : partly(b, b.scenario_weight),
          unknown ? 'unknown' : partly(b, usd(b.baseline_usd)),
          unknown ? 'unknown' : partly(b, usd(b.scenario_usd)),
          signedPct(b.delta_pct) + (b.delta_pct === null ? '' : change),
          signedPct(b.delta_usd_pct) + (b.delta_usd_pct === null ? '' : change),
          pct(b.expiry_share),
        ];
      }),
      { color, title: 'By bucket' },
    ),
  );
  return out.join('\n\n') + '\n';
}

/**
 * A sum over a row's priced requests, marked +? when the row has unpriced ones too, as summary's and
 * anatomy's sums are (README: `+?` where a sum leaves unpriced requests out): the what-ifs printed the
 * sample's baseline as `11,961,559` and `$41.94` where summary prints `11,961,559 +?` and `$41.94 +?`.
 */
function partly(r: { unpriced_requests: number }, v: number): Cell;
function partly(r: { unpriced_requests: number }, v: string): string;
function partly(r: { unpriced_requests: number }, v: number | string): Cell {
  if (r.unpriced_requests === 0) return v;
  return `${typeof v === 'number' ? int(v) : v} +?`;
}

/** A weight as int() prints it, as a number: rounded as --json writes it, then halves away from zero. */
function whole(x: number): number {
  const y = jsonNumber(x);
  return Math.sign(y) * Math.round(Math.abs(y));
}

/**
 * A budget's net saving as its row prints it: saved wt less ping cost wt, each as printed, so that
 * the row adds up (the sample's budget 1 read 469,124 − 105,796 beside 363,329, each rounded apart
 * from 363,328.5), as whatif ttl's delta is. Its net USD has no parts printed beside it; --json
 * keeps every amount unrounded.
 */
function printedNet(b: { saved_weight: number; ping_weight: number }): number {
  return whole(b.saved_weight) - whole(b.ping_weight);
}

/** By USD: weights of models with different base prices do not add up to one cost. */
function verdict(r: TtlResult): string {
  // an empty window (--since a day without requests, a --project no chain is in) is no "no change"
  if (r.requests === 0) return 'nothing to re-price (no request in scope)';
  if (allUnpriced(r)) return 'unknown (no request in scope has a price)';
  // chains of unpriced models it changes: nothing priced changes, and what it does to them no sum holds
  const unknown = r.changed_unpriced_chains ?? 0;
  if (unknown > 0 && r.baseline_usd === r.scenario_usd) return `no change to priced requests; its effect on ${int(unknown)} ${unknown === 1 ? 'chain' : 'chains'} of unpriced models is unknown`;
  if (r.changed_chains === 0 || r.baseline_usd === r.scenario_usd) return 'no change';
  // a priced change beside chains of unpriced models it changes too: said, as the report's TTL section says it
  return `forcing ${r.to} ${r.scenario_usd < r.baseline_usd ? 'saves' : 'costs more'}${unknown > 0 ? `; its effect on ${int(unknown)} ${unknown === 1 ? 'chain' : 'chains'} of unpriced models is unknown` : ''}`;
}

/** The chains a keepalive scope pings, as the header names them. */
const PINGED: Record<KeepaliveResult['scope'], string> = {
  all: '5-minute chains',
  main: '5-minute main chains only',
  subagents: '5-minute subagent chains only',
};

export function formatKeepalive(result: KeepaliveResult, color = false): string {
  const out: string[] = [];
  const unpriced =
    result.unpriced_gaps > 0
      ? `; ${int(result.unpriced_gaps)} of them ${result.unpriced_gaps === 1 ? 'touches' : 'touch'} ${unpricedModels(result.unpriced_models)}: counted, their weights unknown`
      : '';
  // lines of text are wrapped to a terminal's width (format/wrap.ts); the tables fit theirs
  const say = (text: string) => out.push(wrap(text));
  say(
    `Keepalive pings every ${seconds(result.interval_s)} s on ${PINGED[result.scope]} (TTL ${int(result.ttl_s)} s), ` +
      `each ${int(result.ping_in)} tokens in / ${int(result.ping_out)} out; ${counted(result.gaps, 'gap')}${unpriced}`,
  );
  // without a priced gap every weight below is unknown, not 0
  const known = result.gaps === 0 || result.gaps > result.unpriced_gaps;
  // sums over the priced gaps, +? when gaps touching unpriced models are left out of them, as summary's
  // and anatomy's sums are (README: `+?` where a sum leaves unpriced requests out); only the heading said so
  // (a gap no ping falls in, one no longer than the interval, costs and saves exactly 0 whatever the
  // prices, as a budget that sends no ping does: budget 0 is whole, and so are sums whose unpriced gaps are all short)
  const leftOut = (b: { pings: number; unpriced_pinged_gaps: number }) => ({ unpriced_requests: b.pings > 0 ? b.unpriced_pinged_gaps : 0 });
  const gapsLeftOut = (b: { pings: number }) => leftOut({ pings: b.pings, unpriced_pinged_gaps: result.unpriced_pinged_gaps });
  // a share of a net saving marked +? as the saving is (the report's reading marked it, the tables and lines here did not)
  const share = (r: { unpriced_requests: number }, v: number | null) => (v === null ? signedPct(v) : partly(r, signedPct(v)));
  const budgets = fitTable(
    [
      // on a narrow terminal % subagent wt goes first, then the gap counts, the pings and the weights
      // that net to the saving: the budget, its net saving and its shares stay
      num('budget'),
      num('pings', 5),
      num('gaps > TTL', 2),
      num('bridged', 4),
      num('expired', 3),
      num('ping cost wt', 6),
      num('saved wt', 7),
      num('net saving wt'),
      num('net USD'),
      num('% subagent wt', 1),
      num('% all wt'),
    ],
    result.budgets.map((b): Cell[] => {
      const w = (v: number): Cell => (known ? partly(gapsLeftOut(b), v) : 'unknown');
      return [
        budgetLabel(b.budget),
        b.pings,
        b.gaps_over_ttl,
        b.bridged,
        b.expired_after_budget,
        w(b.ping_weight),
        w(b.saved_weight),
        w(printedNet(b)),
        known ? partly(gapsLeftOut(b), usd(b.net_saving_usd)) : 'unknown',
        known ? share(gapsLeftOut(b), b.net_saving_pct_subagent) : signedPct(b.net_saving_pct_subagent),
        known ? share(gapsLeftOut(b), b.net_saving_pct_all) : signedPct(b.net_saving_pct_all),
      ];
    }),
    { color },
  );
  out.push(budgets.text);
  // the shares are of weight (SPEC §5.2) and the best budget is chosen by USD: both said, with what each share is over
  // +? where a weight leaves unpriced requests out, as summary marks the same sums
  const mark = (unpriced: number) => (unpriced > 0 ? ' +?' : '');
  const subagentShare = result.subagent_weight > 0 ? `${int(result.subagent_weight)} wt${mark(result.subagent_unpriced_requests)}` : 'none';
  const allShare = `${int(result.baseline_weight)} wt${mark(result.unpriced_requests)}, ${usd(result.baseline_usd)}${mark(result.unpriced_requests)}`;
  // a column a narrow terminal leaves out is not explained
  say(
    (budgets.left.includes('% subagent wt') ? '' : `% subagent wt: net saving on subagent chains over their weight (${known ? subagentShare : 'unknown'}); `) +
      `% all wt: net saving over all weight (${known ? allShare : 'unknown'})` +
      (result.budgets.length > 1 ? '; best budget: the largest net USD' : ''),
  );
  const best = result.budgets.find((b) => b.budget === result.best_budget);
  // one budget asked for (--budget 4) is no choice among budgets: its result, not "best budget: 4"
  const only = result.budgets.length === 1 ? result.budgets[0]! : undefined;
  if (!best) {
    const head = only ? `budget ${budgetLabel(only.budget)}` : 'best budget';
    // of the chains the scope pings: a 5-minute main chain with gaps under --scope subagents was said to have none
    const pinged = PINGED[result.scope].replace(/ only$/, '');
    say(result.gaps > 0 ? `${head}: unknown (no gap of a priced chain)` : `${head}: none (no gaps between requests of ${pinged})`);
    return out.join('\n\n') + '\n';
  }
  // budgets that net the same as the best tie with it, as the report's reading says (best_budget is the smallest)
  const nets = result.budgets.map((b) => ({ budget: b.budget === 'inf' ? null : b.budget, netSavingUsd: b.net_saving_usd, netSavingWeight: b.net_saving_weight, pings: b.pings }));
  const bestNet = nets[result.budgets.indexOf(best)]!;
  const tie = tiePhrase(nets, bestNet, tiedBudgets(nets, bestNet));
  const pings = `${budgetLabel(best.budget)} ping${best.budget === 1 ? '' : 's'} per gap`;
  // budget 0 alone the best: no ping pays (it read 'best budget: 0 pings per gap, net saving 0 wt ($0.0000, …)')
  const noPing = !only && best.budget === 0 && tie === '' && result.budgets.length > 1;
  // no gap outlasts the interval: no budget sends a ping, and all net 0 (it read 'best budget: 0 pings per gap
  // (every larger budget, unbounded included, nets the same), net saving 0 wt ($0.0000, 0.00% of all weight)')
  const noneSent = result.budgets.every((b) => b.pings === 0) && (!only || best.budget !== 0);
  const noGap = `no gap between requests of the pinged chains is longer than the ${seconds(result.interval_s)} s interval`;
  say(
    noneSent
      ? only
        ? `at ${pings}: no ping sent, net saving 0: ${noGap}`
        : `best budget: 0, no budget sends a ping: ${noGap}`
      : noPing
      ? 'best budget: 0, no pings: every budget above 0 costs more than it saves'
      : `${only ? `at ${pings}: net saving` : `best budget: ${pings}${tie}, net saving`} ${int(printedNet(best))} wt${partly(gapsLeftOut(best), '')} ` +
          `(${partly(gapsLeftOut(best), usd(best.net_saving_usd))}, ${share(gapsLeftOut(best), best.net_saving_pct_all)} of all weight)`,
  );
  // with models of different prices (or Sonnet's long-context price) the budget that nets the most weight,
  // the highest % all wt, can be another: said, so that the best is not read as a mistake
  const mostWeight = result.budgets.reduce((a, b) => (b.net_saving_weight > a.net_saving_weight + 1e-9 * Math.abs(a.net_saving_weight) ? b : a));
  if (!only && mostWeight !== best && mostWeight.net_saving_weight > best.net_saving_weight + 1e-9 * Math.abs(best.net_saving_weight) && mostWeight.net_saving_usd < best.net_saving_usd) {
    say(
      `budget ${budgetLabel(mostWeight.budget)} nets more weight, ${int(printedNet(mostWeight))} wt${partly(gapsLeftOut(mostWeight), '')} (${share(gapsLeftOut(mostWeight), mostWeight.net_saving_pct_all)} of all weight), ` +
        `but less USD, ${partly(gapsLeftOut(mostWeight), usd(mostWeight.net_saving_usd))}: the gaps' models have different prices per weight, and the best budget is the one that nets the most USD`,
    );
  }
  out.push(
    table(
      [
        { header: 'dimension' },
        // a kind, an agent type, a model or a rounds bucket: no id or path, cut (in its middle) only where the table
        // does not fit its terminal with every column it may leave out left out (format/table.ts lastCut)
        { header: 'bucket' },
        // on a narrow terminal the gap counts go first, then the chains, bridged, pings, the weight and the share
        num('chains', 3),
        num('gaps', 1),
        num('gaps > TTL', 2),
        num('bridged', 4),
        num('pings', 5),
        num('weight', 6),
        num('net saving wt'),
        num('net USD'),
        num('net %', 7),
      ],
      result.buckets.map((b): Cell[] => {
        // a bucket whose gaps are all unpriced has an unknown saving, never 0
        const unknown = b.gaps > 0 && b.unpriced_gaps === b.gaps;
        return [
          b.dimension,
          b.bucket,
          b.chains,
          b.gaps,
          b.gaps_over_ttl,
          b.bridged,
          b.pings,
          allUnpriced(b) ? 'unknown' : partly(b, b.baseline_weight),
          // +? when some of the bucket's gaps touch an unpriced model, as the budget table's sums are
          unknown ? 'unknown' : partly(leftOut(b), printedNet(b)),
          unknown ? 'unknown' : partly(leftOut(b), usd(b.net_saving_usd)),
          unknown ? signedPct(b.net_saving_pct) : share(leftOut(b), b.net_saving_pct),
        ];
      }),
      { color, title: only ? `By bucket, at budget ${budgetLabel(best.budget)}` : `By bucket, at the best budget (${budgetLabel(best.budget)})` },
    ),
  );
  // under --since/--until a gap's pings are in the model bucket of the request before it, which can
  // be of another day: that model's row then has pings and no request, and its weight 0 is not a cost of 0
  const pingsOnly = result.buckets.filter((b) => b.dimension === 'model' && b.requests === 0 && b.gaps > 0).map((b) => fit(clean(b.bucket)));
  if (pingsOnly.length > 0) {
    say(
      `${pingsOnly.join(', ')}: no request in the days asked for; ${pingsOnly.length === 1 ? 'its row is' : 'their rows are'} the pings on gaps ` +
        `after its request of an earlier day, before one of another model: they keep that request's cache, at its model's price`,
    );
  }
  return out.join('\n\n') + '\n';
}

/** The unpriced models named, one in the singular: 'an unpriced model (m)', 'unpriced models (m, n)' (it said 'unpriced models (m)' of one). */
function unpricedModels(models: readonly string[]): string {
  return `${models.length === 1 ? 'an unpriced model' : 'unpriced models'} (${models.map((m) => fit(clean(m))).join(', ')})`;
}

/** A budget with thousands separators, as every count is printed (`--budget 1000000` read 1000000 in the table and the lines). */
function budgetLabel(b: number | 'inf'): string {
  return b === 'inf' ? '∞' : int(b);
}

/** Whole seconds as integers, fractions as given (an interval of 128.2 s is not "128 s"). */
function seconds(s: number): string {
  return Number.isInteger(s) ? int(s) : String(s);
}
