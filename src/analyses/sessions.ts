/** Sessions: one row per session with its chains, tokens, weight and USD. */
import { type RememberingStore, rememberedQuery } from '../store/queries.js';
import { type Filters, filterParams } from './filters.js';
import { type Totals, scopeTotals } from './summary.js';

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

/** Every session in scope (not only those a `--top` shows): how many, their chains summed, and summary's totals of their requests. */
export interface SessionTotals extends Totals {
  sessions: number;
  chains: number;
  subagents: number;
}

export async function sessions(store: RememberingStore, filters: Filters): Promise<{ sessions: SessionRow[]; totals: SessionTotals }> {
  const rows = (await rememberedQuery(store, 'sessions', filterParams(filters))) as unknown as SessionRow[];
  const sum = (k: 'chains' | 'subagents') => rows.reduce((n, s) => n + Number(s[k]), 0);
  return { sessions: rows, totals: { sessions: rows.length, chains: sum('chains'), subagents: sum('subagents'), ...(await scopeTotals(store, filters)) } };
}
