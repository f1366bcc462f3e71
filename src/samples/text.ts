/**
 * Plausible, cheap text for transcript bodies. Bodies only have to look like a coding session;
 * token counts in usage are planned separately, so text stays short to keep the corpus small.
 */
import { Rng } from './prng.js';

const WORDS = (
  'the a to of and in is for that this with it on be as are we can by from not will file ' +
  'function test should return value error cache request session agent plan review fix ' +
  'update config handler route query index schema table user token model output input ' +
  'read write build run check module import export type interface const async await ' +
  'promise stream parse line json store report chart price usage chain round window ' +
  'watermark prefix expiry break growth cold summary change diff patch commit branch'
).split(' ');

export function words(rng: Rng, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(rng.pick(WORDS));
  return out.join(' ');
}

export function sentence(rng: Rng, lo = 6, hi = 16): string {
  const s = words(rng, rng.int(lo, hi));
  return s.charAt(0).toUpperCase() + s.slice(1) + '.';
}

export function paragraph(rng: Rng, sentences: number): string {
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) out.push(sentence(rng));
  return out.join(' ');
}

const SOURCE_LINES = [
  'import { readFile } from "node:fs/promises";',
  'export async function load(path: string): Promise<Config> {',
  '  const text = await readFile(path, "utf8");',
  '  return JSON.parse(text) as Config;',
  '}',
  'const cache = new Map<string, Entry>();',
  'if (entry.expiresAt < now) cache.delete(key);',
  'for (const row of rows) totals[row.model] = (totals[row.model] ?? 0) + row.tokens;',
  'return { ok: true, value };',
  '// retry once on a transient failure',
  'throw new Error(`unknown route: ${name}`);',
  'router.get("/orders/:id", async (req, res) => res.json(await orders.get(req.params.id)));',
];

/** A numbered source excerpt shaped like the Read tool's output. */
export function sourceExcerpt(rng: Rng, lines: number): string {
  const out: string[] = [];
  const start = rng.int(1, 400);
  for (let i = 0; i < lines; i++) {
    out.push(`${String(start + i).padStart(6, ' ')}\u2192${rng.pick(SOURCE_LINES)}`);
  }
  return out.join('\n');
}

const PLUGIN_SKILLS = [
  'plan-feature', 'review-plan', 'apply-fix', 'write-tests', 'triage-issue', 'release-notes',
  'db-migrate', 'perf-profile', 'api-contract', 'changelog', 'dependency-audit', 'docs-sync',
  'incident-report', 'refactor-module', 'lint-fix', 'bench-compare', 'schema-diff', 'feature-flag',
  'rollback-plan', 'security-scan', 'load-test', 'ui-snapshot', 'i18n-extract', 'cost-report',
];

let pluginListing: { content: string; names: string[] } | null = null;

/**
 * The ~18 KB plugin skill listing that lost agents get re-attached every round (field note 1).
 * Built once from a fixed stream: every lost agent sees byte-identical content, which is what
 * makes each later copy a re-attachment (same hash) in SPEC §1.6 terms.
 */
export function pluginSkillListing(): { content: string; names: string[] } {
  if (pluginListing) return pluginListing;
  const rng = new Rng(0x5eed5);
  const lines: string[] = [];
  const names: string[] = [];
  for (const base of PLUGIN_SKILLS) {
    const name = `myplugin:${base}`;
    names.push(name);
    lines.push(`- ${name}: ${paragraph(rng, 9)} - When ${paragraph(rng, 3)}`);
  }
  pluginListing = { content: lines.join('\n'), names };
  return pluginListing;
}

const CORE_SKILLS = ['update-config', 'keybindings-help', 'verify', 'code-review', 'simplify', 'loop', 'init', 'review', 'security-review'];

let coreListing: { content: string; names: string[] } | null = null;

/** The smaller built-in skill listing a main thread gets once, at its start. */
export function coreSkillListing(): { content: string; names: string[] } {
  if (coreListing) return coreListing;
  const rng = new Rng(0xc0de);
  const lines = CORE_SKILLS.map((n) => `- ${n}: ${paragraph(rng, 3)}`);
  coreListing = { content: lines.join('\n'), names: [...CORE_SKILLS] };
  return coreListing;
}
