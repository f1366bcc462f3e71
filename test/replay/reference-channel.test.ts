/**
 * `replay channel --json` against an independent reference (test/helpers/reference-channel.ts,
 * written from SPEC §6.1): every metric per strategy and every per-turn series, on the sample
 * channel and on seeded synthetic channels (threads, bursts of more than 12 rows between mentions,
 * long bodies with astral characters and control characters, offsets in created_at, unanswered
 * mentions, gaps of exactly a TTL and exactly the idle time), under eviction, failed runs, idle
 * reap, both TTLs and both encodings. A few CLI runs only: the product's own tests cover each rule.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, REPO } from '../helpers/corpus.js';
import { tempDir } from '../helpers/temp.js';
import { getEncoding } from 'js-tiktoken';
import { commitWatermark, cutBody, productFraming, referenceChannel, type RefMessage, type RefOptions } from '../helpers/reference-channel.js';
import { advanceWatermark } from '../../src/replay/watermark.js';
import { coveredBy } from '../../src/replay/render.js';
import { mulberry32 } from '../../src/samples/prng.js';

const SAMPLE = join(REPO, 'sample-logs/channels/backend.jsonl');
const home = tempDir('cachelens-refchan-home-');

function product(file: string, flags: string[]): any {
  const r = cli(['replay', 'channel', file, '--json', ...flags], { HOME: home });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function readLog(file: string): RefMessage[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RefMessage);
}

const SUMMARY_KEYS = [
  'turns', 'warm_turns', 'cold_turns', 'reloaded_turns', 'failed_turns', 'expired_turns', 'processes',
  'input_tokens', 'cacheable_tokens', 'cacheable_ratio', 'uncached_per_warm_turn', 'context_tokens',
  'already_seen_tokens', 'already_seen_share', 'reshown_tokens', 'rows_sent', 'rows_never_shown', 'output_tokens', 'weight',
] as const;
const TURN_KEYS = [
  'strategy', 'mention', 'message_id', 'at', 'delivery', 'native', 'cache', 'gap_s', 'input_tokens', 'cacheable_tokens',
  'uncached_tokens', 'context_tokens', 'already_seen_tokens', 'reshown_tokens', 'rows', 'header', 'output_tokens', 'failed', 'weight',
] as const;

const close = (a: unknown, b: unknown): boolean =>
  typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)) : a === b;

/** Runs the product and the reference with the same settings; returns every disagreement. */
function compare(file: string, flags: string[], opts: Omit<RefOptions, 'framing' | 'channelId' | 'agent'> & { agent?: string }): { diffs: string[]; prod: any } {
  const prod = product(file, flags);
  const agent = opts.agent ?? '@claude';
  const channelId = prod.channel.channel_id as string;
  assert.equal(prod.settings.prefix_tokens, opts.prefixTokens ?? 2120, 'the framing is as long as asked');
  const ref = referenceChannel(readLog(file), { ...opts, agent, channelId, framing: productFraming(channelId, agent) });
  const diffs: string[] = [];
  if (prod.channel.mentions !== ref.mentions) diffs.push(`mentions: product ${prod.channel.mentions}, reference ${ref.mentions}`);
  if (prod.channel.replies_from_log !== ref.replies_from_log) diffs.push(`replies_from_log: product ${prod.channel.replies_from_log}, reference ${ref.replies_from_log}`);
  for (const [s, r] of Object.entries(ref.strategies)) {
    const p = prod.strategies[s];
    for (const k of SUMMARY_KEYS) if (!close(p?.[k], (r as any)[k])) diffs.push(`${s}.${k}: product ${p?.[k]}, reference ${(r as any)[k]}`);
    if (!close(p?.usd, (r as any).weight * prod.settings.usd_per_input_token)) diffs.push(`${s}.usd: product ${p?.usd}`);
  }
  if (prod.turns.length !== ref.turns.length) diffs.push(`turns: product ${prod.turns.length}, reference ${ref.turns.length}`);
  ref.turns.forEach((r, i) => {
    const p = prod.turns[i];
    for (const k of TURN_KEYS) if (!close(p?.[k], (r as any)[k])) diffs.push(`turn ${r.strategy} #${r.mention} ${k}: product ${p?.[k]}, reference ${(r as any)[k]}`);
  });
  return { diffs, prod };
}

