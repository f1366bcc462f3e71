/**
 * The conversation-scale calibration (`--calibrate K`) on hand-made chains whose observed prompts
 * are built from a known scale: prefix + s × the conversation's cl100k_base tokens.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { conversationTokens, fitConversationScale, scaledTokens } from '../../src/replay/session-calibrate.js';
import { rebuildChain } from '../../src/replay/session-rebuild.js';
import { pickChain, replayChain, type SessionReplayResult } from '../../src/replay/session-replay.js';
import { SESSION_STRATEGIES } from '../../src/replay/session-strategy.js';
import { readSessionTranscript, type TranscriptChain } from '../../src/replay/session-transcript.js';
import { SegmentTokenizer } from '../../src/replay/tokenizer.js';
import { SKILLS, writeSession, type FixtureOptions } from './session-fixture.js';
import { sessionReplayRun } from '../../src/replay/session-report.js';
import { renderReplay } from '../../src/report/section-replay.js';
import { ChartSink } from '../../src/report/section.js';
import { jsonNumber } from '../../src/format/json-numbers.js';

let tok: SegmentTokenizer;
before(async () => {
  tok = await SegmentTokenizer.load('cl100k_base');
});

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = (s.length - 1) / 2;
  return (s[Math.floor(m)]! + s[Math.ceil(m)]!) / 2;
};

/**
 * The fixture's chain with every request after the first re-observed as Claude would count it if
 * its conversation were `scale` × its cl100k_base tokens: P = prefix + scale × conversation, of
 * which the previous request's P is read and the rest written (5-minute TTL).
 */
async function scaledChain(o: FixtureOptions, scale: number): Promise<TranscriptChain> {
  const chain = pickChain((await readSessionTranscript(writeSession(o))).chains);
  const rc = await rebuildChain(chain, tok);
  const conv = conversationTokens(rc);
  const prefix = rc.calibration.prefix_tokens;
  let i = 0;
  let prevP = 0;
  for (const it of chain.items) {
    if (it.kind !== 'request') continue;
    if (i > 0) {
      const p = prefix + Math.round(scale * conv[i]!);
      const w = p - prevP - 3;
      it.usage = { ...it.usage, input: 3, cacheRead: prevP, cacheWrite: w, cacheWrite5m: w, cacheWrite1h: 0 };
    }
    prevP = it.usage.input + it.usage.cacheWrite + it.usage.cacheRead;
    i++;
  }
  return chain;
}

const heldOutMedian = (r: SessionReplayResult, from: number) =>
  median(r.fidelity!.rows.filter((x) => x.request >= from).map((x) => Math.abs(x.predicted_prompt - x.observed_prompt) / x.observed_prompt));

test('scaledTokens: framing as it is, every token after it × scale (the doc example)', () => {
  assert.equal(scaledTokens(12_000, 10_000, 1.3), 12_600);
  assert.equal(scaledTokens(4, 10_000, 1.3), 4);
  assert.equal(scaledTokens(12_345, 10_000, 1), 12_345);
});

test('conversationTokens is what recorded predicts beyond the prefix, and a compaction starts it again', async () => {
  const chain = pickChain((await readSessionTranscript(writeSession({ rounds: 6, compactBefore: 4 }))).chains);
  const rc = await rebuildChain(chain, tok);
  const conv = conversationTokens(rc);
  const r = await replayChain(chain, { strategies: ['recorded'], tokenizer: tok });
  assert.deepEqual(
    r.turns.map((t) => t.input_tokens - rc.calibration.prefix_tokens),
    conv,
  );
  // requests 6 and 7 are the last of round 3 and the first after the compaction
  assert.ok(conv[6]! < conv[5]!, `${conv[5]} → ${conv[6]}`);
});

