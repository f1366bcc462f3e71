import { DuckDBInstance } from '@duckdb/node-api';
const K = ['int', 'int', 'text', 'text', 'text', 'double', 'text', 'tiny', 'text', 'text', 'text', 'int', 'int', 'int', 'int', 'int', 'int', 'int', 'int', 'bool', 'text', 'text', 'int', 'int', 'int'];
const T = { int: 'INTEGER', tiny: 'TINYINT', double: 'DOUBLE', bool: 'BOOLEAN', text: 'VARCHAR' };
const cols = K.map((k, i) => `'c${i}': '${T[k]}'`).join(', ');
const src = `read_csv('/tmp/s7/r.duckdb.facts-rQaThx/observations.csv', header = false, auto_detect = false, delim = ',', quote = '"', escape = '"', new_line = '\\n', allow_quoted_nulls = false, columns = {${cols}})`;
const all = K.map((_, i) => 'c' + i);
const variants = { all, nokey: all.filter((c) => c !== 'c2'), nostr4: all.filter((c) => !['c2','c8','c9','c10'].includes(c)), nums: all.filter((_, i) => K[i] !== 'text'), key: ['c2'], msgreq: ['c3','c4'], sess: ['c8'], chain: ['c9'], agent:['c10'], model: ['c6','c20','c21'] };
const inst = await DuckDBInstance.create('/tmp/s8/x.duckdb');
const c = await inst.connect();
await c.run(`SET memory_limit='96MB'; SET threads=1`);
await c.run(`CREATE OR REPLACE TEMP TABLE src AS SELECT * FROM ${src}`);
for (let r = 0; r < 2; r++) for (const [name, cs] of Object.entries(variants)) {
  const t = performance.now();
  await c.run(`CREATE OR REPLACE TABLE o AS SELECT * FROM src LIMIT 0`);
  await c.run('BEGIN');
  await c.run(`INSERT INTO o (${cs.join(',')}) SELECT ${cs.join(',')} FROM src`);
  await c.run('COMMIT');
  console.log(name, (performance.now() - t).toFixed(0));
}
