/**
 * The channel watermark (SPEC §6.1): what one native agent process has already been shown of a
 * channel (or thread), so a warm turn carries only new rows.
 *
 * A watermark `{native, last_at, ids}` is keyed by (session key, channel, thread), holds at most
 * 200 ids (the newest kept), and is bound to the native process id: a different process (after
 * eviction, crash or a fresh start) does not use it and gets a snapshot instead of a hole.
 * It advances only when a run succeeds: render → stage(rows) → run → commit() or discard().
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ChannelMessage } from '../samples/channel.js';
import { instantOf } from './channel-log.js';

export const WATERMARK_MAX_IDS = 200;

export interface Watermark {
  /** id of the native process (agent session) the rows were shown to */
  native: string;
  /** created_at of the newest row shown; null when none was shown yet */
  last_at: string | null;
  /** ids of the rows shown, oldest first, at most WATERMARK_MAX_IDS */
  ids: string[];
}

export interface WatermarkKey {
  sessionKey: string;
  channel: string;
  thread: string | null;
}

function keyString(k: WatermarkKey): string {
  return JSON.stringify([k.sessionKey, k.channel, k.thread]);
}

/**
 * The commit rule: ids ∪= shown ids (newest 200 kept), last_at = newest created_at shown.
 * A watermark of another native process is replaced, not extended.
 *
 * Example: prev {native: 'n1', last_at: '10:00', ids: [a, b]}, shown [c (10:05)] to n1 →
 * {native: 'n1', last_at: '10:05', ids: [a, b, c]}; the same shown to n2 → {n2, '10:05', [c]}.
 */
export function advanceWatermark(prev: Watermark | undefined, native: string, shown: readonly ChannelMessage[]): Watermark {
  const base: Watermark = prev && prev.native === native ? prev : { native, last_at: null, ids: [] };
  const ids = [...base.ids];
  const seen = new Set(ids);
  let lastAt = base.last_at;
  for (const m of shown) {
    if (!seen.has(m.id)) {
      ids.push(m.id);
      seen.add(m.id);
    }
    if (lastAt === null || instantOf(m.created_at) > instantOf(lastAt)) lastAt = m.created_at;
  }
  return { native, last_at: lastAt, ids: ids.slice(-WATERMARK_MAX_IDS) };
}

/** Rows held for one run; exactly one of commit() / discard() ends it. */
export interface StagedRows {
  readonly rows: readonly ChannelMessage[];
  /** the run succeeded: advance the watermark over the rows */
  commit(): Watermark;
  /** the run failed: leave the watermark as it was, so the rows are sent again */
  discard(): void;
}

interface StoredEntry extends Watermark {
  session_key: string;
  channel: string;
  thread: string | null;
}

interface StoreFile {
  version: 1;
  watermarks: StoredEntry[];
}

/** Watermarks by key, optionally persisted as one JSON file at a path the caller chooses. */
export class WatermarkStore {
  private readonly entries = new Map<string, { key: WatermarkKey; mark: Watermark }>();

  constructor(readonly path: string | null = null) {}

  /** Reads the store at `path`; a missing file is an empty store. */
  static async load(path: string): Promise<WatermarkStore> {
    const store = new WatermarkStore(path);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return store;
      throw e;
    }
    // a corrupt file threw JSON.parse's bare SyntaxError, an entry without ids a TypeError on .slice
    const bad = (why: string) => new Error(`${path}: not a watermark store (${why})`);
    let data: StoreFile;
    try {
      data = JSON.parse(text) as StoreFile;
    } catch (e) {
      throw bad((e as Error).message);
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data) || !Array.isArray(data.watermarks ?? [])) throw bad('expected {"version": 1, "watermarks": […]}');
    for (const e of data.watermarks ?? []) {
      if (typeof e !== 'object' || e === null || !Array.isArray(e.ids)) throw bad('a watermark without its ids');
      store.set(
        { sessionKey: e.session_key, channel: e.channel, thread: e.thread },
        { native: e.native, last_at: e.last_at, ids: e.ids.slice(-WATERMARK_MAX_IDS) },
      );
    }
    return store;
  }

  /** Writes the store atomically (temp file + rename). */
  async save(): Promise<void> {
    if (!this.path) throw new Error('WatermarkStore has no path');
    const data: StoreFile = {
      version: 1,
      watermarks: [...this.entries.values()].map(({ key, mark }) => ({
        session_key: key.sessionKey,
        channel: key.channel,
        thread: key.thread,
        ...mark,
      })),
    };
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp`;
    await writeFile(tmp, JSON.stringify(data, null, 2) + '\n');
    await rename(tmp, this.path);
  }

  get(key: WatermarkKey): Watermark | undefined {
    return this.entries.get(keyString(key))?.mark;
  }

  set(key: WatermarkKey, mark: Watermark): void {
    this.entries.set(keyString(key), { key, mark });
  }

  /** The watermark only when it is bound to the process that will answer now. */
  lookup(key: WatermarkKey, native: string): Watermark | undefined {
    const w = this.get(key);
    return w && w.native === native ? w : undefined;
  }

  /** Holds the rows a render showed to `native` until the run ends. */
  stage(key: WatermarkKey, native: string, rows: readonly ChannelMessage[]): StagedRows {
    let open = true;
    const close = () => {
      if (!open) throw new Error('staged rows already committed or discarded');
      open = false;
    };
    return {
      rows,
      commit: () => {
        close();
        const next = advanceWatermark(this.get(key), native, rows);
        this.set(key, next);
        return next;
      },
      discard: () => close(),
    };
  }
}
