/**
 * One small hand-written fixture per trap of SPEC §1.3 / §2 / §8; every expected number is
 * computed in the test from the fixture's own numbers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assistant, cli, summaryJson, userPrompt, writeCorpus } from '../helpers/corpus.js';

const S = '11111111-1111-4111-8111-111111111111';
const P = 'projects/-work-demo';

test('one response written over 3 lines with rising output_tokens counts once, with the final output', () => {
  const lines = [1, 7, 42].map((out, i) =>
    assistant({ session: S, msg: 'msg_A', t: `2026-02-01T10:00:0${i}.000Z`, u: { in: 3, out, w5: 1000, r: 5000 } }),
  );
  const root = writeCorpus({ [`${P}/${S}.jsonl`]: [userPrompt(S, '2026-02-01T09:59:59.000Z'), ...lines] });
  const s = summaryJson([root]);
  assert.equal(s.totals.requests, 1);
  assert.equal(s.totals.output, 42);
  assert.equal(s.totals.input, 3);
  assert.equal(s.totals.cache_write_5m, 1000);
  assert.equal(s.totals.cache_read, 5000);
  assert.equal(s.quality.duplicates_removed, 2);
  // Opus 4.6: 3×1 + 1000×1.25 + 5000×0.1 + 42×5 = 1963 weight, × $5/M
  assert.equal(s.totals.weight, 3 + 1250 + 500 + 210);
  assert.ok(Math.abs(s.totals.usd - 1963 * 5e-6) < 1e-12);
});

test('a request in a subagent file and as agent_progress in the parent counts once, attributed to the subagent', () => {
  const sub = assistant({ session: S, msg: 'msg_SUB', t: '2026-02-01T10:01:00.000Z', model: 'claude-haiku-4-5-20251001', u: { in: 10, out: 20, w5: 2000 }, agentId: 'a1' });
  const progress = {
    type: 'progress', sessionId: S, timestamp: '2026-02-01T10:01:00.000Z', cwd: '/work/demo',
    data: { type: 'agent_progress', agentId: 'a1', message: { type: 'assistant', timestamp: '2026-02-01T10:01:00.000Z', requestId: 'req_msg_SUB', message: (sub.message as object) } },
  };
  const main = assistant({ session: S, msg: 'msg_MAIN', t: '2026-02-01T10:00:00.000Z', u: { in: 1, out: 1, w5: 100 } });
  const root = writeCorpus({
    [`${P}/${S}.jsonl`]: [userPrompt(S, '2026-02-01T09:59:00.000Z'), main, progress],
    [`${P}/${S}/subagents/agent-a1.jsonl`]: [userPrompt(S, '2026-02-01T10:00:30.000Z', 'sub task', 'a1'), sub],
  });
  const s = summaryJson([root]);
  assert.equal(s.totals.requests, 2);
  assert.equal(s.totals.output, 21);
  assert.equal(s.totals.cache_write_5m, 2100);
  const haiku = s.by_model.find((m: any) => m.model === 'claude-haiku-4-5-20251001');
  assert.equal(haiku.requests, 1);
});

test('a request copied only as agent_progress (its subagent file missing) still counts, once', () => {
  const inner = assistant({ session: S, msg: 'msg_ONLY', t: '2026-02-01T10:01:00.000Z', u: { in: 5, out: 9, w5: 300 }, agentId: 'a9' });
  const progress = (n: number) => ({
    type: 'progress', sessionId: S, timestamp: `2026-02-01T10:01:0${n}.000Z`,
    data: { type: 'agent_progress', agentId: 'a9', message: { type: 'assistant', timestamp: '2026-02-01T10:01:00.000Z', requestId: 'req_msg_ONLY', message: inner.message } },
  });
  const root = writeCorpus({ [`${P}/${S}.jsonl`]: [progress(1), progress(2)] });
  const s = summaryJson([root]);
  assert.equal(s.totals.requests, 1);
  assert.equal(s.totals.output, 9);
});

test('missing requestId: identity is message.id alone, so its copies still merge', () => {
  const root = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      assistant({ session: S, msg: 'msg_NOREQ', req: null, t: '2026-02-01T10:00:00.000Z', u: { in: 1, out: 5, w5: 10 } }),
      assistant({ session: S, msg: 'msg_NOREQ', req: null, t: '2026-02-01T10:00:01.000Z', u: { in: 1, out: 8, w5: 10 } }),
      assistant({ session: S, msg: 'msg_OTHER', req: null, t: '2026-02-01T10:00:02.000Z', u: { in: 1, out: 2, w5: 10 } }),
    ],
  });
  const s = summaryJson([root]);
  assert.equal(s.totals.requests, 2);
  assert.equal(s.totals.output, 10);
});

test('usage without the 5m/1h split (Claude Code 1.0) is all 5-minute write; 1h writes weigh 2', () => {
  const root = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      assistant({ session: S, msg: 'msg_OLD', t: '2026-02-01T10:00:00.000Z', model: 'claude-sonnet-4-20250514', u: { w5: 4000, split: false } }),
      assistant({ session: S, msg: 'msg_1H', t: '2026-02-01T10:00:05.000Z', model: 'claude-sonnet-4-20250514', u: { w1h: 1000 } }),
    ],
  });
  const s = summaryJson([root]);
  assert.equal(s.totals.cache_write_5m, 4000);
  assert.equal(s.totals.cache_write_1h, 1000);
  // Sonnet 4: 4000×1.25 + 1000×2 = 7000 weight at $3/M
  assert.equal(s.totals.weight, 7000);
  assert.ok(Math.abs(s.totals.usd - 7000 * 3e-6) < 1e-12);
});

test('<synthetic> lines are not requests; an unknown model is listed and never priced at $0', () => {
  const synthetic = assistant({ session: S, msg: 'msg_SYN', t: '2026-02-01T10:00:00.000Z', model: '<synthetic>', u: { out: 0 } });
  const root = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      synthetic,
      assistant({ session: S, msg: 'msg_X', t: '2026-02-01T10:00:01.000Z', model: 'claude-mystery-9', u: { in: 100, out: 10 } }),
      assistant({ session: S, msg: 'msg_Y', t: '2026-02-01T10:00:02.000Z', model: 'claude-haiku-4-5', u: { in: 100, out: 10 } }),
    ],
  });
  const s = summaryJson([root]);
  assert.equal(s.totals.requests, 2);
  assert.equal(s.quality.synthetic, 1);
  assert.deepEqual(s.quality.unknown_models, [{ model: 'claude-mystery-9', requests: 1, tokens: 110 }]);
  assert.equal(s.totals.unpriced_requests, 1);
  // only Haiku is priced: 100 + 10×5 = 150 weight at $1/M
  assert.equal(s.totals.weight, 150);
  assert.equal(s.totals.input, 200, 'tokens of the unpriced model still count');
  const mystery = s.by_model.find((m: any) => m.model === 'claude-mystery-9');
  assert.equal(mystery.usd, null, 'an unpriced model costs unknown, not $0');
  assert.equal(mystery.weight, null);
  const text = cli(['summary', root, '--db', ':memory:', '--timezone', 'UTC']).stdout;
  assert.match(text, /claude-mystery-9 .* unknown\s+unknown/);
});

test('invalid JSON mid-file and a half-written last line are skipped, counted and located; the rest is read', () => {
  const good = (m: string, t: string) => JSON.stringify(assistant({ session: S, msg: m, t, u: { in: 1, out: 1 } }));
  const text = [good('msg_1', '2026-02-01T10:00:00.000Z'), '{"type": "assistant", "message": {oops', good('msg_2', '2026-02-01T10:00:01.000Z'), '{"type":"assistant","mess'].join('\n');
  const root = writeCorpus({ [`${P}/${S}.jsonl`]: text });
  const s = summaryJson([root]);
  assert.equal(s.totals.requests, 2);
  const byReason = Object.fromEntries(s.quality.skipped.map((g: any) => [g.reason, g]));
  assert.equal(byReason.invalid_json.count, 1);
  assert.equal(byReason.invalid_json.examples[0].line, 2);
  assert.ok(byReason.invalid_json.examples[0].file.endsWith(`${S}.jsonl`));
  assert.equal(byReason.incomplete_last_line.count, 1);
  assert.equal(byReason.incomplete_last_line.examples[0].line, 4);
  assert.equal(s.quality.skipped_lines, 2);
});

test('a 5 MB line (a pasted log in a tool result) is read, and the request beside it counted', () => {
  const big = { type: 'user', sessionId: S, timestamp: '2026-02-01T10:00:00.000Z', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x'.repeat(5 * 1024 * 1024) }] } };
  const root = writeCorpus({
    [`${P}/${S}.jsonl`]: [big, assistant({ session: S, msg: 'msg_after', t: '2026-02-01T10:00:01.000Z', u: { in: 7, out: 3, r: 5_000_000 } })],
  });
  const s = summaryJson([root]);
  assert.equal(s.totals.requests, 1);
  assert.equal(s.totals.cache_read, 5_000_000);
  assert.equal(s.quality.skipped_lines, 0);
  assert.equal(s.quality.lines, 2);
});

test('Sonnet 4.5 long context: a request whose prompt exceeds 200k is billed whole at $6/$22.50', () => {
  const root = writeCorpus({
    [`${P}/${S}.jsonl`]: [
      assistant({ session: S, msg: 'msg_LC', t: '2026-02-01T10:00:00.000Z', model: 'claude-sonnet-4-5-20250929', u: { in: 1000, r: 200_000, out: 100 } }),
      assistant({ session: S, msg: 'msg_SC', t: '2026-02-01T10:00:01.000Z', model: 'claude-sonnet-4-5-20250929', u: { in: 1000, r: 199_000, out: 100 } }),
    ],
  });
  const s = summaryJson([root]);
  const long = (1000 * 6 + 200_000 * 0.6 + 100 * 22.5) / 1e6;
  const short = (1000 * 3 + 199_000 * 0.3 + 100 * 15) / 1e6;
  assert.ok(Math.abs(s.totals.usd - (long + short)) < 1e-9, `usd ${s.totals.usd} vs ${long + short}`);
});
