/**
 * Text reporter for the session replay: one result in, the §6.1-style table (one column per
 * strategy) and the `recorded` fidelity out. `--json` is the same result serialised.
 */
import { clean, fit, int, pct, fitTable, headingId, headingWidth, rounded, table, usd, type Cell } from '../format/table.js';
import { wrap } from '../format/wrap.js';
import type { ReplayRun } from '../report/data.js';
import { fmtCount } from '../report/format.js';
import { requestRange } from './session-calibrate.js';
import { skipLines, utf16Note } from './skips.js';
import { cacheReadZeroNote, chainFacts, copiedNote, fidelityHeading, fitChainId, NO_FIDELITY, prefixLine, otherCopiesNote, otherFilesNote, progressOnlyNote, promptZeroNote, skippedHeading, tokenizerNote, unpricedNote, type PrefixFacts } from './session-notes.js';
import type { SessionReplayResult } from './session-replay.js';
import type { SessionStrategy, SessionStrategySummary } from './session-strategy.js';

const METRICS: { label: string; cell: (s: SessionStrategySummary) => Cell; when?: (s: SessionStrategySummary) => boolean }[] = [
  { label: 'input tokens, all requests', cell: (s) => int(s.input_tokens) },
  { label: '  of which cacheable prefix', cell: (s) => int(s.cacheable_tokens) },
  // halves away from zero, as --json writes it (rounded()): toFixed rounded the double, 0.1235 to 0.123
  { label: 'cacheable ratio', cell: (s) => (s.cacheable_ratio === null ? '—' : rounded(s.cacheable_ratio, 3)) },
  { label: 'uncached tokens per warm turn', cell: (s) => int(s.uncached_per_warm_turn) },
  { label: 'context (attachment) tokens sent', cell: (s) => int(s.context_tokens) },
  { label: '  of which already seen', cell: (s) => (s.already_seen_tokens ? `${int(s.already_seen_tokens)} (${pct(s.already_seen_share, 0)})` : '0') },
  { label: 'attachments sent', cell: (s) => int(s.attachments_sent) },
  { label: 'processes', cell: (s) => int(s.processes) },
  // a request stamped before the previous one has no gap to be past the TTL by: its own row, when there is one
  { label: 'requests past the TTL (expired)', cell: (s) => int(s.expired_requests - s.expired_unknown_gap_requests) },
  { label: 'requests not read, gap unknown (clock stepped back)', cell: (s) => int(s.expired_unknown_gap_requests), when: (s) => s.expired_unknown_gap_requests > 0 },
  { label: 'output tokens', cell: (s) => int(s.output_tokens) },
  { label: 'weighted cost (base-input tokens)', cell: (s) => priced(s, int(s.weight)) },
  { label: 'cost (USD)', cell: (s) => priced(s, usd(s.usd)) },
];

/**
 * Weight and USD cover the priced requests only (as `summary`'s do): `+?` when some requests'
 * models have no price, `—` when none has one. Unmarked, a chain of unpriced models showed a
 * cost of $0.0000, and one with a few unpriced requests a total that left them out unsaid.
 */
function priced(s: SessionStrategySummary, value: string): string {
  if (s.unpriced_requests === 0) return value;
  return s.unpriced_requests >= s.requests ? '—' : `${value} +?`;
}

/**
 * Example (abridged):
 *   metric                       recorded  dedupe-attachments  volatile-prefix
 *   input tokens, all requests  7,931,206           7,931,206        7,931,215
 *   cacheable ratio                 0.963               0.963            0.000
 */
