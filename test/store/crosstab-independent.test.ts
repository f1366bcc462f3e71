/**
 * An independent check of the cross-tab (SPEC §4): every dimension and every measure the command
 * offers, on `sample-logs/` and on each folder of the real logs, recomputed here in TypeScript from
 * the store's base tables (`requests`, `chains`, `attachments` read row by row, days by Intl in the
 * time zone) and compared cell by cell, row and column totals and the grand total included. Ratios
 * are recomputed from the sums of the cell's chains, never summed or averaged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { DIMENSIONS, MEASURES, crosstab, type Dimension, type Measure } from '../../src/analyses/crosstab.js';
import { usePortableViews } from '../../src/store/portable.js';
import { realLogs, repoRoot, run, tmp } from './helpers.js';

type Row = Record<string, unknown>;

interface ChainFacts {
  dims: Record<Dimension, string | number>;
  requests: number;
  unpriced: number;
  weight: number | null;
  usd: number | null;
  writeWeight: number | null;
  readWeight: number | null;
  readTokens: number;
  promptTokens: number;
  reattachments: number;
  listingsEqualRounds: boolean;
}

function dayIn(tz: string, ms: number): string {
  const p = Object.fromEntries(new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}`;
}

/** Every chain with its dimensions and sums, from the base tables alone. */
function chainFacts(chains: Row[], requests: Row[], attachments: Row[], tz: string): ChainFacts[] {
  const reqsOf = new Map<string, Row[]>();
  for (const r of requests) (reqsOf.get(r.chain_id as string) ?? reqsOf.set(r.chain_id as string, []).get(r.chain_id as string)!).push(r);
  const attsOf = new Map<string, Row[]>();
  for (const a of attachments) (attsOf.get(a.chain_id as string) ?? attsOf.set(a.chain_id as string, []).get(a.chain_id as string)!).push(a);
  return chains.map((c) => {
    const rs = reqsOf.get(c.chain_id as string) ?? [];
    const as = attsOf.get(c.chain_id as string) ?? [];
    const promptBy = new Map<string, number>();
    for (const r of rs) promptBy.set(r.model as string, (promptBy.get(r.model as string) ?? 0) + Number(r.prompt));
    const model = [...promptBy].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? 'none';
    const firstMs = rs.length > 0 ? Math.min(...rs.map((r) => Number(r.t))) : Number(c.first_t);
    const ttl = rs.some((r) => Number(r.cache_write_1h) > 0) ? '1h' : rs.some((r) => Number(r.cache_write) > 0) ? '5m' : 'none';
    const listings = as.filter((a) => a.type === 'skill_listing').length;
    const rounds = Number(c.rounds);
    const priced = rs.filter((r) => r.usd !== null);
    const sum = (xs: Row[], f: (r: Row) => number) => xs.reduce((s, r) => s + f(r), 0);
    const pricedSum = (f: (r: Row) => number) => (priced.length > 0 ? sum(priced, f) : null);
    const agentType = c.agent_type as string;
    return {
      dims: {
        agent_type: agentType,
        namespaced: agentType.includes(':') ? 'yes' : 'no',
        model,
        project: (c.project as string | null) ?? 'unknown',
        session: c.session_id as string,
        day: dayIn(tz, firstMs),
        ttl,
        has_skill_listing: listings > 0 ? 'yes' : 'no',
        skill_listing: listings,
        rounds_bucket: rounds <= 0 ? '0' : rounds === 1 ? '1' : rounds <= 3 ? '2-3' : rounds <= 9 ? '4-9' : '10+',
        definition: c.definition as string,
        rounds,
        kind: c.kind as string,
      },
      requests: rs.length,
      unpriced: rs.length - priced.length,
      weight: pricedSum((r) => Number(r.weight)),
      usd: pricedSum((r) => Number(r.usd)),
      writeWeight: pricedSum((r) => Number(r.weight_write_5m) + Number(r.weight_write_1h)),
      readWeight: pricedSum((r) => Number(r.weight_read)),
      readTokens: sum(rs, (r) => Number(r.cache_read)),
      promptTokens: sum(rs, (r) => Number(r.input) + Number(r.cache_write) + Number(r.cache_read)),
      // a re-attachment repeats a hash the chain sent before: all of the chain's attachments but one per hash
      reattachments: as.length - new Set(as.map((a) => a.hash)).size,
      listingsEqualRounds: listings === rounds && rounds > 0,
    };
  });
}

/** A measure over a set of chains, as SPEC §4 defines it: ratios of sums; weight and USD of priced requests, null when none. */
function measureOf(m: Measure, cs: ChainFacts[]): number | null {
  const sumKnown = (f: (c: ChainFacts) => number | null) => {
    const xs = cs.map(f).filter((x): x is number => x !== null);
    return xs.length > 0 ? xs.reduce((s, x) => s + x, 0) : null;
  };
  switch (m) {
    case 'chains': return cs.length;
    case 'requests': return cs.reduce((s, c) => s + c.requests, 0);
    case 'weight': return sumKnown((c) => c.weight);
    case 'usd': return sumKnown((c) => c.usd);
    case 'reattachments': return cs.reduce((s, c) => s + c.reattachments, 0);
    case 'hit_ratio': {
      const p = cs.reduce((s, c) => s + c.promptTokens, 0);
      return p === 0 ? null : cs.reduce((s, c) => s + c.readTokens, 0) / p;
    }
    case 'write_read_ratio': {
      const read = sumKnown((c) => c.readWeight);
      const write = sumKnown((c) => c.writeWeight);
      return read === null || read === 0 ? null : (write ?? 0) / read;
    }
  }
}

