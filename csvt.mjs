import { DuckDBInstance } from '@duckdb/node-api';
const K = ['int', 'int', 'text', 'text', 'text', 'double', 'text', 'tiny', 'text', 'text', 'text', 'int', 'int', 'int', 'int', 'int', 'int', 'int', 'int', 'bool', 'text', 'text', 'int', 'int', 'int'];
const T = { int: 'INTEGER', tiny: 'TINYINT', double: 'DOUBLE', bool: 'BOOLEAN', text: 'VARCHAR' };
const cols = K.map((k, i) => `'c${i}': '${T[k]}'`).join(', ');
const src = `read_csv('/tmp/s7/r.duckdb.facts-rQaThx/observations.csv', header = false, auto_detect = false, delim = ',', quote = '"', escape = '"', new_line = '\\n', allow_quoted_nulls = false, columns = {${cols}})`;
for (const [lim, thr] of [['96MB', 2], ['1GB', 2], ['96MB', 1]]) {
  const inst = await DuckDBInstance.create('/tmp/s8/x.duckdb');
  const c = await inst.connect();
  await c.run(`SET memory_limit='${lim}'; SET threads=${thr}`);
  let t = performance.now();
  await c.run(`SELECT count(*) FROM ${src}`);
  console.log(lim, thr, 'count', (performance.now() - t).toFixed(0));
  t = performance.now();
  await c.run(`CREATE OR REPLACE TABLE o AS SELECT * FROM ${src} LIMIT 0`);
  await c.run('BEGIN');
  await c.run(`INSERT INTO o SELECT * FROM ${src}`);
  console.log(lim, thr, 'insert', (performance.now() - t).toFixed(0));
  t = performance.now();
  await c.run('COMMIT');
  console.log(lim, thr, 'commit', (performance.now() - t).toFixed(0), 'rss', (process.memoryUsage().rss / 2 ** 20).toFixed(0));
  c.closeSync(); inst.closeSync();
}
