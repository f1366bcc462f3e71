/**
 * Threaded channels (SPEC §6.1): a mention in a thread reads that thread (its root first), a
 * top-level mention reads the top level (roots included); one process answers in every thread,
 * each thread with its own watermark. Expected figures worked out by hand from a 22-message log.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/temp.js';
import type { ChannelMessage } from '../../src/samples/channel.js';
import { rowLine } from '../../src/replay/render.js';
import { runChannelReplay, SegmentTokenizer, type ChannelReplayResult } from '../../src/replay/index.js';

const at = (min: number) => `2026-03-11T09:${String(min).padStart(2, '0')}:00Z`;
const msg = (id: string, author: string, min: number, text: string, thread?: string): ChannelMessage =>
  thread === undefined ? { id, author, created_at: at(min), text } : { id, author, created_at: at(min), text, thread_root_id: thread };

// top level: r1 R r2 M1 A1 U r3 M3 A3 M5 A5 · thread R: T1 T2 M2 A2 T3 T4 M4 A4 T5 · thread U
// (never mentioned): U1 U2. Mentions M1 (top), M2 (R), M3 (top), M4 (R), M5 (top).
const THREADED: ChannelMessage[] = [
  msg('r1', 'maya', 0, 'deploy failed on staging'),
  msg('R', 'alex', 1, 'migration plan for the orders table, details in thread'),
  msg('r2', 'maya', 2, 'anyone looked at the logs?'),
  msg('M1', 'priya', 3, '@claude what broke the deploy?'),
  msg('A1', 'claude', 4, 'the migration step timed out'),
  msg('T1', 'alex', 5, 'step one: add the column', 'R'),
  msg('T2', 'sam', 6, 'step two: backfill', 'R'),
  msg('M2', 'priya', 7, '@claude is this plan safe?', 'R'),
  msg('A2', 'claude', 8, 'yes, but batch the backfill', 'R'),
  msg('U', 'sam', 9, 'on-call swap next week?'),
  msg('U1', 'ben', 10, 'I can take Tuesday', 'U'),
  msg('U2', 'sam', 11, 'thanks', 'U'),
  msg('T3', 'alex', 12, 'batching at 1k rows', 'R'),
  msg('r3', 'maya', 13, 'deploy green now'),
  msg('M3', 'priya', 14, '@claude anything else to check?'),
  msg('A3', 'claude', 15, 'watch the error rate for an hour'),
  msg('T4', 'sam', 16, 'backfill done', 'R'),
  msg('M4', 'priya', 17, '@claude confirm the backfill finished?', 'R'),
  msg('A4', 'claude', 18, 'confirmed, counts match', 'R'),
  msg('T5', 'alex', 19, 'dropping the old column tomorrow', 'R'),
  msg('M5', 'priya', 20, '@claude summary for the standup?'),
  msg('A5', 'claude', 21, 'deploy fixed, backfill done'),
];

const tokP = SegmentTokenizer.load('cl100k_base');
/** tokens of the rows' lines, as the replay counts them */
async function tokensOf(ids: string[]): Promise<number> {
  const tok = await tokP;
  const byId = new Map(THREADED.map((m) => [m.id, m]));
  return ids.reduce((n, id) => n + tok.segment(rowLine(byId.get(id)!, 'claude') + '\n').tokens.length, 0);
}
const turns = (r: ChannelReplayResult, s: string) => r.turns.filter((t) => t.strategy === s);

test('threads: each mention reads its own stream; the watermark is per thread', async () => {
  const r = await runChannelReplay({ messages: THREADED });
  // watermark: M1 r1 R r2 · M2 R T1 T2 (first contact in R) · M3 M1 A1 U r3 · M4 M2 A2 T3 T4 · M5 M3 A3
  assert.deepEqual(turns(r, 'watermark').map((t) => [t.rows, t.header]), [
    [3, 'first_contact'],
    [3, 'first_contact'],
    [4, 'watermark'],
    [4, 'watermark'],
    [2, 'watermark'],
  ]);
  assert.deepEqual(turns(r, 'watermark').map((t) => t.context_tokens), [
    await tokensOf(['r1', 'R', 'r2']),
    await tokensOf(['R', 'T1', 'T2']),
    await tokensOf(['M1', 'A1', 'U', 'r3']),
    await tokensOf(['M2', 'A2', 'T3', 'T4']),
    await tokensOf(['M3', 'A3']),
  ]);
  // window: the same streams, never narrowed: 3, 3, 7 (r1…r3), 7 (R…T4), 9 (r1…A3)
  assert.deepEqual(turns(r, 'window').map((t) => t.rows), [3, 3, 7, 7, 9]);
  assert.equal(r.strategies.window!.rows_sent, 29);
  assert.equal(r.strategies.watermark!.rows_sent, 16);
});

