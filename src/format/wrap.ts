/**
 * Text lines outside tables (notes, explanations, headings) wrapped to a terminal's width: at word
 * boundaries, continuation lines indented as the line itself is (a hanging indent), never cut, a word
 * (a path, an id) never broken. Off a terminal (terminalWidth() is Infinity: a pipe, a file) the text
 * is returned as it is, byte for byte.
 * Tables are never passed here: table() fits its own columns (format/table.ts).
 */
import { displayWidth, terminalWidth } from './table.js';

/** An escape sequence (CSI: colour, bold): no columns, never split. */
const ESCAPE = /\u001b\[[0-?]*[ -/]*[@-~]/g;

/** Columns `s` takes on a terminal, its escape sequences taking none. */
export function visibleWidth(s: string): number {
  return displayWidth(s.includes('\u001b') ? s.replace(ESCAPE, '') : s);
}

/**
 * `text` with each line wider than `width` wrapped (wrapLine); lines that fit, and every line when
 * `width` is Infinity (off a terminal), are kept as they are. `keep`: spans of the text (a path
 * with spaces inside, as `wrote PATH` names it) never broken at their own spaces: each is one word.
 * Example: wrap('a note that is long', 10) → 'a note\nthat is\nlong'.
 */
export function wrap(text: string, width: number = terminalWidth(), keep: readonly string[] = []): string {
  if (!Number.isFinite(width)) return text;
  const spans = keep.filter((k) => k.includes(' ') && text.includes(k));
  if (spans.length === 0) return text.split('\n').map((line) => wrapLine(line, width)).join('\n');
  // a kept span's spaces are a private-use character of one column the text does not hold, put back after
  let code = 0xe000;
  while (text.includes(String.fromCharCode(code))) code++;
  const joiner = String.fromCharCode(code);
  let held = text;
  for (const k of spans) held = held.split(k).join(k.replace(/ /g, joiner));
  return held
    .split('\n')
    .map((line) => wrapLine(line, width))
    .join('\n')
    .split(joiner)
    .join(' ');
}

/**
 * One line as lines of at most `width` columns where it can be: broken where it has spaces, the
 * spaces at a break dropped, each continuation indented by the line's own leading spaces. A word (a
 * run of characters without a space: a path, a file:line, an id) is never broken: one wider than a
 * line stands whole on a line of its own, wider than the width (a terminal soft-wraps it, and it is
 * copied as one). A line whose fields are set apart by two spaces (`cold 29,605  growth 208,364`) is
 * broken between fields where it can, not inside one. Some words are held together (words()): a
 * number with the word after it (`0 skipped`), a one-letter symbol with its number (`P 25,897`), a
 * lone `/`, `−`, `+`, `=`, `×` with the words on both sides (`30 tokens in / 10 out`), a lone `·`,
 * `—`, `→` with the word before it; such a group wider than a line is broken between its words.
 * Every character but the spaces at a break is kept, in order.
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
  const put = (piece: string, gap: string) => {
    const w = visibleWidth(piece);
    if (filled && currentWidth + gap.length + w > width) {
      out.push(current);
      current = hang;
      currentWidth = hang.length;
      filled = false;
    }
    if (filled) {
      current += gap;
      currentWidth += gap.length;
    }
    // never broken: a word wider than the room runs past it
    current += piece;
    currentWidth += w;
    filled = true;
  };
  // a group (a field, words held together) that fits on a line of its own goes whole, else word by word
  const room = width - hang.length;
  for (const [k, field] of fields.entries()) {
    const gap = k === 0 ? '' : '  ';
    if (visibleWidth(field) <= room) {
      put(field, gap);
      continue;
    }
    words(field).forEach((group, j) => {
      const whole = group.join(' ');
      if (visibleWidth(whole) <= room) put(whole, j === 0 ? gap : ' ');
      else group.forEach((word, n) => put(word, j === 0 && n === 0 ? gap : ' '));
    });
  }
  out.push(current);
  return out.join('\n');
}

/** The marks that join two parts of a line: alone, one ends the line it is on ('% all wt' begins with its word). */
const LONE_MARK = /^[·•—–→←↔|]$/;
/** The marks of arithmetic: alone, one stays with the words on both sides ('in / 10 out', '25,897 − 36'). */
const OPERATOR = /^[/−+=×-]$/;
/** A number as a phrase holds it ('0', '6,754', '96.0%', '$0.81'): it stays with the word after it. A number ending in `,` or `:` ends its phrase. */
const NUMBER = /^[$(]?[+−-]?\p{N}([\p{N},.]*\p{N})?%?$/u;
/** A symbol that names the number after it ('P 25,897', 'f* 39.5%'). */
const SYMBOL = /^\p{L}\*?$/u;

/**
 * A field's words in groups held together: a number with the word after it, a one-letter symbol
 * with the number after it, a lone operator (`/`, `−`, `+`, `=`, `×`) with the words on both sides,
 * a lone mark (`·`, `—`, `→`) with the word before it, and any other lone sign (`%` of '% all wt',
 * `#`) with the word after it: none is left alone at a line's end or start.
 * Example: words('0 skipped, each 30 tokens in / 10 out') → [['0', 'skipped,'], ['each'], ['30', 'tokens'], ['in', '/', '10', 'out']].
 */
function words(field: string): string[][] {
  const ws = field.split(/ +/).filter((w) => w !== '');
  const out: string[][] = [];
  // whether the word before holds on to the next one
  let hold = false;
  for (const [i, w] of ws.entries()) {
    const last = out.at(-1);
    const joinsBefore = last !== undefined && (LONE_MARK.test(w) || OPERATOR.test(w));
    if (last !== undefined && (hold || joinsBefore)) last.push(w);
    else out.push([w]);
    const next = ws[i + 1];
    hold =
      next !== undefined &&
      (OPERATOR.test(w) ||
        NUMBER.test(w) ||
        (SYMBOL.test(w) && NUMBER.test(next)) ||
        (/^[^\p{L}\p{N}]$/u.test(w) && !LONE_MARK.test(w)));
  }
  return out;
}
