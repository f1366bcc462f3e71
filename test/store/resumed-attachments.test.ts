/**
 * A resumed session's transcript starts with copies of the lines of the session it resumes (same
 * `uuid`, same `message.id` and `requestId`). Its copied requests count once (SPEC §1.3); so must
 * its copied attachments (SPEC §1.6), compactions and round-opening lines: in the chain they were
 * first written in, not in both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crosstab } from '../../src/analyses/crosstab.js';
import { loadChains } from '../../src/analyses/load-chains.js';
import { usePortableViews } from '../../src/store/portable.js';
import { runQuery } from '../../src/store/queries.js';
import { assistant, cli, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { type Dump, dump, run, runAndDump, tmp } from './helpers.js';

const A = '5e55104e-0000-4000-8000-00000000000a';
const B = '5e55104e-0000-4000-8000-00000000000b';
const at = (min: number) => new Date(Date.parse('2026-03-01T10:00:00Z') + min * 60_000).toISOString();
const attachment = (session: string, t: string, uuid: string, type: string, content: string) => ({
  type: 'attachment', sessionId: session, timestamp: t, cwd: '/work/demo', uuid, attachment: { type, content },
});

/** A: 2 rounds, each opened by a skill_listing and a todo_reminder; `compacted`: a compaction between them. */
function sessionA(compacted = false): Record<string, unknown>[] {
  return [
    attachment(A, at(0), 'att-1', 'skill_listing', 'skills: a, b'),
    userPrompt(A, at(0.1), 'first'),
    assistant({ session: A, msg: 'msg_a1', t: at(0.2), u: { in: 10, w5: 1000, out: 5 } }),
    ...(compacted ? [{ type: 'system', subtype: 'compact_boundary', sessionId: A, timestamp: at(0.5), cwd: '/work/demo', uuid: 'cmp-1', content: 'Conversation compacted' }] : []),
    attachment(A, at(1), 'att-2', 'todo_reminder', 'todo: x'),
    userPrompt(A, at(1.1), 'second'),
    assistant({ session: A, msg: 'msg_a2', t: at(1.2), u: { in: 10, r: 1000, w5: 100, out: 5 } }),
  ];
}

/**
 * B resumes A: A's lines again (sessionId B, `shift` minutes later, uuids and ids kept), then a
 * round of its own with a new attachment.
 */
function sessionB(shift: number, compacted = false): Record<string, unknown>[] {
  const copies = sessionA(compacted).map((l) => ({ ...l, sessionId: B, timestamp: at((Date.parse(l.timestamp as string) - Date.parse(at(0))) / 60_000 + shift) }));
  return [
    ...copies,
    attachment(B, at(shift + 5), 'att-3', 'todo_reminder', 'todo: y'),
    userPrompt(B, at(shift + 5.1), 'third'),
    assistant({ session: B, msg: 'msg_b1', t: at(shift + 5.2), u: { in: 10, r: 1100, w5: 50, out: 5 } }),
  ];
}

/**
 * A resumed session written as it happens, run step by step on one store: A alone; B added with
 * only its first `copied` lines (A's copies); the rest of B appended; A removed. At each step the
 * kept store must equal one rebuilt from the logs; `read` gives what each step's store says.
 */
async function resumeSteps<T>(a: Record<string, unknown>[], b: Record<string, unknown>[], copied: number, whenAGone: string, read: (d: Dump) => T): Promise<T[]> {
  const root = writeCorpus({ [`projects/-work-demo/${A}.jsonl`]: a });
  const fileB = path.join(root, `projects/-work-demo/${B}.jsonl`);
  const lines = (ls: Record<string, unknown>[]) => ls.map((l) => JSON.stringify(l) + '\n').join('');
  const steps: [string, () => void][] = [
    ['A alone', () => {}],
    ['B added, its copies only', () => writeFileSync(fileB, lines(b.slice(0, copied)))],
    ['B appended to', () => appendFileSync(fileB, lines(b.slice(copied)))],
    [`A gone: ${whenAGone}`, () => rmSync(path.join(root, `projects/-work-demo/${A}.jsonl`))],
  ];
  return runSteps(root, steps, read);
}

/** Each step's change, then a run on one store that must equal a store rebuilt from the logs; `read` gives what each step's store says. */
async function runSteps<T>(root: string, steps: readonly (readonly [string, () => void])[], read: (d: Dump) => T): Promise<T[]> {
  const db = path.join(tmp(), 's.duckdb');
  const seen: T[] = [];
  for (const [what, change] of steps) {
    change();
    const kept = await runAndDump([root], db);
    const rebuilt = await runAndDump([root], path.join(tmp(), 'fresh.duckdb'));
    assert.deepEqual(kept.dump, rebuilt.dump, what);
    seen.push(read(kept.dump));
  }
  return seen;
}