test('the fit recovers a known conversation scale, and held-out fidelity improves', async () => {
  const chain = await scaledChain({ rounds: 8, firstPrompt: 2_000 }, 1.3);
  const fit = fitConversationScale(await rebuildChain(chain, tok), 4);
  assert.equal(fit.reason, null);
  assert.ok(Math.abs(fit.scale! - 1.3) < 0.002, `scale ${fit.scale}`);
  assert.deepEqual({ k: fit.k, fit_requests: fit.fit_requests, held_out_from: fit.held_out_from }, { k: 4, fit_requests: 4, held_out_from: 6 });

  const off = await replayChain(chain, { strategies: ['recorded'], tokenizer: tok });
  const on = await replayChain(chain, { strategies: ['recorded'], tokenizer: tok, calibrate: 4 });
  assert.equal(off.fidelity!.calibration, null);
  assert.equal(off.fidelity!.from, 2);
  const f = on.fidelity!;
  assert.deepEqual(f.calibration, fit);
  assert.deepEqual(on.calibration.conversation, fit);
  assert.equal(on.settings.calibrate, 4);
  // held out: requests 6…16 only
  assert.equal(f.from, 6);
  assert.equal(f.requests, 16 - 5);
  assert.equal(f.prompt.n, 11);
  const before = heldOutMedian(off, 6);
  assert.ok(before > 0.05, `uncalibrated held-out median ${before}`);
  assert.ok(f.prompt.median_rel_error < 0.001, `calibrated ${f.prompt.median_rel_error}`);
  assert.ok(f.cache_read.median_rel_error < 0.001, `reads ${f.cache_read.median_rel_error}`);
  assert.equal(f.prompt.median_rel_error, heldOutMedian(on, 6));
});

test('the fit holds across a compaction inside its window', async () => {
  const chain = await scaledChain({ rounds: 8, firstPrompt: 2_000, compactBefore: 3 }, 1.25);
  const fit = fitConversationScale(await rebuildChain(chain, tok), 6);
  assert.ok(Math.abs(fit.scale! - 1.25) < 0.002, `scale ${fit.scale}`);
});

test('every strategy counts its conversation × the scale and its framing as it is', async () => {
  const o = { rounds: 4, firstPrompt: 8_000, attachment: { type: 'skill_listing', content: SKILLS } };
  const chain = await scaledChain(o, 1.4);
  const off = await replayChain(chain, { tokenizer: tok });
  const on = await replayChain(chain, { tokenizer: tok, calibrate: 3 });
  const s = on.fidelity!.calibration!.scale!;
  const prefix = on.calibration.prefix_tokens;
  assert.deepEqual(Object.keys(on.strategies), [...SESSION_STRATEGIES]);
  for (const st of SESSION_STRATEGIES) {
    const a = off.turns.filter((t) => t.strategy === st);
    const b = on.turns.filter((t) => t.strategy === st);
    for (let i = 0; i < a.length; i++) {
      const lead = st === 'volatile-prefix' ? a[i]!.input_tokens - (off.turns.find((t) => t.strategy === 'recorded' && t.request === a[i]!.request)!.input_tokens - prefix) : prefix;
      assert.equal(b[i]!.input_tokens, scaledTokens(a[i]!.input_tokens, lead, s), `${st} request ${i + 1}`);
      assert.equal(b[i]!.context_tokens, Math.round(a[i]!.context_tokens * s), `${st} request ${i + 1}`);
    }
    assert.ok(on.strategies[st]!.weight > off.strategies[st]!.weight, st);
  }
  // the status line's few shared tokens are framing: volatile-prefix stays uncacheable
  assert.equal(on.strategies['volatile-prefix']!.cacheable_tokens, off.strategies['volatile-prefix']!.cacheable_tokens);
});

