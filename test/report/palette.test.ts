/**
 * The charts' colours: every colour a compiled chart spec (theme included) can paint a mark with
 * has at least 3:1 contrast against the card the chart sits on, in the light and the dark scheme
 * (WCAG 2.1 non-text contrast), and no colour scale tells its values apart by red against green.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHART_SPECS, vegaSpec } from '../../src/report/charts.js';
import { reportFile } from '../../src/report/assets.js';

/** WCAG 2.1 relative luminance of `#rrggbb` or `#rgb`. */
function luminance(hex: string): number {
  const h = hex.length === 4 ? hex.replace(/[0-9a-f]/gi, (c) => c + c) : hex;
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/** Hue in degrees of a `#rrggbb`, and its saturation (0 for a grey). */
function hue(hex: string): { h: number; s: number } {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255) as [number, number, number];
  const max = Math.max(r, g, b);
  const d = max - Math.min(r, g, b);
  if (d === 0) return { h: 0, s: 0 };
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return { h: (h * 60 + 360) % 360, s: d / max };
}

const red = (c: string) => { const { h, s } = hue(c); return s > 0.25 && (h >= 340 || h <= 20); };
const green = (c: string) => { const { h, s } = hue(c); return s > 0.25 && h >= 80 && h <= 160; };

/** The card background (charts sit on cards) in the light scheme and under prefers-color-scheme: dark. */
function cards(): { light: string; dark: string } {
  const style = reportFile('template.html');
  const [light, dark] = [...style.matchAll(/--card:\s*(#[0-9a-f]{3,6})/gi)].map((m) => m[1]!);
  assert.ok(light && dark, 'the template sets --card for light and dark');
  assert.match(style, /@media \(prefers-color-scheme: dark\)\s*\{\s*:root\s*\{[^}]*--card:\s*#/i, 'the second --card is the dark one');
  return { light, dark };
}

function colours(value: unknown, out: Set<string>): Set<string> {
  if (typeof value === 'string') {
    if (/^#[0-9a-f]{3}(?:[0-9a-f]{3})?$/i.test(value)) out.add(value.toLowerCase());
    // a named colour or rgb() would slip past the hex check: there are none
    else assert.doesNotMatch(value, /^(?:rgb|hsl)a?\(|^(?:red|green|white|black|orange|blue|gray|grey|steelblue)$/i, `colour ${value}: write it as #rrggbb`);
  } else if (Array.isArray(value)) value.forEach((v) => colours(v, out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) {
    // a named scheme's colours are vega's, not ours to check: every range is spelled out
    assert.notEqual(k, 'scheme', 'a colour scheme by name');
    colours(v, out);
  }
  return out;
}

test('the WCAG formula as written: white on black is 21:1, #767676 on white 4.54:1', () => {
  assert.equal(Math.round(contrast('#ffffff', '#000000') * 100) / 100, 21);
  assert.equal(Math.round(contrast('#767676', '#ffffff') * 100) / 100, 4.54);
});

test('every colour in the chart specs and theme has 3:1 contrast against the card, light and dark', () => {
  const { light, dark } = cards();
  const low: string[] = [];
  const all = new Set<string>();
  colours(JSON.parse(reportFile('theme.json')), all);
  for (const name of CHART_SPECS) {
    for (const c of colours(vegaSpec(name), new Set())) {
      all.add(c);
      for (const bg of [light, dark]) if (contrast(c, bg) < 3) low.push(`${name}: ${c} on ${bg} is ${contrast(c, bg).toFixed(2)}:1`);
    }
  }
  assert.ok(all.size >= 5, `${all.size} colours checked`);
  assert.deepEqual(low, []);
});

test('no colour scale sets red against green: a reader who cannot tell them apart reads every chart', () => {
  const pairs: string[] = [];
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (Array.isArray(o.range) && o.range.every((c) => typeof c === 'string' && c.startsWith('#'))) {
        const range = o.range as string[];
        if (range.some(red) && range.some(green)) pairs.push(`${path}: ${range.join(' ')}`);
      }
      for (const [k, x] of Object.entries(o)) walk(x, `${path}.${k}`);
    }
  };
  for (const name of CHART_SPECS) walk(vegaSpec(name), name);
  assert.deepEqual(pairs, []);
  // the check sees the pairs the charts had
  assert.ok(red('#e45756') && green('#54a24b') && !red('#cc6a00') && !green('#178a8a'));
});
