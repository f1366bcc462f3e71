/**
 * `sessions` at its edges, on hand-made logs whose answers are worked out here:
 * - most expensive first by USD, not by weight (weights of models with different base prices do not
 *   add up), ties by session id, a session with no priced request last (unknown, never $0);
 * - a subagent's requests in its parent's session (SPEC §1.1: its `sessionId` is the parent's), its
 *   project the parent's main transcript's even when the subagent ran in a sub-directory;
 * - a session whose cwd changes keeps the project of its first cwd;
 * - a session over midnight in --timezone: --since counts its requests of that day only.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assistant, cli, userPrompt, writeCorpus } from '../helpers/corpus.js';

const id = (n: number) => `5e551011-0000-4000-8000-00000000000${n}`;
// claude-haiku-4-5: $1 per million weight; claude-opus-4-6: $5. 1,000,000 input tokens of haiku weigh
// 1,000,000 ($1); 400,000 of opus weigh 400,000 ($2): opus's session is the more expensive.
const dir = writeCorpus({
  [`projects/-work-a/${id(1)}.jsonl`]: [assistant({ session: id(1), msg: 'h1', t: '2026-03-01T10:00:00Z', model: 'claude-haiku-4-5', u: { in: 1_000_000 }, cwd: '/work/a' })],
  [`projects/-work-b/${id(2)}.jsonl`]: [
    userPrompt(id(2), '2026-03-01T17:59:00Z', 'go', undefined, '/work/b'),
    assistant({ session: id(2), msg: 'o1', t: '2026-03-01T18:00:00Z', u: { in: 200_000 }, cwd: '/work/b' }),
    // the user moved to another directory: the session stays in its first project
    assistant({ session: id(2), msg: 'o2', t: '2026-03-01T18:30:00Z', u: { in: 100_000 }, cwd: '/elsewhere' }),
  ],
  // a subagent of session 2 that ran in a sub-directory, at 00:15 the next day in Kathmandu (UTC+5:45)
  [`projects/-work-b/${id(2)}/subagents/agent-a1.jsonl`]: [
    userPrompt(id(2), '2026-03-01T18:29:00Z', 'sub', 'a1', '/work/b/pkg'),
    assistant({ session: id(2), msg: 'o3', t: '2026-03-01T18:30:00Z', u: { in: 100_000 }, agentId: 'a1', cwd: '/work/b/pkg' }),
  ],
  // the same cost as session 1, to the cent: a tie, ordered by id
  [`projects/-work-c/${id(3)}.jsonl`]: [assistant({ session: id(3), msg: 'h2', t: '2026-03-01T11:00:00Z', model: 'claude-haiku-4-5', u: { in: 1_000_000 }, cwd: '/work/c' })],
  [`projects/-work-d/${id(4)}.jsonl`]: [assistant({ session: id(4), msg: 'x1', t: '2026-03-01T12:00:00Z', model: 'claude-mystery-9', u: { in: 5_000_000 }, cwd: '/work/d' })],
});

function sessions(extra: string[] = []): any[] {
  const r = cli(['sessions', dir, '--db', ':memory:', '--json', ...extra]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).sessions;
}

test('sessions: by USD (not weight), ties by id, unpriced last; a subagent in its parent session and project; a changed cwd keeps the first', () => {
  const s = sessions(['--timezone', 'UTC']);
  assert.deepEqual(s.map((x) => [x.session_id, x.project, x.requests, x.chains, x.subagents, x.weight, x.usd, x.unpriced_requests]), [
    [id(2), '/work/b', 3, 2, 1, 400_000, 2, 0],
    [id(1), '/work/a', 1, 1, 0, 1_000_000, 1, 0],
    [id(3), '/work/c', 1, 1, 0, 1_000_000, 1, 0],
    [id(4), '/work/d', 1, 1, 0, null, null, 1],
  ]);
  // --project matches the session's project, not a cwd it moved to
  assert.deepEqual(sessions(['--timezone', 'UTC', '--project', 'elsewhere']), []);
  assert.deepEqual(sessions(['--timezone', 'UTC', '--project', '/work/b']).map((x) => x.requests), [3]);
  const text = cli(['sessions', dir, '--db', ':memory:', '--timezone', 'UTC']).stdout;
  assert.match(text.split('\n').filter((l) => l.startsWith('5e551011')).at(-1)!, /unknown\s+unknown$/);
});

test('sessions over midnight in --timezone: first and last are local minutes, and --since counts the requests of that local day', () => {
  const all = sessions(['--timezone', 'Asia/Kathmandu']).find((x) => x.session_id === id(2));
  assert.deepEqual([all.first, all.last, all.requests], ['2026-03-01 23:45', '2026-03-02 00:15', 3]);
  const next = sessions(['--timezone', 'Asia/Kathmandu', '--since', '2026-03-02']);
  assert.deepEqual(next.map((x) => [x.session_id, x.first, x.last, x.requests, x.chains, x.subagents]), [[id(2), '2026-03-02 00:15', '2026-03-02 00:15', 2, 2, 1]]);
  const before = sessions(['--timezone', 'Asia/Kathmandu', '--until', '2026-03-01']).find((x) => x.session_id === id(2));
  assert.deepEqual([before.first, before.last, before.requests], ['2026-03-01 23:45', '2026-03-01 23:45', 1]);
});
