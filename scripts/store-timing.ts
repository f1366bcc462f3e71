/**
 * Warm re-run against cold ingest on a large generated corpus (docs/store.md quotes its output).
 *
 *   npm run build && npx tsx scripts/store-timing.ts [--scale 100] [--seed 1] [--runs 3] [--dir /tmp/x]
 *
 *   gen:samples ─▶ corpus ─▶ cold `summary` (empty store) ─▶ warm `summary` (nothing changed)
 *                                                         ─▶ one file appended ─▶ `summary`
 *
 * Every timing is the wall clock of the built CLI (`node dist/cli.js summary DIR --db DB --json`),
 * the median of --runs runs, so process start and the analysis are included: what a user waits.
 * The ingest stats of each kind of run (files read, bytes read) come from the library.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../', import.meta.url));
const { values } = parseArgs({
  options: { scale: { type: 'string', default: '100' }, seed: { type: 'string', default: '1' }, runs: { type: 'string', default: '3' }, dir: { type: 'string' } },
});
const runs = Number(values.runs);
const work = values.dir ?? mkdtempSync(path.join(tmpdir(), 'cachelens-timing-'));
const logs = path.join(work, 'logs');
const cli = path.join(repo, 'dist/cli.js');

function sh(args: string[], what: string): { ms: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, NO_COLOR: '1', CACHELENS_LOCK_WAIT: '0' } });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${what} failed (${r.status}): ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const summary = (db: string) => sh([cli, 'summary', logs, '--db', db, '--json'], 'summary');

rmSync(logs, { recursive: true, force: true });
const gen = sh(['--import', 'tsx', path.join(repo, 'src/samples/cli.ts'), '--seed', String(values.seed), '--scale', String(values.scale), '--out', logs, '--truth', 'summary'], 'gen:samples');
const files = spawnSync('find', [logs, '-name', '*.jsonl'], { encoding: 'utf8' }).stdout.trim().split('\n');
const bytes = files.reduce((s, f) => s + statSync(f).size, 0);
const biggest = files.reduce((a, b) => (statSync(a).size >= statSync(b).size ? a : b));

const cold: number[] = [];
const warm: number[] = [];
const appended: number[] = [];
let requests = 0;
for (let i = 0; i < runs; i++) {
  const db = path.join(work, `store-${i}.duckdb`);
  rmSync(db, { force: true });
  const c = summary(db);
  cold.push(c.ms);
  requests = (JSON.parse(c.stdout) as { totals: { requests: number } }).totals.requests;
  warm.push(summary(db).ms);
  // a session that goes on: its file grows by its own last lines (a resumed response repeats usage)
  const text = readFileSync(biggest, 'utf8').trimEnd().split('\n');
  appendFileSync(biggest, text.slice(-20).join('\n') + '\n');
  appended.push(summary(db).ms);
  warm.push(summary(db).ms);
}

// what each kind of run read, from the library (in-process, same store rules)
const { ingest } = (await import(path.join(repo, 'dist/ingest/ingest.js'))) as typeof import('../src/ingest/ingest.js');
const { loadPriceTable } = (await import(path.join(repo, 'dist/pricing/pricing.js'))) as typeof import('../src/pricing/pricing.js');
const prices = loadPriceTable();
type Stats = Awaited<ReturnType<typeof ingest>>['stats'];
const stat = async (db: string) => {
  const r = await ingest({ paths: [logs], dbPath: db, prices });
  r.store.close();
  return r.stats;
};
const lib: { cold: Stats[]; warm: Stats[]; append: Stats[] } = { cold: [], warm: [], append: [] };
for (let i = 0; i < runs; i++) {
  const db = path.join(work, `stats-${i}.duckdb`);
  rmSync(db, { force: true });
  lib.cold.push(await stat(db));
  lib.warm.push(await stat(db));
  appendFileSync(biggest, readFileSync(biggest, 'utf8').trimEnd().split('\n').slice(-20).join('\n') + '\n');
  lib.append.push(await stat(db));
}
const [sCold, sWarm, sAppend] = [lib.cold[0]!, lib.warm[0]!, lib.append[0]!];
const ingestMs = (xs: Stats[]) => median(xs.map((x) => x.ms));

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(`corpus: gen:samples --seed ${values.seed} --scale ${values.scale} (${gen.ms.toFixed(0)} ms to generate): ${files.length} transcripts, ${(bytes / 1e6).toFixed(1)} MB, ${requests} requests`);
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`);
const help = median(Array.from({ length: runs }, () => sh([cli, '--help'], 'help').ms));
console.log(`median of ${runs} runs; CLI = wall clock of \`cachelens summary DIR --db DB --json\`, ingest = the library's ingest() alone:`);
console.log(`| run | CLI | ingest | files read | bytes read |`);
console.log(`|---|---|---|---|---|`);
console.log(`| cold (empty store) | ${fmt(median(cold))} | ${fmt(ingestMs(lib.cold))} | ${sCold.read} | ${(sCold.bytesRead / 1e6).toFixed(1)} MB |`);
console.log(`| warm (nothing changed) | ${fmt(median(warm))} | ${fmt(ingestMs(lib.warm))} | ${sWarm.read + sWarm.appended} | ${sWarm.bytesRead} B |`);
console.log(`| one file appended | ${fmt(median(appended))} | ${fmt(ingestMs(lib.append))} | ${sAppend.appended} appended | ${(sAppend.bytesRead / 1e3).toFixed(1)} kB |`);
console.log(`CLI start alone (\`cachelens --help\`): ${fmt(help)}`);
console.log(`warm / cold: CLI ${(median(warm) / median(cold)).toFixed(3)}, ingest ${(ingestMs(lib.warm) / ingestMs(lib.cold)).toFixed(4)}`);
if (!values.dir) rmSync(work, { recursive: true, force: true });
