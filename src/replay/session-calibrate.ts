/**
 * Optional conversation-scale calibration of the session replay (`--calibrate K`; off by default,
 * so SPEC §6.2's request-1-only calibration stays the default).
 *
 * Claude's tokenizer and the API's per-message framing count the conversation at more tokens than
 * its cl100k_base encoding (1.17–1.43× on the real logs, docs/session-replay.md), and the prefix
 * calibrated on request 1 absorbs that only for the framing. With `--calibrate K` one factor s is
 * fitted on requests 2…K+1 of the chain, as a ratio of sums of what `recorded` predicts there:
 *
 *   s = Σ (observed Pᵢ − prefix) / Σ conversationᵢ        i = 2…K+1
 *
 * where conversationᵢ is the tokens of every message in context before request i (since the last
 * compaction: a compaction empties the conversation, so the sums hold each request's own
 * context). Every strategy then counts its conversation tokens × s (its framing — prefix and, for
 * volatile-prefix, the status line — is not scaled), and fidelity is reported on requests K+2…n
 * only, which the fit has not seen. The fit takes every request of the window whatever its model:
 * the scale is per chain, so after a model switch inside the window it also absorbs the other
 * model's framing difference (docs/session-replay.md gives the numbers).
 *
 * A chain with fewer than K+2 requests (no request left out of the fit), or whose window holds
 * no conversation tokens, is not calibrated: scale null and the reason.
 */
import { int } from '../format/table.js';
import { fmtCount } from '../report/format.js';
import type { RebuiltChain } from './session-rebuild.js';

export interface ConversationCalibration {
  /** requests 2…k+1 fit the scale */
  k: number;
  /** conversation tokens are counted × scale; null when the chain could not be calibrated */
  scale: number | null;
  /** requests the scale was fitted on (k, or 0 when not calibrated) */
  fit_requests: number;
  /** first request of the held-out fidelity (k + 2), or 2 when not calibrated */
  held_out_from: number;
  /** why the chain was not calibrated */
  reason: string | null;
}

/**
 * Tokens of the messages in context before each request (index i ↔ request i + 1): what `recorded`
 * predicts beyond the prefix. A compaction starts the count again.
 */
export function conversationTokens(rc: RebuiltChain): number[] {
  const out: number[] = [];
  let conv = 0;
  for (const ev of rc.events) {
    if (ev.kind === 'message') conv += ev.tokens;
    else if (ev.kind === 'compaction') conv = 0;
    else out.push(conv);
  }
  return out;
}

/**
 * Example: prefix 10,000; requests 2 and 3 have 1,000 and 3,000 conversation tokens and observed
 * prompts 11,300 and 13,900 → s = (1,300 + 3,900) / (1,000 + 3,000) = 1.3 with k = 2; request 4
 * (5,000 tokens) is then predicted at 10,000 + 6,500 and is the first held-out request.
 */
export function fitConversationScale(rc: RebuiltChain, k: number): ConversationCalibration {
  const none = (reason: string): ConversationCalibration => ({ k, scale: null, fit_requests: 0, held_out_from: 2, reason });
  const n = rc.requests.length;
  // (requests 2…K+1 do not all exist here: the reason names how many, not which)
  if (n < k + 2) return none(`a chain of ${fmtCount(n, 'request')}; fitting on ${fmtCount(k, 'request')} after the first and holding one out needs ${int(k + 2)}`);
  const conv = conversationTokens(rc);
  const prefix = rc.calibration.prefix_tokens;
  let observed = 0;
  let predicted = 0;
  for (let i = 1; i <= k; i++) {
    observed += rc.requests[i]!.observedPrompt - prefix;
    predicted += conv[i]!;
  }
  if (predicted <= 0) return none(`${requestRange(2, k + 1)} ${k === 1 ? 'has' : 'have'} no conversation tokens to scale`);
  if (observed <= 0) return none(`${requestRange(2, k + 1)} observed no more than the prefix`);
  return { k, scale: observed / predicted, fit_requests: k, held_out_from: k + 2, reason: null };
}

/** Requests `from` to `to` of a chain as the replay names them: "request 2", "requests 2–6". */
export function requestRange(from: number, to: number): string {
  return from === to ? `request ${int(from)}` : `requests ${int(from)}–${int(to)}`;
}

/**
 * A token position of a request under the scale: the first `lead` tokens (framing) count as they
 * are, every token after them × scale. Example: lead 10,000, scale 1.3 → 12,000 ↦ 12,600; 4 ↦ 4.
 */
export function scaledTokens(tokens: number, lead: number, scale: number): number {
  if (scale === 1 || tokens <= lead) return tokens;
  return Math.round(lead + (tokens - lead) * scale);
}
