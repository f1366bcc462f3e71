/**
 * The built CLI's start (scripts/bundle.mjs): what its modules do when loaded is paid by every run
 * of every command. yargs measures text with `string-width` only to lay out help and error text;
 * the bundle loads it on first use, so a run that prints no help never builds its `\p{RGI_Emoji}`
 * expression (14 – 21 ms to construct here).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO, tempDir } from '../helpers/corpus.js';

/** Runs the built CLI with RegExp counted: how many expressions naming RGI_Emoji it constructed. */
function run(args: string[]): { code: number; stdout: string; stderr: string; emoji: number } {
  const dir = tempDir('cachelens-bundle-');
  const preload = join(dir, 'count-regexps.mjs');
  writeFileSync(
    preload,
    `const Native = RegExp;
let emoji = 0;
globalThis.RegExp = new Proxy(Native, {
  construct(target, args, newTarget) {
    if (String(args[0]).includes('RGI_Emoji')) emoji++;
    return Reflect.construct(target, args, newTarget === globalThis.RegExp ? target : newTarget);
  },
});
process.on('exit', () => process.stderr.write('\\nRGI_Emoji expressions: ' + emoji + '\\n'));
`,
  );
  const r = spawnSync(process.execPath, ['--import', preload, join(REPO, 'dist/cli.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', HOME: dir, CLAUDE_CONFIG_DIR: '' },
  });
  const m = /RGI_Emoji expressions: (\d+)/.exec(r.stderr);
  assert.ok(m, `the count was printed: ${r.stderr}`);
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, emoji: Number(m[1]) };
}

test('a command that prints no help never loads string-width; help text still lays out with it', () => {
  const summary = run(['summary', join(REPO, 'sample-logs'), '--db', ':memory:', '--json']);
  assert.equal(summary.code, 0, summary.stderr);
  assert.ok(JSON.parse(summary.stdout).totals.requests > 200);
  assert.equal(summary.emoji, 0, 'string-width was loaded by a run that printed no help');

  const help = run(['summary', '--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.ok(help.emoji > 0, 'help is laid out by string-width, loaded when first asked');
  // the options' descriptions come in a column of their own, as string-width measured them
  const described = help.stdout.split('\n').filter((l) => /^\s+--db\b/.test(l));
  assert.equal(described.length, 1, help.stdout);
  assert.match(described[0], /^\s+--db\s{2,}\S/);
});
