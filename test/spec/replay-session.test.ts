/**
 * SPEC §6.2 (session strategies), checked by hand on a five-request Claude Code session, one request per round,
 * Opus 4.6 (write 1.25 (5m) / 2 (1h), read 0.1, output 5, $5 per million). The gaps between requests:
 *   r1 → r2   62 s (inside 5 minutes: read)
 *   r2 → r3  402 s (past 5 minutes; r2 wrote at 5m: expired; r3 writes at 1h)
 *   r3 → r4  400 s (inside the hour r3 wrote at: read)
 *   r4 → r5 4,000 s (past the hour: expired)
 * Messages (js-tiktoken cl100k_base, counted here apart from the product): prompts p1…p5, replies a1…a5, and one
 * skill_listing attachment SK after p1 and again, the same content, after p2.
 *
 * SPEC: the prefix F = observed P₁ − tokens of request 1's messages (p1, SK); request k = F + every message before
 * it; cacheable = the longest common prefix with the previous request of the process; weighted cost with the real
 * gaps. So, for `recorded`:
 *   in₁ = F + p1 + SK = P₁ = 12,003          in₂ = in₁ + a1 + p2 + SK       in₃ = in₂ + a2 + p3
 *   in₄ = in₃ + a3 + p4                      in₅ = in₄ + a4 + p5            cacheable_k = in_{k−1}
 *   weight: 1.25·in₁ | 0.1·in₁ + 1.25·(in₂ − in₁) | 2·in₃ | 0.1·in₃ + 2·(in₄ − in₃) | 2·in₅, each + 5 × output
 * The observed usage is set from these predictions (below), so fidelity's errors are known too.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { getEncoding } from 'js-tiktoken';
import { assistant, cli, writeCorpus } from '../helpers/corpus.js';
import { tempDir } from '../helpers/temp.js';
import { near } from '../analyses/helpers/fixtures.js';
import { SKILLS, writeSession } from '../replay/session-fixture.js';

const enc = getEncoding('cl100k_base');
const tok = (s: string) => enc.encode(s).length;
const SESSION = '5bec0000-0000-4000-8000-0000000006a1';
/** ISO time `s` seconds after 2026-03-03 10:00:00 UTC. */
const at = (s: number) => new Date(Date.UTC(2026, 2, 3, 10) + s * 1000).toISOString();

const SK = Array.from({ length: 20 }, (_, i) => `- skill-${i}: does task number ${i} when asked; read its SKILL.md first.`).join('\n');
const P = ['Round 1: why is the build red on main?', 'Round 2: is it green now?', 'Round 3: add a retry to the flaky test.', 'Round 4: run the suite again.', 'Round 5: open the pull request.'];
const A = ['A flaky payments test; I reran it and it passed.', 'Yes, green since the rerun.', 'Added one retry to the payments test.', 'The suite passed, 412 tests.', 'Opened the pull request.'];
/** request times (s) and the prompts 2 s before each */
const T = [2, 64, 466, 866, 4_866];
const OUT = [40, 30, 20, 25, 15];

const p = P.map(tok);
const a = A.map(tok);
const sk = tok(SK);
const P1 = 12_003;
const F = P1 - p[0]! - sk;
/** recorded's predicted prompts */
const IN = [P1];
IN.push(IN[0]! + a[0]! + p[1]! + sk);
IN.push(IN[1]! + a[1]! + p[2]!);
IN.push(IN[2]! + a[2]! + p[3]!);
IN.push(IN[3]! + a[3]! + p[4]!);
/** observed: P exact for r1, r2; 100 over for r3, r4; 50 under for r5. Reads: r2 all of r1, r4 r3's observed P. */
const OBS_P = [IN[0]!, IN[1]!, IN[2]! + 100, IN[3]! + 100, IN[4]! - 50];
const OBS_R = [0, IN[0]!, 0, OBS_P[2]!, 0];
const TTL1H = [false, false, true, true, true];

