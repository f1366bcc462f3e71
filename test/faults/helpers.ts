/**
 * Shared by the fault suite (issue #8, SPEC §8): temp log trees built line by line, the built CLI
 * run as a child process (as a user runs it), and the probes that watch that child from outside:
 * its peak memory, its network attempts, and a hash of the log tree it must not touch.
 *
 *   case builder ─▶ temp logs ─▶ node dist/cli.js summary <logs> --db <tmp> --json ─▶ exit code, JSON, stderr
 *                                     ▲ preloads (test/faults/preload/*.mjs): probe · no-network · fs-faults
 */
import assert from 'node:assert/strict';
import { type SpawnOptions, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir as removedAtExit } from '../helpers/temp.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const cliPath = path.join(repoRoot, 'dist/cli.js');
export const realLogs = path.resolve(repoRoot, '../shared/real-logs');
export const preload = (name: 'probe' | 'no-network' | 'fs-faults' | 'kill-at-sql') => path.join(repoRoot, `test/faults/preload/${name}.mjs`);

export const MODEL = 'claude-opus-4-6';

/** A fresh directory under the OS temp dir, traversable by other users (the `nobody` runs need that). */
export function tempDir(prefix = 'cachelens-fault-'): string {
  const dir = removedAtExit(prefix);
  chmodSync(dir, 0o755);
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Writes a file (creating its directories); lines are joined with "\n" and end with one. */
export function writeLog(root: string, rel: string, content: string[] | string | Buffer): string {
  const file = path.join(root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, Array.isArray(content) ? content.join('\n') + '\n' : content);
  return file;
}

/** `text` as UTF-8 with `marker` replaced by raw bytes (which need not be valid UTF-8). */
export function withBytes(text: string, marker: string, bytes: number[]): Buffer {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`no ${marker} in ${text}`);
  return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at + marker.length))]);
}

export interface UsageFields {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  [k: string]: unknown;
}

/** in, out, w, r as the four usage fields (no 5m/1h split, as Claude Code 1.x wrote it). */
export function usage(input: number, output: number, write: number, read: number): UsageFields {
  return { input_tokens: input, output_tokens: output, cache_creation_input_tokens: write, cache_read_input_tokens: read };
}

export interface AssistantSpec {
  session?: string;
  msg: string;
  req?: string | null;
  t?: string;
  model?: string;
  usage: UsageFields;
  text?: string;
  cwd?: string;
  extra?: Record<string, unknown>;
}

/** One `assistant` line carrying usage (one content block of a response). */
export function assistant(a: AssistantSpec): string {
  return JSON.stringify({
    type: 'assistant',
    sessionId: a.session ?? 's1',
    timestamp: a.t ?? '2025-03-01T10:00:00.000Z',
    ...(a.cwd ? { cwd: a.cwd } : {}),
    ...(a.req === null ? {} : { requestId: a.req ?? `req_${a.msg}` }),
    message: {
      id: a.msg,
      model: a.model ?? MODEL,
      role: 'assistant',
      content: [{ type: 'text', text: a.text ?? 'ok' }],
      usage: a.usage,
    },
    ...a.extra,
  });
}

/** One `user` prompt line. */
export function user(text: string, opts: { session?: string; t?: string; cwd?: string } = {}): string {
  return JSON.stringify({
    type: 'user',
    sessionId: opts.session ?? 's1',
    timestamp: opts.t ?? '2025-03-01T09:59:59.000Z',
    cwd: opts.cwd ?? '/work/project',
    message: { role: 'user', content: text },
  });
}

export interface Totals {
  requests: number;
  input: number;
  output: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
  /** null when every request of the group is unpriced */
  weight: number | null;
  usd: number | null;
  unpriced_requests: number;
}

export interface SkipGroup {
  reason: string;
  count: number;
  examples: { file: string; line: number | null; detail: string }[];
}

export interface SummaryJson {
  totals: Totals;
  by_model: (Totals & { model: string })[];
  by_project: (Totals & { project: string })[];
  by_day: (Totals & { day: string })[];
  quality: {
    files: number;
    lines: number;
    skipped_lines: number;
    skipped: SkipGroup[];
    duplicates_removed: number;
    usage_lines: number;
    synthetic: number;
    unknown_models: { model: string; requests: number; tokens: number }[];
  };
}

