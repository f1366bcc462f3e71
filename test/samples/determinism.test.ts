import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadChannel } from '../../src/samples/channel-loader.js';
import { generateCorpus } from '../../src/samples/corpus.js';
import { tempDir } from '../helpers/temp.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const SAMPLE = join(repoRoot, 'sample-logs');

function listFiles(root: string, dir = root): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(root, p));
    else out.push(relative(root, p).split('\\').join('/'));
  }
  return out.sort();
}

async function generate(seed: number, scale = 1): Promise<string> {
  const out = tempDir('cachelens-samples-');
  const channel = await loadChannel();
  generateCorpus({ seed, scale, out, ...(channel ? { channel } : {}) });
  return out;
}

function assertSameTree(a: string, b: string): void {
  const filesA = listFiles(a);
  assert.deepEqual(filesA, listFiles(b));
  for (const f of filesA) {
    assert.ok(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), `${f} differs`);
  }
}

test('the same seed gives byte-identical files on a second generation', async () => {
  const a = await generate(42);
  const b = await generate(42);
  try {
    assert.ok(listFiles(a).length > 30);
    assertSameTree(a, b);
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});

test('the committed sample-logs/ is exactly what the generator makes for --seed 42 --scale 1', async () => {
  const a = await generate(42);
  try {
    assertSameTree(a, SAMPLE);
  } finally {
    rmSync(a, { recursive: true, force: true });
  }
});

test('another seed gives other ids and numbers but the same mix of files', async () => {
  const a = await generate(42);
  const b = await generate(7);
  try {
    const ta = JSON.parse(readFileSync(join(a, 'truth.json'), 'utf8'));
    const tb = JSON.parse(readFileSync(join(b, 'truth.json'), 'utf8'));
    assert.notDeepEqual(ta.totals, tb.totals);
    assert.notDeepEqual(listFiles(a), listFiles(b));
    assert.equal(listFiles(a).length, listFiles(b).length);
    assert.deepEqual(ta.counts.chains_by_kind, tb.counts.chains_by_kind);
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});

test('--scale multiplies sessions and projects with the same mix', async () => {
  const a = await generate(42, 1);
  const b = await generate(42, 3);
  const c = await generate(42, 0.5);
  try {
    const [ta, tb, tc] = [a, b, c].map((d) => JSON.parse(readFileSync(join(d, 'truth.json'), 'utf8')));
    assert.equal(ta.counts.sessions, 8);
    assert.equal(ta.counts.projects, 4);
    assert.equal(tb.counts.sessions, 24);
    assert.equal(tb.counts.projects, 12);
    for (const kind of Object.keys(ta.counts.chains_by_kind)) assert.equal(tb.counts.chains_by_kind[kind], 3 * ta.counts.chains_by_kind[kind], kind);
    assert.equal(tc.counts.sessions, 4);
    // the first unit of a larger corpus is the default corpus itself
    assert.deepEqual(tb.files.slice(0, 5), ta.files.slice(0, 5));
  } finally {
    for (const d of [a, b, c]) rmSync(d, { recursive: true, force: true });
  }
});