function corpus(): { root: string; file: string } {
  const lines: object[] = [];
  for (let k = 0; k < 5; k++) {
    lines.push({ type: 'user', sessionId: SESSION, cwd: '/work/demo', timestamp: at(T[k]! - 2), uuid: `p${k}`, message: { role: 'user', content: P[k] } });
    if (k < 2) lines.push({ type: 'attachment', sessionId: SESSION, cwd: '/work/demo', timestamp: at(T[k]! - 1), uuid: `att${k}`, attachment: { type: 'skill_listing', content: SK } });
    const w = OBS_P[k]! - 3 - OBS_R[k]!;
    lines.push(assistant({ session: SESSION, msg: `msg_${k + 1}`, t: at(T[k]!), u: { in: 3, r: OBS_R[k], ...(TTL1H[k] ? { w1h: w } : { w5: w }), out: OUT[k] }, content: [{ type: 'text', text: A[k]! }] }));
  }
  const root = writeCorpus({ [`projects/-work-demo/${SESSION}.jsonl`]: lines });
  return { root, file: join(root, 'projects/-work-demo', `${SESSION}.jsonl`) };
}

function replay(args: string[], json = true): any {
  const r = cli(['replay', 'session', ...args, '--db', ':memory:', ...(json ? ['--json'] : [])], { HOME: tempDir('cachelens-spec-home-') });
  assert.equal(r.code, 0, r.stderr);
  return json ? JSON.parse(r.stdout) : r.stdout;
}
const turns = (r: any, s: string) => r.turns.filter((t: any) => t.strategy === s);
const total = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
const n = (x: number) => x.toLocaleString('en-US');

/** 5 requests' weights from their cacheable reads and writes, the gaps as above */
function weights(input: number[], cacheable: number[], live: boolean[]): number[] {
  return input.map((x, k) => (live[k] ? 0.1 * cacheable[k]! : 0) + (TTL1H[k] ? 2 : 1.25) * (x - (live[k] ? cacheable[k]! : 0)) + 5 * OUT[k]!);
}
const LIVE = [false, true, false, true, false];

