/**
 * Reads a channel log (JSONL: `id`, `author`, `created_at`, `text`, optional `thread_root_id`)
 * and finds the agent's mentions and replies in it. Bad lines are data: each is counted with its
 * line number and reason, never thrown.
 */
import { readFile } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import type { ChannelMessage } from '../samples/channel.js';

export interface SkippedChannelLine {
  line: number;
  reason: 'invalid_json' | 'not_an_object' | 'missing_field' | 'bad_timestamp';
  detail: string;
}

export interface ChannelLog {
  /** in channel order: by created_at, file order among equal times */
  messages: ChannelMessage[];
  skipped: SkippedChannelLine[];
}

export function parseChannelLog(text: string): ChannelLog {
  const rows: Array<{ m: ChannelMessage; t: number; i: number }> = [];
  const skipped: SkippedChannelLine[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    let o: unknown;
    try {
      o = JSON.parse(raw);
    } catch (e) {
      skipped.push({ line, reason: 'invalid_json', detail: (e as Error).message.slice(0, 120) });
      return;
    }
    if (typeof o !== 'object' || o === null || Array.isArray(o)) {
      skipped.push({ line, reason: 'not_an_object', detail: typeof o });
      return;
    }
    const r = o as Record<string, unknown>;
    for (const f of ['id', 'author', 'created_at', 'text'] as const) {
      if (typeof r[f] !== 'string') {
        skipped.push({ line, reason: 'missing_field', detail: f });
        return;
      }
    }
    const t = Date.parse(r.created_at as string);
    if (Number.isNaN(t)) {
      skipped.push({ line, reason: 'bad_timestamp', detail: String(r.created_at).slice(0, 60) });
      return;
    }
    const m: ChannelMessage = { id: r.id as string, author: r.author as string, created_at: r.created_at as string, text: r.text as string };
    if (typeof r.thread_root_id === 'string') m.thread_root_id = r.thread_root_id;
    rows.push({ m, t, i });
  });
  rows.sort((a, b) => a.t - b.t || a.i - b.i);
  return { messages: rows.map((r) => r.m), skipped };
}

export async function readChannelLog(path: string): Promise<ChannelLog> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read channel log ${path} (${code ?? (e as Error).message})`, 'pass a JSONL file with id, author, created_at, text per line');
  }
  return parseChannelLog(text);
}

/** `@claude` → `claude`: the author name of the agent's own messages. */
export function agentAuthor(handle: string): string {
  return handle.replace(/^@/, '');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** True when a message by someone other than the agent mentions its handle as a whole word. */
export function isMention(m: ChannelMessage, handle: string): boolean {
  const name = agentAuthor(handle);
  if (m.author === name) return false;
  return new RegExp(`(^|[^\\w@])@${escapeRegExp(name)}(?![\\w-])`).test(m.text);
}

/** The thread a message belongs to: its thread root, or null for the channel itself. */
export function threadOf(m: ChannelMessage): string | null {
  return m.thread_root_id ?? null;
}

/** True when `m` is visible in `thread`'s history (the root message belongs to its thread). */
export function inThread(m: ChannelMessage, thread: string | null): boolean {
  if (thread === null) return m.thread_root_id === undefined;
  return m.thread_root_id === thread || m.id === thread;
}

/**
 * Pairs each mention with the agent's answer in the log: in one pass, each agent message answers
 * the oldest unanswered mention before it in the same thread. Mentions left unanswered get
 * undefined (the replay then writes a reply of its own).
 *
 * Example: [m1 mention, m2 mention, m3 claude, m4 claude] → m1 ↦ m3, m2 ↦ m4.
 */
export function pairReplies(messages: readonly ChannelMessage[], mentionIdx: readonly number[], handle: string): Array<ChannelMessage | undefined> {
  const name = agentAuthor(handle);
  const slotOf = new Map(mentionIdx.map((mi, k) => [mi, k]));
  const out: Array<ChannelMessage | undefined> = mentionIdx.map(() => undefined);
  const waiting = new Map<string | null, number[]>();
  messages.forEach((m, i) => {
    const thread = threadOf(m);
    const k = slotOf.get(i);
    if (k !== undefined) {
      const q = waiting.get(thread) ?? [];
      q.push(k);
      waiting.set(thread, q);
    } else if (m.author === name) {
      const k2 = waiting.get(thread)?.shift();
      if (k2 !== undefined) out[k2] = m;
    }
  });
  return out;
}
