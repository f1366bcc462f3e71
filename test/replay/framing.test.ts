import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SegmentTokenizer } from '../../src/replay/tokenizer.js';
import { briefText, framingFor, payloadText, statusLine } from '../../src/replay/framing.js';

const tokP = SegmentTokenizer.load('cl100k_base');

test('the framing is sized to --prefix-tokens, system prompt first, then tool schemas', async () => {
  const tok = await tokP;
  for (const n of [300, 2120, 6000]) {
    const segs = framingFor(tok, n);
    const total = segs.reduce((a, s) => a + s.tokens.length, 0);
    assert.ok(Math.abs(total - n) <= 2, `${n} → ${total}`);
    assert.match(segs[0]!.text, /^You are Claude/);
  }
  assert.ok(framingFor(tok, 6000).some((s) => s.text.includes('mcp__team_tools_')), 'large budgets add MCP tools');
});

test('the brief is ~466 tokens and says channel text is untrusted data', async () => {
  const tok = await tokP;
  const brief = briefText('backend', '@claude');
  assert.ok(Math.abs(tok.count(brief) - 466) <= 10, String(tok.count(brief)));
  assert.match(brief, /UNTRUSTED DATA/);
});

test('the mention payload carries the documented fields; the status line changes per turn', () => {
  const mention = { id: 'm0042', author: 'maya', created_at: '2025-03-11T10:00:00.000Z', text: '@claude "quoted"\nnext' };
  const p = JSON.parse(payloadText({ channel: 'backend', mention, runId: 'run-3', bindingId: 'b1', agents: ['@claude'], maxRecipients: 3 }));
  assert.deepEqual(Object.keys(p), ['channel_id', 'message_id', 'run_id', 'binding_id', 'runtime', 'supervised', 'resident', 'thread_root_id', 'channel_agents', 'max_recipients', 'text']);
  assert.equal(p.text, mention.text);
  assert.equal(p.thread_root_id, null);
  assert.equal(statusLine('backend', 6, '2025-03-11T10:00:00.000Z'), 'Channel #backend · 6 online · branch main · turn at 2025-03-11T10:00:00.000Z');
});
