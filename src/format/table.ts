/**
 * Aligned terminal tables: numbers right-aligned with thousands separators, text left-aligned,
 * colour only on a TTY without a non-empty NO_COLOR, text columns cut to a TTY's width (table()'s
 * `width`) and then, if it must, columns of least weight left out (Column.drop). Every reporter that
 * prints a table uses this.
 */
import { jsonNumber, roundNumbers } from './json-numbers.js';
import { wrap } from './wrap.js';

/** A list column's cell (Column.list) is its items; any other is text or a number. */
export type Cell = string | number | readonly string[] | null | undefined;

export interface Column {
  header: string;
  /** 'num' right-aligns; 'text' left-aligns */
  align?: 'num' | 'text';
  /** shown whole, however long, where other text is fit(): a `query`'s result (the user's own SQL: its data as it is) */
  whole?: boolean;
  /** a totals column: a rule (│) before it, so that a group named `total` (a model, a project) cannot pass for it */
  totals?: boolean;
  /**
   * an id or a path (a chain's, a session's, a project's): a table too wide for its terminal may cut
   * it (shrinkWidths), to `min` columns at the least. Other text (a model, a time, a row's label, an
   * agent type) is not cut to a width while the table can fit otherwise: a cut time or model hid what it
   * said (`claude-h…0251001`); only last of all, where nothing else makes the table fit and cutting it does (lastCut), as a line
   * wider than its terminal is worse (`min: Infinity` keeps one whole even then: sessions' ids).
   * Free text a reader skims (a bundled query's purpose: Column.prose) may be `cut` too: it is cut
   * before any column is left out (Column.drop). A break's cause names
   * models: cut last (Column.cutLast). A `whole` column that is `cut` is shown whole off a
   * terminal, on one wide enough, and under `--wide`, which cuts nothing a piped table shows whole (setWideTables): text over MAX_CELL_WIDTH is cut in its middle as piped.
   */
  cut?: boolean;
  /**
   * text cut only when nothing else makes the table fit (a break's cause, which names models): whole
   * while a column can be left out instead (Column.drop); on a terminal too narrow for the table with
   * every such column left out (or with none to leave out), cut in its middle as an id is (fit()), to `min` columns at the least,
   * only where that makes the table fit, and never so far that two of its different cells read the same.
   * Never off a terminal, never under `--wide`.
   */
  cutLast?: boolean;
  /** a `cut` column of prose (a bundled query's purpose): cut at its end (fitEnd), not in its middle as an id or a path is */
  prose?: boolean;
  /**
   * a `cut` column whose header may be cut as well (in its middle, as an id is), to `min` columns at the
   * least: a crosstab's `definition \\ has_skill_listing` over labels of 8 columns. Other headers stay whole.
   */
  cutHeader?: boolean;
  /** internal: a label cut last (lastCut), cut no narrower than keeps its different cells different */
  distinct?: boolean;
  /** the fewest columns a `cut` column is cut to (default MIN_FIT_WIDTH) */
  min?: number;
  /**
   * a list (a block's models, a request's causes): its cells are the items, shown joined by ', ', each
   * fit() on its own. A table too wide for its terminal shortens it as fitList() does: whole items, as
   * many as fit, then `+N` for the rest, row by row; a row where not even its first item fits shows
   * its number of items (`3 models`, with `noun`; `3` when only that makes the table fit), when that
   * makes the table fit (a table too wide for its numbers anyway keeps the items it can). The column
   * is as wide as its widest cell so shown.
   */
  list?: boolean;
  /** what a list's items are (`model`): its count reads `3 models`, `1 model` */
  noun?: string;
  /**
   * The order a table too wide for its terminal leaves this column out in, once its ids, paths, free
   * text and lists are cut as far as they go: 1 first, then 2, and so on, until the table fits. A line
   * under the table names the columns left out (leftOutNote). A column without it (the identifying
   * column, the headline cost columns: weight, USD) always stays. `--wide` leaves none out and cuts only what piped is cut (text over MAX_CELL_WIDTH, setWideTables).
   */
  drop?: number;
}

/**
 * Number formats by fraction digits, each made on first use: making one took 3.6 – 5.6 ms even
 * after ICU's first use, which a command that prints JSON (a warm `summary --json`) need not pay.
 */
const formats = new Map<string, Intl.NumberFormat>();

function numberFormat(minDigits: number, maxDigits: number): Intl.NumberFormat {
  const key = `${minDigits},${maxDigits}`;
  let f = formats.get(key);
  if (!f) formats.set(key, (f = new Intl.NumberFormat('en-US', { minimumFractionDigits: minDigits, maximumFractionDigits: maxDigits })));
  return f;
}

export function int(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  // rounded as --json writes it first (12 significant digits): one sum added up in two orders is 8,734,583.5
  // in one and 8,734,583.4999999 in the other, and printed 8,734,584 by summary, 8,734,583 by anatomy and the what-ifs
  const x = jsonNumber(n);
  // + 0: a negative number that rounds to zero prints as 0, not -0; halves round away from zero, as usd's
  // do: Math.round took −2,187.5 up to −2,187, so a net saving of −2,187.5 wt printed beside a ping cost of 2,188
  return numberFormat(0, 0).format(Math.sign(x) * Math.round(Math.abs(x)) + 0);
}

export function usd(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return 'unknown';
  const { negative, text } = usdParts(n);
  return `${negative ? '-' : ''}${text}`;
}

/**
 * The one rule for a USD amount, shared by the terminal tables (usd() above) and the HTML report
 * (fmtUsd, which writes its minus sign as U+2212): the amount without its sign, and whether it is
 * below 0. Rounded as --json writes it (12 significant digits), then digits by the magnitude the
 * amount rounds to: $0.0000 for 0, four decimals under a dollar, two under $100, none from $100
 * (99.996 is $100, not $100.00; 0.99996 is $1.00); `<$0.0001` for an amount too small for four
 * decimals but not 0 (it is priced, and above 0). Example: usdParts(-1234.5) → { negative: true, text: '$1,235' }
 */
export function usdParts(n: number): { negative: boolean; text: string } {
  // as --json writes it (12 significant digits), as int() does: $0.124999999999 and $0.125 are one amount
  n = jsonNumber(n);
  const abs = Math.abs(n);
  const digits = abs >= 99.995 ? 0 : abs >= 0.99995 ? 2 : 4;
  if (abs > 0 && abs < 0.00005) return { negative: n < 0, text: '<$0.0001' };
  return { negative: n < 0, text: `$${numberFormat(digits, digits).format(abs)}` };
}

export function pct(fraction: number | null | undefined, digits = 1): string {
  return fraction === null || fraction === undefined || !Number.isFinite(fraction) ? '—' : `${rounded(jsonNumber(fraction) * 100, digits)}%`;
}

