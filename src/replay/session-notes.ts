/**
 * The words `replay session` prints around its tables, shared by its text (session-report.ts) and
 * the HTML report's replay section (report/section-replay.ts), so the two say the same thing in
 * the same words. Plain text: the terminal cleans it (format/table.ts clean), the report escapes
 * it (report/escape.ts); transcript text (a model, an attachment type, a skip reason) passes as is.
 */
import { displayWidth, fit, int } from '../format/table.js';
import { fmtCount } from '../report/format.js';
import { requestRange } from './session-calibrate.js';

/** Example: { requests: 143, rounds: 2, compactions: 1, models: ['claude-opus-4-6'] } → '143 requests · 2 rounds · 1 compaction · claude-opus-4-6' */
export function chainFacts(c: { requests: number; rounds: number; compactions: number; models: readonly string[] }): string {
  // each model cut to 120 columns by its ends (format/table.ts fit): the replay reads its transcript whole, a 5,000-character model too
  return `${fmtCount(c.requests, 'request')} · ${fmtCount(c.rounds, 'round')} · ${fmtCount(c.compactions, 'compaction')} · ${c.models.map((m) => fit(m)).join(', ')}`;
}

/**
 * A chain id as a heading shows it, at most 120 columns: each part cut by its ends on its own (format/table.ts fit), the
 * session id, `:side:` or `:` and the chain's own id, so a long session id's hash and the `:side:` between stay.
 * Cut as one, a long session id beside a long sidechain uuid lost both. An id that fits is whole.
 * `max`: the columns it may take (piped and on a terminal of 120 columns or more; a narrower terminal cuts the id once in its middle, headingId: session-report.ts).
 * Example: ('S:side:U', 'S') with S and U each 110 columns → 'S's first 28…its hash) :side: U's first 28…its hash)'.
 */
export function fitChainId(chainId: string, sessionId: string, max = 120): string {
  if (displayWidth(chainId) <= max || !chainId.startsWith(sessionId) || chainId.length === sessionId.length) return fit(chainId, max);
  const rest = chainId.slice(sessionId.length);
  const sep = rest.startsWith(':side:') ? ':side:' : rest.startsWith(':') ? ':' : '';
  const own = rest.slice(sep.length);
  // a terminal too narrow for the separator and a few columns of each: the id cut as one
  if (max - sep.length < 2 * 6) return fit(chainId, max);
  const room = Math.floor((max - sep.length) / 2);
  return `${fit(sessionId, room)}${sep}${fit(own, max - sep.length - Math.min(room, displayWidth(sessionId)))}`;
}

export interface PrefixFacts {
  prefixTokens: number;
  observedPrompt: number;
  messageTokens: number;
  clamped: boolean;
  encoding: string;
  thinking: string;
  reinject: { type: string; tokens: number; line: number } | null;
}

/** Example: 'prefix 25,861 tokens (request 1: P 25,897 − 36 message tokens) · cl100k_base · thinking keep' */
export function prefixLine(p: PrefixFacts): string {
  return (
    `prefix ${int(p.prefixTokens)} tokens (request 1: P ${int(p.observedPrompt)} − ${int(p.messageTokens)} message tokens${p.clamped ? ', clamped at 0' : ''})` +
    ` · ${p.encoding} · thinking ${p.thinking}` +
    (p.reinject ? ` · reinject ${p.reinject.type} (${int(p.reinject.tokens)} tokens, line ${p.reinject.line})` : '')
  );
}

/** A resumed session's transcript repeats the earlier session's requests; the store counts them there. */
export function copiedNote(n: number): string {
  const [them, their] = n === 1 ? ['it', 'its'] : ['them', 'their'];
  return `${fmtCount(n, 'copied request')} left out: this transcript repeats ${them} from another chain (a resumed session), where the store counts ${them}; ${their} messages stay in the context`;
}

/** A subagent's requests that only the parent's agent_progress copies hold (its transcript was cut short). */
export function progressOnlyNote(n: number): string {
  const them = n === 1 ? 'it' : 'them';
  return `${fmtCount(n, 'request')} of this chain not replayed: only agent_progress copies in the parent's transcript hold ${them} (the store counts ${them}), this chain's transcript does not`;
}

/**
 * Requests of the chain that only other transcripts hold: Claude Code wrote the session's lines into
 * two project directories (one file each, the same name), and the replay reads one transcript. The
 * other replayed as a FILE is read alone: its requests' contexts are rebuilt from its lines only,
 * without this transcript's messages (the advice said "replay that one as a FILE to see them", as
 * if that replayed them as sent).
 * Example: (17, ['/b/S.jsonl']) → '17 requests of this chain not replayed: another transcript of this session, /b/S.jsonl,
 * holds them (the store counts them); the replay reads one transcript: that one replayed as a FILE replays them from its
 * own lines alone, without this transcript's messages, which their prompts as sent may have held'.
 */