/**
 * A and B both in the logs, then A gone (runSteps): for copies whose removal moves no request, where
 * only the copy's change tells that B's chains changed.
 */
async function aThenGone<T>(a: Record<string, unknown>[], b: Record<string, unknown>[], read: (d: Dump) => T): Promise<T[]> {
  const fileA = `projects/-work-demo/${A}.jsonl`;
  const root = writeCorpus({ [fileA]: a, [`projects/-work-demo/${B}.jsonl`]: b });
  return runSteps(root, [['both', () => {}], ['A gone', () => rmSync(path.join(root, fileA))]], read);
}

/** Each chain's `field` in a dump, as 'A:n B:m'. */
const perChain = (field: 'compactions' | 'rounds') => (d: Dump) => d.chains.map((c) => `${c.chain_id === A ? 'A' : 'B'}:${c[field]}`).join(' ');

for (const [label, shift] of [['copies an hour later', 60], ['copies with their first times', 0]] as const) {
  test(`a resumed session's copies of the earlier one's attachments count once, in the chain of their first copy (${label})`, async () => {
    const root = writeCorpus({ [`projects/-work-demo/${A}.jsonl`]: sessionA(), [`projects/-work-demo/${B}.jsonl`]: sessionB(shift) });
    const r = await run([root], path.join(tmp(), 's.duckdb'));
    try {
      const requests = await r.store.all(`SELECT chain_id, count(*)::INTEGER AS n FROM requests GROUP BY ALL ORDER BY chain_id`);
      assert.deepEqual(requests.map((q) => [q.chain_id, q.n]), [[A, 2], [B, 1]], 'the requests as SPEC §1.3 counts them');

      const chains = await loadChains(r.store, { timezone: 'UTC', since: null, until: null, project: null });
      const events = new Map(chains.map((c) => [c.chainId, (c.events ?? []).filter((e) => e.kind === 'attachment').map((e) => e.detail)]));
      assert.deepEqual(events.get(A), ['skill_listing', 'todo_reminder'], 'the analyses (anatomy, what-ifs, report) see A\'s attachments in A');
      assert.deepEqual(events.get(B), ['todo_reminder'], 'and only B\'s own in B');

      const skills = await runQuery(r.store, 'skill_listing_by_agent_type', {});
      assert.deepEqual(skills.map((x) => [x.agent_type, x.chains, x.skill_listings]), [['main', 2, 1]], 'one skill_listing, not two');

      const copies = (await dump(r.store)).attachments.filter((a) => a.copy).map((a) => [path.basename(String(a.file)), a.line]);
      assert.deepEqual(copies, [[`${B}.jsonl`, 1], [`${B}.jsonl`, 4]], 'the store names the copies');

      await usePortableViews(r.store);
      const vs = new Map((await runQuery(r.store, 'attachments_vs_rounds', {})).map((x) => [x.chain_id, x]));
      assert.deepEqual([vs.get(A)?.attachments, vs.get(A)?.skill_listing], [2, 1]);
      assert.deepEqual([vs.get(B)?.attachments, vs.get(B)?.skill_listing], [1, 0]);
      const re = await runQuery(r.store, 'reattachments', {});
      assert.deepEqual(re.map((x) => [x.type, x.attachments, x.reattachments]), [['skill_listing', 1, 0], ['todo_reminder', 2, 0]], 'no copy counts as sent twice');
      const bySession = await crosstab(r.store, { rows: 'session', cols: 'skill_listing', measure: 'chains', timezone: 'UTC' });
      const cells = bySession.cells.filter((c) => c.row !== null && c.col !== null && Number(c.value) > 0).map((c) => [String(c.row), String(c.col)]);
      assert.deepEqual(cells.sort(), [[A, '1'], [B, '0']], 'the cross-tab puts the listing in A\'s chain only');
      const again = await crosstab(r.store, { rows: 'kind', cols: 'skill_listing', measure: 'reattachments', timezone: 'UTC' });
      assert.equal(again.cells.find((c) => c.row === null && c.col === null)?.value, 0, 'and counts no re-attachment');

    } finally {
      r.store.close();
    }
  });
}

test('an append run names the same copies as a rebuilt store: B added after A, then appended to, then A gone', async () => {
  const seen = await resumeSteps(sessionA(), sessionB(60), 6, 'B\'s copies are the attachments now', (d) => d.attachments.filter((a) => a.copy).length);
  assert.deepEqual(seen, [0, 2, 2, 0]);
});