test('threads (a): a root shown in the channel block and again in its thread is already seen (same process)', async () => {
  const r = await runChannelReplay({ messages: THREADED });
  const root = await tokensOf(['R']);
  // M2's thread block opens with R, which M1's top-level block showed to the same native process:
  // already seen by SPEC's definition (rows shown earlier to the same native process, whatever the
  // block), though R's thread watermark is new. It is the only already-seen row under watermark.
  assert.deepEqual(turns(r, 'watermark').map((t) => t.already_seen_tokens), [0, root, 0, 0, 0]);
  assert.equal(r.strategies.watermark!.already_seen_tokens, root);
  assert.equal(r.strategies.unstable!.already_seen_tokens, root);
  // window: R at M2; r1 R r2 at M3; R T1 T2 at M4; r1 R r2 M1 A1 U r3 at M5
  assert.deepEqual(turns(r, 'window').map((t) => t.already_seen_tokens), [
    0,
    root,
    await tokensOf(['r1', 'R', 'r2']),
    await tokensOf(['R', 'T1', 'T2']),
    await tokensOf(['r1', 'R', 'r2', 'M1', 'A1', 'U', 'r3']),
  ]);
  // evicted before M2: a new process, which never saw R: re-sent, not already seen
  const e = await runChannelReplay({ messages: THREADED, evictAt: 2, strategies: ['watermark'] });
  const t2 = turns(e, 'watermark')[1]!;
  assert.equal(t2.already_seen_tokens, 0);
  assert.equal(t2.reshown_tokens, root);
});

test('threads (b): replies in an unmentioned thread, or after a thread\'s last mention, are not rows never shown', async () => {
  const r = await runChannelReplay({ messages: THREADED });
  // U1, U2 (thread U, never mentioned) and T5 (after M4, R's last mention) were never shown, but
  // no turn reads them: none is a loss of any strategy
  for (const s of ['window', 'watermark', 'unstable'] as const) assert.equal(r.strategies[s]!.rows_never_shown, 0, s);
});

test('threads (b): a burst of more than 12 between two mentions in one thread is counted', async () => {
  const replies = Array.from({ length: 14 }, (_, i) => msg(`b${i + 1}`, i % 2 ? 'sam' : 'alex', 2 + i, `reply ${i + 1}`, 'X'));
  const messages = [msg('X', 'maya', 0, 'incident review'), msg('Ma', 'priya', 1, '@claude start the timeline', 'X'), ...replies, msg('Mb', 'priya', 20, '@claude what did we miss?', 'X')];
  const r = await runChannelReplay({ messages });
  // Mb: window shows b3…b14 (the newest 12 of X Ma b1…b14); watermark (R: {X}) the same → b1, b2
  for (const s of ['window', 'watermark', 'unstable'] as const) assert.equal(r.strategies[s]!.rows_never_shown, 2, s);
});

test('a root whose thread_root_id is its own id (Slack\'s thread_ts on a parent) is a top-level message, as without one', async () => {
  // it was read as a thread of its own: a root mention got no channel rows at all, and the root left every top-level block
  const roots = new Set(['R', 'U', 'M1']);
  const file = join(tempDir('cachelens-threads-'), 'c.jsonl');
  writeFileSync(file, THREADED.map((m) => JSON.stringify(roots.has(m.id) ? { ...m, thread_root_id: m.id } : m)).join('\n') + '\n');
  const fromFile = await runChannelReplay({ file, channel: 'channel' });
  const plain = await runChannelReplay({ messages: THREADED });
  assert.deepEqual(fromFile.channel.skipped_lines, []);
  const shape = (r: ChannelReplayResult) => r.turns.map((t) => [t.strategy, t.message_id, t.rows, t.header, t.context_tokens, t.input_tokens]);
  assert.deepEqual(shape(fromFile), shape(plain));
  assert.deepEqual(turns(fromFile, 'watermark').map((t) => t.rows), [3, 3, 4, 4, 2]);
});
