/**
 * Ingest: discover → read what changed → store. The only stage that touches the logs.
 *
 *   roots ─▶ discover ─▶ plan (unchanged · appended · re-read · retired) ─▶ worker pool ─▶ store
 *
 * A file whose size and mtime are unchanged is not opened. A file that grew and still starts with
 * the same bytes is read from where the last read stopped, with the parser state saved then. A
 * file that shrank or was replaced is read again from the start; a file no longer found under
 * the roots is retired (its facts deleted). De-dup is recomputed in SQL over all facts in scope,
 * so it stays global and exact across runs.
 */
import { createHash } from 'node:crypto';
import { open, readFile } from 'node:fs/promises';
import type { PriceTable } from '../pricing/pricing.js';
import { type FileRow, Store } from '../store/store.js';
import type { SkipReason } from '../types.js';
import { type Discovery, type FoundFile, decodeProjectDir, discover } from './discover.js';
import { readAll } from './pool.js';
import type { ReadOptions } from './read-file.js';

export interface IngestOptions {
  paths?: string[];
  env?: NodeJS.ProcessEnv;
  dbPath: string;
  rebuild?: boolean;
  prices: PriceTable;
  workers?: number;
  read?: Pick<ReadOptions, 'chunkSize' | 'streamAbove'>;
  /** called as files finish (files done, files to read, bytes read, bytes to read) */
  progress?: (p: { files: number; filesTotal: number; bytes: number; bytesTotal: number }) => void;
}

export interface IngestStats {
  files: number;
  unchanged: number;
  read: number;
  appended: number;
  retired: number;
  bytesRead: number;
  ms: number;
}

export interface WalkSkip {
  path: string;
  reason: SkipReason;
  detail: string;
}

export interface IngestResult {
  store: Store;
  discovery: Discovery;
  stats: IngestStats;
  /** problems met while listing or opening files (no file id to hang them on) */
  walkSkips: WalkSkip[];
}

const HEAD_BYTES = 1024;

export async function ingest(opts: IngestOptions): Promise<IngestResult> {
  const started = performance.now();
  const discovery = await discover(opts.paths, opts.env ?? process.env);
  const store = await Store.open(opts.dbPath, { rebuild: opts.rebuild });
  try {
    return await ingestInto(store, discovery, opts, started);
  } catch (err) {
    store.close();
    throw err;
  }
}