/**
 * `x` with `digits` decimals, its whole part grouped in thousands: rounded as --json writes it (12
 * significant digits), then halves away from zero, as usd() and int() round (toFixed rounded the
 * binary double: a share --json gives as 0.0015 printed 0.1%, $0.00015 $0.0002); no minus sign on
 * a number that rounds to 0. Example: rounded(0.15, 1) === '0.2'; rounded(-241642.1934, 2) === '-241,642.19'
 */
export function rounded(x: number, digits: number): string {
  const y = jsonNumber(x);
  const text = numberFormat(digits, digits).format(Math.abs(y));
  return y < 0 && /[1-9]/.test(text) ? `-${text}` : text;
}

/**
 * A number's text (toFixed's) with its whole part grouped in thousands, as every other number in a
 * table is: a keepalive at a short interval nets -241,642.19% of subagent weight, not -241642.19%.
 * Example: '-241642.19' → '-241,642.19'; '12.5' → '12.5'.
 */
export function grouped(text: string): string {
  const m = /^(-?)(\d+)(\.\d*)?$/.exec(text);
  return m ? `${m[1]}${m[2]!.replace(/\B(?=(\d{3})+$)/g, ',')}${m[3] ?? ''}` : text;
}

export function fixed(n: number | null | undefined, digits = 2): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(digits);
}

/**
 * The bidi controls, as a regex character-class body: the marks (U+061C, U+200E, U+200F),
 * embeddings, overrides and isolates (U+202A – U+202E, U+2066 – U+2069). Every place transcript
 * text is shown neutralizes them (here, and the report's escape.ts).
 */
export const BIDI_CONTROLS = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

/**
 * Every control character clean() replaces, as a regex character-class body: C0, DEL, C1, the bidi
 * controls and the line and paragraph separators (U+2028, U+2029: a line break to some terminals and
 * editors). clean() replaces the invisible characters too (INVISIBLE below).
 */
export const CONTROL_CHARS = `\\u0000-\\u001f\\u007f-\\u009f${BIDI_CONTROLS}\\u2028\\u2029`;

/**
 * The characters a terminal and a browser draw nothing for, Unicode's Default_Ignorable_Code_Point:
 * the zero-width space U+200B, the joiners U+200C/U+200D and word joiner U+2060, the BOM U+FEFF, the
 * soft hyphen U+00AD, the Mongolian vowel separator U+180E, the Hangul fillers, the variation
 * selectors and the tag characters U+E0000 – U+E0FFF. In transcript text they made two names look
 * the same ('plan\u200bner' showed as the agent type 'planner'), or carried text nobody sees.
 */
const INVISIBLE = '\\p{Default_Ignorable_Code_Point}';

/** An emoji flag's tag sequence (U+1F3F4 🏴, tag letters, the cancel tag: Scotland's, England's flag): shown as it is. */
const FLAG_TAGS = '\\u{1F3F4}[\\u{E0020}-\\u{E007E}]{1,8}\\u{E007F}';

const CONTROL = new RegExp(`^[${CONTROL_CHARS}]$`, 'u');
const CONTROLS = new RegExp(`${FLAG_TAGS}|[${CONTROL_CHARS}]|${INVISIBLE}`, 'gu');
const CONTROLS_BUT_LINES = new RegExp(`${FLAG_TAGS}|[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${BIDI_CONTROLS}\\u2028\\u2029]|\\r(?!\\n)|${INVISIBLE}`, 'gu');
const RAW_IN_JSON = new RegExp(`${FLAG_TAGS}|[\\u007f-\\u009f${BIDI_CONTROLS}\\u2028\\u2029]|${INVISIBLE}`, 'gu');

/** What an emoji's joiner joins: an emoji, a skin tone, or VS16 (the emoji form of the one before it). */
const EMOJI_BEFORE_JOINER = /^[\p{Extended_Pictographic}\p{Emoji_Modifier}\ufe0f]$/u;
const EMOJI_AFTER_JOINER = /^\p{Extended_Pictographic}$/u;
/** A letter or mark of a script written with joiners (Arabic, Persian, the Indic scripts …): not Latin, Greek, Cyrillic or Common. */
const JOINING_SCRIPT = /^(?![\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Common}\p{Script=Inherited}])[\p{L}\p{M}]$/u;
/** What a variation selector picks a form of: an emoji or symbol (❤️, 1️⃣), a Han ideograph, a Mongolian or Myanmar letter. */
const VARIATION_BASE = /^[\p{Emoji}\p{S}\p{Script=Han}\p{Script=Mongolian}\p{Script=Myanmar}\p{Script=Phags_Pa}\p{Script=Manichaean}]$/u;

function charBefore(s: string, i: number): string {
  if (i === 0) return '';
  const low = s.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && i >= 2 ? String.fromCodePoint(s.codePointAt(i - 2)!) : s[i - 1]!;
}

function charAt(s: string, i: number): string {
  const c = s.codePointAt(i);
  return c === undefined ? '' : String.fromCodePoint(c);
}

/**
 * Whether the invisible character `m` at `s[i]` is kept, as part of what it draws: an emoji flag's
 * tags; a joiner inside an emoji (👩‍🚀) or between two letters of a script written with joiners
 * (the ZWNJ of Persian می‌خواهم, the ZWJ after a Devanagari virama); one variation selector after a
 * character that has variants (❤️, 1️⃣, a Han ideograph). Elsewhere it only hides: not kept.
 * Example: in 'plan\u200dner' the joiner is not kept (Latin letters); in '👩\u200d🚀' it is.
 */