test('§6.2 recorded by hand: prefix from request 1, prompts, cacheable, expiries from the real gaps, weighted cost, fidelity', () => {
  const { root } = corpus();
  const r = replay([SESSION, root]);
  assert.equal(r.calibration.prefix_tokens, F);
  assert.deepEqual([r.chain.requests, r.chain.rounds, r.chain.attachments], [5, 5, 2]);
  const ts = turns(r, 'recorded');
  assert.deepEqual(ts.map((t: any) => t.input_tokens), IN);
  assert.deepEqual(ts.map((t: any) => t.cacheable_tokens), [0, ...IN.slice(0, 4)]);
  assert.deepEqual(ts.map((t: any) => [t.gap_s, t.ttl, t.cache]), [[null, '5m', 'none'], [62, '5m', 'read'], [402, '5m', 'expired'], [400, '1h', 'read'], [4_000, '1h', 'expired']]);
  assert.deepEqual(ts.map((t: any) => t.read_tokens), [0, IN[0], 0, IN[2], 0]);
  assert.deepEqual(ts.map((t: any) => t.output_tokens), OUT);
  // attachments: SK sent with r1 and again with r2, the second already in the context
  assert.deepEqual(ts.map((t: any) => [t.context_tokens, t.already_seen_tokens]), [[sk, 0], [sk, sk], [0, 0], [0, 0], [0, 0]]);
  const wt = weights(IN, [0, ...IN.slice(0, 4)], LIVE);
  ts.forEach((t: any, k: number) => near(t.weight, wt[k]!, `request ${k + 1} weight`));
  const S = r.strategies.recorded;
  assert.deepEqual([S.requests, S.warm_requests, S.processes, S.expired_requests, S.attachments_sent], [5, 4, 1, 2, 2]);
  assert.equal(S.input_tokens, total(IN));
  assert.equal(S.cacheable_tokens, total(IN.slice(0, 4)));
  near(S.cacheable_ratio, total(IN.slice(0, 4)) / total(IN), 'ratio');
  // uncached per warm turn: requests 2…5 (warm: the process is alive, whatever the TTL)
  near(S.uncached_per_warm_turn, (IN[4]! - IN[0]!) / 4, 'uncached per warm');
  assert.deepEqual([S.context_tokens, S.already_seen_tokens], [2 * sk, sk]);
  near(S.weight, total(wt), 'weight');
  near(S.usd, total(wt) * 5e-6, 'usd');

  // fidelity over requests 2…5. SPEC compares "the predicted … cacheable prefix per request with … cache_read_input_tokens";
  // docs/session-replay.md (Fidelity on the real logs) records the product's reading: the predicted cache read is the
  // cacheable prefix when the gap is within the TTL, else 0 (what the log can show; r3's cacheable in₂ expired). Prompt errors 0, 100/(in₃+100), 100/(in₄+100), 50/(in₅−50) (median of four: the mean of
  // the middle two; p90 by linear interpolation between ranks, the numpy default SPEC does not name);
  // cache reads: r3 and r5 observed 0 (no relative error; the replay predicts 0 too: they expired), r2 0, r4 100/(in₃+100)
  const fid = r.fidelity;
  assert.deepEqual([fid.requests, fid.from], [4, 2]);
  const errs = [0, 100 / OBS_P[2]!, 100 / OBS_P[3]!, 50 / OBS_P[4]!].sort((x, y) => x - y);
  near(fid.prompt.median_rel_error, (errs[1]! + errs[2]!) / 2, 'median');
  near(fid.prompt.p90_rel_error, errs[2]! + (errs[3]! - errs[2]!) * 0.7, 'p90');
  near(fid.prompt.mean_signed_rel_error, (0 - 100 / OBS_P[2]! - 100 / OBS_P[3]! + 50 / OBS_P[4]!) / 4, 'mean signed');
  assert.deepEqual([fid.cache_read.n, fid.cache_read.observed_zero, fid.cache_read.predicted_zero_too], [2, 2, 2]);
  near(fid.cache_read.median_rel_error, (0 + 100 / OBS_P[2]!) / 2, 'read median');
});

