/**
 * The session replay (SPEC §6.2): one chain of a real Claude Code transcript, rebuilt request by
 * request and replayed under each context-delivery strategy.
 *
 *   transcript ─▶ chain items (de-dup as the reader) ─▶ rebuild (tokenize each message once,
 *   calibrate the prefix on request 1; with --calibrate K, fit a conversation scale on requests
 *   2…K+1) ─▶ per strategy: requests, cacheable prefix, real gaps
 *   ─▶ summaries + `recorded` fidelity against the observed usage
 */
import { UsageError } from '../errors.js';
import { longText } from '../ingest/line.js';
import { SHORT_STRING } from '../ingest/project.js';
import { clean, int, shownId } from '../format/table.js';
import { loadPriceTable, type PriceTable } from '../pricing/pricing.js';
import { type Pause, pauses } from './pauses.js';
import { fitConversationScale, type ConversationCalibration } from './session-calibrate.js';
import { fidelityOf, type SessionFidelity } from './session-fidelity.js';
import { rebuildChain, type RebuiltChain, type RebuiltMessage } from './session-rebuild.js';
import type { ThinkingRule } from './session-render.js';
import {
  replayStrategy,
  SESSION_STRATEGIES,
  summarize,
  type Reinjected,
  type SessionStrategy,
  type SessionStrategySummary,
  type SessionTurn,
} from './session-strategy.js';
import { chainNamed, manyChainsError } from './session-locate.js';
import type { CopyChoice } from './session-notes.js';
import { readSessionTranscript, type SkippedTranscriptLine, type TranscriptChain } from './session-transcript.js';
import { ENCODINGS, SegmentTokenizer, type EncodingName, type TokenizerWork } from './tokenizer.js';
import { pushAll } from '../arrays.js';
import { isUtf16, skipGroups, utf16Note, type SkipGroup } from './skips.js';
import { READ_ANYWAY } from '../types.js';

export interface SessionReplayOptions {
  strategies?: readonly SessionStrategy[];
  encoding?: EncodingName;
  /** attachment type `reinject` re-inserts; default skill_listing if the chain has one, else its largest attachment */
  reinjectType?: string;
  /**
   * `keep` (default): the logged text of earlier thinking blocks counts in later prompts (a
   * signature-only block has no text and adds nothing); `drop`: thinking adds no prompt tokens.
   */
  thinking?: ThinkingRule;
  prices?: PriceTable;
  /**
   * K > 0: fit one conversation scale on requests 2…K+1, apply it to every strategy and report
   * fidelity on requests K+2…n (session-calibrate.ts). 0 or absent (default): off, SPEC §6.2 as is.
   */
  calibrate?: number;
  /** a tokenizer to reuse (tests count its work); its encoding wins over `encoding` */
  tokenizer?: SegmentTokenizer;
  /** how the replay lets the event loop turn as it works (default: every 100 ms, pauses.ts) */
  pause?: Pause;
  /** requests the store knows for this chain only from agent_progress copies in its parent's transcript (LocatedChain.progress_only) */
  progressOnly?: number;
  /**
   * requests of this chain only other transcripts hold (LocatedChain.other_file_requests), and those
   * transcripts; for a transcript path, per chain of it (otherFilesOfFile), the chain replayed's taken
   */
  otherFiles?: { requests: number; files: string[] } | ReadonlyMap<string, { requests: number; files: string[] }>;
  /** other transcripts of the chain that hold only requests this one does (LocatedChain.other_copies): not read */
  otherCopies?: readonly string[];
  /** what chose this transcript over its copies, and how many of them hold the same requests (LocatedChain.other_copies_by, other_copies_tied) */
  otherCopiesBy?: CopyChoice | null;
  otherCopiesTied?: number;
}