test('a chain shorter than K+2 requests is not calibrated, and says so', async () => {
  const chain = await scaledChain({ rounds: 2 }, 1.3);
  const off = await replayChain(chain, { tokenizer: tok });
  const on = await replayChain(chain, { tokenizer: tok, calibrate: 3 });
  const c = on.fidelity!.calibration!;
  assert.equal(c.scale, null);
  assert.match(c.reason!, /a chain of 4 requests.*needs 5/);
  assert.equal(on.fidelity!.from, 2);
  assert.deepEqual(on.strategies, off.strategies);
  assert.deepEqual(on.fidelity!.prompt, off.fidelity!.prompt);
  // K+2 = 4 requests is enough: 3 fit, 1 held out
  assert.equal((await replayChain(chain, { tokenizer: tok, calibrate: 2 })).fidelity!.requests, 1);
});

test('--calibrate must be a whole number ≥ 0', async () => {
  const chain = await scaledChain({ rounds: 2 }, 1.3);
  for (const k of [-1, 1.5, Number.NaN]) await assert.rejects(replayChain(chain, { tokenizer: tok, calibrate: k }), UsageError, String(k));
  assert.equal((await replayChain(chain, { tokenizer: tok, calibrate: 0 })).fidelity!.calibration, null);
});

test('the report\'s session replay carries the calibration and shows its line: the scale, K and the held-out fidelity', async () => {
  const chain = await scaledChain({ rounds: 8, firstPrompt: 2_000 }, 1.3);
  const on = await replayChain(chain, { tokenizer: tok, calibrate: 4 });
  const run = sessionReplayRun(on);
  const conv = on.calibration.conversation!;
  assert.deepEqual(run.calibration, { k: 4, scale: conv.scale, heldOutFrom: 6, reason: null });
  assert.deepEqual(run.fidelity, {
    requests: 11,
    from: 6,
    medianRelError: on.fidelity!.prompt.median_rel_error,
    p90RelError: on.fidelity!.prompt.p90_rel_error,
    compared: on.fidelity!.requests,
    meanSignedRelError: on.fidelity!.prompt.mean_signed_rel_error,
    observedZero: on.fidelity!.prompt.observed_zero,
    cacheRead: {
      requests: on.fidelity!.cache_read.n,
      medianRelError: on.fidelity!.cache_read.median_rel_error,
      p90RelError: on.fidelity!.cache_read.p90_rel_error,
      meanSignedRelError: on.fidelity!.cache_read.mean_signed_rel_error,
      observedZero: on.fidelity!.cache_read.observed_zero,
      predictedZeroToo: on.fidelity!.cache_read.predicted_zero_too,
    },
  });
  const body = renderReplay({ runs: [run] }, new ChartSink()).body.value;
  const line = /<p class="calibration" data-k="4" data-scale="([^"]+)">([^<]*)<\/p>/.exec(body);
  assert.ok(line, 'a calibration line');
  assert.equal(Number(line[1]), jsonNumber(conv.scale!), 'the scale as --json writes it');
  assert.match(line[2]!, new RegExp(`^conversation tokens × ${conv.scale!.toFixed(3).replace('.', '\\.')} in every strategy \\(--calibrate 4: fitted on requests 2–5\\) · held-out fidelity over 11 requests \\(from request 6\\): median relative error `));
  // the fidelity is said once, on the calibration line
  assert.equal([...body.matchAll(/fidelity over/g)].length, 1);

  // too short to calibrate: the line says so, and the fidelity is the uncalibrated one
  const short = sessionReplayRun(await replayChain(await scaledChain({ rounds: 2 }, 1.3), { tokenizer: tok, calibrate: 3 }));
  assert.equal(short.calibration!.scale, null);
  const shortBody = renderReplay({ runs: [short] }, new ChartSink()).body.value;
  assert.match(shortBody, /<p class="calibration" data-k="3" data-scale="null">--calibrate 3: not calibrated \(a chain of 4 requests; fitting on 3 requests after the first and holding one out needs 5\); the replay is the uncalibrated one · fidelity over 3 requests \(from request 2\)/);

  // off (the default): no line
  const off = renderReplay({ runs: [sessionReplayRun(await replayChain(chain, { tokenizer: tok }))] }, new ChartSink()).body.value;
  assert.doesNotMatch(off, /class="calibration"/);
});
