/**
 * How well the `recorded` replay reproduces the log (SPEC §6.2): per request, the predicted
 * prompt size against the observed P = in + w + r, and the predicted cache read against the
 * observed `cache_read_input_tokens`, summarised by the median and 90th percentile of the
 * relative error |predicted − observed| / observed.
 *
 * The chain's first request is left out: its prompt sizes the prefix, so its error is 0 by
 * construction, and whatever it reads was written by another session (a shared system prompt),
 * which no replay of this chain can know. Requests whose observed value is 0 have no relative
 * error; they are counted apart (with how many the replay also put at 0).
 *
 * With `--calibrate K` (session-calibrate.ts) requests 2…K+1 fit the conversation scale, so they
 * are left out too: fidelity is measured on the held-out requests K+2…n only.
 */
import type { ConversationCalibration } from './session-calibrate.js';

export interface ErrorStats {
  /** requests compared (observed > 0) */
  n: number;
  median_rel_error: number;
  p90_rel_error: number;
  /** mean of (predicted − observed) / observed: negative = the replay predicts too little */
  mean_signed_rel_error: number;
}

export interface FidelityRow {
  request: number;
  observed_prompt: number;
  predicted_prompt: number;
  observed_read: number;
  predicted_read: number;
}

export interface SessionFidelity {
  /** requests compared: 2…n, or K+2…n when calibrated */
  requests: number;
  /** first request compared */
  from: number;
  /** the conversation scale and the requests it was fitted on; null when `--calibrate` is off */
  calibration: ConversationCalibration | null;
  /** observed_zero: requests compared whose logged usage is all 0 (no relative error; left out of n) */
  prompt: ErrorStats & { observed_zero: number };
  cache_read: ErrorStats & { observed_zero: number; predicted_zero_too: number };
  rows: FidelityRow[];
}

/** Linear interpolation between closest ranks (numpy's default). Example: [0.01, 0.02, 0.10] → p50 0.02, p90 0.084. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function errorStats(pairs: readonly { predicted: number; observed: number }[]): ErrorStats {
  const signed = pairs.filter((p) => p.observed > 0).map((p) => (p.predicted - p.observed) / p.observed);
  const abs = signed.map(Math.abs).sort((a, b) => a - b);
  return {
    n: abs.length,
    median_rel_error: quantile(abs, 0.5),
    p90_rel_error: quantile(abs, 0.9),
    mean_signed_rel_error: signed.length ? signed.reduce((a, b) => a + b, 0) / signed.length : NaN,
  };
}

/**
 * Fidelity over every request but the first (the prefix calibration request), or, with a fitted
 * conversation scale, over the requests after its fit (held out).
 */
export function fidelityOf(rows: readonly FidelityRow[], calibration: ConversationCalibration | null = null): SessionFidelity {
  const from = calibration?.scale != null ? calibration.held_out_from : 2;
  const compared = rows.filter((r) => r.request >= from);
  const zero = compared.filter((r) => r.observed_read === 0);
  return {
    requests: compared.length,
    from,
    calibration,
    prompt: {
      ...errorStats(compared.map((r) => ({ predicted: r.predicted_prompt, observed: r.observed_prompt }))),
      observed_zero: compared.filter((r) => r.observed_prompt === 0).length,
    },
    cache_read: {
      ...errorStats(compared.map((r) => ({ predicted: r.predicted_read, observed: r.observed_read }))),
      observed_zero: zero.length,
      predicted_zero_too: zero.filter((r) => r.predicted_read === 0).length,
    },
    rows: [...rows],
  };
}
