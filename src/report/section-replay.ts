/** Replay results (SPEC §6): channel and session strategies side by side. */
import { jsonNumberText } from '../format/json-numbers.js';
import { rounded } from '../format/table.js';
import { requestRange } from '../replay/session-calibrate.js';
import { cacheReadZeroNote, chainFacts, copiedNote, fidelityHeading, fitChainId, NO_FIDELITY, otherCopiesNote, otherFilesNote, prefixLine, progressOnlyNote, promptZeroNote, skippedHeading, tokenizerNote, unpricedNote } from '../replay/session-notes.js';
import { skipText, utf16Note } from '../replay/skips.js';
import { pricesOf } from '../replay/names.js';
import type { Replay, ReplayRun, ReplayStrategy } from './data.js';
import { fmtCount, fmtInt, fmtPct, fmtUsd } from './format.js';
import { attrs, breakableId, html, sortableTable, type SafeHtml } from './html.js';
import { andList, topTied, type ChartSink, type SectionOutput } from './section.js';

/** Example: names([a, b, c]) === '“a”, “b” and “c”' */
function names(strategies: ReadonlyArray<{ strategy: string }>): string {
  return andList(strategies.map((x) => `“${x.strategy}”`));
}

/**
 * Example: window 0.941, watermark 0.940, unstable 0.000 → names the most and least cacheable
 * strategy; strategies tied (recorded and dedupe-attachments on a chain without re-attachments)
 * are named together: "“recorded” and “dedupe-attachments” cache the most (95.6% of input)".
 */
export function replayRunReading(run: ReplayRun): string {
  const s = run.strategies;
  // a strategy with no input has no cacheable ratio: it is neither the most nor the least cacheable
  const sent = s.filter((x) => x.cacheableRatio !== null);
  const most = topTied(sent, (x) => x.cacheableRatio!, fmtPct);
  const least = topTied(sent, (x) => -x.cacheableRatio!, (v) => fmtPct(-v));
  // a strategy with no warm turn has no mean of uncached tokens per warm turn: it is not the fewest
  const warm = s.filter((x) => x.uncachedPerWarmTurn !== null);
  const fewest = topTied(warm, (x) => -x.uncachedPerWarmTurn!, (v) => fmtInt(-v));
  if (!s.length) return 'No strategy was replayed.';
  // a channel log with no turn (no mention of the agent, or only bad lines) sends nothing under any strategy
  if (s.every((x) => x.inputTokens === 0) || !most.length) return `Nothing was replayed: no strategy sent any input (the ${run.kind === 'channel' ? 'channel log has no turn for the agent' : 'session has no request'}).`;
  // tied strategies are not "the most" and "the least" at once
  const ratio = fmtPct(most[0]!.cacheableRatio);
  const unsent = s.length > sent.length ? `; ${names(s.filter((x) => x.cacheableRatio === null))} ${s.length - sent.length === 1 ? 'sends' : 'send'} no input` : '';
  const caches =
    (most.length === sent.length
      ? `${sent.length === s.length ? 'every strategy caches' : `${names(most)} ${most.length === 1 ? 'caches' : 'cache'}`} ${ratio} of input`
      : `${names(most)} ${most.length === 1 ? 'caches' : 'cache'} the most (${ratio} of input), ${names(least)} the least (${fmtPct(least[0]!.cacheableRatio!)})`) + unsent;
  const uncached = fewest.length ? fmtInt(fewest[0]!.uncachedPerWarmTurn!) : '';
  const fewestText = !fewest.length
    ? 'no strategy has a warm turn to count uncached tokens on'
    : fewest.length === s.length
      ? `every strategy sends ${uncached} uncached tokens per warm turn`
      : `${names(fewest)} ${fewest.length === 1 ? 'sends' : 'send'} the fewest uncached tokens per warm turn (${uncached}${warm.length < s.length ? `; ${names(s.filter((x) => x.uncachedPerWarmTurn === null))} ${s.length - warm.length === 1 ? 'has' : 'have'} no warm turn` : ''})`;
  let text = `${caches[0]!.toUpperCase()}${caches.slice(1)}; ${fewestText}`;
  const seen = s.filter((x) => x.alreadySeen > 0);
  if (seen.length) text += `; ${seen.map((x) => `“${x.strategy}” re-sends ${fmtInt(x.alreadySeen)} already-seen context tokens`).join(', ')}`;
  return text + '.';
}

