/**
 * SPEC §1.5 rule by rule on a hand-made v2.1 session: the agent type from the `.meta.json`, else
 * from the spawning Agent/Task tool_use (by the meta's toolUseId, or by a tool result naming the
 * agentId), else `unknown`; `requested_type`, `spawn_name` and `definition` from that one spawn.
 * Every expected row below is worked out by hand from the lines written here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openContext } from '../../src/context.js';
import { assistant, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';

const S = '5e551011-0000-4000-8000-000000000015';
const at = (s: number) => new Date(Date.UTC(2026, 0, 5, 9, 0, s)).toISOString();
const spawn = (id: string, type: string | null, name?: string, tool = 'Agent') => ({
  type: 'tool_use', id, name: tool, input: { description: 'd', prompt: `p ${id}`, ...(type === null ? {} : { subagent_type: type }), ...(name ? { name } : {}) },
});
/** the parent's user line carrying the tool result of `toolUseId`, naming `agentId` */
const result = (s: number, toolUseId: string, agentId: string) => ({
  type: 'user', sessionId: S, timestamp: at(s), uuid: `r-${toolUseId}`,
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: 'done' }] },
  toolUseResult: { agentId, status: 'completed' },
});
const agent = (id: string, s: number) => [userPrompt(S, at(s), 'go', id), assistant({ session: S, msg: `msg_${id}`, t: at(s + 1), u: { in: 3, w5: 100, out: 2 }, agentId: id })];

async function chains(files: Record<string, object[] | string>) {
  const root = writeCorpus(Object.fromEntries(Object.entries(files).map(([k, v]) => [`projects/-work-demo/${k}`, v])), tempDir());
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const rows = await ctx.store.all(`SELECT coalesce(agent_id, '-') AS agent, agent_type, requested_type, spawn_name, definition FROM chains ORDER BY agent`);
    return Object.fromEntries(rows.map((r) => [r.agent as string, [r.agent_type, r.requested_type, r.spawn_name, r.definition]]));
  } finally {
    ctx.store.close();
  }
}

const sub = (id: string) => `${S}/subagents/agent-${id}`;

test('§1.5: meta type, else the spawn by toolUseId or by the result naming the agentId, else unknown; definition from meta and requested type', async () => {
  const c = await chains({
    [`${S}.jsonl`]: [
      userPrompt(S, at(0), 'plan it'),
      assistant({
        session: S, msg: 'msg_parent', t: at(1), u: { in: 5, w5: 500, out: 9 },
        content: [spawn('tu_lost', 'myplugin:planner', 'planner'), spawn('tu_ok', 'Explore'), spawn('tu_link', 'general-purpose'), spawn('tu_bad', 'Explore', 'bad'), spawn('tu_task', 'Plan', undefined, 'Task')],
      }),
      result(2, 'tu_link', 'link'),
      result(3, 'tu_bad', 'bad'),
      result(4, 'tu_nomatch', 'orphan'),
      result(5, 'tu_task', 'task'),
    ],
    [`${sub('lost')}.jsonl`]: agent('lost', 10),
    [`${sub('lost')}.meta.json`]: JSON.stringify({ agentType: 'planner', toolUseId: 'tu_lost' }),
    [`${sub('ok')}.jsonl`]: agent('ok', 12),
    [`${sub('ok')}.meta.json`]: JSON.stringify({ agentType: 'Explore', toolUseId: 'tu_ok' }),
    // no meta: the tool result naming the agentId finds the spawn
    [`${sub('link')}.jsonl`]: agent('link', 14),
    // a malformed meta: only the type is lost, the spawn found through the tool result stands
    [`${sub('bad')}.jsonl`]: agent('bad', 16),
    [`${sub('bad')}.meta.json`]: '{agentType: "Explore"',
    // an empty meta and a tool result naming a tool_use that does not exist: unknown
    [`${sub('orphan')}.jsonl`]: agent('orphan', 18),
    [`${sub('orphan')}.meta.json`]: '',
    // the meta's toolUseId matches no tool_use; the tool result finds the (Task) spawn, whose type differs
    [`${sub('task')}.jsonl`]: agent('task', 20),
    [`${sub('task')}.meta.json`]: JSON.stringify({ agentType: 'x:y', toolUseId: 'tu_gone' }),
    // no meta, no tool result, no spawn
    [`${sub('none')}.jsonl`]: agent('none', 22),
  });
  assert.deepEqual(c, {
    '-': ['main', null, null, 'main'],
    bad: ['Explore', 'Explore', 'bad', 'unknown'],
    link: ['general-purpose', 'general-purpose', null, 'unknown'],
    lost: ['planner', 'myplugin:planner', 'planner', 'lost'],
    none: ['unknown', null, null, 'unknown'],
    ok: ['Explore', 'Explore', null, 'resolved'],
    orphan: ['unknown', null, null, 'unknown'],
    task: ['x:y', 'Plan', null, 'lost'],
  });
});

test('§1.5: a meta whose agentType is empty has no type: the spawn\'s stands and the definition is unknown', async () => {
  const c = await chains({
    [`${S}.jsonl`]: [userPrompt(S, at(0)), assistant({ session: S, msg: 'msg_parent', t: at(1), u: { in: 5, w5: 500 }, content: [spawn('tu_e', 'myplugin:planner', 'planner')] })],
    [`${sub('e')}.jsonl`]: agent('e', 10),
    [`${sub('e')}.meta.json`]: JSON.stringify({ agentType: '', toolUseId: 'tu_e' }),
  });
  assert.deepEqual(c.e, ['myplugin:planner', 'myplugin:planner', 'planner', 'unknown']);
});

test('§1.5: the two ways to the spawn disagreeing: the meta\'s toolUseId wins, and its spawn is taken whole, never mixed with the other', async () => {
  const c = await chains({
    [`${S}.jsonl`]: [
      userPrompt(S, at(0)),
      // tu_x has a name and no subagent_type; tu_y, whose result names the same agent, has a type and another name
      assistant({ session: S, msg: 'msg_parent', t: at(1), u: { in: 5, w5: 500 }, content: [spawn('tu_x', null, 'xname'), spawn('tu_y', 'Explore', 'yname')] }),
      result(2, 'tu_y', 'x'),
    ],
    [`${sub('x')}.jsonl`]: agent('x', 10),
    [`${sub('x')}.meta.json`]: JSON.stringify({ agentType: 'general-purpose', toolUseId: 'tu_x' }),
  });
  assert.deepEqual(c.x, ['general-purpose', null, 'xname', 'unknown']);
});

test('§1.5: of the tool results naming an agentId, the one of a spawning tool_use counts (a later TaskOutput naming it too does not)', async () => {
  const c = await chains({
    [`${S}.jsonl`]: [
      userPrompt(S, at(0)),
      assistant({ session: S, msg: 'msg_parent', t: at(1), u: { in: 5, w5: 500 }, content: [spawn('tu_h', 'Explore', 'scout')] }),
      result(2, 'tu_h', 'h'),
      // an id that sorts before tu_h, of a tool that spawns nothing, whose result names the agent too
      assistant({ session: S, msg: 'msg_parent2', t: at(3), u: { in: 5, r: 500 }, content: [{ type: 'tool_use', id: 'tu_0out', name: 'TaskOutput', input: { task_id: 'h' } }] }),
      result(4, 'tu_0out', 'h'),
    ],
    [`${sub('h')}.jsonl`]: agent('h', 10),
  });
  assert.deepEqual(c.h, ['Explore', 'Explore', 'scout', 'unknown']);
});