const WORDS = ['deploy', 'orders', 'index', 'flaky', 'CI', 'rollback', 'p99', 'migration', 'café', '日本語', 'naïve', 'queue', 'retry', 'Ωmega'];
const ASTRAL = ['😀', '𝔘', '🚀', '𐍈', '🇩🇪'];

/**
 * A channel of `n` messages: users talk in bursts, mention @claude (top level and in threads), the
 * agent answers most mentions (some in a thread under the mention), and a few bodies are long.
 */
function synthetic(seed: number, n: number): RefMessage[] {
  // seeded (mulberry32), so a failure names a channel that can be made again
  const r = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const users = ['maya', 'aiko', 'tomasz', 'priya', 'li', 'ömer'];
  const out: RefMessage[] = [];
  let t = Date.parse('2026-03-11T08:00:00Z');
  let id = 0;
  const roots: string[] = [];
  const stamp = (ms: number, i: number): string => {
    // every 7th message written with a +02:00 offset, the same instant
    if (i % 7 !== 3) return new Date(ms).toISOString();
    const local = new Date(ms + 2 * 3_600_000).toISOString().slice(0, 19);
    return `${local}+02:00`;
  };
  const body = (): string => {
    const k = r();
    if (k < 0.08) {
      // around the 600 code point cut, astral characters included (UTF-16 length ≠ code points)
      const len = 590 + Math.floor(r() * 25);
      let s = '';
      for (let i = 0; Array.from(s).length < len; i++) s += i % 5 === 0 ? pick(ASTRAL) : `${pick(WORDS)} `;
      return Array.from(s).slice(0, len).join('');
    }
    if (k < 0.12) return `stack trace:\n\tat ${pick(WORDS)}()\r\n\tat main()`;
    return Array.from({ length: 3 + Math.floor(r() * 25) }, () => pick(WORDS)).join(' ');
  };
  // the channel opens with a mention: its turn has no rows, so no block
  out.push({ id: `s${seed}-first`, author: 'maya', created_at: new Date(t).toISOString(), text: '@claude morning, anything on fire?' });
  while (out.length < n) {
    // gaps: mostly short, some long; a few exactly 5 minutes, 30 minutes or 1 hour
    const g = r();
    t += g < 0.05 ? 300_000 : g < 0.08 ? 1_800_000 : g < 0.1 ? 3_600_000 : g < 0.8 ? Math.floor(r() * 120_000) : Math.floor(r() * 2_400_000);
    const i = id++;
    const m: RefMessage = { id: `s${seed}-${i}`, author: pick(users), created_at: stamp(t, i), text: body() };
    const kind = r();
    if (kind < 0.1) roots.push(m.id);
    else if (kind < 0.3 && roots.length) m.thread_root_id = pick(roots);
    else if (kind < 0.32) m.thread_root_id = m.id; // Slack's parent: a top-level message
    else if (kind < 0.34) m.thread_root_id = `gone-${seed}`; // a thread whose root the log does not hold
    const mentioned = r() < 0.14;
    if (mentioned) m.text = `${pick(['@claude', '@Claude,', '(@claude)'])} ${m.text}`;
    out.push(m);
    if (mentioned && r() < 0.85) {
      t += 20_000 + Math.floor(r() * 600_000);
      const a: RefMessage = { id: `s${seed}-${id++}`, author: 'claude', created_at: new Date(t).toISOString(), text: body() };
      const thr = m.thread_root_id && m.thread_root_id !== m.id ? m.thread_root_id : r() < 0.3 ? m.id : undefined;
      if (thr) a.thread_root_id = thr;
      out.push(a);
    }
  }
  return out;
}

function writeLog(name: string, msgs: RefMessage[]): string {
  const file = join(tempDir('cachelens-refchan-'), `${name}.jsonl`);
  writeFileSync(file, msgs.map((m) => JSON.stringify(m)).join('\n') + '\n');
  return file;
}

test('reference channel: the sample channel, every metric and turn, plain and with events, idle reap, 1h TTL and o200k_base', () => {
  const a = compare(SAMPLE, [], {});
  assert.deepEqual(a.diffs, []);
  const b = compare(SAMPLE, ['--evict-at', '15', '--fail-at', '7,20', '--idle-reap', '30m', '--ttl', '1h', '--encoding', 'o200k_base'], {
    evictAt: [15],
    failAt: [7, 20],
    idleReapMinutes: 30,
    ttl: '1h',
    encoding: 'o200k_base',
  });
  assert.deepEqual(b.diffs, []);
  assert.ok(b.prod.strategies.watermark.failed_turns === 2 && b.prod.strategies.watermark.processes > 2);
});