const close = (a: number | null, b: number | null) => (a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)));

async function checkCorpus(root: string, tz: string): Promise<number> {
  const r = await run([root], path.join(tmp(), 's.duckdb'));
  let checked = 0;
  try {
    await usePortableViews(r.store);
    const chains = await r.store.all(`SELECT * FROM chains`);
    const requests = await r.store.all(`SELECT * FROM requests`);
    const attachments = await r.store.all(`SELECT * FROM attachments`);
    const chainIds = new Set(chains.map((c) => c.chain_id));
    assert.ok(requests.every((q) => chainIds.has(q.chain_id)) && attachments.every((a) => chainIds.has(a.chain_id)), 'every request and attachment has its chain');
    const facts = chainFacts(chains, requests, attachments, tz);
    const dims = Object.keys(DIMENSIONS) as Dimension[];
    // every dimension as rows against kind, and as columns against ttl (and kind against definition, ttl against kind)
    const pairs: [Dimension, Dimension][] = [
      ...dims.filter((d) => d !== 'kind').map((d): [Dimension, Dimension] => [d, 'kind']),
      ...dims.filter((d) => d !== 'ttl').map((d): [Dimension, Dimension] => ['ttl', d]),
      ['kind', 'definition'],
    ];
    for (const [rows, cols] of pairs) {
      for (const m of Object.keys(MEASURES) as Measure[]) {
        const got = await crosstab(r.store, { rows, cols, measure: m, timezone: tz });
        const label = `${path.basename(root)} ${rows}×${cols} ${m}`;
        const rowValues = [...new Set(facts.map((f) => f.dims[rows]))];
        const colValues = [...new Set(facts.map((f) => f.dims[cols]))];
        assert.deepEqual([...got.rows].sort(), [...rowValues].sort(), `${label}: rows`);
        assert.deepEqual([...got.cols].sort(), [...colValues].sort(), `${label}: cols`);
        const want = new Map<string, ChainFacts[]>();
        const put = (row: unknown, col: unknown, f: ChainFacts) => {
          const k = JSON.stringify([row, col]);
          (want.get(k) ?? want.set(k, []).get(k)!).push(f);
        };
        for (const f of facts) {
          put(f.dims[rows], f.dims[cols], f);
          put(f.dims[rows], null, f);
          put(null, f.dims[cols], f);
          put(null, null, f);
        }
        if (facts.length === 0) want.set(JSON.stringify([null, null]), []);
        assert.deepEqual(got.cells.map((c) => JSON.stringify([c.row, c.col])).sort(), [...want.keys()].sort(), `${label}: the cells present`);
        for (const c of got.cells) {
          const cs = want.get(JSON.stringify([c.row, c.col]))!;
          const expected = measureOf(m, cs);
          assert.ok(close(c.value, expected), `${label} [${c.row} × ${c.col}]: ${c.value} ≠ ${expected}`);
          assert.equal(c.unpriced_requests, cs.reduce((s, x) => s + x.unpriced, 0), `${label} [${c.row} × ${c.col}]: unpriced`);
          checked++;
        }
        for (const e of got.attachments_equal_rounds) {
          const cs = want.get(JSON.stringify([e.row, e.col]))!;
          const matching = cs.filter((x) => x.listingsEqualRounds).length;
          assert.deepEqual(e, { row: e.row, col: e.col, chains: cs.length, matching, equal: cs.length > 0 && matching === cs.length }, `${label} [${e.row} × ${e.col}]: listings = rounds`);
        }
        assert.equal(got.attachments_equal_rounds.length, [...want.keys()].filter((k) => !k.includes('null')).length, `${label}: one listings = rounds line per inner cell`);
      }
    }
  } finally {
    r.store.close();
  }
  return checked;
}

test('sample-logs: every dimension and measure, cells and totals, equal an independent computation from the base tables', async () => {
  assert.ok((await checkCorpus(path.join(repoRoot, 'sample-logs'), 'UTC')) > 1000);
});

test('sample-logs in another time zone: day of the first request by Intl, the rest unchanged', async () => {
  assert.ok((await checkCorpus(path.join(repoRoot, 'sample-logs'), 'Pacific/Chatham')) > 1000);
});

for (const folder of readdirSync(realLogs, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)) {
  test(`real logs ${folder}: every dimension and measure, cells and totals, equal an independent computation`, async () => {
    assert.ok((await checkCorpus(path.join(realLogs, folder), 'UTC')) > 100);
  });
}
