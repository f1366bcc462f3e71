/**
 * Text reporter for the channel replay: one result in, the shared aligned table out (a bold
 * header on a terminal, as every table's). `--json` is JSON.stringify of the same result, so the
 * two never disagree.
 */
import type { ChannelReplayResult, ChannelStrategy, StrategySummary } from './channel-replay.js';
import { clean, headingId, headingWidth, int, pct as share, rounded, table, usd } from '../format/table.js';
import { wrap } from '../format/wrap.js';
import { fmtCount } from '../report/format.js';
import { isUtf16, skipGroups, skipLines, utf16Note } from './skips.js';
import { pricesOf } from './names.js';

// rounded as --json writes the number first, then halves away from zero (format/table.ts int()), as every other
// table's weights: Intl rounded the double, so a weight --json gives as 1234.5 (1234.4999999999998) printed 1,234
const n = (x: number) => int(x);
// rounded as --json writes the number, halves away from zero, as every share and ratio (format/table.ts rounded()):
// Math.round(x * 100) made 0.145 14% here and 15% in replay session and the report, toFixed(3) 0.1235 0.123
const ratio = (x: number) => rounded(x, 3);
const pct = (x: number) => share(x, 0);

interface Metric {
  label: string;
  cell: (s: StrategySummary) => string;
}

const METRICS: Metric[] = [
  { label: 'input tokens, all turns', cell: (s) => n(s.input_tokens) },
  { label: '  of which cacheable prefix', cell: (s) => n(s.cacheable_tokens) },
  // no input: no ratio, not 0
  { label: 'cacheable ratio', cell: (s) => (s.cacheable_ratio === null ? '—' : ratio(s.cacheable_ratio)) },
  // no warm turn: no mean, not 0
  { label: 'uncached tokens per warm turn', cell: (s) => (s.uncached_per_warm_turn === null ? '—' : n(s.uncached_per_warm_turn)) },
  { label: 'channel context tokens sent', cell: (s) => n(s.context_tokens) },
  { label: '  of which already seen', cell: (s) => (s.already_seen_tokens === 0 || s.already_seen_share === null ? '0' : `${n(s.already_seen_tokens)} (${pct(s.already_seen_share)})`) },
  { label: '  re-sent to a new process', cell: (s) => n(s.reshown_tokens) },
  { label: 'channel rows sent', cell: (s) => n(s.rows_sent) },
  { label: 'rows never shown', cell: (s) => n(s.rows_never_shown) },
  { label: 'turns warm / cold / reloaded', cell: (s) => `${s.warm_turns} / ${s.cold_turns} / ${s.reloaded_turns}` },
  { label: 'turns past the TTL (cache expired)', cell: (s) => n(s.expired_turns) },
  { label: 'failed runs', cell: (s) => n(s.failed_turns) },
  { label: 'reply (output) tokens', cell: (s) => n(s.output_tokens) },
  { label: 'weighted cost (base-input tokens)', cell: (s) => n(s.weight) },
];

/** The USD row names its model: which prices it is at is said under the table (priceBasis). */
const costMetric = (model: string): Metric => ({ label: `cost (USD, ${clean(model)})`, cell: (s) => usd(s.usd) });

const rate = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 });
/** A price per million tokens: $5, $6.25, $0.50, $0.03. */
const perMillion = (x: number) => `$${Number.isInteger(x) ? String(x) : rate.format(x)}`;

/**
 * Which model's prices the cost in USD is at, and from which table, from the settings the JSON gives
 * (a rate is its weight × the USD of an input token).
 * Example: claude-opus-4-6 → 'cost (USD) at claude-opus-4-6 prices, per million tokens: input $5,
 * cache write $6.25 (5m) / $10 (1h), cache read $0.50, output $25 (--model names another).'
 * With `--pricing own.json`: 'at my-model prices from own.json, …' when the file prices it, else
 * 'at claude-opus-4-6's bundled prices (own.json does not price it), …'.
 */
export function priceBasis(st: ChannelReplayResult['settings']): string {
  const m = (w: number) => perMillion(w * st.usd_per_input_token * 1e6);
  const w = st.weights;
  const long = st.long_context_above === null ? '' : `; a turn whose prompt is over ${n(st.long_context_above)} tokens at its long-context rates`;
  return (
    `cost (USD) at ${pricesOf(clean(st.model), st.pricing_file === null ? null : clean(st.pricing_file), st.model_prices_from === 'pricing_file')}, per million tokens: input ${m(w.input)}, cache write ${m(w.write5m)} (5m) / ${m(w.write1h)} (1h), ` +
    `cache read ${m(w.read)}, output ${m(w.output)}${long} (--model names another).`
  );
}