test('an export writes a resumed session\'s copied attachments once, and queries over it count them as over the store', () => {
  const root = writeCorpus({ [`projects/-work-demo/${A}.jsonl`]: sessionA(), [`projects/-work-demo/${B}.jsonl`]: sessionB(60) });
  const dir = path.join(tmp(), 'export');
  const home = { HOME: tmp('cachelens-home-') };
  const exported = cli(['export', root, '--db', ':memory:', '--parquet', dir, '--json'], home);
  assert.equal(exported.code, 0, exported.stderr);
  assert.equal(JSON.parse(exported.stdout).tables.find((t: { table: string }) => t.table === 'attachments').rows, 3);
  const over = (args: string[]) => {
    const r = cli(['query', 'attachments_vs_rounds', ...args, '--json'], home);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).rows.map((x: { chain_id: string; attachments: number }) => [x.chain_id, x.attachments]).sort();
  };
  assert.deepEqual(over(['--parquet', dir]), [[A, 2], [B, 1]]);
  assert.deepEqual(over([root, '--db', ':memory:']), over(['--parquet', dir]));
});

/** A resumed session's copy of a compaction is the compaction of the chain of its first copy (SPEC §1.4 with §1.3). */
for (const [label, shift] of [['copies an hour later', 60], ['copies with their first times', 0]] as const) {
  test(`a resumed session's copy of the earlier one's compaction counts once, in the chain of its first copy (${label})`, async () => {
    const root = writeCorpus({ [`projects/-work-demo/${A}.jsonl`]: sessionA(true), [`projects/-work-demo/${B}.jsonl`]: sessionB(shift, true) });
    const r = await run([root], path.join(tmp(), 's.duckdb'));
    try {
      const chains = await r.store.all(`SELECT chain_id, compactions FROM chains ORDER BY chain_id`);
      assert.deepEqual(chains.map((c) => [c.chain_id, c.compactions]), [[A, 1], [B, 0]], 'chains.compactions: A\'s one, none of B\'s own');
      const loaded = await loadChains(r.store, { timezone: 'UTC', since: null, until: null, project: null });
      const compactions = new Map(loaded.map((c) => [c.chainId, (c.events ?? []).filter((e) => e.kind === 'compaction').length]));
      assert.deepEqual([compactions.get(A), compactions.get(B)], [1, 0], 'the analyses see the compaction in A only');
      // B's own requests follow the copied boundary: one segment, whatever its number
      const segments = new Map(loaded.map((c) => [c.chainId, [...new Set(c.requests.map((q) => q.segment))].length]));
      assert.deepEqual([segments.get(A), segments.get(B)], [2, 1]);
      const events = (await dump(r.store)).events.filter((e) => e.kind === 'compaction').map((e) => [path.basename(String(e.file)), e.line, e.copy]);
      assert.deepEqual(events, [[`${A}.jsonl`, 4, false], [`${B}.jsonl`, 4, true]], 'the store names the copy');
    } finally {
      r.store.close();
    }
  });
}

test('an append run counts a resumed session\'s copied compaction as a rebuilt store does: B added after A, then appended to, then A gone', async () => {
  const seen = await resumeSteps(sessionA(true), sessionB(60, true), sessionA(true).length, 'B\'s copy is the compaction now', perChain('compactions'));
  assert.deepEqual(seen, ['A:1', 'A:1 B:0', 'A:1 B:0', 'B:1']);
});

test('an append run gives a resumed session back the compaction it copied when the earlier transcript goes, though no request moves', async () => {
  // A never got to a request: its removal moves no request to B, so only the copy's change tells that B's chains changed
  const boundary = (session: string, t: string) => ({ type: 'system', subtype: 'compact_boundary', sessionId: session, timestamp: t, cwd: '/work/demo', uuid: 'cmp-1', content: 'Conversation compacted' });
  const seen = await aThenGone([userPrompt(A, at(0), 'first'), boundary(A, at(1))], [userPrompt(B, at(0), 'first'), boundary(B, at(1)), userPrompt(B, at(60), 'again'), assistant({ session: B, msg: 'msg_b1', t: at(60.2), u: { in: 10, w5: 1000, out: 5 } })], perChain('compactions'));
  assert.deepEqual(seen, ['A:1 B:0', 'B:1']);
});

/**
 * A resumed session's copied prompts open rounds of the chain of their first copy (SPEC §1.6 with
 * §1.3): B's rounds are its own prompts'. `listings`: a skill_listing before every prompt, B's own
 * included (a lost agent's pattern, once per round).
 */
