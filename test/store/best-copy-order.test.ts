/** The de-dup's best-copy order (schema.ts BEST_COPY_ORDER): one HUGEINT that sorts as (-rank, t, path_rank, line). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { BEST_COPY_ORDER } from '../../src/store/schema.js';

/** Every combination of extreme and neighbouring values each field can take. */
const RANKS = [0, 1, 2];
// Date.parse's range is ±8.64e15 ms; neighbours test that one millisecond still decides
const TIMES = [-8.64e15, -8.64e15 + 1, -1, 0, 1, 1_764_460_800_000, 1_764_460_800_001, 8.64e15 - 1, 8.64e15];
const PATH_RANKS = [1, 2, 2 ** 31, 2 ** 32 - 1];
const LINES = [1, 2, 2 ** 30, 2 ** 31 - 1];

test('BEST_COPY_ORDER sorts copies exactly as the tuple (-rank, t, path_rank, line), at the extremes of each field', async () => {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  const rows: string[] = [];
  for (const rank of RANKS) for (const t of TIMES) for (const p of PATH_RANKS) for (const line of LINES) rows.push(`(${rank}::TINYINT, ${t}::DOUBLE, ${p}::BIGINT, ${line}::INTEGER)`);
  // shuffled, so that neither order can come from the insertion order
  rows.sort((a, b) => (hash(a) - hash(b)));
  await c.run(`CREATE TABLE copies (rank TINYINT, t DOUBLE, path_rank BIGINT, line INTEGER); INSERT INTO copies VALUES ${rows.join(', ')}`);
  const byTuple = (await c.runAndReadAll(`SELECT rank, t, path_rank, line FROM copies ORDER BY (-rank, t, path_rank, line)`)).getRows();
  const byKey = (await c.runAndReadAll(`SELECT rank, t, path_rank, line FROM copies ORDER BY ${BEST_COPY_ORDER}`)).getRows();
  assert.equal(byKey.length, RANKS.length * TIMES.length * PATH_RANKS.length * LINES.length);
  assert.deepEqual(byKey, byTuple);
  // and keys are distinct: no two copies tie unless all four fields do
  const [[distinct]] = (await c.runAndReadAll(`SELECT count(DISTINCT ${BEST_COPY_ORDER}) FROM copies`)).getRows();
  assert.equal(Number(distinct), byKey.length);
  // arg_min over the key picks what arg_min over the tuple picks
  const pick = async (order: string) => (await c.runAndReadAll(`SELECT line % 3 AS g, arg_min((rank, t, path_rank, line), ${order}) FROM copies GROUP BY g ORDER BY g`)).getRows();
  assert.deepEqual(await pick(BEST_COPY_ORDER), await pick('(-rank, t, path_rank, line)'));
});

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