test('§6.2 the other strategies by hand: dedupe-attachments, volatile-prefix, reinject, cold-replay', () => {
  const { root } = corpus();
  const r = replay([SESSION, root]);
  // dedupe-attachments: SK's second copy (r2) is not sent: every request from r2 on is sk smaller
  const d = turns(r, 'dedupe-attachments');
  const IN_D = IN.map((x, k) => (k === 0 ? x : x - sk));
  assert.deepEqual(d.map((t: any) => t.input_tokens), IN_D);
  assert.deepEqual(d.map((t: any) => t.cacheable_tokens), [0, ...IN_D.slice(0, 4)]);
  assert.deepEqual([r.strategies['dedupe-attachments'].context_tokens, r.strategies['dedupe-attachments'].already_seen_tokens, r.strategies['dedupe-attachments'].attachments_sent], [sk, 0, 1]);
  near(r.strategies['dedupe-attachments'].weight, total(weights(IN_D, [0, ...IN_D.slice(0, 4)], LIVE)), 'dedupe weight');

  // volatile-prefix: recorded's request with one status line in front; cacheable = what consecutive lines share
  const v = turns(r, 'volatile-prefix');
  const status = (k: number) => enc.encode(`Session status · request ${k + 1} · round ${k + 1} · ${at(T[k]!)}\n`);
  const lcp = (x: number[], y: number[]) => { let i = 0; while (i < x.length && i < y.length && x[i] === y[i]) i++; return i; };
  assert.deepEqual(v.map((t: any) => t.input_tokens), IN.map((x, k) => x + status(k).length));
  const CV = [0, 1, 2, 3].map((k) => lcp(status(k), status(k + 1)));
  assert.deepEqual(v.map((t: any) => t.cacheable_tokens), [0, ...CV]);
  near(r.strategies['volatile-prefix'].weight, total(weights(v.map((t: any) => t.input_tokens), [0, ...CV], LIVE)), 'volatile weight');

  // reinject: the chain's largest skill_listing (SK) inserted again at the start of every round, the copies staying in
  // the history: request k = in_k + k·sk, cacheable = the request before it (the same gaps and weights as recorded)
  const re = turns(r, 'reinject');
  assert.equal(r.settings.reinject.tokens, sk);
  const IN_R = IN.map((x, k) => x + (k + 1) * sk);
  assert.deepEqual(re.map((t: any) => t.input_tokens), IN_R, 'one more copy of SK per round');
  assert.deepEqual(re.map((t: any) => t.cacheable_tokens), [0, ...IN_R.slice(0, 4)]);
  const wr = weights(IN_R, [0, ...IN_R.slice(0, 4)], LIVE);
  re.forEach((t: any, k: number) => near(t.weight, wr[k]!, `reinject request ${k + 1} weight`));
  near(r.strategies.reinject.weight, total(wr), 'reinject weight');

  // cold-replay: SPEC's "every turn" is read as every round (user turn), its tool loop warm in that round's process
  // (docs/session-replay.md's table; test/replay/session-strategies.test.ts checks a round of two requests). Here
  // every request opens a round, so each goes to a fresh process, sent the framing F and every message before it
  // flattened, each on its own line: `User: p\n`, `User: SK\n` (an attachment is the user's), `Assistant: a\n`:
  //   c₁ = F + U(p1) + U(SK)     c₂ = c₁ + A(a1) + U(p2) + U(SK)     c_k = c_{k−1} + A(a_{k−1}) + U(p_k) (k = 3…5)
  // Nothing cacheable, 5 processes, every token written at the request's TTL weight (1.25, 1.25, 2, 2, 2)
  const c = turns(r, 'cold-replay');
  const C = r.strategies['cold-replay'];
  const U = (x: string) => tok(`User: ${x}\n`);
  const As = (x: string) => tok(`Assistant: ${x}\n`);
  const IN_C = [F + U(P[0]!) + U(SK)];
  IN_C.push(IN_C[0]! + As(A[0]!) + U(P[1]!) + U(SK));
  for (const k of [2, 3, 4]) IN_C.push(IN_C[k - 1]! + As(A[k - 1]!) + U(P[k]!));
  assert.deepEqual([C.processes, C.warm_requests, C.cacheable_tokens], [5, 0, 0]);
  assert.deepEqual(c.map((t: any) => t.input_tokens), IN_C);
  assert.deepEqual(c.map((t: any) => t.process), [1, 2, 3, 4, 5]);
  const wc = weights(IN_C, [0, 0, 0, 0, 0], [false, false, false, false, false]);
  c.forEach((t: any, k: number) => near(t.weight, wc[k]!, `cold-replay request ${k + 1} weight`));
  near(C.weight, total(wc), 'cold weight');
  // each fresh process is sent every attachment of the conversation so far again: r1 SK, r2…r5 SK twice, the
  // second copy a repeat within what it is sent
  assert.deepEqual(c.map((t: any) => [t.context_tokens, t.already_seen_tokens]), [[sk, 0], [2 * sk, sk], [2 * sk, sk], [2 * sk, sk], [2 * sk, sk]]);
});

