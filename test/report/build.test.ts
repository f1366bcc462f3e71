/**
 * buildReportData over a real store: the queries it sends on a connection beside the store's are
 * all finished when it returns, even when a section fails before it awaits its rows (the store
 * closes that connection next, and a connection must not close under a running query).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openContext } from '../../src/context.js';
import { analyzeAnatomy } from '../../src/analyses/anatomy-summary.js';
import { loadChains } from '../../src/analyses/load-chains.js';
import { whatifKeepalive } from '../../src/analyses/keepalive.js';
import { whatifTtl } from '../../src/analyses/ttl.js';
import { buildReportData } from '../../src/report/build.js';
import { COST_BY_KEYS } from '../../src/report/data.js';
import { renderReport } from '../../src/report/render.js';
import { formatTtl } from '../../src/reporters/whatif.js';
import { fmtUsd as fmtUsdOf } from '../../src/report/format.js';
import type { StoreReader } from '../../src/store/store.js';
import { assistant, cli, REPO, summaryJson, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';

test('every query sent beside the store has finished when the report data is built, also when the summary fails', async () => {
  const ctx = await openContext({ paths: [join(REPO, 'sample-logs')], db: ':memory:', timezone: 'UTC' });
  const pending = new Set<Promise<unknown>>();
  try {
    // the summary goes through the remembered results: when they cannot be had it fails, and so do
    // the sections that need it (the headline and data quality, which then never await their rows)
    ctx.store.remember = () => Promise.reject(new Error('the remembered results cannot be read'));
    let running = 0;
    let sent = 0;
    const beside = ctx.store.beside.bind(ctx.store);
    ctx.store.beside = async (): Promise<StoreReader> => {
      const reader = await beside();
      const counted =
        <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
        async (...a: A): Promise<R> => {
          sent++;
          running++;
          const query = f(...a);
          pending.add(query);
          try {
            return await query;
          } finally {
            running--;
          }
        };
      // a stream counts as running until it is read to its end
      async function* chunks(...a: Parameters<StoreReader['chunks']>) {
        sent++;
        running++;
        try {
          yield* reader.chunks(...a);
        } finally {
          running--;
        }
      }
      return { all: counted(reader.all), chunks };
    };
    const data = await buildReportData(ctx);
    assert.equal(running, 0, 'no query beside the store still running');
    assert.ok(sent >= 5, `the report's own queries went beside the store (${sent})`);
    assert.ok(data.headline && 'error' in data.headline, 'the headline needs the summary');
    assert.ok(data.dataQuality && 'error' in data.dataQuality, 'data quality needs the summary');
    // the sections that do not need the summary are there, from the queries beside the store
    assert.ok(data.costOverTime && !('error' in data.costOverTime) && data.costOverTime.rows.length > 0);
    assert.ok(data.crossTab && !('error' in data.crossTab) && data.crossTab.rows.length > 0);
    assert.ok(data.meta.from !== null && data.meta.to !== null && data.meta.from <= data.meta.to);
    assert.ok(data.topChains && !('error' in data.topChains) && data.topChains.chains.length > 0, 'the chains were read beside too');
  } finally {
    // should the check above fail, the store still closes only once its queries are done
    await Promise.allSettled(pending);
    ctx.store.close();
  }
});

test('the report reads the chains once, in batches: its analyses and top chains are those of every chain at once', async () => {
  const ctx = await openContext({ paths: [join(REPO, '../shared/real-logs')], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const chains = await loadChains(ctx.store, ctx.filters, { keys: false });
    const weightsFor = (m: string, p: number) => ctx.prices.weightsFor(m, p);
    const anatomy = analyzeAnatomy(chains, { weightsFor });
    // a list titled by waste: the chains that re-bought context after an expiry or a break (all priced
    // here, so their waste is above 0), as anatomy's chains and its total waste count them; the rest counted
    const wasted = anatomy.chains.filter((c) => c.expiry + c.break > 0);
    // ranked by the USD of the waste (weights of models do not compare), then its weight, then weight
    const usdOf = (x: number) => Number(x.toFixed(6));
    const ranked = [...wasted].sort((a, b) => usdOf(b.waste_usd) - usdOf(a.waste_usd) || b.waste_weight - a.waste_weight || b.weight - a.weight).slice(0, 8);
    assert.ok(data.topChains && !('error' in data.topChains));
    assert.ok(anatomy.chains.length > 8, 'more chains than the report lists');
    assert.ok(wasted.length > 0 && wasted.every((c) => c.waste_weight > 0));
    assert.ok(data.topChains.chains.every((c) => c.wasteWeight !== null && c.wasteWeight > 0), 'no chain listed by waste wasted nothing');
    assert.equal(data.topChains.withoutWaste, anatomy.chains.length - wasted.length);
    assert.ok(data.topChains.withoutWaste > 0, 'the real logs have chains that wasted nothing');
    assert.deepEqual(
      data.topChains.chains.map((c) => [c.chainId, c.wasteWeight, c.weight]),
      ranked.map((c) => [c.chain_id, c.waste_weight, c.weight]),
    );
    assert.ok(data.headline && !('error' in data.headline));
    assert.equal(data.headline.wasteWeight, anatomy.totals.waste_weight);
    const ttl = whatifTtl(chains, { to: '1h', scope: 'all', weightsFor });
    assert.ok(data.ttlOverride && !('error' in data.ttlOverride));
    assert.deepEqual([data.ttlOverride.baseline.weight, data.ttlOverride.scenario.weight], [ttl.baseline_weight, ttl.scenario_weight]);
    const keepalive = whatifKeepalive(chains, { weightsFor });
    assert.ok(data.keepalive && !('error' in data.keepalive));
    assert.deepEqual(
      data.keepalive.budgets.map((b) => b.netSavingWeight),
      keepalive.budgets.map((b) => b.net_saving_weight),
    );
  } finally {
    ctx.store.close();
  }
});

test('a report that runs out of memory within its bound is built again without it: no section lost', async () => {
  const ctx = await openContext({ paths: [join(REPO, 'sample-logs')], db: join(tempDir('cachelens-report-'), 's.duckdb'), timezone: 'UTC' });
  try {
    const strip = (d: object) => JSON.stringify({ ...d, meta: { ...(d as { meta: object }).meta, generatedAt: null } });
    const want = await buildReportData(ctx);
    // the first build's cost components run out of memory, as DuckDB says it; the builds are
    // counted by those queries
    let components = 0;
    const beside = ctx.store.beside.bind(ctx.store);
    ctx.store.beside = async (): Promise<StoreReader> => {
      const reader = await beside();
      return {
        ...reader,
        all: async (sql, params) => {
          if (sql.includes('report_components') && components++ === 0) {
            throw new Error('query report_components failed: Out of Memory Error: failed to pin block of size 256.0 KiB');
          }
          return reader.all(sql, params);
        },
      };
    };
    const got = await buildReportData(ctx);
    assert.equal(components, 2, 'built twice');
    assert.equal(strip(got), strip(want));
    assert.ok(!Object.values(got).some((v) => v && typeof v === 'object' && 'error' in v));
    await assertUnbounded(ctx.store);
  } finally {
    ctx.store.close();
  }
});

test('a store that holds more than the bound (DuckDB cannot take it) builds its report without one', async () => {
  const ctx = await openContext({ paths: [join(REPO, 'sample-logs')], db: ':memory:', timezone: 'UTC' });
  try {
    // DuckDB refuses the bound (it cannot free enough for it): seen as the SET's error
    const refused: string[] = [];
    const run = ctx.store.run.bind(ctx.store);
    ctx.store.run = async (sql: string) => {
      try {
        return await run(sql);
      } catch (err) {
        if (sql.includes('memory_limit')) refused.push((err as Error).message.split('\n')[0]);
        throw err;
      }
    };
    const data = await buildReportData(ctx, { memoryMb: 1 });
    assert.deepEqual(refused.map((m) => m.replace(/ \d+:/, ' N:')), ['Out of Memory Error: Failed to change memory limit to N: could not free up enough memory for the new limit']);
    assert.ok(!Object.values(data).some((v) => v && typeof v === 'object' && 'error' in v));
    assert.ok(data.topChains && !('error' in data.topChains) && data.topChains.chains.length > 0);
    await assertUnbounded(ctx.store);
  } finally {
    ctx.store.close();
  }
});

test('the cost-by data holds the projects with the most USD and the rest summed as one: every dollar, few rows', async () => {
  const ctx = await openContext({ paths: [join(REPO, 'sample-logs')], db: ':memory:', timezone: 'UTC' });
  try {
    // the sample logs have 4 projects: spread their requests over 40
    await ctx.store.run(`UPDATE requests SET project = 'p' || (hash(key) % 40)`);
    const [want] = await ctx.store.all(`SELECT count(DISTINCT project)::INTEGER AS projects, sum(weight_read * usd_per_weight)::DOUBLE AS read_usd FROM requests`);
    assert.ok((want.projects as number) > COST_BY_KEYS + 1);
    const data = await buildReportData(ctx);
    assert.ok(data.costBy && !('error' in data.costBy));
    const rows = data.costBy.rows.filter((r) => r.dimension === 'project');
    const named = new Set(rows.filter((r) => r.key !== null).map((r) => r.key));
    assert.equal(named.size, COST_BY_KEYS);
    const rest = rows.filter((r) => r.key === null);
    assert.equal(rest.length, 5, 'the rest: one row per component');
    for (const r of rest) assert.equal(r.groups, (want.projects as number) - COST_BY_KEYS);
    // the named ones are those with the most USD, the rest none above them
    const usd = (key: string) => rows.filter((r) => r.key === key).reduce((s, r) => s + (r.usd ?? 0), 0);
    const least = Math.min(...[...named].map((k) => usd(k!)));
    const [richestRest] = await ctx.store.all(
      `SELECT max(u)::DOUBLE AS u FROM (SELECT project, sum(usd) AS u FROM requests WHERE project NOT IN (${[...named].map((k) => `'${k}'`).join(', ')}) GROUP BY project)`,
    );
    assert.ok((richestRest.u as number) <= least + 1e-9, 'no folded project costs more than a named one');
    const readUsd = rows.filter((r) => r.component === 'read').reduce((s, r) => s + (r.usd ?? 0), 0);
    assert.ok(Math.abs(readUsd - (want.read_usd as number)) <= 1e-9 * Math.max(1, want.read_usd as number), 'every dollar of reads is in a row');
  } finally {
    ctx.store.close();
  }
});

/** DuckDB's buffer pool is unbounded again: a sort that needs more than 16 MB runs. */
async function assertUnbounded(store: { all(sql: string): Promise<Record<string, unknown>[]> }) {
  const sort = `SELECT count(*)::INTEGER AS n FROM (SELECT i, md5(i::VARCHAR) AS h FROM range(3000000) t(i) ORDER BY h)`;
  assert.deepEqual(await store.all(sort), [{ n: 3_000_000 }]);
}

