/**
 * The small sessions test/spec prices by hand (each test file states its arithmetic). Timestamps are
 * seconds after 2026-03-01 10:00:00 UTC, chosen to fall either side of the 5-minute and 1-hour TTLs.
 */
import { assistant, userPrompt } from '../helpers/corpus.js';

export const S1 = '5bec0000-0000-4000-8000-0000000003c1';
export const S3 = '5bec0000-0000-4000-8000-0000000003c3';
const P = 'projects/-work-demo';

/** ISO time `s` seconds after 2026-03-01 10:00:00 UTC. */
export const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 10) + s * 1000).toISOString();

/**
 * A 5-minute main chain (expiry at 360 s, break 5 s later, compaction, expiry after 3,700 s) and a
 * subagent a1 (expiry after 400 s); Opus 4.6 throughout.
 */
export function main5m(): Record<string, object[]> {
  return {
    [`${P}/${S1}.jsonl`]: [
      userPrompt(S1, at(-5)),
      assistant({ session: S1, msg: 'm1', t: at(0), u: { w5: 20_000 } }),
      assistant({ session: S1, msg: 'm2', t: at(200), u: { r: 20_000, w5: 1_000 } }),
      assistant({ session: S1, msg: 'm3', t: at(560), u: { w5: 22_000 } }),
      assistant({ session: S1, msg: 'm4', t: at(565), u: { r: 5_000, w5: 18_000 } }),
      {
        type: 'system', subtype: 'compact_boundary', sessionId: S1, timestamp: at(600), uuid: 'cb1', cwd: '/work/demo',
        content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: 23_000 },
      },
      assistant({ session: S1, msg: 'm5', t: at(610), u: { w5: 5_000 } }),
      assistant({ session: S1, msg: 'm6', t: at(4_310), u: { w5: 6_000 } }),
    ],
    [`${P}/${S1}/subagents/agent-a1.jsonl`]: [
      userPrompt(S1, at(9), 'sub task', 'a1'),
      assistant({ session: S1, msg: 's1', t: at(10), agentId: 'a1', u: { w5: 3_000 } }),
      assistant({ session: S1, msg: 's2', t: at(410), agentId: 'a1', u: { w5: 3_500 } }),
    ],
  };
}

/** One line of a v1.x session: `parentUuid` links the lines; an inline sidechain has isSidechain and no agentId. */
function linked(msg: string, s: number, u: Parameters<typeof assistant>[0]['u'], parent: string, o: { model?: string; side?: boolean } = {}): Record<string, unknown> {
  const line = assistant({ session: S3, msg, t: at(s), model: o.model, u });
  return { ...line, isSidechain: o.side ?? false, parentUuid: parent, uuid: `uu-${msg}` };
}

/**
 * A 1-hour main chain (growth after 10 minutes, expiry after 3,800 s, then a switch to Sonnet 4.6 that
 * breaks the prefix) and a v1.x inline sidechain of 5-minute writes (expiry after 350 s).
 */
export function mixed1h(): Record<string, object[]> {
  const user = (uuid: string, s: number, side: boolean) => ({
    type: 'user', sessionId: S3, cwd: '/work/demo', isSidechain: side, parentUuid: null, uuid, timestamp: at(s), message: { role: 'user', content: side ? 'sub task' : 'go' },
  });
  return {
    [`${P}/${S3}.jsonl`]: [
      user('p1', -5, false),
      linked('m1', 0, { w1h: 10_000 }, 'p1'),
      linked('m2', 600, { r: 10_000, w1h: 2_000 }, 'uu-m1'),
      user('sr1', 99, true),
      linked('s1', 100, { w5: 3_000 }, 'sr1', { side: true }),
      linked('s2', 450, { w5: 3_300 }, 'uu-s1', { side: true }),
      linked('m3', 4_400, { w1h: 13_000 }, 'uu-m2'),
      linked('m4', 4_410, { w1h: 14_000 }, 'uu-m3', { model: 'claude-sonnet-4-6' }),
    ],
  };
}
