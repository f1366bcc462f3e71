/** Sessions: one row per session with its chains, tokens, weight and USD. */
import { type RememberingStore, rememberedQuery } from '../store/queries.js';
import { type Filters, filterParams } from './filters.js';

export interface SessionRow {
  session_id: string;
  project: string;
  /** the first and last request's minute in the time zone asked for: `2026-02-10 12:21` */
  first: string;
  last: string;
  /** the same two times as ISO 8601 in UTC to the millisecond, as blocks give theirs */
  first_request: string;
  last_request: string;
  requests: number;
  chains: number;
  subagents: number;
  input: number;
  output: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
  /** of the priced requests; null when none has a price (unknown, never 0) */
  weight: number | null;
  usd: number | null;
  unpriced_requests: number;
}

export async function sessions(store: RememberingStore, filters: Filters): Promise<{ sessions: SessionRow[] }> {
  const rows = await rememberedQuery(store, 'sessions', filterParams(filters));
  return { sessions: rows as unknown as SessionRow[] };
}