export interface SessionReplayResult {
  chain: {
    file: string | null;
    chain_id: string;
    session_id: string;
    agent_id: string | null;
    kind: 'main' | 'subagent' | 'sidechain';
    requests: number;
    /** requests of this chain's transcript the store attributes to another chain (a resumed session's copies): left out of `requests` */
    copied_requests: number;
    /** requests the store counts for this chain that only agent_progress copies in the parent's transcript hold: not in its transcript, not replayed */
    progress_only_requests: number;
    /** requests the store counts for this chain that only other transcripts hold (a session split across two project directories): not replayed */
    other_file_requests: number;
    other_files: string[];
    /** other transcripts of this chain in the logs read that hold only requests this one holds too (an older, shorter copy): not read */
    other_copies: string[];
    /** what chose this transcript over the next copy (`requests`, `best_copies`, `latest`, `largest`, `path`); null without copies */
    other_copies_by: CopyChoice | null;
    /** how many of other_copies hold the same requests as this one */
    other_copies_tied: number;
    rounds: number;
    compactions: number;
    attachments: number;
    models: string[];
    first_at: string;
    last_at: string;
    /** lines not read */
    skipped_lines: number;
    /** lines read with a field of the wrong type read as absent (`invalid_field`, listed in `skipped`) */
    noted_lines: number;
    /** the skipped lines per reason, in order of first line: count and the first 5 line numbers */
    skipped: SkipGroup[];
    /** of the skipped lines, those that look like UTF-16 text (ingest's detail: the file is not UTF-8) */
    utf16_lines: number;
  };
  settings: {
    strategies: SessionStrategy[];
    encoding: EncodingName;
    thinking: ThinkingRule;
    reinject: { type: string; line: number; tokens: number } | null;
    /** K of `--calibrate K`; 0 = off */
    calibrate: number;
  };
  /** the prefix (request 1) and, with `--calibrate`, the conversation scale (also in `fidelity`) */
  calibration: RebuiltChain['calibration'] & { conversation: ConversationCalibration | null };
  strategies: Partial<Record<SessionStrategy, SessionStrategySummary>>;
  /** strategies asked for that could not run on this chain, with the reason */
  not_run: { strategy: SessionStrategy; reason: string }[];
  /** `recorded` against the observed usage; null when `recorded` was not run */
  fidelity: SessionFidelity | null;
  turns: SessionTurn[];
  work: TokenizerWork;
}

function validate(opts: SessionReplayOptions): void {
  for (const s of opts.strategies ?? []) {
    if (!SESSION_STRATEGIES.includes(s)) throw new UsageError(`unknown strategy ${String(s)}`, `use ${SESSION_STRATEGIES.join(', ')}`);
  }
  if (opts.encoding !== undefined && !ENCODINGS.includes(opts.encoding)) {
    throw new UsageError(`--encoding must be ${ENCODINGS.join(' or ')}, got ${String(opts.encoding)}`);
  }
  if (opts.thinking !== undefined && opts.thinking !== 'drop' && opts.thinking !== 'keep') {
    throw new UsageError(`--thinking must be drop or keep, got ${String(opts.thinking)}`);
  }
  if (opts.calibrate !== undefined && !(Number.isInteger(opts.calibrate) && opts.calibrate >= 0)) {
    throw new UsageError(`--calibrate must be a whole number of requests (0 = off), got ${String(opts.calibrate)}`);
  }
}

/**
 * The attachment `reinject` inserts: the largest of the asked type, else the largest
 * skill_listing, else the largest attachment of the chain.
 */
export function chooseReinjected(rc: RebuiltChain, type?: string): Reinjected | null {
  const all = rc.events.filter((e): e is RebuiltMessage & { attachment: object } => e.kind === 'message' && e.attachment !== null);
  const pool = type ? all.filter((e) => e.attachment.type === type) : all.some((e) => e.attachment.type === 'skill_listing') ? all.filter((e) => e.attachment.type === 'skill_listing') : all;
  const best = pool.reduce<(typeof pool)[number] | null>((a, e) => (a === null || e.tokens > a.tokens ? e : a), null);
  return best && { type: best.attachment.type, hash: best.attachment.hash, line: best.line, tokens: best.tokens, segments: best.segments };
}

