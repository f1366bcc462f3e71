/**
 * truth.json: what the generator planted, taken from its own plan (never by reading files
 * back). A correct reader with global (message.id, requestId) de-dup must find exactly these
 * totals. Requests are streamed to a part file while the corpus is written, so a 1 GB corpus
 * never holds its request list in memory; files and chains are small and kept.
 */
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { AnatomyClass } from './anatomy.js';

export const TRUTH_SCHEMA = 'cachelens-sample-truth/1';

export interface Tokens {
  input: number;
  output: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
}

export interface TokenTotals extends Tokens {
  requests: number;
}

export type ChainKind = 'main' | 'resolved' | 'lost' | 'unknown' | 'compaction' | 'prompt_suggestion';

export interface RequestTruth {
  message_id: string;
  request_id: string | null;
  chain_id: string;
  session_id: string;
  /** path of the file holding the request's own lines (progress copies elsewhere are duplicates) */
  file: string;
  model: string;
  priced: boolean;
  /** ISO time of the first line of the request */
  timestamp: string;
  round: number;
  segment: number;
  usage: Tokens;
  class: AnatomyClass;
  rewrite_tokens: number;
  growth_tokens: number;
  cold_tokens: number;
  gap_ms: number | null;
  ttl_prev: '5m' | '1h' | null;
  /** the generator's reason for the read it planned (cold, continue, jitter, expired, break, pinned) */
  cause: string;
  /** assistant lines of this request in its own file (one per content block) */
  lines: number;
  /** places the request appears: its own file + one per file holding progress copies of it */
  copies: number;
  /** agent_progress lines repeating it */
  progress_lines: number;
}

export interface ChainTruth {
  chain_id: string;
  session_id: string;
  agent_id: string | null;
  project: string;
  file: string;
  meta_file: string | null;
  kind: ChainKind;
  definition: 'resolved' | 'lost' | 'unknown' | null;
  agent_type: string;
  requested_type: string | null;
  spawn_name: string | null;
  ttl: '5m' | '1h';
  models: string[];
  rounds: number;
  compactions: number;
  skill_listing: number;
  re_attachments: number;
  attachments: Record<string, number>;
  requests: number;
  gaps_over_ttl: number;
  classes: Record<AnatomyClass, number>;
  anatomy_tokens: Record<AnatomyClass, number>;
  /** SPEC §3 re-purchase flag, computed from the plan */
  repurchase: boolean;
  /** reads of each round's first request */
  round_first_reads: number[];
  tokens: Tokens;
}

export interface FileTruth {
  path: string;
  kind: 'main' | 'subagent' | 'meta' | 'channel';
  session_id: string | null;
  chain_id: string | null;
  lines: number;
  bytes: number;
  requests: number;
  tokens: Tokens;
  progress_copy_lines: number;
  invalid_lines: number;
  incomplete_last_line: boolean;
  synthetic_lines: number;
}

export function zeroTokens(): Tokens {
  return { input: 0, output: 0, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0 };
}

export function addTokens(into: Tokens, t: Tokens): void {
  into.input += t.input;
  into.output += t.output;
  into.cache_write_5m += t.cache_write_5m;
  into.cache_write_1h += t.cache_write_1h;
  into.cache_read += t.cache_read;
}

function totalsOf(): TokenTotals {
  return { requests: 0, ...zeroTokens() };
}

export interface TruthCounts {
  sessions: number;
  projects: number;
  files: number;
  lines: number;
  invalid_lines: number;
  incomplete_last_lines: number;
  synthetic_lines: number;
  /** request copies beyond the first: Σ (copies − 1) */
  duplicates: number;
  /** assistant + agent_progress lines carrying a request's usage beyond one per request */
  duplicate_lines: number;
  progress_copy_lines: number;
  requests_without_request_id: number;
  gaps_over_ttl: number;
  gaps_over_ttl_by_ttl: Record<'5m' | '1h', number>;
  classes: Record<AnatomyClass, number>;
  anatomy_tokens: Record<AnatomyClass, number>;
  chains_by_kind: Record<string, number>;
  compactions: number;
  repurchase_chains: number;
  attachments_by_type: Record<string, number>;
  line_types: Record<string, number>;
}

export class TruthSink {
  readonly files: FileTruth[] = [];
  readonly chains: ChainTruth[] = [];
  readonly totals = totalsOf();
  readonly byModel: Record<string, TokenTotals> = {};
  readonly unpricedModels: Record<string, number> = {};
  readonly counts: TruthCounts = {
    sessions: 0,
    projects: 0,
    files: 0,
    lines: 0,
    invalid_lines: 0,
    incomplete_last_lines: 0,
    synthetic_lines: 0,
    duplicates: 0,
    duplicate_lines: 0,
    progress_copy_lines: 0,
    requests_without_request_id: 0,
    gaps_over_ttl: 0,
    gaps_over_ttl_by_ttl: { '5m': 0, '1h': 0 },
    classes: { cold: 0, growth: 0, expiry: 0, break: 0 },
    anatomy_tokens: { cold: 0, growth: 0, expiry: 0, break: 0 },
    chains_by_kind: {},
    compactions: 0,
    repurchase_chains: 0,
    attachments_by_type: {},
    line_types: {},
  };
  private readonly partPath: string;
  private fd: number | null;
  private first = true;
  private buf: string[] = [];