export function formatSessionReplay(r: SessionReplayResult, opts: { color?: boolean } = {}): string {
  const strategies = Object.keys(r.strategies) as SessionStrategy[];
  const c = r.chain;
  const cal = r.calibration;
  const out: string[] = [
    // the chain id at most 120 columns, and on a terminal narrower than that at most its width (headingWidth), so that no line of
    // the wrapped heading is wider: cut once in its middle, as anatomy --chain's heading cuts it, which replay session and
    // anatomy --chain take back (each part cut on its own, `fe5e1c67…13e3270b:side:f4ab2bf6…1f24c404`, named no chain)
    clean(`Session replay · chain ${headingWidth() < 120 ? headingId(c.chain_id) : fitChainId(c.chain_id, c.session_id, 120)} (${c.kind}) · ${chainFacts(c)}`),
    clean(prefixLine(prefixFacts(r))),
  ];
  if (c.copied_requests) out.push(copiedNote(c.copied_requests));
  if (c.progress_only_requests) out.push(progressOnlyNote(c.progress_only_requests));
  if (c.other_file_requests) out.push(clean(otherFilesNote(c.other_file_requests, c.other_files)));
  if (c.other_copies?.length) out.push(clean(otherCopiesNote(c.file ?? '', c.other_copies, { by: c.other_copies_by ?? null, tied: c.other_copies_tied ?? 0 })));
  const conv = cal.conversation;
  // (the fidelity is recorded's: without it, none is measured on any request)
  if (conv?.scale != null) {
    const held = r.fidelity ? `; fidelity on ${requestRange(conv.held_out_from, c.requests)}, held out` : '';
    out.push(`conversation tokens × ${rounded(conv.scale, 3)} in every strategy (--calibrate ${conv.k}: fitted on ${requestRange(2, conv.k + 1)}${held})`);
  } else if (conv) {
    // a chain of one request has no request to compare (said below)
    out.push(`--calibrate ${conv.k}: not calibrated (${clean(conv.reason ?? '')})${r.fidelity && c.requests >= 2 ? `; fidelity on ${requestRange(2, c.requests)}` : ''}`);
  }
  out.push('');
  // the tables fit a terminal's width themselves; every other line is text, wrapped to it (format/wrap.ts)
  const tables = new Set<string>();
  const shown = (t: string) => (tables.add(t), t);
  if (strategies.length) {
    const fitted = fitTable(
      // on a narrow terminal the last strategies are left out first, the first (recorded, as given) stays
      [{ header: 'metric' }, ...strategies.map((s, i) => ({ header: s, align: 'num' as const, ...(i > 0 ? { drop: strategies.length - i } : {}) }))],
      METRICS.filter((m) => !m.when || strategies.some((s) => m.when!(r.strategies[s]!))).map((m) => [m.label, ...strategies.map((s) => m.cell(r.strategies[s]!))]),
      { color: opts.color },
    );
    out.push(shown(fitted.text));
    // the header names the attachment reinject inserts only where its column is shown
    if (fitted.left.includes('reinject')) out[1] = clean(prefixLine({ ...prefixFacts(r), reinject: null }));
  }
  for (const n of r.not_run) out.push(`not run: ${n.strategy} (${clean(n.reason)})`);
  const unpriced = Math.max(0, ...strategies.map((s) => r.strategies[s]!.unpriced_requests));
  if (unpriced > 0) out.push(unpricedNote(unpriced));
  const f = r.fidelity;
  if (f && c.requests < 2) {
    out.push('', NO_FIDELITY);
  } else if (f) {
    out.push('', `${fidelityHeading(f.from, c.requests)}:`);
    const row = (label: string, e: typeof f.prompt): Cell[] => [label, pct(e.median_rel_error), pct(e.p90_rel_error), pct(e.mean_signed_rel_error), int(e.n)];
    out.push(
      shown(table(
        // on a narrow terminal the requests go first, then the mean signed error: the median and p90 stay
        [{ header: '' }, { header: 'median', align: 'num' }, { header: 'p90', align: 'num' }, { header: 'mean signed', align: 'num', drop: 2 }, { header: 'requests', align: 'num', drop: 1 }],
        [row('prompt size P', f.prompt), row('cache reads', f.cache_read)],
        { color: opts.color },
      )),
    );
    if (f.prompt.observed_zero) out.push(promptZeroNote(f.prompt.observed_zero));
    if (f.cache_read.observed_zero) out.push(cacheReadZeroNote(f.cache_read.observed_zero, f.cache_read.predicted_zero_too));
  }
  out.push('', tokenizerNote(r.settings.encoding));
  if (c.skipped.length) {
    out.push(`${skippedHeading(c.skipped_lines, c.noted_lines)}:`);
    out.push(...skipLines(c.skipped));
    // as summary's data quality says it: the file is not UTF-8, and what to do
    if (c.utf16_lines) out.push(`  ${clean(utf16Note(c.file, c.utf16_lines))}`);
  }
  return out.map((l) => (tables.has(l) ? l : wrap(l))).join('\n') + '\n';
}

