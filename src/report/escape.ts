/**
 * Escaping for the two contexts the report puts untrusted text in: HTML text/attributes, and
 * JSON inside a `<script type="application/json">` element.
 */

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON that is safe inside a `<script>` element: `<`, `>`, `&`, U+2028 and U+2029 become
 * `\u00XX` / `\u20XX` escapes, so neither `</script>` nor `<!--` can end or change the element
 * and the text still parses to the same value with JSON.parse.
 *
 * Example: jsonForScript({ p: '</script><!--' }) === '{"p":"\\u003c/script\\u003e\\u003c!--"}'
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
