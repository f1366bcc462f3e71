/**
 * Units the cache reporters need beyond src/format/table.ts: signed percentages, gaps and counts.
 */
import { type Filters, isUtc } from '../analyses/filters.js';
import { clean, int, rounded, usd } from '../format/table.js';
import { fmtFilters } from '../report/format.js';
import { wrap } from '../format/wrap.js';

/** A count and its noun, singular for 1: (1, 'file') → "1 file", (1,424, 'file') → "1,424 files". */
export function counted(n: number, noun: string, plural = noun + 's'): string {
  return `${int(n)} ${n === 1 ? noun : plural}`;
}

/** A value already in percent, signed: 2.2413 → "+2.24%"; null → "—" */
export function signedPct(x: number | null, decimals = 2): string {
  if (x === null || !Number.isFinite(x)) return '—';
  // rounded as --json writes it, halves away from zero (format/table.ts rounded())
  const text = rounded(Math.abs(x), decimals);
  const zero = !/[1-9]/.test(text);
  return `${zero ? '' : x > 0 ? '+' : '-'}${text}%`;
}

/** A change in weight, signed as signedPct signs a share: 2,619,139 → "+2,619,139", -3,675 → "-3,675", 0 → "0". */
export function signedInt(x: number): string {
  const text = int(x);
  return text !== '0' && x > 0 ? `+${text}` : text;
}

/** A change in USD, signed as signedPct signs a share: 7.92 → "+$7.92", -3.02 → "-$3.02", 0 → "$0.0000" (it printed a rise as "$7.92" beside "+18.88%"). */
export function signedUsd(x: number): string {
  const text = usd(x);
  return x > 0 && text !== usd(0) ? `+${text}` : text;
}

/**
 * A gap in seconds as "5s", "19.2m", "4.2h"; null → "—". Rounded as --json writes the number, halves away from
 * zero, as weights, USD and percentages are (format/table.ts rounded()): toFixed rounded the double, so 69 s
 * (1.15 min, 1.1499… in binary) printed 1.1m and 4.05 h 4.0h. The unit is the one the gap is below once
 * rounded: 59.6 s is 1.0m, not 60s, and 3,599 s 1.0h, not 60.0m.
 * Example: duration(69) === '1.2m'; duration(14_580) === '4.1h'
 */
export function duration(s: number | null): string {
  if (s === null) return '—';
  const secs = rounded(s, 0);
  if (Math.abs(Number(secs)) < 60) return `${secs}s`;
  const mins = rounded(s / 60, 1);
  if (Math.abs(Number(mins)) < 60) return `${mins}m`;
  return `${rounded(s / 3600, 1)}h`;
}

/** The cache TTLs in seconds (5 minutes, 1 hour): a gap above one expires a cache written at it (SPEC §3). */
const TTL_SECONDS = [300, 3600];

/**
 * A gap between two requests beside its class (`anatomy --chain`): as duration() says it, but within a minute of a
 * TTL (5 m, 1 h) in minutes and seconds, so that the two sides of it differ: 300 s (inside the 5-minute TTL) is
 * `5m00s` and 301 s (an expiry) `5m01s`, where both printed `5.0m`; 3,599 s `59m59s`, 3,600 s `1h00m00s`, 3,601 s
 * `1h00m01s`. Which form is decided on the whole seconds printed, not the raw gap, so one printed value has one
 * form: a gap whose whole seconds are within 59 s of a TTL (`4m01s` to `5m59s`, `59m01s` to `1h00m59s`) is in
 * minutes and seconds, any other as duration() says it (240 s and 240.4 s are both `4.0m`, 359.96 s and 360 s both
 * `6.0m`, 3,540.5 s rounds to 3,541 s, `59m01s`). A gap only a fraction of a second above a TTL, which whole
 * seconds would round onto it, takes tenths rounded up (300.04 s is `5m00.1s`), compared exactly, so a gap past a
 * TTL never prints as it (300.0000000001 s is `5m00.1s`): at or below `5m00s` is inside the TTL, above it past it.
 * --json keeps the seconds as they are.
 * Example: gapDuration(300) === '5m00s'; gapDuration(301) === '5m01s'; gapDuration(1_152) === '19.2m'
 */
export function gapDuration(s: number | null): string {
  if (s === null) return '—';
  let whole = Number(rounded(s, 0).replace(/,/g, ''));
  let tenths = '';
  const above = TTL_SECONDS.find((t) => s > t && whole <= t);
  if (above !== undefined) {
    // rounded up to a tenth, never down onto the TTL: 300.04 s is 5m00.1s (it is past it). k / 10 >= s is checked
    // exactly, as s * 10 can round down onto a whole (300 s plus a hair times 10 is 3,000), and k / 10 > TTL follows
    let k = Math.round(s * 10);
    if (k / 10 < s) k += 1;
    whole = Math.floor(k / 10);
    tenths = `.${k % 10}`;
  } else if (!TTL_SECONDS.some((t) => Math.abs(whole - t) < 60)) return duration(s);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const sec = `${String(whole % 60).padStart(2, '0')}${tenths}s`;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m${sec}` : `${m}m${sec}`;
}

/**
 * The line above a command's tables that names the filters in force, as the report's title line
 * does (`only --since …`); '' when none is given. `projectMatches` false: no project contains
 * --project's text, said there (the tables were silent zeros). `days`, given when --since/--until
 * counted nothing: the first and last day of the requests there are (of --project's, with it), or
 * null when there are none, said there too (a future --since printed empty tables without a word).
 * Example: { since: '2026-02-02', until: null, project: 'nomatch' }, false →
 * 'Filtered: --since 2026-02-02 --project nomatch: no project matches\n\n';
 * { since: '2030-01-01', until: null, project: null }, true, { first: '2026-02-11', last: '2026-02-12' } →
 * 'Filtered: --since 2030-01-01: no request on those days; the requests read: from 2026-02-10 to 2026-02-11\n\n';
 * { since: '2026-02-12', until: null, project: null, timezone: 'America/New_York' } →
 * 'Filtered: --since 2026-02-12 (days in America/New_York)\n\n' (in UTC, or UTC by another name as Etc/UTC, no zone is named).
 */
export function filtersLine(f: Pick<Filters, 'since' | 'until' | 'project'> & { timezone?: string }, projectMatches = true, days?: { first: string; last: string } | null): string {
  if (f.since === null && f.until === null && f.project === null) return '';
  // the days of --since/--until are this zone's (--timezone, else TZ or the system's): said unless UTC, since a
  // command without a by-day table (whatif, anatomy) named them nowhere ('Filtered: --since 2026-02-12' of New York days)
  const zone = (f.since !== null || f.until !== null) && f.timezone !== undefined && !isUtc(f.timezone) ? ` (days in ${f.timezone})` : '';
  let why = '';
  if (f.project !== null && !projectMatches) why = ': no project matches';
  else if (days !== undefined) {
    const read = f.project !== null ? "the matching projects' requests" : 'the requests read';
    const when = days === null ? 'none at all' : days.first === days.last ? `all on ${days.first}` : `from ${days.first} to ${days.last}`;
    why = `: no request on those days; ${read}: ${when}`;
  }
  // wrapped to a terminal's width (format/wrap.ts)
  return `${wrap(`Filtered: ${clean(fmtFilters(f) + zone)}${why}`)}\n\n`;
}
