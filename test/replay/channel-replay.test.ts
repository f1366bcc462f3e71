import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/temp.js';
import { generateChannel } from '../../src/samples/channel.js';
import { isMention, pairReplies, readChannelLog } from '../../src/replay/channel-log.js';
import { formatChannelReplay, runChannelReplay, type ChannelReplayResult, type ChannelTurn } from '../../src/replay/index.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const SAMPLE = `${repoRoot}sample-logs/channels/backend.jsonl`;

const baseline = runChannelReplay({ file: SAMPLE });
const evicted = runChannelReplay({ file: SAMPLE, evictAt: 15 });
const turnsOf = (r: ChannelReplayResult, s: string): ChannelTurn[] => r.turns.filter((t) => t.strategy === s);

test('sample channel: window ≈ watermark cacheable ratio, both above 0.9', async () => {
  const r = await baseline;
  assert.equal(r.channel.mentions, 30);
  assert.equal(r.channel.channel_id, 'backend');
  const w = r.strategies.window!;
  const m = r.strategies.watermark!;
  assert.ok(w.cacheable_ratio > 0.9 && m.cacheable_ratio > 0.9, `${w.cacheable_ratio} ${m.cacheable_ratio}`);
  assert.ok(Math.abs(w.cacheable_ratio - m.cacheable_ratio) <= 0.02);
  assert.ok(m.input_tokens < w.input_tokens);
  assert.ok(m.rows_sent < w.rows_sent);
  assert.equal(w.rows_sent, 30 * 12, 'window sends 12 rows every turn');
});

test('sample channel: watermark sends 0 already-seen tokens, window re-sends over 40%', async () => {
  const r = await baseline;
  assert.equal(r.strategies.watermark!.already_seen_tokens, 0);
  assert.equal(r.strategies.unstable!.already_seen_tokens, 0);
  const w = r.strategies.window!;
  assert.ok(w.already_seen_tokens / w.context_tokens > 0.4, `${w.already_seen_tokens}/${w.context_tokens}`);
});

test('sample channel: one volatile line before the system prompt drops the cacheable ratio below 0.05', async () => {
  const r = await baseline;
  const u = r.strategies.unstable!;
  assert.ok(u.cacheable_ratio < 0.05, String(u.cacheable_ratio));
  assert.equal(u.context_tokens, r.strategies.watermark!.context_tokens, 'same rows as watermark');
  assert.ok(u.uncached_per_warm_turn > 10 * r.strategies.watermark!.uncached_per_warm_turn);
  assert.ok(u.weight > r.strategies.watermark!.weight);
});

test('per-turn series: first turn cold with a 12-row snapshot, then warm; each warm request extends the previous one', async () => {
  const r = await baseline;
  const ts = turnsOf(r, 'watermark');
  assert.equal(ts.length, 30);
  assert.deepEqual([ts[0]!.delivery, ts[0]!.rows, ts[0]!.header, ts[0]!.cacheable_tokens], ['cold', 12, 'first_contact', 0]);
  for (let i = 1; i < ts.length; i++) {
    assert.equal(ts[i]!.delivery, 'warm');
    assert.equal(ts[i]!.cacheable_tokens, ts[i - 1]!.input_tokens, `turn ${i + 1}`);
    if (ts[i]!.rows > 0) assert.equal(ts[i]!.header, 'watermark');
  }
});

test('eviction at mention 15: a cold turn with a fresh snapshot and lower totals', async () => {
  const base = await baseline;
  const r = await evicted;
  assert.deepEqual(r.settings.evict_at, [15]);
  for (const s of ['window', 'watermark'] as const) {
    const t15 = turnsOf(r, s)[14]!;
    const t14 = turnsOf(r, s)[13]!;
    assert.equal(t15.delivery, 'cold');
    assert.notEqual(t15.native, t14.native);
    assert.equal(t15.cacheable_tokens, 0);
    // a new process has no earlier request: no gap, nothing read (docs/json.md)
    assert.equal(t15.gap_s, null);
    assert.equal(t15.cache, 'none');
    assert.equal(t15.header, 'first_contact');
    assert.equal(t15.rows, 12);
    assert.ok(r.strategies[s]!.input_tokens < base.strategies[s]!.input_tokens);
    assert.equal(r.strategies[s]!.cold_turns, 2);
  }
  assert.equal(r.strategies.watermark!.already_seen_tokens, 0);
});

