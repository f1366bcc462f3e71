/**
 * Small hand-written Claude Code transcripts for the session replay tests: R rounds, each a
 * user prompt, optionally the same attachment again, a tool call (request k.1), its result and
 * a final answer (request k.2). Lines are 10 s apart, so every gap is within the 5-minute TTL.
 */
import { join } from 'node:path';
import { assistant, writeCorpus } from '../helpers/corpus.js';

export const SESSION = '5e55104e-0000-4000-8000-000000000001';
export const SKILLS = Array.from({ length: 30 }, (_, i) => `- skill-${i}: does task number ${i} when the user asks for it; read its SKILL.md first.`).join('\n');

export interface FixtureOptions {
  rounds: number;
  /** an attachment line after every prompt (the same content each round) */
  attachment?: { type: string; content: string } | null;
  /** start time (ms) */
  start?: number;
  /** prompt size of request 1 (in + w + r) */
  firstPrompt?: number;
  /** a compaction before this round (1-based) */
  compactBefore?: number;
}

export function sessionLines(o: FixtureOptions): object[] {
  let t = o.start ?? Date.parse('2026-03-01T10:00:00Z');
  const at = () => new Date((t += 10_000)).toISOString();
  const lines: object[] = [];
  let req = 0;
  const usage = () => (++req === 1 ? { in: 3, w5: o.firstPrompt ?? 12_000, out: 40 } : { in: 3, r: 12_000, w5: 300, out: 40 });
  for (let k = 1; k <= o.rounds; k++) {
    if (o.compactBefore === k) {
      lines.push({ type: 'system', subtype: 'compact_boundary', sessionId: SESSION, timestamp: at(), content: 'Conversation compacted' });
      lines.push({ type: 'user', isCompactSummary: true, sessionId: SESSION, timestamp: at(), message: { role: 'user', content: `Summary of rounds 1 to ${k - 1}: the handlers were explained.` } });
    }
    lines.push({ type: 'user', sessionId: SESSION, timestamp: at(), message: { role: 'user', content: `Round ${k}: please read src/f${k}.ts and explain what handler${k} returns, in two sentences.` } });
    if (o.attachment) lines.push({ type: 'attachment', sessionId: SESSION, timestamp: at(), attachment: { type: o.attachment.type, content: o.attachment.content } });
    lines.push(
      assistant({ session: SESSION, msg: `msg_${k}a`, t: at(), u: usage(), content: [{ type: 'tool_use', id: `toolu_${k}`, name: 'Read', input: { file_path: `/work/demo/src/f${k}.ts` } }] }),
    );
    lines.push({
      type: 'user', sessionId: SESSION, timestamp: at(),
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${k}`, content: `export function handler${k}(req: Request): number {\n  return ${k} * req.size;\n}\n`.repeat(4) }] },
    });
    lines.push(assistant({ session: SESSION, msg: `msg_${k}b`, t: at(), u: usage(), content: [{ type: 'text', text: `handler${k} returns ${k} times the request size. It is pure and is called once per request.` }] }));
  }
  return lines;
}

/** Writes the fixture as a v2 main transcript and returns its path. */
export function writeSession(o: FixtureOptions): string {
  const root = writeCorpus({ [`projects/-work-demo/${SESSION}.jsonl`]: sessionLines(o) });
  return join(root, 'projects/-work-demo', `${SESSION}.jsonl`);
}
