/**
 * Reads a channel log (JSONL: `id`, `author`, `created_at`, `text`, optional `thread_root_id`)
 * and finds the agent's mentions and replies in it. Bad lines are data: each is counted with its
 * line number and reason, never thrown.
 */
import { createReadStream } from 'node:fs';
import { UsageError } from '../errors.js';
import { parseInstant } from '../ingest/line.js';
import { UTF16_SAID, utf16Text } from '../ingest/read-file.js';
import { foldCase } from '../format/fold.js';
import type { ChannelMessage } from '../samples/channel.js';

export interface SkippedChannelLine {
  line: number;
  reason: 'invalid_json' | 'not_an_object' | 'missing_field' | 'bad_timestamp' | 'line_too_long' | 'duplicate_id';
  detail: string;
}

export interface ChannelLog {
  /** in channel order: by created_at, file order among equal times */
  messages: ChannelMessage[];
  skipped: SkippedChannelLine[];
}

/**
 * A line longer than this is skipped (counted), not read: the replay cuts every body to 600
 * characters, and a string of a line past V8's limit (~512 MiB) cannot even be made.
 */
export const MAX_CHANNEL_LINE_BYTES = 64 * 1024 * 1024;

/** One line of the log: a message, or why it was skipped. */
function parseLine(raw: string, line: number): { m: ChannelMessage; t: number } | SkippedChannelLine | null {
  if (raw.trim() === '') return null;
  let o: unknown;
  try {
    o = JSON.parse(raw);
  } catch (e) {
    return { line, reason: 'invalid_json', detail: (e as Error).message.slice(0, 120) };
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return { line, reason: 'not_an_object', detail: kindOf(o) };
  const r = o as Record<string, unknown>;
  for (const f of ['id', 'author', 'created_at', 'text'] as const) {
    // an id of 1 read 'missing_field: id', as if the line had none
    if (typeof r[f] !== 'string') return { line, reason: 'missing_field', detail: r[f] === undefined ? f : `${f} (${kindOf(r[f])}, expected a string)` };
  }
  const t = parseInstant(r.created_at as string);
  if (t === null) return { line, reason: 'bad_timestamp', detail: `${String(r.created_at).slice(0, 60)} (expected ISO 8601 with an offset, e.g. 2026-03-11T09:03:00Z)` };
  const m: ChannelMessage = { id: r.id as string, author: r.author as string, created_at: r.created_at as string, text: r.text as string };
  // a thread id of another type (a number, an object) put the message in the channel's top level, silently.
  // A root naming itself (as Slack's thread_ts does on a thread's parent) is a top-level message: read as
  // a thread of its own, it lost its channel context and left every top-level block
  if (typeof r.thread_root_id === 'string') {
    if (r.thread_root_id !== r.id) m.thread_root_id = r.thread_root_id;
  } else if (r.thread_root_id !== undefined && r.thread_root_id !== null) {
    return { line, reason: 'missing_field', detail: `thread_root_id (${kindOf(r.thread_root_id)}, expected a string)` };
  }
  return { m, t };
}

/** What a JSON value is, for a skip's detail: `number`, `an array`, `null`… (typeof says `object` for the last two). */
function kindOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/** Collects parsed lines into a ChannelLog, in channel order. */
class LogBuilder {
  private readonly rows: Array<{ m: ChannelMessage; t: number; i: number }> = [];
  readonly skipped: SkippedChannelLine[] = [];
  /** the line each id was first read on */
  private readonly lineOf = new Map<string, number>();

  add(raw: string, line: number): void {
    // a byte-order mark is no part of a line's JSON: before the first line, or before the first line of
    // a second export joined to the first (`cat a.jsonl b.jsonl`), whose line was an invalid_json skip
    const r = parseLine(raw.startsWith('\ufeff') ? raw.slice(1) : raw, line);
    if (r === null) return;
    if ('reason' in r) return void this.skipped.push(r);
    // a second message with an id (two exports joined): the replay keys rows, watermarks and
    // replies by id, so it was dropped from context blocks as "already shown", or shown twice
    const first = this.lineOf.get(r.m.id);
    if (first !== undefined) return void this.skipped.push({ line, reason: 'duplicate_id', detail: `${r.m.id.slice(0, 60)} (first on line ${first})` });
    this.lineOf.set(r.m.id, line);
    this.rows.push({ ...r, i: line });
  }

  skip(s: SkippedChannelLine): void {
    this.skipped.push(s);
  }

  log(): ChannelLog {
    this.rows.sort((a, b) => a.t - b.t || a.i - b.i);
    return { messages: this.rows.map((r) => r.m), skipped: this.skipped };
  }
}

export function parseChannelLog(text: string): ChannelLog {
  const b = new LogBuilder();
  text.split('\n').forEach((raw, i) => b.add(raw, i + 1));
  return b.log();
}

/**
 * A channel log that will not open, in `replay session`'s words for a transcript path: 'no such file
 * or directory: F' (ENOENT, or a path through a file), 'F: is a directory', 'F: cannot read channel
 * log (EACCES)'. It read 'cannot read channel log F (ENOENT)', an errno where session said it plainly.
 */
export function channelLogError(path: string, e: unknown): UsageError {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return new UsageError(`no such file or directory: ${path}`, 'give a channel log file');
  if (code === 'EISDIR') return new UsageError(`${path}: is a directory`, 'give a channel log file');
  // (no hint about the lines' fields: the file is there, and what it holds is not the trouble)
  return new UsageError(`${path}: cannot read channel log (${code ?? (e as Error).message})`);
}

/**
 * Reads a channel log line by line from the file's bytes: a line over MAX_CHANNEL_LINE_BYTES is a
 * counted skip (its bytes are passed over, not kept), the others are parsed as parseChannelLog does.
 */
export async function readChannelLog(path: string, maxLineBytes = MAX_CHANNEL_LINE_BYTES): Promise<ChannelLog> {
  const b = new LogBuilder();
  let line = 1;
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  // the last line said to be UTF-16 text
  let utf16Line = -1;
  const end = () => {
    if (tooLong) b.skip({ line, reason: 'line_too_long', detail: `${size} bytes, over ${maxLineBytes}: not read` });
    else {
      const bytes = Buffer.concat(parts);
      const before = b.skipped.length;
      b.add(bytes.toString('utf8').replace(/\r$/, ''), line);
      // a line that is no JSON and looks like UTF-16 text is said as ingest says it (looked at only once it failed)
      const last = b.skipped[before];
      if (last?.reason === 'invalid_json' && utf16Text(bytes, 0, bytes.length)) {
        last.detail = UTF16_SAID;
        utf16Line = line;
      }
    }
    line++;
    parts = [];
    size = 0;
    tooLong = false;
  };
  try {
    for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
      let from = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, from)) {
        take(chunk.subarray(from, nl));
        end();
        from = nl + 1;
      }
      take(chunk.subarray(from));
    }
  } catch (e) {
    throw channelLogError(path, e);
  }
  // UTF-16LE text ends "\n" as 0A 00: a lone NUL after a UTF-16 line's newline is the rest of that newline, as ingest reads it
  const newlineRest = !tooLong && size === 1 && parts[0]![0] === 0 && utf16Line === line - 1;
  if ((size > 0 || tooLong) && !newlineRest) end();
  return b.log();

  function take(part: Buffer): void {
    if (part.length === 0) return;
    size += part.length;
    if (size > maxLineBytes) {
      tooLong = true;
      parts = [];
    } else if (!tooLong) parts.push(Buffer.from(part));
  }
}