test('eviction inside a burst re-sends rows the old process saw (to the new one, which never saw them)', async () => {
  const r = await runChannelReplay({ file: SAMPLE, evictAt: 16, strategies: ['watermark'] });
  const t16 = turnsOf(r, 'watermark')[15]!;
  assert.equal(t16.delivery, 'cold');
  assert.equal(t16.rows, 12);
  assert.ok(t16.reshown_tokens > 0);
  assert.equal(t16.already_seen_tokens, 0);
  assert.equal(r.strategies.watermark!.reshown_tokens, t16.reshown_tokens);
});

test('rows never shown: the window count matches bursts of more than 12 between mentions', async () => {
  const r = await baseline;
  const msgs = generateChannel(42);
  const mentions = msgs.flatMap((m, i) => (isMention(m, '@claude') ? [i] : []));
  const shown = new Set<number>();
  for (const mi of mentions) {
    const before = [];
    for (let j = mi - 1; j >= 0 && before.length < 12; j--) before.push(j);
    before.forEach((j) => shown.add(j));
  }
  let expected = 0;
  for (let i = mentions[0]! + 1; i < mentions.at(-1)!; i++) {
    if (msgs[i]!.author !== 'claude' && !mentions.includes(i) && !shown.has(i)) expected++;
  }
  assert.ok(expected > 0, 'the sample has bursts longer than 12');
  assert.equal(r.strategies.window!.rows_never_shown, expected);
  assert.ok(r.strategies.watermark!.rows_never_shown >= expected);
});

test('a failed run discards the watermark: its rows come again at the next mention', async () => {
  const ok = await runChannelReplay({ file: SAMPLE, strategies: ['watermark'] });
  const r = await runChannelReplay({ file: SAMPLE, strategies: ['watermark'], failAt: 10 });
  const [t10, t11] = turnsOf(r, 'watermark').slice(9, 11);
  assert.equal(t10!.failed, true);
  assert.equal(t10!.output_tokens, 0);
  const okT11 = turnsOf(ok, 'watermark')[10]!;
  assert.ok(t10!.rows > 0);
  assert.equal(t11!.rows, Math.min(12, okT11.rows + t10!.rows));
  // the process kept the failed turn, so the re-sent rows are already seen by it
  assert.ok(t11!.already_seen_tokens > 0);
  assert.equal(r.strategies.watermark!.failed_turns, 1);
});

test('idle reap after 30 minutes: every mention more than 30 minutes after the agent last answered is cold', async () => {
  const r = await runChannelReplay({ file: SAMPLE, idleReapMinutes: 30, strategies: ['watermark'] });
  const ts = turnsOf(r, 'watermark');
  const times = ts.map((t) => Date.parse(t.at));
  // the process is busy until its answer is posted: idle from then
  const { messages } = await readChannelLog(SAMPLE);
  const mentionIdx = messages.flatMap((m, i) => (isMention(m, '@claude') ? [i] : []));
  const answered = pairReplies(messages, mentionIdx, '@claude').map((a, k) => Math.max(times[k]!, a ? Date.parse(a.created_at) : 0));
  const expectedCold = 1 + times.filter((t, i) => i > 0 && t - answered[i - 1]! > 30 * 60_000).length;
  assert.ok(expectedCold > 1, 'the sample has silences over 30 minutes');
  assert.equal(r.strategies.watermark!.cold_turns, expectedCold);
  assert.equal(r.strategies.watermark!.already_seen_tokens, 0);
});

