/**
 * The listing snapshot (ingest/listing-snapshot.ts): what it keeps comes back as it was, whether
 * the listing is an early walk's columns or found files as objects; the merge finds each walked
 * file's stored twin; and anything it cannot merge or read is refused, never half-used.
 */
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Discovery, FoundFile } from '../../src/ingest/discover.js';
import { decodeDiscovery, encodeDiscovery, fileListing } from '../../src/ingest/early-walk.js';
import { decodeSnapshot, encodeSnapshot, matchSnapshot, snapshotPaths } from '../../src/ingest/listing-snapshot.js';

function found(path: string, kind: FoundFile['kind'] = 'main', size = path.length, mtimeMs = 1_700_000_000_000 + size): FoundFile {
  return { path, root: '/r', kind, size, mtimeMs, agentId: kind === 'main' ? null : 'a1', sessionId: 's1', projectDir: 'p' };
}

function discovery(paths: string[]): Discovery {
  return { roots: ['/r'], files: paths.map((p, i) => found(p, i % 3 === 2 ? 'meta' : i % 3 === 1 ? 'subagent' : 'main')), problems: [], defaults: false };
}

const PATHS = ['/r/p/a.jsonl', '/r/p/a/subagents/agent-1.jsonl', '/r/p/a/subagents/agent-1.meta.json', '/r/p/b.jsonl', '/r/q/é.jsonl'];

test('a snapshot gives back every file as it was kept, from an early walk\'s columns and from objects alike', () => {
  const d = discovery(PATHS);
  const ids = [7, 3, 12, 4, 9];
  const fromObjects = encodeSnapshot(fileListing(d), ids, d.roots, 'k1')!;
  const fromColumns = encodeSnapshot(fileListing(decodeDiscovery(encodeDiscovery(d))), ids, d.roots, 'k1')!;
  assert.deepEqual(Buffer.from(fromColumns), Buffer.from(fromObjects));

  const snap = decodeSnapshot(fromObjects)!;
  assert.equal(snap.key, 'k1');
  assert.deepEqual(snap.roots, ['/r']);
  assert.equal(snap.count, 5);
  assert.deepEqual([...snap.fileId], ids);
  assert.equal(snap.maxId, 12);
  assert.equal(snap.idSum, 35);
  assert.deepEqual([...snap.kind], [0, 1, 2, 0, 1]);
  assert.deepEqual([...snap.size], d.files.map((f) => f.size));
  assert.deepEqual([...snap.mtimeMs], d.files.map((f) => f.mtimeMs));
  // front-coded: the second path shares "/r/p/a" with the first, the third "/r/p/a/subagents/agent-1." with the second
  assert.deepEqual([...snap.shared].slice(0, 3), [0, 6, 25]);
  // every path rebuilt: a listing of exactly these paths matches all of them, in order, by their
  // paths when the snapshot has no names to tell they are the same (one written before it kept them)
  assert.equal(snap.names, fileListing(d).names());
  assert.deepEqual([...matchSnapshot(fileListing(d), { ...snap, names: null })!], [0, 1, 2, 3, 4]);
  assert.deepEqual([...matchSnapshot(fileListing(d), snap)!], [0, 1, 2, 3, 4]);
});

test('a walk of the snapshot\'s files, grown or touched since, is matched by their names alone; any other walk path by path', () => {
  const d = discovery(PATHS);
  const snap = decodeSnapshot(encodeSnapshot(fileListing(d), [7, 3, 12, 4, 9], d.roots, 'k1')!)!;
  const grown = { ...d, files: d.files.map((f, i) => (i === 3 ? { ...f, size: f.size + 100, mtimeMs: f.mtimeMs + 5 } : f)) };
  assert.deepEqual([...matchSnapshot(fileListing(grown), snap)!], [0, 1, 2, 3, 4]);
  // equal names alone decide: a snapshot carrying another listing's names (forged here) matches
  // that listing position by position, which shows no path was compared
  const other = discovery(['/r/p/a.jsonl', '/r/p/b.jsonl', '/r/p/c.jsonl', '/r/p/d.jsonl', '/r/p/e.jsonl']);
  assert.deepEqual([...matchSnapshot(fileListing(other), snap)!], [0, 3, -1, -1, -1]);
  assert.deepEqual([...matchSnapshot(fileListing(other), { ...snap, names: fileListing(other).names() })!], [0, 1, 2, 3, 4]);
  // the same files with one of another kind: matched by path (a plan then sees the kind changed)
  const kinds = { ...d, files: d.files.map((f, i) => (i === 0 ? { ...f, kind: 'subagent' as const } : f)) };
  assert.notEqual(fileListing(kinds).names(), snap.names);
  assert.deepEqual([...matchSnapshot(fileListing(kinds), snap)!], [0, 1, 2, 3, 4]);
});