function keptInvisible(m: string, i: number, s: string): boolean {
  if (m.length > 2) return true;
  const c = m.codePointAt(0)!;
  const before = charBefore(s, i);
  if (c === 0x200d || c === 0x200c) {
    const after = charAt(s, i + m.length);
    return (c === 0x200d && EMOJI_BEFORE_JOINER.test(before) && EMOJI_AFTER_JOINER.test(after)) || (JOINING_SCRIPT.test(before) && JOINING_SCRIPT.test(after));
  }
  const variation = (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xe0100 && c <= 0xe01ef) || (c >= 0x180b && c <= 0x180f && c !== 0x180e);
  if (!variation) return false;
  // of ASCII, only a keycap's digit, # or * (1️⃣): after a Latin letter or '+' a selector only hides
  if (before.length === 1 && before.charCodeAt(0) < 0x80) return c === 0xfe0f && /^[0-9#*]$/.test(before) && s.codePointAt(i + 1) === 0x20e3;
  // the base itself, not a selector before: a run of selectors after one emoji hides text in them
  return VARIATION_BASE.test(before);
}

/**
 * Replaces control characters in transcript text before it reaches a terminal: C0, DEL and C1 (no
 * escape sequences, no carriage return over a line) and every bidi control: the marks (U+061C,
 * U+200E, U+200F), embeddings, overrides and isolates (U+202A – U+202E, U+2066 – U+2069), which
 * would reorder the text around them, and the line and paragraph separators U+2028 and U+2029.
 * The invisible characters (INVISIBLE) become '?' too, unless they are part of an emoji or a
 * script's writing (keptInvisible): a '?' where nothing showed, one column wide as it is drawn.
 * Example: clean('a\u001b[2Jb\u202e') → 'a?[2Jb?'; clean('plan\u200bner') → 'plan?ner'.
 */
export function clean(s: string): string {
  return s.replace(CONTROLS, (m: string, i: number, all: string) => (!CONTROL.test(m) && keptInvisible(m, i, all) ? m : '?'));
}

/**
 * clean() for text meant to keep its line structure (CSV to a terminal): tabs and line breaks
 * (LF, CRLF) stay, every other control character, bidi control and invisible character becomes '?'.
 */
export function cleanKeepingLines(s: string): string {
  // a carriage return only as part of CRLF: alone it returns to the line's start, over what is there
  return s.replace(CONTROLS_BUT_LINES, (m: string, i: number, all: string) => (!CONTROL.test(m) && m !== '\r' && keptInvisible(m, i, all) ? m : '?'));
}

/** `\uXXXX` for a character (two, a surrogate pair, above U+FFFF). */
function uEscape(m: string): string {
  let out = '';
  for (let k = 0; k < m.length; k++) out += '\\u' + m.charCodeAt(k).toString(16).padStart(4, '0');
  return out;
}

/**
 * JSON.stringify, with the characters it leaves raw that a terminal or an editor may act on (DEL
 * and the C1 controls, bidi controls, line and paragraph separators) and the invisible characters
 * clean() replaces written as \u escapes: the same JSON value, safe to print, and a zero-width
 * space in a name is there to see ("plan\u200bner"). They can only stand inside strings, so
 * replacing them everywhere is exact. `numbers: 'rounded'` writes non-integer numbers to
 * JSON_DIGITS significant digits (format/json-numbers.ts), as `--json` does but for `query`, whose
 * values are DuckDB's exactly.
 */
export function jsonText(value: unknown, indent?: number, numbers: 'exact' | 'rounded' = 'exact'): string {
  const text = JSON.stringify(value, numbers === 'rounded' ? roundNumbers : undefined, indent) ?? 'null';
  return text.replace(RAW_IN_JSON, (m: string, i: number, all: string) => (!CONTROL.test(m) && keptInvisible(m, i, all) ? m : uEscape(m)));
}

/**
 * Columns a terminal gives `s`: 2 for East Asian wide and full-width characters and emoji, 0 for
 * combining marks and the default-ignorable characters (joiners, variation selectors, tags), 1 for the
 * rest (cleaned text has no controls), character by character as terminals measure (wcwidth), so an
 * Indic or Thai syllable's spacing vowel signs count. An emoji written as several characters is one
 * picture of 2 columns: joined by U+200D (👨‍👩‍👧), a flag of two regional indicators (🇯🇵), a keycap or a
 * text symbol asked to show as emoji by U+FE0F (1️⃣, ❤️) — not 6, 4, 1 and 1. A Hangul syllable written as
 * jamo takes its leading consonant's 2 (its vowel and final jamo join it, as wcwidth counts them: 0).
 * Example: displayWidth('項目/a') → 6; displayWidth('👨‍👩‍👧 x') → 4; displayWidth('नमस्ते') → 4.
 */
export function displayWidth(s: string): number {
  if (NARROW_ONLY.test(s)) return s.length;
  if (!PICTURE_PARTS.test(s)) return charsWidth(s);
  let w = 0;
  for (const { segment } of GRAPHEMES.segment(s)) w += PICTURE_PARTS.test(segment) && PICTURE.test(segment) ? 2 : charsWidth(segment);
  return w;
}

function charsWidth(s: string): number {
  let w = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x300) w += 1;
    else if (ZERO_WIDTH.test(ch) || (c >= 0x1160 && c <= 0x11ff) || (c >= 0xd7b0 && c <= 0xd7ff)) continue;
    else if (isWide(c) || EMOJI.test(ch)) w += 2;
    else w += 1;
  }
  return w;
}

const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });
const NARROW_ONLY = /^[\u0000-\u02ff]*$/;
// a character of these is one column and one grapheme (CR LF, one grapheme of two, is not among them)
const ONE_COLUMN_EACH = /^[\u0020-\u007e\u00a0-\u02ff]*$/;
// what makes several characters one emoji picture: a joiner, U+FE0F, a keycap, a regional indicator
const PICTURE_PARTS = /[\u200d\ufe0f\u20e3\u{1f1e6}-\u{1f1ff}]/u;
// a cluster holding one of these with a picture part is drawn as one emoji
const PICTURE = /[\p{Extended_Pictographic}\p{Regional_Indicator}\u20e3]/u;

/** Emoji shown as emoji by default (✅, ⚡, 🚀 …): two columns in a terminal. */
const EMOJI = /^\p{Emoji_Presentation}$/u;

// the default-ignorable characters: joiners and variation selectors, and an emoji flag's tags, which clean() keeps
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Default_Ignorable_Code_Point}]$/u;

function isWide(c: number): boolean {
  return (
    (c >= 0x1100 && c <= 0x115f) ||
    (c >= 0x2e80 && c <= 0x303e) ||
    (c >= 0x3041 && c <= 0x33ff) ||
    (c >= 0x3400 && c <= 0x4dbf) ||
    (c >= 0x4e00 && c <= 0x9fff) ||
    (c >= 0xa000 && c <= 0xa4cf) ||
    (c >= 0xac00 && c <= 0xd7a3) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xfe30 && c <= 0xfe4f) ||
    (c >= 0xff00 && c <= 0xff60) ||
    (c >= 0xffe0 && c <= 0xffe6) ||
    (c >= 0x1f300 && c <= 0x1f64f) ||
    (c >= 0x1f900 && c <= 0x1f9ff) ||
    (c >= 0x20000 && c <= 0x3fffd)
  );
}

