/**
 * The oracle for writer.test.ts: the StoreWriter as first written (one appender call per value),
 * before facts went to DuckDB in data chunks. The chunked writer must leave every table exactly as
 * this one does. Kept as it was below this comment; do not optimise it.
 */
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { type FileFacts, storedParserState } from '../../src/ingest/file-parser.js';
import type { FileRow } from '../../src/store/store.js';

/** Appends the facts of many files, one appender per table, closed (flushed) once at the end. */
export class ReferenceWriter {
  private constructor(private readonly apps: Record<string, DuckDBAppender>) {}

  static async create(db: DuckDBConnection): Promise<ReferenceWriter> {
    const apps: Record<string, DuckDBAppender> = {};
    for (const t of ['files', 'observations', 'chain_facts', 'spawns', 'agent_links', 'sidechain_roots', 'attachments', 'chain_events', 'line_counts', 'skipped']) {
      apps[t] = await db.createAppender(t);
    }
    return new ReferenceWriter(apps);
  }

  file(f: FileRow): void {
    const a = this.apps.files;
    a.appendInteger(f.fileId);
    a.appendVarchar(f.path);
    a.appendVarchar(f.root);
    a.appendVarchar(f.kind);
    a.appendBigInt(BigInt(f.size));
    a.appendDouble(f.mtimeMs);
    a.appendBigInt(BigInt(f.readTo));
    a.appendBigInt(BigInt(f.lines));
    a.appendVarchar(f.headHash);
    nullable(a, f.sessionId);
    nullable(a, f.agentId);
    a.appendVarchar(f.project);
    a.appendInteger(f.synthetic);
    nullable(a, f.metaAgentType);
    nullable(a, f.metaToolUseId);
    nullable(a, f.parserState ? storedParserState(f.parserState) : null);
    a.endRow();
  }

  facts(x: FileFacts): void {
    const id = x.fileId;
    const o = this.apps.observations;
    for (const r of x.observations) {
      o.appendInteger(id);
      o.appendInteger(r.line);
      o.appendVarchar(r.key);
      o.appendDouble(r.t);
      o.appendVarchar(r.model);
      o.appendTinyInt(r.rank);
      o.appendVarchar(r.sessionId);
      o.appendVarchar(r.chainId);
      nullable(o, r.agentId);
      o.appendInteger(r.input);
      o.appendInteger(r.output);
      o.appendInteger(r.cacheWrite);
      o.appendInteger(r.cacheWrite5m);
      o.appendInteger(r.cacheWrite1h);
      o.appendInteger(r.cacheRead);
      o.appendInteger(r.webSearch);
      o.appendInteger(r.webFetch);
      o.appendBoolean(r.splitMissing);
      nullable(o, r.serviceTier);
      nullable(o, r.speed);
      o.appendInteger(r.copies);
      o.appendInteger(r.segment);
      o.appendInteger(r.round);
      o.endRow();
    }
    const c = this.apps.chain_facts;
    for (const ch of x.state.chains) {
      c.appendInteger(id);
      c.appendVarchar(ch.chainId);
      c.appendVarchar(ch.sessionId);
      nullable(c, ch.agentId);
      c.appendVarchar(ch.kind);
      c.appendInteger(ch.rounds);
      c.appendInteger(ch.compactions);
      c.appendInteger(ch.requests);
      c.appendDouble(ch.firstT);
      nullable(c, ch.lastKey);
      c.endRow();
    }
    const s = this.apps.spawns;
    for (const sp of x.spawns) {
      s.appendInteger(id);
      s.appendVarchar(sp.sessionId);
      s.appendVarchar(sp.toolUseId);
      nullable(s, sp.requestedType);
      nullable(s, sp.spawnName);
      nullable(s, sp.promptHash);
      s.endRow();
    }
    const l = this.apps.agent_links;
    for (const k of x.links) {
      l.appendInteger(id);
      l.appendVarchar(k.sessionId);
      l.appendVarchar(k.toolUseId);
      l.appendVarchar(k.agentId);
      l.endRow();
    }
    const sr = this.apps.sidechain_roots;
    for (const r of x.sidechainRoots) {
      sr.appendInteger(id);
      sr.appendVarchar(r.chainId);
      nullable(sr, r.promptHash);
      sr.endRow();
    }
    const at = this.apps.attachments;
    for (const a of x.attachments) {
      at.appendInteger(id);
      at.appendVarchar(a.chainId);
      at.appendInteger(a.line);
      at.appendDouble(a.t);
      at.appendVarchar(a.type);
      at.appendInteger(a.bytes);
      at.appendVarchar(a.hash);
      at.appendInteger(a.round);
      nullable(at, a.uuid);
      at.endRow();
    }
    const ev = this.apps.chain_events;
    for (const e of x.events) {
      ev.appendInteger(id);
      ev.appendVarchar(e.chainId);
      ev.appendInteger(e.line);
      ev.appendDouble(e.t);
      ev.appendVarchar(e.kind);
      ev.appendVarchar(e.detail);
      nullable(ev, e.uuid);
      ev.endRow();
    }
    const lc = this.apps.line_counts;
    for (const [k, n] of x.lineCounts) {
      const [type, subtype] = k.split('\u0000');
      lc.appendInteger(id);
      lc.appendVarchar(type);
      nullable(lc, subtype ?? null);
      lc.appendInteger(n);
      lc.endRow();
    }
    this.skips(x);
  }

  skips(x: Pick<FileFacts, 'fileId' | 'skipped'>): void {
    const sk = this.apps.skipped;
    for (const s of x.skipped) {
      sk.appendInteger(x.fileId);
      sk.appendInteger(s.line);
      sk.appendVarchar(s.reason);
      sk.appendVarchar(s.detail);
      sk.endRow();
    }
  }

  close(): void {
    for (const a of Object.values(this.apps)) a.closeSync();
  }
}

function nullable(a: DuckDBAppender, v: string | null): void {
  if (v === null) a.appendNull();
  else a.appendVarchar(v);
}