/** A relative error as `replay session` prints one: — over no request (NaN here, null in the page's data). */
function relError(e: number | null | undefined): string {
  return typeof e === 'number' && Number.isFinite(e) ? fmtPct(e) : '—';
}

function fidelityNote(f: NonNullable<ReplayRun['fidelity']>, heldOut = false): string {
  return `${heldOut ? 'held-out fidelity' : 'fidelity'} over ${fmtCount(f.requests, 'request')}${f.from === undefined ? '' : ` (from request ${fmtInt(f.from)})`}: median relative error ${relError(f.medianRelError)}, 90th percentile ${relError(f.p90RelError)}`;
}

/**
 * Weight and USD of a session replay's strategy as `replay session` marks them: `+?` when some
 * requests' models have no price (left out), `—` when none has one.
 */
function priced(s: ReplayStrategy, value: string): string {
  if (!s.unpricedRequests) return value;
  return s.unpricedRequests >= (s.requests ?? Infinity) ? '—' : `${value} +?`;
}

/** The figures of `replay session`'s table the main table has no column for: processes, expiry, output and USD. */
function sessionCostTable(run: ReplayRun): SafeHtml | '' {
  const s = run.strategies;
  if (run.kind !== 'session' || !s.some((x) => x.processes !== undefined)) return '';
  const unknownGap = s.some((x) => (x.expiredUnknownGap ?? 0) > 0);
  const count = (v: number | undefined) => ({ text: v === undefined ? '' : fmtInt(v), sort: v ?? null });
  return sortableTable(
    'Per strategy: processes, expiry, output and cost',
    [
      { label: 'strategy' },
      { label: 'processes', numeric: true },
      { label: 'requests past the TTL (expired)', numeric: true },
      // a request stamped before the previous one has no gap to be past the TTL by: its own column, when there is one
      ...(unknownGap ? [{ label: 'requests not read, gap unknown (clock stepped back)', numeric: true }] : []),
      { label: 'output tokens', numeric: true },
      { label: 'cost (USD)', numeric: true },
    ],
    s.map((x) => [
      { text: x.strategy },
      count(x.processes),
      count(x.expiredRequests === undefined ? undefined : x.expiredRequests - (x.expiredUnknownGap ?? 0)),
      ...(unknownGap ? [count(x.expiredUnknownGap)] : []),
      count(x.outputTokens),
      { text: x.pricedUsd === undefined ? '' : priced(x, fmtUsd(x.pricedUsd)), sort: x.pricedUsd === undefined || (x.unpricedRequests ?? 0) >= (x.requests ?? Infinity) ? null : x.pricedUsd },
    ]),
  );
}

/**
 * `replay session`'s fidelity of `recorded`, prompt size and cache reads: its heading, a row each
 * (median, 90th percentile, mean signed, requests) and the requests observed at 0; for a chain of one
 * request, that there is none. Nothing for a run built without them (a channel replay).
 */
function sessionFidelity(run: ReplayRun): SafeHtml | '' {
  const f = run.fidelity;
  const c = run.session;
  if (!c || !f) return '';
  if (c.requests < 2) return html`<p class="muted fidelity">${NO_FIDELITY}</p>`;
  if (!f.cacheRead || f.from === undefined) return '';
  const row = (label: string, e: { medianRelError: number; p90RelError: number; meanSignedRelError?: number; requests: number }) => [
    { text: label },
    { text: relError(e.medianRelError), sort: Number.isFinite(e.medianRelError) ? e.medianRelError : null },
    { text: relError(e.p90RelError), sort: Number.isFinite(e.p90RelError) ? e.p90RelError : null },
    { text: relError(e.meanSignedRelError), sort: Number.isFinite(e.meanSignedRelError) ? e.meanSignedRelError! : null },
    { text: fmtInt(e.requests), sort: e.requests },
  ];
  const notes = [
    f.observedZero ? promptZeroNote(f.observedZero) : '',
    f.cacheRead.observedZero ? cacheReadZeroNote(f.cacheRead.observedZero, f.cacheRead.predictedZeroToo) : '',
  ].filter(Boolean);
  return html`${sortableTable(
    fidelityHeading(f.from, c.requests),
    [{ label: 'relative error of' }, { label: 'median', numeric: true }, { label: 'p90', numeric: true }, { label: 'mean signed', numeric: true }, { label: 'requests', numeric: true }],
    [row('prompt size P', f), row('cache reads', f.cacheRead)],
  )}
${notes.map((n) => html`<p class="muted fidelity-zero">${n}</p>`)}`;
}

