/**
 * Plain-text reporters for `cachelens anatomy` and `cachelens anatomy --chain ID`.
 */
import type { AnatomyResult, AnatomyRow, ChainDetail } from '../anatomy-summary.js';
import { clean, duration, fraction, int, num, table, usd, type Column } from './table.js';

export interface FormatAnatomyOptions {
  /** chains listed (by weight); default 20 */
  limit?: number;
}

const R: Column['align'] = 'right';

export function formatAnatomy(result: AnatomyResult, options: FormatAnatomyOptions = {}): string {
  const limit = options.limit ?? 20;
  const t = result.totals;
  const writes = t.cold + t.growth + t.expiry + t.break;
  const share = (x: number) => (writes > 0 ? fraction(x / writes) : '–');
  const out: string[] = [];
  out.push(`Cache anatomy: ${int(t.chains)} chains, ${int(t.requests)} requests (jitter ${int(result.jitter)} tokens)`);
  out.push('');
  out.push(
    table(
      [{ header: 'cache writes' }, { header: 'tokens', align: R }, { header: 'share', align: R }, { header: 'events', align: R }],
      [
        ['cold', int(t.cold), share(t.cold), ''],
        ['growth', int(t.growth), share(t.growth), ''],
        ['expiry', int(t.expiry), share(t.expiry), ''],
        ['break', int(t.break), share(t.break), int(t.break_events)],
        ['total', int(writes), share(writes), ''],
      ],
    ),
  );
  out.push('');
  out.push(
    table(
      [{ header: 'measure' }, { header: 'value', align: R }],
      [
        ['hit ratio Σr/ΣP', fraction(t.hit_ratio)],
        ['write:read weight', t.write_read_ratio === null ? '–' : `${num(t.write_read_ratio, 2)} : 1`],
        ['waste (rewrites beyond a read)', `${int(t.waste_weight)} wt  ${usd(t.waste_usd)}`],
        ['weight', `${int(t.weight)} wt  ${usd(t.usd)}`],
        ['  input', `${int(t.components.input)} wt`],
        ['  5m writes', `${int(t.components.write5m)} wt`],
        ['  1h writes', `${int(t.components.write1h)} wt`],
        ['  reads', `${int(t.components.read)} wt`],
        ['  output', `${int(t.components.output)} wt`],
      ],
    ),
  );
  out.push('', 'By agent type', groupTable('agent type', result.by_agent_type.map((r) => [r.agent_type, r])));
  out.push('', 'By model', groupTable('model', result.by_model.map((r) => [r.model, r])));

  const shown = result.chains.slice(0, limit);
  out.push('', `Chains by weight${result.chains.length > shown.length ? ` (top ${shown.length} of ${int(result.chains.length)})` : ''}`);
  out.push(
    table(
      [
        { header: 'chain' },
        { header: 'agent type' },
        { header: 'requests', align: R },
        { header: 'rounds', align: R },
        { header: 'cold', align: R },
        { header: 'growth', align: R },
        { header: 'expiry', align: R },
        { header: 'break', align: R },
        { header: 'waste wt', align: R },
        { header: 'weight', align: R },
        { header: 'USD', align: R },
        { header: 're-purchase' },
      ],
      shown.map((c) => [
        clean(c.chain_id),
        clean(c.agent_type),
        int(c.requests),
        int(c.rounds),
        int(c.cold),
        int(c.growth),
        int(c.expiry),
        int(c.break),
        int(c.waste_weight),
        int(c.weight),
        usd(c.usd),
        c.repurchase ? 'yes' : '',
      ]),
    ),
  );

  out.push('', 'Re-purchase pattern (reads pinned, whole context re-bought every round), by waste');
  out.push(
    result.repurchase.length === 0
      ? '  none'
      : table(
          [{ header: 'chain' }, { header: 'agent type' }, { header: 'rounds', align: R }, { header: 'median read', align: R }, { header: 'waste wt', align: R }, { header: 'weight', align: R }],
          result.repurchase.map((r) => [clean(r.chain_id), clean(r.agent_type), int(r.rounds), r.read_median === null ? '–' : int(r.read_median), int(r.waste_weight), int(r.weight)]),
        ),
  );

  out.push('', 'What preceded the breaks');
  out.push(
    result.break_causes.length === 0
      ? '  no breaks'
      : table(
          [{ header: 'cause' }, { header: 'events', align: R }, { header: 'tokens', align: R }],
          result.break_causes.map((c) => [clean(c.cause), int(c.events), int(c.tokens)]),
        ),
  );

  if (result.unpriced_models.length > 0) {
    out.push('', 'Unpriced models (left out of weight and USD)');
    out.push(table([{ header: 'model' }, { header: 'requests', align: R }], result.unpriced_models.map((m) => [clean(m.model), int(m.requests)])));
  }
  return out.join('\n') + '\n';
}

function groupTable(name: string, rows: [string, AnatomyRow][]): string {
  return table(
    [
      { header: name },
      { header: 'chains', align: R },
      { header: 'requests', align: R },
      { header: 'cold', align: R },
      { header: 'growth', align: R },
      { header: 'expiry', align: R },
      { header: 'break', align: R },
      { header: 'breaks', align: R },
      { header: 'hit ratio', align: R },
      { header: 'waste wt', align: R },
      { header: 'weight', align: R },
      { header: 'USD', align: R },
    ],
    rows.map(([key, r]) => [
      clean(key),
      int(r.chains),
      int(r.requests),
      int(r.cold),
      int(r.growth),
      int(r.expiry),
      int(r.break),
      int(r.break_events),
      fraction(r.hit_ratio),
      int(r.waste_weight),
      int(r.weight),
      usd(r.usd),
    ]),
  );
}

export function formatChain(detail: ChainDetail): string {
  const s = detail.summary;
  const out: string[] = [];
  out.push(
    `Chain ${clean(detail.chain_id)} (${clean(detail.agent_type)}, ${detail.kind}) of session ${clean(detail.session_id)}: ` +
      `${int(s.requests)} requests, ${int(detail.rounds)} rounds${detail.repurchase ? ', re-purchase pattern' : ''}`,
  );
  out.push(
    `cold ${int(s.cold)}  growth ${int(s.growth)}  expiry ${int(s.expiry)}  break ${int(s.break)} (${int(s.break_events)} events)  ` +
      `hit ratio ${fraction(s.hit_ratio)}  waste ${int(s.waste_weight)} wt  weight ${int(s.weight)} wt  ${usd(s.usd)}`,
  );
  out.push('');
  out.push(
    table(
      [
        { header: '#', align: R },
        { header: 'time (UTC)' },
        { header: 'round', align: R },
        { header: 'seg', align: R },
        { header: 'gap', align: R },
        { header: 'TTL' },
        { header: 'P', align: R },
        { header: 'r', align: R },
        { header: 'w', align: R },
        { header: 'C prev', align: R },
        { header: 'rewrite', align: R },
        { header: 'class' },
        { header: 'weight', align: R },
        { header: 'model' },
        { header: 'preceded by' },
      ],
      detail.requests.map((q) => [
        int(q.index + 1),
        q.time.slice(0, 19).replace('T', ' '),
        int(q.round),
        int(q.segment),
        duration(q.gap_s),
        q.ttl ?? '–',
        int(q.p),
        int(q.r),
        int(q.w),
        int(q.cached_prefix),
        int(q.rewrite),
        q.class,
        q.weight === null ? 'unpriced' : int(q.weight),
        clean(q.model),
        clean(q.causes.join(', ')),
      ]),
    ),
  );
  return out.join('\n') + '\n';
}