async function ingestInto(store: Store, discovery: Discovery, opts: IngestOptions, started: number): Promise<IngestResult> {
  const known = await store.files();
  const walkSkips: WalkSkip[] = discovery.problems.map((p) => ({ path: p.path, reason: p.reason, detail: p.detail }));
  const stats: IngestStats = { files: discovery.files.length, unchanged: 0, read: 0, appended: 0, retired: 0, bytesRead: 0, ms: 0 };

  let nextId = await store.nextFileId();
  const scope: number[] = [];
  const full: { f: FoundFile; row: FileRow | undefined; id: number }[] = [];
  const appends: { f: FoundFile; row: FileRow; head: string }[] = [];
  const metas: { f: FoundFile; id: number; old: FileRow | undefined }[] = [];

  for (const f of discovery.files) {
    const row = known.get(f.path);
    const id = row?.fileId ?? nextId++;
    scope.push(id);
    if (row && row.size === f.size && row.mtimeMs === f.mtimeMs && row.kind === f.kind) {
      stats.unchanged++;
      continue;
    }
    if (f.kind === 'meta') {
      metas.push({ f, id, old: row });
      continue;
    }
    if (row && row.kind === f.kind && f.size >= row.readTo && row.parserState) {
      const head = await headHash(f.path, Math.min(HEAD_BYTES, row.readTo)).catch(() => null);
      if (head !== null && head === row.headHash) {
        appends.push({ f, row, head });
        continue;
      }
    }
    full.push({ f, row, id });
  }

  // Files under this invocation's roots that are gone: retire them.
  const found = new Set(discovery.files.map((f) => f.path));
  const retired = [...known.values()].filter((r) => !found.has(r.path) && discovery.roots.some((root) => r.path === root || r.path.startsWith(root + '/')));
  stats.retired = retired.length;

  await store.run('BEGIN TRANSACTION');
  try {
    await store.deleteFacts(retired.map((r) => r.fileId), true);
    await store.deleteFacts(full.filter((x) => x.row).map((x) => x.id), true);
    await store.deleteFacts(metas.filter((x) => x.old).map((x) => x.id), true);
    await store.prepareAppend(appends.map((a) => a.row.fileId));

    const writer = await store.writer();
    for (const m of metas) writer.file(await metaRow(m.f, m.id));

    const tasks: { path: string; id: { fileId: number; fileAgentId: string | null; fileSessionId: string | null }; opts: ReadOptions }[] = [
      ...full.map((x) => ({
        path: x.f.path,
        id: { fileId: x.id, fileAgentId: x.f.agentId, fileSessionId: x.f.sessionId },
        opts: { ...opts.read },
      })),
      ...appends.map((a) => ({
        path: a.f.path,
        id: { fileId: a.row.fileId, fileAgentId: a.f.agentId, fileSessionId: a.f.sessionId },
        opts: { ...opts.read, from: a.row.readTo, linesBefore: a.row.lines, state: a.row.parserState ?? undefined },
      })),
    ];
    const byPath = new Map<string, { f: FoundFile; row?: FileRow }>();
    for (const x of full) byPath.set(x.f.path, { f: x.f });
    for (const a of appends) byPath.set(a.f.path, { f: a.f, row: a.row });
    const bytesTotal = tasks.reduce((s, t) => s + (byPath.get(t.path)!.f.size - (t.opts.from ?? 0)), 0);
    let done = 0;
    let bytes = 0;

    await readAll(tasks, bytesTotal, (o) => {
      const { f, row } = byPath.get(o.task.path)!;
      done++;
      if ('error' in o) {
        const reason: SkipReason = o.error.code === 'ENOENT' ? 'vanished_file' : 'unreadable_file';
        walkSkips.push({ path: f.path, reason, detail: `${o.error.code ?? 'error'}: ${o.error.message.split('\n')[0]}` });
        // a file we cannot read now keeps no row, so the next run tries it again
        return;
      }
      const r = o.result;
      bytes += r.bytesRead;
      stats.bytesRead += r.bytesRead;
      if (row) stats.appended++;
      else stats.read++;
      const x = r.facts;
      writer.facts(x);
      writer.file({
        fileId: x.fileId,
        path: f.path,
        root: f.root,
        kind: f.kind,
        size: r.size,
        mtimeMs: r.size === f.size ? f.mtimeMs : r.mtimeMs,
        readTo: r.readTo,
        lines: r.lines,
        headHash: row && r.readTo >= HEAD_BYTES ? row.headHash : '',
        sessionId: x.sessionId ?? row?.sessionId ?? f.sessionId,
        agentId: f.agentId,
        project: x.cwd ?? row?.project ?? decodeProjectDir(f.projectDir),
        synthetic: x.synthetic + (row?.synthetic ?? 0),
        metaAgentType: null,
        metaToolUseId: null,
        parserState: x.state,
      });
      opts.progress?.({ files: done, filesTotal: tasks.length, bytes, bytesTotal });
    }, opts.workers);
    writer.close();
    // head hashes of freshly read files (taken after reading, over what was read)
    await fillHeadHashes(store);
    await store.setScope(scope);
    await store.setPrices(opts.prices);
    await store.derive();
    await store.run('COMMIT');
  } catch (err) {
    await store.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
  stats.ms = performance.now() - started;
  return { store, discovery, stats, walkSkips };
}

async function fillHeadHashes(store: Store): Promise<void> {
  const rows = await store.all(`SELECT file_id, path, read_to FROM files WHERE head_hash = '' AND kind <> 'meta' AND read_to > 0`);
  for (const r of rows) {
    const h = await headHash(r.path as string, Math.min(HEAD_BYTES, r.read_to as number)).catch(() => null);
    if (h) await store.run(`UPDATE files SET head_hash = '${h}' WHERE file_id = ${Number(r.file_id)}`);
  }
}

async function headHash(path: string, n: number): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return createHash('sha1').update(buf.subarray(0, bytesRead)).digest('hex');
  } finally {
    await fh.close();
  }
}

async function metaRow(f: FoundFile, id: number): Promise<FileRow> {
  let agentType: string | null = null;
  let toolUseId: string | null = null;
  try {
    const m = JSON.parse(await readFile(f.path, 'utf8')) as Record<string, unknown>;
    if (typeof m.agentType === 'string') agentType = m.agentType;
    if (typeof m.toolUseId === 'string') toolUseId = m.toolUseId;
  } catch {
    // an unreadable or invalid meta.json only loses the agent type: the chain falls back to its tool_use
  }
  return {
    fileId: id,
    path: f.path,
    root: f.root,
    kind: 'meta',
    size: f.size,
    mtimeMs: f.mtimeMs,
    readTo: f.size,
    lines: 0,
    headHash: '',
    sessionId: f.sessionId,
    agentId: f.agentId,
    project: decodeProjectDir(f.projectDir),
    synthetic: 0,
    metaAgentType: agentType,
    metaToolUseId: toolUseId,
    parserState: null,
  };
}