/** Replays one chain already read from its transcript. */
export async function replayChain(chain: TranscriptChain, opts: SessionReplayOptions = {}, file: string | null = null, skipped: readonly SkippedTranscriptLine[] = []): Promise<SessionReplayResult> {
  validate(opts);
  const tok = opts.tokenizer ?? (await SegmentTokenizer.load(opts.encoding ?? 'cl100k_base'));
  const prices = opts.prices ?? loadPriceTable();
  const thinking = opts.thinking ?? 'keep';
  // (all of it on this thread, seconds on a long chain: the loop turns now and then, pauses.ts)
  const pause = opts.pause ?? pauses();
  const rc = await rebuildChain(chain, tok, { thinking, pause });
  const strategies = [...(opts.strategies ?? SESSION_STRATEGIES)];
  // a type over SHORT_STRING characters given whole is read as the store holds the transcript's (line.ts longText):
  // compared whole, it matched no attachment, and the reason printed it whole
  const asked = opts.reinjectType !== undefined && opts.reinjectType.length > SHORT_STRING ? longText(opts.reinjectType) : opts.reinjectType;
  const reinject = strategies.includes('reinject') ? chooseReinjected(rc, asked) : null;
  const calibrate = opts.calibrate ?? 0;
  const conversation = calibrate > 0 ? fitConversationScale(rc, calibrate) : null;
  const ctx = { tok, weightsFor: (m: string, p: number) => prices.weightsFor(m, p), reinject, scale: conversation?.scale ?? 1 };

  const summaries: SessionReplayResult['strategies'] = {};
  const notRun: SessionReplayResult['not_run'] = [];
  const turns: SessionTurn[] = [];
  for (const s of strategies) {
    if (s === 'reinject' && !reinject) {
      notRun.push({ strategy: s, reason: asked ? `no ${asked} attachment in this chain` : 'no attachment in this chain' });
      continue;
    }
    const r = await replayStrategy(rc, s, ctx, pause);
    summaries[s] = summarize(r.turns, r.attachmentsSent);
    pushAll(turns, r.turns);
  }
  const recorded = turns.filter((t) => t.strategy === 'recorded');
  const fidelity = recorded.length
    ? fidelityOf(
        recorded.map((t) => {
          const req = rc.requests[t.request - 1]!;
          return { request: t.request, observed_prompt: req.observedPrompt, predicted_prompt: t.input_tokens, observed_read: req.usage.cacheRead, predicted_read: t.read_tokens };
        }),
        conversation,
      )
    : null;

  const otherFiles = opts.otherFiles instanceof Map ? opts.otherFiles.get(rc.chainId) : (opts.otherFiles as { requests: number; files: string[] } | undefined);
  const times = rc.requests.map((r) => r.t);
  const notRead = new Set(skipped.filter((s) => !READ_ANYWAY.has(s.reason)).map((s) => s.line));
  return {
    chain: {
      file,
      chain_id: rc.chainId,
      session_id: rc.sessionId,
      agent_id: rc.agentId,
      kind: rc.chainKind,
      requests: rc.requests.length,
      copied_requests: chain.copied,
      progress_only_requests: opts.progressOnly ?? 0,
      other_file_requests: otherFiles?.requests ?? 0,
      other_files: otherFiles?.files ?? [],
      other_copies: [...(opts.otherCopies ?? [])],
      other_copies_by: opts.otherCopies?.length ? (opts.otherCopiesBy ?? null) : null,
      other_copies_tied: opts.otherCopies?.length ? (opts.otherCopiesTied ?? 0) : 0,
      rounds: rc.rounds,
      compactions: rc.compactions,
      attachments: rc.events.filter((e) => e.kind === 'message' && e.attachment).length,
      models: [...new Set(rc.requests.map((r) => r.model))],
      // a loop, not Math.min(...times): a chain of ~120k requests overflowed the call's arguments
      first_at: new Date(times.reduce((a, b) => Math.min(a, b))).toISOString(),
      last_at: new Date(times.reduce((a, b) => Math.max(a, b))).toISOString(),
      skipped_lines: notRead.size,
      // a line skipped for another reason besides is skipped, not noted: the two counts are of other lines
      noted_lines: new Set(skipped.filter((s) => READ_ANYWAY.has(s.reason) && !notRead.has(s.line)).map((s) => s.line)).size,
      skipped: skipGroups(skipped),
      utf16_lines: skipped.filter((s) => isUtf16(s.detail)).length,
    },
    settings: {
      strategies: strategies.filter((s) => summaries[s]),
      encoding: tok.encoding,
      thinking,
      reinject: reinject && { type: reinject.type, line: reinject.line, tokens: reinject.tokens },
      calibrate,
    },
    calibration: { ...rc.calibration, conversation },
    strategies: summaries,
    not_run: notRun,
    fidelity,
    turns,
    work: tok.stats,
  };
}

