/** The filters every analysis command takes: --since/--until (days in --timezone) and --project. */
import { UsageError } from '../errors.js';
import { isCalendarDay } from '../ingest/line.js';

export interface Filters {
  since: string | null;
  until: string | null;
  project: string | null;
  timezone: string;
}

export function localTimezone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Accepts YYYY-MM-DD or YYYYMMDD (ccusage's form); returns YYYY-MM-DD. */
export function parseDay(s: string | undefined | null, flag: string): string | null {
  if (s === undefined || s === null || s === '') return null;
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(s.trim());
  if (!m || !isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]))) throw new UsageError(`${flag} ${s}: expected a day as YYYY-MM-DD or YYYYMMDD`);
  return `${m[1]}-${m[2]}-${m[3]}`;
}

export function parseTimezone(tz: string | undefined, flag = '--timezone'): string {
  const zone = tz || localTimezone();
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw new UsageError(`${flag} ${zone}: not a known IANA time zone (e.g. UTC, Europe/Berlin)`);
  }
  return zone;
}

export function filterParams(f: Filters): Record<string, unknown> {
  return { tz: f.timezone, since: f.since, until: f.until, project: f.project };
}
