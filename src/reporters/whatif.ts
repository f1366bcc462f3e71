/**
 * Text reporters for `cachelens whatif ttl` and `cachelens whatif keepalive`: one result object
 * in, text out.
 */
import type { KeepaliveResult } from '../analyses/keepalive.js';
import type { TtlResult } from '../analyses/ttl.js';
import { type Cell, type Column, int, pct, table, usd } from '../format/table.js';
import { signedPct } from './units.js';

const num = (header: string): Column => ({ header, align: 'num' });

export function formatTtl(result: TtlResult, color = false): string {
  const from = result.to === '1h' ? '5-minute' : '1-hour';
  const out: string[] = [];
  out.push(`TTL override: force ${result.to} on ${from} chains (scope ${result.scope}); ${int(result.changed_chains)} of ${int(result.chains)} chains change`);
  out.push(
    table(
      [{ header: '' }, num('weight'), num('USD')],
      [
        ['baseline', result.baseline_weight, usd(result.baseline_usd)],
        ['scenario', result.scenario_weight, usd(result.scenario_usd)],
        ['delta', signedPct(result.delta_pct), usd(result.scenario_usd - result.baseline_usd)],
      ],
      { color },
    ),
  );
  const unpriced = result.unpriced_requests > 0 ? `\n${int(result.unpriced_requests)} unpriced requests left out` : '';
  out.push(`expiry share f ${pct(result.expiry_share)}, break-even f* ${pct(result.break_even_share)}: ${verdict(result)}${unpriced}`);
  out.push(
    table(
      [
        { header: 'dimension' },
        { header: 'bucket' },
        num('chains'),
        num('changed'),
        num('baseline wt'),
        num('scenario wt'),
        num('baseline USD'),
        num('scenario USD'),
        num('delta'),
        num('f'),
      ],
      result.buckets.map((b): Cell[] => {
        // a bucket of unpriced requests only has an unknown cost, never $0
        const unknown = b.requests > 0 && b.unpriced_requests === b.requests;
        return [
          b.dimension,
          b.bucket,
          b.chains,
          b.changed_chains,
          unknown ? 'unknown' : b.baseline_weight,
          unknown ? 'unknown' : b.scenario_weight,
          unknown ? 'unknown' : usd(b.baseline_usd),
          unknown ? 'unknown' : usd(b.scenario_usd),
          signedPct(b.delta_pct),
          pct(b.expiry_share),
        ];
      }),
      { color, title: 'By bucket' },
    ),
  );
  return out.join('\n\n') + '\n';
}

function verdict(r: TtlResult): string {
  if (r.changed_chains === 0 || r.baseline_weight === r.scenario_weight) return 'no change';
  return `forcing ${r.to} ${r.scenario_weight < r.baseline_weight ? 'saves' : 'costs more'}`;
}

export function formatKeepalive(result: KeepaliveResult, color = false): string {
  const out: string[] = [];
  const unpriced = result.unpriced_gaps > 0 ? `; ${int(result.unpriced_gaps)} gaps with unpriced requests left out` : '';
  out.push(
    `Keepalive pings every ${int(result.interval_s)} s on 5-minute chains (TTL ${int(result.ttl_s)} s), ` +
      `each ${int(result.ping_in)} tokens in / ${int(result.ping_out)} out; ${int(result.gaps)} gaps${unpriced}`,
  );
  out.push(
    table(
      [
        num('budget'),
        num('pings'),
        num('gaps > TTL'),
        num('bridged'),
        num('expired'),
        num('ping cost wt'),
        num('saved wt'),
        num('net saving wt'),
        num('net USD'),
        num('% subagent'),
        num('% all'),
      ],
      result.budgets.map((b): Cell[] => [
        b.budget === 'inf' ? '∞' : String(b.budget),
        b.pings,
        b.gaps_over_ttl,
        b.bridged,
        b.expired_after_budget,
        b.ping_weight,
        b.saved_weight,
        b.net_saving_weight,
        usd(b.net_saving_usd),
        signedPct(b.net_saving_pct_subagent),
        signedPct(b.net_saving_pct_all),
      ]),
      { color },
    ),
  );
  const best = result.budgets.find((b) => b.budget === result.best_budget);
  if (best) {
    out.push(
      `best budget: ${best.budget === 'inf' ? '∞' : best.budget} pings per gap, net saving ${int(best.net_saving_weight)} wt ` +
        `(${usd(best.net_saving_usd)}, ${signedPct(best.net_saving_pct_all)} of all weight)`,
    );
  }
  return out.join('\n\n') + '\n';
}