export function useColor(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  // no-color.org: only a NO_COLOR that is set and not empty turns colour off
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

export function bold(s: string, color: boolean): string {
  return color ? `\u001b[1m${s}\u001b[22m` : s;
}

/** The most terminal columns a text cell (or a name in a line of text) takes: see fit(). */
export const MAX_CELL_WIDTH = 120;

/**
 * Text as wide as `max` columns at most: a wider one keeps its start and its end, cut in the middle
 * with '…' (a path's end and an id's start both stay). A transcript's value can be any length — a
 * model id of 10 KB from a proxy — and one such cell made every row of its table as wide (summary's
 * By model, anatomy's, the what-ifs' buckets: ~10,400 columns a row). `--json` and `--csv` keep it whole.
 * Example: fit('claude-' + 'x'.repeat(1000) + '-v9', 20) → 'claude-xxx…xxxxxx-v9' (10 columns, '…', 9).
 */
export function fit(s: string, max = MAX_CELL_WIDTH): string {
  if (s.length <= max / 2 || displayWidth(s) <= max) return s;
  const head1 = Math.ceil((max - 1) / 2);
  // one column a character and each its own grapheme (no CR LF): cut by index, not by Intl.Segmenter
  // (a path column of 4,500 sessions' projects spent half a second segmenting)
  if (ONE_COLUMN_EACH.test(s)) return `${s.slice(0, head1)}…${s.slice(s.length - (max - 1 - head1))}`;
  const chars = Array.from(GRAPHEMES.segment(s), (g) => g.segment);
  const take = (from: number, step: number, room: number): number => {
    let i = from;
    for (let w = 0; i >= 0 && i < chars.length; i += step) {
      w += displayWidth(chars[i]!);
      if (w > room) break;
    }
    return i;
  };
  const head = take(0, 1, Math.ceil((max - 1) / 2));
  const tail = take(chars.length - 1, -1, max - 1 - Math.ceil((max - 1) / 2));
  return `${chars.slice(0, head).join('')}…${chars.slice(tail + 1).join('')}`;
}

/**
 * An id (a --chain, --session or replay target as given, or one a transcript holds) as an error or a
 * notice names it: cleaned, and cut in the middle with '…' to MAX_CELL_WIDTH columns as a table's id
 * cell is (fit): an id of 600 characters was printed whole, in a line of 600 columns.
 * Example: shownId('ab'.repeat(300)) → 'abab…abab' (120 columns); shownId('x\x1b[31m') → 'x?[31m'.
 */
export function shownId(s: string): string {
  return fit(clean(s));
}

/**
 * An id or a path a heading names (`anatomy --chain`'s `Chain ID … of session ID`, `replay session`'s
 * `Session replay · chain ID`, `replay channel`'s `#channel`): cleaned, and on a terminal cut in its
 * middle (fit: both ends kept) to the terminal's width, or to `max` when that is less, so that the
 * heading, wrapped at its spaces, has no line wider than the terminal. Off a terminal and under `--wide`
 * (the text as piped) it is cut to `max` alone: whole by default, as it was.
 * Example: on a terminal of 40 columns headingId('fe5e1c67-53e7-4862-81ae-d0e013e3270b:side:f4ab2bf6-d642-431a-85cb-66691f24c404')
 * → 'fe5e1c67-53e7-4862-8…-431a-85cb-66691f24c404' (40 columns); piped, the id whole.
 */
export function headingId(s: string, max = Infinity, width: number = terminalWidth()): string {
  const w = Math.min(max, headingWidth(width));
  return Number.isFinite(w) ? fit(clean(s), w) : clean(s);
}

/** The columns a heading's id or path may take (headingId): the terminal's width, but no limit under `--wide` (as piped). */
export function headingWidth(width: number = terminalWidth()): number {
  return wideTables ? Infinity : width;
}

/**
 * Prose as wide as `max` columns at most: a wider one keeps its start, cut with '…' at its end, as a
 * sentence is read (fit() keeps both ends, for an id or a path).
 * Example: fitEnd('weight and USD by day, project, model or agent type.', 24) → 'weight and USD by day, …'.
 */
export function fitEnd(s: string, max: number): string {
  if (displayWidth(s) <= max) return s;
  let out = '';
  let w = 0;
  for (const { segment } of GRAPHEMES.segment(s)) {
    const g = displayWidth(segment);
    if (w + g > max - 1) break;
    out += segment;
    w += g;
  }
  return `${out}…`;
}

/**
 * The fewest columns a table too wide for its terminal cuts an id or path column to (Column.min): fit()
 * keeps its first 8 characters (a session id's as `sessions` shows it, which `--session`, `replay
 * session` and `report --session` take as a prefix) and its last 7 (a path's last name, a subagent's id).
 */
export const MIN_FIT_WIDTH = 16;

/**
 * The columns tables may take on `stream`: on a terminal, `COLUMNS` when it is a whole number above 0
 * (as ls, ps and git take it: `COLUMNS=400` shows every id whole), else the terminal's width, else
 * (a terminal that does not say, a pipe, a file) no limit: Infinity. Off a terminal `COLUMNS` is not
 * read: a script's output (`cachelens sessions | grep`, a file) is the same in any shell.
 * Example: a terminal of 100 columns → 100; with COLUMNS=400 → 400; a pipe with COLUMNS=80 → Infinity.
 */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  if (!stream.isTTY) return Infinity;
  const given = /^\s*\d+\s*$/.test(env.COLUMNS ?? '') ? Number(env.COLUMNS) : 0;
  if (given > 0) return given;
  return typeof stream.columns === 'number' && stream.columns > 0 ? stream.columns : Infinity;
}

/**
 * Widths for a table that fits `width` columns when it can: its ids and paths (Column.cut; never
 * numbers; labels, a model, an agent type or a time, only as fitTable() marks them `cut` last of all, where
 * that alone makes the table fit; table() cuts a list as one, to its floor of fitList) are cut, widest first, the widest down to the next widest, and so on, each to its floor at
 * the least: Column.min (MIN_FIT_WIDTH), or its header's width if that is wider (a header is a word or
 * two the reader needs whole). A table that does not fit with every such column at its floor takes as
 * many columns as it must: no number column is left out.
 * Example: widths [78, 15, 9] (an id, a cut text, a number), 2 columns between each, width 80 →
 * [52, 15, 9]; width 40 → [16, 15, 9] (44 columns: as narrow as it goes).
 */
export function shrinkWidths(columns: readonly Column[], widths: readonly number[], width: number): number[] {
  const out = [...widths];
  const total = widths.reduce((s, w, i) => s + w + (i === 0 ? 0 : columns[i]!.totals ? 3 : 2), 0);
  const excess = total - width;
  if (!(excess > 0)) return out;
  const floors = columns.map((c, i) =>
    c.align === 'num' || !c.cut ? widths[i]! : Math.min(widths[i]!, Math.max(c.min ?? MIN_FIT_WIDTH, c.cutHeader ? 0 : displayWidth(c.header))),
  );
  const cutAt = (cap: number) => widths.reduce((s, w, i) => s + Math.max(0, w - Math.max(floors[i]!, cap)), 0);
  // the cap: the widest a cut column stays, from the widest that can be cut, lowered until enough is
  // cut or every column is at its floor (not from a `query`'s whole column of 100,000 characters)
  let cap = widths.reduce((m, w, i) => (floors[i]! < w ? Math.max(m, w) : m), 0);
  while (cap > 0 && cutAt(cap) < excess) cap--;
  // cut at `cap` may take a few columns more than the excess: those go back to the first columns cut to it
  let back = Math.max(0, cutAt(cap) - excess);
  widths.forEach((w, i) => {
    const to = Math.min(w, Math.max(floors[i]!, cap));
    out[i] = back > 0 && w > cap && floors[i]! <= cap ? (back--, to + 1) : to;
  });
  return out;
}

