/**
 * Benchmark corpora, generated once and cached under the temp dir (`$TMPDIR/cachelens-bench`).
 *
 * Source: the sample generator (`npm run gen:samples -- --seed N --scale S --out DIR`) when it is
 * in the tree; until then, copies of ../shared/real-logs with every id that de-dup keys on
 * rewritten per copy (message ids, request ids, session/uuid values), and timestamps moved on by
 * one day per copy, so that N copies are N times the requests and not one request seen N times.
 *
 * Example: copy 3 of `…/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl` becomes
 * `…/00000003-aedd-4bc1-888f-c94edc91af04.jsonl`, and inside it `msg_01AB…` → `msg_c3x01AB…`,
 * `req_011C…` → `req_c3x011C…`, `"timestamp":"2026-02-12T…"` → `"2026-02-15T…"`.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

export interface Corpus {
  name: string;
  /** the config dir: CLAUDE_CONFIG_DIR for both tools (holds projects/) */
  root: string;
  files: string[];
  bytes: number;
  source: string;
}

const UUID = /[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/g;
const TIMESTAMP = /"timestamp":"(\d{4}-\d\d-\d\dT[0-9:.]+Z)"/g;
const DAY_MS = 86_400_000;
/** the --scale of the probe run that measures how many bytes one unit of scale writes */
const PROBE_SCALE = 4;

export function benchDir(): string {
  return join(process.env.CACHELENS_BENCH_DIR ?? tmpdir(), 'cachelens-bench');
}

/** Committed, not merely present: a generator still being written in the shared tree is not used. */
export function sampleGeneratorPresent(repo: string): boolean {
  const r = spawnSync('git', ['ls-files', '--error-unmatch', 'src/samples/cli.ts'], { cwd: repo, stdio: 'ignore' });
  return r.status === 0;
}

/** The cached corpus of about `targetBytes`, generating it first if needed. */
export function ensureCorpus(repo: string, name: string, targetBytes: number, log: (s: string) => void): Corpus {
  const useSamples = sampleGeneratorPresent(repo);
  // a new generator commit makes a new corpus (its lines, ids or mix may have changed)
  const source = useSamples ? `samples@${generatorVersion(repo)}` : 'real-logs-copies';
  const root = join(benchDir(), `${name}-${source.replace('@', '-')}`);
  const manifest = join(root, 'manifest.json');
  if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')) as Corpus;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const t0 = performance.now();
  if (useSamples) {
    const probe = join(benchDir(), 'probe');
    generateSamples(repo, PROBE_SCALE, probe);
    const perScale = listJsonl(join(probe, 'projects')).reduce((s, f) => s + statSync(f).size, 0) / PROBE_SCALE;
    rmSync(probe, { recursive: true, force: true });
    const scale = Math.max(1, Math.round(targetBytes / perScale));
    log(`generating ${name} corpus: gen:samples --seed 7 --scale ${scale}`);
    generateSamples(repo, scale, root);
  } else {
    log(`generating ${name} corpus: copies of ../shared/real-logs (sample generator not in the tree yet)`);
    copyRealLogs(join(repo, '../shared/real-logs'), root, targetBytes);
  }
  const files = listJsonl(join(root, 'projects'));
  const bytes = files.reduce((s, f) => s + statSync(f).size, 0);
  const corpus: Corpus = { name, root, files, bytes, source };
  writeFileSync(manifest, JSON.stringify(corpus));
  log(`  ${files.length} files, ${(bytes / 1e6).toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return corpus;
}

/**
 * One long session in one transcript of about `targetBytes` (ccusage users reported crashes on
 * 500 – 700 MB files): the largest main transcript of `base`, its lines written again and again
 * with fresh message, request and line ids (rewriteIds, rewriteCopy's ids) under the same session
 * id, each copy later than the last by the source's span plus a minute. Cached like the corpora.
 * Example: from a 219 KB transcript, 700 MB is 3,184 copies, ~274,000 requests.
 */
export function ensureOneFile(base: Corpus, targetBytes: number, log: (s: string) => void): Corpus {
  const name = `one-${Math.round(targetBytes / 1e6)}mb`;
  const root = join(benchDir(), `${name}-from-${base.name}-${base.source.replace('@', '-')}`);
  const manifest = join(root, 'manifest.json');
  if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')) as Corpus;
  rmSync(root, { recursive: true, force: true });
  const t0 = performance.now();
  // main transcripts sit right under their project directory: projects/<project>/<session>.jsonl
  const mains = base.files.filter((f) => relative(join(base.root, 'projects'), f).split('/').length === 2);
  const largest = mains.map((f) => ({ f, size: statSync(f).size })).sort((a, b) => b.size - a.size || (a.f < b.f ? -1 : 1))[0];
  if (!largest) throw new Error(`no main transcript in the ${base.name} corpus to make ${name} of`);
  const source = largest.f;
  const text = readFileSync(source, 'utf8');
  const session = /"sessionId":"([^"]+)"/.exec(text)?.[1] ?? 'one-file';
  const times = [...text.matchAll(TIMESTAMP)].map((m) => Date.parse(m[1]));
  const step = Math.max(...times) - Math.min(...times) + 60_000;
  const out = join(root, 'projects', '-home-USER-one-long-session', `${session}.jsonl`);
  mkdirSync(dirname(out), { recursive: true });
  log(`generating ${name} corpus: copies of ${relative(base.root, source)} in one session`);
  const fd = openSync(out, 'w');
  let bytes = 0;
  try {
    for (let k = 0; bytes < targetBytes; k++) {
      const copy = rewriteIds(text, k + 1)
        .replaceAll(rewriteIds(session, k + 1), session)
        .replaceAll('"msg_', `"msg_c${k}x`)
        .replaceAll('"req_', `"req_c${k}x`)
        .replace(TIMESTAMP, (_m, ts: string) => `"timestamp":"${new Date(Date.parse(ts) + k * step).toISOString()}"`);
      bytes += writeSync(fd, copy);
    }
  } finally {
    closeSync(fd);
  }
  const corpus: Corpus = { name, root, files: [out], bytes, source: `one session from ${base.name}` };
  writeFileSync(manifest, JSON.stringify(corpus));
  log(`  1 file, ${(bytes / 1e6).toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return corpus;
}

function generatorVersion(repo: string): string {
  return spawnSync('git', ['log', '-1', '--format=%h', '--', 'src/samples'], { cwd: repo, encoding: 'utf8' }).stdout.trim() || 'unknown';
}

function generateSamples(repo: string, scale: number, out: string): void {
  const args = ['--import', 'tsx', 'src/samples/cli.ts', '--seed', '7', '--scale', String(scale), '--out', out, '--truth', 'summary'];
  const r = spawnSync(process.execPath, args, { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`gen:samples --scale ${scale} failed with status ${r.status}`);
}

function copyRealLogs(src: string, root: string, targetBytes: number): void {
  const sources = readdirSync(src, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => listJsonl(join(src, d.name, 'projects')).map((f) => ({ f, rel: relative(join(src, d.name, 'projects'), f), text: readFileSync(f, 'utf8') })));
  const perCopy = sources.reduce((s, x) => s + Buffer.byteLength(x.text), 0);
  const copies = Math.max(1, Math.round(targetBytes / perCopy));
  for (let k = 0; k < copies; k++) {
    for (const s of sources) {
      const out = join(root, 'projects', rewriteIds(s.rel, k));
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, rewriteCopy(s.text, k));
    }
  }
}

/** Ids and times of copy k (see the module comment). */
export function rewriteCopy(text: string, k: number): string {
  return rewriteIds(text, k)
    .replaceAll('"msg_', `"msg_c${k}x`)
    .replaceAll('"req_', `"req_c${k}x`)
    .replace(TIMESTAMP, (_m, ts: string) => `"timestamp":"${new Date(Date.parse(ts) + k * DAY_MS).toISOString()}"`);
}

function rewriteIds(text: string, k: number): string {
  const head = k.toString(16).padStart(8, '0');
  return text.replace(UUID, (_m, tail: string) => head + tail);
}

export function listJsonl(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...listJsonl(p));
    else if (d.name.endsWith('.jsonl')) out.push(p);
  }
  return out.sort();
}