/** Weight of an Opus 4.x (current price) request with no 5m/1h split: in + 5·out + 1.25·w + 0.1·r. */
export function opusWeight(input: number, output: number, write: number, read: number): number {
  return input + 5 * output + 1.25 * write + 0.1 * read;
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** peak resident set size of the child in KiB (with `probe`) */
  maxRssKb: number | null;
  /** network attempts the no-network preload refused (with `noNetwork`) */
  netAttempts: string[];
  /** faults the fs-faults preload fired, as `vanish a.jsonl` / `grow a.jsonl` */
  faults: string[];
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** run without root's power to read anything (only meaningful, and only done, when the test runs as root) */
  asNobody?: boolean;
  probe?: boolean;
  noNetwork?: boolean;
  /** fs-faults preload settings: FAULT_VANISH, FAULT_GROW, FAULT_GROW_DATA, FAULT_SHRINK */
  fsFaults?: Record<string, string>;
  /** kill-at-sql preload: the run kills itself (SIGKILL) before the `nth` statement holding `sql` */
  killAtSql?: { sql: string; nth: number };
  /** kill-at-sql preload: opening a database file not there fails as on a full disk (KILL_AT_OPEN_NOSPACE) */
  openNoSpace?: boolean;
  /** extra argv before the node script (e.g. a wrapper such as strace) */
  wrap?: string[];
  cwd?: string;
  /** run this node script (with its arguments) instead of the CLI: for the probes' own tests */
  script?: string[];
}

/**
 * The environment a run sees: no colour, and a HOME with no Claude config of the machine's, so
 * that only the paths a test names are read. CACHELENS_LOCK_WAIT=0: a held store fails at once.
 */
export function baseEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  // TMPDIR: the test file's own under npm test (test/helpers/tmp-guard.ts), so what a run leaves there fails the file
  for (const k of ['PATH', 'LANG', 'TZ', 'SystemRoot', 'TMPDIR']) if (process.env[k]) env[k] = process.env[k]!;
  return { ...env, NO_COLOR: '1', HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), CACHELENS_LOCK_WAIT: '0', TZ: 'UTC' };
}

