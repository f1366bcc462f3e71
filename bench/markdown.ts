/**
 * The benchmark's table as Markdown, and its place in BENCHMARKS.md: the text between the
 * `bench:begin` / `bench:end` markers is replaced by each run; the prose around it is kept.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Machine } from './machine.js';
import type { SharedIds } from './collisions.js';
import type { Series } from './measure.js';
import type { TotalsCheck } from './totals.js';

export interface Row {
  scenario: string;
  corpus: string;
  cachelens: Series | null;
  ccusage?: Series | null;
  cat?: Series | null;
  /** why there is no measurement (e.g. "not built yet") */
  note?: string;
}

export interface Target {
  what: string;
  goal: string;
  measured: string;
  /** null: not measured in this run */
  met: boolean | null;
}

export interface Outcome {
  date: string;
  machine: Machine;
  versions: Record<string, string>;
  loadBefore: number;
  loadAfter: number;
  runs: number;
  command: string;
  corpora: { name: string; files: number; bytes: number; source: string }[];
  rows: Row[];
  targets: Target[];
  totals: { corpus: string; when: string; check: TotalsCheck; shared?: SharedIds }[];
}

const BEGIN = '<!-- bench:begin (written by `npm run bench`; edit outside these markers) -->';
const END = '<!-- bench:end -->';