test('reference channel: seeded synthetic channels (threads, bursts, long astral bodies, offsets), with eviction, failures, idle reap, both TTLs and encodings', () => {
  const one = writeLog('synth-one', synthetic(1, 260));
  const a = compare(one, [], {});
  assert.deepEqual(a.diffs, []);
  // the channel holds what the comparison is meant to cover
  const w = a.prod.strategies.watermark;
  assert.ok(a.prod.channel.mentions >= 20 && a.prod.channel.replies_from_log < a.prod.channel.mentions, JSON.stringify(a.prod.channel));
  assert.ok(w.rows_never_shown > 0, 'a burst of more than 12 rows between mentions');
  assert.ok(a.prod.turns.some((t: any) => t.header === null), 'a mention with no new rows');
  const b = compare(one, ['--evict-at', '4,11', '--fail-at', '6', '--ttl', '1h', '--encoding', 'o200k_base'], {
    evictAt: [4, 11],
    failAt: [6],
    ttl: '1h',
    encoding: 'o200k_base',
  });
  assert.deepEqual(b.diffs, []);
  const two = writeLog('synth-two', synthetic(2, 220));
  const c = compare(two, ['--idle-reap', '30', '--fail-at', '2', '--strategy', 'watermark,unstable'], {
    strategies: ['watermark', 'unstable'],
    idleReapMinutes: 30,
    failAt: [2],
  });
  assert.deepEqual(c.diffs, []);
  assert.ok(c.prod.strategies.watermark.processes > 1, 'the idle reap started new processes');
  const d = compare(two, ['--idle-reap', '45m', '--evict-at', '3', '--ttl', '1h', '--prefix-tokens', '900'], {
    idleReapMinutes: 45,
    evictAt: [3],
    ttl: '1h',
    prefixTokens: 900,
  });
  assert.deepEqual(d.diffs, []);
});

/**
 * Boundaries, each expectation computed by hand from SPEC §6.1 (token counts are js-tiktoken's
 * count of the hand-written line plus its newline, README's "How replay channel reads SPEC §6.1"):
 *   r1…r13 before M1      13 rows left at first contact → the newest 12 (r2…r13); r5's body is
 *                         600 code points (602 UTF-16 units: whole), r6's 601 (cut after 600)
 *   M1, A1, s1…s10 → M2   exactly 12 new rows → all 12; M2 has s10's created_at
 *   eq → M3               eq (after M2, created_at = last_at = s10's) is dropped, as M2 is: M3
 *                         gets A2 and t1 only; window shows eq; M3 comes 5 minutes after M2: read
 *   w1…w14 → M4           16 new rows → w3…w14; w1, w2 never shown; M4's thread_root_id is its own
 *                         id (a top-level root), A4 in its thread is its reply
 *   M5                    30:00 after A4: with --idle-reap 30m not reaped (idle exactly that long)
 *   M6                    30:01 after M5 (no reply): reaped, a cold snapshot; rows native-1 saw
 *                         count as re-sent to a new process
 */
