/**
 * Durations as the replay's flags write them (`--idle-reap 30m`, `--ttl 1h`).
 * Example: parseDurationMinutes('30m') === 30, ('1h') === 60, ('90s') === 1.5, ('45') === 45.
 */
import { UsageError } from '../errors.js';

const UNIT_MINUTES: Record<string, number> = { s: 1 / 60, m: 1, h: 60 };

export function parseDurationMinutes(text: string, flag = '--idle-reap'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$/.exec(text);
  const minutes = m ? Number(m[1]) * UNIT_MINUTES[m[2] || 'm']! : NaN;
  // a run of 309+ digits is Infinity: it ran as "idle reap after Infinity min", null in the JSON
  if (!(minutes > 0) || !Number.isFinite(minutes * 60_000)) throw new UsageError(`${flag} ${text}: expected a duration above 0 such as 90s, 30m or 1h (a bare number is minutes)`);
  return minutes;
}
