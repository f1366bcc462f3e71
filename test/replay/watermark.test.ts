import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChannelMessage } from '../../src/samples/channel.js';
import { renderContext } from '../../src/replay/render.js';
import { WATERMARK_MAX_IDS, WatermarkStore, advanceWatermark } from '../../src/replay/watermark.js';
import { tempDir } from '../helpers/temp.js';

function rows(n: number, from = 1): ChannelMessage[] {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i;
    return { id: `r${k}`, author: 'maya', created_at: new Date(Date.UTC(2025, 2, 11, 10, 0, k)).toISOString(), text: `message ${k}` };
  });
}
const ids = (ms: readonly ChannelMessage[]) => ms.map((m) => m.id);
const key = { sessionKey: 'binding-1', channel: 'backend', thread: null };

test('commit: ids ∪= shown, last_at = newest shown', () => {
  const [a, b, c] = rows(3);
  const w1 = advanceWatermark(undefined, 'n1', [a!, b!]);
  assert.deepEqual(w1, { native: 'n1', last_at: b!.created_at, ids: ['r1', 'r2'] });
  const w2 = advanceWatermark(w1, 'n1', [c!]);
  assert.deepEqual(w2, { native: 'n1', last_at: c!.created_at, ids: ['r1', 'r2', 'r3'] });
});

test('a watermark of another native process is replaced, not extended', () => {
  const [a, b] = rows(2);
  const w = advanceWatermark(advanceWatermark(undefined, 'n1', [a!]), 'n2', [b!]);
  assert.deepEqual(w, { native: 'n2', last_at: b!.created_at, ids: ['r2'] });
});

test('at most 200 ids, the newest kept', () => {
  const all = rows(230);
  let w = advanceWatermark(undefined, 'n1', all.slice(0, 150));
  w = advanceWatermark(w, 'n1', all.slice(150));
  assert.equal(WATERMARK_MAX_IDS, 200);
  assert.equal(w.ids.length, 200);
  assert.equal(w.ids[0], 'r31');
  assert.equal(w.ids.at(-1), 'r230');
});

test('the watermark is used only by the native process it is bound to: a new one gets a fresh snapshot', () => {
  const store = new WatermarkStore();
  const fetched = rows(20);
  store.stage(key, 'n1', fetched.slice(0, 15)).commit();
  assert.ok(store.lookup(key, 'n1'));
  assert.equal(store.lookup(key, 'n2'), undefined);
  const warm = renderContext({ fetched, mentionId: 'r20', agentAuthor: 'claude', watermark: store.lookup(key, 'n1') });
  assert.deepEqual(ids(warm.rows), ['r16', 'r17', 'r18', 'r19']);
  const fresh = renderContext({ fetched, mentionId: 'r20', agentAuthor: 'claude', watermark: store.lookup(key, 'n2') });
  assert.equal(fresh.rows.length, 12);
  assert.deepEqual(ids(fresh.rows).slice(0, 1), ['r8']);
  assert.match(fresh.header!, /^Recent messages/);
});

test('discard() after a failed run: the same rows are sent again next time', () => {
  const store = new WatermarkStore();
  const fetched = rows(6);
  store.stage(key, 'n1', fetched.slice(0, 2)).commit();
  const first = renderContext({ fetched: fetched.slice(0, 5), mentionId: 'r5', agentAuthor: 'claude', watermark: store.lookup(key, 'n1') });
  assert.deepEqual(ids(first.rows), ['r3', 'r4']);
  store.stage(key, 'n1', first.rows).discard();
  const next = renderContext({ fetched, mentionId: 'r6', agentAuthor: 'claude', watermark: store.lookup(key, 'n1') });
  assert.deepEqual(ids(next.rows), ['r3', 'r4', 'r5']);
  store.stage(key, 'n1', next.rows).commit();
  assert.deepEqual(store.get(key)!.ids, ['r1', 'r2', 'r3', 'r4', 'r5']);
});

test('a staged run ends once: commit or discard, not both', () => {
  const store = new WatermarkStore();
  const s = store.stage(key, 'n1', rows(1));
  s.commit();
  assert.throws(() => s.discard(), /already/);
});

test('keys separate session, channel and thread', () => {
  const store = new WatermarkStore();
  store.stage(key, 'n1', rows(1)).commit();
  assert.equal(store.get({ ...key, thread: 'r1' }), undefined);
  assert.equal(store.get({ ...key, channel: 'frontend' }), undefined);
  assert.equal(store.get({ ...key, sessionKey: 'binding-2' }), undefined);
});

test('persisted as JSON and loaded back; a missing file is an empty store', async () => {
  const dir = tempDir('cachelens-wm-');
  try {
    const path = join(dir, 'sub', 'watermarks.json');
    const empty = await WatermarkStore.load(path);
    assert.equal(empty.get(key), undefined);
    empty.stage(key, 'n1', rows(3)).commit();
    empty.stage({ ...key, thread: 'r1' }, 'n1', rows(1, 10)).commit();
    await empty.save();
    const json = JSON.parse(await readFile(path, 'utf8'));
    assert.equal(json.version, 1);
    assert.equal(json.watermarks.length, 2);
    const back = await WatermarkStore.load(path);
    assert.deepEqual(back.get(key), empty.get(key));
    assert.deepEqual(back.get({ ...key, thread: 'r1' })!.ids, ['r10']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a corrupt store file is one clear error naming the file, not a bare SyntaxError or TypeError', async () => {
  const dir = tempDir('cachelens-wm-');
  try {
    for (const [text, why] of [['{not json', /JSON/], ['[1]', /expected \{"version": 1/], ['{"watermarks": [{"session_key": "a"}]}', /without its ids/]] as const) {
      const path = join(dir, 'watermarks.json');
      await writeFile(path, text);
      await assert.rejects(WatermarkStore.load(path), (e: Error) => {
        assert.equal(e.constructor, Error);
        assert.ok(e.message.startsWith(`${path}: not a watermark store (`), e.message);
        assert.match(e.message, why);
        assert.ok(!e.message.includes('\n'));
        return true;
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
