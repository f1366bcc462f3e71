/**
 * Files from several Claude Code versions at once (SPEC §1.1 layouts): the real logs hold
 * transcripts written by 1.0.17, 1.0.98, 2.1.14, 2.1.39, 2.1.200 and 2.1.201 — inline sidechains,
 * project-level agent files, subagents/ directories with meta.json. Read together they give no
 * skip and exactly the sum of each source read alone (no request is shared between sources, so
 * de-dup must neither merge nor lose any when the versions are mixed). The logs are read in place.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { realLogs, removeDir, summary, tempDir, tokens } from './helpers.js';

function versions(dir: string): Set<string> {
  const out = new Set<string>();
  const visit = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.name.endsWith('.jsonl')) for (const m of readFileSync(p, 'utf8').matchAll(/"version":"([\d.]+)"/g)) out.add(m[1]!);
    }
  };
  visit(dir);
  return out;
}

test('transcripts of six Claude Code versions read together equal the sum of each read alone, with no skip', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const sources = readdirSync(realLogs, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => path.join(realLogs, e.name));
  assert.deepEqual([...versions(realLogs)].sort(), ['1.0.17', '1.0.98', '2.1.14', '2.1.200', '2.1.201', '2.1.39'], 'versions present');
  assert.ok(sources.length >= 5);
  const all = await summary(sources, path.join(dir, 'all.duckdb'));
  assert.deepEqual(all.quality.skipped, []);
  const sum = { requests: 0, input: 0, output: 0, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0, unpriced_requests: 0 };
  let files = 0;
  for (const [i, src] of sources.entries()) {
    const one = await summary([src], path.join(dir, `${i}.duckdb`));
    assert.deepEqual(one.quality.skipped, [], src);
    for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += one.totals[k];
    files += one.quality.files;
  }
  assert.deepEqual(tokens(all.totals), sum);
  assert.equal(all.quality.files, files);
});
