/**
 * Escaping for the two contexts the report puts untrusted text in: HTML text/attributes, and
 * JSON inside a `<script type="application/json">` element.
 */

import { BIDI_CONTROLS } from '../format/table.js';
import { roundNumbers } from '../format/json-numbers.js';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

const HTML_SPECIAL = new RegExp(`[&<>"'${BIDI_CONTROLS}]`, 'g');
const RAW_IN_SCRIPT = new RegExp(`[<>&\\u2028\\u2029${BIDI_CONTROLS}]`, 'g');

/**
 * Escapes text for HTML element content and quoted attribute values. Bidi controls (the marks
 * U+061C, U+200E, U+200F, the embeddings and overrides U+202A – U+202E, the isolates U+2066 – U+2069)
 * become '?', as in the terminal's tables (format/table.ts clean): an entity would still be the
 * character, and a right-to-left override in a project path reversed the text after it on the page.
 * Example: escapeHtml('a\u202eb<') === 'a?b&lt;'
 */
export function escapeHtml(text: string): string {
  return text.replace(HTML_SPECIAL, (c) => HTML_ESCAPES[c] ?? '?');
}

const BIDI = new RegExp(`[${BIDI_CONTROLS}]`, 'g');

/**
 * A copy of `value` (JSON-like) with escapeHtml's bidi controls turned into '?' in every string,
 * keys included: the charts draw their labels and tooltips from data, not through escapeHtml, and
 * a right-to-left override in a project path reversed a chart's axis label.
 * Example: cleanBidi([{ key: 'a\u202eb' }]) deep-equals [{ key: 'a?b' }]
 */
export function cleanBidi<T>(value: T): T {
  if (typeof value === 'string') return value.replace(BIDI, '?') as T;
  if (Array.isArray(value)) return value.map(cleanBidi) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(BIDI, '?'), cleanBidi(v)])) as T;
  }
  return value;
}

/**
 * JSON that is safe inside a `<script>` element: `<`, `>`, `&`, U+2028 and U+2029 become
 * `\u00XX` / `\u20XX` escapes, so neither `</script>` nor `<!--` can end or change the element
 * and the text still parses to the same value with JSON.parse. The bidi controls become escapes
 * too, as in `--json` (format/table.ts toJson): the page's source then reads as it parses.
 *
 * `numbers: 'rounded'` writes non-integer numbers as `--json` does (format/json-numbers.ts).
 *
 * Example: jsonForScript({ p: '</script><!--' }) === '{"p":"\\u003c/script\\u003e\\u003c!--"}'
 */
export function jsonForScript(value: unknown, numbers: 'exact' | 'rounded' = 'exact'): string {
  return JSON.stringify(value, numbers === 'rounded' ? roundNumbers : undefined).replace(RAW_IN_SCRIPT, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
