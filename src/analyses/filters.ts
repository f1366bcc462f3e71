/** The filters every analysis command takes: --since/--until (days in --timezone) and --project. */
import { UsageError } from '../errors.js';
import { isCalendarDay } from '../ingest/line.js';

export interface Filters {
  since: string | null;
  until: string | null;
  project: string | null;
  timezone: string;
}

/**
 * This machine's time zone as Node reads it: TZ when set (an IANA name, `:` before one as glibc
 * allows, or a POSIX name ICU maps to one: EST5EDT is America/New_York), else the system's. A TZ
 * is named as `--timezone` names the same text (zoneName): TZ=Asia/Kolkata is Asia/Kolkata, not
 * ICU's Asia/Calcutta, and TZ=EST5EDT is EST5EDT. A name Node's ICU reads only in another case
 * (TZ=utc, TZ=europe/berlin: the process's own zone is then unknown) is the zone --timezone takes it
 * for, by the same name (UTC, Europe/Berlin): cachelens counts days in the zone it names, never in the
 * process's, so no word is needed (it said Node could not read TZ=utc, and counted days in UTC anyway).
 * `warning`: TZ names no zone Node could read (`EST5EDT,M3.2.0,M11.1.0`, `JST-9`, a zoneinfo path),
 * or the system's zone is unknown; Node then takes UTC, Etc/Unknown or no zone
 * at all, and days would come out in UTC rather than in the zone meant without a word. Or TZ is a
 * short name (TZ=est): the zone it is read as, said (abbreviationNote).
 */
export function localTimezone(tz: string | undefined = process.env.TZ): { zone: string; warning?: string } {
  const resolved = Intl.DateTimeFormat().resolvedOptions().timeZone as string | undefined;
  const known = resolved ? zoneOf(resolved) : undefined;
  const zone = known !== undefined ? resolved! : 'UTC';
  const give = `days are in ${zone}; give --timezone`;
  // TZ set but empty is UTC (as glibc reads it; ICU says Etc/Unknown)
  if (tz === '') return { zone };
  if (tz === undefined) return known !== undefined ? { zone } : { zone, warning: `cachelens: this machine's time zone is unknown to Node: ${give}` };
  const given = tz.startsWith(':') ? tz.slice(1) : tz;
  const named = zoneOf(given);
  // shown by the name --timezone would show it by: TZ=Europe/Kyiv is Europe/Kyiv, not ICU's Europe/Kiev
  if (known !== undefined && named === known) return { zone: zoneName(given, known), warning: abbreviationNote(given, `TZ=${tz}`) };
  // read only in another case (TZ=utc): as --timezone utc takes it
  if (named !== undefined) return { zone: zoneName(given, named), warning: abbreviationNote(given, `TZ=${tz}`) };
  return { zone, warning: `cachelens: TZ=${tz} is not a time zone name Node can read (an IANA name such as America/New_York): ${give}` };
}

/** The IANA names of UTC itself (tzdata's `backward` links to Etc/UTC and Etc/GMT), in lower case. */
const UTC_NAMES = new Set(['utc', 'etc/utc', 'uct', 'etc/uct', 'universal', 'etc/universal', 'zulu', 'etc/zulu', 'gmt', 'etc/gmt', 'gmt0', 'etc/gmt0', 'gmt+0', 'etc/gmt+0', 'gmt-0', 'etc/gmt-0', 'greenwich', 'etc/greenwich']);

/**
 * Whether a zone name is UTC under another name (Etc/UTC, GMT, Zulu, Etc/GMT+0…): an offset of 0 all
 * year by definition, so days in it are UTC days and are said as UTC's are (`TZ=Etc/UTC` printed
 * `(days in Etc/UTC)` where TZ=UTC named no zone). A zone at 0 only by its place (Africa/Abidjan,
 * Atlantic/Reykjavik) or for part of the year (Europe/London) is not UTC: its rules may change.
 * Example: isUtc('Etc/UTC') → true; isUtc('Europe/London') → false.
 */