export function secs(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 1000).toFixed(2)} s`;
}

export function mib(kib: number): string {
  return `${(kib / 1024).toFixed(0)} MiB`;
}

/** ", its runs 0.42 – 0.48 s": the range of a series' wall times when it has more than one run that exited 0, else nothing. */
export function spread(s: Series): string {
  const walls = s.runs.filter((r) => r.status === 0).map((r) => r.wallMs);
  if (walls.length < 2) return '';
  return `, its runs ${secs(Math.min(...walls)).slice(0, -2)} – ${secs(Math.max(...walls))}`;
}

/**
 * `v` to two decimals, or to as many more as it takes not to print the limit it is judged
 * against: a warm run at 0.1016× ccusage's time, over a 0.1× target, reads 0.102×, not 0.10×
 * beside "no" (session 36's run), and one at 0.0996× reads 0.0996×, not 0.10× beside "yes".
 * Example: against(0.1016, 0.1) is "0.102×"; against(1.713, 1) is "1.71×"; against(0.28, 1.5, ' s') is "0.28 s".
 */
export function against(v: number, limit: number, unit = '×'): string {
  let digits = 2;
  while (digits < 6 && v !== limit && Number(v.toFixed(digits)) === Number(limit.toFixed(digits))) digits++;
  return `${v.toFixed(digits)}${unit}`;
}

function ratio(a: Series | null | undefined, b: Series | null | undefined): string {
  if (!a || !b || a.failed || b.failed) return '—';
  return `${(a.wallMs / b.wallMs).toFixed(2)}×`;
}

function cell(s: Series | null | undefined, what: 'wall' | 'cpu' | 'rss'): string {
  if (!s) return '—';
  if (s.failed) return what === 'wall' ? `failed (${s.failed.replaceAll('|', '/')})` : '—';
  return what === 'wall' ? secs(s.wallMs) : what === 'cpu' ? secs(s.cpuMs) : mib(s.rssKiB);
}

export function render(o: Outcome): string {
  const lines: string[] = [];
  lines.push(`Measured ${o.date} with \`${o.command}\` (median of ${o.runs} runs each; peak RSS is the largest of the runs).`);
  lines.push('');
  lines.push(`Machine: ${o.machine.cpu}, ${o.machine.cores} cores, ${o.machine.memGiB} GiB RAM, ${o.machine.os} (Linux ${o.machine.kernel}).`);
  lines.push(`1-minute load average: ${o.loadBefore.toFixed(1)} before, ${o.loadAfter.toFixed(1)} after (other work on the machine inflates wall times; CPU time is less affected).`);
  lines.push(`Versions: ${Object.entries(o.versions).map(([k, v]) => `${k} ${v}`).join(', ')}.`);
  lines.push(`Corpora: ${o.corpora.map((c) => `${c.name} = ${c.files} file${c.files === 1 ? '' : 's'}, ${(c.bytes / 1e6).toFixed(0)} MB (${c.source})`).join('; ')}. Files are in the page cache (each run reads them hot).`);
  lines.push('');
  lines.push('| scenario | corpus | cachelens wall | cachelens CPU | cachelens peak RSS | ccusage wall | ccusage peak RSS | cat wall | cachelens ÷ ccusage | cachelens ÷ cat |');
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of o.rows) {
    if (r.note) {
      lines.push(`| ${r.scenario} | ${r.corpus} | ${r.note} | | | | | | | |`);
      continue;
    }
    lines.push(
      `| ${r.scenario} | ${r.corpus} | ${cell(r.cachelens, 'wall')} | ${cell(r.cachelens, 'cpu')} | ${cell(r.cachelens, 'rss')} | ${cell(r.ccusage, 'wall')} | ${cell(r.ccusage, 'rss')} | ${cell(r.cat, 'wall')} | ${ratio(r.cachelens, r.ccusage)} | ${ratio(r.cachelens, r.cat)} |`,
    );
  }
  lines.push('');
  lines.push('| target | goal | measured | met |');
  lines.push('|---|---|---|---|');
  for (const t of o.targets) lines.push(`| ${t.what} | ${t.goal} | ${t.measured} | ${t.met === null ? 'not measured' : t.met ? 'yes' : '**no**'} |`);
  lines.push('');
  lines.push('Totals, cachelens `summary --json` against ccusage `daily --json` on the same files (tokens must be equal):');
  lines.push('');
  lines.push('| corpus | when | input | output | cache write | cache read | tokens equal | USD cachelens | USD ccusage |');
  lines.push('|---|---|---:|---:|---:|---:|---|---:|---:|');
  for (const t of o.totals) {
    const v = (f: string) => {
      const r = t.check.rows.find((x) => x.field.startsWith(f))!;
      const n = (x: number) => x.toLocaleString('en-US');
      return r.equal ? n(r.cachelens) : `${n(r.cachelens)} vs ${n(r.ccusage)}`;
    };
    const usd = t.check.rows.find((x) => x.field === 'USD')!;
    const equal = t.check.tokensEqual
      ? 'yes'
      : t.shared && t.shared.ids > 0
        ? `no: ${t.shared.ids} request ids shared by unrelated sessions (explained in the text above)`
        : '**no, unexplained**';
    lines.push(
      `| ${t.corpus} | ${t.when} | ${v('input')} | ${v('output')} | ${v('cache write')} | ${v('cache read')} | ${equal} | ${usd.cachelens.toFixed(4)} | ${usd.ccusage.toFixed(4)} |`,
    );
  }
  const diffs = o.totals.filter((t) => t.check.usdByModel.length > 0);
  if (diffs.length > 0) {
    lines.push('');
    lines.push('USD differences by model (explained in the text above):');
    lines.push('');
    for (const t of diffs) {
      for (const m of t.check.usdByModel) lines.push(`- ${t.corpus}, ${t.when}: ${m.model} cachelens ${m.cachelens.toFixed(4)}, ccusage ${m.ccusage.toFixed(4)}`);
    }
  }
  return lines.join('\n');
}

/** Replaces the generated section of BENCHMARKS.md (or creates the file around it). */
export function writeBenchmarks(path: string, section: string): void {
  const block = `${BEGIN}\n${section}\n${END}`;
  if (!existsSync(path)) {
    writeFileSync(path, `# Benchmarks\n\n${block}\n`);
    return;
  }
  const text = readFileSync(path, 'utf8');
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  writeFileSync(path, a >= 0 && b > a ? text.slice(0, a) + block + text.slice(b + END.length) : `${text.trimEnd()}\n\n${block}\n`);
}
