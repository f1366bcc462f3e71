/**
 * Reading one `message.usage` block (SPEC §1.3). A field that is absent or null counts 0; a field
 * that is a string, negative, fractional or beyond any real context (≥ 1e9 tokens) makes the line
 * an `invalid_usage` skip rather than a silently wrong number. So does a `cache_creation` or
 * `server_tool_use` that is there but not an object (a number, a string, an array): its write
 * split (or tool counts) would otherwise read as absent, every write priced at 5 minutes.
 *
 * Example: `{"input_tokens":3,"cache_creation_input_tokens":15005,"cache_read_input_tokens":11442,
 * "output_tokens":9}` (no `cache_creation` split, as Claude Code 1.0 wrote it) reads as
 * in 3, w 15,005 = w5 15,005 + w1h 0, r 11,442, out 9, splitMissing.
 */
import type { Usage } from '../types.js';
import { obj, str } from './line.js';
import { LONG_STRING, OTHER_ARRAY, OTHER_OBJECT, SHORT_STRING, isLongString } from './project.js';

export interface ReadUsage extends Usage {
  splitMissing: boolean;
  serviceTier: string | null;
  speed: string | null;
}

const MAX_TOKENS = 1e9;

/**
 * Why a line with usage cannot be a request before its usage is read (an `invalid_usage` skip), or
 * null: no `message.id`, one holding a NUL (the store splits its key at the first), no valid time.
 * Ingest and the session replay skip by the same rule, so their request counts agree.
 */
export function identityProblem(messageId: string | null, t: number): string | null {
  if (!messageId) return 'usage without message.id';
  if (messageId.includes('\u0000')) return 'message.id holds a NUL character';
  if (!Number.isFinite(t)) return 'usage without a valid timestamp';
  return null;
}

/**
 * Why a line that is not an assistant line is an `invalid_usage` skip: it holds `message.usage`
 * (only an assistant line is a request, SPEC §1.3; counted by its type alone, its tokens would
 * vanish unsaid), or null when it holds none. Ingest and the session replay skip by this rule.
 * Example: type "Assistant" with usage → 'usage on a line of type "Assistant", not "assistant"'.
 */
export function usageOffAssistant(type: unknown, message: unknown): string | null {
  const usage = obj(message)?.usage;
  if (usage === undefined || usage === null) return null;
  const of =
    type === undefined || type === null
      ? 'of no type'
      : typeof type !== 'string' || type === OTHER_OBJECT || type === OTHER_ARRAY
        ? 'whose type is not a string'
        : type.startsWith(LONG_STRING)
          ? 'whose type is a long string'
          : `of type ${JSON.stringify(type.slice(0, 40))}`;
  return `usage on a line ${of}, not "assistant"`;
}

export function readUsage(raw: unknown): ReadUsage | string {
  const u = obj(raw);
  if (!u) return 'usage is not an object';
  let bad: string | null = null;
  const count = (x: unknown, name: string): number => {
    if (x === undefined || x === null) return 0;
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x >= MAX_TOKENS) {
      // JSON.stringify writes 1e400 (Infinity) as null, which would name the wrong value
      bad ??= `${name} = ${(typeof x === 'number' ? String(x) : JSON.stringify(x))?.slice(0, 40)}`;
      return 0;
    }
    return x;
  };
  const input = count(u.input_tokens, 'input_tokens');
  const output = count(u.output_tokens, 'output_tokens');
  let cacheWrite = count(u.cache_creation_input_tokens, 'cache_creation_input_tokens');
  const cacheRead = count(u.cache_read_input_tokens, 'cache_read_input_tokens');
  // A block that is absent or null is none; one of another type is bad, not none. Checked inline:
  // as a second closure beside `count` (per assistant line, on the reading path) it made this
  // function ~1.7 times as slow (3M calls: 1.6 – 2.4 s against 2.9 – 4.1 s).
  const creation = u.cache_creation;
  const split = obj(creation);
  if (split === null && creation !== undefined && creation !== null) bad ??= `cache_creation = ${notABlock(creation)}`;
  let cacheWrite5m = cacheWrite;
  let cacheWrite1h = 0;
  let splitMissing = true;
  if (split && (split.ephemeral_5m_input_tokens !== undefined || split.ephemeral_1h_input_tokens !== undefined)) {
    const w5 = count(split.ephemeral_5m_input_tokens, 'ephemeral_5m_input_tokens');
    const w1h = count(split.ephemeral_1h_input_tokens, 'ephemeral_1h_input_tokens');
    splitMissing = false;
    // cache_creation_input_tokens is what is billed; the split only says at which TTL.
    if (u.cache_creation_input_tokens === undefined || u.cache_creation_input_tokens === null) cacheWrite = w5 + w1h;
    cacheWrite1h = Math.min(w1h, cacheWrite);
    cacheWrite5m = cacheWrite - cacheWrite1h;
  }
  const serverUse = u.server_tool_use;
  const server = obj(serverUse);
  if (server === null && serverUse !== undefined && serverUse !== null) bad ??= `server_tool_use = ${notABlock(serverUse)}`;
  const webSearch = server ? count(server.web_search_requests, 'web_search_requests') : 0;
  const webFetch = server ? count(server.web_fetch_requests, 'web_fetch_requests') : 0;
  if (bad) return `invalid usage field ${bad}`;
  return {
    input,
    output,
    cacheWrite,
    cacheWrite5m,
    cacheWrite1h,
    cacheRead,
    webSearch,
    webFetch,
    splitMissing,
    serviceTier: str(u.service_tier),
    speed: str(u.speed),
  };
}

/**
 * A block that is not an object, as a skip's detail names it: the same whether the line was
 * projected (an array is then the OTHER_ARRAY marker, a long string LONG_STRING: project.ts) or
 * parsed whole (the session replay).
 */
function notABlock(x: unknown): string {
  if (x === OTHER_ARRAY || Array.isArray(x)) return '[…]';
  if (isLongString(x) || (typeof x === 'string' && x.length > SHORT_STRING)) return '"…"';
  return (typeof x === 'number' ? String(x) : JSON.stringify(x)).slice(0, 40);
}

/** The write fields of a request's usage. */
export interface WriteFields {
  cacheWrite: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

/**
 * Merges a copy's write into a request's (SPEC §1.3, the field-wise maximum): the largest write,
 * split by the largest 1-hour part, the 5-minute part the rest. Taking the maximum of each part
 * could count a write twice: a copy without a split counts all of it 5-minute.
 */
export function mergeWrite(into: WriteFields, copy: WriteFields): void {
  into.cacheWrite = Math.max(into.cacheWrite, copy.cacheWrite);
  into.cacheWrite1h = Math.min(Math.max(into.cacheWrite1h, copy.cacheWrite1h), into.cacheWrite);
  into.cacheWrite5m = into.cacheWrite - into.cacheWrite1h;
}
