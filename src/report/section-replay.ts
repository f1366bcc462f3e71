/** Replay results (SPEC §6): channel and session strategies side by side. */
import { jsonNumberText } from '../format/json-numbers.js';
import { requestRange } from '../replay/session-calibrate.js';
import type { Replay, ReplayRun } from './data.js';
import { fmtCount, fmtInt, fmtPct, fmtUsd } from './format.js';
import { html, sortableTable, type SafeHtml } from './html.js';
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

function fidelityNote(f: NonNullable<ReplayRun['fidelity']>, heldOut = false): string {
  return `${heldOut ? 'held-out fidelity' : 'fidelity'} over ${fmtCount(f.requests, 'request')}${f.from === undefined ? '' : ` (from request ${fmtInt(f.from)})`}: median relative error ${fmtPct(f.medianRelError)}, 90th percentile ${fmtPct(f.p90RelError)}`;
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
      : `conversation tokens × ${c.scale.toFixed(3)} in every strategy (--calibrate ${c.k}: fitted on ${requestRange(2, c.k + 1)})`;
  const held = f ? fidelityNote(f, c.scale !== null) : 'no fidelity (no request to compare)';
  return html`<p class="calibration" data-k="${String(c.k)}" data-scale="${jsonNumberText(c.scale)}">${fit} · ${held}</p>`;
}

/**
 * A channel replay's cost in USD, with the model whose prices it is at.
 * Example: 'cost in USD at claude-opus-4-6 prices ($5 per million input tokens; replay channel
 * --model prices another model): “window” $2.71, “watermark” $2.18, “unstable” $3.14'
 */
export function channelCost(run: ReplayRun, prices: NonNullable<ReplayRun['prices']>): string {
  const input = Number(prices.usdPerMillionInput.toPrecision(6));
  const costs = run.strategies.map((s) => `“${s.strategy}” ${fmtUsd(s.usd ?? null)}`).join(', ');
  return `cost in USD at ${prices.model} prices ($${input} per million input tokens; replay channel --model prices another model): ${costs}`;
}

function runBlock(run: ReplayRun, charts: ChartSink, withReading: boolean): SafeHtml {
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
      { text: s.cacheableRatio === null ? 'n/a' : s.cacheableRatio.toFixed(3), sort: s.cacheableRatio },
      { text: s.uncachedPerWarmTurn === null ? 'n/a' : fmtInt(s.uncachedPerWarmTurn), sort: s.uncachedPerWarmTurn },
      { text: fmtInt(s.contextTokens), sort: s.contextTokens },
      { text: s.contextTokens > 0 && s.alreadySeen > 0 ? `${fmtInt(s.alreadySeen)} (${fmtPct(s.alreadySeen / s.contextTokens, 0)})` : fmtInt(s.alreadySeen), sort: s.alreadySeen },
      { text: fmtInt(s.rowsSent), sort: s.rowsSent },
      { text: fmtInt(s.weight), sort: s.weight },
    ]),
  );
  const notes: string[] = [];
  if (run.rowsNeverShown !== undefined) notes.push(`${fmtCount(run.rowsNeverShown, 'row')} never shown (bursts of more than 12 between mentions)`);
  // the weights are a model's rates, and the cost in USD its prices: which model's, said where the USD is
  if (run.prices) notes.push(channelCost(run, run.prices));
  // with --calibrate the fidelity is the held-out one and goes with the calibration line
  if (run.fidelity && !run.calibration) notes.push(fidelityNote(run.fidelity));
  // a strategy missing from the table without a word read as one forgotten (replay session says it)
  for (const n of run.notRun ?? []) notes.push(`not run: ${n.strategy} (${n.reason})`);
  return html`<article class="replay-run">
<h3>${run.kind} replay · ${run.title}</h3>
${withReading ? html`<p class="reading">${replayRunReading(run)}</p>` : ''}
<div class="grid2">
${charts.figure('replay-strategies', { rows }, `${run.title}: cacheable and uncached input per strategy`)}
${turns.length ? charts.figure('replay-turns', { turns }, `${run.title}: uncached tokens per turn`, undefined, turnTable) : ''}
</div>
${table}
${run.calibration ? calibrationLine(run.calibration, run.fidelity) : ''}
${notes.length ? html`<p class="muted">${notes.join(' · ')}</p>` : ''}
</article>`;
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
            if (!best.length) return `none in ${r.title}`;
            // a tie names every strategy in it, not the first
            const ratio = fmtPct(best[0]!.cacheableRatio!);
            if (best.length === 1) return `${names(best)} (${ratio}) in ${r.title}`;
            return best.length === r.strategies.length ? `all tied at ${ratio} in ${r.title}` : `${names(best)}, tied at ${ratio}, in ${r.title}`;
          })
          .join('; ')}.`;
  return { reading, body: html`${d.runs.map((r) => runBlock(r, charts, d.runs.length > 1))}` };
}
