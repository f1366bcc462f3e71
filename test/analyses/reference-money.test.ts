/**
 * The money numbers against a second opinion: `test/helpers/reference-anatomy.ts` re-implements
 * SPEC §1.3/§1.4/§2/§3 from the SPEC text over the raw JSONL, and every real log in
 * `../shared/real-logs` and `sample-logs/` must get the same answer from the product — totals
 * (`summary`, `anatomy`), per session (`sessions`), per chain (`anatomy`'s chains and re-purchase
 * list) and per request (`anatomy --chain ID`). Then boundary fixtures whose answers are worked
 * out by hand below.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { referenceAnatomy, referenceTotals, type RefChain, type RefRequest } from '../helpers/reference-anatomy.js';
import { assistant, cli, REAL_LOGS, REPO, tempDir, userPrompt, writeCorpus, type UsageSpec } from '../helpers/corpus.js';

const close = (actual: number | null, expected: number | null, what: string) => {
  if (actual === null || expected === null) return assert.equal(actual, expected, what);
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: product ${actual}, reference ${expected}`);
};

function product(path: string) {
  const home = tempDir();
  const db = join(home, 'store.duckdb');
  return (args: string[]) => {
    const r = cli([...args, path, '--db', db, '--json', '--timezone', 'UTC'], { HOME: home });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
}

const groupBy = <T>(xs: T[], key: (x: T) => string) => {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
};

/** Every number the product gives about a corpus, against the reference's. */
function compareCorpus(path: string) {
  const run = product(path);
  const chains = referenceAnatomy([path]);
  const all = chains.flatMap((c) => c.requests);
  assert.ok(all.length > 0, `${path} has requests`);
  const ref = referenceTotals(all);

  const summary = run(['summary']).totals;
  for (const k of ['requests', 'input', 'output', 'cache_write_5m', 'cache_write_1h', 'cache_read'] as const) assert.equal(summary[k], ref[k], `summary ${k}`);
  close(summary.weight, ref.weight, 'summary weight');
  close(summary.usd, ref.usd, 'summary usd');

  const byModel = groupBy(all, (q) => q.model);
  for (const m of run(['summary']).by_model) {
    const r = referenceTotals(byModel.get(m.model)!);
    assert.equal(m.requests, r.requests, `model ${m.model} requests`);
    close(m.usd, byModel.get(m.model)!.some((q) => q.m) ? r.usd : null, `model ${m.model} usd`);
  }

  // 5-hour blocks (SPEC §7): a block starts at the first request after the previous one ended, floored to the hour
  const HOUR = 3_600_000;
  const blocks: { start: number; qs: RefRequest[] }[] = [];
  for (const q of [...all].sort((a, b) => a.t - b.t)) {
    const last = blocks[blocks.length - 1];
    if (last && q.t < last.start + 5 * HOUR) last.qs.push(q);
    else blocks.push({ start: Math.floor(q.t / HOUR) * HOUR, qs: [q] });
  }
  const productBlocks = run(['blocks']).blocks;
  assert.deepEqual(productBlocks.map((b: any) => [Date.parse(b.start), b.requests]), blocks.map((b) => [b.start, b.qs.length]), 'blocks');
  productBlocks.forEach((b: any, i: number) => close(b.usd, referenceTotals(blocks[i]!.qs).usd, `block ${b.start} usd`));

  const sessions = run(['sessions']).sessions;
  const refSessions = groupBy(all, (q) => q.chain.split(':')[0]!);
  assert.deepEqual(sessions.map((s: any) => s.session_id).sort(), [...refSessions.keys()].sort(), 'sessions');
  for (const s of sessions) {
    const r = referenceTotals(refSessions.get(s.session_id)!);
    for (const k of ['requests', 'input', 'output', 'cache_write_5m', 'cache_write_1h', 'cache_read'] as const) assert.equal(s[k], r[k], `session ${s.session_id} ${k}`);
    close(s.usd, r.usd, `session ${s.session_id} usd`);
    close(s.weight, r.weight, `session ${s.session_id} weight`);
  }

  const anatomy = run(['anatomy']);
  const t = anatomy.totals;
  for (const k of ['requests', 'cold', 'growth', 'expiry', 'break', 'break_events'] as const) assert.equal(t[k], ref[k], `anatomy ${k}`);
  for (const k of ['weight', 'usd', 'waste_weight', 'waste_usd', 'hit_ratio', 'write_read_ratio'] as const) close(t[k], ref[k], `anatomy ${k}`);
  const priced = all.filter((q) => q.m);
  const total = (f: (q: RefRequest) => number) => priced.reduce((x, q) => x + f(q), 0);
  for (const k of ['cold', 'growth', 'expiry', 'break'] as const) {
    close(t.anatomy_weight[k], total((q) => q.anatomyWeight[k]), `anatomy_weight ${k}`);
    close(t.anatomy_usd[k], total((q) => q.anatomyWeight[k] * q.m!.usdPerWeight), `anatomy_usd ${k}`);
  }
  close(t.components.write5m, total((q) => q.w5 * q.m!.w5), 'components write5m');
  close(t.components.write1h, total((q) => q.w1h * q.m!.w1h), 'components write1h');
  close(t.components.read, total((q) => q.r * q.m!.r), 'components read');
  close(t.components.output, total((q) => q.out * q.m!.out), 'components output');
  close(t.components.input, ref.weight - total((q) => q.w5 * q.m!.w5 + q.w1h * q.m!.w1h + q.r * q.m!.r + q.out * q.m!.out), 'components input');

  // chains: the product's chain ids are its own; a chain is the same when it holds the same requests
  const chainOfKey = new Map<string, RefChain>();
  for (const c of chains) for (const q of c.requests) chainOfKey.set(q.key, c);
  assert.equal(anatomy.chains.length, chains.length, 'chains');
  const flagged: string[] = [];
  // `query repurchase` computes the anatomy again, in SQL: a second implementation to hold to the same answers
  const sqlRows = new Map((run(['query', 'repurchase', '--param', 'all=true']).rows as any[]).map((r) => [r.chain_id, r]));
  assert.equal(sqlRows.size, chains.length, 'query repurchase: every chain');
  for (const pc of anatomy.chains) {
    const one = run(['anatomy', '--chain', pc.chain_id]);
    const rc = chainOfKey.get(one.requests[0].key)!;
    const sql = sqlRows.get(pc.chain_id);
    const rt = referenceTotals(rc.requests);
    assert.deepEqual([sql.rounds, sql.read_median, sql.repurchase, sql.expiry_tokens, sql.break_tokens], [rc.rounds, rc.readMedian, rc.repurchase, rt.expiry, rt.break], `query repurchase ${pc.chain_id}`);
    close(sql.waste_weight, rt.waste_weight, `query repurchase ${pc.chain_id} waste_weight`);
    close(sql.weight, rt.weight, `query repurchase ${pc.chain_id} weight`);
    assert.deepEqual(one.requests.map((q: any) => q.key), rc.requests.map((q) => q.key), `chain ${pc.chain_id}: its requests, in order`);
    const r = referenceTotals(rc.requests);
    for (const k of ['cold', 'growth', 'expiry', 'break'] as const) assert.equal(pc[k], r[k], `chain ${pc.chain_id} ${k}`);
    for (const k of ['weight', 'usd', 'waste_weight', 'hit_ratio', 'write_read_ratio'] as const) close(pc[k], r[k], `chain ${pc.chain_id} ${k}`);
    assert.equal(one.repurchase, rc.repurchase, `chain ${pc.chain_id} re-purchase flag`);
    if (rc.repurchase) flagged.push(pc.chain_id);
    one.requests.forEach((pq: any, i: number) => compareRequest(pq, rc.requests[i]!, `chain ${pc.chain_id} #${i}`));
  }
  const listed = anatomy.repurchase as any[];
  assert.deepEqual(listed.map((c) => c.chain_id).sort(), flagged.sort(), 're-purchase list');
  for (const c of listed) {
    const rc = chainOfKey.get(run(['anatomy', '--chain', c.chain_id]).requests[0].key)!;
    assert.equal(c.rounds, rc.rounds, `${c.chain_id} rounds with a request`);
    assert.equal(c.read_median, rc.readMedian, `${c.chain_id} read median`);
  }
  return { chains, anatomy };
}

