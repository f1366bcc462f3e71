import assert from 'node:assert/strict';
import { test } from 'node:test';
import { against, spread } from '../../bench/markdown.js';
import type { Run, Series } from '../../bench/measure.js';

test('a figure judged against a limit never prints as the limit', () => {
  // session 36's warm run: 0.38 s against ccusage's 3.74 s, over the 0.1× target
  assert.equal(against(0.38 / 3.74, 0.1), '0.102×');
  assert.equal(against(0.0996, 0.1), '0.0996×');
  assert.equal(against(0.09996, 0.1), '0.09996×');
  // far from the limit: two decimals, as before
  assert.equal(against(1.713, 1), '1.71×');
  assert.equal(against(0.14, 0.15), '0.14×');
  assert.equal(against(0.28, 1.5, ' s'), '0.28 s');
  // on the limit itself, which meets it
  assert.equal(against(0.1, 0.1), '0.10×');
});

test("a target's measured cell gives the range of the runs that exited 0, for more than one", () => {
  const run = (wallMs: number, status = 0): Run => ({ wallMs, cpuMs: 0, rssKiB: 0, status, stderr: '' });
  const series = (runs: Run[]): Series => ({ label: 'x', runs, wallMs: 0, cpuMs: 0, rssKiB: 0, failed: null });
  // session 38's warm runs
  assert.equal(spread(series([run(420), run(440), run(480)])), ', its runs 0.42 – 0.48 s');
  assert.equal(spread(series([run(105_900)])), '');
  // a failed run is no time
  assert.equal(spread(series([run(420), run(90, 1)])), '');
  assert.equal(spread(series([run(8480), run(12_000), run(9030, 1)])), ', its runs 8.48 – 12.0 s');
});