/** `replay session`'s lines around its table, above the charts: the chain, the prefix, copied and progress-only requests. */
function sessionHead(run: ReplayRun): SafeHtml | '' {
  const c = run.session;
  if (!c) return '';
  return html`<p class="muted replay-chain">${chainFacts(c)}<br>${prefixLine(c)}</p>
${c.inScope ? html`<p class="muted in-scope">the whole chain is replayed (a request's context is every request before it): ${fmtInt(c.inScope.requests)} of its ${fmtCount(c.requests, 'request')} ${c.inScope.requests === 1 ? 'is' : 'are'} among those the filters choose (${c.inScope.filters}), as the rest of the page counts them</p>` : ''}
${c.copiedRequests ? html`<p class="muted">${copiedNote(c.copiedRequests)}</p>` : ''}
${c.progressOnlyRequests ? html`<p class="muted">${progressOnlyNote(c.progressOnlyRequests)}</p>` : ''}
${c.otherFileRequests ? html`<p class="muted">${otherFilesNote(c.otherFileRequests, c.otherFiles ?? [])}</p>` : ''}
${c.otherCopies?.length ? html`<p class="muted">${otherCopiesNote(c.file ?? '', c.otherCopies, { by: c.otherCopiesBy ?? null, tied: c.otherCopiesTied ?? 0 })}</p>` : ''}`;
}

/**
 * A channel replay's rows never shown, as `replay channel` counts them per strategy: one count when
 * every strategy has it, else each strategy's (a watermark skips a row posted in the second its last
 * block ended, which the window shows). It gave the first strategy's alone: "0 rows never shown"
 * while the watermark's and unstable's were 1.
 * Example: window 0, watermark 1, unstable 1 → 'rows never shown (…): “window” 0, “watermark” 1, “unstable” 1'.
 */
export function rowsNeverShownNote(run: Pick<ReplayRun, 'rowsNeverShown' | 'strategies'>): string | null {
  const what = 'between a stream’s first and last mention, carried by no context block';
  const each = run.strategies.filter((s) => s.rowsNeverShown !== undefined);
  const counts = new Set(each.map((s) => s.rowsNeverShown));
  if (counts.size > 1) return `rows never shown (${what}): ${each.map((s) => `“${s.strategy}” ${fmtInt(s.rowsNeverShown!)}`).join(', ')}`;
  const n = each.length ? each[0]!.rowsNeverShown! : run.rowsNeverShown;
  return n === undefined ? null : `${fmtCount(n, 'row')} never shown (${what})`;
}

/** `replay session`'s lines under its tables: the tokenizer caveat, then the skipped lines by reason; a channel replay's skipped lines, as `replay channel` lists them. */
function sessionFoot(run: ReplayRun): SafeHtml | '' {
  const c = run.session;
  const k = run.channelSkipped;
  // lines that look like UTF-16 text: said as the text and summary say them
  if (!c) return k?.lines ? html`<div class="muted skipped"><p>${fmtCount(k.lines, 'bad line')} of the channel log skipped:</p><ul>${k.groups.map((g) => html`<li>${skipText(g)}</li>`)}${k.utf16Lines ? html`<li>${utf16Note(k.file ?? null, k.utf16Lines)}</li>` : ''}</ul></div>` : '';
  return html`<p class="muted tokenizer">${tokenizerNote(c.encoding)}</p>
${c.skipped.length ? html`<div class="muted skipped"><p>${skippedHeading(c.skippedLines, c.notedLines)}:</p><ul>${c.skipped.map((g) => html`<li>${skipText(g)}</li>`)}${c.utf16Lines ? html`<li>${utf16Note(c.file ?? null, c.utf16Lines)}</li>` : ''}</ul></div>` : ''}`;
}

/**
 * The `--calibrate K` line, as `replay session` prints it: the scale, K and the fidelity on the
 * requests the fit has not seen.
 * Example: k 5, scale 1.49, fidelity over 132 requests from 7 → "conversation tokens × 1.490 in
 * every strategy (--calibrate 5: fitted on requests 2–6) · held-out fidelity over 132 requests
 * (from request 7): median relative error 2.1%, …"
 */
export function calibrationLine(c: NonNullable<ReplayRun['calibration']>, f: ReplayRun['fidelity']): SafeHtml {
  const fit =
    c.scale === null
      ? `--calibrate ${c.k}: not calibrated (${c.reason ?? 'no reason given'}); the replay is the uncalibrated one`
      : `conversation tokens × ${rounded(c.scale, 3)} in every strategy (--calibrate ${c.k}: fitted on ${requestRange(2, c.k + 1)})`;
  const held = f ? fidelityNote(f, c.scale !== null) : 'no fidelity (no request to compare)';
  return html`<p class="calibration" data-k="${String(c.k)}" data-scale="${jsonNumberText(c.scale)}">${fit} · ${held}</p>`;
}

/**
 * A channel replay's cost in USD, with the model whose prices it is at and the table they are from.
 * Example: 'cost in USD at claude-opus-4-6 prices, $5 per million input tokens (--channel-model
 * prices another model): “window” $2.71, “watermark” $2.18, “unstable” $3.14'; with `--pricing
 * own.json`, 'at claude-opus-4-6 prices from own.json, $10 …' when the file prices the model, else
 * "at claude-opus-4-6's bundled prices (own.json does not price it), $5 …".
 */
export function channelCost(run: ReplayRun, prices: NonNullable<ReplayRun['prices']>): string {
  const input = Number(prices.usdPerMillionInput.toPrecision(6));
  const costs = run.strategies.map((s) => `“${s.strategy}” ${fmtUsd(s.usd ?? null)}`).join(', ');
  return `cost in USD at ${pricesOf(prices.model, prices.pricingFile, prices.fromPricingFile)}, $${input} per million input tokens (--channel-model prices another model): ${costs}`;
}

function runBlock(run: ReplayRun, charts: ChartSink, withReading: boolean): SafeHtml {
  const title = shownTitle(run);
  const shortened = title !== run.title;
  const rows = run.strategies.flatMap((s) => [
    { strategy: s.strategy, part: 'cacheable prefix', order: 0, tokens: s.cacheablePrefix },
    { strategy: s.strategy, part: 'uncached', order: 1, tokens: Math.max(0, s.inputTokens - s.cacheablePrefix) },
  ]);
  const turns = run.strategies.flatMap((s) => (s.turns ?? []).map((t) => ({ strategy: s.strategy, turn: t.turn, uncached: Math.max(0, t.input - t.cacheable) })));
  const turnNumbers = [...new Set(turns.map((t) => t.turn))].sort((a, b) => a - b);
  const withTurns = run.strategies.filter((s) => s.turns?.length);
  const turnTable = sortableTable(
    'Uncached tokens per turn and strategy',
    [{ label: 'turn', numeric: true }, ...withTurns.map((s) => ({ label: s.strategy, numeric: true }))],
    turnNumbers.map((n) => [
      { text: fmtInt(n), sort: n },
      ...withTurns.map((s) => {
        const t = s.turns!.find((x) => x.turn === n);
        const v = t ? Math.max(0, t.input - t.cacheable) : null;
        return { text: v === null ? '' : fmtInt(v), sort: v };
      }),
    ]),
  );
  const table = sortableTable(
    'Per strategy (tokens; weight in base-input-token equivalents)',
    [
      { label: 'strategy' },
      { label: 'input tokens', numeric: true },
      { label: 'cacheable prefix', numeric: true },
      { label: 'cacheable ratio', numeric: true },
      { label: 'uncached / warm turn', numeric: true },
      { label: 'context tokens', numeric: true },
      { label: 'already seen', numeric: true },
      // a session replay sends attachments, not channel rows (replay session's "attachments sent"); as
      // short as "rows sent" was, so the table still fits a printed page
      { label: run.kind === 'session' ? 'attachments' : 'rows sent', numeric: true },
      { label: 'weight', numeric: true },
    ],
    run.strategies.map((s) => [
      { text: s.strategy },
      { text: fmtInt(s.inputTokens), sort: s.inputTokens },
      { text: fmtInt(s.cacheablePrefix), sort: s.cacheablePrefix },
      { text: s.cacheableRatio === null ? 'n/a' : rounded(s.cacheableRatio, 3), sort: s.cacheableRatio },
      { text: s.uncachedPerWarmTurn === null ? 'n/a' : fmtInt(s.uncachedPerWarmTurn), sort: s.uncachedPerWarmTurn },
      { text: fmtInt(s.contextTokens), sort: s.contextTokens },
      { text: s.contextTokens > 0 && s.alreadySeen > 0 ? `${fmtInt(s.alreadySeen)} (${fmtPct(s.alreadySeen / s.contextTokens, 0)})` : fmtInt(s.alreadySeen), sort: s.alreadySeen },
      { text: fmtInt(s.rowsSent), sort: s.rowsSent },
      { text: priced(s, fmtInt(s.weight)), sort: s.unpricedRequests && s.unpricedRequests >= (s.requests ?? Infinity) ? null : s.weight },
    ]),
  );
  const notes: string[] = [];
  const neverShown = rowsNeverShownNote(run);
  if (neverShown) notes.push(neverShown);
  // the weights are a model's rates, and the cost in USD its prices: which model's, said where the USD is
  if (run.prices) notes.push(channelCost(run, run.prices));
  // with --calibrate the fidelity is the held-out one and goes with the calibration line; a session
  // replay's is its own table below (sessionFidelity: for a chain of one request, that it has none),
  // so said once; a run without that table (built by an older page's data) keeps the line
  if (run.fidelity && !run.calibration && !(run.session && (run.session.requests < 2 || (run.fidelity.cacheRead && run.fidelity.from !== undefined)))) notes.push(fidelityNote(run.fidelity));
  // a strategy missing from the table without a word read as one forgotten (replay session says it)
  for (const n of run.notRun ?? []) notes.push(`not run: ${n.strategy} (${n.reason})`);
  // the most requests without a price in any strategy, as replay session counts them: under the tables that mark +?
  const unpriced = Math.max(0, ...run.strategies.map((s) => s.unpricedRequests ?? 0));
  return html`<article class="replay-run">
<h3${attrs({ title: shortened ? run.title : undefined })}>${run.kind} replay · ${breakableId(title)}</h3>
${shortened ? html`<p class="muted chain-id">chain id <span class="mono">${breakableId(run.session!.chainId)}</span></p>` : ''}
${withReading ? html`<p class="reading">${replayRunReading(run)}</p>` : ''}
${sessionHead(run)}
<div class="grid2">
${charts.figure('replay-strategies', { rows }, `${title}: cacheable and uncached input per strategy`)}
${turns.length ? charts.figure('replay-turns', { turns }, `${title}: uncached tokens per turn`, undefined, turnTable) : ''}
</div>
${table}
${sessionCostTable(run)}
${unpriced > 0 ? html`<p class="muted unpriced">${unpricedNote(unpriced)}</p>` : ''}
${run.calibration ? calibrationLine(run.calibration, run.session && run.session.requests < 2 ? undefined : run.fidelity) : ''}
${notes.length ? html`<p class="muted">${notes.join(' · ')}</p>` : ''}
${sessionFidelity(run)}
${sessionFoot(run)}
</article>`;
}

/**
 * A run's title as its heading, its charts and the reading show it: a session replay's chain id over 120 columns
 * by its parts, as `replay session`'s heading shows it (session-notes.ts fitChainId), else whole; the whole id
 * is on a line of its own under the heading (and the heading's tooltip), where it can still be searched for.
 * Example: 'sidechain chain S:side:U (1 request)', S and U each 110 columns → 'sidechain chain S…):side:U…) (1 request)'.
 */
export function shownTitle(run: Pick<ReplayRun, 'title' | 'session'>): string {
  const c = run.session;
  if (!c) return run.title;
  const shown = fitChainId(c.chainId, c.sessionId ?? c.chainId);
  // a function replacement: a replacement string reads `$&`, `$'`, `` $` `` and `$$` in the id (a session id is the log's text) as patterns
  return shown === c.chainId ? run.title : run.title.replace(c.chainId, () => shown);
}

export function renderReplay(d: Replay, charts: ChartSink): SectionOutput {
  const reading =
    d.runs.length === 1
      ? replayRunReading(d.runs[0]!)
      : `${d.runs.length} replays; the most cacheable strategy: ${d.runs
          .map((r) => {
            // a strategy with no input has no ratio to be the most cacheable by
            const sent = r.strategies.filter((s) => s.cacheableRatio !== null);
            const best = topTied(sent, (s) => s.cacheableRatio!, fmtPct);
            const title = shownTitle(r);
            if (!best.length) return `none in ${title}`;
            // a tie names every strategy in it, not the first
            const ratio = fmtPct(best[0]!.cacheableRatio!);
            if (best.length === 1) return `${names(best)} (${ratio}) in ${title}`;
            return best.length === r.strategies.length ? `all tied at ${ratio} in ${title}` : `${names(best)}, tied at ${ratio}, in ${title}`;
          })
          .join('; ')}.`;
  return { reading, body: html`${d.runs.map((r) => runBlock(r, charts, d.runs.length > 1))}` };
}