test('weighted cost: reads within the TTL at 0.1, the rest written at 1.25 (5m) or 2 (1h), replies at 5', async () => {
  const r = await baseline;
  const ts = turnsOf(r, 'watermark');
  let expected = 0;
  for (const t of ts) {
    const read = t.cache === 'read' ? t.cacheable_tokens : 0;
    expected += read * 0.1 + (t.input_tokens - read) * 1.25 + t.output_tokens * 5;
    if (t.gap_s !== null) assert.equal(t.cache, t.gap_s * 1000 <= 300_000 + 500 ? 'read' : 'expired');
  }
  assert.ok(Math.abs(r.strategies.watermark!.weight - expected) < 1e-6);
  assert.ok(Math.abs(r.strategies.watermark!.usd - expected * 5e-6) < 1e-9);
  const hour = await runChannelReplay({ file: SAMPLE, ttl: '1h', strategies: ['watermark'] });
  assert.ok(hour.strategies.watermark!.expired_turns < r.strategies.watermark!.expired_turns);
});

test('doubling the channel roughly doubles the tokenization work', async () => {
  const small = await runChannelReplay({ messages: generateChannel(42, { messages: 200 }), channel: 'backend' });
  const large = await runChannelReplay({ messages: generateChannel(42, { messages: 400 }), channel: 'backend' });
  assert.equal(large.channel.mentions, 2 * small.channel.mentions);
  const work = (r: ChannelReplayResult) => ({
    calls: r.work.total.encode_calls - r.work.setup.encode_calls,
    tokens: r.work.total.tokens_encoded - r.work.setup.tokens_encoded,
  });
  const a = work(small);
  const b = work(large);
  assert.ok(b.calls / a.calls > 1.6 && b.calls / a.calls < 2.4, `calls ${a.calls} → ${b.calls}`);
  assert.ok(b.tokens / a.tokens > 1.6 && b.tokens / a.tokens < 2.4, `tokens ${a.tokens} → ${b.tokens}`);
  // while the tokens sent grow much faster (every turn re-sends the conversation)
  assert.ok(large.strategies.window!.input_tokens / small.strategies.window!.input_tokens > 3);
});

test('JSON shape: strategies with the documented keys, turns with strategy and mention', async () => {
  const r = JSON.parse(JSON.stringify(await baseline));
  for (const s of ['window', 'watermark', 'unstable']) {
    for (const k of ['input_tokens', 'cacheable_tokens', 'cacheable_ratio', 'uncached_per_warm_turn', 'context_tokens', 'already_seen_tokens', 'rows_sent', 'rows_never_shown', 'weight']) {
      assert.equal(typeof r.strategies[s][k], 'number', `${s}.${k}`);
    }
  }
  assert.equal(r.turns.length, 90);
  for (const k of ['strategy', 'mention', 'delivery', 'input_tokens', 'cacheable_tokens', 'context_tokens', 'rows']) assert.ok(k in r.turns[0], k);
});