/** Columns a table of these widths takes: its widths and the gaps between them (3 before a totals column's rule). */
function tableWidth(columns: readonly Column[], widths: readonly number[]): number {
  return widths.reduce((s, w, i) => s + w + (i === 0 ? 0 : columns[i]!.totals ? 3 : 2), 0);
}

/** The fewest columns a list is shown in by fitList: its first item whole and the count of the rest. */
function listFloor(items: readonly string[]): number {
  return items.length === 0 ? 0 : displayWidth(items[0]!) + (items.length > 1 ? ` +${items.length - 1}`.length : 0);
}

/** A list's number of items as its cell says it: `3 models`, `1 model` with a noun, else `3`; none for no items. */
export function listCount(n: number, noun?: string): string {
  if (n === 0) return '';
  return noun ? `${n} ${noun}${n === 1 ? '' : 's'}` : String(n);
}

/**
 * A list as wide as `max` columns when it can be: its items joined by ', ', or as many of them as
 * fit, whole, then `+N` for the rest. No item is cut; when not even the first fits, `count` (the
 * number of items, listCount()) when given, else the first whatever its width.
 * Example: fitList(['claude-opus-4-6', 'claude-haiku-4-5-20251001', 'claude-sonnet-4-6'], 24) → 'claude-opus-4-6 +2';
 * fitList(['claude-opus-4-6'], 10, '1 model') → '1 model'.
 */
export function fitList(items: readonly string[], max: number, count?: string): string {
  const all = items.join(', ');
  if (displayWidth(all) <= max) return all;
  for (let k = items.length - 1; k >= 1; k--) {
    const shown = `${items.slice(0, k).join(', ')} +${items.length - k}`;
    if (displayWidth(shown) <= max) return shown;
  }
  if (count !== undefined) return count;
  return items.length > 1 ? `${items[0]} +${items.length - 1}` : items[0] ?? '';
}

/** Whether a cell is blank: a label may run into it. */
const blank = (s: string | undefined) => s === undefined || s === '';

/**
 * An aligned table. `totals`: the last that many rows are totals, drawn below a rule, as a column
 * with `totals` is drawn after one: its label alone ('total') is text a transcript can hold as well
 * (a model named `total`), the rule is not (a cell holds no line break). A totals row's label runs
 * into the blank cells to its right (not across a totals column's rule), which the column widths
 * leave it out for: `total (all 8 sessions)` under sessions' 8-character ids made their column 22 wide.
 * `width`: the columns the table may take (default terminalWidth(): the terminal's on a TTY, else no
 * limit); a wider table's text columns are cut to fit it (shrinkWidths), each cell with fit(), a list's
 * with fitList(), row by row: whole items and `+N`, or, in a row where not even one fits, the number of
 * its items when counts make the table fit (Column.list); a table still too wide leaves out columns by
 * Column.drop, named on a line under it (leftOutNote), unless `wide` (the CLI's --wide). The title is
 * wrapped to the width (format/wrap.ts).
 * Example: rows [['a', 1], ['total', 2], ['total', 3]] with totals 1 → a, total, then a rule, then total 3.
 */
export function table(columns: Column[], rows: Cell[][], opts: TableOptions = {}): string {
  return fitTable(columns, rows, opts).text;
}

/**
 * table(), and the headers of the columns it left out (Column.drop) to fit its terminal: a title or
 * a legend that names a column says it only of the columns shown. A table too wide for its terminal
 * leaves out its columns before it shows a list's items by their count (`1 cause`), and counts them
 * only when the table does not fit with every column it may leave out left out.
 * Example: fitTable(cols, rows, { width: 40 }) → { text, left: ['input', 'output'] }.
 */
export function fitTable(columns: Column[], rows: Cell[][], opts: TableOptions = {}): { text: string; left: string[] } {
  return fitTableBy(columns, rows, opts, true);
}

/**
 * fitTable() the slow way, as it was done: each choice of columns it tries laid out in full to
 * measure it. The reference fitTable()'s measuring is tested against (test/format/table-measure.test.ts).
 */
export function fitTableByLayout(columns: Column[], rows: Cell[][], opts: TableOptions = {}): { text: string; left: string[] } {
  return fitTableBy(columns, rows, opts, false);
}

function fitTableBy(columns: Column[], rows: Cell[][], opts: TableOptions, measured: boolean): { text: string; left: string[] } {
  const width = opts.width ?? terminalWidth();
  const wide = opts.wide ?? wideTables;
  const titled = (left: readonly string[]) => ({ ...opts, title: typeof opts.title === 'function' ? opts.title(left) : opts.title });
  // the cells made once (cleaned, formatted, measured), each layout and each measure picking its columns from them
  const prep = prepare(columns, rows, wide);
  // --wide: the table as piped, every column and every cell whole (ids, paths, lists' items) but text over MAX_CELL_WIDTH, cut as piped, its title wrapped to the terminal
  if (wide) return { text: layout(prep, undefined, { ...titled([]), width: Infinity, titleWidth: width }).text, left: [] };
  let shown = layout(prep, undefined, { ...titled([]), width });
  // a table with no column to leave out goes on all the same when it has one to cut last (Column.cutLast, or a label: lastCut)
  if (!Number.isFinite(width) || !columns.some((c) => c.drop !== undefined || c.cutLast || lastCut(c))) return { text: shown.text, left: [] };
  // a table that fits only by showing a list's items by their count (`1 cause`) tries leaving out columns instead
  if (shown.width <= width && !shown.counted) return { text: shown.text, left: [] };
  const full = shown;
  // each choice of columns measured (measurer), not laid out: a table of 4,500 sessions was laid out 20 times
  const measure = measured ? measurer(prep, opts.totals ?? 0) : undefined;
  // too wide with its text cut as far as it goes: its columns left out by Column.drop, lowest first, until it
  // fits; then those left out put back, highest first, each where the table still fits with it (the room a
  // wide column left may hold a narrower one of less weight). First with its lists' items kept (whole items
  // and +N, never their count), then, if that never fits, with their counts as well
  const fitting = (counts: boolean) => {
    const of = (kept: number[], left: readonly string[] = []) => layout(prep, kept, { ...titled(left), width, counts });
    const widthOf = (kept: number[]) => (measure ? measure(kept, width, counts) : of(kept).width);
    let kept = columns.map((_, i) => i);
    let w = counts ? full.width : widthOf(kept);
    const left: number[] = [];
    while (w > width) {
      const next = kept.filter((i) => columns[i]!.drop !== undefined).sort((a, b) => columns[a]!.drop! - columns[b]!.drop! || b - a)[0];
      if (next === undefined) break;
      left.push(next);
      kept = kept.filter((i) => i !== next);
      w = widthOf(kept);
    }
    if (w <= width) {
      for (const i of [...left].reverse()) {
        const back = [...kept, i].sort((a, b) => a - b);
        if (widthOf(back) > width) continue;
        kept = back;
        left.splice(left.indexOf(i), 1);
      }
    }
    return { fits: w <= width, kept, left, of, counts };
  };
  let fit1 = columns.some((c) => c.list) ? fitting(false) : undefined;
  if (!fit1?.fits) fit1 = fitting(true);
  const { kept, left } = fit1;
  let { of } = fit1;
  // too wide with every column it may leave out left out: its columns cut last (Column.cutLast) are cut, as ids are;
  // still too wide, its labels too (lastCut: a model, an agent type, a bucket's name), in their middle, to Column.min
  // (MIN_FIT_WIDTH) or their header's width at the least: a line wider than its terminal, wrapped by it, broke every row
  const cutting = (cut: (c: Column) => boolean | undefined) => {
    const last = prepare(columns.map((c) => (cut(c) ? { ...c, cut: true, distinct: lastCut(c) || c.cutLast } : c)), rows, wide);
    return (kept: number[], left: readonly string[] = []) => layout(last, kept, { ...titled(left), width, counts: fit1.counts });
  };
  // each only where that makes the table fit: a label cut and the table still too wide for its terminal hid
  // what it said for nothing (the terminal wraps the table as it would have); whole, it wraps as it did
  if (!fit1.fits && columns.some((c) => c.cutLast || lastCut(c))) {
    const last = columns.some((c) => c.cutLast) ? cutting((c) => c.cutLast) : undefined;
    if (last && last(kept).width <= width) of = last;
    else if (columns.some(lastCut)) {
      const labels = cutting((c) => c.cutLast || lastCut(c));
      if (labels(kept).width <= width) of = labels;
    }
  }
  const leftOut = left.sort((a, b) => a - b).map((i) => columns[i]!.header);
  shown = left.length > 0 || (full.counted && fit1.fits && !fit1.counts) || of !== fit1.of ? of(kept, leftOut) : full;
  if (left.length === 0) return { text: shown.text, left: [] };
  // one line where it fits; wrapped, each header stays whole (`write 1h`, `time (UTC)`)
  const named = leftOut.map((h) => fit(clean(h)));
  return { text: `${shown.text}\n${wrap(leftOutNote(named, opts.see), width, named)}`, left: leftOut };
}

