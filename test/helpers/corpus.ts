/** Builds small transcript corpora in temp dirs, line by line, for tests whose answer is computed by hand. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir as removedAtExit } from './temp.js';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const REAL_LOGS = resolve(REPO, '../shared/real-logs');

/** Every `.jsonl` below `dir`, depth first, in readdir's order. */
export function transcripts(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return transcripts(p);
    return name.endsWith('.jsonl') ? [p] : [];
  });
}

/** A value through JSON, Maps as entry lists: facts from two readers compare with deepEqual. */
export const plain = (x: unknown) => JSON.parse(JSON.stringify(x, (_k, v) => (v instanceof Map ? [...v] : v)));

export function tempDir(prefix = 'cachelens-test-'): string {
  return removedAtExit(prefix);
}

/** Writes files (path relative to root → lines or raw text) and returns the root. */
export function writeCorpus(files: Record<string, object[] | string>, root = tempDir()): string {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, typeof content === 'string' ? content : content.map((l) => JSON.stringify(l)).join('\n') + '\n');
  }
  return root;
}

export interface UsageSpec {
  in?: number;
  out?: number;
  w5?: number;
  w1h?: number;
  r?: number;
  split?: boolean;
}

export function usage(u: UsageSpec): Record<string, unknown> {
  const w5 = u.w5 ?? 0;
  const w1h = u.w1h ?? 0;
  const base: Record<string, unknown> = {
    input_tokens: u.in ?? 0,
    cache_creation_input_tokens: w5 + w1h,
    cache_read_input_tokens: u.r ?? 0,
    output_tokens: u.out ?? 0,
    service_tier: 'standard',
  };
  if (u.split !== false) base.cache_creation = { ephemeral_5m_input_tokens: w5, ephemeral_1h_input_tokens: w1h };
  return base;
}

export function assistant(o: {
  session: string;
  msg: string;
  req?: string | null;
  t: string;
  model?: string;
  u: UsageSpec;
  agentId?: string;
  content?: object[];
  cwd?: string;
}): Record<string, unknown> {
  const line: Record<string, unknown> = {
    parentUuid: null,
    isSidechain: Boolean(o.agentId),
    userType: 'external',
    cwd: o.cwd ?? '/work/demo',
    sessionId: o.session,
    version: '2.1.39',
    message: {
      model: o.model ?? 'claude-opus-4-6',
      id: o.msg,
      type: 'message',
      role: 'assistant',
      content: o.content ?? [{ type: 'text', text: 'ok' }],
      stop_reason: null,
      usage: usage(o.u),
    },
    type: 'assistant',
    uuid: `${o.msg}-${o.t}`,
    timestamp: o.t,
  };
  if (o.req !== null) line.requestId = o.req ?? `req_${o.msg}`;
  if (o.agentId) line.agentId = o.agentId;
  return line;
}

export function userPrompt(session: string, t: string, text = 'do the thing', agentId?: string, cwd = '/work/demo'): Record<string, unknown> {
  return {
    type: 'user', sessionId: session, timestamp: t, cwd, isSidechain: Boolean(agentId), ...(agentId ? { agentId } : {}),
    message: { role: 'user', content: text }, uuid: `u-${t}`,
  };
}

/** Runs the built CLI (npm test builds dist first). */
export function cli(args: string[], env: NodeJS.ProcessEnv = {}): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(REPO, 'dist/cli.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function summaryJson(paths: string[], extra: string[] = [], env: NodeJS.ProcessEnv = {}): any {
  const r = cli(['summary', ...paths, '--db', ':memory:', '--json', '--timezone', 'UTC', ...extra], env);
  if (r.code !== 0) throw new Error(`cachelens exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