/** Example: lines 3 and 9 invalid_json, 5 invalid_usage → [{invalid_json, 2, [3, 9]}, {invalid_usage, 1, [5]}]. */
/**
 * Picks the chain to replay in a transcript: the one asked for (chain id, a unique prefix of it,
 * or an agent id), else the main chain, else the chain with the most requests (a subagent file),
 * else one whose requests are all copies another chain counts (replayChain says so).
 * `file`: the transcript's path, named when it has no request or no such chain, as the other replay errors name it.
 */
export function pickChain(chains: readonly TranscriptChain[], want?: string, file?: string, skipped: readonly { reason: string; line: number }[] = []): TranscriptChain {
  const withRequests = chains.filter((c) => c.requests > 0);
  const named = file === undefined ? '' : `${clean(file)}: `;
  if (want) {
    // as typed, then, when that names no chain, in any case (ids are written in lower case)
    const m = chainNamed(chains, want, (c) => [c.chainId, c.agentId]);
    if (m && 'hit' in m) return m.hit;
    if (m) throw manyChainsError(want, m, named);
    // the transcript named, as when it has no request (it said only '--chain X: no such chain in this transcript')
    throw new UsageError(`${named}--chain ${shownId(want)}: no such chain in this transcript`);
  }
  const main = withRequests.find((c) => c.kind === 'main');
  if (main) return main;
  const best = withRequests.sort((a, b) => b.requests - a.requests)[0];
  // a resumed session's transcript that sent nothing of its own (its copies left out): replayChain says so
  const copiesOnly = chains.find((c) => c.kind === 'main' && c.copied > 0) ?? chains.find((c) => c.copied > 0);
  if (!best && copiesOnly) return copiesOnly;
  // a transcript whose lines were all skipped (gzipped, UTF-16) said only 'no requests', as if it held none
  if (!best) throw new UsageError(`${named}no requests in this transcript to replay${skippedWhy(skipped)}`);
  return best;
}

/**
 * The lines skipped, for the error of a transcript with no request: what may have held them.
 * Example: 117 invalid_json lines from line 1 → '; 117 lines skipped (invalid_json: 117, from line 1)'.
 */
function skippedWhy(skipped: readonly { reason: string; line: number; detail?: string }[]): string {
  const groups = skipGroups(skipped.filter((s) => !READ_ANYWAY.has(s.reason)));
  if (groups.length === 0) return '';
  const lines = new Set(skipped.filter((s) => !READ_ANYWAY.has(s.reason)).map((s) => s.line)).size;
  // lines that look like UTF-16 text: said as summary says them, with what to do
  const utf16 = skipped.filter((s) => isUtf16(s.detail)).length;
  return `; ${int(lines)} ${lines === 1 ? 'line' : 'lines'} skipped (${groups.map((g) => `${g.reason}: ${int(g.count)}`).join(', ')}, from line ${Math.min(...groups.map((g) => g.lines[0]!))})${utf16 ? `; ${utf16Note(null, utf16)}` : ''}`;
}

/**
 * Reads a transcript file and replays one of its chains (see pickChain). `elsewhere`: the request
 * keys the store attributes to other chains (LocatedChain.elsewhere), left out of the requests.
 */
export async function replaySessionFile(file: string, opts: SessionReplayOptions & { chain?: string; elsewhere?: readonly string[] } = {}): Promise<SessionReplayResult> {
  validate(opts);
  let t;
  try {
    t = await readSessionTranscript(file, { elsewhere: new Set(opts.elsewhere) });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') throw new UsageError(`${file}: cannot read transcript (${code})`);
    throw err;
  }
  return replayChain(pickChain(t.chains, opts.chain, file, t.skipped), opts, file, t.skipped);
}
