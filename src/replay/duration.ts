/**
 * Durations as the replay's flags write them (`--idle-reap 30m`, `--ttl 1h`).
 * Example: parseDurationMinutes('30m') === 30, ('1h') === 60, ('90s') === 1.5, ('45') === 45.
 */
import { UsageError } from '../errors.js';

const UNIT_MINUTES: Record<string, number> = { s: 1 / 60, m: 1, h: 60 };

export function parseDurationMinutes(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$/.exec(text);
  if (!m || Number(m[1]) <= 0) throw new UsageError(`invalid duration "${text}"`, 'use a number with s, m or h, e.g. 30m');
  return Number(m[1]) * UNIT_MINUTES[m[2] || 'm']!;
}