test("§6.2: replay session's text and the report's replay section say the JSON's figures", () => {
  const { root } = corpus();
  const r = replay([SESSION, root]);
  const order = ['recorded', 'dedupe-attachments', 'volatile-prefix', 'reinject', 'cold-replay'];
  const S = order.map((s) => r.strategies[s]);
  const out = replay([SESSION, root], false);
  const row = (label: string, vals: string[]) => assert.match(out, new RegExp(`^${label} +${vals.map((x) => x.replace(/[$()+.]/g, '\\$&')).join(' +')}$`, 'm'), label);
  row('input tokens, all requests', S.map((x) => n(x.input_tokens)));
  row('  of which cacheable prefix', S.map((x) => n(x.cacheable_tokens)));
  row('weighted cost \\(base-input tokens\\)', S.map((x) => n(Math.round(x.weight))));

  const dir = tempDir('cachelens-spec-report-');
  const file = join(dir, 'r.html');
  const rep = cli(['report', root, '--session', SESSION, '--out', file, '--db', ':memory:', '--timezone', 'UTC'], { HOME: tempDir('cachelens-spec-home-') });
  assert.equal(rep.code, 0, rep.stderr);
  const page = readFileSync(file, 'utf8');
  const section = /<section[^>]* id="replay"[\s\S]*?<\/section>/.exec(page)![0].replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
  const pct = (x: number) => `${(Math.round(Math.abs(x) * 1000) / 10).toFixed(1)}%`;
  const ratio = (x: number) => (Math.round(x * 1000) / 1000).toFixed(3);
  order.forEach((name, i) => {
    const x = S[i]!;
    const seen = x.already_seen_tokens ? `${n(x.already_seen_tokens)} (${Math.round(x.already_seen_share * 100)}%)` : '0';
    const warm = x.uncached_per_warm_turn === null ? 'n/a' : n(Math.round(x.uncached_per_warm_turn));
    const main = [name, n(x.input_tokens), n(x.cacheable_tokens), ratio(x.cacheable_ratio), warm, n(x.context_tokens), seen, String(x.attachments_sent), n(Math.round(x.weight))].join(' ');
    assert.ok(section.includes(` ${main} `), `the report's row ${main}`);
    const rest = [name, x.processes, x.expired_requests, n(x.output_tokens), `$${x.usd.toFixed(4)}`].join(' ');
    assert.ok(section.includes(` ${rest} `), `the report's row ${rest}`);
  });
  const f = r.fidelity;
  const fid = (label: string, e: any) => `${label} ${pct(e.median_rel_error)} ${pct(e.p90_rel_error)} ${e.mean_signed_rel_error < 0 ? '−' : ''}${pct(e.mean_signed_rel_error)} ${e.n}`;
  assert.ok(section.includes(fid('prompt size P', f.prompt)), fid('prompt size P', f.prompt));
  assert.ok(section.includes(fid('cache reads', f.cache_read)), fid('cache reads', f.cache_read));
  assert.match(section, /cache reads observed 0 in 2 requests; the replay predicted 0 in 2 of them/);
});

test('§6.2 a gap of exactly the TTL is within it: 300 s on a 5-minute write and 3,600 s on a 1-hour write read; 3,601 s expires', () => {
  // r1 0 s (5m write), r2 300 s (5m: read; writes 1h), r3 3,900 s (gap 3,600, 1h: read), r4 7,501 s (gap 3,601: expired)
  const S2 = '5bec0000-0000-4000-8000-0000000006a2';
  const times = [0, 300, 3_900, 7_501];
  const lines: object[] = [];
  times.forEach((s, k) => {
    lines.push({ type: 'user', sessionId: S2, cwd: '/work/demo', timestamp: at(s - 1), uuid: `q${k}`, message: { role: 'user', content: P[k] } });
    lines.push(assistant({ session: S2, msg: `m2_${k}`, t: at(s), u: k === 0 ? { in: 3, w5: 5_000, out: 10 } : { in: 3, r: 5_000, w1h: 50, out: 10 }, content: [{ type: 'text', text: A[k]! }] }));
  });
  const root = writeCorpus({ [`projects/-work-demo/${S2}.jsonl`]: lines });
  const r = replay([S2, root, '--strategy', 'recorded']);
  const ts = turns(r, 'recorded');
  assert.deepEqual(ts.map((t: any) => [t.gap_s, t.ttl, t.cache]), [[null, '5m', 'none'], [300, '5m', 'read'], [3_600, '1h', 'read'], [3_601, '1h', 'expired']]);
  // weights: r1 written at 1.25; r2 read, the rest at its own 1-hour weight 2 (its `ttl` is 5m, the TTL its gap is
  // checked against: docs/json.md); r3 likewise; r4 all at 2
  const wt = ts.map((t: any, k: number) => (k === 0 ? 1.25 * t.input_tokens : k === 3 ? 2 * t.input_tokens : 0.1 * t.cacheable_tokens + 2 * t.uncached_tokens) + 50);
  ts.forEach((t: any, k: number) => near(t.weight, wt[k]!, `request ${k + 1}`));
});