test('the report counts what the filters choose in every section, as the CLI does', async () => {
  for (const filters of [
    { since: '2026-02-12', until: '2026-02-12', timezone: 'UTC' },
    { project: 'spotter-d', timezone: 'Asia/Tokyo' },
  ]) {
    const ctx = await openContext({ paths: [join(REPO, '../shared/real-logs')], db: ':memory:', ...filters });
    try {
      const data = await buildReportData(ctx);
      const f = ctx.filters;
      const [span] = await ctx.store.all(
        `SELECT count(DISTINCT session_id) AS sessions, count(DISTINCT chain_id) AS chains, sum(usd) AS usd,
                count(*) FILTER (WHERE split_missing) AS split_missing, min(t) AS first
         FROM requests WHERE ($since IS NULL OR strftime(timezone($tz, ts), '%Y-%m-%d') >= $since)
           AND ($until IS NULL OR strftime(timezone($tz, ts), '%Y-%m-%d') <= $until) AND ($project IS NULL OR contains(lower(project), lower($project)))`,
        { tz: f.timezone, since: f.since, until: f.until, project: f.project },
      );
      const all = await ctx.store.all(`SELECT count(DISTINCT session_id) AS sessions FROM requests`);
      assert.ok(Number(span!.sessions) < Number(all[0]!.sessions), 'the filter leaves sessions out');
      assert.ok(data.headline && !('error' in data.headline));
      assert.deepEqual([data.headline.sessions, data.headline.chains], [Number(span!.sessions), Number(span!.chains)]);
      assert.equal(data.meta.from, span!.first);
      const usd = (rows: { usd: number | null }[]) => rows.reduce((s, r) => s + (r.usd ?? 0), 0);
      assert.ok(data.costOverTime && !('error' in data.costOverTime));
      assert.ok(Math.abs(usd(data.costOverTime.rows) - Number(span!.usd)) < 1e-6);
      assert.equal(data.costOverTime.timezone, f.timezone);
      assert.ok(data.costBy && !('error' in data.costBy));
      for (const dim of ['project', 'model', 'agentType'] as const) {
        assert.ok(Math.abs(usd(data.costBy.rows.filter((r) => r.dimension === dim)) - Number(span!.usd)) < 1e-6, dim);
      }
      assert.ok(data.dataQuality && !('error' in data.dataQuality));
      assert.equal(data.dataQuality.splitMissing, Number(span!.split_missing));
      // the days are the filters' time zone's
      const days = new Set(data.costOverTime.rows.map((r) => r.day));
      const [tzDays] = await ctx.store.all(
        `SELECT list(DISTINCT strftime(timezone($tz, ts), '%Y-%m-%d') ORDER BY 1) AS days FROM requests
         WHERE ($since IS NULL OR strftime(timezone($tz, ts), '%Y-%m-%d') >= $since) AND ($until IS NULL OR strftime(timezone($tz, ts), '%Y-%m-%d') <= $until) AND ($project IS NULL OR contains(lower(project), lower($project)))`,
        { tz: f.timezone, since: f.since, until: f.until, project: f.project },
      );
      assert.deepEqual([...days].sort(), tzDays!.days);
    } finally {
      ctx.store.close();
    }
  }
});

test('a TTL override over some requests without a price marks its sums +? and names the model left out, as whatif ttl does: its bucket was dropped from the table without a word', async () => {
  const session = '0ca1b2c3-0000-4000-8000-0000000000a1';
  const root = writeCorpus({
    [`projects/p/${session}.jsonl`]: [0, 1, 2].flatMap((i) => [
      userPrompt(session, `2026-02-10T18:${10 + i * 7}:00.000Z`),
      assistant({ session, msg: `m${i}`, t: `2026-02-10T18:${10 + i * 7}:05.000Z`, model: i === 1 ? 'claude-<b>mystery</b>-9' : 'claude-opus-4-6', u: { in: 3, w5: 1000 * (i + 1), r: 5000 * i, out: 50 } }),
    ]),
  });
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const ttlResult = whatifTtl(await loadChains(ctx.store, ctx.filters, { keys: false }), { to: '1h', scope: 'all', weightsFor: (m, p) => ctx.prices.weightsFor(m, p) });
    assert.match(formatTtl(ttlResult), /^1 request of an unpriced model \(claude-<b>mystery<\/b>-9\) left out$/m, 'the command says it');
    assert.ok(data.ttlOverride && !('error' in data.ttlOverride));
    assert.deepEqual([data.ttlOverride.unpricedRequests, data.ttlOverride.unpricedModels], [1, ['claude-<b>mystery</b>-9']]);
    const page = renderReport(data);
    const section = /<section class="card" id="ttl-override"[\s\S]*?<\/section>/.exec(page)![0];
    const text = section.replace(/<[^>]*>/g, '');
    assert.match(text, /baseline\s*\$[\d.]+ \([\d,]+ wt\) \+\?/);
    assert.match(text, /scenario\s*\$[\d.]+ \([\d,]+ wt\) \+\?/);
    assert.ok(section.includes('+? 1 request of a model without a price (claude-&lt;b&gt;mystery&lt;/b&gt;-9) is left out of the baseline, the scenario, f and the buckets'), 'named, escaped');
  } finally {
    ctx.store.close();
  }
  // every request priced: no mark, no line
  const priced = writeCorpus({ [`projects/p/${session}.jsonl`]: [userPrompt(session, '2026-02-10T18:10:00.000Z'), assistant({ session, msg: 'p', t: '2026-02-10T18:10:05.000Z', u: { in: 3, w5: 1000 } })] });
  const ctx2 = await openContext({ paths: [priced], db: ':memory:', timezone: 'UTC' });
  try {
    const section = /<section class="card" id="ttl-override"[\s\S]*?<\/section>/.exec(renderReport(await buildReportData(ctx2)))![0];
    assert.doesNotMatch(section, /\+\?|without a price/);
  } finally {
    ctx2.store.close();
  }
});

test('the anatomy over some requests without a price says they are left out of its weights, as anatomy marks them +?: the priced agent type read as whole', async () => {
  const session = '0ca1b2c3-0000-4000-8000-0000000000a2';
  const root = writeCorpus({
    [`projects/p/${session}.jsonl`]: [0, 1, 2].flatMap((i) => [
      userPrompt(session, `2026-02-10T18:${10 + i * 7}:00.000Z`),
      assistant({ session, msg: `m${i}`, t: `2026-02-10T18:${10 + i * 7}:05.000Z`, model: i === 1 ? 'claude-<i>mystery</i>-9' : 'claude-opus-4-6', u: { in: 3, w5: 1000 * (i + 1), r: 5000 * i, out: 50 } }),
    ]),
  });
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    assert.ok(data.anatomy && !('error' in data.anatomy));
    assert.deepEqual(data.anatomy.unpricedModels, [{ model: 'claude-<i>mystery</i>-9', requests: 1 }]);
    const section = /<section class="card" id="anatomy"[\s\S]*?<\/section>/.exec(renderReport(data))![0];
    assert.ok(section.includes('+? 1 request of a model without a price (claude-&lt;i&gt;mystery&lt;/i&gt;-9) is left out of these weights.'), 'said, escaped');
  } finally {
    ctx.store.close();
  }
});

test('the headline\'s waste and weight over some requests without a price are marked +?, as the TTL override and anatomy sums are: the waste tile read as whole', async () => {
  const session = '0ca1b2c3-0000-4000-8000-0000000000a3';
  const corpus = (unknown: boolean) =>
    writeCorpus({
      [`projects/p/${session}.jsonl`]: [0, 1, 2].flatMap((i) => [
        userPrompt(session, `2026-02-10T18:${10 + i * 7}:00.000Z`),
        assistant({ session, msg: `m${i}`, t: `2026-02-10T18:${10 + i * 7}:05.000Z`, model: unknown && i === 1 ? 'claude-mystery-9' : 'claude-opus-4-6', u: { in: 3, w5: 10_000 + 500 * i, out: 50 } }),
      ]),
    });
  const tiles = async (root: string) => {
    const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
    try {
      const data = await buildReportData(ctx);
      assert.ok(data.headline && !('error' in data.headline) && data.headline.wasteWeight! > 0, 'the expiry after 7 minutes wasted something');
      const section = /<section[^>]* id="headline"[\s\S]*?<\/section>/.exec(renderReport(data))![0];
      const value = (metric: string) => new RegExp(`data-metric="${metric}"[^>]*>([^<]*)<`).exec(section)![1]!;
      return { waste: value('wasteUsd'), weight: value('weight'), text: section.replace(/<[^>]*>/g, '') };
    } finally {
      ctx.store.close();
    }
  };
  const some = await tiles(corpus(true));
  assert.match(some.waste, /^\$[\d.]+ \+\?$/);
  assert.match(some.weight, / wt \+\?$/);
  assert.match(some.text, /[\d,]+ wt \+\?, [\d.]+% of weight \(1 request without a price left out\): expiry \+ break rewrites beyond a read/);
  // every request priced: the sums are whole, no mark
  const all = await tiles(corpus(false));
  assert.match(all.waste, /^\$[\d.]+$/);
  assert.doesNotMatch(all.text, /\+\?|without a price/);
});