export function otherFilesNote(n: number, files: readonly string[]): string {
  const [them, their] = n === 1 ? ['it', 'its'] : ['them', 'their'];
  const where = files.length === 1 ? `another transcript of this session, ${files[0]}, holds ${them}` : `${files.length} other transcripts of this session hold ${them} (${files[0]}, …)`;
  const advice = files.length === 1 ? `that one replayed as a FILE replays ${them} from its own lines alone` : `each of those replayed as a FILE replays its own from its lines alone`;
  return `${fmtCount(n, 'request')} of this chain not replayed: ${where} (the store counts ${them}); the replay reads one transcript: ${advice}, without this transcript's messages, which ${their} ${n === 1 ? 'prompt' : 'prompts'} as sent may have held`;
}

/** What chose the copy replayed over the next (LocatedChain.other_copies_by): the most requests, then the tie-breaks. */
export type CopyChoice = 'requests' | 'best_copies' | 'latest' | 'largest' | 'path';

const CHOSEN: Record<CopyChoice, string> = {
  requests: 'the one holding the most',
  best_copies: 'the one whose copies of them the store counts',
  latest: 'the one whose last line is latest',
  largest: 'the largest',
  path: 'the first by path',
};

/**
 * Other copies of the chain's transcript in the logs read, each holding only requests the one replayed holds too (a
 * session's file in two project directories, one an older copy that stopped early): which was replayed, which not,
 * and why. `choice`: what chose it (`by`) and how many of the copies hold as many of its requests (`tied`): copies
 * that tie hold the same requests, and the one replayed is no more "the one holding the most" than they are.
 * Example: ('/b/S.jsonl', ['/a/S.jsonl']) → 'another copy of this transcript, /a/S.jsonl, holds none of its requests that this one does not: replayed /b/S.jsonl, the one holding the most';
 * with { by: 'latest', tied: 1 } → 'another copy of this transcript, /a/S.jsonl, holds the same requests as this one: replayed /b/S.jsonl, the one whose last line is latest'.
 */
export function otherCopiesNote(used: string, copies: readonly string[], choice?: { by: CopyChoice | null; tied: number }): string {
  const one = copies.length === 1;
  const which = one ? `another copy of this transcript, ${copies[0]}, holds` : `${copies.length} other copies of this transcript (${copies[0]}, …) hold`;
  if (!choice?.by || choice.by === 'requests' || choice.tied === 0) return `${which} none of its requests that this one does not: replayed ${used}, ${CHOSEN.requests}`;
  if (choice.tied >= copies.length) return `${which} the same requests as this one: replayed ${used}, ${CHOSEN[choice.by]}`;
  return `${which} none of its requests that this one does not: replayed ${used}, of the ${choice.tied + 1} holding the most, ${CHOSEN[choice.by]}`;
}

/** The `+?` of weighted cost and USD: `unpriced` is the most requests without a price in any strategy. */
export function unpricedNote(unpriced: number): string {
  const them = unpriced === 1 ? 'request of a model without a price is' : 'requests of models without a price are';
  return `+? ${int(unpriced)} ${them} left out of weighted cost and USD (— where no request has a price)`;
}

/** request 1 calibrates the prefix: a chain of one request has nothing left to compare */
export const NO_FIDELITY = 'Fidelity of recorded: none (a chain of one request: it calibrates the prefix, no request is left to compare)';

/** The fidelity table's heading, without its colon. Example: (2, 143) → 'Fidelity of recorded (requests 2–143; relative error |predicted − observed| / observed)' */
export function fidelityHeading(from: number, requests: number): string {
  const held = from > 2 ? `, held out from the ${from - 2}-request calibration` : '';
  return `Fidelity of recorded (${requestRange(from, requests)}${held}; relative error |predicted − observed| / observed)`;
}

/** A request that logged no usage at all has no relative error: said, not dropped from the count unsaid. */
export function promptZeroNote(n: number): string {
  return `prompt size observed 0 in ${fmtCount(n, 'request')} (usage all 0 in the log): no relative error, left out of the prompt row`;
}

/** One request: '0 in 1 request', not '0 in 1 requests … 0 in 1 of them'. */
export function cacheReadZeroNote(zero: number, predictedZeroToo: number): string {
  if (zero === 1) return `cache reads observed 0 in 1 request; the replay predicted ${predictedZeroToo ? '0 there too' : 'a read there'}`;
  return `cache reads observed 0 in ${int(zero)} requests; the replay predicted 0 in ${int(predictedZeroToo)} of them`;
}

export function tokenizerNote(encoding: string): string {
  return `Token counts are ${encoding} estimates of Claude's tokenizer: absolute numbers are approximate, ratios are the result.`;
}

/** The heading of the skipped lines, without its colon. Example: (1, 2) → '1 line skipped, 2 lines read with a field ignored or converted' */
export function skippedHeading(skippedLines: number, notedLines: number): string {
  const read = notedLines ? `${fmtCount(notedLines, 'line')} read with a field ignored or converted` : '';
  return [skippedLines ? `${fmtCount(skippedLines, 'line')} skipped` : '', read].filter(Boolean).join(', ');
}
