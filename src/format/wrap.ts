/**
 * Text lines outside tables (notes, explanations, headings) wrapped to a terminal's width: at word
 * boundaries, continuation lines indented as the line itself is (a hanging indent), never cut. Off a
 * terminal (terminalWidth() is Infinity: a pipe, a file) the text is returned as it is, byte for byte.
 * Tables are never passed here: table() fits its own columns (format/table.ts).
 */
import { displayWidth, terminalWidth } from './table.js';

/** An escape sequence (CSI: colour, bold): no columns, never split. */
const ESCAPE = /\u001b\[[0-?]*[ -/]*[@-~]/g;
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** Columns `s` takes on a terminal, its escape sequences taking none. */
export function visibleWidth(s: string): number {
  return displayWidth(s.includes('\u001b') ? s.replace(ESCAPE, '') : s);
}

/**
 * `text` with each line wider than `width` wrapped (wrapLine); lines that fit, and every line when
 * `width` is Infinity (off a terminal), are kept as they are.
 * Example: wrap('a note that is long', 10) → 'a note\nthat is\nlong'.
 */
export function wrap(text: string, width: number = terminalWidth()): string {
  if (!Number.isFinite(width)) return text;
  return text
    .split('\n')
    .map((line) => wrapLine(line, width))
    .join('\n');
}

/**
 * One line as lines of at most `width` columns: broken where it has spaces, the spaces at a break
 * dropped, each continuation indented by the line's own leading spaces. A line whose fields are set
 * apart by two spaces (`cold 29,605  growth 208,364`) is broken between fields where it can, not
 * inside one; a lone mark (`·`, `—`, `→`) stays at the end of its line, not at the start of the next.
 * A word wider than a line (a long path) is broken after a `/`, `-`, `,` or `.` where one falls
 * within the room, else between two characters; never inside an escape sequence or a wide (CJK,
 * emoji) character. Every character but the spaces at a break is kept, in order.
 * Example: wrapLine('  skipped bad_json: 3 (a.jsonl:1, b.jsonl:2)', 24) → '  skipped bad_json: 3\n  (a.jsonl:1, b.jsonl:2)'.
 */
export function wrapLine(line: string, width: number): string {
  if (!Number.isFinite(width) || visibleWidth(line) <= width) return line;
  const indent = /^ */.exec(line)![0];
  // an indent that leaves under half the width for text is dropped on the continuation lines
  const hang = indent.length * 2 <= width ? indent : '';
  const body = line.slice(indent.length).trimEnd();
  const fields = body.includes('  ') ? body.split(/ {2,}/) : [body];
  const out: string[] = [];
  let current = indent;
  let currentWidth = indent.length;
  // whether `current` holds text yet (beyond its indent)
  let filled = false;
  const room = () => width - currentWidth;
  const newLine = () => {
    out.push(current);
    current = hang;
    currentWidth = hang.length;
    filled = false;
  };
  const put = (piece: string, gap: string) => {
    const w = visibleWidth(piece);
    // a word no line can hold begins where the line is, when a fair part of it fits there
    const tooWide = w > width - hang.length && room() - gap.length >= Math.min(MIN_START, w);
    if (filled && currentWidth + gap.length + w > width && !tooWide) newLine();
    if (filled) {
      current += gap;
      currentWidth += gap.length;
    }
    if (w <= room()) {
      current += piece;
      currentWidth += w;
      filled = true;
      return;
    }
    // wider than a whole line: broken across lines
    breakWord(piece, room(), width - hang.length).forEach((part, k) => {
      if (k > 0) newLine();
      current += part;
      currentWidth += visibleWidth(part);
      filled = true;
    });
  };
  for (const [k, field] of fields.entries()) {
    const gap = k === 0 ? '' : '  ';
    // a field that fits whole on a line of its own is not broken (when it fits where the line is, it goes there)
    if (visibleWidth(field) <= width - hang.length) {
      put(field, gap);
      continue;
    }
    words(field).forEach((word, j) => put(word, j === 0 ? gap : ' '));
  }
  out.push(current);
  return out.join('\n');
}

/** The fewest columns a word too wide for any line begins in at the end of a line, rather than on the next. */
const MIN_START = 8;

/** The marks that join two parts of a line: alone, one ends the line it is on ('% all wt' begins with its word). */
const LONE_MARK = /^[·•—–→←↔=×|]$/;

/**
 * A field's words, a lone mark (`·`, `—`, `→`, `=`, `×`) joined to the word before it and any other
 * lone sign (`%` of '% all wt', `#`, `+`) to the word after it: neither is left alone at a line's end or start.
 */
function words(field: string): string[] {
  const out: string[] = [];
  let sign = '';
  for (const w of field.split(/ +/)) {
    if (w === '') continue;
    if (out.length > 0 && sign === '' && LONE_MARK.test(w)) out[out.length - 1] += ` ${w}`;
    else if (/^[^\p{L}\p{N}]$/u.test(w) && !LONE_MARK.test(w)) sign += `${w} `;
    else {
      out.push(sign + w);
      sign = '';
    }
  }
  if (sign !== '') out.push(sign.trimEnd());
  return out;
}

/**
 * A word too wide for a line in pieces: the first at most `first` columns, the rest at most `rest`;
 * each ends after a `/`, `-`, `,` or `.` when one is in its second half, else where the room ends.
 * Escape sequences and grapheme clusters (a wide character, an emoji) are never split.
 */
function breakWord(word: string, first: number, rest: number): string[] {
  const units: string[] = [];
  let at = 0;
  for (const m of word.matchAll(ESCAPE)) {
    for (const { segment } of GRAPHEMES.segment(word.slice(at, m.index))) units.push(segment);
    // an escape sequence joins the unit before it (or the first one after it)
    if (units.length > 0) units[units.length - 1] += m[0];
    else units.push(m[0]);
    at = m.index + m[0].length;
  }
  for (const { segment } of GRAPHEMES.segment(word.slice(at))) units.push(segment);
  const pieces: string[] = [];
  let room = Math.max(1, first);
  let i = 0;
  while (i < units.length) {
    let w = 0;
    let end = i;
    let soft = -1;
    while (end < units.length) {
      const uw = visibleWidth(units[end]!);
      // a unit wider than the room (a wide character on a line of one column) goes on a line of its own
      if (w + uw > room && end > i) break;
      w += uw;
      if (/^[/\-,.]/.test(units[end]!.replace(ESCAPE, '')) && w * 2 >= room) soft = end + 1;
      end++;
    }
    if (end < units.length && soft > i) end = soft;
    pieces.push(units.slice(i, end).join(''));
    i = end;
    room = Math.max(1, rest);
  }
  return pieces;
}