test('the waste is marked +? only when requests without a price wrote expiry or break tokens, one rule in anatomy\'s waste line, its chain rows, the headline\'s tile and sentence and the top chains (anatomy marked it for any such request)', async () => {
  const session = '0ca1b2c3-0000-4000-8000-0000000000a4';
  // three prompts 7 minutes apart: each write after the first re-buys the prefix after its expiry; `mystery` is the
  // request without a price: the first (a cold write, no waste of its own) or the second (an expiry rewrite)
  const corpus = (mystery: number) =>
    writeCorpus({
      [`projects/p/${session}.jsonl`]: [0, 1, 2].flatMap((i) => [
        userPrompt(session, `2026-02-10T18:${10 + i * 7}:00.000Z`),
        assistant({ session, msg: `m${i}`, t: `2026-02-10T18:${10 + i * 7}:05.000Z`, model: i === mystery ? 'claude-mystery-9' : 'claude-opus-4-6', u: { in: 3, w5: 10_000 + 500 * i, out: 50 } }),
      ]),
    });
  const marks = async (root: string) => {
    const a = cli(['anatomy', root, '--db', ':memory:', '--timezone', 'UTC']);
    assert.equal(a.code, 0, a.stderr);
    const json = cli(['anatomy', root, '--db', ':memory:', '--timezone', 'UTC', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const totals = JSON.parse(json.stdout).totals;
    const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
    try {
      const data = await buildReportData(ctx);
      assert.ok(data.headline && !('error' in data.headline) && data.headline.wasteWeight! > 0 && data.headline.unpricedRequests === 1);
      const page = renderReport(data);
      const section = /<section[^>]* id="headline"[\s\S]*?<\/section>/.exec(page)![0];
      const chains = /<section[^>]* id="top-chains"[\s\S]*?<\/section>/.exec(page)![0];
      const waste = /^waste \(rewrites beyond a read\).*$/m.exec(a.stdout)![0];
      return {
        leftOut: totals.unpriced_tokens.expiry + totals.unpriced_tokens.break,
        line: waste,
        chainRow: /^\S+\s+main\s.*$/m.exec(a.stdout.split('\nChains by cost')[1]!)![0],
        tile: /data-metric="wasteUsd"[^>]*>([^<]*)</.exec(section)![1]!,
        sentence: /expiry and break rewrites wasted \S+(?: \+\?)?/.exec(section.replace(/<[^>]*>/g, ''))![0],
        chainFacts: /<dt>waste<\/dt><dd>([^<]*)</.exec(chains)![1]!,
      };
    } finally {
      ctx.store.close();
    }
  };
  // the request without a price wrote no expiry or break tokens, the priced ones did: the waste is whole everywhere
  const whole = await marks(corpus(0));
  assert.equal(whole.leftOut, 0);
  assert.match(whole.line, /^waste \(rewrites beyond a read\)\s+[\d,]+\s+\$[\d.]+\s+[\d.]+% of weight$/);
  assert.match(whole.chainRow, /\s[\d,]+\s+[\d,]+ \+\?\s+\$[\d.]+ \+\?(\s+yes)?$/, 'the chain\'s weight and USD leave the request out: +?, its waste does not');
  assert.match(whole.tile, /^\$[\d.]+$/);
  assert.doesNotMatch(whole.sentence, /\+\?/);
  assert.match(whole.chainFacts, /^\$[\d.]+ \([\d,]+ wt\)$/);
  // the request without a price is the expiry rewrite: the waste leaves it out, +? everywhere
  const partly = await marks(corpus(1));
  assert.ok(partly.leftOut > 0);
  assert.match(partly.line, /^waste \(rewrites beyond a read\)\s+[\d,]+ \+\?\s+\$[\d.]+ \+\?\s+[\d.]+% of weight$/);
  assert.match(partly.chainRow, /\s[\d,]+ \+\?\s+[\d,]+ \+\?\s+\$[\d.]+ \+\?(\s+yes)?$/);
  assert.match(partly.tile, /^\$[\d.]+ \+\?$/);
  assert.match(partly.sentence, /\+\?/);
  assert.match(partly.chainFacts, /^\$[\d.]+ \([\d,]+ wt\) \+\?$/);
});

test('a TTL bucket holding a changed chain of an unpriced model marks its change +?, in whatif ttl\'s rows, --json\'s changed_unpriced_chains and the report\'s TTL table, as the totals are (the rows were printed whole)', async () => {
  // two main threads writing 5-minute tokens, one priced and one of a model without a price: the override changes both
  const priced = '0ca1b2c3-0000-4000-8000-0000000000b1';
  const mystery = '0ca1b2c3-0000-4000-8000-0000000000b2';
  const thread = (session: string, model: string) =>
    [0, 1, 2].flatMap((i) => [
      userPrompt(session, `2026-02-10T18:${10 + i * 7}:00.000Z`),
      assistant({ session, msg: `${session.slice(-2)}m${i}`, t: `2026-02-10T18:${10 + i * 7}:05.000Z`, model, u: { in: 3, w5: 10_000 + 500 * i, out: 50 } }),
    ]);
  const root = writeCorpus({ [`projects/p/${priced}.jsonl`]: thread(priced, 'claude-opus-4-6'), [`projects/p/${mystery}.jsonl`]: thread(mystery, 'claude-mystery-9') });
  const text = cli(['whatif', 'ttl', root, '--db', ':memory:', '--timezone', 'UTC']);
  assert.equal(text.code, 0, text.stderr);
  const row = (prefix: RegExp) => text.stdout.split('\n').find((l) => prefix.test(l))!;
  // the kind `main` holds both chains: its shares leave the unpriced one's change out; the priced model's bucket is whole
  assert.match(row(/^kind\s+main\s/), /\s[-+][\d.]+% \+\?\s+[-+][\d.]+% \+\?\s+[\d.]+%$/);
  assert.match(row(/^model\s+claude-opus-4-6\s/), /\s[-+][\d.]+%\s+[-+][\d.]+%\s+[\d.]+%$/);
  const json = JSON.parse(cli(['whatif', 'ttl', root, '--db', ':memory:', '--timezone', 'UTC', '--json']).stdout);
  const bucket = (dimension: string, name: string) => json.buckets.find((b: any) => b.dimension === dimension && b.bucket === name);
  assert.deepEqual([bucket('kind', 'main').changed_unpriced_chains, bucket('model', 'claude-opus-4-6').changed_unpriced_chains], [1, 0]);
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const section = /<section[^>]* id="ttl-override"[\s\S]*?<\/section>/.exec(renderReport(data))![0];
    const cells = (label: string) => new RegExp(`<td>${label}</td>[\\s\\S]*?</tr>`).exec(section)![0].replace(/<[^>]*>/g, ' ');
    assert.match(cells('kind: main'), /[-+−][\d.]+% \+\?/);
    assert.doesNotMatch(cells('model: claude-opus-4-6'), /\+\?/);
  } finally {
    ctx.store.close();
  }
});

test('logs of models without a price: the waste, the TTL override, the anatomy and the cost weights are unknown in the report, as the commands print them, not 0', async () => {
  const session = '0ca1b2c3-0000-4000-8000-000000000001';
  const root = writeCorpus({
    'projects/p/0ca1b2c3-0000-4000-8000-000000000001.jsonl': [0, 1, 2].flatMap((i) => [
      userPrompt(session, `2026-02-10T18:${10 + i * 7}:00.000Z`),
      // nothing read after a gap past the TTL: expiry rewrites, a waste no price weighs
      assistant({ session, msg: `m${i}`, t: `2026-02-10T18:${10 + i * 7}:05.000Z`, model: 'claude-mystery-9', u: { in: 3, w5: 1000 * (i + 1), r: 0, out: 50 } }),
    ]),
  });
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const ttlResult = whatifTtl(await loadChains(ctx.store, ctx.filters, { keys: false }), { to: '1h', scope: 'all', weightsFor: (m, p) => ctx.prices.weightsFor(m, p) });
    assert.match(formatTtl(ttlResult), /^baseline +unknown +unknown$/m, 'the command says unknown');
    assert.ok(data.headline && !('error' in data.headline) && data.headline.weight === null);
    assert.deepEqual([data.headline.wasteWeight, data.headline.wasteUsd], [null, null]);
    assert.ok(data.ttlOverride && !('error' in data.ttlOverride));
    assert.deepEqual([data.ttlOverride.baseline, data.ttlOverride.scenario], [{ weight: null, usd: null }, { weight: null, usd: null }]);
    assert.ok(data.ttlOverride.buckets.length > 0 && data.ttlOverride.buckets.every((b) => b.baselineWeight === null && b.scenarioWeight === null));
    assert.ok(data.anatomy && !('error' in data.anatomy));
    assert.ok(data.anatomy.rows.length > 0 && data.anatomy.rows.every((r) => r.weight === null && r.usd === null));
    assert.ok(data.anatomy.rows.some((r) => r.tokens > 0), 'the tokens are known');
    // cost over time and cost by: weight null beside usd null, as summary --json gives them
    const sum = summaryJson([root]);
    assert.deepEqual([sum.totals.weight, sum.by_day[0].weight, sum.by_project[0].weight, sum.by_model[0].weight], [null, null, null, null]);
    assert.ok(data.costOverTime && !('error' in data.costOverTime) && data.costOverTime.rows.length > 0);
    assert.ok(data.costOverTime.rows.every((r) => r.usd === null && r.weight === null));
    assert.ok(data.costBy && !('error' in data.costBy) && data.costBy.rows.length > 0);
    assert.ok(data.costBy.rows.every((r) => r.usd === null && r.weight === null));
    const page = renderReport(data);
    const section = (id: string) => new RegExp(`<section[^>]* id="${id}"[\\s\\S]*?</section>`).exec(page)![0];
    assert.doesNotMatch(section('headline'), /\$0\.00|0 wt/);
    assert.match(section('headline'), /data-metric="wasteUsd" data-value="null"[^>]*>unknown</);
    assert.doesNotMatch(section('ttl-override'), /\$0\.00|0 wt/);
    assert.match(section('ttl-override'), /<dt>baseline<\/dt><dd>unknown/);
    // unknown but for the class no request wrote a token of (break), which weighs 0 whatever its price
    assert.match(section('anatomy'), /<td[^>]*>main<\/td>(<td[^>]*>unknown<\/td>){3}<td[^>]*>0<\/td><td[^>]*>unknown<\/td>/);
  } finally {
    ctx.store.close();
  }
});

test('logs of models without a price that wrote no expiry or break token: the report\'s waste is 0, as anatomy\'s waste line says, not unknown', async () => {
  const session = '0ca1b2c3-0000-4000-8000-000000000002';
  const root = writeCorpus({
    'projects/p/0ca1b2c3-0000-4000-8000-000000000002.jsonl': [0, 1, 2].flatMap((i) => [
      userPrompt(session, `2026-02-10T18:${10 + i}:00.000Z`),
      assistant({ session, msg: `m${i}`, t: `2026-02-10T18:${10 + i}:05.000Z`, model: 'claude-mystery-9', u: { in: 3, w5: 1000, r: 1000 * i, out: 50 } }),
    ]),
  });
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    assert.ok(data.headline && !('error' in data.headline) && data.headline.weight === null);
    // (it was unknown: the report and anatomy disagreed; second review)
    assert.deepEqual([data.headline.wasteWeight, data.headline.wasteUsd, data.headline.wasteUnpricedTokens], [0, 0, 0]);
    const anatomy = JSON.parse(cli(['anatomy', root, '--db', ':memory:', '--timezone', 'UTC', '--json']).stdout);
    assert.equal(anatomy.totals.waste_weight, data.headline.wasteWeight);
    assert.match(cli(['anatomy', root, '--db', ':memory:', '--timezone', 'UTC']).stdout, /^waste \(rewrites beyond a read\)\s+0\s+\$0\.0000/m);
    // the anatomy table: the classes it wrote unknown, those it wrote no token of 0, its rewrite share 0%
    const page = renderReport(data);
    const anatomySection = /<section[^>]* id="anatomy"[\s\S]*?<\/section>/.exec(page)![0];
    assert.match(anatomySection, /<td[^>]*>main<\/td><td[^>]*>unknown<\/td><td[^>]*>unknown<\/td><td[^>]*>0<\/td><td[^>]*>0<\/td><td[^>]*>0\.0%<\/td>/);
  } finally {
    ctx.store.close();
  }
});

test('logs without requests: the headline hit ratio is n/a, as anatomy gives null, not 0%', async () => {
  const root = writeCorpus({ 'projects/p/notes.txt': 'not a transcript\n' });
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const anatomy = analyzeAnatomy(await loadChains(ctx.store, ctx.filters, { keys: false }), { weightsFor: (m, p) => ctx.prices.weightsFor(m, p) });
    assert.equal(anatomy.totals.hit_ratio, null);
    assert.ok(data.headline && !('error' in data.headline));
    assert.equal(data.headline.requests, 0);
    assert.equal(data.headline.hitRatio, null);
    const page = renderReport(data);
    assert.match(page, /data-metric="hitRatio" data-value="null"[^>]*>n\/a</);
    assert.match(page, /over 0 requests; no prompt tokens were read or written/);
  } finally {
    ctx.store.close();
  }
});

test('a whole file skipped (a dangling link) is listed by path alone in data quality, as summary lists it, not at line 0', async () => {
  const session = '0ca1b2c3-0000-4000-8000-000000000002';
  const root = writeCorpus({ 'projects/p/0ca1b2c3-0000-4000-8000-000000000002.jsonl': [userPrompt(session, '2026-02-10T18:10:00.000Z'), assistant({ session, msg: 'm1', t: '2026-02-10T18:10:05.000Z', u: { in: 3, w5: 100, out: 5 } })] });
  symlinkSync(join(root, 'nowhere.jsonl'), join(root, 'projects/p/dangling.jsonl'));
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const skipped = summaryJson([root]).quality.skipped as { reason: string; examples: { file: string; line: number | null }[] }[];
    const dangling = skipped.flatMap((s) => s.examples).find((e) => e.file.endsWith('dangling.jsonl'));
    assert.ok(dangling && dangling.line === null, 'summary names the file without a line');
    assert.ok(data.dataQuality && !('error' in data.dataQuality));
    const example = data.dataQuality.skipped.flatMap((s) => s.examples).find((e) => e.path.endsWith('dangling.jsonl'));
    assert.deepEqual(example && [example.path, example.line], [dangling.file, null]);
    const page = renderReport(data);
    assert.match(page, /dangling\.jsonl<\/span>/);
    assert.doesNotMatch(page, /dangling\.jsonl:/);
  } finally {
    ctx.store.close();
  }
});

