/**
 * "A day later": new responses appended to 1% of the transcripts, and the corpus put back
 * afterwards (truncated to its old sizes, old mtimes restored) so the cache stays reusable.
 *
 * The appended line is a clone of the file's last assistant line with usage, given a new
 * message id, request id and uuid and a timestamp one second later: a response both tools count,
 * shaped like the file's own lines.
 *
 * Example: 1,566 files → every 100th (16 files) gets one new line each per round.
 */
import { appendFileSync, closeSync, openSync, readSync, statSync, truncateSync, utimesSync } from 'node:fs';

export interface Appended {
  path: string;
  size: number;
  atime: Date;
  mtime: Date;
}

const TAIL = 512 * 1024;

export function pickOnePercent(files: string[]): string[] {
  const step = 100;
  const out = files.filter((_f, i) => i % step === step - 1);
  return out.length > 0 ? out : files.slice(0, 1);
}

/** Remembers what `restore` needs; call once, before the first append. */
export function remember(files: string[]): Appended[] {
  return files.map((path) => {
    const st = statSync(path);
    return { path, size: st.size, atime: st.atime, mtime: st.mtime };
  });
}

/** Appends one new response to each file; returns how many lines were appended. */
export function appendRound(files: string[], round: number): number {
  let n = 0;
  for (const path of files) {
    const line = lastUsageLine(path);
    if (!line) continue;
    appendFileSync(path, freshCopy(line, `${round}x${n}`) + '\n');
    n++;
  }
  return n;
}

export function restore(saved: Appended[]): void {
  for (const s of saved) {
    truncateSync(s.path, s.size);
    utimesSync(s.path, s.atime, s.mtime);
  }
}

function lastUsageLine(path: string): string | null {
  const size = statSync(path).size;
  const n = Math.min(TAIL, size);
  const buf = Buffer.allocUnsafe(n);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, n, size - n);
  } finally {
    closeSync(fd);
  }
  if (buf[n - 1] !== 0x0a) return null; // a half-written last line: appending would complete it
  const lines = buf.toString('utf8').split('\n');
  for (let i = lines.length - 1; i > 0; i--) {
    const l = lines[i];
    if (l.includes('"type":"assistant"') && l.includes('"usage"') && l.includes('"id":"msg_') && !l.includes('"<synthetic>"')) return l;
  }
  return null;
}

function freshCopy(line: string, tag: string): string {
  return line
    .replace(/"id":"msg_[^"]*"/, `"id":"msg_bench${tag}"`)
    .replace(/"requestId":"[^"]*"/, `"requestId":"req_bench${tag}"`)
    .replace(/"uuid":"[^"]*"/, `"uuid":"bench-${tag}"`)
    .replace(/"timestamp":"([^"]+)"/, (_m, ts: string) => `"timestamp":"${new Date(Date.parse(ts) + 1000).toISOString()}"`);
}
