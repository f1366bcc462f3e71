import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isMention, pairReplies, parseChannelLog, readChannelLog } from '../../src/replay/channel-log.js';
import { UsageError } from '../../src/errors.js';
import type { ChannelMessage } from '../../src/samples/channel.js';

const msg = (id: string, author: string, text: string, min = 0): ChannelMessage => ({
  id,
  author,
  created_at: new Date(Date.UTC(2025, 2, 11, 10, min)).toISOString(),
  text,
});

test('bad lines are counted with their line and reason; good lines sorted by created_at', () => {
  const text = [
    JSON.stringify(msg('b', 'maya', 'second', 2)),
    '{not json',
    '[1,2]',
    JSON.stringify({ id: 'x', author: 'maya', text: 'no time' }),
    JSON.stringify({ ...msg('y', 'maya', 'bad time'), created_at: 'yesterday' }),
    '',
    JSON.stringify({ ...msg('a', 'jonas', 'first', 1), thread_root_id: 'root' }),
  ].join('\n');
  const log = parseChannelLog(text);
  assert.deepEqual(log.messages.map((m) => m.id), ['a', 'b']);
  assert.equal(log.messages[0]!.thread_root_id, 'root');
  assert.deepEqual(log.skipped.map((s) => [s.line, s.reason]), [
    [2, 'invalid_json'],
    [3, 'not_an_object'],
    [4, 'missing_field'],
    [5, 'bad_timestamp'],
  ]);
});

test('a missing file is a UsageError', async () => {
  await assert.rejects(readChannelLog('/nonexistent/channel.jsonl'), UsageError);
});

test('mentions: the handle as a whole word, never the agent itself', () => {
  assert.ok(isMention(msg('1', 'maya', '@claude can you look?'), '@claude'));
  assert.ok(isMention(msg('2', 'maya', 'thanks (@claude)'), 'claude'));
  assert.ok(!isMention(msg('3', 'maya', 'ask @claudette'), '@claude'));
  assert.ok(!isMention(msg('4', 'maya', 'mail me at ops@claude.dev'), '@claude'));
  assert.ok(!isMention(msg('5', 'claude', 'as @claude I think'), '@claude'));
});

test('each agent message answers the oldest unanswered mention of its thread', () => {
  const ms = [
    msg('m1', 'maya', '@claude one'),
    msg('m2', 'jonas', '@claude two'),
    msg('r1', 'claude', 'answer one'),
    { ...msg('t1', 'maya', '@claude in thread'), thread_root_id: 'm1' },
    msg('r2', 'claude', 'answer two'),
    msg('m3', 'maya', '@claude three'),
  ];
  const replies = pairReplies(ms, [0, 1, 3, 5], '@claude');
  assert.deepEqual(replies.map((r) => r?.id), ['r1', 'r2', undefined, undefined]);
});
