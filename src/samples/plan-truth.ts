/**
 * Turns one chain's plan into truth.json rows: each request's usage and its class by SPEC §3
 * (anatomy.ts), checked against the cause the planner intended, and the chain's facts.
 */
import { classifyChain, type Anatomy, type AnatomyClass } from './anatomy.js';
import type { Cause } from './cache-sim.js';
import { iso, type ChainWriter } from './chain-writer.js';
import { addTokens, zeroTokens, type ChainTruth, type RequestTruth, type Tokens, type TruthSink } from './truth.js';

/** Models priced in src/pricing/prices.json (matched after removing the date suffix). */
const PRICED = /^claude-(opus|sonnet|haiku)-\d/;

export function recordChain(truth: TruthSink, c: ChainWriter, sessionId: string, cwd: string): void {
  const anatomy = classifyChain(c.requests.map((r) => ({ t: r.t, ...r.tokens })));
  c.requests.forEach((r, i) => checkCause(r.tokens.cause, (anatomy[i] as Anatomy).cls, c.id.chainId, i));
  const chainTokens = zeroTokens();
  const classes: Record<AnatomyClass, number> = { cold: 0, growth: 0, expiry: 0, break: 0 };
  const anatomyTokens: Record<AnatomyClass, number> = { cold: 0, growth: 0, expiry: 0, break: 0 };
  let gapsOverTtl = 0;
  const models: string[] = [];
  c.requests.forEach((r, i) => {
    const a = anatomy[i] as Anatomy;
    const usage: Tokens = {
      input: r.tokens.input,
      output: r.tokens.output,
      cache_write_5m: r.tokens.cacheWrite5m,
      cache_write_1h: r.tokens.cacheWrite1h,
      cache_read: r.tokens.cacheRead,
    };
    addTokens(chainTokens, usage);
    classes[a.cls]++;
    anatomyTokens.cold += a.coldTokens;
    anatomyTokens.growth += a.growthTokens;
    if (a.cls === 'expiry' || a.cls === 'break') anatomyTokens[a.cls] += a.rewriteTokens;
    if (a.cls !== 'cold' && a.gapMs !== null && a.ttlPrev !== null && a.gapMs > (a.ttlPrev === '1h' ? 3_600_000 : 300_000)) gapsOverTtl++;
    if (!models.includes(r.model)) models.push(r.model);
    const row: RequestTruth = {
      message_id: r.messageId,
      request_id: r.requestId,
      chain_id: c.id.chainId,
      session_id: sessionId,
      file: c.sink.relPath,
      model: r.model,
      priced: PRICED.test(r.model),
      timestamp: iso(r.t),
      round: r.round,
      segment: r.tokens.segment,
      usage,
      class: a.cls,
      rewrite_tokens: a.rewriteTokens,
      growth_tokens: a.growthTokens,
      cold_tokens: a.coldTokens,
      gap_ms: a.gapMs,
      ttl_prev: a.ttlPrev,
      cause: r.tokens.cause,
      lines: r.lines,
      copies: 1 + r.progressFiles.size,
      progress_lines: r.progressLines,
    };
    truth.addRequest(row);
  });
  const row: ChainTruth = {
    chain_id: c.id.chainId,
    session_id: sessionId,
    agent_id: c.id.agentId,
    project: cwd,
    file: c.sink.relPath,
    meta_file: c.id.metaFile,
    kind: c.id.kind,
    definition: c.id.definition,
    agent_type: c.id.agentType,
    requested_type: c.id.requestedType,
    spawn_name: c.id.spawnName,
    ttl: c.sim.ttl,
    models,
    rounds: c.round,
    compactions: c.compactions,
    skill_listing: c.attachments.get('skill_listing') ?? 0,
    re_attachments: c.reAttachments,
    attachments: Object.fromEntries([...c.attachments.entries()].sort(([a], [b]) => (a < b ? -1 : 1))),
    requests: c.requests.length,
    gaps_over_ttl: gapsOverTtl,
    classes,
    anatomy_tokens: anatomyTokens,
    repurchase: isRepurchase(c, anatomy),
    round_first_reads: c.roundFirstReads,
    tokens: chainTokens,
  };
  truth.addChain(row);
}

/** The planned cause must give the class SPEC §3 assigns, or the plan is wrong. */
function checkCause(cause: Cause, cls: AnatomyClass, chainId: string, i: number): void {
  const expected: Record<Cause, AnatomyClass[]> = {
    cold: ['cold'],
    continue: ['growth'],
    jitter: ['growth'],
    expired: ['expiry'],
    break: ['break'],
    pinned: ['break'],
  };
  if (!expected[cause].includes(cls)) throw new Error(`plan error: ${chainId} request ${i + 1} planned ${cause} but classifies as ${cls}`);
}

/**
 * SPEC §3 re-purchase flag: ≥ 3 rounds, reads of every round's first request within 1,024 of
 * their median, and every later round's first request re-writes ≥ 0.8 of the cached prefix.
 * Example: round openers reading 13,818 / 13,818 / 13,700 with C before them of 131k and 150k
 * and rw of 117k and 136k → flagged.
 */
function isRepurchase(c: ChainWriter, anatomy: Anatomy[]): boolean {
  const firsts: number[] = [];
  let lastRound = -1;
  c.requests.forEach((r, i) => {
    if (r.round !== lastRound && r.round > 0) firsts.push(i);
    lastRound = r.round;
  });
  if (firsts.length < 3) return false;
  const reads = firsts.map((i) => (c.requests[i] as { tokens: { cacheRead: number } }).tokens.cacheRead).sort((a, b) => a - b);
  const mid = Math.floor(reads.length / 2);
  const median = reads.length % 2 ? (reads[mid] as number) : ((reads[mid - 1] as number) + (reads[mid] as number)) / 2;
  if (reads.some((r) => Math.abs(r - median) > 1024)) return false;
  return firsts.slice(1).every((i) => {
    const prev = c.requests[i - 1];
    if (!prev) return false;
    const cached = prev.tokens.cacheRead + prev.tokens.cacheWrite5m + prev.tokens.cacheWrite1h;
    return (anatomy[i] as Anatomy).rewriteTokens >= 0.8 * cached;
  });
}
