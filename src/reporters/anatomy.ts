/**
 * Text reporters for `cachelens anatomy` and `cachelens anatomy --chain ID`: one result object
 * in, text out.
 */
import type { AnatomyResult, AnatomyRow, ChainDetail } from '../analyses/anatomy-summary.js';
import { type Cell, clean, type Column, headingId, headingWidth, int, MAX_CELL_WIDTH, pct, rounded, table, usd } from '../format/table.js';
import { allUnpriced, wasteLeftOut } from '../analyses/weigh.js';
import { wrap } from '../format/wrap.js';
import { zoneOffsetMs } from '../format/days.js';
import { counted, gapDuration } from './units.js';

export interface FormatAnatomyOptions {
  /** rows of each list of chains or sessions (by cost in USD; re-purchase chains by waste); default 20 */
  limit?: number;
  color?: boolean;
}

/** A number column; `drop`: the order a table too wide for its terminal leaves it out in (Column.drop), never when not given. */
const num = (header: string, drop?: number): Column => ({ header, align: 'num', ...(drop === undefined ? {} : { drop }) });

/** A row whose requests are all unpriced has an unknown cost, never $0; a partly priced one says so. */
function cost(r: Pick<AnatomyRow, 'requests' | 'unpriced_requests' | 'usd'>): string {
  if (allUnpriced(r)) return 'unknown';
  return r.unpriced_requests > 0 ? `${usd(r.usd)} +?` : usd(r.usd);
}

/**
 * A weight of a row (its own, its waste, a component, a class of its writes): unknown when nothing
 * in it is priced, marked +? when some of it is not, as its USD and summary's weights are (the
 * weights alone read as whole: `all requests 11,961,559` beside `$41.94 +?`).
 */
function weightCell(r: Pick<AnatomyRow, 'requests' | 'unpriced_requests'>, weight: number): Cell {
  if (allUnpriced(r)) return 'unknown';
  return r.unpriced_requests > 0 ? `${int(weight)} +?` : weight;
}

/**
 * A component's weight (a class of writes, a billed component): whole when the row's requests without a
 * price have no token of it (0 in a row priced nowhere); else unknown when nothing in the row is priced,
 * marked +? when some is, as the report's cost charts mark a component (README: `+?`); the sample's
 * input, 591 wt, was marked for requests that had no input token.
 */
function componentCell(r: Pick<AnatomyRow, 'requests' | 'unpriced_requests'>, weight: number, unpricedTokens: number): Cell {
  // none of the component's tokens is unpriced: its weight is whole, whatever the rest of the row (0 of a row priced nowhere)
  if (unpricedTokens === 0) return weight;
  return allUnpriced(r) ? 'unknown' : `${int(weight)} +?`;
}

/**
 * The waste's weight or USD (expiry and break rewrites beyond a read): whole when the row's requests without a
 * price wrote no expiry or break token (0 in a row priced nowhere, as the report's headline gives it); else
 * unknown when nothing in the row is priced, marked +? when some is, as a component is (README: one rule for
 * +?). It was marked whenever any request had no price, and unknown in a row priced nowhere that wasted nothing.
 */
function wasteCell(r: Pick<AnatomyRow, 'requests' | 'unpriced_requests' | 'unpriced_tokens'>, weight: number): Cell {
  // a row priced nowhere that wrote no expiry or break token wasted nothing: 0, not unknown (its --json's 0)
  if (!wasteLeftOut(r)) return weight;
  return allUnpriced(r) ? 'unknown' : `${int(weight)} +?`;
}

function wasteCost(r: Pick<AnatomyRow, 'requests' | 'unpriced_requests' | 'unpriced_tokens' | 'waste_usd'>): string {
  if (!wasteLeftOut(r)) return usd(r.waste_usd);
  return allUnpriced(r) ? 'unknown' : `${usd(r.waste_usd)} +?`;
}

