/**
 * The session replay's work lets the event loop turn (src/replay/pauses.ts): the progress line's
 * `analysing…` seconds are a timer, and Ctrl-C's handler runs only when the loop turns.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pauses } from '../../src/replay/pauses.js';
import { pickChain, replayChain } from '../../src/replay/session-replay.js';
import { readSessionTranscript } from '../../src/replay/session-transcript.js';
import { SegmentTokenizer } from '../../src/replay/tokenizer.js';
import { SKILLS, writeSession } from './session-fixture.js';

test('pauses: nothing until the work has gone on for the interval, then a turn of the loop, counted from the last', async () => {
  let t = 0;
  const pause = pauses(100, () => t);
  t = 99;
  assert.equal(pause(), undefined);
  t = 100;
  let ran = false;
  setImmediate(() => (ran = true));
  const p = pause();
  assert.ok(p instanceof Promise);
  await p;
  assert.ok(ran, 'what was waiting for the loop ran before the work went on');
  t = 199;
  assert.equal(pause(), undefined);
  t = 200;
  assert.ok(pause() instanceof Promise);
});

test('a session replay lets the loop turn as it works, and its result is the same', async () => {
  const chain = pickChain((await readSessionTranscript(writeSession({ rounds: 3, attachment: { type: 'skill_listing', content: SKILLS } }))).chains);
  // (each replay its own tokenizer: the work it counts is in the result)
  const [tok, other] = [await SegmentTokenizer.load('cl100k_base'), await SegmentTokenizer.load('cl100k_base')];
  // the loop's turns while the replay runs: a chain of immediates (none while it holds the thread)
  let turns = 0;
  let replaying = true;
  const count = () => {
    if (!replaying) return;
    turns++;
    setImmediate(count);
  };
  setImmediate(count);
  let asked = 0;
  const paused = await replayChain(chain, {
    tokenizer: tok,
    // a pause at every item and event
    pause: () => {
      asked++;
      return new Promise((resolve) => setImmediate(resolve));
    },
  });
  replaying = false;
  // before, the replay held the thread from its start to its end: no turn
  assert.ok(asked > 0 && turns > 0, `asked ${asked}, turns ${turns}`);
  const held = await replayChain(chain, { tokenizer: other, pause: () => undefined });
  assert.deepEqual(paused, held);
});