test('the waste tile counts the requests without a price whose waste it leaves out, those that wrote expiry or break tokens, not every request without a price', async () => {
  const session = '0ca1b2c3-0000-4000-8000-0000000000a5';
  // three prompts 7 minutes apart; the first two without a price: #1 a cold write (no waste), #2 an expiry rewrite
  // (its waste left out); #3 priced, an expiry rewrite, so the waste is known in part
  const root = writeCorpus({
    [`projects/p/${session}.jsonl`]: [0, 1, 2].flatMap((i) => [
      userPrompt(session, `2026-02-10T18:${10 + i * 7}:00.000Z`),
      assistant({ session, msg: `m${i}`, t: `2026-02-10T18:${10 + i * 7}:05.000Z`, model: i < 2 ? 'claude-mystery-9' : 'claude-opus-4-6', u: { in: 3, w5: 10_000 + 500 * i, out: 50 } }),
    ]),
  });
  const json = cli(['anatomy', root, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(json.code, 0, json.stderr);
  const totals = JSON.parse(json.stdout).totals;
  assert.deepEqual([totals.unpriced_requests, totals.unpriced_waste_requests], [2, 1]);
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    assert.ok(data.headline && !('error' in data.headline) && data.headline.wasteWeight! > 0 && data.headline.unpricedRequests === 2);
    const text = /<section[^>]* id="headline"[\s\S]*?<\/section>/.exec(renderReport(data))![0].replace(/<[^>]*>/g, '');
    assert.match(text, /[\d,]+ wt \+\?, [\d.]+% of weight \(1 request without a price left out\): expiry \+ break rewrites beyond a read/);
    // the cost tile still counts every request without a price: none of their cost is in it
    assert.match(text, /2 requests without a price not included/);
  } finally {
    ctx.store.close();
  }
});

test('the top chains and the most wasteful chain rank by the USD of the waste: 17,250 wt of Sonnet waste ($0.0518) is below 11,500 wt of Opus ($0.0575)', async () => {
  const opus = '0ca1b2c3-0000-4000-8000-0000000000f1';
  const sonnet = '0ca1b2c3-0000-4000-8000-0000000000f2';
  // each session writes a prefix, then 10 minutes later (expired) writes it again: the second write is all waste,
  // at 1.25 − 0.1 = 1.15 a token: Opus 10,000 × 1.15 = 11,500 wt × $5/M, Sonnet 15,000 × 1.15 = 17,250 wt × $3/M
  const session = (id: string, model: string, w5: number) =>
    [0, 1].flatMap((i) => [
      userPrompt(id, `2026-02-10T18:${10 + i * 10}:00.000Z`),
      assistant({ session: id, msg: `${id}-m${i}`, t: `2026-02-10T18:${10 + i * 10}:05.000Z`, model, u: { in: 3, w5, out: 100 } }),
    ]);
  const root = writeCorpus({ [`projects/o/${opus}.jsonl`]: session(opus, 'claude-opus-4-6', 10_000), [`projects/s/${sonnet}.jsonl`]: session(sonnet, 'claude-sonnet-4-5', 15_000) });
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    assert.ok(data.topChains && !('error' in data.topChains));
    assert.deepEqual(
      data.topChains.chains.map((c) => [c.chainId, c.wasteWeight, fmtUsdOf(c.wasteUsd!)]),
      [
        [opus, 11_500, '$0.0575'],
        [sonnet, 17_250, '$0.0518'],
      ],
    );
    const text = renderReport(data).replace(/<[^>]*>/g, '');
    assert.match(text, /The most wasteful chain, “main” in \S+, wasted \$0\.0575 \(11,500 wt\)/);
  } finally {
    ctx.store.close();
  }
});

test('a chain without prompt tokens wasted nothing: it is counted, not listed among the top chains by waste', async () => {
  const session = '0ca1b2c3-0000-4000-8000-000000000003';
  const root = writeCorpus({ 'projects/p/0ca1b2c3-0000-4000-8000-000000000003.jsonl': [userPrompt(session, '2026-02-10T18:10:00.000Z'), assistant({ session, msg: 'm1', t: '2026-02-10T18:10:05.000Z', u: { out: 5 } })] });
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const anatomy = analyzeAnatomy(await loadChains(ctx.store, ctx.filters, { keys: false }), { weightsFor: (m, p) => ctx.prices.weightsFor(m, p) });
    assert.deepEqual(anatomy.chains.map((c) => [c.hit_ratio, c.waste_weight]), [[null, 0]]);
    assert.ok(data.topChains && !('error' in data.topChains));
    assert.deepEqual(data.topChains, { chains: [], withoutWaste: 1 });
    assert.match(renderReport(data), /No chain wasted anything: the 1 chain in scope re-bought no context after an expiry or a break\./);
  } finally {
    ctx.store.close();
  }
});

/** One session per model: 2 priced models and `n` without a price (claude-nope-00…), a request each. */
async function unpricedModels(n: number) {
  const files: Record<string, object[]> = {};
  const models = ['claude-opus-4-6', 'claude-sonnet-4-5-20250929', ...Array.from({ length: n }, (_, i) => `claude-nope-${String(i).padStart(2, '0')}`)];
  models.forEach((model, i) => {
    const s = `s${i}`;
    files[`projects/-p/${s}.jsonl`] = [userPrompt(s, '2026-02-11T03:00:00.000Z'), assistant({ session: s, msg: `m${i}`, t: '2026-02-11T03:00:01.000Z', model, u: { in: 10, w5: 1000 } })];
  });
  return { models, ctx: await openContext({ paths: [writeCorpus(files)], db: ':memory:', timezone: 'UTC' }) };
}

test('models without a price folded into "other" are counted in the cost-by reading, so the names listed do not read as all of them', async () => {
  // 2 priced models and 20 without a price: the top COST_BY_KEYS keep some of the unpriced, the rest fold
  const { ctx } = await unpricedModels(20);
  try {
    const data = await buildReportData(ctx);
    const rows = (data.costBy as Extract<typeof data.costBy, { rows: unknown }>).rows.filter((r) => r.dimension === 'model');
    const named = new Set(rows.filter((r) => r.key !== null && r.usd === null).map((r) => r.key));
    const folded = 20 - named.size;
    assert.ok(folded > 0, 'some unpriced models are folded into the rest');
    assert.equal(rows.find((r) => r.key === null)!.unpricedGroups, folded);
    const page = renderReport(data);
    // more than 3 folded: counted, not named
    assert.equal(rows.find((r) => r.key === null)!.unpricedNames, undefined);
    assert.match(page, new RegExp(`Not drawn, their cost unknown \\(no price\\): model “claude-nope-00”[^.]* and ${folded} more models\\.`));
  } finally {
    ctx.store.close();
  }
});

test('a few models without a price folded into "other" are named in the cost-by reading, not only counted', async () => {
  // 2 priced models and 12 without: the top COST_BY_KEYS keep 10 of the unpriced (by name), 2 fold
  // (the reading said 'and 2 more models', and with none shown '1 agent type', naming none)
  const { models, ctx } = await unpricedModels(12);
  try {
    const data = await buildReportData(ctx);
    const rows = (data.costBy as Extract<typeof data.costBy, { rows: unknown }>).rows.filter((r) => r.dimension === 'model');
    const shownUnpriced = [...new Set(rows.filter((r) => r.key !== null && r.usd === null).map((r) => r.key!))];
    const rest = rows.find((r) => r.key === null)!;
    assert.equal(rest.unpricedGroups, 12 - shownUnpriced.length);
    const folded = models.slice(2).filter((m) => !shownUnpriced.includes(m));
    assert.ok(folded.length > 0 && folded.length <= 3, 'a few unpriced models are folded into the rest');
    assert.deepEqual(rest.unpricedNames, folded);
    const listed = [...shownUnpriced, ...folded].map((m) => `“${m}”`).join(', ');
    assert.ok(renderReport(data).includes(`Not drawn, their cost unknown (no price): model ${listed}.`));
  } finally {
    ctx.store.close();
  }
});