/**
 * A label (a text column not cut otherwise: a model, an agent type, a bucket's or a metric's name, a time): cut in its
 * middle, as an id is, only where a table does not fit its terminal with every column it may leave out left out and its
 * columns cut last (Column.cutLast) cut. A list, a `whole` column (a query's data) and a number never are.
 */
function lastCut(c: Column): boolean {
  return c.align !== 'num' && !c.whole && !c.list && !c.cut && !c.cutLast;
}

export interface TableOptions {
  color?: boolean;
  /** a line above the table; a function is given the headers of the columns left out (fitTable), so that it names only those shown */
  title?: string | ((left: readonly string[]) => string);
  /** the last that many rows are totals, below a rule */
  totals?: number;
  /** the columns the table may take: default terminalWidth() */
  width?: number;
  /** the table as off a terminal: no column left out (Column.drop), no id, path, free text or list cut, however wide: default the CLI's --wide (setWideTables) */
  wide?: boolean;
  /** how the columns left out can be seen (leftOutNote): default `--wide or --json` */
  see?: string;
}

/**
 * Whether tables keep every column and every cell whole however wide their terminal is (`--wide`): the
 * table as piped (text over MAX_CELL_WIDTH still cut in its middle, as piped), ids, paths, free text and lists' items whole (a reader who asks for everything copies
 * a whole session id or path from it), its title wrapped to the terminal; for every table() not told
 * otherwise; the CLI sets it from its global option before a command runs. Off by default: a table too
 * wide for its terminal cuts its ids, paths, free text and lists, then leaves out its columns of least
 * weight (Column.drop).
 */
let wideTables = false;

export function setWideTables(on: boolean): void {
  wideTables = on;
}

/**
 * The line under a table that left columns out to fit its terminal: which, and how to see them.
 * `see`: the command's ways to see them (a query's: `--wide, --json or --csv`).
 * Example: leftOutNote(['input', 'output']) → '(not shown: input, output; see --wide or --json)'.
 */
export function leftOutNote(headers: readonly string[], see = '--wide or --json'): string {
  return `(not shown: ${headers.join(', ')}; see ${see})`;
}

/**
 * A table's cells as every layout of it shows them before any is cut: each cell's text (a number
 * formatted, text cleaned and fit()), a list cell's items, each header cleaned, and each cell's width.
 * Made once per table: each layout of its columns (layout) and each measure of a choice of them
 * (measuredWidth) picks its columns from it, none made again per column left out or put back.
 */
interface Prepared {
  columns: Column[];
  text: (string | undefined)[][];
  /** a list cell's items, each cleaned and fit; none made for a table without a list (a query's of 100,000s of rows) */
  items: (string[] | undefined)[][];
  /** displayWidth of each cell's text (0 for none) */
  cellWidths: number[][];
  headerWidths: number[];
}

function prepare(columns: Column[], rows: Cell[][], wide: boolean): Prepared {
  // --wide cuts no free text (Column.prose): only ids and paths, to fit the terminal
  if (wide) columns = columns.map((c) => (c.prose ? { ...c, cut: false } : c));
  // a list cell's items, each cleaned and fit as a cell is (its text below is them joined)
  // (none made for a table without a list: a query's table of 100,000s of rows)
  // a row of fewer cells than columns reads each missing cell as empty, one of more keeps only the columns'
  // (a row read by its cells made widths of undefined, NaN, and the whole table unaligned, piped too)
  const cellsOf = (r: readonly Cell[]): Cell[] => columns.map((_, i) => r[i]);
  const items = columns.some((c) => c.list) ? rows.map((r) => cellsOf(r).map((c) => (Array.isArray(c) ? c.map((m: string) => fit(clean(m))) : undefined))) : [];
  const text = rows.map((r, k) =>
    cellsOf(r).map((c, i) => (c === null || c === undefined ? '' : typeof c === 'number' ? int(c) : Array.isArray(c) ? (items[k]?.[i] ?? c.map((m: string) => fit(clean(m)))).join(', ') : columns[i]?.whole ? clean(c as string) : fit(clean(c as string)))),
  );
  // widths are measured on the text as shown: cleaned, headers too (an invisible character is a '?', one column)
  columns = columns.map((c) => ({ ...c, header: c.whole ? clean(c.header) : fit(clean(c.header)) }));
  const cellWidths = text.map((r) => r.map((s) => displayWidth(s ?? '')));
  return { columns, text, items, cellWidths, headerWidths: columns.map((c) => displayWidth(c.header)) };
}

