/**
 * An option's default that `--help` writes in its description as free text, `(default 270)`, is the one a
 * run takes without the flag: the output is the same with the flag given at that value and without it
 * (and another value changes it, so the comparison can tell). --json where it shows the option's effect;
 * anatomy's --top cuts the tables, not the JSON, so its text is compared.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { REPO, cli, tempDir } from '../helpers/corpus.js';

const SAMPLES = join(REPO, 'sample-logs');
const CHANNEL = join(SAMPLES, 'channels/backend.jsonl');
let db = '';

/** The default `--help` of `command` writes for `flag`, as `(default N)` in its description. */
function printedDefault(command: string[], flag: string): string {
  const help = cli([...command, '--help']).stdout;
  const m = new RegExp(`^ +${flag} .*\\(default (\\d+)\\)`, 'm').exec(help);
  assert.ok(m, `${command.join(' ')} --help gives no (default N) for ${flag}`);
  return m[1]!;
}

function run(args: string[]): string {
  const r = cli(args, { CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: '' });
  assert.equal(r.code, 0, `cachelens ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describe('a default --help prints is the one a run takes', () => {
  before(() => {
    db = join(tempDir('cachelens-defaults-'), 'store.duckdb');
    run(['summary', SAMPLES, '--db', db]);
  });

  const logs = () => [SAMPLES, '--db', db, '--timezone', 'UTC'];
  // [command, the rest of its arguments, the flag, another value that changes the output]
  const cases: [string[], () => string[], string, string][] = [
    [['whatif', 'keepalive'], () => [...logs(), '--json'], '--interval', '200'],
    [['whatif', 'keepalive'], () => [...logs(), '--json'], '--ping-in', '3000'],
    [['whatif', 'keepalive'], () => [...logs(), '--json'], '--ping-out', '3000'],
    [['whatif', 'keepalive'], () => [...logs(), '--json'], '--jitter', '0'],
    [['whatif', 'ttl'], () => [...logs(), '--json'], '--jitter', '0'],
    [['anatomy'], () => [...logs(), '--json'], '--jitter', '0'],
    [['anatomy'], () => [...logs(), '--wide'], '--top', '1'],
    [['replay', 'channel'], () => [CHANNEL, '--json'], '--prefix-tokens', '100'],
  ];
  for (const [command, rest, flag, other] of cases) {
    test(`${command.join(' ')} ${flag}`, () => {
      const value = printedDefault(command, flag);
      const without = run([...command, ...rest()]);
      assert.equal(run([...command, ...rest(), flag, value]), without, `${flag} ${value}, the default --help prints, is what a run without it takes`);
      assert.notEqual(run([...command, ...rest(), flag, other]), without, `${flag} ${other} changes the output`);
    });
  }
});
