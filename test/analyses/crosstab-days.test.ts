/**
 * --since/--until on `crosstab` (and the report's cross-tab, queries/skill_listing_by_agent_type.sql)
 * choose the requests of those days in --timezone, as `summary` does: a chain that began the day
 * before is counted with its requests of those days only, never left out, nor counted whole.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assistant, cli, writeCorpus } from '../helpers/corpus.js';

// Asia/Kathmandu is UTC+5:45: its 2 March begins at 2026-03-01T18:15Z.
const dir = writeCorpus({
  'p/s1.jsonl': [
    assistant({ session: 's1', msg: 'm1', t: '2026-03-01T18:14:59.999Z', u: { in: 10, w5: 1000 } }),
    assistant({ session: 's1', msg: 'm2', t: '2026-03-01T18:15:00.000Z', u: { in: 20, r: 1000 } }),
    assistant({ session: 's1', msg: 'm3', t: '2026-03-02T18:14:59.999Z', u: { in: 30, r: 1000 } }),
    assistant({ session: 's1', msg: 'm4', t: '2026-03-02T18:15:00.000Z', u: { in: 40, r: 1000 } }),
  ],
  'p/s2.jsonl': [assistant({ session: 's2', msg: 'n1', t: '2026-03-02T12:00:00Z', u: { in: 50, w5: 100 } })],
});

function json(args: string[]): any {
  const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'Asia/Kathmandu', '--since', '2026-03-02', '--until', '2026-03-02', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const total = (x: any) => x.cells.find((c: any) => c.row === null && c.col === null)?.value ?? null;

test('crosstab --since/--until counts the requests of those days, as summary does, with the chain begun the day before', () => {
  const s = json(['summary']).totals;
  assert.equal(s.requests, 3);
  for (const measure of ['requests', 'usd', 'weight', 'chains'] as const) {
    const x = json(['crosstab', '--rows', 'day', '--cols', 'model', '--measure', measure]);
    const want = measure === 'chains' ? 2 : s[measure];
    assert.ok(Math.abs(total(x) - want) < 1e-9, `${measure}: ${total(x)} ≠ ${want}`);
    assert.deepEqual(x.rows, ['2026-03-02'], measure);
  }
});

test('the report\'s cross-tab query counts the chains with requests on those days, weighed by those requests', () => {
  const s = json(['summary']).totals;
  const q = json(['query', 'skill_listing_by_agent_type']);
  assert.equal(q.rows.reduce((n: number, r: any) => n + Number(r.chains), 0), 2);
  assert.ok(Math.abs(q.rows.reduce((n: number, r: any) => n + Number(r.weight), 0) - s.weight) < 1e-9);
});
