/**
 * Days as text: YYYY-MM-DD, and beyond years 0000–9999 (a time of 9999-12-31 in a zone behind UTC,
 * of 0000-01-01 in one ahead) ISO 8601's expanded form, a sign and six digits, as JavaScript's
 * toISOString writes a year (+010000-01-01, -000001-12-31), and as the queries write days
 * (queries/summary.sql).
 */

/** The UTC day of epoch milliseconds. Example: isoDay(253402344000000) = '+010000-01-01'. */
export function isoDay(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.slice(0, iso.indexOf('T'));
}

/**
 * Two such days in time order (negative when `a` is earlier): as text, '+010000-01-01' and
 * '-000001-12-31' would sort before '2026-01-01'. Example: compareDays('9999-12-31', '+010000-01-01') < 0.
 */
export function compareDays(a: string, b: string): number {
  const ya = Number(a.slice(0, a.length - 6));
  const yb = Number(b.slice(0, b.length - 6));
  if (ya !== yb) return ya - yb;
  const [ra, rb] = [a.slice(-6), b.slice(-6)];
  return ra < rb ? -1 : ra > rb ? 1 : 0;
}

/**
 * An instant's day and minute in a time zone, as sessions write theirs ('YYYY-MM-DD', 'HH:MM'; a
 * year beyond 0000–9999 in the expanded form isoDay writes). The zone's offset at that instant is
 * Intl's, added to the UTC time.
 * Example: localDayMinute(Date.parse('2026-03-01T21:00:00Z'), 'Asia/Kolkata') = ['2026-03-02', '02:30'].
 */
export function localDayMinute(ms: number, timezone: string): [string, string] {
  const iso = new Date(ms + zoneOffsetMs(ms, timezone)).toISOString();
  const t = iso.indexOf('T');
  return [iso.slice(0, t), iso.slice(t + 1, t + 6)];
}

/**
 * A time zone's offset from UTC at an instant, in milliseconds (Intl's): the instant's wall clock
 * there, read as UTC, is `ms + zoneOffsetMs(ms, timezone)`. Example: zoneOffsetMs(0, 'Asia/Kathmandu') = 19_800_000 (+05:30 in 1970).
 */
export function zoneOffsetMs(ms: number, timezone: string): number {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' }).formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /^GMT([+-])(\d\d):(\d\d)(?::(\d\d))?$/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * ((Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4] ?? 0)) * 1000 : 0;
}
