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
  assert.ok(c.every((x) => x.definition === 'unknown'), 'no meta.json: the definition cannot be judged');
  assert.equal(c.filter((x) => x.kind === 'main').length, 3);
});