/** An ISO 8601 time to the second, its T a space: '2026-02-10 12:00:05', '+010000-01-01 11:59:59' (the day as long as its year is). */
/** `2026-02-12T16:02:27.123Z` → `2026-02-12 16:02:27`, on the clocks of `timezone` when given (`2026-02-12 21:32:27` in Asia/Kolkata). */
function secondOf(iso: string, timezone?: string): string {
  const ms = Date.parse(iso);
  const local = timezone ? new Date(ms + zoneOffsetMs(ms, timezone)).toISOString() : iso;
  const t = local.indexOf('T');
  return `${local.slice(0, t)} ${local.slice(t + 1, t + 9)}`;
}

export function formatAnatomy(result: AnatomyResult, options: FormatAnatomyOptions = {}): string {
  const color = Boolean(options.color);
  const limit = options.limit ?? 20;
  const t = result.totals;
  const writes = t.cold + t.growth + t.expiry + t.break;
  const share = (x: number) => (writes > 0 ? pct(x / writes) : '—');
  const aw = t.anatomy_weight;
  const ut = t.unpriced_tokens;
  const out: string[] = [];
  // lines of text are wrapped to a terminal's width (format/wrap.ts); the tables fit theirs
  out.push(wrap(`Cache anatomy: ${counted(t.chains, 'chain')}, ${counted(t.requests, 'request')} (rewrites under ${int(result.jitter)} tokens count as growth)`));
  out.push(
    table(
      // on a narrow terminal the break events go first, then the shares
      [{ header: 'cache writes' }, num('tokens'), num('share', 2), num('weight'), num('events', 1)],
      [
        ['cold', t.cold, share(t.cold), componentCell(t, aw.cold, ut.cold), null],
        ['growth', t.growth, share(t.growth), componentCell(t, aw.growth, ut.growth), null],
        ['expiry', t.expiry, share(t.expiry), componentCell(t, aw.expiry, ut.expiry), null],
        ['break', t.break, share(t.break), componentCell(t, aw.break, ut.break), t.break_events],
        ['total', writes, share(writes), componentCell(t, aw.cold + aw.growth + aw.expiry + aw.break, ut.cold + ut.growth + ut.expiry + ut.break), null],
      ],
      { color },
    ),
  );
  out.push(
    table(
      // 65 columns and more (the label alone is 30): on a narrower terminal USD (of two rows) is left out first, then the
      // labels are cut in their middle (Column.cutLast), to 12 columns at the least, only where that makes the table fit (the real logs' at 40; the sample's, with +? marks, is whole and wraps); whole piped and under --wide
      [{ header: 'measure', cutLast: true, min: 12 }, num('weight'), num('USD', 1), num('value')],
      [
        ['all requests', weightCell(t, t.weight), cost(t), null],
        ['  input', componentCell(t, t.components.input, ut.input), null, null],
        ['  5m writes', componentCell(t, t.components.write5m, ut.write5m), null, null],
        ['  1h writes', componentCell(t, t.components.write1h, ut.write1h), null, null],
        ['  reads', componentCell(t, t.components.read, ut.read), null, null],
        ['  output', componentCell(t, t.components.output, ut.output), null, null],
        ['waste (rewrites beyond a read)', wasteCell(t, t.waste_weight), wasteCost(t), t.weight > 0 ? `${pct(t.waste_weight / t.weight)} of weight` : '—'],
        ['hit ratio Σr/ΣP', null, null, pct(t.hit_ratio)],
        ['write:read weight', null, null, t.write_read_ratio === null ? '—' : `${rounded(t.write_read_ratio, 2)} : 1`],
      ],
      { color },
    ),
  );
  out.push(groupTable('agent type', result.by_agent_type.map((r) => [r.agent_type, r]), color, 'By agent type'));
  out.push(groupTable('model', result.by_model.map((r) => [r.model, r]), color, 'By model'));
  out.push(groupTable('project', result.by_project.map((r) => [r.project, r]), color, 'By project'));
  if (result.by_session.length > 0) {
    const sessions = result.by_session.slice(0, limit);
    const more = result.by_session.length > sessions.length ? ` (top ${sessions.length} of ${int(result.by_session.length)})` : '';
    out.push(groupTable('session', sessions.map((r) => [r.session_id, r]), color, `By session, by cost${more}`));
  }

  const shown = result.chains.slice(0, limit);
  out.push(
    table(
      [
        { header: 'chain', cut: true },
        // on a narrow terminal the requests and rounds go first, then growth, cold and the re-purchase mark, the waste last
        { header: 'agent type' },
        num('requests', 1),
        num('rounds', 2),
        num('cold', 4),
        num('growth', 3),
        num('expiry', 7),
        num('break', 6),
        num('waste wt', 8),
        num('weight'),
        num('USD'),
        { header: 're-purchase', drop: 5 },
      ],
      shown.map((c) => [c.chain_id, c.agent_type, c.requests, c.rounds, c.cold, c.growth, c.expiry, c.break, wasteCell(c, c.waste_weight), weightCell(c, c.weight), cost(c), c.repurchase ? 'yes' : '']),
      { color, title: `Chains by cost${result.chains.length > shown.length ? ` (top ${shown.length} of ${int(result.chains.length)})` : ''}` },
    ),
  );

  // --top cuts this list too, said in the title as the chains' is
  const repurchase = result.repurchase.slice(0, limit);
  const repurchaseMore = result.repurchase.length > repurchase.length ? ` (top ${repurchase.length} of ${int(result.repurchase.length)})` : '';
  const repurchaseTitle = `Re-purchase pattern (reads pinned, whole context re-bought every round), by waste${repurchaseMore}`;
  out.push(
    result.repurchase.length === 0
      ? wrap(`${repurchaseTitle}\nnone`)
      : table(
          [{ header: 'chain', cut: true }, { header: 'agent type' }, num('rounds', 1), num('median read', 2), num('waste wt'), num('weight')],
          repurchase.map((r) => {
            // a re-purchase row carries no price count: its chain's row has it
            const c = result.chains.find((x) => x.chain_id === r.chain_id);
            return [r.chain_id, r.agent_type, r.rounds, r.read_median, c ? wasteCell(c, r.waste_weight) : r.waste_weight, c ? weightCell(c, r.weight) : r.weight];
          }),
          { color, title: repurchaseTitle },
        ),
  );
  out.push(
    result.break_causes.length === 0
      ? 'What preceded the breaks\nno breaks'
      : table(
          // a cause names models (`model:claude-opus-4-6→claude-haiku-4-5-20251001`): on a narrow terminal tokens,
          // events and waste wt are left out first; cut (in its middle, both models' ends kept) only where the table
          // still does not fit with those left out: a width that depends on the causes' length and the numbers' (sample-logs' at
          // under 57 columns); it ran past the terminal; whole piped and under --wide
          [{ header: 'cause', cutLast: true }, num('events', 2), num('tokens', 1), num('weight'), num('USD'), num('waste wt', 3)],
          result.break_causes.map((c) => {
            // causes whose every break is unpriced have an unknown cost, never $0
            const unknown = c.unpriced_events === c.events;
            const partly = c.unpriced_events > 0 && !unknown ? ' +?' : '';
            return [c.cause, c.events, c.tokens, unknown ? 'unknown' : int(c.weight) + partly, unknown ? 'unknown' : usd(c.usd) + partly, unknown ? 'unknown' : int(c.waste_weight) + partly];
          }),
          { color, title: 'What preceded the breaks, by what they cost' },
        ),
  );
  if (result.unpriced_models.length > 0) {
    out.push(
      table([{ header: 'model' }, num('requests')], result.unpriced_models.map((m) => [m.model, m.requests]), {
        color,
        title: 'Unpriced models (left out of weight and USD)',
      }),
    );
  }
  return out.join('\n\n') + '\n';
}

