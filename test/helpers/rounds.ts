/**
 * The round checks of one hand-made main transcript that test/ingest/local-commands.test.ts and
 * not-prompts.test.ts share (SPEC §1.6, docs/store.md, Rounds): its lines' writers, and the same
 * rounds on a cold read, an append read cut after any line, the streaming path and in the replay.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openContext } from '../../src/context.js';
import { readTranscript } from '../../src/ingest/read-file.js';
import { assistant, cli, plain, tempDir, writeCorpus } from './corpus.js';

/** Writers of a session's lines at second s of a day: a user line, a request, a skill_listing attachment. */
export function sessionLines(session: string, day: Date) {
  const at = (s: number) => new Date(day.getTime() + s * 1000).toISOString();
  const j = (x: object) => JSON.stringify(x);
  return {
    at,
    j,
    said: (s: number, content: unknown, extra: object = {}) => j({ type: 'user', sessionId: session, timestamp: at(s), cwd: '/work/demo', uuid: `u-${s}`, ...extra, message: { role: 'user', content } }),
    req: (s: number, msg: string) => j(assistant({ session, msg, t: at(s), u: { in: 3, w5: 100, out: 2 } })),
    listing: (s: number, name: string) => j({ type: 'attachment', sessionId: session, timestamp: at(s), uuid: `a-${s}`, attachment: { type: 'skill_listing', content: name } }),
  };
}

const ROWS = `SELECT 'a' AS what, line, round FROM attachments UNION ALL SELECT 'r', line, round FROM requests UNION ALL SELECT 'c', requests, rounds FROM chains ORDER BY what, line`;

/** Attachments' and requests' [kind, line, round] and the chain's [c, requests, rounds], as the store has them. */
export async function roundRows(ctx: Awaited<ReturnType<typeof openContext>>): Promise<unknown[][]> {
  return (await ctx.store.all(ROWS)).map((r) => [r.what, r.line, r.round]);
}

/** The transcript's path under a corpus root. */
export const mainOf = (session: string) => `projects/-work-demo/${session}.jsonl`;

/** A cold read of the lines gives `expected` (roundRows). */
export async function assertColdRounds(session: string, lines: string[], expected: unknown[][]): Promise<void> {
  const ctx = await openContext({ paths: [writeCorpus({ [mainOf(session)]: lines.join('\n') + '\n' }, tempDir())], db: ':memory:', timezone: 'UTC' });
  try {
    assert.deepEqual(await roundRows(ctx), expected);
  } finally {
    ctx.store.close();
  }
}

/** An append read of the lines, the store first read with the file cut after each line of `cuts`, gives `expected`. */
export async function assertAppendRounds(session: string, lines: string[], cuts: number[], expected: unknown[][]): Promise<void> {
  for (const cut of cuts) {
    const root = writeCorpus({ [mainOf(session)]: lines.slice(0, cut).join('\n') + '\n' }, tempDir());
    const db = join(tempDir(), 's.duckdb');
    (await openContext({ paths: [root], db, timezone: 'UTC' })).store.close();
    writeCorpus({ [mainOf(session)]: lines.join('\n') + '\n' }, root);
    const warm = await openContext({ paths: [root], db, timezone: 'UTC' });
    try {
      assert.equal(warm.stats.appended, 1, `cut after line ${cut}: read as an append`);
      assert.deepEqual(await roundRows(warm), expected, `cut after line ${cut}`);
    } finally {
      warm.store.close();
    }
  }
}

/** The buffer path reads the chain's [requests, rounds] as `chain`, and the streaming path (small and large chunks) the same facts. */
export async function assertStreamedRounds(session: string, lines: string[], chain: [number, number]): Promise<void> {
  const file = join(writeCorpus({ [mainOf(session)]: lines.join('\n') + '\n' }, tempDir()), mainOf(session));
  const id = { fileId: 1, fileAgentId: null, fileSessionId: null };
  const fast = await readTranscript(file, id);
  assert.deepEqual(fast.facts.chains.map((c) => [c.requests, c.rounds]), [chain]);
  for (const opts of [{ streamAbove: 0, chunkSize: 64 }, { streamAbove: 0, chunkSize: 4096 }]) {
    const streamed = await readTranscript(file, id, opts);
    assert.deepEqual(plain(streamed.facts), plain(fast.facts), JSON.stringify(opts));
  }
}

/** The recorded replay's rounds and its requests' [line, round]. */
export function assertReplayRounds(session: string, lines: string[], rounds: number, turns: [number, number][]): void {
  const file = join(writeCorpus({ [mainOf(session)]: lines.join('\n') + '\n' }, tempDir()), mainOf(session));
  const r = cli(['replay', 'session', file, '--strategy', 'recorded', '--json'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout) as { chain: { rounds: number }; turns: { line: number; round: number }[] };
  assert.equal(d.chain.rounds, rounds);
  assert.deepEqual(d.turns.map((t) => [t.line, t.round]), turns);
}