test('reference channel: boundaries by hand — 600/601 code points, 12/13 rows, created_at = last_at, own-id thread root, idle exactly 30m', () => {
  const at = (hhmmss: string): string => `2026-05-04T${hhmmss}.000Z`;
  const min = (h: number, m: number, s = 0): string => at(`${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`);
  const msgs: RefMessage[] = [];
  const say = (id: string, author: string, created: string, text: string, thread?: string): RefMessage => {
    const m: RefMessage = { id, author, created_at: created, text };
    if (thread) m.thread_root_id = thread;
    msgs.push(m);
    return m;
  };
  const body600 = `😀${'a'.repeat(598)}😀`;
  const body601 = `😀${'b'.repeat(599)}𝔘`;
  assert.equal(Array.from(body600).length, 600);
  assert.equal(body600.length, 602);
  for (let i = 1; i <= 13; i++) say(`r${i}`, 'maya', min(10, i), i === 5 ? body600 : i === 6 ? body601 : `row ${i}`);
  say('M1', 'aiko', min(10, 20), '@claude first question');
  say('A1', 'claude', min(10, 21), 'first answer');
  for (let i = 1; i <= 10; i++) say(`s${i}`, 'li', min(10, 21 + i), `s row ${i}`);
  say('M2', 'aiko', min(10, 31), '@claude second question');
  say('eq', 'li', min(10, 31), 'posted in the same second as s10 and M2');
  say('A2', 'claude', min(10, 32), 'second answer');
  say('t1', 'li', min(10, 33), 't row');
  say('M3', 'aiko', min(10, 36), '@claude third question');
  say('A3', 'claude', min(10, 37), 'third answer');
  for (let i = 1; i <= 14; i++) say(`w${i}`, 'tomasz', min(10, 37 + i), `burst ${i}`);
  say('M4', 'aiko', min(10, 52), '@claude fourth, reply in the thread', 'M4');
  say('A4', 'claude', min(10, 53), 'fourth answer, in the thread under the mention', 'M4');
  say('z1', 'li', min(10, 54), 'z row');
  say('M5', 'aiko', min(11, 23), '@claude fifth');
  say('M6', 'aiko', min(11, 53, 1), '@claude sixth');
  const file = writeLog('edges', msgs);
  const { diffs, prod } = compare(file, ['--idle-reap', '30m'], { idleReapMinutes: 30 });
  assert.deepEqual(diffs, []);

  const enc = getEncoding('cl100k_base');
  const tok = (line: string): number => enc.encode(`${line}\n`).length;
  const user = (id: string): string => {
    const m = msgs.find((x) => x.id === id)!;
    return `- [${m.author === 'claude' ? 'agent' : 'user'}] ${m.author}: ${m.text}`;
  };
  const sum = (ids: string[]): number => ids.reduce((a, id) => a + tok(user(id)), 0);
  const turn = (s: string, n: number): any => prod.turns.find((t: any) => t.strategy === s && t.mention === n);
  const r = (a: number, b: number, p: string): string[] => Array.from({ length: b - a + 1 }, (_, i) => `${p}${a + i}`);

  // M1: r2…r13; r5 whole, r6 cut after 600 code points with the exact suffix
  const m1 = turn('watermark', 1);
  assert.equal(m1.rows, 12);
  assert.equal(m1.header, 'first_contact');
  const cut601 = `- [user] maya: 😀${'b'.repeat(599)}… [1 more characters; channel_history has the full message]`;
  const m1Lines = r(2, 13, 'r').map((id) => (id === 'r6' ? cut601 : user(id)));
  assert.equal(m1.context_tokens, m1Lines.reduce((a, l) => a + tok(l), 0));
  // M2: exactly 12 new rows, the mention M1 and the agent's reply among them
  const m2 = turn('watermark', 2);
  assert.deepEqual([m2.rows, m2.header, m2.context_tokens], [12, 'watermark', sum(['M1', 'A1', ...r(1, 10, 's')])]);
  // M3: eq and M2 have created_at = last_at: dropped; window shows eq; 5:00 after M2 is a read
  const m3 = turn('watermark', 3);
  assert.deepEqual([m3.rows, m3.context_tokens, m3.cache, m3.gap_s], [2, sum(['A2', 't1']), 'read', 300]);
  assert.equal(turn('window', 3).context_tokens, sum([...r(3, 10, 's'), 'M2', 'eq', 'A2', 't1']));
  // M4: the newest 12 of 16; its reply is A4, posted in the thread the mention heads
  const m4 = turn('watermark', 4);
  assert.deepEqual([m4.rows, m4.context_tokens, m4.output_tokens], [12, sum(r(3, 14, 'w')), tok(msgs.find((x) => x.id === 'A4')!.text)]);
  // M5: idle exactly 30 minutes since A4 — still warm; it sees M4 (a top-level root) and z1, not A4
  const m5 = turn('watermark', 5);
  assert.deepEqual([m5.delivery, m5.native, m5.rows, m5.context_tokens], ['warm', 'native-1', 2, sum(['M4', 'z1'])]);
  // M6: 30:01 idle → reaped; a cold snapshot of 12, of which w6…w14, M4 and z1 were native-1's
  const m6 = turn('watermark', 6);
  assert.deepEqual([m6.delivery, m6.native, m6.header, m6.rows], ['cold', 'native-2', 'first_contact', 12]);
  assert.deepEqual([m6.reshown_tokens, m6.already_seen_tokens], [sum([...r(6, 14, 'w'), 'M4', 'z1']), 0]);
  // never shown: w1 and w2 (and, with a watermark, eq); mentions and the agent's rows are not counted
  assert.equal(prod.strategies.window.rows_never_shown, 2);
  assert.equal(prod.strategies.watermark.rows_never_shown, 3);
  assert.equal(prod.strategies.unstable.rows_never_shown, 3);
});