function listedA(): Record<string, unknown>[] {
  return [
    attachment(A, at(0), 'att-1', 'skill_listing', 'skills: a, b'),
    userPrompt(A, at(0.1), 'first'),
    assistant({ session: A, msg: 'msg_a1', t: at(0.2), u: { in: 10, w5: 1000, out: 5 } }),
    attachment(A, at(1), 'att-2', 'skill_listing', 'skills: a, b'),
    userPrompt(A, at(1.1), 'second'),
    assistant({ session: A, msg: 'msg_a2', t: at(1.2), u: { in: 10, r: 1000, w5: 100, out: 5 } }),
  ];
}
function listedB(shift: number): Record<string, unknown>[] {
  const copies = listedA().map((l) => ({ ...l, sessionId: B, timestamp: at((Date.parse(l.timestamp as string) - Date.parse(at(0))) / 60_000 + shift) }));
  return [
    ...copies,
    attachment(B, at(shift + 5), 'att-3', 'skill_listing', 'skills: a, b'),
    userPrompt(B, at(shift + 5.1), 'third'),
    assistant({ session: B, msg: 'msg_b1', t: at(shift + 5.2), u: { in: 10, r: 1100, w5: 50, out: 5 } }),
  ];
}

for (const [label, shift] of [['copies an hour later', 60], ['copies with their first times', 0]] as const) {
  test(`a resumed session's rounds are its own prompts' only, so one listing per own round reads as one per round (${label})`, async () => {
    const root = writeCorpus({ [`projects/-work-demo/${A}.jsonl`]: listedA(), [`projects/-work-demo/${B}.jsonl`]: listedB(shift) });
    const r = await run([root], path.join(tmp(), 's.duckdb'));
    try {
      const chains = await r.store.all(`SELECT chain_id, rounds FROM chains ORDER BY chain_id`);
      assert.deepEqual(chains.map((c) => [c.chain_id, c.rounds]), [[A, 2], [B, 1]], 'chains.rounds: A\'s two, B\'s own one');
      const rounds = (await dump(r.store)).events.filter((e) => e.kind === 'round').map((e) => [path.basename(String(e.file)), e.line, e.copy]);
      assert.deepEqual(rounds, [[`${A}.jsonl`, 2, false], [`${A}.jsonl`, 5, false], [`${B}.jsonl`, 2, true], [`${B}.jsonl`, 5, true], [`${B}.jsonl`, 8, false]], 'the store names the copied prompts');
      const loaded = await loadChains(r.store, { timezone: 'UTC', since: null, until: null, project: null });
      assert.deepEqual(loaded.map((c) => [c.chainId, c.rounds, (c.events ?? []).map((e) => e.kind).join()]), [[A, 2, 'attachment,attachment'], [B, 1, 'attachment']], 'the analyses: rounds, and no round among the events');

      await usePortableViews(r.store);
      const vs = new Map((await runQuery(r.store, 'attachments_vs_rounds', {})).map((x) => [x.chain_id, x]));
      assert.deepEqual([vs.get(A)?.rounds, vs.get(A)?.skill_listing, vs.get(A)?.skill_listing_equals_rounds], [2, 2, true]);
      assert.deepEqual([vs.get(B)?.rounds, vs.get(B)?.skill_listing, vs.get(B)?.skill_listing_equals_rounds], [1, 1, true], 'B: one listing in its one round');
      const skills = await runQuery(r.store, 'skill_listing_by_agent_type', {});
      assert.deepEqual(skills.map((x) => [x.agent_type, x.skill_listings, x.rounds, x.chains_listings_equal_rounds]), [['main', 3, 3, 2]]);
      const bySession = await crosstab(r.store, { rows: 'session', cols: 'rounds_bucket', measure: 'chains', timezone: 'UTC' });
      const cells = bySession.cells.filter((c) => c.row !== null && c.col !== null && Number(c.value) > 0).map((c) => [String(c.row), String(c.col)]);
      assert.deepEqual(cells.sort(), [[A, '2-3'], [B, '1']], 'the cross-tab\'s rounds buckets');
      const equal = bySession.attachments_equal_rounds.map((e) => [String(e.row), e.matching, e.equal]).sort();
      assert.deepEqual(equal, [[A, 1, true], [B, 1, true]], 'and listings = rounds in B\'s cell too');
    } finally {
      r.store.close();
    }
  });
}