test('§6.2 a compaction empties the context: request after it reads the framing alone, and dedupe-attachments sends the attachment again', () => {
  // 4 rounds of two requests each (test/replay/session-fixture.ts), the same skill_listing after every prompt, a
  // compaction before round 3. recorded sends it every round (4 times, rounds 2 and 4 repeats within the context);
  // round 3's first request (5) = F + summary + …: its common prefix with request 4 is the framing F alone.
  // SPEC's dedupe-attachments does not send "an attachment whose content was already sent in this chain"; read
  // literally that is once (round 1) for the whole chain. docs/session-replay.md records the product's reading
  // (Compaction: it "empties the conversation and the attachments in context"): after a compaction the content is no
  // longer in the context the model sees, so it is sent again — twice (rounds 1 and 3), and never already seen.
  const file = writeSession({ rounds: 4, attachment: { type: 'skill_listing', content: SKILLS }, compactBefore: 3 });
  const r = replay([file]);
  const F2 = r.calibration.prefix_tokens;
  const skl = tok(SKILLS);
  for (const s of ['recorded', 'dedupe-attachments']) assert.equal(turns(r, s)[4].cacheable_tokens, F2, `${s}: request 5 reads the framing`);
  assert.deepEqual([r.strategies.recorded.attachments_sent, r.strategies.recorded.context_tokens, r.strategies.recorded.already_seen_tokens], [4, 4 * skl, 2 * skl]);
  const d = r.strategies['dedupe-attachments'];
  assert.deepEqual([d.attachments_sent, d.context_tokens, d.already_seen_tokens], [2, 2 * skl, 0]);
  assert.deepEqual(turns(r, 'dedupe-attachments').map((t: any) => t.context_tokens), [skl, 0, 0, 0, skl, 0, 0, 0]);
});

test('§6.2 a model switch: the prompt cache is per model, so the cacheable prefix and the gap are against the last request of the same model', () => {
  // r1 Opus at 2 s, r2 Haiku 4.5 at 64 s, r3 Opus at 124 s. SPEC says "the previous request of the same process";
  // docs/session-replay.md records the product's reading, "of the same process *and model*" (the API keeps a cache per
  // model). So r2 (Haiku's first) has nothing cacheable, and r3 reads what r1 (Opus) wrote: in₁, gap 122 s.
  //   in₂ = in₁ + a1 + p2, in₃ = in₂ + a2 + p3 (the prefix is calibrated once, on r1)
  //   weight r3 = 0.1·in₁ + 1.25·(in₃ − in₁) + 5·20; r2 at Haiku's $1 a million, written whole: 1.25·in₂ + 5·30
  const S3 = '5bec0000-0000-4000-8000-0000000006a3';
  const models = ['claude-opus-4-6', 'claude-haiku-4-5', 'claude-opus-4-6'];
  const lines: object[] = [];
  [2, 64, 124].forEach((s, k) => {
    lines.push({ type: 'user', sessionId: S3, cwd: '/work/demo', timestamp: at(s - 2), uuid: `h${k}`, message: { role: 'user', content: P[k] } });
    lines.push(assistant({ session: S3, msg: `h_${k}`, t: at(s), model: models[k], u: k === 0 ? { in: 3, w5: 12_000, out: 40 } : { in: 3, w5: 200, out: OUT[k] }, content: [{ type: 'text', text: A[k]! }] }));
  });
  const root = writeCorpus({ [`projects/-work-demo/${S3}.jsonl`]: lines });
  const r = replay([S3, root, '--strategy', 'recorded']);
  const in1 = 12_003;
  const in2 = in1 + a[0]! + p[1]!;
  const in3 = in2 + a[1]! + p[2]!;
  const ts = turns(r, 'recorded');
  assert.deepEqual(ts.map((t: any) => [t.model, t.input_tokens, t.cacheable_tokens, t.gap_s, t.cache]), [
    ['claude-opus-4-6', in1, 0, null, 'none'], ['claude-haiku-4-5', in2, 0, null, 'none'], ['claude-opus-4-6', in3, in1, 122, 'read'],
  ]);
  near(ts[2].weight, 0.1 * in1 + 1.25 * (in3 - in1) + 5 * 20, 'r3 weight');
  near(ts[1].weight, 1.25 * in2 + 5 * 30, 'r2 weight');
  near(ts[1].usd, (1.25 * in2 + 5 * 30) * 1e-6, 'r2 USD at Haiku prices');
  near(ts[2].usd, ts[2].weight * 5e-6, 'r3 USD at Opus prices');
});