test('reference channel: replies by hand — a queue, a mention never answered, a follow-up, answers in threads, under idle reap', () => {
  const t = (h: number, m: number): string => new Date(Date.UTC(2026, 4, 5, h, m)).toISOString();
  const msgs: RefMessage[] = [
    { id: 'Q1', author: 'maya', created_at: t(9, 0), text: '@claude first of a queue' },
    { id: 'Q2', author: 'li', created_at: t(9, 1), text: '@claude second of a queue' },
    { id: 'a1', author: 'claude', created_at: t(9, 2), text: 'answer to the first, a few words long' },
    { id: 'a2', author: 'claude', created_at: t(9, 3), text: 'answer to the second, a somewhat longer reply than the first one was' },
    { id: 'f', author: 'claude', created_at: t(9, 4), text: 'and a follow-up' },
    { id: 'U', author: 'aiko', created_at: t(9, 30), text: '@claude never answered' },
    { id: 'x', author: 'li', created_at: t(12, 0), text: 'anyone?' },
    { id: 'M', author: 'maya', created_at: t(14, 0), text: '@claude asked at two' },
    { id: 'r', author: 'claude', created_at: t(14, 1), text: 'the answer to the two o clock question' },
    { id: 'T', author: 'tomasz', created_at: t(14, 20), text: '@claude answer me in a thread' },
    { id: 'L', author: 'li', created_at: t(14, 21), text: '@claude late' },
    { id: 'rL', author: 'claude', created_at: t(14, 22), text: 'late, answered at the top level' },
    { id: 'aT', author: 'claude', created_at: t(14, 23), text: 'the thread answer', thread_root_id: 'T' },
  ];
  const file = writeLog('replies', msgs);
  const { diffs, prod } = compare(file, ['--idle-reap', '30m'], { idleReapMinutes: 30 });
  assert.deepEqual(diffs, []);
  const enc = getEncoding('cl100k_base');
  const out = (id: string): number => enc.encode(`${msgs.find((m) => m.id === id)!.text}\n`).length;
  const window = (prod.turns as any[]).filter((x) => x.strategy === 'window');
  // Q1 ↦ a1, Q2 ↦ a2 (f follows up), U none (a stand-in), M ↦ r, T ↦ aT in its thread, L ↦ rL
  assert.equal(prod.channel.replies_from_log, 5);
  assert.deepEqual([0, 1, 3, 4, 5].map((i) => window[i].output_tokens), [out('a1'), out('a2'), out('r'), out('aT'), out('rL')]);
  // U's process was idle from 09:30 (no answer) to 14:00: M is cold
  assert.deepEqual(window.map((x) => x.delivery), ['cold', 'warm', 'warm', 'cold', 'warm', 'warm']);
});

test('reference channel: the 201st watermark id drops the oldest, which last_at still covers (reference and product)', () => {
  const shown: RefMessage[] = Array.from({ length: 201 }, (_, i) => ({
    id: `x${i + 1}`,
    author: 'maya',
    created_at: new Date(Date.parse('2026-05-04T10:00:00Z') + i * 1000).toISOString(),
    text: `row ${i + 1}`,
  }));
  const ms = (m: RefMessage): number => Date.parse(m.created_at);
  const first200 = commitWatermark(null, 'native-1', shown.slice(0, 200), ms, (m) => shown.indexOf(m));
  assert.equal(first200.ids.length, 200);
  assert.equal(first200.ids[0]!.id, 'x1');
  const ref = commitWatermark(first200, 'native-1', shown.slice(200), ms, (m) => shown.indexOf(m));
  assert.deepEqual([ref.ids.length, ref.ids[0]!.id, ref.ids[199]!.id, ref.last_at], [200, 'x2', 'x201', ms(shown[200]!)]);
  const prodMark = advanceWatermark(advanceWatermark(undefined, 'native-1', shown.slice(0, 200)), 'native-1', shown.slice(200));
  assert.deepEqual([prodMark.ids.length, prodMark.ids[0], prodMark.ids[199], prodMark.last_at], [200, 'x2', 'x201', shown[200]!.created_at]);
  // x1 left the ids, but its created_at ≤ last_at: it is still not shown again
  assert.equal(coveredBy(prodMark, shown[0]!), true);
  assert.equal(cutBody(`😀${'a'.repeat(598)}😀`), `😀${'a'.repeat(598)}😀`, '600 code points are not cut');
});
