/**
 * Hand-built chains and a fixed price callback for the analysis tests. Every number a test
 * asserts is computed by hand from these inputs in the test itself.
 */
import assert from 'node:assert/strict';
import type { ChainEvent, ChainInput, ChainRequest, Weights, WeightsFor } from '../../../src/analyses/chain.js';

/** Opus-like multipliers, $5 per million base input tokens. */
export const OPUS: Weights = { input: 1, write5m: 1.25, write1h: 2, read: 0.1, output: 5, usdPerWeight: 5e-6 };
/** Sonnet-like multipliers, $3 per million. */
export const SONNET: Weights = { input: 1, write5m: 1.25, write1h: 2, read: 0.1, output: 5, usdPerWeight: 3e-6 };

/** `opus` and `sonnet` are priced; any other model is unpriced. */
export const weightsFor: WeightsFor = (model) => (model === 'opus' ? OPUS : model === 'sonnet' ? SONNET : null);

export const SEC = 1000;
export const MIN = 60 * SEC;
export const HOUR = 60 * MIN;

export interface ReqSpec {
  t: number;
  r?: number;
  w?: number;
  /** which TTL the write used (default 5m) */
  ttl?: '5m' | '1h';
  input?: number;
  output?: number;
  model?: string;
  segment?: number;
  round?: number;
}

let serial = 0;

export function req(s: ReqSpec): ChainRequest {
  const w = s.w ?? 0;
  return {
    key: `k${++serial}`,
    t: s.t,
    model: s.model ?? 'opus',
    input: s.input ?? 0,
    output: s.output ?? 0,
    cacheWrite: w,
    cacheWrite5m: s.ttl === '1h' ? 0 : w,
    cacheWrite1h: s.ttl === '1h' ? w : 0,
    cacheRead: s.r ?? 0,
    segment: s.segment ?? 0,
    round: s.round ?? 1,
  };
}

export function chain(
  chainId: string,
  specs: ReqSpec[],
  extra: { kind?: ChainInput['kind']; agentType?: string; events?: ChainEvent[]; sessionId?: string } = {},
): ChainInput {
  const kind = extra.kind ?? 'main';
  return {
    chainId,
    sessionId: extra.sessionId ?? 's1',
    agentId: kind === 'main' ? null : `agent-${chainId}`,
    agentType: extra.agentType ?? (kind === 'main' ? 'main' : 'general-purpose'),
    kind,
    requests: specs.map(req),
    ...(extra.events ? { events: extra.events } : {}),
  };
}

/** Floating-point sums of quarter and tenth weights: compare to a millionth. */
export function near(actual: number | null, expected: number, message?: string): void {
  assert.ok(
    actual !== null && Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)),
    `${message ?? 'value'}: expected ${expected}, got ${actual}`,
  );
}

// Chain A (5-minute TTL): a 6-minute gap before #3.
//   #1 t=0      r 0       w 10,000 → cold 10,000;                          C1 = 10,000
//   #2 t=1m     r 10,000  w 2,000  → rw = min(2,000, 10,000 − 10,000) = 0;  C2 = 12,000
//   #3 t=7m     r 0       w 13,000 → gap 6m > 5m, rw = min(13,000, 12,000 − 0) = 12,000 expiry, growth 1,000; C3 = 13,000
//   #4 t=7m30s  r 13,000  w 500    → rw = min(500, 13,000 − 13,000) = 0, growth 500
export const chainASpecs: ReqSpec[] = [
  { t: 0, input: 10, w: 10_000, output: 100 },
  { t: 1 * MIN, input: 5, r: 10_000, w: 2_000, output: 50 },
  { t: 7 * MIN, input: 5, r: 0, w: 13_000, output: 50 },
  { t: 7 * MIN + 30 * SEC, input: 5, r: 13_000, w: 500, output: 50 },
];