/** The columns `kept` of a prepared table, as a table of those columns alone prepares them. */
function pick(prep: Prepared, kept: readonly number[] | undefined): Prepared {
  if (!kept) return prep;
  const of = <T>(r: readonly T[]) => kept.map((i) => r[i]!);
  return {
    columns: of(prep.columns),
    text: prep.text.map(of),
    items: prep.columns.some((c, i) => c.list && kept.includes(i)) ? prep.items.map(of) : [],
    cellWidths: prep.cellWidths.map(of),
    headerWidths: of(prep.headerWidths),
  };
}

/** A list's number of items as a table counts it: by its column's noun (`3 models`), by number alone (`3`), or not at all. */
type Counting = ((column: Column, n: number) => string) | undefined;
const COUNTINGS: readonly Counting[] = [(c, n) => listCount(n, c.noun), (_c, n) => listCount(n), undefined];

/**
 * The widths of a table's columns as layout() draws them, and how it counts its lists: its ids and
 * paths cut (shrinkWidths), a list to its floor under the first way of counting it that makes the
 * table fit (`3 models`, `3`, none), then as wide as its widest cell so shown. `listWidth(j, w, counting)`:
 * the widest cell of list column j fit to w columns (fitList), its header among them.
 */
function columnWidths(
  columns: readonly Column[],
  natural: readonly number[],
  width: number,
  counts: boolean | undefined,
  listFloor: (j: number, counting: Counting) => number,
  listWidth: (j: number, w: number, counting: Counting) => number,
): { cut: number[]; widths: number[]; counting: Counting } {
  let widths: number[] = [];
  let counting: Counting;
  for (const count of columns.some((c) => c.list) && counts !== false ? COUNTINGS : [undefined]) {
    const cuttable = columns.map((c, j) => (c.list ? { ...c, cut: true, whole: false, min: listFloor(j, count) } : c));
    widths = shrinkWidths(cuttable, natural, width);
    counting = count;
    if (tableWidth(columns, widths) <= width) break;
  }
  // a list column is as wide as its widest cell so shown, not the room it was given
  const cut = widths;
  widths = cut.map((w, j) => (w < natural[j]! && columns[j]!.list ? listWidth(j, w, counting) : w));
  return { cut, widths, counting };
}

/** The blank cells right of row k's label, up to the first that is not (or a totals column's rule): a totals row's label may run into them. */
function runOf(columns: readonly Column[], text: readonly (string | undefined)[]): number {
  let k = 0;
  while (k + 1 < columns.length && !columns[k + 1]!.totals && blank(text[k + 1])) k++;
  return k;
}

/** The columns a label that runs into the blank cells after it has: its own, those, and the gaps between them. */
function roomOf(columns: readonly Column[], run: number, ws: readonly number[]): number {
  let w = ws[0]!;
  for (let i = 1; i <= run; i++) w += (columns[i]!.totals ? 3 : 2) + ws[i]!;
  return w;
}

/**
 * Each column's width before any is cut: its widest cell or header; the first column's without the
 * totals rows' labels that run into the blank cells after them (overflows), widened by what such a
 * label needs beyond them.
 */
function naturalWidths(prep: Prepared, totalsFrom: number, overflows: (k: number) => boolean, bodyMax?: readonly number[]): number[] {
  const { columns, text, cellWidths } = prep;
  // a loop, not Math.max(...): a query's hundreds of thousands of rows overflow the call's arguments
  const natural = columns.map((_, i) => {
    let w = Math.max(prep.headerWidths[i]!, bodyMax?.[i] ?? 0);
    for (let k = bodyMax ? totalsFrom : 0; k < text.length; k++) if (!(i === 0 && overflows(k))) w = Math.max(w, cellWidths[k]![i]!);
    return w;
  });
  // a label longer than the blank cells it runs into widens its column by what is left over
  for (let k = totalsFrom; k < text.length; k++) {
    if (overflows(k)) natural[0] = natural[0]! + Math.max(0, cellWidths[k]![0]! - roomOf(columns, runOf(columns, text[k]!), natural));
  }
  return natural;
}

/** A list cell fit to `w` columns as layout() shows it: its items (fitList, or its count), or its text cut as any cell's. */
function listCell(prep: Prepared, k: number, i: number, w: number, counting: Counting): string {
  const items = prep.items[k]?.[i];
  if (items !== undefined) return fitList(items, w, counting?.(prep.columns[i]!, items.length));
  const s = prep.text[k]![i];
  return s === undefined ? '' : prep.columns[i]!.prose ? fitEnd(s, w) : fit(s, w);
}

/**
 * The columns `fitTable` needs to measure its candidates with: the columns of a table made of `kept`
 * of a prepared table's columns, as layout() would draw it, without laying it out. What each column's
 * width depends on that is the same in every choice of columns (its widest cell outside the totals
 * rows, a list's floors, a list's widest cell at a width) is worked out once.
 */
function measurer(prep: Prepared, totals: number): (kept: readonly number[], width: number, counts?: boolean) => number {
  const n = prep.text.length;
  const totalsFrom = n - Math.min(totals, n);
  const bodyMax = prep.columns.map((_, i) => {
    let w = 0;
    for (let k = 0; k < totalsFrom; k++) w = Math.max(w, prep.cellWidths[k]![i]!);
    return w;
  });
  const floors = new Map<string, number>();
  const listFloorOf = (i: number, counting: Counting) => {
    const key = `${i},${COUNTINGS.indexOf(counting)}`;
    let f = floors.get(key);
    if (f === undefined) {
      f = 0;
      for (let k = 0; k < n; k++) {
        const l = prep.items[k]?.[i] ?? [];
        f = Math.max(f, counting ? displayWidth(counting(prep.columns[i]!, l.length)) : listFloor(l));
      }
      floors.set(key, f);
    }
    return f;
  };
  // a list's widest cell at a width, outside the totals rows (those are measured each time: their label may overflow)
  const shownMax = new Map<string, number>();
  const listBodyWidth = (i: number, w: number, counting: Counting) => {
    const key = `${i},${w},${COUNTINGS.indexOf(counting)}`;
    let m = shownMax.get(key);
    if (m === undefined) {
      m = 0;
      for (let k = 0; k < totalsFrom; k++) m = Math.max(m, displayWidth(listCell(prep, k, i, w, counting)));
      shownMax.set(key, m);
    }
    return m;
  };
  const totalRows = prep.text.slice(totalsFrom).map((_, t) => totalsFrom + t);
  return (kept, width, counts) => {
    const of = <T>(r: readonly T[]) => kept.map((i) => r[i]!);
    const columns = of(prep.columns);
    // the totals rows alone: the other rows' widths are bodyMax's
    const sub: Prepared = {
      columns,
      text: totalRows.map((k) => of(prep.text[k]!)),
      items: [],
      cellWidths: totalRows.map((k) => of(prep.cellWidths[k]!)),
      headerWidths: of(prep.headerWidths),
    };
    const overflows = (t: number) => columns.length > 1 && runOf(columns, sub.text[t]!) > 0;
    const natural = naturalWidths(sub, 0, overflows, of(bodyMax));
    const { widths } = columnWidths(
      columns,
      natural,
      width,
      counts,
      (j, counting) => listFloorOf(kept[j]!, counting),
      (j, w, counting) => {
        let m = Math.max(displayWidth(fit(columns[j]!.header, w)), listBodyWidth(kept[j]!, w, counting));
        totalRows.forEach((k, t) => {
          if (!(j === 0 && overflows(t))) m = Math.max(m, displayWidth(listCell(prep, k, kept[j]!, w, counting)));
        });
        return m;
      },
    );
    return tableWidth(columns, widths);
  };
}