/** The prefix line's figures: request 1's calibration and the replay's settings. */
function prefixFacts(r: SessionReplayResult): PrefixFacts {
  const cal = r.calibration;
  return {
    prefixTokens: cal.prefix_tokens,
    observedPrompt: cal.observed_prompt,
    messageTokens: cal.message_tokens,
    clamped: cal.clamped,
    encoding: r.settings.encoding,
    thinking: r.settings.thinking,
    reinject: r.settings.reinject ? { ...r.settings.reinject } : null,
  };
}

/**
 * The session replay as a run of the HTML report's replay section (src/report/data.ts): the
 * same numbers, under the report's names, and what formatSessionReplay says around its table
 * (`session`: the chain, the prefix, the skipped lines; the fidelity of cache reads too).
 */
export function sessionReplayRun(r: SessionReplayResult): ReplayRun {
  const strategies = (Object.keys(r.strategies) as SessionStrategy[]).map((s) => {
    const x = r.strategies[s]!;
    return {
      strategy: s,
      inputTokens: x.input_tokens,
      cacheablePrefix: x.cacheable_tokens,
      cacheableRatio: x.cacheable_ratio,
      uncachedPerWarmTurn: x.uncached_per_warm_turn,
      contextTokens: x.context_tokens,
      alreadySeen: x.already_seen_tokens,
      rowsSent: x.attachments_sent,
      weight: x.weight,
      usd: x.unpriced_requests ? null : x.usd,
      requests: x.requests,
      unpricedRequests: x.unpriced_requests,
      pricedUsd: x.usd,
      processes: x.processes,
      expiredRequests: x.expired_requests,
      expiredUnknownGap: x.expired_unknown_gap_requests,
      outputTokens: x.output_tokens,
      turns: r.turns.filter((t) => t.strategy === s).map((t) => ({ turn: t.request, input: t.input_tokens, cacheable: t.cacheable_tokens })),
    };
  });
  const f = r.fidelity;
  const c = r.chain;
  const conv = r.calibration.conversation;
  return {
    kind: 'session',
    title: `${r.chain.kind} chain ${r.chain.chain_id} (${fmtCount(r.chain.requests, 'request')}${r.chain.copied_requests ? `; ${fmtCount(r.chain.copied_requests, 'copied request')} of a resumed session left out` : ''}${r.chain.progress_only_requests ? `; ${fmtCount(r.chain.progress_only_requests, 'request')} not replayed, held only by the parent's agent_progress copies` : ''})`,
    strategies,
    ...(f
      ? {
          fidelity: {
            requests: f.prompt.n,
            from: f.from,
            medianRelError: f.prompt.median_rel_error,
            p90RelError: f.prompt.p90_rel_error,
            compared: f.requests,
            meanSignedRelError: f.prompt.mean_signed_rel_error,
            observedZero: f.prompt.observed_zero,
            cacheRead: {
              requests: f.cache_read.n,
              medianRelError: f.cache_read.median_rel_error,
              p90RelError: f.cache_read.p90_rel_error,
              meanSignedRelError: f.cache_read.mean_signed_rel_error,
              observedZero: f.cache_read.observed_zero,
              predictedZeroToo: f.cache_read.predicted_zero_too,
            },
          },
        }
      : {}),
    session: {
      chainId: c.chain_id,
      sessionId: c.session_id,
      chainKind: c.kind,
      requests: c.requests,
      rounds: c.rounds,
      compactions: c.compactions,
      models: [...c.models],
      copiedRequests: c.copied_requests,
      progressOnlyRequests: c.progress_only_requests,
      otherFileRequests: c.other_file_requests,
      otherFiles: [...c.other_files],
      ...(c.other_copies?.length ? { otherCopies: [...c.other_copies], otherCopiesBy: c.other_copies_by ?? null, otherCopiesTied: c.other_copies_tied ?? 0, file: c.file ?? '' } : {}),
      ...prefixFacts(r),
      skippedLines: c.skipped_lines,
      notedLines: c.noted_lines,
      skipped: c.skipped.map((g) => ({ reason: g.reason, count: g.count, lines: [...g.lines] })),
      ...(c.utf16_lines ? { utf16Lines: c.utf16_lines, file: c.file ?? '' } : {}),
    },
    ...(conv ? { calibration: { k: conv.k, scale: conv.scale, heldOutFrom: conv.held_out_from, reason: conv.reason } } : {}),
    ...(r.not_run.length ? { notRun: r.not_run.map((n) => ({ strategy: n.strategy, reason: n.reason })) } : {}),
  };
}
