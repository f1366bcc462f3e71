/**
 * Chains and agent types (SPEC §1.4–1.5) on real logs of each layout: v1.x inline sidechains
 * (d-kimuson, Claude Code 1.0.98) and v2.1 subagent files without meta.json (marot, 2.1.39).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { openContext } from '../../src/context.js';
import { REAL_LOGS } from '../helpers/corpus.js';

async function chains(folder: string) {
  const ctx = await openContext({ paths: [join(REAL_LOGS, folder)], db: ':memory:', timezone: 'UTC' });
  try {
    return await ctx.store.all(`SELECT kind, agent_type, definition, requests, rounds FROM chains ORDER BY kind, agent_type, requests`);
  } finally {
    ctx.store.close();
  }
}

test('v1.x: inline sidechains form one chain per sidechain root, typed by the Task that spawned them', async () => {
  const c = await chains('d-kimuson-claude-code-viewer');
  assert.deepEqual(c.map((x) => [x.kind, x.agent_type]), [
    ['main', 'main'],
    ...Array.from({ length: 5 }, () => ['sidechain', 'general-purpose']),
  ]);
  assert.equal(c.reduce((n, x) => n + (x.requests as number), 0), 170, 'every request belongs to a chain');
  assert.ok(c.filter((x) => x.kind === 'sidechain').every((x) => (x.requests as number) > 1), 'tool results keep a sidechain together');
});

test('v2.1 without meta.json: subagent types come from the parent Task tool_use; compaction agents from their id', async () => {
  const c = await chains('marot-spotter');
  const types = c.filter((x) => x.kind === 'subagent').map((x) => x.agent_type).sort();
  assert.deepEqual(types, ['Explore', 'Explore', 'compaction', 'compaction', 'compaction', 'general-purpose']);
  assert.ok(c.every((x) => x.definition === (x.kind === 'main' ? 'main' : 'unknown')), 'no meta.json: the definition cannot be judged (a main thread\'s is `main`)');
  assert.equal(c.filter((x) => x.kind === 'main').length, 3);
});

test('v1.x sidechains are typed by Task calls of the files in scope only: a run over fewer roots forgets the others\'', async () => {
  const { mkdirSync, readFileSync, writeFileSync } = await import('node:fs');
  const { tempDir } = await import('../helpers/corpus.js');
  const src = join(REAL_LOGS, 'd-kimuson-claude-code-viewer/projects/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl');
  const lines = readFileSync(src, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const isTask = (b: { type?: string; name?: string }) => b.type === 'tool_use' && b.name === 'Task';
  const spawn = lines.find((l) => Array.isArray(l.message?.content) && l.message.content.some(isTask));
  assert.ok(spawn, 'the log has a Task call');
  // project A: the session without its Task calls; project B: one of them, in another session, typed Explore
  const root = tempDir();
  const a = join(root, 'projects/a');
  const b = join(root, 'projects/b');
  mkdirSync(a, { recursive: true });
  mkdirSync(b, { recursive: true });
  const stripped = lines.map((l) => (Array.isArray(l.message?.content) ? { ...l, message: { ...l.message, content: l.message.content.filter((x: object) => !isTask(x)) } } : l));
  writeFileSync(join(a, 'fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl'), stripped.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const other = structuredClone(spawn);
  other.sessionId = '77777777-7777-7777-7777-777777777777';
  other.message.id = 'msg_spawn_other';
  other.requestId = 'req_spawn_other';
  for (const x of other.message.content) if (isTask(x)) x.input.subagent_type = 'Explore';
  writeFileSync(join(b, '77777777-7777-7777-7777-777777777777.jsonl'), JSON.stringify(other) + '\n');
  const db = join(root, 's.duckdb');
  const types = async (paths: string[]) => {
    const ctx = await openContext({ paths, db, timezone: 'UTC' });
    try {
      return (await ctx.store.all(`SELECT DISTINCT agent_type FROM chains WHERE kind <> 'main' ORDER BY 1`)).map((r) => r.agent_type);
    } finally {
      ctx.store.close();
    }
  };
  assert.ok((await types([join(root, 'projects')])).includes('Explore'), 'both roots: typed by B\'s Task call');
  assert.deepEqual(await types([a]), ['unknown'], 'A alone, on the same store: as a store of A alone');
});