/** table() at `opts.width` of the columns `kept` of a prepared table (all when not given); the text, the columns it takes, and whether it shows a list by its count. */
function layout(
  prep: Prepared,
  kept: readonly number[] | undefined,
  opts: Omit<TableOptions, 'title' | 'wide'> & { title?: string; width: number; counts?: boolean; titleWidth?: number },
): { text: string; width: number; counted: boolean } {
  const sub = pick(prep, kept);
  const columns = [...sub.columns];
  const text = sub.text.map((r) => [...r]);
  const items = sub.items;
  const totalsFrom = text.length - Math.min(opts.totals ?? 0, text.length);
  const overflows = (k: number) => k >= totalsFrom && columns.length > 1 && runOf(columns, text[k]!) > 0;
  const natural = naturalWidths(sub, totalsFrom, overflows);
  const width = opts.width;
  // a list column may be cut as an id is, row by row to whole items and +N, a row where not even one
  // fits to its count: its floor is the widest count (`3 models`, or else `3`) when that makes the table
  // fit, else its widest row's first item and count of the rest (a table too wide for its numbers
  // anyway keeps the names it can)
  const listOf = (k: number, i: number): readonly string[] => items[k]?.[i] ?? [];
  const { cut, widths: laid, counting } = columnWidths(
    columns,
    natural,
    width,
    opts.counts,
    (j, count) => text.reduce((w, _, k) => Math.max(w, count ? displayWidth(count(columns[j]!, listOf(k, j).length)) : listFloor(listOf(k, j))), 0),
    (j, w, count) => text.reduce((m, _, k) => (j === 0 && overflows(k) ? m : Math.max(m, displayWidth(listCell(sub, k, j, w, count)))), displayWidth(fit(columns[j]!.header, w))),
  );
  // a label cut last (distinct) is cut no narrower than keeps its rows apart: two models cut to one
  // (`claude-3-5…-20241022`, a Sonnet's and a Haiku's) read as one model twice
  const widths = [...laid];
  cut.forEach((w, i) => {
    if (!columns[i]!.distinct || w >= natural[i]!) return;
    const cells = text.filter((_, k) => !(i === 0 && overflows(k))).map((r) => r[i] ?? '');
    const whole = new Set(cells).size;
    let to = w;
    while (to < natural[i]! && new Set(cells.map((s) => fit(s, to))).size < whole) to++;
    cut[i] = to;
    widths[i] = Math.max(widths[i]!, to);
  });
  let counted = false;
  cut.forEach((w, i) => {
    if (w >= natural[i]!) return;
    columns[i] = { ...columns[i]!, header: fit(columns[i]!.header, w) };
    text.forEach((r, k) => {
      if (i === 0 && overflows(k)) return;
      if (columns[i]!.list && items[k]?.[i] !== undefined) {
        const count = counting?.(columns[i]!, listOf(k, i).length);
        r[i] = fitList(listOf(k, i), w, count);
        // shown by its count, not an item (whose text may be the count's)
        if (count !== undefined && r[i] === count && listOf(k, i)[0] !== count) counted = true;
      }
      else if (r[i] !== undefined) r[i] = columns[i]!.prose ? fitEnd(r[i]!, w) : fit(r[i]!, w);
    });
  });
  const padTo = (s: string, w: number, i: number) => {
    const n = w - displayWidth(s);
    return columns[i]!.align === 'num' ? ' '.repeat(n) + s : s + ' '.repeat(n);
  };
  const pad = (s: string, i: number) => padTo(s, widths[i]!, i);
  const join = (cells: string[], gap: string, ruleGap: string, from = 0) =>
    cells.map((c, j) => (j === 0 ? c : (columns[from + j]!.totals ? ruleGap : gap) + c)).join('');
  const rule = join(widths.map((w) => '─'.repeat(w)), '──', '─┼─');
  const lines: string[] = [];
  // a title is a line of text: wrapped to the terminal, never cut (format/wrap.ts)
  if (opts.title) lines.push(bold(wrap(opts.title, opts.titleWidth ?? width), Boolean(opts.color)));
  lines.push(bold(join(columns.map((c, i) => pad(c.header, i)), '  ', ' │ ').trimEnd(), Boolean(opts.color)));
  lines.push(join(widths.map((w) => '─'.repeat(w)), '  ', ' ┼ '));
  text.forEach((r, k) => {
    // under the header's own rule when there are no other rows
    if (k === totalsFrom && k > 0) lines.push(rule);
    if (overflows(k)) {
      // the label over its own column and the blank ones it runs into, cut to them when the table was cut
      const run = runOf(columns, r);
      const w = roomOf(columns, run, widths);
      const label = padTo(fit(r[0] ?? '', w), w, 0);
      lines.push(join([label, ...columns.slice(run + 1).map((_, j) => pad(r[run + 1 + j] ?? '', run + 1 + j))], '  ', ' │ ', run).trimEnd());
    } else {
      lines.push(join(columns.map((_, i) => pad(r[i] ?? '', i)), '  ', ' │ ').trimEnd());
    }
  });
  return { text: lines.join('\n'), width: tableWidth(columns, widths), counted };
}

/**
 * A table's measure as fitTable() uses it: its cells prepared once and one measurer (its caches kept)
 * for every choice of columns and width, as fitTable() measures each try. For each, the columns the
 * table of `kept` takes at `width`, measured, and as layout() takes them laid out in full, with the
 * lines it draws: the two are equal for any table (test/format/table-measure.test.ts). `counts`: as
 * fitTable's second try, a list may be shown by its count.
 */
export function tableMeasurer(
  columns: Column[],
  rows: Cell[][],
  totals = 0,
): (kept: readonly number[], width: number, counts?: boolean) => { measured: number; laidOut: number; lines: string[] } {
  const prep = prepare(columns, rows, false);
  const measure = measurer(prep, totals);
  return (kept, width, counts) => {
    const laid = layout(prep, kept, { width, totals, counts });
    return { measured: measure(kept, width, counts), laidOut: laid.width, lines: laid.text.split('\n') };
  };
}
