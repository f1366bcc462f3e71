/**
 * An independent check of `blocks` and `sessions` on sample-logs/ and on each real-log folder: both
 * recomputed here in TypeScript from the store's `requests` rows (not from the hourly or sessions
 * queries) and compared field by field.
 * - blocks (SPEC §7): requests in time order; a block starts at the first request at or after the
 *   previous block's end, floored to the UTC hour, and lasts 5 hours; weight and USD of its priced
 *   requests, null when none has a price.
 * - sessions: one row per `sessionId` (a subagent's requests in its parent's session), most expensive
 *   first by USD (unknown last), ties by session id; first and last request as minutes in the zone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { blocks } from '../../src/analyses/blocks.js';
import { sessions } from '../../src/analyses/sessions.js';
import { realLogs, repoRoot, run, tmp } from '../store/helpers.js';

type Row = Record<string, unknown>;
const H = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const close = (a: number | null, b: number | null) => (a === null || b === null ? a === b : Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)));

function minuteIn(tz: string, ms: number): string {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .formatToParts(new Date(ms)).map((x) => [x.type, x.value]),
  );
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
}

function sums(rs: Row[]) {
  const priced = rs.filter((r) => r.usd !== null);
  const add = (xs: Row[], k: string) => xs.reduce((s, r) => s + Number(r[k]), 0);
  return {
    requests: rs.length,
    input: add(rs, 'input'),
    output: add(rs, 'output'),
    cache_write_5m: add(rs, 'cache_write_5m'),
    cache_write_1h: add(rs, 'cache_write_1h'),
    cache_read: add(rs, 'cache_read'),
    weight: priced.length > 0 ? add(priced, 'weight') : null,
    usd: priced.length > 0 ? add(priced, 'usd') : null,
    unpriced_requests: rs.length - priced.length,
  };
}

async function check(root: string, tz: string): Promise<void> {
  const r = await run([root], path.join(tmp(), 's.duckdb'));
  try {
    const requests = (await r.store.all(`SELECT * FROM requests`)).sort((a, b) => Number(a.t) - Number(b.t));
    assert.ok(requests.length > 0);
    const filters = { since: null, until: null, project: null, timezone: tz };

    const want: { start: number; rs: Row[] }[] = [];
    for (const q of requests) {
      const t = Number(q.t);
      const last = want.at(-1);
      if (!last || t >= last.start + 5 * H) want.push({ start: Math.floor(t / H) * H, rs: [q] });
      else last.rs.push(q);
    }
    const got = (await blocks(r.store, filters)).blocks;
    assert.equal(got.length, want.length, 'blocks');
    got.forEach((b, i) => {
      const w = want[i]!;
      const s = sums(w.rs);
      const label = `block ${b.start}`;
      assert.deepEqual([b.start, b.end, b.first_request, b.last_request], [iso(w.start), iso(w.start + 5 * H), iso(Number(w.rs[0]!.t)), iso(Number(w.rs.at(-1)!.t))], label);
      for (const k of ['requests', 'input', 'output', 'cache_write_5m', 'cache_write_1h', 'cache_read', 'unpriced_requests'] as const) assert.equal(b[k], s[k], `${label}: ${k}`);
      assert.equal(b.tokens, s.input + s.output + s.cache_write_5m + s.cache_write_1h + s.cache_read, `${label}: tokens`);
      assert.ok(close(b.weight, s.weight) && close(b.usd, s.usd), `${label}: weight ${b.weight} / ${s.weight}, USD ${b.usd} / ${s.usd}`);
      assert.deepEqual(b.models, [...new Set(w.rs.map((q) => q.model as string))].sort(), `${label}: models`);
      // every request lies in its block, none at or past its end
      assert.ok(w.rs.every((q) => Number(q.t) >= w.start && Number(q.t) < w.start + 5 * H), label);
    });

    const bySession = new Map<string, Row[]>();
    for (const q of requests) (bySession.get(q.session_id as string) ?? bySession.set(q.session_id as string, []).get(q.session_id as string)!).push(q);
    const chains = await r.store.all(`SELECT chain_id, kind, project FROM chains`);
    const kindOf = new Map(chains.map((c) => [c.chain_id as string, c.kind as string]));
    const expected = [...bySession].map(([id, rs]) => ({ id, rs, ...sums(rs) }));
    expected.sort((a, b) => (a.usd === null ? (b.usd === null ? 0 : 1) : b.usd === null ? -1 : b.usd - a.usd) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const rows = (await sessions(r.store, filters)).sessions;
    // the order: by USD, unknown last, ties by id
    assert.deepEqual(rows.map((s) => s.session_id), expected.map((e) => e.id), 'sessions, most expensive first');
    rows.forEach((s, i) => {
      const e = expected[i]!;
      const label = `session ${s.session_id}`;
      for (const k of ['requests', 'input', 'output', 'cache_write_5m', 'cache_write_1h', 'cache_read', 'unpriced_requests'] as const) assert.equal(s[k], e[k], `${label}: ${k}`);
      assert.ok(close(s.weight, e.weight) && close(s.usd, e.usd), `${label}: weight, USD`);
      const chainIds = new Set(e.rs.map((q) => q.chain_id as string));
      assert.equal(s.chains, chainIds.size, `${label}: chains`);
      assert.equal(s.subagents, [...chainIds].filter((c) => kindOf.get(c) !== 'main').length, `${label}: subagents`);
      const ts = e.rs.map((q) => Number(q.t));
      assert.deepEqual([s.first, s.last], [minuteIn(tz, Math.min(...ts)), minuteIn(tz, Math.max(...ts))], `${label}: first, last in ${tz}`);
      assert.deepEqual([s.first_request, s.last_request], [iso(Math.min(...ts)), iso(Math.max(...ts))], label);
      // one project per session: its requests' (a subagent's included)
      assert.deepEqual([...new Set(e.rs.map((q) => q.project))], [s.project], `${label}: project`);
    });
  } finally {
    r.store.close();
  }
}

test('sample-logs: blocks and sessions equal an independent computation from the requests', async () => {
  await check(path.join(repoRoot, 'sample-logs'), 'UTC');
  await check(path.join(repoRoot, 'sample-logs'), 'Asia/Kathmandu');
});

for (const folder of readdirSync(realLogs, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)) {
  test(`real logs ${folder}: blocks and sessions equal an independent computation from the requests`, async () => {
    await check(path.join(realLogs, folder), 'America/St_Johns');
  });
}
