/**
 * The one case fold of every case-insensitive match: `--project` (in SQL, the store's macro
 * fold_case, store/duckdb.ts) and a chat channel's handles (replay/channel-log.ts).
 */

/**
 * Each character's simple uppercase, then that one's simple lowercase: what DuckDB's
 * lower(upper(s)) gives, so that a match decided here and one decided in SQL agree. Unlike
 * toLowerCase it folds the Greek final sigma with σ ('ΣΟΦΟΣ'.toLowerCase() is 'σοφος', with ς,
 * and DuckDB's lower() gave 'σοφοσ', so `--project σοφος` missed a project ΣΟΦΟΣ), ſ with s, the
 * micro sign µ with μ, and the Turkish İ and ı with i (İstanbul is found by istanbul); and it does
 * not depend on the machine's locale, as toLocaleLowerCase does (whose Turkish I is ı). A character
 * stays one character: ß stays ß (its full uppercase SS is two), as in DuckDB.
 * Example: foldCase('ΣΟΦΟΣ') === foldCase('σοφος') === 'σοφοσ'; foldCase('İstanbul') === 'istanbul'.
 */
export function foldCase(s: string): string {
  return s.replace(FOLDED, foldChar);
}

/** The characters folding may change: ASCII capitals, and anything beyond ASCII. */
const FOLDED = /[A-Z]|[^\x00-\x7f]/gu;

function foldChar(ch: string): string {
  const upper = ch.toUpperCase();
  // the simple uppercase: none where the full one is several characters (ß → SS)
  const one = [...upper].length === 1 ? upper : ch;
  // the simple lowercase: the first of the full one's characters (İ → i + U+0307)
  return String.fromCodePoint(one.toLowerCase().codePointAt(0)!);
}
