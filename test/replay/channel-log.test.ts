import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isMention, pairReplies, parseChannelLog, readChannelLog } from '../../src/replay/channel-log.js';
import { writeFileSync } from 'node:fs';
import { tempDir } from '../helpers/temp.js';
import path from 'node:path';
import { UsageError } from '../../src/errors.js';
import { generateChannelWithAnswers, type ChannelMessage } from '../../src/samples/channel.js';

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

test('a skip says what was there: a field of another type is not a missing one, an array or null is not an object', () => {
  // an id of 1 read 'missing_field: id' (as if the line had none), '[1,2]' and 'null' read 'not_an_object: object'
  const text = [
    JSON.stringify({ ...msg('a', 'maya', 'x'), id: 1 }),
    JSON.stringify({ ...msg('b', 'maya', 'x'), author: null }),
    JSON.stringify({ ...msg('c', 'maya', 'x'), text: ['x'] }),
    JSON.stringify({ id: 'd', author: 'maya', text: 'x' }),
    '[1,2]',
    'null',
    '"text"',
  ].join('\n');
  assert.deepEqual(parseChannelLog(text).skipped.map((s) => [s.reason, s.detail]), [
    ['missing_field', 'id (number, expected a string)'],
    ['missing_field', 'author (null, expected a string)'],
    ['missing_field', 'text (an array, expected a string)'],
    ['missing_field', 'created_at'],
    ['not_an_object', 'an array'],
    ['not_an_object', 'null'],
    ['not_an_object', 'string'],
  ]);
});

test('created_at must be an ISO 8601 instant with its offset: the same replay on every machine', () => {
  const at = (created_at: string, id = created_at) => JSON.stringify({ id, author: 'maya', created_at, text: 'x' });
  const good = ['2025-03-11T09:03:00Z', '2025-03-11T09:03:00.123Z', '2025-03-11T10:03:00+01:00', '2025-03-11 09:03Z', '2025-03-11T11:03:00+0200'];
  const bad = ['hello 2', '1', '2025-02-30T00:00:00Z', '2025-03-11T09:03:00', '2025-03-11', 'March 11, 2025 09:03 UTC', '2025-03-11T24:00:00Z'];
  const log = parseChannelLog([...good, ...bad].map((x) => at(x)).join('\n'));
  assert.deepEqual(log.messages.map((m) => m.id).sort(), [...good].sort());
  assert.deepEqual(log.skipped.map((s) => [s.line, s.reason]), bad.map((_, i) => [good.length + i + 1, 'bad_timestamp']));
});

test('a byte-order mark before the first line, and CRLF line ends, are no part of the JSON', async () => {
  const dir = tempDir('cachelens-channel-');
  const file = path.join(dir, 'c.jsonl');
  writeFileSync(file, '\ufeff' + JSON.stringify(msg('a', 'maya', 'one')) + '\r\n' + JSON.stringify(msg('b', 'maya', 'two', 1)) + '\r\n');
  const log = await readChannelLog(file);
  assert.deepEqual(log.messages.map((m) => m.id), ['a', 'b']);
  assert.deepEqual(log.skipped, []);
  assert.deepEqual(parseChannelLog('\ufeff' + JSON.stringify(msg('a', 'maya', 'one'))).messages.map((m) => m.id), ['a']);
  // two exports joined (`cat a.jsonl b.jsonl`): b's mark starts a line inside the file (it was an invalid_json skip)
  const joined = path.join(dir, 'joined.jsonl');
  writeFileSync(joined, '\ufeff' + JSON.stringify(msg('a', 'maya', 'one')) + '\r\n' + '\ufeff' + JSON.stringify(msg('b', 'maya', 'two', 1)) + '\r\n');
  const both = await readChannelLog(joined);
  assert.deepEqual(both.messages.map((m) => m.id), ['a', 'b']);
  assert.deepEqual(both.skipped, []);
});

