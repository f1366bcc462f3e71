import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CHANNEL_AGENT, channelToJsonl, generateChannel } from '../../src/samples/channel.js';
import { isMention, parseChannelLog } from '../../src/replay/channel-log.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const SAMPLE = `${repoRoot}sample-logs/channels/backend.jsonl`;

test('the committed sample channel is exactly channelToJsonl(generateChannel(42))', async () => {
  assert.equal(await readFile(SAMPLE, 'utf8'), channelToJsonl(generateChannel(42)));
});

test('the generator is deterministic in its seed', () => {
  assert.deepEqual(generateChannel(7), generateChannel(7));
  assert.notDeepEqual(generateChannel(7), generateChannel(8));
});

for (const seed of [42, 1, 2024]) {
  test(`seed ${seed}: 200 messages, five people and the agent, 30 mentions in bursts, 8 pasted logs`, () => {
    const msgs = generateChannel(seed);
    assert.equal(msgs.length, 200);
    assert.equal(new Set(msgs.map((m) => m.id)).size, 200);
    const times = msgs.map((m) => Date.parse(m.created_at));
    assert.ok(times.every((t, i) => i === 0 || t > times[i - 1]!), 'timestamps strictly increase');
    const authors = new Set(msgs.map((m) => m.author));
    assert.equal(authors.size, 6);
    assert.ok(authors.has(CHANNEL_AGENT));

    const mentions = msgs.flatMap((m, i) => (isMention(m, '@claude') ? [i] : []));
    assert.equal(mentions.length, 30);
    assert.ok(mentions[0]! >= 12, 'the first mention has a full 12-row window before it');
    const gaps = mentions.slice(1).map((p, i) => p - mentions[i]!);
    assert.ok(Math.min(...gaps) >= 1 && Math.max(...gaps) <= 21);
    const sorted = [...gaps].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    assert.ok(median >= 3 && median <= 5, `median gap ${median}`);

    const replies = msgs.filter((m) => m.author === CHANNEL_AGENT);
    assert.equal(replies.length, 30, 'every mention is answered');
    assert.ok(msgs.every((m) => !(m.author === CHANNEL_AGENT && m.text.includes('@claude'))));
    const long = msgs.filter((m) => [...m.text].length > 600);
    assert.equal(long.length, 8);
    assert.ok(long.every((m) => m.author !== CHANNEL_AGENT && !isMention(m, '@claude')));
  });
}

test('the JSONL round-trips through the channel log reader', () => {
  const msgs = generateChannel(42, { messages: 60 });
  const log = parseChannelLog(channelToJsonl(msgs));
  assert.deepEqual(log.messages, msgs);
  assert.deepEqual(log.skipped, []);
});
