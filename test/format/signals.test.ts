/**
 * Ctrl-C while the progress line is shown (src/format/signals.ts): the line is erased and the
 * signal ends the run, also when it came while the thread was busy and the line went before the
 * event loop turned (the handler, taken off at once, lost it: the run went on and ended 0).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { REPO } from '../helpers/corpus.js';
import { signalWatch } from '../../src/format/signals.js';

/** A child that shows a line, gets SIGINT while busy, erases the line and waits: from `where` the work ran. */
function child(where: 'main' | 'io' | 'immediate' | 'timer'): { status: number | null; signal: NodeJS.Signals | null; stdout: string } {
  const src = `
    import { readFile } from 'node:fs';
    import { signalWatch } from './src/format/signals.ts';
    const watch = signalWatch(() => process.stdout.write('erased\\n'));
    const busy = () => {
      watch(true);
      process.kill(process.pid, 'SIGINT');
      const end = Date.now() + 100;
      while (Date.now() < end) {}
      watch(false);
      setTimeout(() => process.stdout.write('went on\\n'), 500);
    };
    const where = ${JSON.stringify(where)};
    if (where === 'io') readFile('package.json', busy);
    else if (where === 'immediate') setImmediate(busy);
    else if (where === 'timer') setTimeout(busy, 1);
    else busy();`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', src], { cwd: REPO, encoding: 'utf8' });
  return { status: r.status, signal: r.signal, stdout: r.stdout };
}

test('a SIGINT that came while the thread was busy, the line then erased, still ends the run by that signal', () => {
  for (const where of ['main', 'io', 'immediate', 'timer'] as const) {
    const r = child(where);
    assert.deepEqual([r.signal, r.stdout], ['SIGINT', 'erased\n'], `busy in ${where}: ${JSON.stringify(r)}`);
  }
});

test('signalWatch: handlers on while shown, off two turns of the loop after, and once however often the line comes and goes', async () => {
  const before = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
  const watch = signalWatch(() => {});
  const count = () => [process.listenerCount('SIGINT') - before[0]!, process.listenerCount('SIGTERM') - before[1]!];
  watch(true);
  watch(true);
  assert.deepEqual(count(), [1, 1]);
  watch(false);
  assert.deepEqual(count(), [1, 1], 'still on until the loop has turned');
  watch(true);
  watch(false);
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  await turn();
  await turn();
  await turn();
  assert.deepEqual(count(), [0, 0], 'off, and no handler left behind');
});
