/** `--help` of every command and subcommand explains every option it lists: none is a bare flag and its type. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commands } from '../../src/commands/index.js';
import type { Command } from '../../src/commands/command.js';
import { cli } from '../helpers/corpus.js';

function invocations(list: Command[], prefix: string[] = []): string[][] {
  return list.flatMap((c) => {
    const words = [...prefix, c.command.split(' ')[0]!];
    return c.subcommands ? invocations(c.subcommands, words) : [words];
  });
}

test('every option in every command\'s --help has a description', () => {
  for (const words of invocations(commands)) {
    const r = cli([...words, '--help'], { COLUMNS: '100' });
    assert.equal(r.code, 0, r.stderr);
    // an option without a description: the flag, then only spaces up to its [type]
    const bare = r.stdout.split('\n').filter((l) => /^\s+(-\w, )?--[\w-]+\s+\[/.test(l));
    assert.deepEqual(bare, [], `${words.join(' ')} --help`);
  }
});
