/**
 * The CLI run on a pseudo-terminal (util-linux's `script`) of a given width, as a user's terminal
 * runs it: the table-fitting tests' one way to see what a terminal shows.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO, tempDir } from './corpus.js';

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * stdout of the CLI run on a pseudo-terminal `cols` wide (stty), its stderr left out; the terminal's CRLF as LF.
 * `stream` 'stderr': its stderr instead, its stdout left out. Fails unless the run exits `status`.
 * Example: onTerminal(['summary', LOGS, '--db', ':memory:'], 80) is summary as an 80-column terminal shows it.
 */
export function onTerminal(args: string[], cols: number, env: NodeJS.ProcessEnv = {}, stream: 'stdout' | 'stderr' = 'stdout', status = 0): string {
  const command = `stty cols ${cols} && ${[process.execPath, join(REPO, 'dist/cli.js'), ...args].map(quote).join(' ')} ${stream === 'stdout' ? '2>/dev/null' : '2>&1 >/dev/null'}`;
  const r = spawnSync('script', ['-qec', command, '/dev/null'], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', HOME: tempDir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.equal(r.error, undefined, 'util-linux script runs the CLI on a pseudo-terminal');
  assert.equal(r.status, status, r.stderr);
  return r.stdout.replace(/\r\n/g, '\n');
}