test('text report: aligned table, thousands separators, events named', async () => {
  const text = formatChannelReplay(await evicted);
  const lines = text.split('\n');
  assert.match(lines[0]!, /^Channel replay · #backend · 200 messages · 30 mentions of @claude/);
  assert.match(lines[1]!, /events: eviction at mention 15/);
  const table = lines.slice(3, lines.indexOf('', 3));
  assert.match(table[0]!, /^metric\s+window\s+watermark\s+unstable$/);
  assert.ok(table.every((l) => l.length === table[0]!.length), 'columns are right-aligned to one width');
  assert.match(text, /input tokens, all turns\s+\d{3},\d{3}\s+\d{3},\d{3}/);
  assert.ok(!/\u001b\[/.test(text), 'no colour codes');
  // the shared table, as every other: a rule under the header, columns two spaces apart, a bold header on a terminal
  // (it was built by hand: no rule, 3-space gaps, never bold)
  assert.match(table[1]!, /^─+(  ─+){3}$/);
  assert.match(table[2]!, /^input tokens, all turns\s+\S+  \s*\S+  \s*\S+$/);
  const bold = formatChannelReplay(await evicted, { color: true }).split('\n')[3]!;
  assert.match(bold, /^\u001b\[1mmetric\s+window\s+watermark\s+unstable\u001b\[22m$/);
});

test('text report: the channel (a file name) and the handle are cleaned as every table cleans text (bidi and C1 controls too)', async () => {
  // render's oneLine escaped C0 only: a file named with U+202E reordered the header line in the terminal
  const r = await runChannelReplay({ file: SAMPLE, strategies: ['window'], channel: 'back\u202eend\u009b31m\u001b[2J', agent: '@cl\u2066aude' });
  const head = formatChannelReplay(r).split('\n')[0]!;
  assert.equal(head, 'Channel replay · #back?end?31m?[2J · 200 messages · 0 mentions of @cl?aude');
});

test('text report: singular for one (1 message, 1 mention, 1 bad line, 1 token; an event at one mention, at mentions of several)', async () => {
  // it read '1 messages · 1 mentions of @claude · 1 bad lines skipped'
  const file = join(tempDir('cachelens-channel-'), 'one.jsonl');
  writeFileSync(file, ['{', JSON.stringify({ id: 'a', author: 'maya', created_at: '2026-03-11T09:00:00Z', text: '@claude hi' })].join('\n') + '\n');
  const [head, settings] = formatChannelReplay(await runChannelReplay({ file, prefixTokens: 1, failAt: 1 })).split('\n');
  assert.equal(head, 'Channel replay · #one · 1 message · 1 mention of @claude · 1 bad line skipped');
  assert.match(settings!, /^framing 1 token · brief \d+ tokens · .* · events: failed run at mention 1$/);
  const many = formatChannelReplay(await runChannelReplay({ file: SAMPLE, strategies: ['window'], evictAt: [3, 5], failAt: 7 })).split('\n');
  assert.match(many[0]!, /· 200 messages · 30 mentions of @claude$/);
  assert.match(many[1]!, /events: eviction at mentions 3, 5 · failed run at mention 7$/);
});

test('text report: the idle-reap period in whole minutes, else in seconds (1s read "0.016666666666666666 min")', async () => {
  const events = async (idleReapMinutes: number) =>
    formatChannelReplay(await runChannelReplay({ file: SAMPLE, strategies: ['window'], idleReapMinutes })).split('\n')[1]!.replace(/.*events: /, '');
  assert.equal(await events(30), 'idle reap after 30 min');
  assert.equal(await events(90), 'idle reap after 90 min');
  assert.equal(await events(1 / 60), 'idle reap after 1 s');
  assert.equal(await events(100 / 60), 'idle reap after 100 s');
  assert.equal(await events(1.5), 'idle reap after 90 s');
  assert.equal(await events(1e-6), 'idle reap after 0.00006 s');
  // as given, not to three decimals ('0.002 s') nor in exponent form ('1e-7 s')
  assert.equal(await events(0.0015 / 60), 'idle reap after 0.0015 s');
  assert.equal(await events(1e-7 / 60), 'idle reap after 0.0000001 s');
  assert.equal(await events(1234.5 / 60), 'idle reap after 1,234.5 s');
  assert.equal(await events(1e6), 'idle reap after 1,000,000 min');
  // every digit given: six significant digits read 1234567 s as '1,234,570 s' (review)
  assert.equal(await events(1234567 / 60), 'idle reap after 1,234,567 s');
  assert.equal(await events(99999 * 60), 'idle reap after 5,999,940 min');
  assert.equal(await events(1000001 / 60), 'idle reap after 1,000,001 s');
  assert.equal(await events(1234567890123 / 60), 'idle reap after 1,234,567,890,123 s');
  assert.equal(await events(100000000000.5 / 60), 'idle reap after 100,000,000,000.5 s');
  assert.equal(await events(0.123456789012345 / 60), 'idle reap after 0.123456789012345 s');
});

test('text report: each skip reason with its count and first lines under the header (it gave only "N bad lines skipped")', async () => {
  const ok = (id: string, min: number) => JSON.stringify({ id, author: 'maya', created_at: `2026-03-11T09:0${min}:00Z`, text: '@claude hi' });
  const lines = ['{', ok('a', 1), '[]', '{', '{', '{', '{', '{', ok('a', 2), JSON.stringify({ id: 2 })];
  const file = join(tempDir('cachelens-channel-'), 'bad.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  const text = formatChannelReplay(await runChannelReplay({ file, strategies: ['window'] })).split('\n');
  assert.equal(text[0], 'Channel replay · #bad · 1 message · 1 mention of @claude · 9 bad lines skipped');
  assert.deepEqual(text.slice(2, 6), [
    '  skipped invalid_json: 6 (lines 1, 4, 5, 6, 7, …)',
    '  skipped not_an_object: 1 (line 3)',
    '  skipped duplicate_id: 1 (line 9)',
    '  skipped missing_field: 1 (line 10)',
  ]);
  assert.equal(text[6], '');
});

test('text report: USD as every other table writes it (no mentions: $0.0000, not $0.00)', async () => {
  const none = formatChannelReplay(await runChannelReplay({ file: SAMPLE, agent: 'nobody' }));
  assert.match(none, /^cost \(USD, claude-opus-4-6\)\s+\$0\.0000\s+\$0\.0000\s+\$0\.0000$/m);
  // and says why the table is all zeros (it did not)
  assert.match(none, /^Nothing was replayed: no message by anyone else mentions @nobody \(the handle as a whole word\)\.$/m);
  assert.doesNotMatch(formatChannelReplay(await evicted), /Nothing was replayed/);
  const some = formatChannelReplay(await evicted);
  assert.match(some, /^cost \(USD, claude-opus-4-6\)(\s+\$\d+\.\d\d){3}$/m);
});

test('the cost in USD says whose prices it is at: claude-opus-4-6 by default, --model another (its weights and its USD)', async () => {
  const opus = await baseline;
  assert.equal(opus.settings.model, 'claude-opus-4-6');
  assert.equal(opus.settings.usd_per_input_token, 5 / 1e6);
  const text = formatChannelReplay(opus);
  assert.match(text, /^cost \(USD, claude-opus-4-6\)/m);
  assert.match(text, /^cost \(USD\) at claude-opus-4-6 prices, per million tokens: input \$5, cache write \$6\.25 \(5m\) \/ \$10 \(1h\), cache read \$0\.50, output \$25 \(--model names another\)\.$/m);
  // Sonnet 4.5 is $3 a million input tokens, with Opus's ratios: the same weights, 3/5 of the USD
  const sonnet = await runChannelReplay({ file: SAMPLE, model: 'claude-sonnet-4-5' });
  assert.equal(sonnet.settings.model, 'claude-sonnet-4-5');
  assert.equal(sonnet.settings.long_context_above, 200_000);
  for (const s of ['window', 'watermark', 'unstable'] as const) {
    assert.equal(sonnet.strategies[s]!.weight, opus.strategies[s]!.weight);
    assert.ok(Math.abs(sonnet.strategies[s]!.usd - (opus.strategies[s]!.usd * 3) / 5) < 1e-9);
  }
  // Claude 3 Haiku writes at 1.2× and reads at 0.12× its input price: other weights
  const haiku = await runChannelReplay({ file: SAMPLE, model: 'claude-3-haiku-20240307', strategies: ['watermark'] });
  assert.deepEqual(haiku.settings.weights, { input: 1, write5m: 1.2, write1h: 2, read: 0.12, output: 5 });
  const t = turnsOf(haiku, 'watermark')[3]!;
  const read = t.cache === 'read' ? t.cacheable_tokens : 0;
  assert.ok(Math.abs(t.weight - (read * 0.12 + (t.input_tokens - read) * 1.2 + t.output_tokens * 5)) < 1e-6);
  assert.ok(Math.abs(t.usd - t.weight * 0.25e-6) < 1e-12);
  assert.match(formatChannelReplay(haiku), /^cost \(USD\) at claude-3-haiku-20240307 prices, per million tokens: input \$0\.25, cache write \$0\.30 \(5m\) \/ \$0\.50 \(1h\), cache read \$0\.03, output \$1\.25 \(--model/m);
});

test('--model with a long-context tier: a turn whose prompt is over its threshold is weighed at those rates', async () => {
  const at = (m: number) => new Date(Date.UTC(2025, 2, 11, 9, m)).toISOString();
  const messages = [
    { id: 'M1', author: 'maya', created_at: at(0), text: '@claude one?' },
    { id: 'A1', author: 'claude', created_at: at(1), text: 'one.' },
    { id: 'M2', author: 'maya', created_at: at(2), text: '@claude two?' },
  ];
  const r = await runChannelReplay({ messages, model: 'claude-sonnet-4-5', prefixTokens: 200_500, strategies: ['window'] });
  const [t1, t2] = turnsOf(r, 'window');
  assert.ok(t1!.input_tokens > 200_000);
  // over 200,000 tokens Sonnet 4.5 is $6 input, $7.50 5m write, $0.60 read, $22.50 output: 2×, 2.5×, 0.2×, 7.5× its $3
  assert.ok(Math.abs(t1!.weight - (t1!.input_tokens * 2.5 + t1!.output_tokens * 7.5)) < 1e-6);
  assert.ok(Math.abs(t2!.weight - (t2!.cacheable_tokens * 0.2 + (t2!.input_tokens - t2!.cacheable_tokens) * 2.5 + t2!.output_tokens * 7.5)) < 1e-6);
  assert.ok(Math.abs(r.strategies.window!.usd - r.strategies.window!.weight * 3e-6) < 1e-9);
  // under it, the standard rates
  const small = await runChannelReplay({ messages, model: 'claude-sonnet-4-5', prefixTokens: 2120, strategies: ['window'] });
  const s1 = turnsOf(small, 'window')[0]!;
  assert.ok(Math.abs(s1.weight - (s1.input_tokens * 1.25 + s1.output_tokens * 5)) < 1e-6);
});

test('bad options are one-line UsageErrors', async () => {
  await assert.rejects(runChannelReplay({ file: SAMPLE, model: 'gpt-4' }), (e: Error) => e.name === 'UsageError' && /^--model gpt-4: not in the bundled price table$/.test(e.message) && !e.message.includes('\n'));
  const { UsageError } = await import('../../src/errors.js');
  await assert.rejects(runChannelReplay({ file: SAMPLE, evictAt: 0 }), UsageError);
  await assert.rejects(runChannelReplay({ file: SAMPLE, ttl: '2h' as never }), UsageError);
  await assert.rejects(runChannelReplay({ file: SAMPLE, strategies: ['fast' as never] }), UsageError);
  await assert.rejects(runChannelReplay({ file: SAMPLE, encoding: 'p50k_base' as never }), UsageError);
  await assert.rejects(runChannelReplay({ file: `${repoRoot}sample-logs/channels/nope.jsonl` }), UsageError);
});

test('idle reap with the session kept: the same turns are reloaded instead of cold, same native id', async () => {
  const cold = await runChannelReplay({ file: SAMPLE, idleReapMinutes: 30, strategies: ['watermark'] });
  const r = await runChannelReplay({ file: SAMPLE, idleReapMinutes: 30, keepReapedSessions: true, strategies: ['watermark'] });
  const s = r.strategies.watermark!;
  assert.equal(s.cold_turns, 1);
  assert.equal(s.reloaded_turns, cold.strategies.watermark!.cold_turns - 1);
  assert.equal(s.processes, 1);
  const reloaded = turnsOf(r, 'watermark').filter((t) => t.delivery === 'reloaded');
  assert.ok(reloaded.every((t) => t.header !== 'first_contact'), 'the watermark still applies to the same native session');
});

test('idle reap counts from the agent\'s answer: a mention 25 minutes after it is warm, though 32 after the last mention', async () => {
  const at = (min: number) => new Date(Date.UTC(2025, 2, 11, 9, min)).toISOString();
  const messages = [
    { id: 'r0', author: 'maya', created_at: at(0), text: 'deploy is stuck' },
    { id: 'M1', author: 'priya', created_at: at(1), text: '@claude why is the deploy stuck?' },
    { id: 'A1', author: 'claude', created_at: at(8), text: 'the migration holds a lock' },
    { id: 'M2', author: 'priya', created_at: at(33), text: '@claude is it done now?' },
  ];
  const r = await runChannelReplay({ messages, idleReapMinutes: 30, strategies: ['window'] });
  assert.deepEqual(turnsOf(r, 'window').map((t) => [t.delivery, t.native]), [['cold', 'native-1'], ['warm', 'native-1']]);
  const late = await runChannelReplay({ messages: [...messages.slice(0, 3), { ...messages[3]!, created_at: at(39) }], idleReapMinutes: 30, strategies: ['window'] });
  assert.equal(turnsOf(late, 'window')[1]!.delivery, 'cold');
  // an unanswered mention between them does not move the last answer back: M1 10:00, M2 10:10
  // (no answer), A1 10:40 answers M1, M3 11:15 is 35 minutes after it (warm under 40)
  const t = (h: number, m: number) => new Date(Date.UTC(2025, 2, 11, h, m)).toISOString();
  const between = [
    { id: 'M1', author: 'priya', created_at: t(10, 0), text: '@claude one?' },
    { id: 'M2', author: 'priya', created_at: t(10, 10), text: '@claude two?', thread_root_id: 'T' },
    { id: 'A1', author: 'claude', created_at: t(10, 40), text: 'one.' },
    { id: 'M3', author: 'priya', created_at: t(11, 15), text: '@claude three?' },
  ];
  const r3 = await runChannelReplay({ messages: between, idleReapMinutes: 40, strategies: ['window'] });
  assert.deepEqual(turnsOf(r3, 'window').map((x) => x.delivery), ['cold', 'warm', 'warm']);
});

test('idle reap: a mention never answered does not keep its process busy until a later mention\'s answer', async () => {
  // M1 09:00 is never answered; R 14:01 answers M2 14:00. Paired oldest-first, R was M1's: the
  // process counted as busy from 09:00 to 14:01, so M2 found it warm after five idle hours
  const t = (h: number, m: number) => new Date(Date.UTC(2025, 2, 11, h, m)).toISOString();
  const messages = [
    { id: 'M1', author: 'priya', created_at: t(9, 0), text: '@claude one?' },
    { id: 'M2', author: 'maya', created_at: t(14, 0), text: '@claude two?' },
    { id: 'R', author: 'claude', created_at: t(14, 1), text: 'two: the answer.' },
    { id: 'M3', author: 'maya', created_at: t(14, 20), text: '@claude three?' },
  ];
  const r = await runChannelReplay({ messages, idleReapMinutes: 30, strategies: ['window'] });
  assert.deepEqual(turnsOf(r, 'window').map((x) => x.delivery), ['cold', 'cold', 'warm']);
  assert.equal(r.channel.replies_from_log, 1);
});

test('times of years 0000-0099 written with a space for the T: gaps as the log orders them, never negative', async () => {
  // the log sorted "0050-03-11 08:47:00Z" as year 50, the replay's Date.parse read it as 1950:
  // the second mention's gap_s was -59958143820
  const { runChannelReplay: run } = await import('../../src/replay/channel-replay.js');
  const messages = [
    { id: 'a', author: 'maya', created_at: '0050-03-11 08:47:00Z', text: '@claude first' },
    { id: 'b', author: 'claude', created_at: '0050-03-11 08:48:00Z', text: 'ok' },
    { id: 'c', author: 'maya', created_at: '0050-03-11T08:50:00Z', text: '@claude second' },
  ];
  const r = await run({ messages, strategies: ['window', 'watermark'] });
  for (const s of ['window', 'watermark'] as const) {
    const turns = r.turns.filter((t) => t.strategy === s);
    assert.deepEqual(turns.map((t) => t.gap_s), [null, 180], s);
    assert.deepEqual(turns.map((t) => t.cache), ['none', 'read'], s);
  }
});

test('an --agent with no name (or a space, or a second @) is a UsageError, not a replay of every lone "@"', async () => {
  const { runChannelReplay: run } = await import('../../src/replay/channel-replay.js');
  const messages = [
    { id: 'a', author: 'maya', created_at: '2025-03-11T08:47:00Z', text: 'mail me @ noon' },
    { id: 'b', author: '', created_at: '2025-03-11T08:48:00Z', text: 'ok' },
  ];
  // --agent '' counted "@ noon" as a mention and the empty author's message as its reply
  for (const agent of ['', '@', '@ ', 'cl aude', '@@claude']) {
    await assert.rejects(run({ messages, agent }), { name: 'UsageError', message: /^--agent .*: expected a handle such as @claude/ }, JSON.stringify(agent));
  }
  for (const agent of ['claude', '@claude', '@cl(aude', '@bot-2']) assert.equal((await run({ messages, agent, strategies: ['window'] })).channel.mentions, 0, agent);
});

test('--agent in another case is the same agent: its messages are its replies and its rows, as with the log\'s spelling', async () => {
  const [lower, upper] = [await baseline, await runChannelReplay({ file: SAMPLE, agent: '@Claude' })];
  assert.equal(upper.channel.mentions, 30);
  assert.equal(upper.channel.replies_from_log, lower.channel.replies_from_log);
  for (const s of ['window', 'watermark'] as const) {
    const [a, b] = [lower.strategies[s]!, upper.strategies[s]!];
    // the same rows, rendered as the agent's ('[agent] claude'), and the same replies from the log
    for (const k of ['context_tokens', 'rows_sent', 'rows_never_shown', 'output_tokens'] as const) assert.equal(b[k], a[k], `${s} ${k}`);
  }
});

test('no warm turn (one mention): uncached tokens per warm turn is null in the JSON and — in the table, not 0', async () => {
  const file = join(tempDir('cachelens-channel-'), 'lone.jsonl');
  writeFileSync(file, JSON.stringify({ id: 'a', author: 'maya', created_at: '2026-03-11T09:00:00Z', text: '@claude hi' }) + '\n');
  const r = await runChannelReplay({ file });
  for (const s of Object.values(r.strategies)) {
    assert.equal(s.warm_turns, 0);
    assert.equal(s.uncached_per_warm_turn, null);
  }
  assert.match(formatChannelReplay(r), /^uncached tokens per warm turn\s+—\s+—\s+—$/m);
  // with warm turns: a number
  assert.equal(typeof (await baseline).strategies.window!.uncached_per_warm_turn, 'number');
});

test('no turn: cacheable ratio and already-seen share are null in the JSON and — in the table, not 0 (a ratio of nothing)', async () => {
  const r = await runChannelReplay({ file: SAMPLE, agent: 'nobody' });
  for (const s of Object.values(r.strategies)) {
    assert.equal(s.input_tokens, 0);
    assert.equal(s.cacheable_ratio, null);
    assert.equal(s.context_tokens, 0);
    assert.equal(s.already_seen_share, null);
  }
  const json = JSON.parse(JSON.stringify(r)) as ChannelReplayResult;
  assert.equal(json.strategies.window!.cacheable_ratio, null);
  const text = formatChannelReplay(r);
  assert.match(text, /^cacheable ratio\s+—\s+—\s+—$/m);
  assert.match(text, /^ {2}of which already seen\s+0\s+0\s+0$/m);
  assert.doesNotMatch(text, /NaN|null/);
  // with input: a number
  const w = (await baseline).strategies.window!;
  assert.equal(typeof w.cacheable_ratio, 'number');
  assert.equal(typeof w.already_seen_share, 'number');
});