/** A temp dir holding logs of one request, and `file(name, text)` writing a --pricing file beside them; removed after the test. */
export function pricingSetup(t: { after: (f: () => void) => void }): { dir: string; logs: string; file: (name: string, text: string) => string } {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const file = (name: string, text: string) => {
    writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  return { dir, logs, file };
}

/** Runs the CLI and asserts a usage error: exit 2, nothing on stdout, one `cachelens: …` line matching `expected`, no stack. */
export async function usageError(args: string[], expected: RegExp): Promise<void> {
  const r = await runCli(args);
  assert.equal(r.code, 2, `exit code of ${args.join(' ')}: ${r.stderr}`);
  assert.equal(r.stdout, '', 'nothing on stdout');
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one line on stderr: ${JSON.stringify(r.stderr)}`);
  assert.match(lines[0]!, /^cachelens: /);
  assert.match(lines[0]!, expected);
  assert.doesNotMatch(lines[0]!, /internal error|\bat .*:\d+:\d+/);
}

export function runCli(args: string[], opts: RunOptions = {}): Promise<Ran> {
  const scratch = tempDir('cachelens-run-');
  const probeOut = path.join(scratch, 'probe.json');
  const nodeArgs: string[] = [];
  if (opts.probe) nodeArgs.push('--import', pathToUrl(preload('probe')));
  if (opts.noNetwork) nodeArgs.push('--import', pathToUrl(preload('no-network')));
  if (opts.fsFaults) nodeArgs.push('--import', pathToUrl(preload('fs-faults')));
  if (opts.killAtSql || opts.openNoSpace) nodeArgs.push('--import', pathToUrl(preload('kill-at-sql')));
  const env: Record<string, string> = { ...baseEnv(scratch), FAULT_PROBE_OUT: probeOut };
  if (opts.killAtSql) Object.assign(env, { KILL_AT_SQL: opts.killAtSql.sql, KILL_AT_SQL_NTH: String(opts.killAtSql.nth) });
  if (opts.openNoSpace) env.KILL_AT_OPEN_NOSPACE = '1';
  for (const [k, v] of Object.entries({ ...opts.fsFaults, ...opts.env })) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  let cmd = process.execPath;
  let argv = [...nodeArgs, ...(opts.script ?? [cliPath]), ...args];
  if (opts.wrap) {
    argv = [...opts.wrap.slice(1), cmd, ...argv];
    cmd = opts.wrap[0];
  }
  if (opts.asNobody && process.getuid?.() === 0) {
    // Root reads anything through CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH: drop both, stay root.
    // File modes then bind as for anyone, and the checkout (root's own) stays readable wherever it is.
    argv = ['--bounding-set=-dac_override,-dac_read_search', '--inh-caps=-dac_override,-dac_read_search', cmd, ...argv];
    cmd = 'setpriv';
  }
  const spawnOpts: SpawnOptions = { env, cwd: opts.cwd ?? scratch, stdio: ['ignore', 'pipe', 'pipe'] };
  const child = spawn(cmd, argv, spawnOpts);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const records = probeRecords(probeOut);
      removeDir(scratch);
      resolve({
        code,
        signal,
        stdout,
        stderr,
        maxRssKb: records.find((r) => r.maxRssKb !== undefined)?.maxRssKb ?? null,
        netAttempts: records.filter((r) => r.net !== undefined).map((r) => r.net!),
        faults: records.filter((r) => r.fault !== undefined).map((r) => `${r.fault} ${path.basename(r.path ?? '')}`),
      });
    });
  });
}

interface ProbeRecord {
  maxRssKb?: number;
  net?: string;
  fault?: string;
  path?: string;
}

function probeRecords(file: string): ProbeRecord[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return []; // no preload wrote anything
  }
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ProbeRecord);
}

function pathToUrl(p: string): string {
  return new URL(`file://${p}`).href;
}

/** `summary <paths> --db <db> --json`; fails the test unless it exits 0 with JSON on stdout. */
export async function summary(paths: string[], db: string, opts: RunOptions & { extra?: string[] } = {}): Promise<SummaryJson & { ran: Ran }> {
  const ran = await runCli(['summary', ...paths, '--db', db, '--json', ...(opts.extra ?? [])], opts);
  if (ran.code !== 0) throw new Error(`summary exited ${ran.code} (${ran.signal ?? 'no signal'}): ${ran.stderr}`);
  return { ...(JSON.parse(ran.stdout) as SummaryJson), ran };
}

/** The token totals of a summary without weight/usd (those are compared with a tolerance). */
export function tokens(t: Totals): Omit<Totals, 'weight' | 'usd'> {
  const { weight: _w, usd: _u, ...rest } = t;
  return rest;
}

/** Skips as `reason → [file basename:line …]`, the shape most assertions want. */
export function skipsByReason(s: SummaryJson): Record<string, { count: number; at: string[] }> {
  const out: Record<string, { count: number; at: string[] }> = {};
  for (const g of s.quality.skipped) {
    out[g.reason] = { count: g.count, at: g.examples.map((e) => (e.line === null ? path.basename(e.file) : `${path.basename(e.file)}:${e.line}`)) };
  }
  return out;
}

export function approx(actual: number | null, expected: number, what: string): void {
  if (actual === null || Math.abs(actual - expected) > 1e-6 * Math.max(1, Math.abs(expected))) {
    throw new Error(`${what}: expected ${expected}, got ${actual}`);
  }
}

/**
 * A hash of everything a process could change under `root`: every entry's relative path, type,
 * mode, size, mtime, symlink target and file content (atime is left out: reading changes it).
 * Returns the hash and the listing, so a failing test can say what changed.
 */
export function treeHash(root: string): { hash: string; entries: string[] } {
  const entries: string[] = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const st = lstatSync(full);
      const rel = path.relative(root, full);
      const head = `${rel} mode=${st.mode.toString(8)} mtime=${st.mtimeMs} size=${st.size}`;
      if (st.isSymbolicLink()) entries.push(`${head} -> ${readlinkSync(full)}`);
      else if (st.isDirectory()) {
        entries.push(`${head} dir`);
        visit(full);
      } else if (st.isFile()) entries.push(`${head} sha256=${createHash('sha256').update(readFileSync(full)).digest('hex')}`);
      else entries.push(`${head} special`);
    }
  };
  const st = lstatSync(root);
  entries.push(`. mode=${st.mode.toString(8)} mtime=${st.mtimeMs}`);
  visit(root);
  return { hash: createHash('sha256').update(entries.join('\n')).digest('hex'), entries };
}

