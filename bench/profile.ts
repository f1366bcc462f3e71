/**
 * Where the time goes: runs the built CLI under `node --cpu-prof` (one profile per thread: the
 * main thread and each reader worker) and prints, per thread, the functions with the most self
 * time and the most inclusive time.
 *
 *   npx tsx bench/profile.ts [--top N] -- summary --db /tmp/x.duckdb --json
 *
 * Example: a cold 1 GB ingest prints the main thread (module loading, appender calls, waiting
 * for DuckDB shown as "(idle)") and two workers (projectLine, FileParser.add, postMessage).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export function summarizeProfile(p: Profile, top: number): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  const ticks = new Map<number, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    ticks.set(id, (ticks.get(id) ?? 0) + p.timeDeltas[i]);
    total += p.timeDeltas[i];
  });
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  for (const [id, us] of ticks) {
    const k = name(byId.get(id)!);
    self.set(k, (self.get(k) ?? 0) + us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k2 = name(byId.get(cur)!);
      if (seen.has(k2)) continue;
      seen.add(k2);
      incl.set(k2, (incl.get(k2) ?? 0) + us);
    }
  }
  const list = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n');
  return `total ${(total / 1000).toFixed(0)} ms\n-- self\n${list(self)}\n-- inclusive\n${list(incl)}`;
}

function main(): void {
  const argv = process.argv.slice(2);
  const sep = argv.indexOf('--');
  const own = sep >= 0 ? argv.slice(0, sep) : [];
  const cliArgs = sep >= 0 ? argv.slice(sep + 1) : argv;
  const top = own[0] === '--top' ? Number(own[1]) : 25;
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const dir = mkdtempSync(join(tmpdir(), 'cachelens-prof-'));
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, join(repo, 'dist/cli.js'), ...cliArgs], { stdio: ['ignore', 'ignore', 'inherit'] });
  process.stdout.write(`exit ${r.status}, ${((performance.now() - t0) / 1000).toFixed(2)} s wall; profiles in ${dir}\n`);
  for (const f of readdirSync(dir).sort()) {
    process.stdout.write(`\n=== ${f}\n${summarizeProfile(JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile, top)}\n`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
