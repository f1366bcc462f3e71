/**
 * Test-only loader until the real reader lands: the main chain of one session file.
 * Reads the file's top-level `assistant` lines (not `progress` copies, not subagent files,
 * not sidechain lines), de-dups by (message.id, requestId) with field-wise max usage and the
 * first timestamp, starts a new segment after each `system` `compact_boundary` line, and counts
 * a round at each `user` line that is not only tool results.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChainEvent, ChainInput, ChainRequest } from '../../../src/analyses/chain.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const realLogs = path.resolve(repoRoot, '../shared/real-logs');

type Json = Record<string, any>;

export function loadMainChain(file: string): ChainInput {
  const byKey = new Map<string, ChainRequest>();
  const events: ChainEvent[] = [];
  let segment = 0;
  let round = 0;
  let sessionId = '';
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    if (!text.trim()) continue;
    const line = JSON.parse(text) as Json;
    if (line.isSidechain) continue;
    const t = Date.parse(line.timestamp);
    sessionId ||= line.sessionId ?? '';
    if (line.type === 'system' && line.subtype === 'compact_boundary') {
      segment++;
      events.push({ t, kind: 'compaction', detail: String(line.compactMetadata?.trigger ?? '') });
    } else if (line.type === 'attachment') {
      events.push({ t, kind: 'attachment', detail: String(line.attachment?.type ?? '') });
    } else if (line.type === 'user' && isPrompt(line.message?.content)) {
      round++;
    } else if (line.type === 'assistant' && line.message?.usage && line.message.model !== '<synthetic>') {
      const m = line.message;
      const u = m.usage;
      const key = line.requestId ? `${m.id}:${line.requestId}` : m.id;
      const w = u.cache_creation_input_tokens ?? 0;
      const split = u.cache_creation;
      const copy: ChainRequest = {
        key,
        t,
        model: m.model,
        input: u.input_tokens ?? 0,
        output: u.output_tokens ?? 0,
        cacheWrite: w,
        cacheWrite5m: split ? split.ephemeral_5m_input_tokens ?? 0 : w,
        cacheWrite1h: split ? split.ephemeral_1h_input_tokens ?? 0 : 0,
        cacheRead: u.cache_read_input_tokens ?? 0,
        segment,
        round,
      };
      const seen = byKey.get(key);
      if (!seen) byKey.set(key, copy);
      else {
        for (const f of ['input', 'output', 'cacheWrite', 'cacheWrite5m', 'cacheWrite1h', 'cacheRead'] as const) {
          seen[f] = Math.max(seen[f], copy[f]);
        }
      }
    }
  }
  const requests = [...byKey.values()].sort((a, b) => a.t - b.t);
  return { chainId: `${sessionId}:main`, sessionId, agentId: null, agentType: 'main', kind: 'main', requests, events };
}

function isPrompt(content: unknown): boolean {
  if (typeof content === 'string') return true;
  return Array.isArray(content) && content.some((b: Json) => b?.type !== 'tool_result');
}
