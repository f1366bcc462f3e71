/**
 * HTML building with escaping by default: every value interpolated into the `html` tag is
 * escaped unless it is already `SafeHtml` (the output of another `html` call).
 */
import { jsonNumber, jsonNumberText } from '../format/json-numbers.js';
import { escapeHtml } from './escape.js';

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = SafeHtml | string | number | boolean | null | undefined | Part[];

function part(v: Part): string {
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(part).join('');
  if (v === null || v === undefined || v === false || v === true) return '';
  // a number as `--json` writes it: 1475294.6, not the double's 1475294.5999999999
  if (typeof v === 'number') return String(jsonNumber(v));
  return escapeHtml(String(v));
}

/** Example: html`<b>${'<i>'}</b>`.value === '<b>&lt;i&gt;</b>' */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += part(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

const ID_SEPARATOR = /([-:/])/g;

/**
 * An id (a session UUID, a chain id such as `fe5e…:side:f4ab…`, a transcript's path), escaped, with a
 * `<wbr>` after each of its separators (`-`, `:`, `/`): a line may break there and, where a segment
 * fits, nowhere else. The page breaks a long run anywhere (overflow-wrap), and without these a browser
 * has no other place in a UUID (no break after a hyphen before a digit, none after a colon), so a
 * printed id was cut mid-segment. The text, copied or read, is the id unchanged.
 * Example: breakableId('ab-12:c<d').value === 'ab-<wbr>12:<wbr>c&lt;d'
 */
export function breakableId(id: string): SafeHtml {
  // escaped first: no entity holds a separator (&amp; &lt; &gt; &quot; &#39;), so none is split
  return new SafeHtml(escapeHtml(id).replace(ID_SEPARATOR, '$1<wbr>'));
}

/**
 * Attributes with a value, each escaped; one whose value is undefined or empty is left out, so
 * the page carries no `title=""` (an empty tooltip) or `class=""`.
 * Example: attrs({ class: 'num', title: undefined }).value === ' class="num"'
 */
export function attrs(values: Record<string, string | undefined>): SafeHtml {
  return html`${Object.entries(values).map(([name, v]) => (v === undefined || v === '' ? '' : html` ${name}="${v}"`))}`;
}

export interface Column {
  label: string;
  numeric?: boolean;
  /** tooltip on the header */
  hint?: string;
}

/** A cell: text (escaped) and the raw value the table sorts by. */
export interface Cell {
  text: string | SafeHtml;
  /** the value the script sorts by; null (or none) for a cell without one (unknown, n/a), which sorts after every number */
  sort?: number | string | null;
  className?: string;
}

/**
 * A table the page's small script can sort by clicking a header. The headers are plain text: the
 * script makes each a button, so a page without JavaScript shows nothing that looks clickable
 * and does nothing.
 */
export function sortableTable(caption: string, columns: Column[], rows: Cell[][]): SafeHtml {
  return html`<div class="table-wrap"><table class="sortable">
<caption>${caption}</caption>
<thead><tr>${columns.map(
    (c) => html`<th scope="col"${attrs({ class: c.numeric ? 'num' : undefined, title: c.hint })}>${c.label}</th>`,
  )}</tr></thead>
<tbody>${rows.map(
    (r) => html`<tr>${r.map((cell, i) => {
      const cls = [columns[i]?.numeric ? 'num' : '', cell.className ?? ''].join(' ').trim();
      return html`<td${attrs({ class: cls, 'data-sort': cell.sort === undefined || cell.sort === null ? undefined : typeof cell.sort === 'number' ? jsonNumberText(cell.sort) : cell.sort })}>${cell.text}</td>`;
    })}</tr>\n`,
  )}</tbody>
</table></div>`;
}

/** A simple, non-sortable key → value list. */
export function facts(items: Array<[string, string | SafeHtml]>): SafeHtml {
  return html`<dl class="facts">${items.map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>`;
}
