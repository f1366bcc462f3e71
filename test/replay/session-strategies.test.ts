/**
 * The session strategies on hand-written transcripts (test/replay/session-fixture.ts), where the
 * right answer follows from the fixture: a skill listing of A tokens repeated in each of R rounds.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { replayChain, replaySessionFile, type SessionReplayResult } from '../../src/replay/session-replay.js';
import { formatSessionReplay, sessionReplayRun } from '../../src/replay/session-report.js';
import { renderReplay, replayRunReading } from '../../src/report/section-replay.js';
import { ChartSink } from '../../src/report/section.js';
import { SESSION_STRATEGIES, summarize, type SessionStrategy } from '../../src/replay/session-strategy.js';
import type { TranscriptChain } from '../../src/replay/session-transcript.js';
import { SegmentTokenizer } from '../../src/replay/tokenizer.js';
import { writeCorpus } from '../helpers/corpus.js';
import { SESSION, SKILLS, sessionLines, writeSession } from './session-fixture.js';

const ROUNDS = 3;
const skill = { type: 'skill_listing', content: SKILLS };

async function replay(rounds: number, attachment: typeof skill | null, strategies?: SessionStrategy[]) {
  const tok = await SegmentTokenizer.load('cl100k_base');
  const r = await replaySessionFile(writeSession({ rounds, attachment }), { tokenizer: tok, strategies });
  return { r, tok };
}

const S = (r: SessionReplayResult, s: SessionStrategy) => r.strategies[s]!;

test('the fixture is read as the reader would: 2 requests per round, prefix from request 1', async () => {
  const { r, tok } = await replay(ROUNDS, skill);
  assert.equal(r.chain.requests, 2 * ROUNDS);
  assert.equal(r.chain.rounds, ROUNDS);
  assert.equal(r.chain.attachments, ROUNDS);
  // request 1 = prefix + prompt + attachment, and it is predicted exactly by construction
  const first = r.turns.find((t) => t.strategy === 'recorded' && t.request === 1)!;
  assert.equal(first.input_tokens, 12_003);
  assert.equal(r.calibration.prefix_tokens, 12_003 - r.calibration.message_tokens);
  assert.ok(r.calibration.message_tokens > tok.count(SKILLS));
});

test('recorded: every repeat of the attachment is context already seen', async () => {
  const { r, tok } = await replay(ROUNDS, skill);
  const a = tok.count(SKILLS);
  assert.equal(S(r, 'recorded').context_tokens, ROUNDS * a);
  assert.equal(S(r, 'recorded').already_seen_tokens, (ROUNDS - 1) * a);
  assert.equal(S(r, 'recorded').attachments_sent, ROUNDS);
});

test('dedupe-attachments sends an attachment once: fewer tokens than recorded, none already seen', async () => {
  const { r, tok } = await replay(ROUNDS, skill);
  const a = tok.count(SKILLS);
  const rec = S(r, 'recorded');
  const dd = S(r, 'dedupe-attachments');
  assert.equal(dd.context_tokens, a);
  assert.equal(dd.already_seen_tokens, 0);
  assert.equal(dd.attachments_sent, 1);
  // round k's two requests carry k − 1 copies fewer: 2 × (0 + 1 + 2) copies in all
  assert.equal(rec.input_tokens - dd.input_tokens, 6 * a);
  assert.ok(dd.weight < rec.weight);
});

test('without a repeat, dedupe-attachments is recorded', async () => {
  const { r } = await replay(1, skill);
  assert.deepEqual(S(r, 'dedupe-attachments'), S(r, 'recorded'));
});

test('volatile-prefix drops the cacheable ratio to ~0 and pays a full write every request', async () => {
  const { r } = await replay(ROUNDS, skill);
  const rec = S(r, 'recorded');
  const vol = S(r, 'volatile-prefix');
  assert.ok(rec.cacheable_ratio > 0.5, `recorded ${rec.cacheable_ratio}`);
  assert.ok(vol.cacheable_ratio < 0.01, `volatile ${vol.cacheable_ratio}`);
  assert.ok(vol.uncached_per_warm_turn > 12_000);
  assert.ok(vol.weight > 2 * rec.weight);
});

test('reinject raises context tokens by rounds × attachment tokens', async () => {
  const { r, tok } = await replay(ROUNDS, skill);
  const a = tok.count(SKILLS);
  assert.deepEqual(r.settings.reinject && { type: r.settings.reinject.type, tokens: r.settings.reinject.tokens }, { type: 'skill_listing', tokens: a });
  assert.equal(S(r, 'reinject').context_tokens - S(r, 'recorded').context_tokens, ROUNDS * a);
  assert.equal(S(r, 'reinject').attachments_sent, 2 * ROUNDS);
});

test('reinject takes the largest attachment when there is no skill_listing; without one of the asked type it is not run', async () => {
  const big = { type: 'hook_additional_context', content: SKILLS + '\n' + SKILLS };
  const tok = await SegmentTokenizer.load('cl100k_base');
  const r = await replaySessionFile(writeSession({ rounds: 2, attachment: big }), { tokenizer: tok, strategies: ['reinject'] });
  assert.equal(r.settings.reinject?.type, 'hook_additional_context');
  const none = await replaySessionFile(writeSession({ rounds: 2, attachment: null }), { tokenizer: tok });
  assert.equal(none.strategies.reinject, undefined);
  assert.deepEqual(none.not_run, [{ strategy: 'reinject', reason: 'no attachment in this chain' }]);
  const typed = await replaySessionFile(writeSession({ rounds: 2, attachment: skill }), { tokenizer: tok, strategies: ['reinject'], reinjectType: 'todo_reminder' });
  assert.deepEqual(typed.not_run, [{ strategy: 'reinject', reason: 'no todo_reminder attachment in this chain' }]);
});

test('cold-replay: a fresh process per round (nothing cacheable between turns), warm within its tool loop', async () => {
  const { r } = await replay(ROUNDS, skill);
  const turns = r.turns.filter((t) => t.strategy === 'cold-replay');
  assert.equal(S(r, 'cold-replay').processes, ROUNDS);
  for (const t of turns) {
    const opener = t.request % 2 === 1;
    assert.equal(t.warm, !opener, `request ${t.request}`);
    if (opener) assert.equal(t.cacheable_tokens, 0);
    else assert.ok(t.cacheable_tokens > 12_000);
  }
});

test('cold-replay: each round\'s fresh process is sent the conversation\'s attachments again, none of them seen by it; a repeat within what it is sent is', async () => {
  // the listing (A tokens) in each of 3 rounds: round k's process is sent k copies, k − 1 of them repeats
  const { r } = await replay(ROUNDS, skill);
  const A = r.turns.find((t) => t.strategy === 'recorded')!.context_tokens;
  assert.ok(A > 300);
  const openers = r.turns.filter((t) => t.strategy === 'cold-replay' && t.request % 2 === 1);
  assert.deepEqual(openers.map((t) => [t.context_tokens, t.already_seen_tokens]), [[A, 0], [2 * A, A], [3 * A, 2 * A]]);
  assert.deepEqual([S(r, 'cold-replay').context_tokens, S(r, 'cold-replay').already_seen_tokens, S(r, 'cold-replay').attachments_sent], [6 * A, 3 * A, 6]);
  // recorded sends each once, to its one process
  assert.deepEqual([S(r, 'recorded').context_tokens, S(r, 'recorded').already_seen_tokens, S(r, 'recorded').attachments_sent], [3 * A, 2 * A, 3]);
});

test('cold-replay input grows quadratically in rounds; recorded uncached input only linearly', async () => {
  const small = (await replay(4, null, ['recorded', 'cold-replay'])).r;
  const large = (await replay(8, null, ['recorded', 'cold-replay'])).r;
  const prefix = small.calibration.prefix_tokens;
  // each round's opener carries the whole flattened conversation: equal steps per round
  const openers = large.turns.filter((t) => t.strategy === 'cold-replay' && t.request % 2 === 1).map((t) => t.input_tokens);
  const steps = openers.slice(1).map((x, i) => x - openers[i]!);
  for (const s of steps) assert.ok(Math.abs(s - steps[0]!) <= 0.05 * steps[0]!, `steps ${steps.join(', ')}`);
  // so their sum, beyond the framing each fresh process pays, grows ~4× when rounds double
  const cold = (r: SessionReplayResult, rounds: number) =>
    r.turns.filter((t) => t.strategy === 'cold-replay' && !t.warm).reduce((a, t) => a + t.input_tokens, 0) - rounds * prefix;
  const coldRatio = cold(large, 8) / cold(small, 4);
  assert.ok(coldRatio > 3.3 && coldRatio < 4.7, `cold ratio ${coldRatio}`);
  const rec = (r: SessionReplayResult) => S(r, 'recorded').input_tokens - S(r, 'recorded').cacheable_tokens - prefix;
  const recRatio = rec(large) / rec(small);
  assert.ok(recRatio > 1.7 && recRatio < 2.3, `recorded ratio ${recRatio}`);
});

test('doubling a session doubles the tokenizer work (each message is encoded once)', async () => {
  const work = async (rounds: number) => (await replay(rounds, skill)).r.work.tokens_encoded;
  const [w10, w20, w40] = [await work(10), await work(20), await work(40)];
  // all five strategies re-send the whole history every request: re-encoding it would grow ×4
  const ratio = w40 / w20;
  assert.ok(ratio > 1.7 && ratio < 2.1, `work ${w20} → ${w40} (×${ratio.toFixed(2)})`);
  // beyond the fixed part (the attachment, encoded once), work per added round is constant
  const perRound = (w20 - w10) / 10;
  const perRoundLater = (w40 - w20) / 20;
  assert.ok(Math.abs(perRoundLater - perRound) <= 0.1 * perRound, `${perRound} vs ${perRoundLater} tokens encoded per round`);
});

test('a compaction empties the conversation: the next request is the prefix, the summary and what follows', async () => {
  const tok = await SegmentTokenizer.load('cl100k_base');
  const r = await replaySessionFile(writeSession({ rounds: 3, attachment: skill, compactBefore: 3 }), { tokenizer: tok, strategies: ['recorded'] });
  assert.equal(r.chain.compactions, 1);
  const rec = r.turns.filter((t) => t.strategy === 'recorded');
  const before = rec[3]!; // round 2's answer, the largest before the compaction
  const after = rec[4]!; // round 3's tool call, after the summary
  assert.ok(after.input_tokens < before.input_tokens, `${after.input_tokens} ≥ ${before.input_tokens}`);
  // the process and its framing stay: the prefix is still cacheable
  assert.equal(after.cacheable_tokens, r.calibration.prefix_tokens);
  // the attachment left the context with the compaction: round 3's copy is not already seen
  assert.equal(after.already_seen_tokens, 0);
  assert.equal(after.context_tokens, tok.count(SKILLS));
});

test('a request stamped before the one above it (the clock stepped back an hour) has no gap: it reads when the logged request read; the next one, 20 s on, reads', async () => {
  // the fixture's lines are 10 s apart; from round 2's tool call (request 3) on, every line is stamped an hour earlier
  const replay = async (readLogged: boolean) => {
    const lines = sessionLines({ rounds: 2 }) as { timestamp: string; message?: { id?: string; usage?: Record<string, number> } }[];
    const from = lines.findIndex((l) => l.message?.id === 'msg_2a');
    for (const l of lines.slice(from)) l.timestamp = new Date(Date.parse(l.timestamp) - 3_600_000).toISOString();
    if (!readLogged) lines[from]!.message!.usage!.cache_read_input_tokens = 0;
    const path = join(writeCorpus({ [`p/${SESSION}.jsonl`]: lines }), `p/${SESSION}.jsonl`);
    const r = await replaySessionFile(path, { tokenizer: await SegmentTokenizer.load('cl100k_base'), strategies: ['recorded'] });
    return r.turns.filter((t) => t.strategy === 'recorded').map((t) => [t.request, t.cache, t.gap_s, t.read_tokens === t.cacheable_tokens && t.read_tokens > 0]);
  };
  assert.deepEqual(await replay(true), [
    [1, 'none', null, false],
    [2, 'read', 20, true],
    [3, 'read', null, true],
    [4, 'read', 20, true],
  ]);
  assert.deepEqual((await replay(false))[2], [3, 'expired', null, false]);
});

test('a request stamped before the one above it that did not read the cache is not counted past the TTL: the table gives it its own row, the JSON adds expired_unknown_gap_requests', async () => {
  const lines = sessionLines({ rounds: 2 }) as { timestamp: string; message?: { id?: string; usage?: Record<string, number> } }[];
  const from = lines.findIndex((l) => l.message?.id === 'msg_2a');
  for (const l of lines.slice(from)) l.timestamp = new Date(Date.parse(l.timestamp) - 3_600_000).toISOString();
  lines[from]!.message!.usage!.cache_read_input_tokens = 0;
  const path = join(writeCorpus({ [`p/${SESSION}.jsonl`]: lines }), `p/${SESSION}.jsonl`);
  const r = await replaySessionFile(path, { tokenizer: await SegmentTokenizer.load('cl100k_base'), strategies: ['recorded'] });
  // expired_requests keeps its meaning (every cache: expired); the new key says which of them had no gap
  assert.equal(S(r, 'recorded').expired_requests, 1);
  assert.equal(S(r, 'recorded').expired_unknown_gap_requests, 1);
  const text = formatSessionReplay(r);
  assert.match(text, /^requests past the TTL \(expired\)\s+0$/m);
  assert.match(text, /^requests not read, gap unknown \(clock stepped back\)\s+1$/m);
  // a chain without one: no such row
  const plain = await replaySessionFile(join(writeCorpus({ [`p/${SESSION}.jsonl`]: sessionLines({ rounds: 2 }) }), `p/${SESSION}.jsonl`), { tokenizer: await SegmentTokenizer.load('cl100k_base'), strategies: ['recorded'] });
  assert.equal(S(plain, 'recorded').expired_unknown_gap_requests, 0);
  assert.doesNotMatch(formatSessionReplay(plain), /gap unknown/);
});

test('the fidelity counts one request that read nothing in the singular: "observed 0 in 1 request", not "0 in 1 requests; … 0 in 1 of them"', async () => {
  const lines = sessionLines({ rounds: 2 }) as { message?: { id?: string; usage?: Record<string, number> } }[];
  lines.find((l) => l.message?.id === 'msg_2a')!.message!.usage!.cache_read_input_tokens = 0;
  const path = join(writeCorpus({ [`p/${SESSION}.jsonl`]: lines }), `p/${SESSION}.jsonl`);
  const r = await replaySessionFile(path, { tokenizer: await SegmentTokenizer.load('cl100k_base'), strategies: ['recorded'] });
  assert.equal(r.fidelity!.cache_read.observed_zero, 1);
  assert.match(formatSessionReplay(r), /^cache reads observed 0 in 1 request; the replay predicted (0 there too|a read there)$/m);
});

test('a request whose logged usage is all 0 has no relative error: counted in fidelity.prompt.observed_zero and said under the table, not left out of the prompt row unsaid', async () => {
  const lines = sessionLines({ rounds: 2 }) as { message?: { id?: string; usage?: Record<string, unknown> } }[];
  const u = lines.find((l) => l.message?.id === 'msg_2a')!.message!.usage!;
  Object.assign(u, { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } });
  const path = join(writeCorpus({ [`p/${SESSION}.jsonl`]: lines }), `p/${SESSION}.jsonl`);
  const r = await replaySessionFile(path, { tokenizer: await SegmentTokenizer.load('cl100k_base'), strategies: ['recorded'] });
  assert.equal(r.fidelity!.requests, 3);
  assert.equal(r.fidelity!.prompt.n, 2);
  assert.equal(r.fidelity!.prompt.observed_zero, 1);
  assert.match(formatSessionReplay(r), /^prompt size observed 0 in 1 request \(usage all 0 in the log\): no relative error, left out of the prompt row$/m);
});

test('a strategy with no warm request has no uncached tokens per warm turn (null, —, n/a), and is not the one that sends the fewest', async () => {
  // two rounds of one request each: cold-replay starts a process per round, so none of its requests is warm
  const lines = (sessionLines({ rounds: 2 }) as { message?: { id?: string } }[]).filter((l) => !l.message?.id?.endsWith('b'));
  const path = join(writeCorpus({ [`p/${SESSION}.jsonl`]: lines }), `p/${SESSION}.jsonl`);
  const r = await replaySessionFile(path, { tokenizer: await SegmentTokenizer.load('cl100k_base'), strategies: ['recorded', 'cold-replay'] });
  assert.equal(S(r, 'cold-replay').warm_requests, 0);
  assert.equal(S(r, 'cold-replay').uncached_per_warm_turn, null);
  assert.equal(typeof S(r, 'recorded').uncached_per_warm_turn, 'number');
  assert.match(formatSessionReplay(r), /^uncached tokens per warm turn\s+[\d,]+\s+—$/m);
  const run = sessionReplayRun(r);
  const reading = replayRunReading(run);
  assert.match(reading, /“recorded” sends the fewest uncached tokens per warm turn \([\d,]+; “cold-replay” has no warm turn\)/);
  assert.doesNotMatch(reading, /“cold-replay” sends the fewest/);
  // the report's table: n/a, as its other undefined figures
  assert.match(String(renderReplay({ runs: [run] }, new ChartSink()).body), /<td[^>]*>cold-replay<\/td>(<td[^>]*>[^<]*<\/td>){3}<td[^>]*>n\/a<\/td>/);
  // no strategy with a warm request: said so, not "every strategy sends 0"
  const one = await replaySessionFile(join(writeCorpus({ [`p/${SESSION}.jsonl`]: lines.slice(0, 2) }), `p/${SESSION}.jsonl`), { tokenizer: await SegmentTokenizer.load('cl100k_base'), strategies: ['recorded', 'cold-replay'] });
  assert.match(replayRunReading(sessionReplayRun(one)), /no strategy has a warm turn to count uncached tokens on\.$/);
});

test('sessionReplayRun hands the report the same numbers under its names', async () => {
  const { r } = await replay(ROUNDS, skill);
  const run = sessionReplayRun(r);
  assert.equal(run.kind, 'session');
  assert.deepEqual(run.strategies.map((s) => s.strategy), [...SESSION_STRATEGIES]);
  const rec = run.strategies[0]!;
  assert.equal(rec.inputTokens, S(r, 'recorded').input_tokens);
  assert.equal(rec.alreadySeen, S(r, 'recorded').already_seen_tokens);
  assert.equal(rec.turns!.length, 2 * ROUNDS);
  // without --calibrate: no calibration line in the report
  assert.equal(run.calibration, undefined);
  assert.deepEqual(run.fidelity, {
    requests: 2 * ROUNDS - 1,
    from: 2,
    medianRelError: r.fidelity!.prompt.median_rel_error,
    p90RelError: r.fidelity!.prompt.p90_rel_error,
    compared: r.fidelity!.requests,
    meanSignedRelError: r.fidelity!.prompt.mean_signed_rel_error,
    observedZero: r.fidelity!.prompt.observed_zero,
    cacheRead: {
      requests: r.fidelity!.cache_read.n,
      medianRelError: r.fidelity!.cache_read.median_rel_error,
      p90RelError: r.fidelity!.cache_read.p90_rel_error,
      meanSignedRelError: r.fidelity!.cache_read.mean_signed_rel_error,
      observedZero: r.fidelity!.cache_read.observed_zero,
      predictedZeroToo: r.fidelity!.cache_read.predicted_zero_too,
    },
  });
});

test('a chain of 150,000 requests replays: its turns and times are not spread into one call ("Maximum call stack size exceeded")', async () => {
  const n = 150_000;
  const t0 = Date.parse('2026-03-01T10:00:00Z');
  const items: TranscriptChain['items'] = [{ kind: 'message', line: 1, role: 'user', prompt: true, blocks: [{ type: 'text', text: 'hi' }], key: null }];
  for (let i = 0; i < n; i++) {
    const usage = { input: 3, output: 1, cacheWrite: 0, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 100, webSearch: 0, webFetch: 0 };
    items.push({ kind: 'request', line: i + 2, key: `m${i}`, t: t0 + i * 1000, model: 'claude-sonnet-4-5', usage });
  }
  const chain: TranscriptChain = { chainId: 's', sessionId: 's', agentId: null, kind: 'main', items, requests: n, copied: 0 };
  const r = await replayChain(chain, { tokenizer: await SegmentTokenizer.load('cl100k_base'), strategies: ['recorded'] });
  assert.equal(r.turns.length, n);
  assert.equal(r.chain.first_at, '2026-03-01T10:00:00.000Z');
  assert.equal(r.chain.last_at, new Date(t0 + (n - 1) * 1000).toISOString());
});

test('sessionReplayRun titles a chain of one request in the singular, as the text header does ("1 requests" read before)', async () => {
  const lines = sessionLines({ rounds: 1 }) as { type: string; message?: { content: unknown } }[];
  // round 1 up to its tool result: one request
  const one = lines.slice(0, lines.findIndex((l) => JSON.stringify(l).includes('"tool_result"')));
  const path = join(writeCorpus({ [`p/${SESSION}.jsonl`]: one }), `p/${SESSION}.jsonl`);
  const r = await replaySessionFile(path, { tokenizer: await SegmentTokenizer.load('cl100k_base'), strategies: ['recorded'] });
  assert.equal(r.chain.requests, 1);
  assert.equal(sessionReplayRun(r).title, `main chain ${SESSION} (1 request)`);
});

test('no context sent: already-seen share is null (—), not 0; no input: cacheable ratio null (—, n/a in the report), and the reading names no strategy the most cacheable', async () => {
  const { r } = await replay(ROUNDS, null);
  for (const x of Object.values(r.strategies)) {
    assert.equal(x.context_tokens, 0);
    assert.equal(x.already_seen_share, null);
    assert.equal(typeof x.cacheable_ratio, 'number');
  }
  assert.match(formatSessionReplay(r), /^ {2}of which already seen(\s+0)+$/m);
  // a chain with no request has no input to take a ratio of
  const none = summarize([], 0);
  assert.equal(none.cacheable_ratio, null);
  assert.equal(none.already_seen_share, null);
  const empty = { ...r, strategies: { recorded: none, 'cold-replay': none }, turns: [] } as SessionReplayResult;
  const text = formatSessionReplay(empty);
  assert.match(text, /^cacheable ratio\s+—\s+—$/m);
  assert.doesNotMatch(text, /NaN|null/);
  const run = sessionReplayRun(empty);
  assert.equal(run.strategies[0]!.cacheableRatio, null);
  const html = String(renderReplay({ runs: [run] }, new ChartSink()).body);
  assert.match(html, /<td[^>]*>cold-replay<\/td>(<td[^>]*>[^<]*<\/td>){2}<td[^>]*>n\/a<\/td>/);
  assert.doesNotMatch(html, /NaN|>null</);
  assert.match(replayRunReading(run), /^Nothing was replayed: no strategy sent any input/);
  // one strategy without input beside one with: the other is the most cacheable alone, and the one without is said
  const one = { ...run, strategies: [sessionReplayRun(r).strategies[0]!, run.strategies[1]!] };
  const reading = replayRunReading(one);
  assert.match(reading, /^“recorded” caches [\d.]+% of input; “cold-replay” sends no input;/);
  assert.doesNotMatch(reading, /NaN|null/);
  const two = String(renderReplay({ runs: [one, run] }, new ChartSink()).reading);
  assert.doesNotMatch(two, /NaN|null/);
});
