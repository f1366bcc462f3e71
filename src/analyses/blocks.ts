/**
 * 5-hour blocks, as the usage limit counts them (SPEC §7): a block starts at the first request
 * after the previous block ended, floored to the hour (UTC), and lasts 5 hours.
 *
 * Example: requests at 09:12, 11:40 and 14:30 UTC, then 15:05: the first block runs 09:00–14:00
 * (09:12 and 11:40); 14:30 starts the next at 14:00, which runs to 19:00 and holds 15:05 too.
 */
import { type RememberingStore, rememberedQuery } from '../store/queries.js';
import { type Filters, filterParams } from './filters.js';

const HOUR = 3_600_000;
export const BLOCK_MS = 5 * HOUR;

export interface Block {
  start: string;
  end: string;
  first_request: string;
  last_request: string;
  requests: number;
  tokens: number;
  weight: number;
  usd: number;
  models: string[];
  active: boolean;
}

export interface HourRow {
  hour_ms: number;
  first_ms: number;
  last_ms: number;
  requests: number;
  tokens: number;
  weight: number;
  usd: number;
  models: string[];
}

/** Forms blocks from per-hour aggregates (sorted by hour). A request's hour lies inside one block. */
export function formBlocks(hours: HourRow[], now = Date.now()): Block[] {
  const out: Block[] = [];
  let cur: (Block & { startMs: number; firstMs: number; lastMs: number }) | null = null;
  for (const h of hours) {
    if (!cur || h.first_ms >= cur.startMs + BLOCK_MS) {
      if (cur) out.push(finish(cur, now));
      const startMs = Math.floor(h.first_ms / HOUR) * HOUR;
      cur = { start: '', end: '', first_request: '', last_request: '', requests: 0, tokens: 0, weight: 0, usd: 0, models: [], active: false, startMs, firstMs: h.first_ms, lastMs: h.last_ms };
    }
    cur.requests += h.requests;
    cur.tokens += h.tokens;
    cur.weight += h.weight;
    cur.usd += h.usd;
    cur.lastMs = Math.max(cur.lastMs, h.last_ms);
    for (const m of h.models) if (!cur.models.includes(m)) cur.models.push(m);
  }
  if (cur) out.push(finish(cur, now));
  return out;
}

function finish(b: Block & { startMs: number; firstMs: number; lastMs: number }, now: number): Block {
  const { startMs, firstMs, lastMs, ...rest } = b;
  return {
    ...rest,
    start: new Date(startMs).toISOString(),
    end: new Date(startMs + BLOCK_MS).toISOString(),
    first_request: new Date(firstMs).toISOString(),
    last_request: new Date(lastMs).toISOString(),
    models: [...rest.models].sort(),
    active: now >= startMs && now < startMs + BLOCK_MS,
  };
}

export async function blocks(store: RememberingStore, filters: Filters): Promise<{ blocks: Block[] }> {
  const hours = (await rememberedQuery(store, 'hourly', filterParams(filters))) as unknown as HourRow[];
  return { blocks: formBlocks(hours) };
}