function compareRequest(pq: any, rq: RefRequest, what: string) {
  const pairs: [string, number | string | null][] = [
    ['p', rq.p], ['input', rq.in], ['r', rq.r], ['w', rq.w], ['w5m', rq.w5], ['w1h', rq.w1h], ['output', rq.out],
    ['ttl', rq.ttl], ['cached_prefix', rq.cachedPrefix], ['rewrite', rq.rewrite],
    ['cold', rq.cold], ['growth', rq.growth], ['expiry', rq.expiry], ['break', rq.brk],
  ];
  for (const [k, v] of pairs) assert.equal(pq[k], v, `${what} ${k}`);
  close(pq.gap_s, rq.gapS, `${what} gap_s`);
  close(pq.weight, rq.weight, `${what} weight`);
  close(pq.waste_weight, rq.wasteWeight, `${what} waste_weight`);
}

const realDirs = readdirSync(REAL_LOGS, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(REAL_LOGS, d.name));

for (const dir of [...realDirs, join(REPO, 'sample-logs')]) {
  test(`reference money: ${dir.slice(dir.lastIndexOf('/') + 1)} — totals, sessions, chains and requests equal the reference's`, () => {
    compareCorpus(dir);
  });
}

test('reference money: every real log together (de-dup is global across the folders)', () => {
  const { chains, anatomy } = compareCorpus(REAL_LOGS);
  // the SPEC §3 worked example holds in the reference too (marot-spotter 4d5611e5, main chain)
  const main = chains.find((c) => c.id === '4d5611e5-241a-462a-8d15-5122611a9569')!;
  assert.ok(main.requests.some((q) => q.expiry === 81_957 && q.w === 82_720 && q.r === 0));
  assert.ok(main.requests.some((q) => q.brk === 76_753 && q.r === 21_478));
  assert.ok(main.requests.some((q) => q.cold === 14_600 && q.segment === 1));
  assert.ok(anatomy.totals.requests > 800);
});