  constructor(
    private readonly root: string,
    private readonly detail: 'full' | 'summary' = 'full',
  ) {
    this.partPath = join(root, '.truth-requests.part');
    this.fd = openSync(this.partPath, 'w');
  }

  addRequest(r: RequestTruth): void {
    this.totals.requests++;
    addTokens(this.totals, r.usage);
    const m = (this.byModel[r.model] ??= totalsOf());
    m.requests++;
    addTokens(m, r.usage);
    if (!r.priced) this.unpricedModels[r.model] = (this.unpricedModels[r.model] ?? 0) + 1;
    const c = this.counts;
    c.duplicates += r.copies - 1;
    c.duplicate_lines += r.lines + r.progress_lines - 1;
    if (r.request_id === null) c.requests_without_request_id++;
    c.classes[r.class]++;
    c.anatomy_tokens.cold += r.cold_tokens;
    if (r.class === 'expiry' || r.class === 'break') c.anatomy_tokens[r.class] += r.rewrite_tokens;
    c.anatomy_tokens.growth += r.growth_tokens;
    if (this.detail === 'summary') return;
    this.buf.push((this.first ? '' : ',\n') + JSON.stringify(r));
    this.first = false;
    if (this.buf.length >= 512) this.flushPart();
  }

  addChain(c: ChainTruth): void {
    this.chains.push(c);
    this.counts.chains_by_kind[c.kind] = (this.counts.chains_by_kind[c.kind] ?? 0) + 1;
    this.counts.gaps_over_ttl += c.gaps_over_ttl;
    this.counts.gaps_over_ttl_by_ttl[c.ttl] += c.gaps_over_ttl;
    this.counts.compactions += c.compactions;
    if (c.repurchase) this.counts.repurchase_chains++;
    for (const [type, n] of Object.entries(c.attachments)) {
      this.counts.attachments_by_type[type] = (this.counts.attachments_by_type[type] ?? 0) + n;
    }
  }

  addFile(f: FileTruth): void {
    this.files.push(f);
    const c = this.counts;
    c.files++;
    c.lines += f.lines;
    c.invalid_lines += f.invalid_lines;
    if (f.incomplete_last_line) c.incomplete_last_lines++;
    c.synthetic_lines += f.synthetic_lines;
    c.progress_copy_lines += f.progress_copy_lines;
  }

  countLine(type: string): void {
    this.counts.line_types[type] = (this.counts.line_types[type] ?? 0) + 1;
  }

  /** Writes truth.json (summary first, then files, chains and the streamed requests) and removes the part file. */
  finish(header: Record<string, unknown>): string {
    this.flushPart();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    const path = join(this.root, 'truth.json');
    const out = openSync(path, 'w');
    const sortKeys = <T>(o: Record<string, T>): Record<string, T> =>
      Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const counts = {
      ...this.counts,
      chains_by_kind: sortKeys(this.counts.chains_by_kind),
      attachments_by_type: sortKeys(this.counts.attachments_by_type),
      line_types: sortKeys(this.counts.line_types),
    };
    const head = {
      schema: TRUTH_SCHEMA,
      ...header,
      detail: this.detail,
      totals: this.totals,
      by_model: sortKeys(this.byModel),
      unpriced_models: sortKeys(this.unpricedModels),
      counts,
    };
    const headText = JSON.stringify(head, null, 2);
    writeSync(out, headText.slice(0, -2) + ',\n');
    writeSync(out, `  "files": [\n${this.files.map((f) => JSON.stringify(f)).join(',\n')}\n],\n`);
    writeSync(out, `  "chains": [\n${this.chains.map((c) => JSON.stringify(c)).join(',\n')}\n],\n`);
    if (this.detail === 'full') {
      writeSync(out, '  "requests": [\n');
      const part = openSync(this.partPath, 'r');
      const chunk = Buffer.alloc(1 << 20);
      for (;;) {
        const n = readSync(part, chunk, 0, chunk.length, null);
        if (n === 0) break;
        writeSync(out, chunk, 0, n);
      }
      closeSync(part);
      writeSync(out, '\n]\n}\n');
    } else {
      writeSync(out, '  "requests": null\n}\n');
    }
    closeSync(out);
    rmSync(this.partPath);
    return path;
  }

  private flushPart(): void {
    if (this.fd === null || this.buf.length === 0) return;
    writeSync(this.fd, this.buf.join(''));
    this.buf = [];
  }
}