test('a snapshot\'s paths are rebuilt at any position, in order or not, however long', () => {
  // paths longer than the 4 KiB first buffer, the first of them sharing a few bytes with a short one before it
  const long = `/r/p/a${'x'.repeat(5000)}`;
  const paths = [...PATHS, `${long}/a.jsonl`, `${long}/b.jsonl`, `${long}y/c.jsonl`].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const d = discovery(paths);
  const snap = decodeSnapshot(encodeSnapshot(fileListing(d), paths.map((_, i) => i), d.roots, 'k')!)!;
  const pathAt = snapshotPaths(snap);
  const text = (i: number) => pathAt(i).toString('utf8');
  assert.deepEqual(paths.map((_, i) => text(i)), paths);
  // asked again, backwards, and out of order: each is its path still
  for (const i of [7, 2, 2, 6, 0, 5, 1]) assert.equal(text(i), paths[i]);
});

test('matching a walk against a snapshot: kept files found, new ones -1, gone ones simply not matched', () => {
  const kept = discovery(['/r/a', '/r/b', '/r/d', '/r/e']);
  const snap = decodeSnapshot(encodeSnapshot(fileListing(kept), [1, 2, 3, 4], ['/r'], 'k')!)!;
  // b and e are gone, c and f are new
  assert.deepEqual([...matchSnapshot(fileListing(discovery(['/r/a', '/r/c', '/r/d', '/r/f'])), snap)!], [0, -1, 2, -1]);
  // a path that is a prefix of another, either way round
  const pre = decodeSnapshot(encodeSnapshot(fileListing(discovery(['/r/a', '/r/a.jsonl'])), [1, 2], ['/r'], 'k')!)!;
  assert.deepEqual([...matchSnapshot(fileListing(discovery(['/r/a.jsonl'])), pre)!], [1]);
  assert.deepEqual([...matchSnapshot(fileListing(discovery(['/r/a', '/r/a.j', '/r/a.jsonl', '/r/a.jsonl2'])), pre)!], [0, -1, 1, -1]);
  // nothing walked, nothing kept
  assert.deepEqual([...matchSnapshot(fileListing(discovery([])), snap)!], []);
  const none = decodeSnapshot(encodeSnapshot(fileListing(discovery([])), [], ['/r'], 'k')!)!;
  assert.deepEqual([...matchSnapshot(fileListing(kept), none)!], [-1, -1, -1, -1]);
});

test('paths not in increasing byte order are neither kept nor merged (JavaScript sorts U+E000 after an emoji; UTF-8 before)', () => {
  const paths = ['/r/\u{1F600}.jsonl', '/r/\uE000.jsonl'];
  assert.ok(paths[0] < paths[1], 'the walk\'s order');
  assert.equal(encodeSnapshot(fileListing(discovery(paths)), [1, 2], ['/r'], 'k'), null);
  const snap = decodeSnapshot(encodeSnapshot(fileListing(discovery(['/r/x'])), [1], ['/r'], 'k')!)!;
  assert.equal(matchSnapshot(fileListing(discovery(paths)), snap), null);
  // and a listing with a path twice
  assert.equal(encodeSnapshot(fileListing(discovery(['/r/a', '/r/a'])), [1, 2], ['/r'], 'k'), null);
  assert.equal(matchSnapshot(fileListing(discovery(['/r/a', '/r/a'])), snap), null);
});

test('a snapshot that is not whole, or not one, reads as none', () => {
  const bytes = encodeSnapshot(fileListing(discovery(PATHS)), [1, 2, 3, 4, 5], ['/r'], 'k')!;
  assert.ok(decodeSnapshot(bytes));
  for (const cut of [0, 10, 24, bytes.length - 1]) assert.equal(decodeSnapshot(bytes.subarray(0, cut)), null, `cut at ${cut}`);
  assert.equal(decodeSnapshot(Buffer.concat([bytes, Buffer.from([0])])), null, 'a byte too many');
  assert.equal(decodeSnapshot(Buffer.from('not a snapshot at all, but long enough to have a header')), null);
  const otherVersion = Buffer.from(bytes);
  otherVersion.writeUInt32LE(1, 4);
  assert.equal(decodeSnapshot(otherVersion), null);
  // any byte changed: here a path's, then a file id's
  for (const at of [bytes.length - 21, 24 + ((Buffer.from(bytes).readUInt32LE(12) + 7) & ~7) + 5 * 16]) {
    const damaged = Buffer.from(bytes);
    damaged[at] ^= 1;
    assert.equal(decodeSnapshot(damaged), null, `byte ${at} changed`);
  }
  // a front code that claims more shared bytes than the path before has, under a digest that fits
  const layout = Buffer.from(bytes);
  const sharedAt = 24 + ((layout.readUInt32LE(12) + 7) & ~7) + 5 * (8 + 8 + 4);
  layout.writeUInt32LE(500, sharedAt + 4);
  createHash('sha1').update(layout.subarray(0, layout.length - 20)).digest().copy(layout, layout.length - 20);
  assert.equal(decodeSnapshot(layout), null);
  layout.writeUInt32LE(6, sharedAt + 4);
  createHash('sha1').update(layout.subarray(0, layout.length - 20)).digest().copy(layout, layout.length - 20);
  assert.ok(decodeSnapshot(layout), 'the same bytes with the right front code');
  // ids that do not fit are not kept
  assert.equal(encodeSnapshot(fileListing(discovery(['/r/a'])), [2 ** 32], ['/r'], 'k'), null);
  assert.equal(encodeSnapshot(fileListing(discovery(['/r/a'])), [], ['/r'], 'k'), null);
});
