/**
 * The three contestants, as commands over the same corpus: cachelens (the built CLI, dist/),
 * ccusage 20.0.24 (`ccusage daily --offline --json`, the devDependency) and `cat` of every
 * transcript (the machine's limit for reading the bytes). Both usage tools find the logs the
 * same way: CLAUDE_CONFIG_DIR pointing at the corpus.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Corpus } from './corpus.js';
import type { Cmd } from './measure.js';

export interface Tools {
  repo: string;
  cli: string;
  ccusage: string;
  /** commands the built CLI offers now (others are still being built) */
  has: { report: boolean; replayChannel: boolean; replaySession: boolean };
}

export function findTools(repo: string): Tools {
  const cli = join(repo, 'dist/cli.js');
  const help = (args: string[]) => spawnSync(process.execPath, [cli, ...args, '--help'], { encoding: 'utf8' }).stdout ?? '';
  const top = help([]);
  const replay = /^\s+cachelens replay\b/m.test(top) ? help(['replay']) : '';
  return {
    repo,
    cli,
    ccusage: join(repo, 'node_modules/.bin/ccusage'),
    has: {
      report: /^\s+cachelens report\b/m.test(top),
      replayChannel: /^\s+cachelens replay channel\b/m.test(replay),
      replaySession: /^\s+cachelens replay session\b/m.test(replay),
    },
  };
}

function env(c: Corpus): NodeJS.ProcessEnv {
  return { ...process.env, CLAUDE_CONFIG_DIR: c.root, NO_COLOR: '1' };
}

export function cachelensSummary(t: Tools, c: Corpus, db: string, stdoutFile?: string): Cmd {
  return { label: 'cachelens summary', argv: [process.execPath, t.cli, 'summary', '--db', db, '--json'], env: env(c), stdoutFile };
}

export function ccusageDaily(t: Tools, c: Corpus, stdoutFile?: string): Cmd {
  return { label: 'ccusage daily', argv: [t.ccusage, 'daily', '--offline', '--json'], env: env(c), stdoutFile };
}

export function catAll(c: Corpus): Cmd {
  return { label: 'cat', argv: ['sh', '-c', `find "${c.root}/projects" -name '*.jsonl' -print0 | xargs -0 cat > /dev/null`] };
}

export function cachelensReport(t: Tools, c: Corpus, db: string, out: string): Cmd {
  return { label: 'cachelens report', argv: [process.execPath, t.cli, 'report', '--db', db, '--out', out], env: env(c) };
}

export function channelReplay(t: Tools, channel: string): Cmd {
  return { label: 'cachelens replay channel', argv: [process.execPath, t.cli, 'replay', 'channel', channel, '--json'], env: { ...process.env, NO_COLOR: '1' } };
}

export function sessionReplay(t: Tools, session: string): Cmd {
  return { label: 'cachelens replay session', argv: [process.execPath, t.cli, 'replay', 'session', session, '--db', ':memory:', '--json'], env: { ...process.env, NO_COLOR: '1' } };
}

export function versions(t: Tools): Record<string, string> {
  const pkg = (p: string) => (JSON.parse(readFileSync(join(t.repo, p), 'utf8')) as { version: string }).version;
  const git = spawnSync('git', ['describe', '--always', '--dirty'], { cwd: t.repo, encoding: 'utf8' }).stdout.trim();
  return {
    cachelens: `${pkg('package.json')} (${git})`,
    ccusage: pkg('node_modules/ccusage/package.json'),
    '@duckdb/node-api': pkg('node_modules/@duckdb/node-api/package.json'),
    node: process.version,
  };
}
