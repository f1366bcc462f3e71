/**
 * A file's facts as columns, in the order of the fact tables' columns (schema.ts): what a reader
 * worker hands the main thread and what the StoreWriter appends in DuckDB data chunks. Numbers
 * travel in typed arrays, strings in plain arrays (cheaper to clone than one object per row).
 * A large ingest has the reader write them as CSV into staging files instead (stage.ts), which
 * DuckDB loads in bulk.
 *
 * This module does not load DuckDB, so reader workers can encode without it.
 *
 * Example: a file with 2 observations gives `observations: { rows: 2, cols: [Int32Array [7, 7]
 * (file_id), Int32Array [3, 9] (line), ['m1', 'm2\u0000r2'] (key), …] }`.
 */
import type { FileFacts } from '../ingest/file-parser.js';

/** int: INTEGER, tiny: TINYINT, big: BIGINT (as numbers, up to 2^53), double: DOUBLE, bool: BOOLEAN, text: VARCHAR (null allowed). */
export type ColumnKind = 'int' | 'tiny' | 'big' | 'double' | 'bool' | 'text';
export type Column = Int32Array | Int8Array | Float64Array | Uint8Array | (string | null)[];

export const FACT_COLUMNS = {
  observations: ['int', 'int', 'text', 'double', 'text', 'tiny', 'text', 'text', 'text', 'int', 'int', 'int', 'int', 'int', 'int', 'int', 'int', 'bool', 'text', 'text', 'int', 'int', 'int'],
  chain_facts: ['int', 'text', 'text', 'text', 'text', 'int', 'int', 'int', 'double', 'text'],
  spawns: ['int', 'text', 'text', 'text', 'text', 'text'],
  agent_links: ['int', 'text', 'text', 'text'],
  sidechain_roots: ['int', 'text', 'text'],
  attachments: ['int', 'text', 'int', 'double', 'text', 'int', 'text', 'int', 'text'],
  chain_events: ['int', 'text', 'int', 'double', 'text', 'text', 'text'],
  line_counts: ['int', 'text', 'text', 'int'],
  skipped: ['int', 'int', 'text', 'text'],
} as const satisfies Record<string, readonly ColumnKind[]>;

export type FactTable = keyof typeof FACT_COLUMNS;

export interface TableColumns {
  rows: number;
  cols: Column[];
}

export type FactColumns = Partial<Record<FactTable, TableColumns>>;

function column(kind: ColumnKind, n: number): Column {
  switch (kind) {
    case 'int':
      return new Int32Array(n);
    case 'tiny':
      return new Int8Array(n);
    case 'big':
    case 'double':
      return new Float64Array(n);
    case 'bool':
      return new Uint8Array(n);
    case 'text':
      return new Array<string | null>(n);
  }
}

/** Columns for `rows` items of a table, each item written by `put(row, item, cols)`. */
function table<T>(name: FactTable, items: Iterable<T> & { length?: number; size?: number }, put: (c: Column[], i: number, x: T) => void): TableColumns | undefined {
  const n = items.length ?? items.size ?? 0;
  if (n === 0) return undefined;
  const cols = FACT_COLUMNS[name].map((k) => column(k, n));
  let i = 0;
  for (const x of items) put(cols, i++, x);
  return { rows: n, cols };
}

