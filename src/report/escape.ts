/**
 * Escaping for the two contexts the report puts untrusted text in: HTML text/attributes, and
 * JSON inside a `<script type="application/json">` element.
 */

import { clean, jsonText } from '../format/table.js';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

const HTML_SPECIAL = /[&<>"']/g;

/**
 * Escapes text for HTML element content and quoted attribute values. Control characters become
 * '?', as in the terminal's tables (format/table.ts clean): C0 (NUL, which the HTML parser drops
 * from text, tab and line breaks, which it shows as a space), DEL and C1, the line and paragraph
 * separators U+2028 and U+2029, and the bidi controls (the marks U+061C, U+200E, U+200F, the
 * embeddings and overrides U+202A – U+202E, the isolates U+2066 – U+2069): an entity would still
 * be the character, and a right-to-left override in a project path reversed the text after it on
 * the page. So 'a\u0000b' shows as 'a?b', not as 'ab', the name of another project. The invisible
 * characters clean() replaces (a zero-width space, a word joiner, a BOM, a soft hyphen, a joiner
 * outside an emoji …) are '?' too: 'plan\u200bner' is not shown as the agent type 'planner'.
 * Example: escapeHtml('a\u202eb<\u0000\u200b') === 'a?b&lt;??'
 */
export function escapeHtml(text: string): string {
  return clean(text).replace(HTML_SPECIAL, (c) => HTML_ESCAPES[c]!);
}

/**
 * A copy of `value` (JSON-like) with escapeHtml's control and invisible characters turned into '?'
 * in every string, keys included (format/table.ts clean): the charts draw their labels and tooltips
 * from data, not through escapeHtml, and a right-to-left override in a project path reversed a
 * chart's axis label.
 * Example: cleanStrings([{ key: 'a\u202eb\u0000' }]) deep-equals [{ key: 'a?b?' }]
 */
export function cleanStrings<T>(value: T): T {
  if (typeof value === 'string') return clean(value) as T;
  if (Array.isArray(value)) return value.map(cleanStrings) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [clean(k), cleanStrings(v)])) as T;
  }
  return value;
}

const MARKUP_IN_SCRIPT = /[<>&]/g;

/**
 * JSON that is safe inside a `<script>` element: written as `--json` writes it (format/table.ts
 * jsonText: C0 controls, DEL, C1, the bidi controls, U+2028 and U+2029 and the invisible characters
 * clean() replaces as `\uXXXX` escapes, so the page's source reads as it parses and the HTML parser
 * meets no control character), and `<`, `>`,
 * `&` as `\u00XX` escapes too, so neither `</script>` nor `<!--` can end or change the element. The
 * text still parses to the same value with JSON.parse.
 *
 * `numbers: 'rounded'` writes non-integer numbers as `--json` does (format/json-numbers.ts).
 *
 * Example: jsonForScript({ p: '</script><!--' }) === '{"p":"\\u003c/script\\u003e\\u003c!--"}'
 */
export function jsonForScript(value: unknown, numbers: 'exact' | 'rounded' = 'exact'): string {
  return jsonText(value, undefined, numbers).replace(MARKUP_IN_SCRIPT, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