test("§6.2 a model switch: a request's cache lives by its own model's TTL — the latest write of that model, not of the chain", () => {
  // The replay keeps the prompt cache per model (docs/session-replay.md), so the cache a request can read is the one
  // the last request of its model wrote, at that request's TTL (SPEC §3's rule, applied to the cache read):
  //   r1 Opus at 2 s writes 1 h; r2 Haiku at 64 s writes 5 m (its `ttl` 1h: Haiku has not written before it, so the
  //   chain's latest write sets it; its own 5-minute write its weight); r3 Opus at 1,002 s: 1,000 s after r1, inside Opus's
  //   hour: read in₁ (0.1) and writes its own 1-hour tokens: 0.1·in₁ + 2·(in₃ − in₁) + 5·20
  //   r4 Haiku at 1,064 s: 1,000 s after r2, past Haiku's 5 minutes: expired, written whole at its own 5m: 1.25·in₄ + 5·25
  // Before, the TTL was the chain's latest write whatever its model: r3 expired (Haiku's 5 m) and r4 read (Opus's 1 h).
  const S4 = '5bec0000-0000-4000-8000-0000000006a4';
  const models = ['claude-opus-4-6', 'claude-haiku-4-5', 'claude-opus-4-6', 'claude-haiku-4-5'];
  const times = [2, 64, 1_002, 1_064];
  const usages = [{ in: 3, w1h: 12_000, out: 40 }, { in: 3, w5: 12_100, out: 30 }, { in: 3, r: 12_000, w1h: 200, out: 20 }, { in: 3, w5: 12_300, out: 25 }];
  const lines: object[] = [];
  times.forEach((s, k) => {
    lines.push({ type: 'user', sessionId: S4, cwd: '/work/demo', timestamp: at(s - 2), uuid: `t${k}`, message: { role: 'user', content: P[k] } });
    lines.push(assistant({ session: S4, msg: `t_${k}`, t: at(s), model: models[k], u: usages[k]!, content: [{ type: 'text', text: A[k]! }] }));
  });
  const root = writeCorpus({ [`projects/-work-demo/${S4}.jsonl`]: lines });
  const r = replay([S4, root, '--strategy', 'recorded']);
  const in1 = 12_003;
  const in2 = in1 + a[0]! + p[1]!;
  const in3 = in2 + a[1]! + p[2]!;
  const in4 = in3 + a[2]! + p[3]!;
  const ts = turns(r, 'recorded');
  assert.deepEqual(ts.map((t: any) => [t.input_tokens, t.cacheable_tokens, t.gap_s, t.ttl, t.cache]), [
    [in1, 0, null, '5m', 'none'], [in2, 0, null, '1h', 'none'], [in3, in1, 1_000, '1h', 'read'], [in4, in2, 1_000, '5m', 'expired'],
  ]);
  near(ts[2].weight, 0.1 * in1 + 2 * (in3 - in1) + 5 * 20, 'r3 weight');
  near(ts[3].weight, 1.25 * in4 + 5 * 25, 'r4 weight');
  assert.equal(r.strategies.recorded.expired_requests, 1);
});

