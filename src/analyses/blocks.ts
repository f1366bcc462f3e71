/**
 * 5-hour blocks, as the usage limit counts them (SPEC §7): a block starts at the first request
 * after the previous block ended, floored to the hour (UTC), and lasts 5 hours.
 *
 * Example: requests at 09:12, 11:40 and 14:30 UTC, then 15:05: the first block runs 09:00–14:00
 * (09:12 and 11:40); 14:30 starts the next at 14:00, which runs to 19:00 and holds 15:05 too.
 */
import { type RememberingStore, rememberedQuery } from '../store/queries.js';
import { type Filters, filterParams } from './filters.js';
import { type Totals, scopeTotals } from './summary.js';

const HOUR = 3_600_000;
export const BLOCK_MS = 5 * HOUR;

/** A block's tokens by field, as `summary --json` names them (the 5m / 1h write as SPEC §2.1 splits it). */
export interface TokenFields {
  input: number;
  output: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
}

export const TOKEN_FIELDS = ['input', 'output', 'cache_write_5m', 'cache_write_1h', 'cache_read'] as const satisfies readonly (keyof TokenFields)[];

export interface Block extends TokenFields {
  start: string;
  end: string;
  first_request: string;
  last_request: string;
  requests: number;
  /** the sum of the token fields */
  tokens: number;
  /** of the priced requests; null when none of the block's requests has a price (unknown, never 0) */
  weight: number | null;
  usd: number | null;
  unpriced_requests: number;
  models: string[];
  active: boolean;
}

/** One UTC hour: every request of the logs read (all_*) forms the windows; the rest is what is in scope. */
export interface HourRow extends TokenFields {
  hour_ms: number;
  all_first_ms: number;
  all_last_ms: number;
  first_ms: number | null;
  last_ms: number | null;
  requests: number;
  tokens: number;
  weight: number | null;
  usd: number | null;
  unpriced_requests: number;
  models: string[];
}

interface OpenBlock extends TokenFields {
  startMs: number;
  firstMs: number | null;
  lastMs: number | null;
  requests: number;
  tokens: number;
  weight: number;
  usd: number;
  unpriced: number;
  models: Set<string>;
}

/**
 * Forms blocks from per-hour aggregates (sorted by hour). A request's hour lies inside one block.
 * The windows come from every request (a filter does not move them: the usage limit counts the
 * account's requests); blocks without a request in scope are left out.
 */
export function formBlocks(hours: HourRow[], now = Date.now()): Block[] {
  const out: Block[] = [];
  let cur: OpenBlock | null = null;
  for (const h of hours) {
    if (!cur || h.all_first_ms >= cur.startMs + BLOCK_MS) {
      if (cur && cur.requests > 0) out.push(finish(cur, now));
      cur = { startMs: Math.floor(h.all_first_ms / HOUR) * HOUR, firstMs: null, lastMs: null, requests: 0, tokens: 0, input: 0, output: 0, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0, weight: 0, usd: 0, unpriced: 0, models: new Set() };
    }
    if (h.requests === 0) continue;
    cur.firstMs ??= h.first_ms;
    cur.lastMs = Math.max(cur.lastMs ?? -Infinity, h.last_ms ?? -Infinity);
    cur.requests += h.requests;
    cur.tokens += h.tokens;
    for (const k of TOKEN_FIELDS) cur[k] += h[k];
    cur.weight += h.weight ?? 0;
    cur.usd += h.usd ?? 0;
    cur.unpriced += h.unpriced_requests;
    for (const m of h.models) cur.models.add(m);
  }
  if (cur && cur.requests > 0) out.push(finish(cur, now));
  return out;
}

function finish(b: OpenBlock, now: number): Block {
  const known = b.unpriced < b.requests;
  return {
    start: new Date(b.startMs).toISOString(),
    end: new Date(b.startMs + BLOCK_MS).toISOString(),
    first_request: new Date(b.firstMs!).toISOString(),
    last_request: new Date(b.lastMs!).toISOString(),
    requests: b.requests,
    tokens: b.tokens,
    input: b.input,
    output: b.output,
    cache_write_5m: b.cache_write_5m,
    cache_write_1h: b.cache_write_1h,
    cache_read: b.cache_read,
    weight: known ? b.weight : null,
    usd: known ? b.usd : null,
    unpriced_requests: b.unpriced,
    models: [...b.models].sort(),
    active: now >= b.startMs && now < b.startMs + BLOCK_MS,
  };
}

/** The blocks listed: how many, and summary's totals of the requests counted in them (every request in scope), with `tokens` their token fields' sum. */
export interface BlockTotals extends Totals {
  blocks: number;
  tokens: number;
}

export async function blocks(store: RememberingStore, filters: Filters): Promise<{ blocks: Block[]; totals: BlockTotals }> {
  const hours = (await rememberedQuery(store, 'hourly', filterParams(filters))) as unknown as HourRow[];
  const list = formBlocks(hours);
  const t = await scopeTotals(store, filters);
  return { blocks: list, totals: { blocks: list.length, tokens: TOKEN_FIELDS.reduce((n, k) => n + t[k], 0), ...t } };
}
