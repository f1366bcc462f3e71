/**
 * Plain-text reporters for `cachelens whatif ttl` and `cachelens whatif keepalive`.
 */
import type { KeepaliveResult } from '../keepalive.js';
import type { TtlResult } from '../ttl.js';
import { clean, fraction, int, signedPct, table, usd, type Column } from './table.js';

const R: Column['align'] = 'right';

export function formatTtl(result: TtlResult): string {
  const from = result.to === '1h' ? '5-minute' : '1-hour';
  const out: string[] = [];
  out.push(`TTL override: force ${result.to} on ${from} chains (scope ${result.scope}); ${int(result.changed_chains)} of ${int(result.chains)} chains change`);
  out.push('');
  out.push(
    table(
      [{ header: '' }, { header: 'weight', align: R }, { header: 'USD', align: R }],
      [
        ['baseline', int(result.baseline_weight), usd(result.baseline_usd)],
        ['scenario', int(result.scenario_weight), usd(result.scenario_usd)],
        ['delta', signedPct(result.delta_pct), usd(result.scenario_usd - result.baseline_usd)],
      ],
    ),
  );
  out.push('');
  out.push(`expiry share f ${fraction(result.expiry_share)}, break-even f* ${fraction(result.break_even_share)}: ${verdict(result)}`);
  if (result.unpriced_requests > 0) out.push(`${int(result.unpriced_requests)} unpriced requests left out`);
  out.push('', 'By bucket');
  out.push(
    table(
      [
        { header: 'dimension' },
        { header: 'bucket' },
        { header: 'chains', align: R },
        { header: 'changed', align: R },
        { header: 'baseline wt', align: R },
        { header: 'scenario wt', align: R },
        { header: 'baseline USD', align: R },
        { header: 'scenario USD', align: R },
        { header: 'delta', align: R },
        { header: 'f', align: R },
      ],
      result.buckets.map((b) => [
        b.dimension,
        clean(b.bucket),
        int(b.chains),
        int(b.changed_chains),
        int(b.baseline_weight),
        int(b.scenario_weight),
        usd(b.baseline_usd),
        usd(b.scenario_usd),
        signedPct(b.delta_pct),
        fraction(b.expiry_share),
      ]),
    ),
  );
  return out.join('\n') + '\n';
}

function verdict(r: TtlResult): string {
  if (r.delta_pct === null || r.changed_chains === 0) return 'no chain changes';
  const pays = r.scenario_weight < r.baseline_weight;
  return `forcing ${r.to} ${pays ? 'saves' : 'costs more'}`;
}

export function formatKeepalive(result: KeepaliveResult): string {
  const out: string[] = [];
  out.push(
    `Keepalive pings every ${int(result.interval_s)} s on 5-minute chains (TTL ${int(result.ttl_s)} s), ` +
      `each ${int(result.ping_in)} tokens in / ${int(result.ping_out)} out; ${int(result.gaps)} gaps`,
  );
  if (result.unpriced_gaps > 0) out.push(`${int(result.unpriced_gaps)} gaps with unpriced requests left out`);
  out.push('');
  out.push(
    table(
      [
        { header: 'budget', align: R },
        { header: 'pings', align: R },
        { header: 'gaps > TTL', align: R },
        { header: 'bridged', align: R },
        { header: 'expired', align: R },
        { header: 'ping cost wt', align: R },
        { header: 'saved wt', align: R },
        { header: 'net saving wt', align: R },
        { header: 'net USD', align: R },
        { header: '% subagent', align: R },
        { header: '% all', align: R },
      ],
      result.budgets.map((b) => [
        b.budget === 'inf' ? '∞' : int(b.budget),
        int(b.pings),
        int(b.gaps_over_ttl),
        int(b.bridged),
        int(b.expired_after_budget),
        int(b.ping_weight),
        int(b.saved_weight),
        int(b.net_saving_weight),
        usd(b.net_saving_usd),
        signedPct(b.net_saving_pct_subagent),
        signedPct(b.net_saving_pct_all),
      ]),
    ),
  );
  const best = result.budgets.find((b) => b.budget === result.best_budget);
  if (best) {
    out.push('');
    out.push(
      `best budget: ${best.budget === 'inf' ? '∞' : int(best.budget)} pings per gap, net saving ${int(best.net_saving_weight)} wt (${usd(best.net_saving_usd)}, ` +
        `${signedPct(best.net_saving_pct_all)} of all weight)`,
    );
  }
  return out.join('\n') + '\n';
}