function groupTable(name: string, rows: [string, AnatomyRow][], color: boolean, title: string): string {
  return table(
    [
      // a session's id or a project's path may be cut to a narrow terminal; a model or an agent type only where nothing
      // else makes the table fit (format/table.ts lastCut)
      { header: name, cut: name === 'session' || name === 'project' },
      // on a narrow terminal the counts go first, then the hit ratio, growth and cold writes; the
      // expiry and break writes, then the waste; the weight and USD stay
      num('chains', 2),
      num('requests', 1),
      num('cold', 6),
      num('growth', 5),
      num('expiry', 8),
      num('break', 7),
      num('breaks', 3),
      num('hit ratio', 4),
      num('waste wt', 9),
      num('weight'),
      num('USD'),
    ],
    rows.map(([key, r]): Cell[] => [key, r.chains, r.requests, r.cold, r.growth, r.expiry, r.break, r.break_events, pct(r.hit_ratio), wasteCell(r, r.waste_weight), weightCell(r, r.weight), cost(r)]),
    { color, title },
  );
}

/** What a chain is, in its heading: 'main thread', 'reviewer, subagent' (a main thread read '(main, main)'); on a terminal its agent type cut to its width less the '(' and ',' around it. */
function chainKind(d: Pick<ChainDetail, 'agent_type' | 'kind'>): string {
  if (d.kind === 'main' && d.agent_type === 'main') return 'main thread';
  return `${headingId(d.agent_type, Math.min(MAX_CELL_WIDTH, headingWidth() - 2))}, ${d.kind === 'main' ? 'main thread' : d.kind}`;
}

