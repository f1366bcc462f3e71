/**
 * The input every cache analysis works on: chains of requests (SPEC §1.4) and a pricing
 * callback (SPEC §2.1). Kept minimal so that callers can pass store rows or `RequestRecord`s
 * (a superset of `ChainRequest`) directly.
 */
import type { Weights } from '../pricing/pricing.js';
import type { ChainKind, RequestRecord } from '../types.js';

/**
 * One API request of a chain: the fields the cache rules read (`segment`: compaction segment, a
 * change from the previous request means a cold restart; `round`: one user prompt and the
 * requests it caused). A de-duplicated RequestRecord is one.
 */
export type ChainRequest = Pick<
  RequestRecord,
  't' | 'model' | 'input' | 'output' | 'cacheWrite' | 'cacheWrite5m' | 'cacheWrite1h' | 'cacheRead' | 'segment' | 'round'
> & {
  /** null when the chains were loaded without their keys, by a caller that shows none (loadChains) */
  key: string | null;
  /**
   * true for a request outside the days asked for (--since/--until), loaded because its chain has
   * requests inside them: it gives the requests after it their context (the cached prefix, the TTL
   * in force, whether they are cold) and counts in no sum (counted()).
   */
  context?: boolean;
};

/** Whether a request counts in the analyses' sums (not only the context of the requests after it). */
export function counted(q: ChainRequest): boolean {
  return q.context !== true;
}

/** Something that happened in the chain between requests, used to explain breaks. */
export interface ChainEvent {
  /** epoch milliseconds */
  t: number;
  kind: 'attachment' | 'compaction';
  /** attachment type (e.g. `skill_listing`) or compaction trigger; untrusted text */
  detail: string;
}

export interface ChainInput {
  chainId: string;
  sessionId: string;
  agentId: string | null;
  agentType: string;
  kind: ChainKind;
  /** the project of the chain's session, when the caller knows it */
  project?: string | null;
  /** sorted by t */
  requests: readonly ChainRequest[];
  events?: readonly ChainEvent[];
  /** rounds of the chain when the caller knows them; else the distinct `round` values of its requests */
  rounds?: number;
}

/**
 * Per-token weights in base-input-token equivalents (input 1, 5m write 1.25, 1h write 2,
 * read 0.1, output 5 for current Claude models) and the USD of one weight unit.
 */
export type { Weights };

/** Weights of a request of `model` whose prompt has `prompt` tokens; null when unpriced. */
export type WeightsFor = (model: string, prompt: number) => Weights | null;

export type Ttl = '5m' | '1h';
export const TTL_MS: Record<Ttl, number> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };

export { DEFAULT_JITTER } from './defaults.js';

/** Chains `whatif --scope` can select. */
export type Scope = 'all' | 'main' | 'subagents';

/** `main` for main threads; subagents and v1.x inline sidechains are both `subagent`. */
export function mainOrSubagent(chain: ChainInput): 'main' | 'subagent' {
  return chain.kind === 'main' ? 'main' : 'subagent';
}

export function inScope(chain: ChainInput, scope: Scope): boolean {
  if (scope === 'all') return true;
  return scope === 'main' ? chain.kind === 'main' : chain.kind !== 'main';
}

/** Prompt size P = in + w + r (SPEC §1.3). */
export function promptTokens(r: ChainRequest): number {
  return r.input + r.cacheWrite + r.cacheRead;
}

export function roundsOf(chain: ChainInput): number {
  if (chain.rounds !== undefined) return chain.rounds;
  return new Set(chain.requests.map((r) => r.round)).size;
}

/**
 * SPEC §5 rounds buckets: 1, 2–3, 4–9, 10+, and 0 for a chain with no round (no user prompt or
 * request: only attachments), as the cross-tab's rounds_bucket (docs/store.md, Rounds).
 */
export function roundsBucket(rounds: number): '0' | '1' | '2-3' | '4-9' | '10+' {
  if (rounds <= 0) return '0';
  if (rounds <= 1) return '1';
  if (rounds <= 3) return '2-3';
  if (rounds <= 9) return '4-9';
  return '10+';
}

/**
 * The short id `--chain` also takes for a chain: its agent id, else what follows the last `:` of
 * its chain id, so that an inline v1.x sidechain (`S:side:U`, no agent id) is named by its U as a
 * subagent is by its agent id; null for a main chain (its id is the session's).
 * Example: ('s:a2898e3', 'a2898e3') → 'a2898e3'; ('s:side:f4ab2bf6-…', null) → 'f4ab2bf6-…'; ('s', null) → null.
 */
export function chainShortId(chainId: string, agentId: string | null): string | null {
  if (agentId) return agentId;
  const at = chainId.lastIndexOf(':');
  return at === -1 ? null : chainId.slice(at + 1);
}

/**
 * The `side:U` an inline v1.x sidechain's chain id (`S:side:U`, no agent id) ends in: `--chain` takes
 * it, and a prefix of it (`side:f4ab`), as it takes U; null for any other chain.
 * Example: ('s:side:f4ab2bf6-…', null) → 'side:f4ab2bf6-…'; ('s:a2898e3', 'a2898e3') → null; ('s', null) → null.
 */
export function chainSideId(chainId: string, agentId: string | null): string | null {
  if (agentId) return null;
  const at = chainId.indexOf(':side:');
  return at === -1 ? null : chainId.slice(at + 1);
}