/**
 * A log root holding a bit of every fault this suite knows, next to ordinary sessions (a main
 * chain with a subagent and its meta.json): a half last line, invalid JSON, invalid usage, a BOM,
 * CRLF, an empty file, a directory named x.jsonl, a symlink loop, a dangling link, a FIFO.
 * `names` replaces the project directory, the dangling link's name, a model, the prompt text and
 * a line type (the report test puts payloads there).
 */
export function faultTree(root: string, names: { project?: string; file?: string; model?: string; text?: string; lineType?: string } = {}): string {
  const project = names.project ?? '-work-project';
  const text = names.text ?? 'ok';
  const at = (s: number) => new Date(Date.UTC(2025, 2, 1, 10, 0, s)).toISOString();
  const proj = (rel: string) => path.join(project, rel);
  writeLog(root, proj('0a0a0a0a-0000-4000-8000-000000000001.jsonl'), [
    user(text, { session: 'sess-main', t: at(0) }),
    assistant({ session: 'sess-main', msg: 'msg_1', usage: usage(3, 9, 15_005, 11_442), t: at(1), text }),
    assistant({ session: 'sess-main', msg: 'msg_1', usage: usage(3, 90, 15_005, 11_442), t: at(2), text }),
    JSON.stringify({ type: 'assistant', sessionId: 'sess-main', timestamp: at(3), requestId: 'req_spawn', message: { id: 'msg_spawn', model: MODEL, usage: usage(1, 1, 0, 26_447), content: [{ type: 'tool_use', id: 'toolu_1', name: 'Task', input: { subagent_type: 'Explore', prompt: 'look', name: text } }] } }),
    '{"type":"assistant","message":{"id":"broken"',
    assistant({ session: 'sess-main', msg: 'msg_bad', usage: { ...usage(1, 1, 1, 1), input_tokens: text }, t: at(4) }),
    assistant({ session: 'sess-main', msg: 'msg_model', model: names.model ?? 'claude-unknown-9', usage: usage(5, 5, 5, 5), t: at(5) }),
    JSON.stringify({ type: names.lineType ?? 'hologram', sessionId: 'sess-main', payload: text }),
    assistant({ session: 'sess-main', msg: 'msg_half', usage: usage(7, 7, 7, 7), t: at(6) }).slice(0, 50),
  ].join('\n'));
  writeLog(root, proj('0a0a0a0a-0000-4000-8000-000000000001/subagents/agent-a1.jsonl'), [
    user('look', { session: 'sess-main', t: at(7) }),
    assistant({ session: 'sess-main', msg: 'msg_sub', usage: usage(2, 2, 2_000, 0), t: at(8), extra: { agentId: 'a1', isSidechain: true } }),
  ]);
  writeLog(root, proj('0a0a0a0a-0000-4000-8000-000000000001/subagents/agent-a1.meta.json'), JSON.stringify({ agentType: names.text ?? 'Explore', toolUseId: 'toolu_1' }));
  writeLog(root, proj('bom-crlf.jsonl'), '\ufeff' + [user('hi', { session: 'sess-crlf', t: at(9) }), assistant({ session: 'sess-crlf', msg: 'msg_crlf', usage: usage(1, 2, 3, 4), t: at(10) })].join('\r\n') + '\r\n');
  writeLog(root, proj('empty.jsonl'), '');
  writeLog(root, proj('x.jsonl/inner.jsonl'), [assistant({ session: 'sess-inner', msg: 'msg_inner', usage: usage(10, 0, 0, 0), t: at(11) })]);
  symlinkSync('..', path.join(root, proj('loop')));
  symlinkSync('nowhere.jsonl', path.join(root, proj(`${names.file ?? 'dangling'}.jsonl`)));
  spawnSync('mkfifo', [path.join(root, proj('pipe.jsonl'))]);
  return root;
}

/** Free bytes on the file system that holds `dir` (for the size-bound cases). */
export function freeBytes(dir: string): number {
  const r = spawnSync('df', ['-Pk', dir], { encoding: 'utf8' });
  const cols = r.stdout.trim().split('\n').pop()!.split(/\s+/);
  return Number(cols[3]) * 1024;
}

/** True when the given program runs here (e.g. `setpriv`, `strace`). */
export function has(program: string, args: string[] = ['--version']): boolean {
  const r = spawnSync(program, args, { stdio: 'ignore' });
  return r.status === 0;
}