/**
 * A generated corpus (fixed seeds, so every run is the same) that puts many requests on the SPEC's
 * edges at once: gaps of 300 s / 300.001 s / 3,600 s / 3,601 s, rewrites of 1,023 / 1,024 tokens,
 * P of 200,000 / 200,001 on Sonnet 4.5, 5m / 1h / both / no split, w = 0, compactions, several copies
 * with a growing output, a subagent with progress copies in the parent (some its only copy), pinned
 * reads across rounds. The product and the reference must agree on all of it.
 */
function generated(seed: number): string {
  let s = seed;
  const rnd = () => (s = (s * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const session = `5eed0000-0000-4000-8000-${String(seed).padStart(12, '0')}`;
  const T = Date.parse('2026-03-01T10:00:00.000Z');
  const iso = (ms: number) => new Date(ms).toISOString();
  const main: object[] = [userPrompt(session, iso(T - 1000))];
  const agent: object[] = [userPrompt(session, iso(T - 500), 'sub task', 'a5eed')];
  const state = { main: { t: T, c: 0 }, agent: { t: T, c: 0 } };
  for (let i = 0; i < 40; i++) {
    const sub = rnd() < 0.4;
    const st = sub ? state.agent : state.main;
    const lines = sub ? agent : main;
    st.t += pick([1_000, 20_000, 300_000, 300_001, 301_000, 3_600_000, 3_600_001]);
    if (rnd() < 0.2) lines.push(userPrompt(session, iso(st.t - 1), `prompt ${i}`, sub ? 'a5eed' : undefined));
    if (!sub && rnd() < 0.05) main.push({ type: 'system', subtype: 'compact_boundary', sessionId: session, timestamp: iso(st.t - 1), uuid: `cb-${i}` });
    const miss = pick([0, 1_023, 1_024, 1_025, st.c, 13_800]);
    const r = Math.max(0, st.c - miss);
    const model = pick(['claude-opus-4-6', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001']);
    let w = Math.min(miss, st.c) + pick([0, 0, 500, 1_024, 4_000]);
    const inp = pick([1, 3, 200_000 - r - w, 200_001 - r - w]);
    if (inp < 0) w = 0;
    const ttl = pick(['5m', '5m', '1h', 'both', 'none']);
    const w5 = ttl === '1h' ? 0 : ttl === 'both' ? Math.floor(w / 2) : w;
    const u: UsageSpec = { in: Math.max(1, inp), r, w5, w1h: w - w5, out: 40, split: ttl !== 'none' };
    const msg = `msg_${seed}_${i}`;
    const line = (k: number) => assistant({ session, msg, t: iso(st.t + k * 10), model, u: { ...u, out: 40 + 25 * k }, agentId: sub ? 'a5eed' : undefined }) as any;
    const copies = pick([1, 1, 2, 3]);
    const progressOnly = sub && rnd() < 0.15;
    if (!progressOnly) for (let k = 0; k < copies; k++) lines.push(line(k));
    if (sub && (progressOnly || rnd() < 0.4)) {
      const copy = line(pick([0, copies]));
      main.push({ type: 'progress', sessionId: session, timestamp: iso(st.t + pick([-50, 0, 50])), uuid: `p-${i}`,
        data: { type: 'agent_progress', agentId: 'a5eed', message: { type: 'assistant', requestId: copy.requestId, timestamp: copy.timestamp, message: copy.message } } });
    }
    st.c = r + w;
  }
  return writeCorpus({ [`projects/-work-gen/${session}.jsonl`]: main, [`projects/-work-gen/${session}/subagents/agent-a5eed.jsonl`]: agent });
}

for (const seed of [3, 17, 29]) {
  test(`reference money: a generated corpus on the SPEC's edges (seed ${seed})`, () => {
    compareCorpus(generated(seed));
  });
}
