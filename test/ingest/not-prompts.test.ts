/**
 * SPEC §1.6 rounds and the other `user` lines Claude Code writes that are no prompt the user typed
 * (docs/store.md, Rounds): an interrupt (`[Request interrupted by user]`, a text block, alone or
 * beside a refused tool's result), the `#` memory shortcut's `<user-memory-input>`, injected
 * `<system-reminder>`s with nothing else and a compaction's summary (`isCompactSummary`) open no round; a background
 * task's `<task-notification>` (meta or not) opens one with the request that answers it, and none
 * when no request follows before the next prompt. Attachments around them keep the round of the
 * next prompt or request, on a cold read, an append read cut anywhere, the streaming path and in
 * the replay alike.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { openContext } from '../../src/context.js';
import { userLineKind } from '../../src/ingest/file-parser.js';
import { REAL_LOGS } from '../helpers/corpus.js';
import { assertAppendRounds, assertColdRounds, assertReplayRounds, assertStreamedRounds, sessionLines } from '../helpers/rounds.js';

const S = '5e551011-0000-4000-8000-00000000beef';
const { at, j, said, req, listing } = sessionLines(S, new Date(Date.UTC(2026, 0, 7, 9)));
const text = (t: string) => ({ type: 'text', text: t });
const refused = { type: 'tool_result', tool_use_id: 'tu-1', is_error: true, content: "The user doesn't want to proceed with this tool use. The tool use was rejected." };
// as Claude Code 2.1.39 writes it (marot-spotter 8463c716, line 1588), longer than the projection keeps of a text block
const NOTE = (id: string) => `<task-notification>\n<task-id>${id}</task-id>\n<output-file>/tmp/claude-1000/-work-demo/tasks/${id}.output</output-file>\n<status>completed</status>\n<summary>Background command "Run the tests" completed (exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result: /tmp/claude-1000/-work-demo/tasks/${id}.output`;

const LINES = [
  said(0, 'hi'), //                                                                   line 1: round 1
  req(1, 'msg_1'), //                                                                 line 2: round 1
  said(2, [refused, text('[Request interrupted by user for tool use]')]), //          line 3: Esc on a permission prompt
  said(2, [text('[Request interrupted by user]')]), //                                line 4: Esc
  listing(3, 'X'), //                                                                 line 5: next prompt is line 9 → round 2
  said(3, '[Request interrupted by user]'), //                                        line 6: as a string
  said(4, '<user-memory-input>always use pnpm</user-memory-input>'), //               line 7: the # shortcut
  said(4, '<system-reminder>The user opened a.ts in the IDE.</system-reminder>'), //  line 8
  said(5, 'go on'), //                                                                line 9: round 2
  req(6, 'msg_2'), //                                                                 line 10: round 2
  said(7, NOTE('b1')), //                                                             line 11: a task done while idle
  listing(7, 'Y'), //                                                                 line 12: → round 3 (the request after it)
  req(8, 'msg_3'), //                                                                 line 13: answers it: opens round 3
  said(9, [text(NOTE('b2'))]), //                                                     line 14: a text block; no request answers it
  said(10, 'last'), //                                                                line 15: round 4
  req(11, 'msg_4'), //                                                                line 16: round 4
  j({ type: 'system', subtype: 'compact_boundary', sessionId: S, timestamp: at(12), cwd: '/work/demo', uuid: 'cmp-1', content: 'Conversation compacted' }), // line 17
  said(12, 'This session is being continued from a previous conversation that ran out of context. …', { isCompactSummary: true, isVisibleInTranscriptOnly: true }), // line 18
  req(13, 'msg_5'), //                                                                line 19: still round 4 (an automatic compaction mid-round)
  said(14, NOTE('b3'), { isMeta: true }), //                                          line 20: a meta notification
  req(15, 'msg_6'), //                                                                line 21: opens round 5
  said(16, [text(`[draft] ${'a prompt longer than the projection keeps of a text block '.repeat(3)}`)]), // line 22: round 6
  req(17, 'msg_7'), //                                                                line 23: round 6
  said(18, [refused, text('[Request interrupted by user for tool use]')]), //         line 24
  listing(19, 'Z'), //                                                                line 25: next prompt is line 26 → round 7
  said(20, '<system-reminder>The user opened a.ts in the IDE.</system-reminder>\nand now the tests'), // line 26: a reminder and the user's words: round 7
  req(21, 'msg_8'), //                                                                line 27: round 7
];
const EXPECTED = [
  ['a', 5, 2], ['a', 12, 3], ['a', 25, 7],
  ['c', 8, 7],
  ['r', 2, 1], ['r', 10, 2], ['r', 13, 3], ['r', 16, 4], ['r', 19, 4], ['r', 21, 5], ['r', 23, 6], ['r', 27, 7],
];

test('userLineKind: interrupts, memory notes and system reminders are none, a task notification is a command, the user\'s text a prompt', () => {
  const kind = (content: unknown, extra: object = {}) => userLineKind({ ...extra, message: { content } });
  assert.equal(kind('[Request interrupted by user]'), 'none');
  assert.equal(kind([text('[Request interrupted by user]')]), 'none');
  assert.equal(kind([refused, text('[Request interrupted by user for tool use]')]), 'none');
  assert.equal(kind('<user-memory-input>x</user-memory-input>'), 'none');
  assert.equal(kind([text('<system-reminder>x</system-reminder>')]), 'none');
  assert.equal(kind('<system-reminder>x</system-reminder>\n\n <system-reminder>y</system-reminder>\n'), 'none');
  // a reminder and the user's words after it: a prompt, in a string or a text block the reader keeps whole
  assert.equal(kind('<system-reminder>x</system-reminder>\nfix the bug'), 'prompt');
  assert.equal(kind('<system-reminder>x</system-reminder><system-reminder>y'), 'prompt');
  assert.equal(kind([text('<system-reminder>x</system-reminder> fix it')]), 'prompt');
  assert.equal(kind([text('<system-reminder>x</system-reminder>'), text('fix it')]), 'prompt');
  // beyond what the reader keeps (4,096 characters of a string, 64 of a text block) only the opening tag tells: none
  assert.equal(kind(`<system-reminder>${'x'.repeat(5000)}</system-reminder>\nfix it`), 'none');
  assert.equal(kind([text(`<system-reminder>${'x'.repeat(64)}</system-reminder> fix it`)]), 'none');
  // many reminders and no end: answered in one pass (a backtracking pattern took exponential time)
  assert.equal(kind(`${'<system-reminder>x</system-reminder> '.repeat(100)}x`), 'prompt');
  assert.equal(kind(NOTE('b1')), 'command');
  assert.equal(kind(NOTE('b1'), { isMeta: true }), 'command');
  // a meta notification as a list of text blocks is the string's (it was none: no round at all)
  assert.equal(kind([text(NOTE('b1'))], { isMeta: true }), 'command');
  assert.equal(kind([text('Base directory for this skill: /x'), text(NOTE('b1'))], { isMeta: true }), 'command');
  assert.equal(kind([text('Base directory for this skill: /x')], { isMeta: true }), 'none');
  assert.equal(kind([{ type: 'image', source: {} }], { isMeta: true }), 'none');
  assert.equal(kind([text(NOTE('b1'))]), 'command');
  assert.equal(kind('a summary', { isCompactSummary: true }), 'none');
  // the user's own words, an interrupt quoted in them, an image beside an interrupt
  assert.equal(kind('[Request interrupted by user] was a mistake, go on'), 'prompt');
  assert.equal(kind([text('[Request interrupted by user]'), text('try again')]), 'prompt');
  assert.equal(kind([text('[Request interrupted by user]'), { type: 'image', source: {} }]), 'prompt');
  assert.equal(kind([text('[a note]')]), 'prompt');
  assert.equal(kind([{ type: 'text' }]), 'prompt');
});

test('§1.6: interrupts, memory notes, system reminders and a compaction summary open no round; a task notification opens one with its request', async () => {
  await assertColdRounds(S, LINES, EXPECTED);
});

test('§1.6: an append read cut anywhere around those lines gives the rounds a cold read gives', async () => {
  // cuts: after each interrupt, the memory note, a notification before its request, the summary, the meta notification
  await assertAppendRounds(S, LINES, [3, 4, 6, 7, 8, 11, 12, 14, 18, 20, 24, 25, 26], EXPECTED);
});

test('§1.6: the streaming path counts the rounds the buffer path counts', async () => {
  await assertStreamedRounds(S, LINES, [8, 7]);
});

test('§1.6: the replay numbers the rounds of the requests as the store does', () => {
  assertReplayRounds(S, LINES, 7, [[2, 1], [10, 2], [13, 3], [16, 4], [19, 4], [21, 5], [23, 6], [27, 7]]);
});

test('§1.6 on the real logs: 4d5611e5\'s task notification, answered from idle, opens a round, and its compaction summary none', async () => {
  const file = join(REAL_LOGS, 'marot-spotter/projects/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569.jsonl');
  const ctx = await openContext({ paths: [file], db: ':memory:', timezone: 'UTC' });
  try {
    // line 1502 is the notification, 1503 the request that answers it; 755 the summary, 760 the request after it
    const at = await ctx.store.all(`SELECT r.line, r.round FROM requests r JOIN chains USING (chain_id) WHERE kind = 'main' AND r.line IN (753, 760, 1499, 1503, 1507) ORDER BY r.line`);
    const round = new Map(at.map((r) => [Number(r.line), Number(r.round)]));
    const before = (await ctx.store.all(`SELECT max(r.round) AS n FROM requests r JOIN chains USING (chain_id) WHERE kind = 'main' AND r.line < 1502`))[0]!.n;
    assert.equal(round.get(1503), Number(before) + 1, 'the request answering the notification opens a round');
    assert.equal(round.get(1507), round.get(1503), 'and the requests after it are in it');
    const compacted = await ctx.store.all(`SELECT r.round, r.line FROM requests r JOIN chains USING (chain_id) WHERE kind = 'main' AND r.line BETWEEN 700 AND 800 ORDER BY r.line`);
    assert.equal(new Set(compacted.map((r) => r.round)).size, 1, 'the compaction summary (line 755) opens no round: the requests around it share theirs');
  } finally {
    ctx.store.close();
  }
});

// A meta notification written as a list of text blocks (line 3) wakes the chain as the string form
// (line 20 above) does: the request that answers it opens a round. A meta list of other text (a
// skill's expansion, line 6) opens none.
const META_LIST = [
  said(0, 'hi'), //                                                                   line 1: round 1
  req(1, 'msg_1'), //                                                                 line 2: round 1
  said(2, [text(NOTE('b4'))], { isMeta: true }), //                                   line 3: a meta notification, a list
  listing(2, 'X'), //                                                                 line 4: → round 2 (the request after it)
  req(3, 'msg_2'), //                                                                 line 5: answers it: opens round 2
  said(4, [text('Base directory for this skill: /work/demo/.claude/skills/x')], { isMeta: true }), // line 6
  req(5, 'msg_3'), //                                                                 line 7: still round 2
];
const META_LIST_EXPECTED = [['a', 4, 2], ['c', 3, 2], ['r', 2, 1], ['r', 5, 2], ['r', 7, 2]];

test('§1.6: a meta task notification as a list of text blocks opens a round with its request, as the string does, on every path', async () => {
  await assertColdRounds(S, META_LIST, META_LIST_EXPECTED);
  await assertAppendRounds(S, META_LIST, [3, 4, 6], META_LIST_EXPECTED);
  await assertStreamedRounds(S, META_LIST, [3, 2]);
  assertReplayRounds(S, META_LIST, 2, [[2, 1], [5, 2], [7, 2]]);
});

// A chain whose first user line is no prompt: its first request opens round 1, and the prompt after
// it round 2, in the store and the replay alike (the replay put both requests in round 1).
const REQUEST_FIRST = [
  said(0, null), //                                                                   line 1: no prompt
  req(1, 'msg_1'), //                                                                 line 2: opens round 1
  said(2, 'go on'), //                                                                line 3: round 2
  req(3, 'msg_2'), //                                                                 line 4: round 2
];

test('§1.6: a chain\'s first request before any prompt opens round 1, and the next prompt round 2, in the store and the replay', async () => {
  await assertColdRounds(S, REQUEST_FIRST, [['c', 2, 2], ['r', 2, 1], ['r', 4, 2]]);
  assertReplayRounds(S, REQUEST_FIRST, 2, [[2, 1], [4, 2]]);
});
