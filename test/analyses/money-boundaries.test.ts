/**
 * SPEC §2/§3 at their boundaries, through the CLI, against answers worked out by hand (and against
 * the reference of `test/helpers/reference-anatomy.ts`, which must agree on every one of them).
 * Opus 4.6: $5 base input; weights 1 input, 1.25 5-minute write, 2 1-hour write, 0.1 read, 5 output.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { referenceAnatomy } from '../helpers/reference-anatomy.js';
import { assistant, cli, tempDir, userPrompt, writeCorpus, type UsageSpec } from '../helpers/corpus.js';

const T0 = Date.parse('2026-03-02T09:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const S = 'b0b0b0b0-0000-4000-8000-000000000001';

type Step = { s: number; u: UsageSpec; model?: string } | { prompt: number } | { compact: number };

function corpus(steps: Step[], session = S, root?: string): string {
  let n = 0;
  const lines = steps.map((st) => {
    if ('prompt' in st) return userPrompt(session, at(st.prompt), `prompt at ${st.prompt}`);
    if ('compact' in st) return { type: 'system', subtype: 'compact_boundary', sessionId: session, timestamp: at(st.compact), uuid: `c-${st.compact}`, content: 'Conversation compacted' };
    return assistant({ session, msg: `msg_${session.slice(-4)}_${n++}`, t: at(st.s), model: st.model, u: st.u });
  });
  return writeCorpus({ [`projects/-work-demo/${session}.jsonl`]: lines }, root);
}

function anatomyOf(root: string, chain = S) {
  const home = tempDir();
  const r = cli(['anatomy', root, '--chain', chain, '--db', ':memory:', '--json'], { HOME: home });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** [class, cold, expiry, break, growth, rewrite] of each request, and the reference must say the same. */
function classes(root: string, chain = S) {
  const out = anatomyOf(root, chain);
  const got = out.requests.map((q: any) => [q.class, q.cold, q.expiry, q.break, q.growth, q.rewrite]);
  const ref = referenceAnatomy([root]).find((c) => c.requests[0]!.key === out.requests[0].key)!;
  assert.deepEqual(ref.requests.map((q) => [q.cold, q.expiry, q.brk, q.growth, q.rewrite]), got.map((g: any[]) => g.slice(1)), 'reference agrees');
  return { out, got };
}

test('a gap of exactly 5 minutes is inside a 5-minute TTL (break); 5 minutes and 1 second is past it (expiry)', () => {
  const { out, got } = classes(corpus([
    { prompt: 0 },
    { s: 1, u: { in: 3, w5: 10_000 } },
    // g = 300 s ≤ 300: C1 = 0 + 10,000; rw = min(11,000, 10,000 − 0) = 10,000 → break; growth 1,000
    { s: 301, u: { in: 3, w5: 11_000 } },
    // g = 300.001 s > 300: C2 = 0 + 11,000; rw = 11,000 → expiry; growth 12,000 − 11,000 = 1,000
    { s: 601.001, u: { in: 3, w5: 12_000 } },
  ]));
  assert.deepEqual(got, [
    ['cold', 10_000, 0, 0, 0, 0],
    ['break', 0, 0, 10_000, 1_000, 10_000],
    ['expiry', 0, 11_000, 0, 1_000, 11_000],
  ]);
  assert.deepEqual(out.requests.map((q: any) => q.gap_s), [null, 300, 300.001]);
  // waste: rewrite × (1.25 − 0.1): 10,000 × 1.15 = 11,500 and 11,000 × 1.15 = 12,650; total 24,150
  assert.deepEqual(out.requests.map((q: any) => q.waste_weight), [0, 11_500, 12_650]);
  assert.equal(out.summary.waste_weight, 24_150);
  assert.equal(out.summary.waste_usd, 24_150 * 5 / 1e6);
});

test('a gap of exactly 1 hour is inside a 1-hour TTL (break); 1 hour and 1 second is past it (expiry)', () => {
  const { out, got } = classes(corpus([
    { prompt: 0 },
    { s: 1, u: { in: 3, w1h: 10_000 } },
    { s: 3601, u: { in: 3, w1h: 10_500 } }, // g = 3,600 ≤ 3,600: rw = 10,000 break, growth 500
    { s: 7202, u: { in: 3, w1h: 11_000 } }, // g = 3,601 > 3,600: C = 10,500 → expiry 10,500, growth 500
  ]));
  assert.deepEqual(got, [
    ['cold', 10_000, 0, 0, 0, 0],
    ['break', 0, 0, 10_000, 500, 10_000],
    ['expiry', 0, 10_500, 0, 500, 10_500],
  ]);
  assert.deepEqual(out.requests.map((q: any) => q.ttl), [null, '1h', '1h']);
  // a 1-hour rewrite wastes (2 − 0.1) a token: 10,000 × 1.9 = 19,000; 10,500 × 1.9 = 19,950
  assert.deepEqual(out.requests.map((q: any) => q.waste_weight), [0, 19_000, 19_950]);
});