/** The columns of every fact table for one file's facts (the rows StoreWriter once appended one by one). */
export function encodeFacts(x: FileFacts): FactColumns {
  const id = x.fileId;
  const out: FactColumns = {};
  const set = (name: FactTable, t: TableColumns | undefined) => {
    if (t) out[name] = t;
  };
  set(
    'observations',
    table('observations', x.observations, (c, i, r) => {
      (c[0] as Int32Array)[i] = id;
      (c[1] as Int32Array)[i] = r.line;
      (c[2] as string[])[i] = r.key;
      (c[3] as Float64Array)[i] = r.t;
      (c[4] as string[])[i] = r.model;
      (c[5] as Int8Array)[i] = r.rank;
      (c[6] as string[])[i] = r.sessionId;
      (c[7] as string[])[i] = r.chainId;
      (c[8] as (string | null)[])[i] = r.agentId;
      (c[9] as Int32Array)[i] = r.input;
      (c[10] as Int32Array)[i] = r.output;
      (c[11] as Int32Array)[i] = r.cacheWrite;
      (c[12] as Int32Array)[i] = r.cacheWrite5m;
      (c[13] as Int32Array)[i] = r.cacheWrite1h;
      (c[14] as Int32Array)[i] = r.cacheRead;
      (c[15] as Int32Array)[i] = r.webSearch;
      (c[16] as Int32Array)[i] = r.webFetch;
      (c[17] as Uint8Array)[i] = r.splitMissing ? 1 : 0;
      (c[18] as (string | null)[])[i] = r.serviceTier;
      (c[19] as (string | null)[])[i] = r.speed;
      (c[20] as Int32Array)[i] = r.copies;
      (c[21] as Int32Array)[i] = r.segment;
      (c[22] as Int32Array)[i] = r.round;
    }),
  );
  set(
    'chain_facts',
    table('chain_facts', x.state.chains, (c, i, ch) => {
      (c[0] as Int32Array)[i] = id;
      (c[1] as string[])[i] = ch.chainId;
      (c[2] as string[])[i] = ch.sessionId;
      (c[3] as (string | null)[])[i] = ch.agentId;
      (c[4] as string[])[i] = ch.kind;
      (c[5] as Int32Array)[i] = ch.rounds;
      (c[6] as Int32Array)[i] = ch.compactions;
      (c[7] as Int32Array)[i] = ch.requests;
      (c[8] as Float64Array)[i] = ch.firstT;
      (c[9] as (string | null)[])[i] = ch.lastKey;
    }),
  );
  set(
    'spawns',
    table('spawns', x.spawns, (c, i, sp) => {
      (c[0] as Int32Array)[i] = id;
      (c[1] as string[])[i] = sp.sessionId;
      (c[2] as string[])[i] = sp.toolUseId;
      (c[3] as (string | null)[])[i] = sp.requestedType;
      (c[4] as (string | null)[])[i] = sp.spawnName;
      (c[5] as (string | null)[])[i] = sp.promptHash;
    }),
  );
  set(
    'agent_links',
    table('agent_links', x.links, (c, i, k) => {
      (c[0] as Int32Array)[i] = id;
      (c[1] as string[])[i] = k.sessionId;
      (c[2] as string[])[i] = k.toolUseId;
      (c[3] as string[])[i] = k.agentId;
    }),
  );
  set(
    'sidechain_roots',
    table('sidechain_roots', x.sidechainRoots, (c, i, r) => {
      (c[0] as Int32Array)[i] = id;
      (c[1] as string[])[i] = r.chainId;
      (c[2] as (string | null)[])[i] = r.promptHash;
    }),
  );
  set(
    'attachments',
    table('attachments', x.attachments, (c, i, a) => {
      (c[0] as Int32Array)[i] = id;
      (c[1] as string[])[i] = a.chainId;
      (c[2] as Int32Array)[i] = a.line;
      (c[3] as Float64Array)[i] = a.t;
      (c[4] as string[])[i] = a.type;
      (c[5] as Int32Array)[i] = a.bytes;
      (c[6] as string[])[i] = a.hash;
      (c[7] as Int32Array)[i] = a.round;
      (c[8] as (string | null)[])[i] = a.uuid ?? null;
    }),
  );
  set(
    'chain_events',
    table('chain_events', x.events, (c, i, e) => {
      (c[0] as Int32Array)[i] = id;
      (c[1] as string[])[i] = e.chainId;
      (c[2] as Int32Array)[i] = e.line;
      (c[3] as Float64Array)[i] = e.t;
      (c[4] as string[])[i] = e.kind;
      (c[5] as string[])[i] = e.detail;
      (c[6] as (string | null)[])[i] = e.uuid ?? null;
    }),
  );
  set(
    'line_counts',
    table('line_counts', x.lineCounts, (c, i, [k, n]) => {
      const [type, subtype] = k.split('\u0000');
      (c[0] as Int32Array)[i] = id;
      (c[1] as string[])[i] = type;
      (c[2] as (string | null)[])[i] = subtype ?? null;
      (c[3] as Int32Array)[i] = n;
    }),
  );
  Object.assign(out, encodeSkips(x));
  return out;
}

export function encodeSkips(x: Pick<FileFacts, 'fileId' | 'skipped'>): FactColumns {
  const t = table('skipped', x.skipped, (c, i, s) => {
    (c[0] as Int32Array)[i] = x.fileId;
    (c[1] as Int32Array)[i] = s.line;
    (c[2] as string[])[i] = s.reason;
    (c[3] as string[])[i] = s.detail;
  });
  return t ? { skipped: t } : {};
}