test('a resumed session\'s copy of a round opened by a request (no prompt before it, or a slash command\'s) is the earlier chain\'s round', async () => {
  const command = (session: string, t: string) => ({
    type: 'user', sessionId: session, timestamp: t, cwd: '/work/demo', uuid: `cmd-${t}`,
    message: { role: 'user', content: '<command-name>/review</command-name>' },
  });
  const a = [
    assistant({ session: A, msg: 'msg_a1', t: at(0.2), u: { in: 10, w5: 1000, out: 5 } }),
    command(A, at(1)),
    assistant({ session: A, msg: 'msg_a2', t: at(1.2), u: { in: 10, r: 1000, w5: 100, out: 5 } }),
  ];
  const b = [
    ...a.map((l) => ({ ...l, sessionId: B, timestamp: at((Date.parse(l.timestamp as string) - Date.parse(at(0))) / 60_000 + 60) })),
    userPrompt(B, at(65.1), 'third'),
    assistant({ session: B, msg: 'msg_b1', t: at(65.2), u: { in: 10, r: 1100, w5: 50, out: 5 } }),
  ];
  const root = writeCorpus({ [`projects/-work-demo/${A}.jsonl`]: a, [`projects/-work-demo/${B}.jsonl`]: b });
  const r = await run([root], path.join(tmp(), 's.duckdb'));
  try {
    const chains = await r.store.all(`SELECT chain_id, rounds, requests FROM chains ORDER BY chain_id`);
    assert.deepEqual(chains.map((c) => [c.chain_id, c.rounds, c.requests]), [[A, 2, 2], [B, 1, 1]]);
  } finally {
    r.store.close();
  }
});

test('an append run counts a resumed session\'s rounds as a rebuilt store does: B added after A, then appended to, then A gone', async () => {
  const seen = await resumeSteps(listedA(), listedB(60), listedA().length, 'B\'s copied prompts are its rounds now', perChain('rounds'));
  assert.deepEqual(seen, ['A:2', 'A:2 B:0', 'A:2 B:1', 'B:3']);
});

test('an append run gives a resumed session back the round it copied when the earlier transcript goes, though no request moves', async () => {
  // A never got to a request: its removal moves no request to B, so only the copy's change tells that B's chains changed
  const first = userPrompt(A, at(0), 'first');
  const seen = await aThenGone([first], [{ ...first, sessionId: B }, userPrompt(B, at(60), 'again'), assistant({ session: B, msg: 'msg_b1', t: at(60.2), u: { in: 10, w5: 1000, out: 5 } })], perChain('rounds'));
  assert.deepEqual(seen, ['A:1 B:1', 'B:2']);
});

/**
 * A with lines that are no prompt (docs/store.md, Rounds): Esc after its first round, then a
 * background task's notification answered by a request (its round 2). B resumes A and adds an
 * interrupt of its own, then its own prompt.
 */
function interruptedA(): Record<string, unknown>[] {
  const user = (t: string, uuid: string, content: unknown) => ({ type: 'user', sessionId: A, timestamp: t, cwd: '/work/demo', uuid, message: { role: 'user', content } });
  return [
    userPrompt(A, at(0.1), 'first'),
    assistant({ session: A, msg: 'msg_a1', t: at(0.2), u: { in: 10, w5: 1000, out: 5 } }),
    user(at(0.5), 'int-1', [{ type: 'text', text: '[Request interrupted by user]' }]),
    user(at(0.8), 'note-1', '<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>'),
    assistant({ session: A, msg: 'msg_a2', t: at(1.0), u: { in: 10, r: 1000, w5: 100, out: 5 } }),
  ];
}
function interruptedB(shift: number): Record<string, unknown>[] {
  const copies = interruptedA().map((l) => ({ ...l, sessionId: B, timestamp: at((Date.parse(l.timestamp as string) - Date.parse(at(0))) / 60_000 + shift) }));
  return [
    ...copies,
    { type: 'user', sessionId: B, timestamp: at(shift + 4), cwd: '/work/demo', uuid: 'int-2', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu-1', content: 'rejected' }, { type: 'text', text: '[Request interrupted by user for tool use]' }] } },
    userPrompt(B, at(shift + 5.1), 'third'),
    assistant({ session: B, msg: 'msg_b1', t: at(shift + 5.2), u: { in: 10, r: 1100, w5: 50, out: 5 } }),
  ];
}

test('an append run counts a resumed session\'s rounds around interrupts and a task notification as a rebuilt store does: B added after A, then appended to, then A gone', async () => {
  // A: its prompt's round and the notification's; B: its own prompt's; without A, B's copies are its rounds (the interrupts none)
  const seen = await resumeSteps(interruptedA(), interruptedB(60), interruptedA().length, 'B\'s copied rounds are its own now', perChain('rounds'));
  assert.deepEqual(seen, ['A:2', 'A:2 B:0', 'A:2 B:1', 'B:3']);
});
