/**
 * buildReportData over a real store: the queries it sends on a connection beside the store's are
 * all finished when it returns, even when a section fails before it awaits its rows (the store
 * closes that connection next, and a connection must not close under a running query).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openContext } from '../../src/context.js';
import { buildReportData } from '../../src/report/build.js';
import type { StoreReader } from '../../src/store/store.js';
import { REPO } from '../helpers/corpus.js';

test('every query sent beside the store has finished when the report data is built, also when the summary fails', async () => {
  const ctx = await openContext({ paths: [join(REPO, 'sample-logs')], db: ':memory:', timezone: 'UTC' });
  const pending = new Set<Promise<unknown>>();
  try {
    // the summary reads the remembered results: without their table it fails, and so do the
    // sections that need it (the headline and data quality, which then never await their rows)
    await ctx.store.run(`DROP TABLE results`);
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
      return { all: counted(reader.all), columns: counted(reader.columns) };
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
  } finally {
    // should the check above fail, the store still closes only once its queries are done
    await Promise.allSettled(pending);
    ctx.store.close();
  }
});