export function isUtc(zone: string): boolean {
  return UTC_NAMES.has(zone.toLowerCase()) || zoneOf(zone) === 'UTC';
}

/** The IANA zone a name is to Intl (its canonical name), or undefined when Intl knows none. */
function zoneOf(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

let warnedTz = false;

/**
 * An empty filter flag (`--since=`, `--project "$P"` with P unset) is a mistake, not the flag left
 * out: it counted every day, every project, in this machine's zone, without a word (as an empty
 * `--chain` or `--db` is refused).
 * Example: { since: ' ' } → UsageError `--since: expected a day as YYYY-MM-DD or YYYYMMDD`.
 */
export function refuseEmptyFilters(o: { since?: unknown; until?: unknown; timezone?: unknown; project?: unknown }): void {
  const expected = { since: 'a day as YYYY-MM-DD or YYYYMMDD', until: 'a day as YYYY-MM-DD or YYYYMMDD', timezone: 'an IANA time zone (e.g. UTC, Europe/Berlin)', project: 'text the project\'s path contains' };
  for (const k of ['since', 'until', 'timezone', 'project'] as const) {
    if (typeof o[k] === 'string' && o[k].trim() === '') throw new UsageError(`--${k}: expected ${expected[k]}`);
  }
}

/** An option and its value as the user gave them: `--since X`, or `--param TZ=X` for a `flag` ending in `=`. */
function named(flag: string, value: string | undefined): string {
  return flag.endsWith('=') ? `${flag}${value}` : `${flag} ${value}`;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * Accepts YYYY-MM-DD or YYYYMMDD (ccusage's form); returns YYYY-MM-DD. A day in that form that does
 * not exist is said as such, not as the wrong form it is not.
 * Example: '20260211' → '2026-02-11'; '2026-02-30' → UsageError `--since 2026-02-30: no such day (February 2026 has 28 days)`.
 */
export function parseDay(s: string | undefined | null, flag: string): string | null {
  if (s === undefined || s === null || s === '') return null;
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(s.trim());
  if (!m) throw new UsageError(`${named(flag, s)}: expected a day as YYYY-MM-DD or YYYYMMDD`);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12) throw new UsageError(`${named(flag, s)}: no such day (month ${m[2]}: a month is 01 to 12)`);
  if (!isCalendarDay(y, mo, d)) {
    const days = [31, 30, 29, 28].find((n) => isCalendarDay(y, mo, n))!;
    throw new UsageError(`${named(flag, s)}: no such day (${MONTHS[mo - 1]} ${m[1]} has ${days} days)`);
  }
  return `${m[1]}-${m[2]}-${m[3]}`;
}

/** --since and --until together: a range that ends before it starts is a mistake, not an empty answer. */
export function parseDays(since: string | undefined | null, until: string | undefined | null): { since: string | null; until: string | null } {
  const range = { since: parseDay(since, '--since'), until: parseDay(until, '--until') };
  if (range.since !== null && range.until !== null && range.since > range.until) {
    throw new UsageError(`--since ${since} is after --until ${until}: no day is in that range`);
  }
  return range;
}

/**
 * --timezone's zone (checked) as it is spelled (zoneName), or without one this machine's
 * (localTimezone), whose warning goes to `notice` once a run.
 */
export function parseTimezone(tz: string | undefined, flag = '--timezone', notice?: (line: string) => void): string {
  if (!tz) {
    const local = localTimezone();
    if (local.warning !== undefined && notice !== undefined && !warnedTz) {
      warnedTz = true;
      notice(local.warning);
    }
    return local.zone;
  }
  const zone = zoneOf(tz);
  if (zone === undefined) throw new UsageError(`${named(flag, tz)}: not a known IANA time zone (e.g. UTC, Europe/Berlin)`);
  const note = abbreviationNote(tz, named(flag, tz));
  if (note !== undefined && notice !== undefined) notice(note);
  return zoneName(tz, zone);
}

/**
 * The short names that are abbreviations of an offset or a zone's time, which Intl reads as one zone: tzdata's
 * fixed-offset EST, MST and HST, and ICU's three-letter ids (PST, BST, IST, JST…, each one zone of those the
 * abbreviation may mean). Every other short name Intl reads is a region's own (Iran, Cuba, Eire, PRC, ROK, ROC),
 * a UTC name (UTC, GMT, Zulu), or tzdata's CET, MET, EET and WET, which keep their region's daylight saving:
 * each the zone it names, with nothing to say. Taken in any case (est is EST).
 */
const ABBREVIATIONS = new Set(['EST', 'MST', 'HST', 'ACT', 'AET', 'AGT', 'ART', 'AST', 'BET', 'BST', 'CAT', 'CNT', 'CST', 'CTT', 'EAT', 'ECT', 'IET', 'IST', 'JST', 'MIT', 'NET', 'NST', 'PLT', 'PNT', 'PRT', 'PST', 'SST', 'VST']);

/**
 * The note on a zone given by a short name (`est`, `PST`, `BST`, `IST`): ICU reads each as one zone,
 * often not the one meant: EST is UTC−5 all year (America/Panama), not US Eastern time with its
 * daylight saving, and BST is Bangladesh's, not British Summer Time. Days were counted in it without
 * a word; the note names the zone and its offsets now (January's and July's), and how to name a
 * region (for TZ, by setting TZ: a command without --timezone has no other). Undefined for a name not one of
 * ABBREVIATIONS (a region's, Iran or CET; a UTC name) or a name Intl does not read.
 * Example: ('est', '--timezone est') → 'cachelens: --timezone est is read as the zone America/Panama,
 * UTC-05:00 all year; a short name stands for one zone, whatever else it may mean: for a region's
 * local time give its name, such as America/New_York'.
 */
export function abbreviationNote(given: string, said: string, now = Date.now()): string | undefined {
  const name = given.startsWith(':') ? given.slice(1) : given;
  if (!ABBREVIATIONS.has(name.toUpperCase())) return undefined;
  const zone = zoneOf(name);
  if (zone === undefined) return undefined;
  const year = new Date(now).getUTCFullYear();
  const [winter, summer] = [0, 6].map((month) => offsetOf(zone, Date.UTC(year, month, 1)));
  const offsets = winter === summer ? `${winter} all year` : `${winter} in January, ${summer} in July`;
  const wayOut = said.startsWith('TZ=') ? 'set TZ to its name, such as TZ=America/New_York' : 'give its name, such as America/New_York';
  return `cachelens: ${said} is read as the zone ${zone}, ${offsets}; a short name stands for one zone, whatever else it may mean: for a region's local time ${wayOut}`;
}

/** A zone's offset from UTC at `t` as `UTC-05:00` (`UTC` at 0). */
function offsetOf(zone: string, t: number): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).formatToParts(t).find((p) => p.type === 'timeZoneName');
  return (part?.value ?? 'GMT').replace(/^GMT/, 'UTC');
}

/**
 * The name a zone Intl reads is shown and queried by: Intl's canonical name when the given one is it
 * in another case, or an alias written in lower case (which has no case of its own to keep); any
 * other alias as given, since ICU's canonical name is often the older one (Asia/Kolkata is
 * Asia/Calcutta to it). DuckDB's timezone(…) reads every one of these.
 * Example: asia/tokyo → Asia/Tokyo; us/pacific → America/Los_Angeles; Asia/Kolkata → Asia/Kolkata.
 */
function zoneName(given: string, canonical: string): string {
  if (given.toLowerCase() === canonical.toLowerCase() || given === given.toLowerCase()) return canonical;
  return given;
}

export function filterParams(f: Filters): Record<string, unknown> {
  return { tz: f.timezone, since: f.since, until: f.until, project: f.project };
}