test('a line over the limit is a counted skip; the lines around it are read', async () => {
  const dir = tempDir('cachelens-channel-');
  const file = path.join(dir, 'c.jsonl');
  const huge = JSON.stringify(msg('big', 'maya', 'y'.repeat(5_000)));
  // two ids: a second message with an id is a duplicate_id skip
  writeFileSync(file, [JSON.stringify(msg('a', 'maya', 'one')), huge, JSON.stringify(msg('b', 'maya', 'two', 1)), huge.replace('"big"', '"big2"')].join('\n'));
  const log = await readChannelLog(file, 4_096);
  assert.deepEqual(log.messages.map((m) => m.id), ['a', 'b']);
  assert.deepEqual(log.skipped.map((s) => [s.line, s.reason]), [[2, 'line_too_long'], [4, 'line_too_long']]);
  // under the limit, the same file is read whole
  assert.equal((await readChannelLog(file)).messages.length, 4);
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

test('mentions are read as chat apps read handles: any case, the whole handle, punctuation after it ends it', () => {
  const yes = ['@Claude can you look?', 'ping @CLAUDE', 'thanks @claude.', 'thanks @claude...', '@claude, one more', '@claude: see above', '(@claude)', '"@claude"', 'cc @claude!', '@claude?', 'hey-@claude', '@claude-', '@claude.\nnext line'];
  const no = ['@claude.bot can you look?', 'ask @claude-dev', 'ask @claude_2', 'ask @claude2', '@claudé', '@claude.x', 'ask @claude--dev', 'a_@claude', 'é@claude', '@@claude'];
  for (const t of yes) assert.ok(isMention(msg('y', 'maya', t), '@claude'), `${JSON.stringify(t)} mentions @claude`);
  for (const t of no) assert.ok(!isMention(msg('n', 'maya', t), '@claude'), `${JSON.stringify(t)} does not mention @claude`);
  // the handle given in any case matches too, and a dotted handle is matched whole
  assert.ok(isMention(msg('1', 'maya', '@claude hi'), '@Claude'));
  assert.ok(isMention(msg('2', 'maya', 'ask @claude.bot.'), '@claude.bot'));
  assert.ok(!isMention(msg('3', 'maya', 'ask @claude.bots'), '@claude.bot'));
});

test('a handle with regex metacharacters is matched literally', () => {
  assert.ok(isMention(msg('1', 'maya', 'hi @c++, look'), '@c++'));
  assert.ok(!isMention(msg('2', 'maya', 'hi @cc, look'), '@c++'));
  assert.ok(isMention(msg('3', 'maya', 'hi @a.b'), '@a.b'));
  assert.ok(!isMention(msg('4', 'maya', 'hi @axb'), '@a.b'));
  assert.ok(isMention(msg('5', 'maya', 'hi @x(y) there'), '@x(y)'));
  assert.ok(!isMention(msg('6', 'maya', 'hi @xy there'), '@x(y)'));
  assert.ok(!isMention(msg('7', 'maya', 'hi @x there'), '@x(y)'));
  for (const h of ['@[', '@(', '@\\', '@a|b', '@.*', '@$', '@^x', '@{2}']) assert.doesNotThrow(() => isMention(msg('8', 'maya', `x ${h} y`), h), h);
  assert.ok(!isMention(msg('9', 'maya', 'hi @anything'), '@.*'));
  assert.ok(isMention(msg('10', 'maya', 'hi @.*'), '@.*'));
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

test('an agent message in a thread with no open mention answers the thread\'s root mention', () => {
  const ms = [
    msg('m1', 'maya', '@claude why is the deploy stuck?'),
    { ...msg('a1', 'claude', 'the migration holds a lock'), thread_root_id: 'm1' },
    { ...msg('m2', 'maya', '@claude can we kill it?'), thread_root_id: 'm1' },
    { ...msg('a2', 'claude', 'yes'), thread_root_id: 'm1' },
    msg('m3', 'jonas', '@claude and the cache?'),
    msg('a3', 'claude', 'warm again'),
  ];
  // m1 ↦ a1 (in its thread), m2 ↦ a2, and m1 answered leaves the top level's queue: m3 ↦ a3
  assert.deepEqual(pairReplies(ms, [0, 2, 4], '@claude').map((r) => r?.id), ['a1', 'a2', 'a3']);
  // a thread reply with its own open mention still answers that one first
  const open = [ms[0]!, ms[2]!, ms[1]!];
  assert.deepEqual(pairReplies(open, [0, 1], '@claude').map((r) => r?.id), [undefined, 'a1']);
});

/** A message at hh:mm on one day, optionally in a thread. */
const at = (id: string, author: string, text: string, hh: number, mm: number, thread?: string): ChannelMessage => ({
  id,
  author,
  created_at: new Date(Date.UTC(2025, 2, 11, hh, mm)).toISOString(),
  text,
  ...(thread === undefined ? {} : { thread_root_id: thread }),
});
const mentionsOf = (ms: ChannelMessage[]) => ms.flatMap((m, i) => (isMention(m, '@claude') ? [i] : []));
const paired = (ms: ChannelMessage[]) => pairReplies(ms, mentionsOf(ms), '@claude').map((r) => r?.id);

test('one unanswered mention does not shift later replies: the reply after a mention is its answer', () => {
  // M1 at 09:00 never answered, M2 at 14:00, R at 14:01: R answers M2 (it was M1's, and M2 got a stand-in)
  const cascade = [at('M1', 'maya', '@claude one?', 9, 0), at('x', 'jonas', 'lunch', 12, 0), at('M2', 'priya', '@claude two?', 14, 0), at('R', 'claude', 'two.', 14, 1)];
  assert.deepEqual(paired(cascade), [undefined, 'R']);
  // and the stream goes on right: M3 ↦ R3, not M2 ↦ R3
  const more = [...cascade, at('M3', 'maya', '@claude three?', 15, 0), at('R3', 'claude', 'three.', 15, 2)];
  assert.deepEqual(paired(more), [undefined, 'R', 'R3']);
});

test('a queue stays a queue: two mentions then two replies pair in order', () => {
  const ms = [at('m1', 'maya', '@claude one?', 9, 0), at('m2', 'jonas', '@claude two?', 9, 1), at('c', 'maya', 'thanks in advance', 9, 1), at('r1', 'claude', 'one.', 9, 2), at('r2', 'claude', 'two.', 9, 3)];
  assert.deepEqual(paired(ms), ['r1', 'r2']);
  // an unanswered mention hours before the burst is left out, not given the burst's first answer
  const after = [at('m0', 'aiko', '@claude zero?', 7, 0), ...ms];
  assert.deepEqual(paired(after), [undefined, 'r1', 'r2']);
});

test('a mention answered hours later with no other mention between still pairs; a follow-up answers nothing', () => {
  const late = [at('m1', 'maya', '@claude one?', 9, 0), at('x', 'jonas', 'anyone?', 11, 0), at('r', 'claude', 'one, sorry for the wait.', 14, 0)];
  assert.deepEqual(paired(late), ['r']);
  const twoParts = [...late, at('r2', 'claude', 'and a detail.', 14, 1), at('m2', 'maya', '@claude two?', 15, 0), at('r3', 'claude', 'two.', 15, 1)];
  assert.deepEqual(paired(twoParts), ['r', 'r3']);
});

test('a reply in a thread under a mention answers it; a thread\'s own mentions pair within the thread', () => {
  // M0 at the top level, answered in its thread; M1 at the top level never answered; M2 answered at the top level
  const ms = [
    at('M0', 'maya', '@claude deploy stuck?', 9, 0),
    at('A0', 'claude', 'a lock.', 9, 2, 'M0'),
    at('M1', 'jonas', '@claude cache?', 10, 0),
    at('T1', 'maya', '@claude can we kill it?', 10, 30, 'M0'),
    at('M2', 'priya', '@claude CI?', 11, 0),
    at('A2', 'claude', 'green.', 11, 1),
    at('AT', 'claude', 'yes.', 11, 2, 'M0'),
  ];
  assert.deepEqual(paired(ms), ['A0', undefined, 'AT', 'A2']);
  // a root answered at the top level is not answered again in its thread
  const top = [at('M0', 'maya', '@claude deploy?', 9, 0), at('A0', 'claude', 'done.', 9, 1), at('A1', 'claude', 'more detail.', 9, 5, 'M0')];
  assert.deepEqual(paired(top), ['A0']);
});

test('the sample generator\'s own pairing: every reply answers the mention it was written for, and still does with one reply taken out', () => {
  for (const [seed, n] of [[42, 200], [1, 200], [2024, 400], [7, 120]] as const) {
    const { messages, answers } = generateChannelWithAnswers(seed, { messages: n });
    const idx = mentionsOf(messages);
    assert.equal(answers.size, idx.length);
    assert.deepEqual(paired(messages), idx.map((i) => answers.get(messages[i]!.id)), `seed ${seed}`);
    // take out the answer to a mention no other mention shares its wait with (the generator's lone
    // mentions): it is unanswered, and every other mention keeps its own answer
    const pos = new Map(messages.map((m, i) => [m.id, i]));
    let checked = 0;
    idx.forEach((mi, k) => {
      const ri = pos.get(answers.get(messages[mi]!.id)!)!;
      const lone = (k === 0 || pos.get(answers.get(messages[idx[k - 1]!]!.id)!)! < mi) && (k === idx.length - 1 || idx[k + 1]! > ri);
      if (!lone) return;
      checked++;
      const without = messages.filter((_, i) => i !== ri);
      const want = mentionsOf(without).map((i) => (without[i]!.id === messages[mi]!.id ? undefined : answers.get(without[i]!.id)));
      assert.deepEqual(paired(without), want, `seed ${seed}, the answer to ${messages[mi]!.id} taken out`);
    });
    assert.ok(checked > 10, `seed ${seed}: ${checked} lone mentions`);
  }
});

test('a thread_root_id that is not a string is a counted skip, not a top-level message (null is none)', () => {
  // it was dropped silently: the reply counted in the channel's top level, its thread lost
  const text = [
    JSON.stringify({ ...msg('a', 'maya', 'root', 1) }),
    JSON.stringify({ ...msg('b', 'maya', 'reply', 2), thread_root_id: 123 }),
    JSON.stringify({ ...msg('c', 'maya', 'reply', 3), thread_root_id: ['a'] }),
    JSON.stringify({ ...msg('d', 'maya', 'top', 4), thread_root_id: null }),
    JSON.stringify({ ...msg('e', 'maya', 'reply', 5), thread_root_id: 'a' }),
  ].join('\n');
  const log = parseChannelLog(text);
  assert.deepEqual(log.messages.map((m) => [m.id, m.thread_root_id]), [['a', undefined], ['d', undefined], ['e', 'a']]);
  assert.deepEqual(log.skipped, [
    { line: 2, reason: 'missing_field', detail: 'thread_root_id (number, expected a string)' },
    { line: 3, reason: 'missing_field', detail: 'thread_root_id (an array, expected a string)' },
  ]);
});

test('a second message with an id already read is a counted skip (duplicate_id), the first one kept', () => {
  // two exports joined: the same message twice was shown twice in a context block, and another
  // message under a mention's id was dropped from every block, silently
  const text = [
    JSON.stringify(msg('a', 'maya', 'first', 1)),
    JSON.stringify(msg('b', 'jonas', '@claude look', 2)),
    JSON.stringify(msg('a', 'maya', 'first', 1)),
    JSON.stringify(msg('b', 'priya', 'another message, same id', 3)),
  ].join('\n');
  const log = parseChannelLog(text);
  assert.deepEqual(log.messages.map((m) => [m.id, m.author]), [['a', 'maya'], ['b', 'jonas']]);
  assert.deepEqual(log.skipped, [
    { line: 3, reason: 'duplicate_id', detail: 'a (first on line 1)' },
    { line: 4, reason: 'duplicate_id', detail: 'b (first on line 2)' },
  ]);
});

test('a channel log line that looks like UTF-16 text is skipped with ingest\'s words for it, and the replay\'s text says it, as summary and replay session do', async () => {
  const { runChannelReplay } = await import('../../src/replay/channel-replay.js');
  const { formatChannelReplay } = await import('../../src/replay/channel-report.js');
  const dir = tempDir('cachelens-channel-');
  const file = path.join(dir, 'c.jsonl');
  const hint = 'UTF-16 text, not UTF-8 (Claude Code writes UTF-8: convert the file, e.g. iconv -f UTF-16 -t UTF-8)';
  // a UTF-8 line, then one in UTF-16LE opening with 日本語
  writeFileSync(file, Buffer.concat([Buffer.from(JSON.stringify(msg('a', 'maya', '@claude one')) + '\n'), Buffer.from('日本語 ' + JSON.stringify(msg('b', 'maya', 'two', 1)) + '\n', 'utf16le')]));
  const log = await readChannelLog(file);
  assert.deepEqual(log.messages.map((m) => m.id), ['a']);
  // the NUL after its newline (0A 00) is the rest of that newline, no bad line of its own
  assert.deepEqual(log.skipped.map((s) => [s.line, s.reason, s.detail]), [[2, 'invalid_json', hint]]);
  const text = formatChannelReplay(await runChannelReplay({ file, strategies: ['window'] }));
  assert.ok(text.split('\n').includes(`  ${file}: ${hint} (1 line)`), text);
});