test('a rewrite of exactly the jitter tolerance (1,024) counts; 1,023 is jitter and counts as growth', () => {
  const { got } = classes(corpus([
    { prompt: 0 },
    { s: 1, u: { in: 3, w5: 20_000 } },
    // C1 = 20,000; r = 18,976 → C1 − r = 1,024; rw = min(1,500, 1,024) = 1,024 ≥ 1,024 → break; growth 476
    { s: 11, u: { in: 3, r: 18_976, w5: 1_500 } },
    // C2 = 18,976 + 1,500 = 20,476; r = 19,453 → C2 − r = 1,023 < 1,024 → rw 0; all 2,000 growth
    { s: 21, u: { in: 3, r: 19_453, w5: 2_000 } },
  ]));
  assert.deepEqual(got, [
    ['cold', 20_000, 0, 0, 0, 0],
    ['break', 0, 0, 1_024, 476, 1_024],
    ['growth', 0, 0, 0, 2_000, 0],
  ]);
});

test('Sonnet 4.5: P = 200,000 is billed at the base rate, P = 200,001 wholly at the long-context rate', () => {
  const sonnet = 'claude-sonnet-4-5-20250929';
  const root = corpus([
    { prompt: 0 },
    // P = 100 + 199,900 + 0 = 200,000 (not above 200,000):
    //   USD = (100 × 3 + 199,900 × 3.75 + 1,000 × 15) / 1e6 = (300 + 749,625 + 15,000) / 1e6 = 0.764925
    //   weight = 100 + 199,900 × 1.25 + 1,000 × 5 = 254,975
    { s: 1, model: sonnet, u: { in: 100, w5: 199_900, out: 1_000 } },
    // P = 101 + 0 + 199,900 = 200,001 (above): USD = (101 × 6 + 199,900 × 0.6 + 1,000 × 22.5) / 1e6
    //   = (606 + 119,940 + 22,500) / 1e6 = 0.143046; weight in Sonnet 4.5's base-input tokens ($3):
    //   0.143046 / 3e-6 = 47,682 (= 101 × 2 + 199,900 × 0.2 + 1,000 × 7.5)
    { s: 11, model: sonnet, u: { in: 101, r: 199_900, out: 1_000 } },
  ]);
  const out = anatomyOf(root);
  assert.deepEqual(out.requests.map((q: any) => q.p), [200_000, 200_001]);
  assert.deepEqual(out.requests.map((q: any) => q.weight), [254_975, 47_682]);
  const r = cli(['summary', root, '--db', ':memory:', '--json'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const usd = JSON.parse(r.stdout).totals.usd;
  assert.ok(Math.abs(usd - (0.764925 + 0.143046)) < 1e-12, `usd ${usd}`);
  const ref = referenceAnatomy([root])[0]!.requests;
  assert.deepEqual(ref.map((q) => q.longContext), [false, true]);
  assert.ok(Math.abs(ref[0]!.usd! - 0.764925) < 1e-12 && Math.abs(ref[1]!.usd! - 0.143046) < 1e-12);
});

test('the TTL follows the last request that wrote: 1h → a w = 0 request keeps 1h → 5m writes → 1h writes again', () => {
  const { out, got } = classes(corpus([
    { prompt: 0 },
    { s: 0, u: { in: 3, w1h: 10_000 } }, //                  #1 cold; TTL after it 1h
    { s: 600, u: { in: 3, r: 10_000 } }, //                  #2 w = 0: 10 min ≤ 1h, reads C1 whole; TTL stays 1h
    // #3 10 min later: the last writer (#1) wrote 1h → TTL 1h; g = 600 ≤ 3,600; C2 = 10,000 + 0;
    //    rw = min(10,500, 10,000) = 10,000 → break; growth 500. It writes 5m: TTL after it 5m
    { s: 1200, u: { in: 3, w5: 10_500 } },
    // #4 6 min later: TTL 5m (from #3), g = 360 > 300; C3 = 10,500 → expiry 10,500, growth 500; writes 1h
    { s: 1560, u: { in: 3, w1h: 11_000 } },
    // #5 10 min later: TTL 1h again (from #4), g = 600 ≤ 3,600; C4 = 11,000 → break 11,000, growth 500
    { s: 2160, u: { in: 3, w5: 11_500 } },
  ]));
  assert.deepEqual(out.requests.map((q: any) => q.ttl), [null, '1h', '1h', '5m', '1h']);
  assert.deepEqual(got, [
    ['cold', 10_000, 0, 0, 0, 0],
    ['none', 0, 0, 0, 0, 0],
    ['break', 0, 0, 10_000, 500, 10_000],
    ['expiry', 0, 10_500, 0, 500, 10_500],
    ['break', 0, 0, 11_000, 500, 11_000],
  ]);
  // waste priced at the rewriting request's own write weight: #3 10,000 × (1.25 − 0.1) = 11,500;
  // #4 10,500 × (2 − 0.1) = 19,950; #5 11,000 × 1.15 = 12,650
  assert.deepEqual(out.requests.map((q: any) => q.waste_weight), [0, 0, 11_500, 19_950, 12_650]);
});

test('after a compaction boundary the next request is cold, however much of the old prefix it misses', () => {
  const { got } = classes(corpus([
    { prompt: 0 },
    { s: 1, u: { in: 3, w5: 10_000 } },
    { s: 61, u: { in: 3, r: 10_000, w5: 2_000 } }, // C1 read whole: growth 2,000
    { compact: 90 },
    // C2 = 12,000 and r = 3,000: without the boundary rw = min(4,000, 9,000) = 4,000 would be a break
    { s: 121, u: { in: 3, r: 3_000, w5: 4_000 } },
    { s: 131, u: { in: 3, r: 7_000, w5: 500 } }, // C3 = 7,000 read whole: growth 500
  ]));
  assert.deepEqual(got, [
    ['cold', 10_000, 0, 0, 0, 0],
    ['growth', 0, 0, 0, 2_000, 0],
    ['cold', 4_000, 0, 0, 0, 0],
    ['growth', 0, 0, 0, 500, 0],
  ]);
});

test('re-purchase: exactly 3 rounds whose first reads lie exactly 1,024 from their median are flagged; 1,025 is not', () => {
  // Round firsts read 13,000 / 14,024 / 15,048 (or 15,049): median 14,024, distances 1,024 and 1,024 (or 1,025).
  // #2: C1 = 13,000 + 70,000 = 83,000; rw = min(70,000, 83,000 − 14,024) = 68,976 ≥ 0.8 × 83,000 = 66,400
  // #3: C2 = 14,024 + 70,000 = 84,024; rw = min(69,000, 84,024 − r3) = 68,976 (68,975) ≥ 0.8 × 84,024 = 67,219.2
  const chain = (r3: number, session: string, root?: string) => corpus([
    { prompt: 0 }, { s: 1, u: { in: 3, r: 13_000, w5: 70_000 } },
    { prompt: 10 }, { s: 11, u: { in: 3, r: 14_024, w5: 70_000 } },
    { prompt: 20 }, { s: 21, u: { in: 3, r: r3, w5: 69_000 } },
  ], session, root);
  const other = 'b0b0b0b0-0000-4000-8000-000000000002';
  const root = chain(15_048, S);
  chain(15_049, other, root);
  const home = tempDir();
  const r = cli(['anatomy', root, '--db', ':memory:', '--json'], { HOME: home });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.repurchase.map((c: any) => [c.chain_id, c.rounds, c.read_median]), [[S, 3, 14_024]]);
  // its waste: both rewrites are breaks (10 s gaps): (68,976 + 68,976) × (1.25 − 0.1) = 158,644.8
  assert.equal(out.repurchase[0].waste_weight, 158_644.8);
  const flags = Object.fromEntries(referenceAnatomy([root]).map((c) => [c.id, c.repurchase]));
  assert.deepEqual(flags, { [S]: true, [other]: false });
});

test('de-dup and attribution: field-wise maximum, earliest time, subagent file over progress copy, progress-only requests, resumed copies, <synthetic>, split_missing', () => {
  const A = 'a1b2c3';
  const S2 = 'b0b0b0b0-0000-4000-8000-000000000003';
  const sub = (msg: string, s: number, u: UsageSpec) => assistant({ session: S, msg, t: at(s), u, agentId: A });
  const progress = (line: any, s: number) => ({
    type: 'progress', sessionId: S, timestamp: at(s), uuid: `p-${s}`, isSidechain: false,
    data: { type: 'agent_progress', agentId: A, message: { type: 'assistant', requestId: line.requestId, timestamp: at(s), message: line.message } },
  });
  const m1 = (out: number, s: number) => assistant({ session: S, msg: 'msg_m1', t: at(s), u: { in: 3, w5: 10_000, out } });
  const root = writeCorpus({
    [`projects/-work-demo/${S}.jsonl`]: [
      userPrompt(S, at(0)),
      m1(10, 1), m1(40, 2), //                                   one request: out = max(10, 40) = 40, t = 1 s
      progress(sub('msg_x1', 3, { in: 1, w5: 5_000, out: 5 }), 3), // a copy of x1, seen before the subagent file's
      progress(sub('msg_x3', 30, { in: 1, r: 5_500, w5: 200, out: 10 }), 30), // x3: only this copy holds it
      { ...assistant({ session: S, msg: 'msg_syn', t: at(40), model: '<synthetic>', u: { in: 0 } }) }, // not a request
      assistant({ session: S, msg: 'msg_m2', t: at(60), u: { in: 3, r: 10_000, w5: 1_000, out: 20, split: false } }),
    ],
    [`projects/-work-demo/${S}/subagents/agent-${A}.jsonl`]: [
      userPrompt(S, at(3), 'sub task', A),
      sub('msg_x1', 4, { in: 1, w5: 5_000, out: 30 }), //      x1: out 30, t = 3 s (the progress copy's), chain A
      sub('msg_x2', 20, { in: 1, r: 5_000, w5: 500, out: 10 }),
    ],
    // a resumed session repeats m1 (same ids): it stays one request, in S's chain
    [`projects/-work-demo/${S2}.jsonl`]: [
      m1(40, 1),
      userPrompt(S2, at(100)),
      assistant({ session: S2, msg: 'msg_r1', t: at(101), u: { in: 2, w5: 300, out: 10 } }),
    ],
  });
  const home = tempDir();
  const json = (args: string[]) => {
    const r = cli([...args, root, '--db', join(home, 'store.duckdb'), '--json'], { HOME: home });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  // requests m1, m2, x1, x2, x3, r1 = 6; input 3 + 3 + 1 + 1 + 1 + 2 = 11; output 40 + 20 + 30 + 10 + 10 + 10 = 120;
  // 5m writes 10,000 + 1,000 (split missing: w5 = w) + 5,000 + 500 + 200 + 300 = 17,000; reads 10,000 + 5,000 + 5,500 = 20,500
  // weight = 11 + 17,000 × 1.25 + 20,500 × 0.1 + 120 × 5 = 11 + 21,250 + 2,050 + 600 = 23,911; USD = 23,911 × $5/1e6 = 0.119555
  const totals = json(['summary']).totals;
  assert.deepEqual(
    [totals.requests, totals.input, totals.output, totals.cache_write_5m, totals.cache_write_1h, totals.cache_read, totals.weight, totals.usd],
    [6, 11, 120, 17_000, 0, 20_500, 23_911, 0.119555],
  );
  const an = json(['anatomy']);
  const byChain = Object.fromEntries(an.chains.map((c: any) => [c.agent_id ?? c.session_id, [c.requests, c.cold, c.growth]]));
  // main S: m1 cold 10,000, m2 reads C1 = 10,000 whole: growth 1,000; A: x1 cold 5,000, x2 growth 500, x3 growth 200; S2: r1 cold 300
  assert.deepEqual(byChain, { [S]: [2, 10_000, 1_000], [A]: [3, 5_000, 700], [S2]: [1, 300, 0] });
  const agent = json(['anatomy', '--chain', an.chains.find((c: any) => c.agent_id === A).chain_id]);
  // x1's time is its earliest copy's (3 s), so x2's gap is 20 − 3 = 17 s and x3's 30 − 20 = 10 s
  assert.deepEqual(agent.requests.map((q: any) => [q.gap_s, q.output]), [[null, 30], [17, 10], [10, 10]]);
  const ref = referenceAnatomy([root]);
  assert.deepEqual(ref.map((c) => [c.id, c.requests.length]).sort(), [[S, 2], [`${S}:${A}`, 3], [S2, 1]].sort());
  assert.deepEqual(ref.flatMap((c) => c.requests).filter((q) => q.splitMissing).map((q) => q.key), ['msg_m2\u0000req_msg_m2']);
});

test('re-purchase: a request only a progress copy holds is in no round (round 0), so it does not make a 2-round chain a 3-round one', () => {
  // The subagent has 2 rounds (2 prompts). Between them the parent's agent_progress line holds x0, a
  // request its own file lacks; such a request has round 0. Every first request reads 13,800 and each
  // re-buys its context (x0: C1 = 83,800, rw = min(71,000, 70,000) = 70,000 ≥ 67,040; x2: C = 84,800,
  // rw = 71,000 ≥ 67,840), so counting round 0 as a round made 3 rounds and flagged the chain.
  const A = 'a9a9a9';
  const x0 = assistant({ session: S, msg: 'msg_x0', t: at(5), u: { in: 3, r: 13_800, w5: 71_000 }, agentId: A }) as any;
  const root = writeCorpus({
    [`projects/-work-demo/${S}.jsonl`]: [
      userPrompt(S, at(0)),
      { type: 'progress', sessionId: S, timestamp: at(5), uuid: 'p-5', isSidechain: false,
        data: { type: 'agent_progress', agentId: A, message: { type: 'assistant', requestId: x0.requestId, timestamp: at(5), message: x0.message } } },
    ],
    [`projects/-work-demo/${S}/subagents/agent-${A}.jsonl`]: [
      userPrompt(S, at(0.5), 'round 1', A),
      assistant({ session: S, msg: 'msg_x1', t: at(1), u: { in: 3, r: 13_800, w5: 70_000 }, agentId: A }),
      userPrompt(S, at(10), 'round 2', A),
      assistant({ session: S, msg: 'msg_x2', t: at(11), u: { in: 3, r: 13_800, w5: 72_000 }, agentId: A }),
    ],
  });
  const home = tempDir();
  const json = (args: string[]) => {
    const r = cli([...args, root, '--db', join(home, 'store.duckdb'), '--json'], { HOME: home });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const an = json(['anatomy']);
  const chain = an.chains.find((c: any) => c.agent_id === A);
  assert.equal(chain.rounds, 2);
  assert.equal(chain.repurchase, false);
  assert.deepEqual(an.repurchase, []);
  const sql = json(['query', 'repurchase', '--param', 'all=true']).rows.find((r: any) => r.chain_id === chain.chain_id);
  assert.deepEqual([sql.rounds, sql.read_median, sql.repurchase], [2, 13_800, false]);
  assert.equal(referenceAnatomy([root]).find((c) => c.id === `${S}:${A}`)!.repurchase, false);
});

test('--pricing in LiteLLM format: a long-context 1-hour write costs the file\'s cache_creation_input_token_cost_above_1hr_above_200k_tokens', () => {
  // LiteLLM publishes this price for its long-context Sonnet entries; it was ignored for 2 × the long-context
  // input price. $15 per million here (not the 2 × $6 = $12 of the fallback) tells the two apart.
  const pricing = join(tempDir(), 'litellm.json');
  writeFileSync(pricing, JSON.stringify({
    'claude-sonnet-4-5': {
      input_cost_per_token: 3e-6, output_cost_per_token: 15e-6, cache_creation_input_token_cost: 3.75e-6,
      cache_creation_input_token_cost_above_1hr: 6e-6, cache_read_input_token_cost: 3e-7,
      input_cost_per_token_above_200k_tokens: 6e-6, output_cost_per_token_above_200k_tokens: 22.5e-6,
      cache_creation_input_token_cost_above_200k_tokens: 7.5e-6, cache_read_input_token_cost_above_200k_tokens: 6e-7,
      cache_creation_input_token_cost_above_1hr_above_200k_tokens: 15e-6,
    },
  }));
  const root = corpus([
    { prompt: 0 },
    // P = 1 + 200,000 = 200,001 > 200,000: USD = (1 × 6 + 200,000 × 15) / 1e6 = 3.000006
    { s: 1, model: 'claude-sonnet-4-5-20250929', u: { in: 1, w1h: 200_000 } },
    // P = 1 + 1,000 = 1,001: USD = (1 × 3 + 1,000 × 6) / 1e6 = 0.006003 (the base 1-hour price)
    { s: 2, model: 'claude-sonnet-4-5-20250929', u: { in: 1, w1h: 1_000 } },
  ]);
  const r = cli(['summary', root, '--db', ':memory:', '--pricing', pricing, '--json'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const usd = JSON.parse(r.stdout).totals.usd;
  assert.ok(Math.abs(usd - (3.000006 + 0.006003)) < 1e-12, `usd ${usd}`);
});