test("§6.2 a model that has not written yet in the chain reads and writes at the chain's latest TTL (SPEC §3), not 5 minutes", () => {
  // The TTL is a setting of the session (a real Haiku request after Opus's 1-hour writes writes 1 h too), so a model
  // with no write of its own before a request takes the chain's latest write of any model (SPEC §3's rule), else 5 m:
  //   r1 Opus at 0 s writes 1 h: 2·in₁ + 5·40 (no write before it: 5m is its `ttl`, its own 1-hour write its weight)
  //   r2 Haiku at 60 s, w = 0, r = 0: its first request, written whole at the chain's 1 h: 2·in₂ + 5·30
  //   r3 Opus at 1,000 s: 1,000 s after r1, inside Opus's hour: 0.1·in₁ + 2·(in₃ − in₁) + 5·20
  //   r4 Haiku at 1,060 s, w = 0, r = 0: 1,000 s after r2, Haiku never wrote: the chain's 1 h, read in₂: 0.1·in₂ + 2·(in₄ − in₂) + 5·25
  // Before, Haiku fell back to 5 m: r2 written at 1.25, r4 expired and written whole at 1.25.
  const S5 = '5bec0000-0000-4000-8000-0000000006a5';
  const models = ['claude-opus-4-6', 'claude-haiku-4-5', 'claude-opus-4-6', 'claude-haiku-4-5'];
  const times = [0, 60, 1_000, 1_060];
  const usages = [{ in: 3, w1h: 12_000, out: 40 }, { in: 12_100, out: 30 }, { in: 3, r: 12_000, w1h: 200, out: 20 }, { in: 12_300, out: 25 }];
  const lines: object[] = [];
  times.forEach((s, k) => {
    lines.push({ type: 'user', sessionId: S5, cwd: '/work/demo', timestamp: at(s - 2), uuid: `f${k}`, message: { role: 'user', content: P[k] } });
    lines.push(assistant({ session: S5, msg: `f_${k}`, t: at(s), model: models[k], u: usages[k]!, content: [{ type: 'text', text: A[k]! }] }));
  });
  const root = writeCorpus({ [`projects/-work-demo/${S5}.jsonl`]: lines });
  const r = replay([S5, root, '--strategy', 'recorded']);
  const in1 = 12_003;
  const in2 = in1 + a[0]! + p[1]!;
  const in3 = in2 + a[1]! + p[2]!;
  const in4 = in3 + a[2]! + p[3]!;
  const ts = turns(r, 'recorded');
  assert.deepEqual(ts.map((t: any) => [t.model, t.input_tokens, t.cacheable_tokens, t.read_tokens, t.gap_s, t.ttl, t.cache]), [
    ['claude-opus-4-6', in1, 0, 0, null, '5m', 'none'],
    ['claude-haiku-4-5', in2, 0, 0, null, '1h', 'none'],
    ['claude-opus-4-6', in3, in1, in1, 1_000, '1h', 'read'],
    ['claude-haiku-4-5', in4, in2, in2, 1_000, '1h', 'read'],
  ]);
  near(ts[0].weight, 2 * in1 + 5 * 40, 'r1 weight');
  near(ts[1].weight, 2 * in2 + 5 * 30, 'r2 weight');
  near(ts[2].weight, 0.1 * in1 + 2 * (in3 - in1) + 5 * 20, 'r3 weight');
  near(ts[3].weight, 0.1 * in2 + 2 * (in4 - in2) + 5 * 25, 'r4 weight');
  near(ts[3].usd, ts[3].weight * 1e-6, 'r4 USD at Haiku prices');
  assert.equal(r.strategies.recorded.expired_requests, 0);
});