test('keepalive at budget 0 (no ping at all) is not offered as the best what-if: the headline weighs the what-ifs that change something', async () => {
  const s = 'k0';
  const files = {
    [`projects/-p/${s}.jsonl`]: [
      userPrompt(s, '2026-02-11T03:00:00.000Z'),
      assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', model: 'claude-sonnet-4-5-20250929', u: { in: 10, w5: 1000 } }),
      assistant({ session: s, msg: 'b', t: '2026-02-11T03:00:11.000Z', model: 'claude-sonnet-4-5-20250929', u: { in: 10, w5: 100, r: 1000 } }),
    ],
  };
  const ctx = await openContext({ paths: [writeCorpus(files)], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const best = (data.headline as Extract<typeof data.headline, { bestWhatIf: unknown }>).bestWhatIf;
    assert.ok(best, 'the TTL override is still weighed');
    assert.doesNotMatch(best.label, /budget 0\b/);
    assert.doesNotMatch(renderReport(data), /budget 0 per gap, changes cost by 0\.0%/);
  } finally {
    ctx.store.close();
  }
});

test('a what-if that changes nothing (forcing the 1-hour TTL where every chain writes at 1 hour) is not crowned the least costly: the headline says there is nothing to gain', async () => {
  const s = '0ca1b2c3-0000-4000-8000-0000000000d3';
  // one main chain of 1-hour writes, gaps of 7 minutes: no 5-minute chain, so the override changes nothing and keepalive has no gap to ping
  const files = {
    [`projects/p/${s}.jsonl`]: [0, 1, 2].flatMap((i) => [
      userPrompt(s, `2026-02-10T18:${10 + i * 7}:00.000Z`),
      assistant({ session: s, msg: `m${i}`, t: `2026-02-10T18:${10 + i * 7}:05.000Z`, u: { in: 3, w1h: 1000, r: 5000 * i, out: 5 } }),
    ]),
  };
  const ctx = await openContext({ paths: [writeCorpus(files)], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    assert.ok(data.headline && !('error' in data.headline) && data.headline.bestWhatIf);
    assert.deepEqual([data.headline.bestWhatIf.savingUsd, data.headline.bestWhatIf.savingWeight], [0, 0], 'the override changes nothing');
    const section = /<section[^>]* id="headline"[\s\S]*?<\/section>/.exec(renderReport(data))![0];
    const text = section.replace(/<[^>]*>/g, '');
    assert.doesNotMatch(text, /least costly|changes cost by/);
    assert.match(text, /; there is nothing to gain: no what-if tried would save anything, and force the 1-hour cache TTL changes nothing\./);
    assert.match(section, /data-metric="bestSavingUsd" data-value="0">nothing to gain</);
  } finally {
    ctx.store.close();
  }
  // an override that changes nothing beside keepalive budgets that all cost more: still nothing to gain, not the override as the least costly
  const { bestWhatIf } = await import('../../src/report/build.js');
  const { headlineReading } = await import('../../src/report/section-headline.js');
  const ttl = { baseline_weight: 1_000_000, scenario_weight: 1_000_000, baseline_usd: 1, scenario_usd: 1 };
  const keepalive = { baseline_weight: 1_000_000, baseline_usd: 1, best_budget: 0, budgets: [{ budget: 0, pings: 0, net_saving_weight: 0, net_saving_usd: 0 }, { budget: 1, pings: 3, net_saving_weight: -30_000, net_saving_usd: -0.03 }] };
  const best = bestWhatIf(ttl as never, keepalive as never)!;
  const h = { ...(await import('./fixtures.js')).fixtureReport().headline, bestWhatIf: best } as never;
  assert.match(headlineReading(h), /; there is nothing to gain: no what-if tried would save anything, and force the 1-hour cache TTL changes nothing\.$/);
  // one that saves is crowned as before
  const saving = bestWhatIf({ ...ttl, scenario_usd: 0.9, scenario_weight: 900_000 } as never, keepalive as never)!;
  assert.match(headlineReading({ ...(h as object), bestWhatIf: saving } as never), /the best what-if, force the 1-hour cache TTL, would save \$0\.10+ \(10\.0% of cost\)\.$/);
});

/** The headline section of the report over `files`: its text, its tiles' values by metric, and the data. */
async function headlineOf(files: Record<string, object[]>) {
  const ctx = await openContext({ paths: [writeCorpus(files)], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const html = renderReport(data);
    const section = /<section[^>]* id="headline"[\s\S]*?<\/section>/.exec(html)![0];
    const value = (metric: string) => new RegExp(`data-metric="${metric}"[^>]*>([^<]*)<`).exec(section)![1]!;
    const keepalive = /<section[^>]* id="keepalive"[\s\S]*?<\/section>/.exec(html)?.[0].replace(/<[^>]*>/g, '') ?? '';
    const ttl = /<section[^>]* id="ttl-override"[\s\S]*?<\/section>/.exec(html)?.[0].replace(/<[^>]*>/g, '') ?? '';
    return { text: section.replace(/<[^>]*>/g, ''), value, keepalive, ttl, data };
  } finally {
    ctx.store.close();
  }
}

/** A session of three requests `gapMin` minutes apart on `model`, each writing 10000+500·i tokens at `ttl`. */
function chainOf(session: string, hour: number, gapMin: number, model: string, ttl: 'w5' | 'w1h'): Record<string, object[]> {
  return {
    [`projects/p/${session}.jsonl`]: [0, 1, 2].flatMap((i) => {
      const at = (s: number) => new Date(Date.UTC(2026, 1, 10, hour, i * gapMin, s)).toISOString();
      return [userPrompt(session, at(0)), assistant({ session, msg: `m${session.slice(-2)}${i}`, t: at(5), model, u: { in: 3, [ttl]: 10_000 + 500 * i, out: 50 } })];
    }),
  };
}

test('a best what-if that changes nothing priced but changes chains or gaps of unpriced models is not "nothing to gain": its effect on them is unknown', async () => {
  const opus = '0ca1b2c3-0000-4000-8000-0000000000e1';
  const mystery = '0ca1b2c3-0000-4000-8000-0000000000e2';
  // A: the opus session writes at 1 hour (the override changes nothing there); the unpriced one at 5 minutes, 6 minutes apart
  const a = await headlineOf({ ...chainOf(opus, 10, 6, 'claude-opus-4-6', 'w1h'), ...chainOf(mystery, 12, 6, 'claude-mystery-9', 'w5') });
  assert.doesNotMatch(a.text, /nothing to gain/);
  assert.match(a.text, /; no what-if tried would save anything on priced requests: force the 1-hour cache TTL changes nothing priced, and its effect on 1 chain of unpriced models is unknown\./);
  assert.equal(a.value('bestSavingUsd'), 'nothing priced to gain');
  // the TTL section says it as the headline does, not "changes nothing"
  assert.match(a.ttl, /Forcing the 1-hour TTL changes nothing priced: no priced request would cost more or less, and its effect on 1 chain of unpriced models is unknown\./);
  assert.doesNotMatch(a.ttl, /changes nothing:/);
  // B: the opus session writes at 5 minutes with gaps no ping reaches; keepalive pings the unpriced session's gaps
  const b = await headlineOf({ ...chainOf(opus, 10, 2, 'claude-opus-4-6', 'w5'), ...chainOf(mystery, 12, 6, 'claude-mystery-9', 'w5') });
  assert.doesNotMatch(b.text, /nothing to gain/);
  assert.match(b.text, /changes? nothing priced, and (its|their) effect on [^.]*2 gaps of unpriced models[^.]* is unknown\./);
  // the names stand in the sentence, not a label's parentheses within the sentence's own
  assert.doesNotMatch(b.text, /\([^()]*\(/);
  // every chain priced and unchanged: nothing to gain, as before
  const c = await headlineOf(chainOf(opus, 10, 6, 'claude-opus-4-6', 'w1h'));
  assert.match(c.text, /there is nothing to gain/);
});

test('the headline sentence marks its cost and waste +? as its tiles do when some requests have no price, and the cost tile is marked too', async () => {
  const s = '0ca1b2c3-0000-4000-8000-0000000000e3';
  const files = (middle: string) => ({
    [`projects/p/${s}.jsonl`]: [0, 1, 2].flatMap((i) => [
      userPrompt(s, `2026-02-10T18:${10 + i * 7}:00.000Z`),
      assistant({ session: s, msg: `m${i}`, t: `2026-02-10T18:${10 + i * 7}:05.000Z`, model: i === 1 ? middle : 'claude-opus-4-6', u: { in: 3, w5: 10_000 + 500 * i, out: 50 } }),
    ]),
  });
  const h = await headlineOf(files('claude-mystery-9'));
  assert.match(h.value('usd'), /^\$[\d.]+ \+\?$/);
  assert.match(h.value('wasteUsd'), /^\$[\d.]+ \+\?$/);
  assert.match(h.text, /^\s*\$[\d.]+ \+\? over 3 requests; .* wasted \$[\d.]+ \+\? \([\d.]+% of weight\)/m);
  // all priced: no mark anywhere
  const whole = await headlineOf(files('claude-opus-4-6'));
  assert.match(whole.value('usd'), /^\$[\d.]+$/);
  assert.doesNotMatch(whole.text, /\+\?/);
});

test('the best what-if\'s saving is marked +? in the headline where the keepalive section marks the same number: gaps of unpriced models are left out of it', async () => {
  const opus = '0ca1b2c3-0000-4000-8000-0000000000e4';
  const mystery = '0ca1b2c3-0000-4000-8000-0000000000e5';
  const h = await headlineOf({ ...chainOf(opus, 10, 6, 'claude-opus-4-6', 'w5'), ...chainOf(mystery, 12, 15, 'claude-mystery-9', 'w5') });
  const best = h.data.headline && !('error' in h.data.headline) ? h.data.headline.bestWhatIf : null;
  assert.ok(best && best.label.startsWith('keepalive') && best.savingUsd! > 0, 'keepalive saves on the opus gaps');
  const net = fmtUsdOf(best.savingUsd!);
  assert.ok(h.keepalive.includes(`${net} +?`), 'the keepalive section marks the net');
  assert.equal(h.value('bestSavingUsd'), `${net} +?`);
  assert.match(h.text, new RegExp(`would save ${net.replace(/[$.]/g, '\\$&')} \\+\\? \\([\\d.]+% of cost\\); its effect on 2 gaps of unpriced models is unknown\\.`));
});

test('a price table whose 1-hour write costs what a read does has no break-even share: the TTL section shows none, not "f* = Infinity%"', async () => {
  const session = '0ca1b2c3-0000-4000-8000-000000000002';
  const root = writeCorpus({
    'projects/p/0ca1b2c3-0000-4000-8000-000000000002.jsonl': [
      assistant({ session, msg: 'm1', t: '2026-02-10T18:00:00.000Z', u: { w5: 10_000 } }),
      assistant({ session, msg: 'm2', t: '2026-02-10T18:10:00.000Z', u: { w5: 10_000 } }),
    ],
    'prices.json': JSON.stringify({ date: '2026-01-01', models: { 'claude-opus-4-6': { input: 5, write_5m: 6.25, write_1h: 0.5, read: 0.5, output: 25 } } }),
  });
  const ctx = await openContext({ paths: [join(root, 'projects')], db: ':memory:', timezone: 'UTC', pricing: join(root, 'prices.json') });
  try {
    const data = await buildReportData(ctx);
    assert.ok(data.ttlOverride && !('error' in data.ttlOverride));
    assert.equal(data.ttlOverride.breakEvenShare, null);
    assert.ok(data.ttlOverride.deltaShare! < 0, 'forcing 1h saves: its writes cost a read');
    assert.doesNotMatch(renderReport(data), /f\* = (Infinity|NaN|-Infinity)%|Infinity%|NaN%/);
  } finally {
    ctx.store.close();
  }
});

test('control characters in a project, a model, an agent type and a file path show as ? on the page and in its charts, as the terminal tables print them: NUL does not vanish', async () => {
  const s = 'cc';
  // NUL, other C0, DEL, C1 (NEL, CSI), the line and paragraph separators, a right-to-left override
  const odd = 'A\u0000B\u0001C\t\nD\u001bE\u007fF\u0085G\u009bH\u2028I\u2029J\u202eK';
  const dir = `projects/-p${odd.replace('\u0000', '')}`;
  const files = {
    [`${dir}/${s}.jsonl`]: [
      userPrompt(s, '2026-02-11T03:00:00.000Z', 'go', undefined, `/w/${odd}`),
      assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', model: 'claude-x\u0000y', u: { in: 10, w5: 1000 }, cwd: `/w/${odd}` }),
      assistant({ session: s, msg: 'b', t: '2026-02-11T03:00:02.000Z', model: 'claude-xy', u: { in: 10, w5: 100, r: 1000 }, cwd: `/w/${odd}` }),
      {
        type: 'assistant', sessionId: s, timestamp: '2026-02-11T03:00:03.000Z', requestId: 'req_spawn', cwd: `/w/${odd}`,
        message: { id: 'msg_spawn', model: 'claude-opus-4-6', usage: { input_tokens: 1, output_tokens: 1 }, content: [{ type: 'tool_use', id: 'toolu_x', name: 'Task', input: { subagent_type: 'p', prompt: 'p' } }] },
      },
    ],
    [`${dir}/${s}/subagents/agent-a1.jsonl`]: [
      userPrompt(s, '2026-02-11T03:00:05.000Z', 'sub', 'a1', `/w/${odd}`),
      assistant({ session: s, msg: 'c', t: '2026-02-11T03:00:06.000Z', u: { in: 5, out: 5, w5: 900 }, agentId: 'a1', cwd: `/w/${odd}` }),
    ],
    [`${dir}/${s}/subagents/agent-a1.meta.json`]: JSON.stringify({ agentType: `agent${odd}`, toolUseId: 'toolu_x' }),
    [`${dir}/bad.jsonl`]: 'not json\n',
  };
  const ctx = await openContext({ paths: [writeCorpus(files)], db: ':memory:', timezone: 'UTC' });
  try {
    const page = renderReport(await buildReportData(ctx));
    const shown = 'A?B?C??D?E?F?G?H?I?J?K';
    const outside = page.replace(/<script[^>]*>[\s\S]*?<\/script>/g, '');
    assert.doesNotMatch(outside, /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\u202e]/, 'no control character in the page outside its scripts');
    assert.match(outside, new RegExp(`<td>/w/${shown.replace(/\?/g, '\\?')}</td>`), 'the project');
    assert.match(outside, new RegExp(`<td>agent${shown.replace(/\?/g, '\\?')}</td>`), 'the agent type');
    // the HTML parser drops a NUL from text: written as is, the two models read as one name twice
    assert.match(outside, /<td>claude-x\?y<\/td>/);
    assert.match(outside, /<td>claude-xy<\/td>/);
    assert.match(outside.replaceAll('<wbr>', ''), new RegExp(`-p${'AB?C??D?E?F?G?H?I?J?K'.replace(/\?/g, '\\?')}/bad\\.jsonl:1</span>`), 'the skipped line\'s location');
    const charts = /<script type="application\/json" id="cachelens-charts">([\s\S]*?)<\/script>/.exec(page)![1]!;
    assert.doesNotMatch(charts, /\\u00[01][0-9a-f]|\\u007f|\\u00[89][0-9a-f]|\\u202[89e]|[\u007f-\u009f]/, 'the charts draw no control character');
    assert.ok(JSON.parse(charts).charts.some((c: { data: { rows?: Array<{ key?: string }> } }) => c.data.rows?.some((r) => r.key === `agent${shown}`)));
    const data = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(page)![1]!);
    assert.ok(JSON.stringify(data).includes(JSON.stringify(`agent${odd}`)), 'the data block keeps the names exactly');
    assert.doesNotMatch(/id="cachelens-data">([\s\S]*?)<\/script>/.exec(page)![1]!, /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/, 'as escapes');
  } finally {
    ctx.store.close();
  }
});

test('a session without requests: the cross-tab says its chain sent none, so "0 chains" in the headline and "1 chain" there do not contradict', async () => {
  const quiet = writeCorpus({ 'projects/-p/q1.jsonl': [userPrompt('q1', '2026-02-11T03:00:00.000Z'), { type: 'system', sessionId: 'q1', timestamp: '2026-02-11T03:00:01.000Z', content: 'x' }] });
  const ctx = await openContext({ paths: [quiet], db: ':memory:', timezone: 'UTC' });
  try {
    const page = renderReport(await buildReportData(ctx)).replace(/<script[^>]*>[\s\S]*?<\/script>/g, '');
    assert.match(page, /0 requests, 0 sessions, 0 chains</);
    assert.match(page, /“main” \(1 chain, without a request\) has none\./);
    assert.doesNotMatch(page, /\(1 chain\) has none/);
    assert.match(page, /No chain with a request in scope\./);
  } finally {
    ctx.store.close();
  }
  // beside a session with a request: one of the two chains sent none
  const s = 'q2';
  writeCorpus({ [`projects/-p/${s}.jsonl`]: [userPrompt(s, '2026-02-11T04:00:00.000Z'), assistant({ session: s, msg: 'a', t: '2026-02-11T04:00:01.000Z', u: { in: 10, w5: 1000 } })] }, quiet);
  const both = await openContext({ paths: [quiet], db: ':memory:', timezone: 'UTC' });
  try {
    const page = renderReport(await buildReportData(both)).replace(/<script[^>]*>[\s\S]*?<\/script>/g, '');
    assert.match(page, /1 request, 1 session, 1 chain</);
    assert.match(page, /“main” \(2 chains, 1 without a request\) has none\./);
  } finally {
    both.store.close();
  }
});

test('data quality under a filter says that it counts everything read, and which of its facts the filter narrows; the subtitle names the filter', async () => {
  const files = {
    'projects/-a/qa.jsonl': [
      userPrompt('qa', '2026-02-01T10:00:00.000Z', 'go', undefined, '/w/alpha'),
      assistant({ session: 'qa', msg: 'a1', t: '2026-02-01T10:00:01.000Z', u: { in: 5, out: 5, w5: 2000 }, cwd: '/w/alpha' }),
    ],
    // beyond --project alpha: a model without a price, a usage without its split and a bad line
    'projects/-b/qb.jsonl': [
      userPrompt('qb', '2026-02-03T10:00:00.000Z', 'go', undefined, '/w/beta'),
      assistant({ session: 'qb', msg: 'b1', t: '2026-02-03T10:00:01.000Z', model: 'claude-mystery', u: { in: 5, out: 5, w5: 2000, split: false }, cwd: '/w/beta' }),
      'not json' as unknown as object,
    ],
  };
  const root = writeCorpus(files);
  const quality = async (filters: { project?: string; since?: string }) => {
    const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC', ...filters });
    try {
      const page = renderReport(await buildReportData(ctx));
      // the panel, and the page's subtitle under its title
      return [/<section class="card" id="data-quality"[\s\S]*?<\/section>/, /<p class="meta">[^<]*<\/p>/].map((re) => re.exec(page)![0].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')).join(' | ');
    } finally {
      ctx.store.close();
    }
  };
  const all = await quality({});
  assert.match(all, /Read 2 files and 5 lines; skipped 1 \(1 invalid_json\); removed 0 duplicate copies; 1 request from 1 model without a price\. files/);
  assert.match(all, / requests 2 /);
  assert.doesNotMatch(all, /only --/);
  const alpha = await quality({ project: 'alpha' });
  assert.match(alpha, /Read 2 files and 5 lines; skipped 1 \(1 invalid_json\); removed 0 duplicate copies; 1 request from 1 model without a price\. These count everything read, not only the 1 request chosen by --project alpha\./);
  assert.match(alpha, / requests \(filtered\) 1 /);
  assert.match(alpha, / usage without 5m\/1h split \(filtered\) 0 /);
  assert.match(alpha, /\|\s+2026-02-01 10:00 UTC – 2026-02-01 10:00 UTC · \S+ · only --project alpha · generated /, 'the subtitle names the filter');
  assert.match(await quality({ project: 'w/al', since: '2026-02-01' }), /not only the 1 request chosen by --since 2026-02-01 --project w\/al\./);
});

test('a price table whose 1-hour write costs less than a 5-minute one (f* < 0) or whose read costs more than a 5-minute write (f* > 100%): the TTL section and whatif ttl say what f* means, not "f* = −15.0%"', async () => {
  const session = '0ca1b2c3-0000-4000-8000-000000000003';
  const corpus = (prices: object) =>
    writeCorpus({
      [`projects/p/${session}.jsonl`]: [
        assistant({ session, msg: 'm1', t: '2026-02-10T18:00:00.000Z', u: { w5: 10_000 } }),
        assistant({ session, msg: 'm2', t: '2026-02-10T18:10:00.000Z', u: { w5: 10_000 } }),
      ],
      'prices.json': JSON.stringify({ date: '2026-01-01', models: { 'claude-opus-4-6': { input: 5, read: 0.5, output: 25, ...prices } } }),
    });
  const cases = [
    // f* = (5.5 − 6.25) / (5.5 − 0.5) = −15%
    { prices: { write_5m: 6.25, write_1h: 5.5 }, fStar: -0.15, bound: 'below 0', meaning: 'forcing 1h saves at any expiry share' },
    // f* = (6 − 0.4) / (6 − 0.5) ≈ 101.8%
    { prices: { write_5m: 0.4, write_1h: 6 }, fStar: 5.6 / 5.5, bound: 'above 100%', meaning: 'forcing 1h never pays' },
  ];
  for (const c of cases) {
    const root = corpus(c.prices);
    const ctx = await openContext({ paths: [join(root, 'projects')], db: ':memory:', timezone: 'UTC', pricing: join(root, 'prices.json') });
    try {
      const t = whatifTtl(await loadChains(ctx.store, ctx.filters, { keys: false }), { to: '1h', scope: 'all', weightsFor: (m, p) => ctx.prices.weightsFor(m, p) });
      // the JSON keeps the formula's number
      assert.ok(Math.abs(t.break_even_share! - c.fStar) < 1e-9, `f* ${t.break_even_share}`);
      assert.match(formatTtl(t), new RegExp(`break-even f\\* ${c.bound} \\(${c.meaning}\\): forcing 1h (saves|costs more)`));
      const data = await buildReportData(ctx);
      assert.ok(data.ttlOverride && !('error' in data.ttlOverride));
      assert.ok(Math.abs(data.ttlOverride.breakEvenShare! - c.fStar) < 1e-9);
      const page = renderReport(data);
      assert.ok(page.includes(`the break-even f* is ${c.bound}: ${c.meaning})`), 'the reading says what f* means');
      assert.ok(page.includes(`${c.bound} (${c.meaning})`), 'the facts row too');
      assert.doesNotMatch(page, /f\* = [−-]?1[05]\d?\.\d%|break-even f\* = /);
    } finally {
      ctx.store.close();
    }
  }
});

test('the best what-if on an exact tie names every tied what-if: the 1-hour TTL and a keepalive budget saving the same, and the budgets that net as much as the best', async () => {
  const { bestWhatIf } = await import('../../src/report/build.js');
  const { headlineReading, renderHeadline } = await import('../../src/report/section-headline.js');
  const ttl = { baseline_weight: 1_000_000, scenario_weight: 900_000, baseline_usd: 0.7, scenario_usd: 0.2 };
  const row = (budget: number | 'inf', w: number, usd: number) => ({ budget, pings: budget === 0 ? 0 : 5, net_saving_weight: w, net_saving_usd: usd });
  // budget 2 nets what the TTL override saves (0.7 − 0.2 is 0.49999999999999994: float noise is no winner); 3 and ∞ net as much as 2
  const keepalive = { baseline_weight: 1_000_000, baseline_usd: 0.7, best_budget: 2, budgets: [row(0, 0, 0), row(1, 40_000, 0.2), row(2, 100_000, 0.5), row(3, 100_000, 0.5), row('inf', 100_000, 0.5)] };
  const best = bestWhatIf(ttl as never, keepalive as never)!;
  assert.deepEqual([best.label, ...(best.tiedWith ?? [])].sort(), ['force the 1-hour cache TTL', 'keepalive pings, budget 2 per gap (every larger budget, unbounded included, nets the same)']);
  const h = { ...(await import('./fixtures.js')).fixtureReport().headline, bestWhatIf: best } as never;
  const reading = headlineReading(h);
  assert.match(reading, /the best what-ifs tie: “(force the 1-hour cache TTL|keepalive pings, [^”]+)” and “(force the 1-hour cache TTL|keepalive pings, [^”]+)” would each save \$0\.50+ \(71\.4% of cost\)\.$/);
  assert.match(reading, /force the 1-hour cache TTL/);
  assert.match(reading, /keepalive pings, budget 2 per gap/);
  const tile = String(renderHeadline(h).body).replace(/<[^>]*>/g, '');
  assert.match(tile, /saves 71\.4% of cost with each of “.+” and “.+”/);
  assert.match(tile, /force the 1-hour cache TTL/);
  assert.match(tile, /keepalive pings, budget 2 per gap/);
  // USD unknown: the weight decides, and a tie of weights names both
  const unpriced = bestWhatIf({ ...ttl, baseline_usd: 0, scenario_usd: 0 } as never, { ...keepalive, baseline_usd: 0, budgets: keepalive.budgets.map((b) => ({ ...b, net_saving_usd: 0 })) } as never)!;
  assert.equal(unpriced.tiedWith?.length, 1);
  assert.deepEqual([unpriced.savingShare, unpriced.shareOf], [0.1, 'weight']);
  // no tie: one name, no tiedWith
  const alone = bestWhatIf({ ...ttl, scenario_usd: 0.1, scenario_weight: 880_000 } as never, keepalive as never)!;
  assert.equal(alone.label, 'force the 1-hour cache TTL');
  assert.equal(alone.tiedWith, undefined);
  assert.match(headlineReading({ ...h, bestWhatIf: alone } as never), /the best what-if, force the 1-hour cache TTL, would save \$0\.60+ \(85\.7% of cost\)\.$/);
});

test('one session named twice, as top and its id, by a prefix and its whole id, or by its transcript\'s path, is replayed once, as a channel log named twice is', async () => {
  const s = 'f00dcafe-0000-4000-8000-000000000001';
  const other = 'beefbeef-0000-4000-8000-000000000002';
  const files = {
    [`projects/-p/${s}.jsonl`]: [
      userPrompt(s, '2026-02-11T03:00:00.000Z'),
      assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', u: { in: 10, w5: 5000 } }),
      assistant({ session: s, msg: 'b', t: '2026-02-11T03:00:11.000Z', u: { in: 10, w5: 100, r: 5000 } }),
    ],
    [`projects/-p/${other}.jsonl`]: [userPrompt(other, '2026-02-11T04:00:00.000Z'), assistant({ session: other, msg: 'c', t: '2026-02-11T04:00:01.000Z', u: { in: 10, w5: 1000 } })],
  };
  const root = writeCorpus(files);
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const titles = async (sessions: string[]) => {
      const data = await buildReportData(ctx, { sessions });
      return (data.replay as Extract<typeof data.replay, { runs: unknown }>).runs.map((r) => r.session!.chainId);
    };
    const path = join(root, `projects/-p/${s}.jsonl`);
    assert.deepEqual(await titles(['top', s]), [s]);
    assert.deepEqual(await titles(['f00d', s, 'top']), [s]);
    assert.deepEqual(await titles([s, path]), [s]);
    assert.deepEqual(await titles([path, 'f00dcafe']), [s]);
    // two sessions are two replays
    assert.deepEqual(await titles(['top', other]), [s, other]);
  } finally {
    ctx.store.close();
  }
});

test('under --since or --project a session replay says it replays the whole chain and how many of its requests the filters choose: its 4 requests beside the page\'s 2 were not explained', async () => {
  const s = 'c0ffee00-0000-4000-8000-000000000001';
  const at = (day: number, min: number) => `2026-02-${String(day).padStart(2, '0')}T23:${String(min).padStart(2, '0')}:00.000Z`;
  const files = {
    [`projects/-p/${s}.jsonl`]: [
      userPrompt(s, at(10, 50)),
      assistant({ session: s, msg: 'a', t: at(10, 51), u: { in: 10, w5: 5000 } }),
      assistant({ session: s, msg: 'b', t: at(10, 52), u: { in: 10, w5: 100, r: 5000 } }),
      assistant({ session: s, msg: 'c', t: at(11, 53), u: { in: 10, w5: 5200 } }),
      assistant({ session: s, msg: 'd', t: at(11, 54), u: { in: 10, w5: 100, r: 5200 } }),
    ],
  };
  const root = writeCorpus(files);
  const path = join(root, `projects/-p/${s}.jsonl`);
  const section = (data: object) => /<section class="card" id="replay"[\s\S]*?<\/section>/.exec(renderReport(data as never))![0].replace(/<[^>]*>/g, '');
  const since = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC', since: '2026-02-11' });
  try {
    for (const target of ['top', path]) {
      const data = await buildReportData(since, { sessions: [target] });
      const run = (data.replay as Extract<typeof data.replay, { runs: unknown }>).runs[0]!;
      assert.equal(run.session!.requests, 4, target);
      assert.deepEqual(run.session!.inScope, { requests: 2, filters: '--since 2026-02-11' }, target);
      assert.match(section(data), /the whole chain is replayed \(a request's context is every request before it\): 2 of its 4 requests are among those the filters choose \(--since 2026-02-11\)/, target);
    }
  } finally {
    since.store.close();
  }
  // a session of another project than --project's: none of its requests is chosen
  const other = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC', project: 'nomatch' });
  try {
    const data = await buildReportData(other, { sessions: [s] });
    assert.deepEqual((data.replay as Extract<typeof data.replay, { runs: unknown }>).runs[0]!.session!.inScope, { requests: 0, filters: '--project nomatch' });
    assert.match(section(data), /0 of its 4 requests are among those the filters choose \(--project nomatch\)/);
  } finally {
    other.store.close();
  }
  // every request on the days asked for, or no days asked for: nothing to say
  for (const opts of [{ since: '2026-02-10' }, {}]) {
    const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC', ...opts });
    try {
      const data = await buildReportData(ctx, { sessions: ['top'] });
      assert.equal((data.replay as Extract<typeof data.replay, { runs: unknown }>).runs[0]!.session!.inScope, undefined);
      assert.doesNotMatch(section(data), /whole chain is replayed/);
    } finally {
      ctx.store.close();
    }
  }
});

test('a session replay names the strategies that could not run on the chain, as replay session does, not a table missing them without a word', async () => {
  const s = 'nr';
  const files = {
    [`projects/-p/${s}.jsonl`]: [
      userPrompt(s, '2026-02-11T03:00:00.000Z'),
      assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', model: 'claude-sonnet-4-5-20250929', u: { in: 10, w5: 1000 } }),
      assistant({ session: s, msg: 'b', t: '2026-02-11T03:00:11.000Z', model: 'claude-sonnet-4-5-20250929', u: { in: 10, w5: 100, r: 1000 } }),
    ],
  };
  const ctx = await openContext({ paths: [writeCorpus(files)], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx, { sessions: ['top'] });
    const run = (data.replay as Extract<typeof data.replay, { runs: unknown }>).runs[0]!;
    assert.ok(!run.strategies.some((x) => x.strategy === 'reinject'), 'a chain without attachments has nothing to reinject');
    assert.deepEqual(run.notRun?.map((n) => n.strategy), ['reinject']);
    const section = /<section class="card" id="replay"[\s\S]*?<\/section>/.exec(renderReport(data))![0];
    assert.match(section, /not run: reinject \(no attachment in this chain\)/);
  } finally {
    ctx.store.close();
  }
});

test('a channel replay\'s section says whose prices its cost in USD is at, with that cost per strategy, as replay channel prints them', async () => {
  const s = 'ch';
  const files = {
    [`projects/-p/${s}.jsonl`]: [userPrompt(s, '2026-02-11T03:00:00.000Z'), assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', model: 'claude-opus-4-6', u: { in: 10, w5: 1000 } })],
  };
  const ctx = await openContext({ paths: [writeCorpus(files)], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx, { channels: [join(REPO, 'sample-logs/channels/backend.jsonl')] });
    const run = (data.replay as Extract<typeof data.replay, { runs: unknown }>).runs[0]!;
    assert.deepEqual(run.prices, { model: 'claude-opus-4-6', usdPerMillionInput: 5, pricingFile: null, fromPricingFile: false });
    const section = /<section class="card" id="replay"[\s\S]*?<\/section>/.exec(renderReport(data))![0];
    const usd = run.strategies.map((x) => `“${x.strategy}” \\$${x.usd!.toFixed(2)}`).join(', ');
    assert.match(section, new RegExp(`cost in USD at claude-opus-4-6 prices, \\$5 per million input tokens \\(--channel-model prices another model\\): ${usd}`));
  } finally {
    ctx.store.close();
  }
});

test('a channel replay\'s rows never shown are each strategy\'s, as replay channel counts them: a row the watermark skips is not said to be shown by all', async () => {
  // m3 is posted in the second of the mention m2, after it: the watermark's last_at (08:00:05) covers it, so the
  // watermark and unstable never show it; the window shows it at m5. replay channel: window 0, watermark 1, unstable 1
  // (the section said "0 rows never shown", the first strategy's count alone)
  const s = 'rn';
  const logs = writeCorpus({ [`projects/-p/${s}.jsonl`]: [userPrompt(s, '2026-02-11T03:00:00.000Z'), assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', u: { in: 10, w5: 1000 } })] });
  const channel = join(tempDir(), 'same-second.jsonl');
  const at = '2025-03-11T08:00:05.000Z';
  writeFileSync(
    channel,
    [
      { id: 'm1', author: 'ann', created_at: at, text: 'hello all' },
      { id: 'm2', author: 'ann', created_at: at, text: '@claude what is up' },
      { id: 'm3', author: 'bob', created_at: at, text: 'a row in the same second, after the mention' },
      { id: 'm4', author: 'claude', created_at: '2025-03-11T08:01:00.000Z', text: 'all good' },
      { id: 'm5', author: 'ann', created_at: '2025-03-11T08:02:00.000Z', text: '@claude and now?' },
    ]
      .map((m) => JSON.stringify(m) + '\n')
      .join(''),
  );
  const ctx = await openContext({ paths: [logs], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx, { channels: [channel] });
    const run = (data.replay as Extract<typeof data.replay, { runs: unknown }>).runs[0]!;
    assert.deepEqual(Object.fromEntries(run.strategies.map((x) => [x.strategy, x.rowsNeverShown])), { window: 0, watermark: 1, unstable: 1 });
    const section = /<section class="card" id="replay"[\s\S]*?<\/section>/.exec(renderReport(data))![0];
    assert.match(section, /rows never shown \([^)]*\): “window” 0, “watermark” 1, “unstable” 1/);
    assert.doesNotMatch(section, /\b0 rows never shown/);
  } finally {
    ctx.store.close();
  }
});

test('a channel replay\'s section lists the log\'s bad lines it skipped, by reason and line, as replay channel does, not silently', async () => {
  const s = 'sk';
  const logs = writeCorpus({ [`projects/-p/${s}.jsonl`]: [userPrompt(s, '2026-02-11T03:00:00.000Z'), assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', u: { in: 10, w5: 1000 } })] });
  const channel = join(tempDir(), 'bad-lines.jsonl');
  writeFileSync(
    channel,
    [
      JSON.stringify({ id: 'm1', author: 'ann', created_at: '2025-03-11T08:00:00.000Z', text: '@claude hi' }),
      JSON.stringify({ id: 'm2', author: 'ann', created_at: 'not a date', text: '@claude <b>lost</b>' }),
      '{"id": broken',
      JSON.stringify({ id: 'm3', author: 'claude', created_at: '2025-03-11T08:01:00.000Z', text: 'hello' }),
    ].join('\n') + '\n',
  );
  const ctx = await openContext({ paths: [logs], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx, { channels: [channel] });
    const run = (data.replay as Extract<typeof data.replay, { runs: unknown }>).runs[0]!;
    assert.deepEqual(run.channelSkipped, { lines: 2, groups: [{ reason: 'bad_timestamp', count: 1, lines: [2] }, { reason: 'invalid_json', count: 1, lines: [3] }] });
    const section = /<section class="card" id="replay"[\s\S]*?<\/section>/.exec(renderReport(data))![0].replace(/<[^>]*>/g, '');
    assert.match(section, /2 bad lines of the channel log skipped:\s*skipped bad_timestamp: 1 \(line 2\)\s*skipped invalid_json: 1 \(line 3\)/);
  } finally {
    ctx.store.close();
  }
});

test('a channel replay is at the report\'s price table (its --pricing) and the model asked for, and the section says which', async () => {
  const s = 'cp';
  const logs = writeCorpus({ [`projects/-p/${s}.jsonl`]: [userPrompt(s, '2026-02-11T03:00:00.000Z'), assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', u: { in: 10, w5: 1000 } })] });
  const pricing = join(tempDir(), 'own.json');
  writeFileSync(pricing, JSON.stringify({ models: { 'claude-opus-4-6': { input: 10, output: 50 }, 'my-model': { input: 1, output: 5 } } }));
  const channel = join(REPO, 'sample-logs/channels/backend.jsonl');
  const bundledCtx = await openContext({ paths: [logs], db: ':memory:', timezone: 'UTC' });
  let bundled;
  try {
    bundled = (await buildReportData(bundledCtx, { channels: [channel] })).replay as Extract<Awaited<ReturnType<typeof buildReportData>>['replay'], { runs: unknown }>;
  } finally {
    bundledCtx.store.close();
  }
  const ctx = await openContext({ paths: [logs], db: ':memory:', timezone: 'UTC', pricing });
  try {
    const ownData = await buildReportData(ctx, { channels: [channel] });
    const own = ownData.replay as typeof bundled;
    const mine = await buildReportData(ctx, { channels: [channel], channelModel: 'my-model' });
    const sonnet = await buildReportData(ctx, { channels: [channel], channelModel: 'claude-sonnet-4-5' });
    const run = own.runs[0]!;
    assert.deepEqual(run.prices, { model: 'claude-opus-4-6', usdPerMillionInput: 10, pricingFile: pricing, fromPricingFile: true });
    // the file's Opus 4.6 is twice the bundled one: twice the USD, the same weights
    run.strategies.forEach((x, i) => {
      assert.equal(x.weight, bundled.runs[0]!.strategies[i]!.weight);
      assert.ok(Math.abs(x.usd! - 2 * bundled.runs[0]!.strategies[i]!.usd!) < 1e-9, x.strategy);
    });
    const section = (d: object) => /<section class="card" id="replay"[\s\S]*?<\/section>/.exec(renderReport(d as never))![0];
    assert.ok(section(ownData).includes(`cost in USD at claude-opus-4-6 prices from ${pricing}, $10 per million input tokens (--channel-model prices another model)`));
    assert.ok(section(mine).includes(`cost in USD at my-model prices from ${pricing}, $1 per million input tokens (`));
    assert.ok(section(sonnet).includes(`cost in USD at claude-sonnet-4-5&#39;s bundled prices (${pricing} does not price it), $3 per million input tokens (`));
  } finally {
    ctx.store.close();
  }
});

test('a re-purchase chain\'s reading gives the read the rule pins, the median of its rounds\' first reads (anatomy\'s read_median), not the range of the rounds\' sums', async () => {
  const ctx = await openContext({ paths: [join(REPO, 'sample-logs')], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const anatomy = analyzeAnatomy(await loadChains(ctx.store, ctx.filters, { keys: false }), { weightsFor: (m, p) => ctx.prices.weightsFor(m, p) });
    assert.ok(data.topChains && !('error' in data.topChains));
    const flagged = data.topChains.chains.filter((c) => c.repurchase);
    assert.ok(flagged.length > 0, 'the sample corpus has re-purchase chains among its top chains');
    const { chainReading } = await import('../../src/report/section-chains.js');
    for (const c of flagged) {
      const want = anatomy.repurchase.find((r) => r.chain_id === c.chainId)!.read_median!;
      assert.equal(c.readMedian, want, c.chainId);
      const reading = chainReading(c);
      assert.match(reading, new RegExp(`every round's first request reads about ${want.toLocaleString('en-US').replace(/,/g, ',')} tokens`));
      // the rounds' sums of reads the chart draws are not said to be the pinned read
      assert.doesNotMatch(reading, /reads stay/);
    }
    assert.ok(data.topChains.chains.filter((c) => !c.repurchase).every((c) => c.readMedian === undefined));
  } finally {
    ctx.store.close();
  }
});

test('the best what-if\'s share is of the cost in USD, as its dollars and the TTL section\'s verdict are, not of weight: "$2.11 (5.9%)" of $41.94 was 5.0%', async () => {
  const { bestWhatIf } = await import('../../src/report/build.js');
  const { headlineReading, renderHeadline } = await import('../../src/report/section-headline.js');
  // models of different base prices: the weight share (−21.9%) is not the USD share (−18.9%) the TTL section says
  const ttl = { baseline_weight: 11_961_558.55, scenario_weight: 14_580_698.4, baseline_usd: 41.94233895, scenario_usd: 49.8600704 };
  const keepalive = { baseline_weight: 11_961_558.55, baseline_usd: 41.94233895, best_budget: 4, budgets: [{ budget: 4, pings: 9, net_saving_weight: 705_000, net_saving_usd: 2.11 }] };
  const best = bestWhatIf(ttl as never, keepalive as never)!;
  assert.equal(best.shareOf, 'cost');
  assert.equal(best.savingShare, 2.11 / 41.94233895);
  const h = { ...(await import('./fixtures.js')).fixtureReport().headline, bestWhatIf: best } as never;
  assert.match(headlineReading(h), /would save \$2\.11 \(5\.0% of cost\)\.$/);
  // the TTL override alone: it costs more by the TTL section's +18.9% (whatif ttl's delta_usd_pct on the sample), not by weight's +21.9%
  const ttlOnly = bestWhatIf(ttl as never, new Error('no keepalive'))!;
  assert.match(headlineReading({ ...(h as object), bestWhatIf: ttlOnly } as never), /changes cost by \+18\.9%\)\.$/);
  const tile = String(renderHeadline({ ...(h as object), bestWhatIf: ttlOnly } as never).body).replace(/<[^>]*>/g, '');
  assert.match(tile, /costs 18\.9% more with force the 1-hour cache TTL/);
});

test('the headline judges the best what-if by USD, as its verdict: a TTL override that saves weight on Haiku but costs more USD on Opus is said to cost more, and is not called the least costly when one keepalive ping per gap costs less', async () => {
  // Opus 4.6 main chain ($5/M): one request, w5 10,000. Forced to 1 h: 12,500 → 20,000 wt (+7,500 wt, +$0.0375).
  // Haiku 4.5 subagent ($1/M): w5 10,000 at 0, 55, 110 and 165 min (3,300 s gaps, each an expiry of 10,000).
  //   Forced to 1 h: 3,300 s ≤ 1 h, so each expiry becomes a read: 4 × 12,500 = 50,000 → 20,000 + 3 × 1,000 = 23,000
  //   (−27,000 wt, −$0.027).
  // Override: saving 27,000 − 7,500 = +19,500 wt (31.2% of 62,500 wt) but 0.027 − 0.0375 = −$0.0105
  //   (−9.33% of $0.1125): in dollars it costs 9.3% more.
  // Keepalive on the Haiku gaps: k = ⌈3,300/270⌉ − 1 = 12 pings, bridged only at B ≥ ⌈3,000/270⌉ = 12;
  //   one ping = 0.1 × 10,000 + 30 × 1.25 + 10 × 5 = 1,087.5 wt; 12 × 1,087.5 = 13,050 > 10,000 × 1.15 = 11,500:
  //   every budget loses, best B = 0 (no ping, not a what-if). The least costly budget that pings is 1:
  //   3 pings, −3,262.5 wt, −$0.0032625 (+2.9% of $0.1125), less than the override's +9.3% (before, the headline
  //   left keepalive out and called the override "the least costly").
  const s = 'a1b2c3d4-0000-4000-8000-00000000000f';
  const at = (min: number) => new Date(Date.UTC(2026, 1, 11, 3) + min * 60_000).toISOString();
  const root = writeCorpus({
    [`projects/-p/${s}.jsonl`]: [userPrompt(s, at(0)), assistant({ session: s, msg: 'o1', t: at(0), u: { w5: 10_000 } })],
    [`projects/-p/${s}/subagents/agent-h1.jsonl`]: [0, 55, 110, 165].map((m, i) =>
      assistant({ session: s, msg: `h${i}`, t: at(m), model: 'claude-haiku-4-5-20251001', agentId: 'h1', u: { w5: 10_000 } }),
    ),
  });
  const ctx = await openContext({ paths: [root], db: ':memory:', timezone: 'UTC' });
  try {
    const data = await buildReportData(ctx);
    const ttl = (data.ttlOverride as Extract<typeof data.ttlOverride, { baseline: unknown }>)!;
    // the override costs more in USD (+9.3%) though it saves weight
    assert.ok(Math.abs(ttl.deltaShare! - 0.0105 / 0.1125) < 1e-12, `ttl delta ${ttl.deltaShare}`);
    assert.ok(ttl.scenario.weight! < ttl.baseline.weight!, 'the override saves weight');
    const best = (data.headline as Extract<typeof data.headline, { bestWhatIf: unknown }>).bestWhatIf!;
    assert.equal(best.label, 'keepalive pings, budget 1 per gap');
    assert.ok(Math.abs(best.savingUsd! - -0.0032625) < 1e-12, `saving ${best.savingUsd}`);
    assert.equal(best.savingWeight, -3_262.5);
    // the share beside the dollars is of the dollars
    assert.ok(Math.abs(best.savingShare - -0.0032625 / 0.1125) < 1e-12, `share ${best.savingShare}`);
    const page = renderReport(data);
    assert.match(page, /no what-if tried would save anything \(the least costly, keepalive pings, budget 1 per gap, changes cost by \+2\.9%\)/);
    assert.doesNotMatch(page, /the least costly, force the 1-hour cache TTL/);
    assert.doesNotMatch(page, /would save -?−?\$/);
    assert.match(page.replace(/<[^>]*>/g, ''), /costs 2\.9% more with keepalive pings, budget 1 per gap/);
  } finally {
    ctx.store.close();
  }
});

test('the best what-if weighs keepalive at its least costly budget above 0 that pings when every one costs more (best_budget 0), and leaves keepalive out when no budget sends a ping', async () => {
  const { bestWhatIf } = await import('../../src/report/build.js');
  const ttl = { baseline_weight: 1_000_000, scenario_weight: 1_200_000, baseline_usd: 1, scenario_usd: 1.2 };
  const row = (budget: number | 'inf', pings: number, w: number, usd: number) => ({ budget, pings, net_saving_weight: w, net_saving_usd: usd });
  // every budget above 0 costs more; budget 2 the least (−$0.01), less than the override's −$0.20
  const keepalive = { baseline_weight: 1_000_000, baseline_usd: 1, best_budget: 0, budgets: [row(0, 0, 0, 0), row(1, 3, -30_000, -0.03), row(2, 5, -10_000, -0.01), row('inf', 9, -50_000, -0.05)] };
  const best = bestWhatIf(ttl as never, keepalive as never)!;
  assert.equal(best.label, 'keepalive pings, budget 2 per gap');
  assert.equal(best.savingUsd, -0.01);
  assert.equal(best.tiedWith, undefined);
  // a budget 0 that nets what budget 2 does is not named beside it
  // (budget 2 sends the same pings: one that sent more with the same sums would ping only gaps of unpriced models, said apart)
  const tie = bestWhatIf(ttl as never, { ...keepalive, budgets: [row(0, 0, 0, 0), row(1, 2, 0, 0), row(2, 2, 0, 0)] } as never)!;
  assert.equal(tie.label, 'keepalive pings, budget 1 per gap (every larger budget nets the same)');
  // no budget sends a ping (no gap outlasts the interval): keepalive is no what-if, the override is the one
  const none = bestWhatIf(ttl as never, { ...keepalive, budgets: [row(0, 0, 0, 0), row(1, 0, 0, 0), row('inf', 0, 0, 0)] } as never)!;
  assert.equal(none.label, 'force the 1-hour cache TTL');
  assert.equal(none.tiedWith, undefined);
  // no priced gap (best_budget null): the same
  assert.equal(bestWhatIf(ttl as never, { ...keepalive, best_budget: null } as never)!.label, 'force the 1-hour cache TTL');
});

test('the report shows its times in --timezone, the zone named: the blocks (UTC-hour windows, so +05:45 and +13:45 show them at :45), the period, the title and when it was generated', async () => {
  // two requests, 03:10 and 11:20 UTC: blocks 03:00–08:00 and 11:00–16:00 UTC. In Asia/Kathmandu
  // (+05:45) 08:45–13:45 and 16:45–21:45; in Pacific/Chatham (+13:45 in February, its summer)
  // 16:45–21:45 on the 11th and 00:45–05:45 on the 12th, the period then 16:55 – 01:05 the next day.
  const s = 'a1b2c3d4-0000-4000-8000-0000000000aa';
  const at = (h: number, m: number) => new Date(Date.UTC(2026, 1, 11, h, m)).toISOString();
  const root = writeCorpus({
    [`projects/-p/${s}.jsonl`]: [userPrompt(s, at(3, 10)), assistant({ session: s, msg: 'm1', t: at(3, 10), u: { w5: 1_000 } }), assistant({ session: s, msg: 'm2', t: at(11, 20), u: { r: 1_000 } })],
  });
  const cases = [
    { timezone: 'Asia/Kathmandu', blocks: [['2026-02-11 08:45', '2026-02-11 13:45'], ['2026-02-11 16:45', '2026-02-11 21:45']], period: '2026-02-11 08:55 Asia/Kathmandu – 2026-02-11 17:05 Asia/Kathmandu', title: '2026-02-11 Asia/Kathmandu' },
    { timezone: 'Pacific/Chatham', blocks: [['2026-02-11 16:45', '2026-02-11 21:45'], ['2026-02-12 00:45', '2026-02-12 05:45']], period: '2026-02-11 16:55 Pacific/Chatham – 2026-02-12 01:05 Pacific/Chatham', title: '2026-02-11 – 2026-02-12 Pacific/Chatham' },
    { timezone: 'UTC', blocks: [['2026-02-11 03:00', '2026-02-11 08:00'], ['2026-02-11 11:00', '2026-02-11 16:00']], period: '2026-02-11 03:10 UTC – 2026-02-11 11:20 UTC', title: '2026-02-11 UTC' },
  ];
  for (const c of cases) {
    const ctx = await openContext({ paths: [root], db: ':memory:', timezone: c.timezone });
    try {
      const data = await buildReportData(ctx);
      assert.equal(data.meta.timezone, c.timezone);
      const b = data.blocks as Extract<typeof data.blocks, { blocks: unknown }>;
      assert.equal(b.timezone, c.timezone);
      // the data stays UTC epoch milliseconds, the windows UTC hours
      assert.deepEqual(b.blocks.map((x) => [x.start, x.end]), [[Date.UTC(2026, 1, 11, 3), Date.UTC(2026, 1, 11, 8)], [Date.UTC(2026, 1, 11, 11), Date.UTC(2026, 1, 11, 16)]]);
      data.meta.generatedAt = '2026-02-11T23:30:00.000Z';
      const page = renderReport(data);
      const text = page.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
      // the table's cells under a caption that names the zone
      for (const [start, end] of c.blocks) assert.match(text, new RegExp(`${start} ${end} \\d`), `${c.timezone}: the block ${start}–${end} in the table`);
      assert.match(text, new RegExp(`the heaviest started ${c.blocks[0]![0]} ${c.timezone}`));
      assert.match(text, new RegExp(`Cost per 5-hour block \\(times in ${c.timezone}\\)`));
      assert.ok(text.includes(c.period), `${c.timezone}: the period ${c.period}`);
      assert.ok(page.includes(`<title>cachelens report · ${c.title}</title>`), `${c.timezone}: the tab's title`);
      const generated = c.timezone === 'UTC' ? '2026-02-11 23:30 UTC' : c.timezone === 'Asia/Kathmandu' ? '2026-02-12 05:15 Asia/Kathmandu' : '2026-02-12 13:15 Pacific/Chatham';
      assert.ok(text.includes(`generated ${generated}`), `${c.timezone}: generated ${generated}`);
      assert.match(text, new RegExp(`all times in ${c.timezone}`));
      // no time on the page is said in UTC unless the zone is UTC
      if (c.timezone !== 'UTC') assert.doesNotMatch(text, /UTC\b(?! hours)/, `${c.timezone}: a time said in UTC`);
    } finally {
      ctx.store.close();
    }
  }
});
