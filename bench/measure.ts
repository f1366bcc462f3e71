/**
 * One timed run of a command: wall time from our clock, peak RSS and CPU time from GNU time
 * (`/usr/bin/time -f`), which reports the largest resident set of the process and every
 * descendant it waited for (ccusage's launcher and its native binary, our worker threads).
 */
import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface Cmd {
  /** what the table calls it */
  label: string;
  argv: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** where stdout goes (default: discarded) */
  stdoutFile?: string;
}

export interface Run {
  wallMs: number;
  cpuMs: number;
  rssKiB: number;
  status: number;
  stderr: string;
}

export interface Series {
  label: string;
  runs: Run[];
  wallMs: number;
  cpuMs: number;
  rssKiB: number;
  failed: string | null;
}

const GNU_TIME = '/usr/bin/time';

export function hasGnuTime(): boolean {
  return existsSync(GNU_TIME);
}

export async function runOnce(cmd: Cmd, scratch: string): Promise<Run> {
  const timeFile = join(scratch, 'time.out');
  rmSync(timeFile, { force: true });
  const out = cmd.stdoutFile ? openSync(cmd.stdoutFile, 'w') : 'ignore';
  const argv = hasGnuTime() ? [GNU_TIME, '-f', '%M %U %S', '-o', timeFile, ...cmd.argv] : cmd.argv;
  const t0 = process.hrtime.bigint();
  const { status, stderr } = await new Promise<{ status: number; stderr: string }>((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { env: cmd.env ?? process.env, cwd: cmd.cwd, stdio: ['ignore', out, 'pipe'] });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (err.length < 4000) err += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? 1, stderr: err }));
  });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (typeof out === 'number') closeSync(out);
  let rssKiB = 0;
  let cpuMs = 0;
  if (existsSync(timeFile)) {
    // GNU time prints "Command exited with non-zero status N" first when the command fails
    const last = readFileSync(timeFile, 'utf8').trim().split('\n').pop() ?? '';
    const [rss, user, sys] = last.split(/\s+/).map(Number);
    rssKiB = rss || 0;
    cpuMs = ((user || 0) + (sys || 0)) * 1000;
  }
  return { wallMs, cpuMs, rssKiB, status, stderr };
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Medians of the runs; a series with a failed run is marked failed (its numbers are not used). */
export function summarize(label: string, runs: Run[]): Series {
  const bad = runs.find((r) => r.status !== 0);
  return {
    label,
    runs,
    wallMs: median(runs.map((r) => r.wallMs)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    rssKiB: Math.max(...runs.map((r) => r.rssKiB)),
    failed: bad ? `exit ${bad.status}: ${bad.stderr.trim().split('\n').slice(-1)[0] ?? ''}`.slice(0, 200) : null,
  };
}
