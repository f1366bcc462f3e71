/**
 * Compaction segments by time (SPEC §1.4, §3): requests are ordered by their time, so a request's
 * segment is the number of its chain's compact_boundary lines stamped at or before it, wherever
 * in the file either was written. The store's `requests.segment`, the TypeScript anatomy and
 * repurchase.sql read the same segments, and an append run that adds a boundary stamped before
 * requests already stored re-derives them as a fresh store does.
 */
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { analyzeAnatomy } from '../../src/analyses/anatomy-summary.js';
import { anatomizeChain } from '../../src/analyses/anatomy.js';
import { loadChains } from '../../src/analyses/load-chains.js';
import { runQuery } from '../../src/store/queries.js';
import { assistant, writeCorpus } from '../helpers/corpus.js';
import { dump, prices, run, tmp } from '../store/helpers.js';

const NO_FILTERS = { since: null, until: null, project: null, timezone: 'UTC' };
const boundary = (session: string, t: string) => ({ type: 'system', subtype: 'compact_boundary', sessionId: session, timestamp: t, cwd: '/work/demo', uuid: `b-${t}` });

async function classes(root: string, db = path.join(tmp(), 's.duckdb')) {
  const r = await run([root], db);
  try {
    const chains = await loadChains(r.store, NO_FILTERS);
    const byChain = Object.fromEntries(chains.map((c) => [c.chainId, anatomizeChain(c).map((a) => `${a.request.key!.split('\0')[0]}:${a.request.segment}:${a.class}`)]));
    const ts = analyzeAnatomy(chains, { weightsFor: (m, p) => prices.weightsFor(m, p) });
    const sql = await runQuery(r.store, 'repurchase', { all: 'true' });
    // the SQL classes the same tokens as the anatomy
    for (const c of ts.chains) {
      const x = sql.find((s) => s.chain_id === c.chain_id)!;
      assert.deepEqual([x.expiry_tokens, x.break_tokens], [c.expiry, c.break], c.chain_id);
    }
    return { byChain, dump: await dump(r.store) };
  } finally {
    r.store.close();
  }
}

test('a request stamped before its compact_boundary but written after it belongs to the segment before it, and the reverse', async () => {
  const root = writeCorpus({
    // A, B; the boundary at 10:03; C stamped 10:02 (written after the boundary) reads B's prefix: growth;
    // D at 10:04 is the first request after the boundary: cold
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'a', t: '2026-03-01T10:00:00Z', u: { in: 5, w5: 10_000 } }),
      assistant({ session: 's1', msg: 'b', t: '2026-03-01T10:01:00Z', u: { in: 5, r: 10_000, w5: 2_000 } }),
      boundary('s1', '2026-03-01T10:03:00Z'),
      assistant({ session: 's1', msg: 'c', t: '2026-03-01T10:02:00Z', u: { in: 5, r: 12_000, w5: 500 } }),
      assistant({ session: 's1', msg: 'd', t: '2026-03-01T10:04:00Z', u: { in: 5, w5: 5_000 } }),
    ],
    // F stamped 11:03 after the boundary at 11:02 (written before it) is cold; G continues F's segment
    'p/s2.jsonl': [
      assistant({ session: 's2', msg: 'e', t: '2026-03-01T11:00:00Z', u: { in: 5, w5: 10_000 } }),
      assistant({ session: 's2', msg: 'f', t: '2026-03-01T11:03:00Z', u: { in: 5, w5: 8_000 } }),
      boundary('s2', '2026-03-01T11:02:00Z'),
      assistant({ session: 's2', msg: 'g', t: '2026-03-01T11:04:00Z', u: { in: 5, r: 8_000, w5: 100 } }),
    ],
  });
  const { byChain } = await classes(root);
  assert.deepEqual(byChain, {
    s1: ['a:0:cold', 'b:0:growth', 'c:0:growth', 'd:1:cold'],
    s2: ['e:0:cold', 'f:1:cold', 'g:1:growth'],
  });
});

test('an appended boundary stamped before requests already stored moves them into the new segment, as a fresh store reads it', async () => {
  const root = writeCorpus({
    'p/s3.jsonl': [
      assistant({ session: 's3', msg: 'h', t: '2026-03-01T12:00:00Z', u: { in: 5, w5: 10_000 } }),
      assistant({ session: 's3', msg: 'i', t: '2026-03-01T12:03:00Z', u: { in: 5, w5: 8_000 } }),
    ],
  });
  const db = path.join(tmp(), 's.duckdb');
  const before = await classes(root, db);
  assert.deepEqual(before.byChain.s3, ['h:0:cold', 'i:0:break']);
  appendFileSync(path.join(root, 'p/s3.jsonl'), [boundary('s3', '2026-03-01T12:02:00Z'), assistant({ session: 's3', msg: 'j', t: '2026-03-01T12:04:00Z', u: { in: 5, r: 8_000, w5: 100 } })].map((l) => JSON.stringify(l)).join('\n') + '\n');
  const appended = await classes(root, db);
  const fresh = await classes(root);
  assert.deepEqual(appended.byChain.s3, ['h:0:cold', 'i:1:cold', 'j:1:growth']);
  assert.deepEqual(appended.dump, fresh.dump);
});