/**
 * A chain's weight in its heading: unknown, or marked +? when it leaves unpriced requests out, as its USD beside it is;
 * its waste when those requests wrote expiry or break tokens (wasteLeftOut).
 */
function chainWeight(s: Pick<AnatomyRow, 'requests' | 'unpriced_requests' | 'unpriced_tokens'>, weight: number, waste = false): string {
  const leftOut = waste ? wasteLeftOut(s) : s.unpriced_requests > 0;
  // a chain priced nowhere: its weight unknown, its waste too unless it wrote no expiry or break token (0 wt)
  if (leftOut && allUnpriced(s)) return 'unknown';
  return `${int(weight)} wt${leftOut ? ' +?' : ''}`;
}

/**
 * `timezone`: the zone the request times are shown in (the run's `--timezone`), named in the
 * column's header as `blocks` names it; UTC without it.
 */
export function formatChain(detail: ChainDetail, color = false, timezone?: string): string {
  const s = detail.summary;
  const head =
    // ids whole piped; on a terminal cut in their middle to its width (headingId), as the heading is wrapped to it
    `Chain ${headingId(detail.chain_id)} (${chainKind(detail)}) of session ${headingId(detail.session_id, headingWidth() - 1)}: ` +
    `${counted(s.requests, 'request')}, ${counted(detail.rounds, 'round')}${detail.repurchase ? ', re-purchase pattern' : ''}\n` +
    `cold ${int(s.cold)}  growth ${int(s.growth)}  expiry ${int(s.expiry)}  break ${int(s.break)} (${counted(s.break_events, 'event')})  ` +
    `hit ratio ${pct(s.hit_ratio)}  waste ${chainWeight(s, s.waste_weight, true)}  weight ${chainWeight(s, s.weight)}  ${allUnpriced(s) ? 'USD unknown' : cost(s)}`;
  const rows = table(
    [
      // on a narrow terminal the segment, round, C prev, rewrite, model, TTL, P, gap and time go first, in
      // that order, then r and w: the request's number, its class, weight and causes stay
      num('#'),
      { header: `time (${timezone ?? 'UTC'})`, drop: 9 },
      num('round', 2),
      num('seg', 1),
      num('gap', 8),
      { header: 'TTL', drop: 6 },
      num('P', 7),
      num('r', 10),
      num('w', 11),
      num('C prev', 3),
      num('rewrite', 4),
      { header: 'class' },
      num('weight'),
      { header: 'model', drop: 5 },
      { header: 'preceded by', list: true, noun: 'cause' },
    ],
    detail.requests.map((q): Cell[] => [
      q.index + 1,
      secondOf(q.time, timezone),
      q.round,
      q.segment,
      // within a minute of a TTL in seconds: 300 s (inside 5 m) and 301 s (past it) both read 5.0m
      gapDuration(q.gap_s),
      q.ttl ?? '—',
      q.p,
      q.r,
      q.w,
      q.cached_prefix,
      q.rewrite,
      q.class,
      q.weight === null ? 'unpriced' : q.weight,
      q.model,
      // each cause cut on its own (a model switch names two models), not the list; on a narrow
      // terminal the causes that fit whole and +N for the rest (Column.list)
      q.causes,
    ]),
    { color },
  );
  return `${wrap(head)}\n\n${rows}\n`;
}
