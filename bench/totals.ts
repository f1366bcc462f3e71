/**
 * A fast wrong answer is no result: the totals of cachelens (`summary --json`) and ccusage
 * (`daily --json`) from the same run are compared field by field. Tokens must be equal. USD may
 * differ by float summation order; a larger difference is listed per model so it can be
 * explained (SPEC §2.3).
 *
 * Example: cachelens cache_write_5m 1,331,094 + cache_write_1h 276,819 is compared with
 * ccusage cacheCreationTokens 1,607,913 → equal.
 */
import { readFileSync } from 'node:fs';

export interface TotalsCheck {
  /** all token fields equal */
  tokensEqual: boolean;
  usdEqual: boolean;
  rows: { field: string; cachelens: number; ccusage: number; equal: boolean }[];
  /** models whose USD differs (cachelens, ccusage) */
  usdByModel: { model: string; cachelens: number; ccusage: number }[];
}

interface CachelensTotals {
  input: number;
  output: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
  usd: number;
}

interface CachelensSummary {
  totals: CachelensTotals;
  by_model: (CachelensTotals & { model: string })[];
}

interface CcusageDaily {
  totals: { inputTokens: number; outputTokens: number; cacheCreationTokens: number; cacheReadTokens: number; totalCost: number };
  daily: { modelBreakdowns: { modelName: string; cost: number }[] }[];
}

const USD_REL = 1e-9;

export function compareTotals(cachelensJson: string, ccusageJson: string): TotalsCheck {
  const a = JSON.parse(readFileSync(cachelensJson, 'utf8')) as CachelensSummary;
  const b = JSON.parse(readFileSync(ccusageJson, 'utf8')) as CcusageDaily;
  const t = a.totals;
  const u = b.totals;
  const rows = [
    row('input', t.input, u.inputTokens),
    row('output', t.output, u.outputTokens),
    row('cache write (5m + 1h)', t.cache_write_5m + t.cache_write_1h, u.cacheCreationTokens),
    row('cache read', t.cache_read, u.cacheReadTokens),
    row('USD', t.usd, u.totalCost, USD_REL),
  ];
  const ccModel = new Map<string, number>();
  for (const d of b.daily) for (const m of d.modelBreakdowns) ccModel.set(m.modelName, (ccModel.get(m.modelName) ?? 0) + m.cost);
  const usdByModel = a.by_model
    .map((m) => ({ model: m.model, cachelens: m.usd ?? 0, ccusage: ccModel.get(m.model) ?? 0 }))
    .filter((m) => !close(m.cachelens, m.ccusage, USD_REL));
  return { tokensEqual: rows.slice(0, 4).every((r) => r.equal), usdEqual: rows[4].equal, rows, usdByModel };
}

function close(x: number, y: number, rel: number): boolean {
  return Math.abs(x - y) <= rel * Math.max(Math.abs(x), Math.abs(y), 1);
}

function row(field: string, cachelens: number, ccusage: number, rel = 0): TotalsCheck['rows'][number] {
  return { field, cachelens, ccusage, equal: rel === 0 ? cachelens === ccusage : close(cachelens, ccusage, rel) };
}