const upTo15 = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 15 });

/**
 * The idle-reap period as it is given: whole minutes in minutes, anything else in seconds (`1s` read
 * 'idle reap after 0.016666666666666666 min'). Example: 1800 → '30 min', 90 → '90 s', 0.0015 → '0.0015 s', 1234567 → '1,234,567 s'.
 */
function idle(seconds: number): string {
  // fifteen significant digits absorb the minutes-to-seconds float error (100 s is 99.99999999999999, an
  // error in the 16th) and keep a period as given (six read '--idle-reap 1234567s' as '1,234,570 s', twelve
  // 1234567890123s as '20,576,131,502 min')
  const s = Number(seconds.toPrecision(15));
  if (s >= 60 && s % 60 === 0) return `${n(s / 60)} min`;
  // all its digits: three decimals read '--idle-reap 0.0015s' as '0.002 s', String() 0.0000001 as '1e-7'
  return `${upTo15.format(s)} s`;
}

function events(r: ChannelReplayResult): string {
  const e: string[] = [];
  const at = (ks: number[]) => `${ks.length === 1 ? 'mention' : 'mentions'} ${ks.join(', ')}`;
  if (r.settings.evict_at.length) e.push(`eviction at ${at(r.settings.evict_at)}`);
  if (r.settings.fail_at.length) e.push(`failed run at ${at(r.settings.fail_at)}`);
  if (r.settings.idle_reap_s !== null) e.push(`idle reap after ${idle(r.settings.idle_reap_s)}`);
  return e.length ? e.join(' · ') : 'none';
}

/**
 * The field note's table, one column per strategy.
 *
 * Example (abridged):
 *   metric                    window  watermark  unstable
 *   ───────────────────────  ───────  ─────────  ────────
 *   input tokens, all turns  610,161    488,231   489,131
 *   cacheable ratio            0.939      0.940     0.001
 */
export function formatChannelReplay(r: ChannelReplayResult, opts: { color?: boolean } = {}): string {
  const strategies = Object.keys(r.strategies) as ChannelStrategy[];
  // the shared table, as the session replay's (it was built here: no rule under the header, no bold header, 3-space gaps)
  const metrics = table(
    // on a narrow terminal the last strategies are left out first, the first stays
    [{ header: 'metric' }, ...strategies.map((s, i) => ({ header: s, align: 'num' as const, ...(i > 0 ? { drop: strategies.length - i } : {}) }))],
    [...METRICS, costMetric(r.settings.model)].map((m) => [m.label, ...strategies.map((s) => m.cell(r.strategies[s]!))]),
    { color: opts.color },
  );
  const c = r.channel;
  const st = r.settings;
  // the table fits a terminal's width itself; every other line is text, wrapped to it (format/wrap.ts)
  return [
    // the log's channel id and the handle whole piped; on a terminal cut in their middle to its width (headingId), `#` and ` ·` after
    // the id within it: the wrap keeps a lone `·` with the word before it, so that it ends its line (cut to the width less one, the
    // next line began `· 200 messages`)
    `Channel replay · #${headingId(c.channel_id, headingWidth() - 3)} · ${fmtCount(c.messages, 'message')} · ${fmtCount(c.mentions, 'mention')} of ${headingId(c.agent)}` +
      (c.skipped_lines.length ? ` · ${fmtCount(c.skipped_lines.length, 'bad line')} skipped` : ''),
    `framing ${fmtCount(st.prefix_tokens, 'token')} · brief ${fmtCount(st.brief_tokens, 'token')} · ${st.encoding} · TTL ${st.ttl} · events: ${events(r)}`,
    ...skipLines(skipGroups(c.skipped_lines)),
    // lines that look like UTF-16 text: said as summary and replay session say them
    ...utf16Lines(c),
    // a table of zeros alone did not say why (a handle the channel does not use, a log of bad lines)
    ...(c.mentions === 0 ? ['', `Nothing was replayed: no message ${c.messages === 0 ? 'was read' : `by anyone else mentions ${clean(c.agent)} (the handle as a whole word)`}.`] : []),
    '',
    metrics,
    '',
    priceBasis(st),
    `Token counts are ${st.encoding} estimates of Claude's tokenizer: absolute numbers are approximate, ratios are the result.`,
  ]
    .map((l) => (l === metrics ? l : wrap(l)))
    .join('\n') + '\n';
}

/** The line that says a channel log's skipped lines look like UTF-16 text (skips.ts utf16Note), or none. */
function utf16Lines(c: ChannelReplayResult['channel']): string[] {
  const n = c.skipped_lines.filter((l) => isUtf16(l.detail)).length;
  return n ? [`  ${clean(utf16Note(c.file ?? null, n))}`] : [];
}
