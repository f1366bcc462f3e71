import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { classifyChain } from '../../src/samples/anatomy.js';
import type { ChainTruth, RequestTruth, TokenTotals } from '../../src/samples/truth.js';
import { readSample, type SampleRequest } from './sample-reader.js';

const SAMPLE = join(fileURLToPath(new URL('../../', import.meta.url)), 'sample-logs');
const truth = JSON.parse(readFileSync(join(SAMPLE, 'truth.json'), 'utf8')) as {
  totals: TokenTotals;
  by_model: Record<string, TokenTotals>;
  unpriced_models: Record<string, number>;
  counts: Record<string, unknown> & { gaps_over_ttl: number; gaps_over_ttl_by_ttl: Record<string, number>; classes: Record<string, number> };
  files: { path: string; lines: number; requests: number; invalid_lines: number; incomplete_last_line: boolean; synthetic_lines: number }[];
  chains: ChainTruth[];
  requests: RequestTruth[];
};
const sample = readSample(SAMPLE);
const chainsOf = (kind: string): ChainTruth[] => truth.chains.filter((c) => c.kind === kind);
const TOKENS = ['input', 'output', 'cache_write_5m', 'cache_write_1h', 'cache_read'] as const;

function sum(reqs: SampleRequest[]): TokenTotals {
  const t: TokenTotals = { requests: reqs.length, input: 0, output: 0, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0 };
  for (const r of reqs) for (const k of TOKENS) t[k] += r[k];
  return t;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** The requests of a chain as found in its file, in time order, with round and segment. */
function fileRequests(chainId: string): (SampleRequest & { round: number; segment: number })[] {
  const c = sample.chains.get(chainId);
  assert.ok(c, `no file for chain ${chainId}`);
  return c.requests.map((x) => ({ ...(sample.requests.get(x.key) as SampleRequest), round: x.round, segment: x.segment })).sort((a, b) => a.t - b.t);
}

test('totals and by-model totals equal what a de-dup reader finds in the files', () => {
  const all = [...sample.requests.values()];
  assert.deepEqual(sum(all), truth.totals);
  const models = [...new Set(all.map((r) => r.model))].sort();
  assert.deepEqual(models, Object.keys(truth.by_model).sort());
  for (const m of models) assert.deepEqual(sum(all.filter((r) => r.model === m)), truth.by_model[m], m);
  // counting lines instead of requests would inflate usage: the trap is really there
  const lines = all.reduce((n, r) => n + r.usageLines, 0);
  assert.ok(lines > 1.5 * all.length);
  assert.equal(lines - all.length, truth.counts['duplicate_lines']);
  assert.equal(all.reduce((n, r) => n + r.copies.size - 1, 0), truth.counts['duplicates']);
});

test('every request in truth.json is in the files with the same usage, time and chain', () => {
  assert.equal(truth.requests.length, sample.requests.size);
  for (const t of truth.requests) {
    const key = t.request_id === null ? t.message_id : `${t.message_id}\u0000${t.request_id}`;
    const r = sample.requests.get(key);
    assert.ok(r, key);
    for (const k of TOKENS) assert.equal(r[k], t.usage[k], `${key} ${k}`);
    assert.equal(new Date(r.t).toISOString(), t.timestamp);
    assert.equal(r.chainId, t.chain_id);
    assert.equal(r.model, t.model);
  }
});

test('per-file line, request and fault counts match the files', () => {
  for (const f of truth.files.filter((x) => x.path.endsWith('.jsonl') && x.path.startsWith('projects/'))) {
    const s = sample.files.get(f.path);
    assert.ok(s, f.path);
    assert.equal(s.lines, f.lines, f.path);
    assert.equal(s.invalid, f.invalid_lines, f.path);
    assert.equal(s.incomplete, f.incomplete_last_line, f.path);
    assert.equal(s.synthetic, f.synthetic_lines, f.path);
    const chain = [...sample.chains.values()].find((c) => c.file === f.path);
    assert.equal(chain?.requests.length ?? 0, f.requests, f.path);
  }
});

test('lost agents: asked for a namespaced type with a name, meta says the name, one skill_listing per round', () => {
  const lost = chainsOf('lost');
  assert.ok(lost.length >= 4);
  for (const c of lost) {
    const file = sample.chains.get(c.chain_id);
    assert.ok(file);
    const spawn = [...sample.spawns.values()].find((s) => s.agentId === c.agent_id && s.input['subagent_type'] !== undefined);
    assert.ok(spawn, `spawn of ${c.chain_id}`);
    assert.match(String(spawn.input['subagent_type']), /^myplugin:/);
    assert.equal(spawn.input['name'], file.meta?.['agentType']);
    assert.equal(`myplugin:${String(spawn.input['name'])}`, spawn.input['subagent_type']);
    // the attachment count equals the round count, and each round has exactly one
    assert.equal(file.attachments['skill_listing'], file.rounds);
    assert.equal(c.skill_listing, c.rounds);
    assert.equal(file.rounds, c.rounds);
    assert.deepEqual(file.skillListingsByRound.slice(1), Array(file.rounds).fill(1));
    // some rounds hold several requests (tool_use → tool_result → next request)
    const perRound = new Map<number, number>();
    for (const r of file.requests) perRound.set(r.round, (perRound.get(r.round) ?? 0) + 1);
    assert.ok([...perRound.values()].some((n) => n >= 2));
  }
});

test('lost agents: reads of each round\'s first request stay pinned within 1,024 of their median', () => {
  for (const c of chainsOf('lost')) {
    const reqs = fileRequests(c.chain_id);
    const firsts = [...new Set(reqs.map((r) => r.round))].map((round) => reqs.find((r) => r.round === round) as SampleRequest);
    const reads = firsts.map((r) => r.cache_read);
    const med = median(reads);
    assert.ok(reads.every((r) => Math.abs(r - med) <= 1024), `${c.chain_id}: ${reads.join(', ')}`);
    assert.ok(Math.abs(med - 13_818) <= 300);
    // while the writes of later round openers grow round over round (the re-purchase pattern)
    const writes = firsts.slice(1).map((r) => r.cache_write_5m + r.cache_write_1h);
    assert.ok(writes.every((w, i) => i === 0 || w > (writes[i - 1] as number)), `${c.chain_id}: ${writes.join(', ')}`);
  }
  const flagged = truth.chains.filter((c) => c.repurchase);
  assert.ok(chainsOf('lost').filter((c) => c.rounds >= 3).every((c) => c.repurchase));
  assert.ok(flagged.length >= 3);
});

test('resolved agents: meta agentType equals the requested type and no skill_listing', () => {
  const resolved = chainsOf('resolved');
  assert.ok(resolved.length >= 5);
  assert.ok(resolved.some((c) => c.agent_type.includes(':')), 'a namespaced resolved agent');
  for (const c of resolved) {
    const file = sample.chains.get(c.chain_id);
    assert.ok(file);
    assert.equal(file.attachments['skill_listing'] ?? 0, 0, c.chain_id);
    const spawn = [...sample.spawns.values()].find((s) => s.agentId === c.agent_id);
    assert.ok(spawn);
    assert.equal(file.meta?.['agentType'], spawn.input['subagent_type']);
    assert.equal(spawn.input['name'], undefined);
  }
});

test('gaps over the TTL occur in the counts truth.json states, per chain and per TTL', () => {
  const byTtl: Record<string, number> = { '5m': 0, '1h': 0 };
  for (const c of truth.chains) {
    const reqs = fileRequests(c.chain_id);
    const ttlMs = c.ttl === '1h' ? 3_600_000 : 300_000;
    let gaps = 0;
    reqs.forEach((r, i) => {
      const prev = reqs[i - 1];
      if (prev && r.segment === prev.segment && r.t - prev.t > ttlMs) gaps++;
    });
    assert.equal(gaps, c.gaps_over_ttl, c.chain_id);
    byTtl[c.ttl] = (byTtl[c.ttl] ?? 0) + gaps;
  }
  assert.deepEqual(byTtl, truth.counts.gaps_over_ttl_by_ttl);
  assert.equal(byTtl['5m']! + byTtl['1h']!, truth.counts.gaps_over_ttl);
  assert.ok(byTtl['5m']! >= 3 && byTtl['1h']! >= 2);
});

test('the planted class and rewrite tokens of every request follow SPEC §3 on the file data', () => {
  const byKey = new Map(truth.requests.map((r) => [r.request_id === null ? r.message_id : `${r.message_id}\u0000${r.request_id}`, r]));
  for (const c of truth.chains) {
    const reqs = fileRequests(c.chain_id);
    const anatomy = classifyChain(reqs.map((r) => ({ t: r.t, cacheRead: r.cache_read, cacheWrite5m: r.cache_write_5m, cacheWrite1h: r.cache_write_1h, segment: r.segment })));
    reqs.forEach((r, i) => {
      const t = byKey.get(r.key) as RequestTruth;
      const a = anatomy[i]!;
      assert.equal(a.cls, t.class, r.key);
      assert.equal(a.rewriteTokens, t.rewrite_tokens, r.key);
      // the formula spelled out once more: rw = min(w, max(0, C_{i-1} − r)), ≥ 1,024 or 0
      const prev = reqs[i - 1];
      if (prev && a.cls !== 'cold') {
        const w = r.cache_write_5m + r.cache_write_1h;
        const rw = Math.min(w, Math.max(0, prev.cache_read + prev.cache_write_5m + prev.cache_write_1h - r.cache_read));
        assert.equal(t.rewrite_tokens, rw >= 1024 ? rw : 0);
      }
    });
  }
  for (const cls of ['cold', 'growth', 'expiry', 'break']) assert.ok((truth.counts.classes[cls] ?? 0) >= 3, cls);
});

test('every pattern of the issue is present in the sample', () => {
  const kinds = truth.chains;
  const ttlOf = (pred: (c: ChainTruth) => boolean, ttl: string): boolean => kinds.some((c) => pred(c) && c.ttl === ttl);
  const isMain = (c: ChainTruth): boolean => c.kind === 'main';
  const isSub = (c: ChainTruth): boolean => c.kind === 'resolved' || c.kind === 'lost' || c.kind === 'unknown';
  assert.ok(ttlOf(isMain, '1h') && ttlOf(isMain, '5m'), 'main threads on both TTLs');
  assert.ok(ttlOf(isSub, '5m') && ttlOf(isSub, '1h'), 'subagents on both TTLs');
  // exactly one of 5m / 1h is non-zero in every write, matching the chain's TTL
  const ttlByChain = new Map(kinds.map((c) => [c.chain_id, c.ttl]));
  for (const r of sample.requests.values()) {
    const ttl = ttlByChain.get(r.chainId as string);
    assert.ok(ttl === '1h' ? r.cache_write_5m === 0 && r.cache_write_1h > 0 : r.cache_write_1h === 0 && r.cache_write_5m > 0, r.key);
  }
  // prompt growth: most requests read exactly the previous cached prefix
  let exact = 0;
  for (const c of kinds) {
    const reqs = fileRequests(c.chain_id);
    reqs.forEach((r, i) => {
      const p = reqs[i - 1];
      if (p && r.cache_read === p.cache_read + p.cache_write_5m + p.cache_write_1h) exact++;
    });
  }
  assert.ok(exact > truth.requests.length / 2);
  assert.ok(truth.requests.some((r) => r.cause === 'jitter'), 'breakpoint jitter under the tolerance');
  for (const m of ['claude-opus-4-6', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001', 'claude-sonnet-5', 'claude-mystery-9']) assert.ok(truth.by_model[m], m);
  assert.deepEqual(Object.keys(truth.unpriced_models), ['claude-mystery-9']);
  assert.ok(truth.requests.some((r) => r.model.startsWith('claude-sonnet-4-5') && r.usage.input + r.usage.cache_read + r.usage.cache_write_5m + r.usage.cache_write_1h > 200_000), 'a long-context Sonnet 4.5 request');
  const files = [...sample.files.values()];
  const total = (f: (x: (typeof files)[number]) => number): number => files.reduce((n, x) => n + f(x), 0);
  assert.ok(total((f) => f.synthetic) >= 2, 'synthetic lines');
  assert.ok(total((f) => f.invalid) >= 2, 'invalid lines mid-file');
  assert.equal(files.filter((f) => f.incomplete).length, 1, 'one half-written last line');
  assert.ok(truth.requests.filter((r) => r.request_id === null).length >= 3, 'requests without requestId');
  // compaction: compact_boundary, then an isCompactSummary user line, then a cold request
  let compactions = 0;
  for (const [, objs] of sample.objects) {
    objs.forEach((l, i) => {
      if (l['type'] === 'system' && l['subtype'] === 'compact_boundary') {
        compactions++;
        assert.equal(objs[i + 1]?.['isCompactSummary'], true);
      }
    });
  }
  assert.ok(compactions >= 3);
  assert.equal(truth.requests.filter((r) => r.class === 'cold' && r.segment > 0).length, compactions);
  assert.ok(chainsOf('compaction').length === compactions);
  const types = new Set<string>();
  const sub = new Set<string>();
  for (const objs of sample.objects.values()) {
    for (const l of objs) {
      types.add(String(l['type']));
      const d = l['data'] as Record<string, unknown> | undefined;
      if (d) sub.add(`progress:${String(d['type'])}`);
      if (l['subtype']) sub.add(`system:${String(l['subtype'])}`);
      const a = l['attachment'] as Record<string, unknown> | undefined;
      if (a) sub.add(`attachment:${String(a['type'])}`);
    }
  }
  for (const t of ['user', 'assistant', 'system', 'attachment', 'progress', 'queue-operation', 'file-history-snapshot', 'last-prompt']) assert.ok(types.has(t), t);
  for (const t of ['progress:agent_progress', 'progress:hook_progress', 'progress:bash_progress', 'system:turn_duration', 'system:compact_boundary', 'attachment:skill_listing', 'attachment:budget_usd', 'attachment:deferred_tools_delta', 'attachment:agent_listing_delta', 'attachment:task_reminder']) {
    assert.ok(sub.has(t), t);
  }
  // agent_progress copies repeat subagent requests that also stand in the subagent files
  assert.ok([...sample.requests.values()].filter((r) => r.copies.size > 1).length >= 20);
  // one response, several lines: output_tokens rises line by line to its final value
  const multi = [...sample.requests.values()].filter((r) => r.lineOutputs.length > 1);
  assert.ok(multi.length > 50);
  for (const r of multi) {
    assert.ok(r.lineOutputs.every((x, i) => i === 0 || x >= (r.lineOutputs[i - 1] as number)), r.key);
    assert.equal(r.lineOutputs[r.lineOutputs.length - 1], r.output);
  }
  // layouts: subagent files with and without .meta.json, and a workflow subagent
  const subFiles = [...sample.chains.values()].filter((c) => c.file.includes('/subagents/'));
  assert.ok(subFiles.some((c) => c.meta === null) && subFiles.some((c) => c.meta !== null));
  assert.ok(subFiles.some((c) => c.file.includes('/subagents/workflows/')));
  for (const c of subFiles) {
    const parentSession = c.chainId.split(':')[0];
    const lines = sample.objects.get(c.file)!.filter((l) => l['type'] === 'assistant' || l['type'] === 'user');
    assert.ok(lines.every((l) => l['isSidechain'] === true && l['agentId'] === c.chainId.slice(parentSession!.length + 1) && l['sessionId'] === parentSession), c.file);
    assert.ok(c.file.includes(`/${parentSession}/subagents/`));
  }
});