/**
 * A message time in epoch ms, read as the log is ordered (parseInstant), so that every time of the
 * replay agrees with that order. Date.parse read `0050-03-11 08:47:00Z` (a space for the T) as 1950,
 * while the log sorted it as year 50: gaps came out negative by 1,900 years.
 */
export function instantOf(createdAt: string): number {
  return parseInstant(createdAt) ?? Date.parse(createdAt);
}

/** `@claude` → `claude`: the author name of the agent's own messages. */
export function agentAuthor(handle: string): string {
  return handle.replace(/^@/, '');
}

/**
 * True when `author` is the agent's name (agentAuthor) in any case, as chat apps compare handles:
 * with `--agent @Claude`, messages by `claude` are the agent's (its replies, its rows), not a user's.
 * Cases are folded by format/fold.ts, not by the locale: ΣΟΦΟΣ, σοφος and σοφοσ are one name
 * (toLowerCase kept σοφοσ apart: it writes ΣΟΦΟΣ with a final ς).
 */
export function isAgentAuthor(author: string, name: string): boolean {
  return author === name || foldCase(author) === foldCase(name);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * True when a message by someone other than the agent mentions its handle, as chat apps read one:
 * case-insensitively (`@Claude` mentions `@claude`), and only the whole handle. A handle runs on
 * through letters, digits and `_`, and through `.`s or `-`s followed by one of those (Slack and
 * Mattermost names hold `.`, `-` and `_`), so `@claude.bot`, `@claude-dev` and `@claude_2` are other
 * handles, while `@claude.`, `@claude,`, `@claude:` and `(@claude)` end at the punctuation and
 * mention it. The `@` must not follow a letter, digit, `_` or `@` (`ops@claude.dev` is an address).
 * Before, the match was case-sensitive and stopped at a `.`: `@Claude` was no mention and
 * `@claude.bot` was one.
 */
export function isMention(m: ChannelMessage, handle: string): boolean {
  const name = agentAuthor(handle);
  if (isAgentAuthor(m.author, name)) return false;
  // no '@', no mention: the fold below goes character by character through text beyond ASCII
  if (!m.text.includes('@')) return false;
  // folded as the authors are (format/fold.ts): the regex's own i flag kept ı and i apart, which foldCase joins
  return mentionPattern(foldCase(name)).test(foldCase(m.text));
}

const patterns = new Map<string, RegExp>();

function mentionPattern(name: string): RegExp {
  let re = patterns.get(name);
  if (!re) {
    re = new RegExp(`(?<![\\p{L}\\p{N}_@])@${escapeRegExp(name)}(?![\\p{L}\\p{N}_]|[.-]+[\\p{L}\\p{N}_])`, 'u');
    patterns.set(name, re);
  }
  return re;
}

/** The thread a message belongs to: its thread root, or null for the channel itself. */
export function threadOf(m: ChannelMessage): string | null {
  return m.thread_root_id ?? null;
}

/**
 * Pairs each mention with the agent's answer in the log, as a reader of the channel pairs them:
 * by stream (the channel's top level, or one thread) and by adjacency. The agent's messages of a
 * stream come in runs: messages of the agent with no mention of it in that stream between them
 * (other people's messages may be). A run of k agent messages answers the k most recent mentions
 * of its stream still unanswered before it, oldest mention with the first message; its messages
 * beyond those (a follow-up, a second part) answer nothing. A thread's root that is an unanswered
 * mention posted before the run counts as one of the thread's mentions (the usual way to answer a
 * top-level mention: in a thread under it). Runs are taken in channel order of their first
 * message, so a root answered at the top level is not answered again in its thread. Mentions left
 * unanswered get undefined (the replay then writes a reply of its own).
 *
 * Examples (each line one stream, in channel order):
 *   [m1, m2, r1, r2] → m1 ↦ r1, m2 ↦ r2 (a queue: a burst of two mentions, then both answers);
 *   [m1 09:00, m2 14:00, r 14:01] → m2 ↦ r, m1 unanswered (the oldest-first rule this replaced
 *   gave r to m1, then m2 a stand-in reply, and every later reply of the stream its predecessor's
 *   mention; with --idle-reap the process was busy from 09:00 to 14:01);
 *   [m1 09:00, r 14:00] → m1 ↦ r (hours later, no other mention between);
 *   [m1, a1 in thread m1] → m1 ↦ a1.
 * Limits: the log does not say which mention a message answers. With fewer answers than open
 * mentions, the older mentions are taken as the unanswered ones: in [m1, m2, r] r is m2's even if
 * it answered m1. An agent slower than its mentions ([m1, m2, r1, m3, r2, r3], r1 answering m1)
 * is read as m2 ↦ r1, m1 ↦ r2, m3 ↦ r3. A follow-up is read as an answer while an older mention
 * is open: [u 09:30, m 14:00, r 14:01, f 14:02] gives u ↦ r, m ↦ f (order alone cannot tell it
 * from the queue above; no time limit is guessed).
 */
export function pairReplies(messages: readonly ChannelMessage[], mentionIdx: readonly number[], handle: string): Array<ChannelMessage | undefined> {
  const name = agentAuthor(handle);
  const slotOf = new Map(mentionIdx.map((mi, k) => [mi, k]));
  const slotOfId = new Map(mentionIdx.map((mi, k) => [messages[mi]!.id, k]));
  const out: Array<ChannelMessage | undefined> = mentionIdx.map(() => undefined);
  // per stream: its mentions (slots) so far, and its open run of agent messages
  const mentionsOf = new Map<string | null, number[]>();
  const open = new Map<string | null, Run>();
  interface Run {
    thread: string | null;
    /** the stream's mentions posted before the run */
    asked: number;
    replies: number[];
  }
  const runs: Run[] = [];
  messages.forEach((m, i) => {
    const thread = threadOf(m);
    const k = slotOf.get(i);
    if (k !== undefined) {
      const q = mentionsOf.get(thread) ?? [];
      q.push(k);
      mentionsOf.set(thread, q);
      open.delete(thread);
    } else if (isAgentAuthor(m.author, name)) {
      let run = open.get(thread);
      if (!run) {
        run = { thread, asked: mentionsOf.get(thread)?.length ?? 0, replies: [] };
        open.set(thread, run);
        runs.push(run);
      }
      run.replies.push(i);
    }
  });
  // runs were pushed in the order of their first message
  for (const run of runs) {
    const first = run.replies[0]!;
    const asked = (mentionsOf.get(run.thread) ?? []).slice(0, run.asked);
    const root = run.thread === null ? undefined : slotOfId.get(run.thread);
    if (root !== undefined && mentionIdx[root]! < first) asked.push(root);
    const unanswered = asked.filter((k) => out[k] === undefined).sort((a, b) => mentionIdx[a]! - mentionIdx[b]!);
    const answered = unanswered.slice(Math.max(0, unanswered.length - run.replies.length));
    answered.forEach((k, j) => (out[k] = messages[run.replies[j]!]));
  }
  return out;
}
