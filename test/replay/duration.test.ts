import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDurationMinutes } from '../../src/replay/duration.js';
import { UsageError } from '../../src/errors.js';

test('durations: s, m, h; a bare number is minutes; anything else is a UsageError', () => {
  assert.equal(parseDurationMinutes('30m'), 30);
  assert.equal(parseDurationMinutes('1h'), 60);
  assert.equal(parseDurationMinutes('90s'), 1.5);
  assert.equal(parseDurationMinutes('45'), 45);
  assert.throws(() => parseDurationMinutes('0m'), UsageError);
  assert.throws(() => parseDurationMinutes('soon'), UsageError);
  assert.throws(() => parseDurationMinutes('-5m'), UsageError);
});

test('a bad duration names its flag, as every other flag\'s error does', () => {
  // it said `invalid duration "5x"`, without the flag
  assert.throws(() => parseDurationMinutes('5x'), { name: 'UsageError', message: '--idle-reap 5x: expected a duration above 0 such as 90s, 30m or 1h (a bare number is minutes)' });
});

test('a duration too long to be a number of milliseconds is a UsageError, not Infinity', async () => {
  // 400 nines of hours: Number() gives Infinity; the replay ran as "idle reap after Infinity min",
  // its JSON saying idle_reap_minutes null (off)
  const long = `${'9'.repeat(400)}h`;
  assert.throws(() => parseDurationMinutes(long), { name: 'UsageError', message: new RegExp(`^--idle-reap ${long}: expected a duration above 0`) });
  assert.throws(() => parseDurationMinutes(`${'9'.repeat(306)}h`), UsageError);
  assert.equal(parseDurationMinutes('1000000h'), 60_000_000);
  const { runChannelReplay } = await import('../../src/replay/channel-replay.js');
  await assert.rejects(runChannelReplay({ messages: [], idleReapMinutes: Infinity }), { name: 'UsageError', message: /--idle-reap must be a positive, finite duration/ });
});
