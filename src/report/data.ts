/**
 * The input of the HTML report: one plain, JSON-serialisable object. The report renderer reads
 * nothing else, so a test can build one by hand and the CLI fills it from the analyses.
 *
 * Every section is optional (absent = not computed for this run, e.g. no replay was asked for)
 * or `{ error }` (its analysis failed: the section shows an error card and the rest renders).
 *
 * Units: `usd` in US dollars, `weight` in base-input-token equivalents (SPEC §2.1), token counts
 * in tokens, shares as fractions 0..1, times as epoch milliseconds (UTC), days as `YYYY-MM-DD`
 * (in CostOverTime.timezone, UTC unless `--timezone` says otherwise). `usd: null` means unknown (a model without a price), never $0.
 * All strings that come from transcripts (paths, projects, agent types, models, attachment text)
 * are untrusted: the renderer escapes them; callers pass them as they are.
 */
import type { CopyChoice, PrefixFacts } from '../replay/session-notes.js';
import type { Definition, SkipReason } from '../types.js';

/** A section whose analysis failed; `error` is a one-line message shown in its card. */
export interface SectionError {
  error: string;
}

export type Section<T> = T | SectionError;

export interface ReportData {
  meta: ReportMeta;
  headline?: Section<Headline>;
  costOverTime?: Section<CostOverTime>;
  costBy?: Section<CostBy>;
  anatomy?: Section<Anatomy>;
  topChains?: Section<TopChains>;
  crossTab?: Section<CrossTab>;
  ttlOverride?: Section<TtlOverride>;
  keepalive?: Section<Keepalive>;
  replay?: Section<Replay>;
  blocks?: Section<Blocks>;
  dataQuality?: Section<DataQuality>;
}

export interface ReportMeta {
  /** page title; default "cachelens report" */
  title?: string;
  /** ISO timestamp of the run */
  generatedAt: string;
  /** cachelens version */
  version: string;
  /** the roots (or explicit paths) this report covers */
  roots: string[];
  /** time of the first and last request in scope (epoch ms), null when there are none */
  from: number | null;
  to: number | null;
  /** date of the bundled price table, or the --pricing file name */
  prices?: string;
  /** the zone the page shows its times in (`--timezone`; absent: UTC) */
  timezone?: string;
  /** the filters in force (--since, --until, --project), absent when none is given */
  filters?: { since: string | null; until: string | null; project: string | null };
}

/** The token and cost components of a request (SPEC §2.1). */
export type CostComponent = 'input' | 'output' | 'write5m' | 'write1h' | 'read';

/** The four kinds of cache write (SPEC §3). */
export type AnatomyComponent = 'cold' | 'growth' | 'expiry' | 'break';

export interface Headline {
  usd: number | null;
  /** null when no request in scope has a price (unknown, never 0) */
  weight: number | null;
  /** Σr / ΣP over all requests in scope; null without prompt tokens (no requests), as `anatomy` gives it */
  hitRatio: number | null;
  /** weight of expiry + break rewrites beyond what a read would have cost; null (with wasteUsd) when `weight` is */
  wasteWeight: number | null;
  wasteUsd: number | null;
  /**
   * the expiry and break tokens written by requests without a price: the waste leaves them out, marked +? (as
   * `anatomy`'s waste line is); requests without a price that wrote neither leave it whole. Absent: as many as
   * `unpricedRequests` says (marked when any request has no price), as a report of an older build reads
   */
  wasteUnpricedTokens?: number;
  /** the requests without a price that wrote expiry or break tokens: those the waste leaves out (absent in an older build's report) */
  wasteUnpricedRequests?: number;
  requests: number;
  sessions: number;
  chains: number;
  /** requests whose model has no price (their cost is not in `usd`) */
  unpricedRequests: number;
  tokens: Record<CostComponent, number>;
  /** the what-if with the largest saving; null when none was computed */
  bestWhatIf: BestWhatIf | null;
}

export interface BestWhatIf {
  /** e.g. "keepalive, budget 3" or "force 1-hour TTL" */
  label: string;
  /** baseline − scenario: positive saves, negative costs more */
  savingWeight: number;
  savingUsd: number | null;
  /**
   * savingUsd / baseline USD (`shareOf` 'cost'), as the TTL section's verdict and the ranking go by
   * USD; savingWeight / baseline weight ('weight') when no USD is known
   */
  savingShare: number;
  shareOf: 'cost' | 'weight';
  /** the labels of the other what-ifs that save exactly as much (USD and weight): named with this one */
  tiedWith?: string[];
  /**
   * what the what-if (or a tied one) changes that no sum holds, e.g. "1 chain of unpriced models" (the TTL override's
   * changed chains with a request without a price) or "2 gaps of unpriced models" (the gaps keepalive pings that touch
   * one): its saving is then of the priced requests alone, marked +?, and "nothing" changes nothing priced only
   */
  unknownEffect?: string;
}

export interface CostOverTime {
  /** long format: one row per (day, component); usd and weight null when none of the day's requests has a price */
  rows: Array<{
    day: string;
    component: CostComponent;
    usd: number | null;
    weight: number | null;
    tokens: number;
    /** the day's requests without a price (the same on each of its rows): usd and weight leave them out, marked +? */
    unpricedRequests?: number;
    /** this component's tokens of those requests: its usd leaves them out, marked +? */
    unpricedTokens?: number;
  }>;
  /** the time zone of the days (`--timezone`; default UTC) */
  timezone?: string;
}

export type CostDimension = 'project' | 'model' | 'agentType';

export interface CostBy {
  /**
   * long format: one row per (dimension, key, component); the keys with the most USD only (COST_BY_KEYS
   * of each dimension), the rest of a dimension summed under the key null, `groups` of them
   */
  rows: Array<{
    dimension: CostDimension;
    key: string | null;
    /** how many keys the row sums: 1, or for key null the number of keys folded into it */
    groups: number;
    /** for key null: how many of the keys folded into it have no price (named nowhere else; absent for other rows) */
    unpricedGroups?: number;
    /** for key null: the names of those keys when few (at most 3; absent for other rows and when more): the reading names them */
    unpricedNames?: string[];
    component: CostComponent;
    /** null (both) when none of the row's requests has a price, as `summary` gives them */
    usd: number | null;
    weight: number | null;
    /** the key's requests without a price (the same on each of its rows): usd and weight leave them out, marked +? */
    unpricedRequests?: number;
    /** this component's tokens of those requests: its usd leaves them out, marked +? (a component they have no tokens of is whole) */
    unpricedTokens?: number;
  }>;
}

/** Keys of each dimension the cost-by data and chart show; the rest fold into one "other" bar. */
export const COST_BY_KEYS = 12;

export interface Anatomy {
  /** long format: one row per (agent type, component); weight and usd null when none of the agent type's requests has a price */
  rows: Array<{
    agentType: string;
    component: AnatomyComponent;
    tokens: number;
    weight: number | null;
    usd: number | null;
    /** the agent type's tokens of this class written by requests without a price: its weight leaves them out, marked +? */
    unpricedTokens?: number;
  }>;
  /**
   * the models without a price and their requests, left out of every weight (`anatomy`'s +?): an agent type
   * with some priced requests shows the weights of those alone
   */
  unpricedModels?: Array<{ model: string; requests: number }>;
}

export interface TopChains {
  /** the chains that wasted anything (re-bought context after an expiry or a break), ranked by waste, largest first */
  chains: ChainSummary[];
  /** chains in scope that wasted nothing, not listed */
  withoutWaste: number;
}

export interface ChainSummary {
  chainId: string;
  sessionId: string;
  project: string;
  agentType: string;
  model: string;
  requests: number;
  /** null (with usd, wasteWeight and wasteUsd) when none of the chain's requests has a price */
  weight: number | null;
  usd: number | null;
  wasteWeight: number | null;
  wasteUsd: number | null;
  /** the chain's requests without a price: its weight, USD and waste leave them out, marked +? as `anatomy` marks them */
  unpricedRequests?: number;
  /** the expiry and break tokens of those requests: the waste is marked +? when there are any (`wasteUnpricedTokens` of the headline) */
  wasteUnpricedTokens?: number;
  /** null without prompt tokens, as `anatomy` gives it */
  hitRatio: number | null;
  /** flagged by the re-purchase rule (SPEC §3) */
  repurchase: boolean;
  /**
   * the median read of each round's first request, which the re-purchase rule pins (SPEC §3:
   * every one within 1,024 tokens of it); with `repurchase`. `rounds` sums every request of a round.
   */
  readMedian?: number | null;
  /** per round, summed over the round's requests */
  rounds: Array<{ round: number; read: number; write: number; rewrite: number }>;
  /** the chain's rounds (user prompts), those without a request of their own included, as `anatomy` counts them */
  roundCount?: number;
}

export interface CrossTab {
  /** the row dimension, e.g. "agent_type" or "definition" */
  rowDimension: string;
  rows: CrossTabRow[];
}

export interface CrossTabRow {
  /** the row's value of rowDimension (an agent type, or a Definition) */
  key: string;
  chains: number;
  /** of `chains`, those that never got to a request (a prompt answered by nothing): the headline does not count them */
  chainsWithoutRequests?: number;
  /** chains with ≥ 1 skill_listing attachment */
  chainsWithSkillListing: number;
  /** skill_listing attachments over all chains of the row */
  skillListings: number;
  /** rounds over all chains of the row */
  rounds: number;
  /** chains whose skill_listing count equals their round count (and is > 0) */
  chainsListingsEqualRounds: number;
  /** null when none of the row's requests has a price */
  weight: number | null;
  /** the row's requests without a price: weight leaves them out, marked +? as `crosstab` marks it */
  unpricedRequests?: number;
  definition?: Definition;
}

export interface TtlOverride {
  /** `force1h`: 5-minute chains priced with the 1-hour TTL; `force5m` the reverse */
  direction: 'force1h' | 'force5m';
  /** weight and usd null when no request in scope has a price (as `whatif ttl` prints unknown) */
  baseline: { weight: number | null; usd: number | null };
  scenario: { weight: number | null; usd: number | null };
  /** (scenario − baseline) / baseline in USD: negative saves; null when the baseline is 0 */
  deltaShare: number | null;
  /** f (SPEC §5.1); null when the changed chains wrote nothing */
  expiryShare: number | null;
  /** f* = (2 − 1.25) / (2 − 0.1) ≈ 0.395 for current models; null when nothing is priced */
  breakEvenShare: number | null;
  /**
   * requests of models without a price, left out of baseline, scenario, f and the buckets' sums (`whatif ttl`'s
   * "N requests of an unpriced model (…) left out"), and those models; a bucket none of whose requests has a
   * price has no row in the chart and table, and is named here
   */
  unpricedRequests?: number;
  unpricedModels?: string[];
  /**
   * chains of unpriced models that write at the TTL the override changes (`whatif ttl --json`'s
   * `changed_unpriced_chains`): the override changes them, and what it does to them no sum holds
   */
  changedUnpricedChains?: number;
  buckets: Array<{
    /** e.g. "main vs subagent", "agent type", "model", "rounds" */
    dimension: string;
    bucket: string;
    /** null when none of the bucket's requests has a price */
    baselineWeight: number | null;
    scenarioWeight: number | null;
    /** in USD, as the total's */
    deltaShare: number | null;
    expiryShare: number | null;
    /**
     * the bucket's chains of unpriced models the override changes (the bucket's `changed_unpriced_chains` in
     * `whatif ttl --json`): its change leaves them out, marked +? as `whatif ttl`'s bucket rows mark it
     */
    changedUnpricedChains?: number;
  }>;
}

export interface Keepalive {
  intervalSeconds: number;
  ttlSeconds: number;
  budgets: KeepaliveBudget[];
  /** the best budget (null = unbounded), ties to the smaller budget; absent when no gap is priced */
  best?: number | null;
  /** gaps of 5-minute chains, and of them those touching a model without a price (their savings unknown) */
  gaps?: number;
  unpricedGaps?: number;
  /**
   * of those, the ones longer than the interval, which a budget above 0 pings: the net savings of such
   * budgets leave them out, and are marked +? as `whatif keepalive` marks them (a shorter gap adds exactly 0)
   */
  unpricedPingedGaps?: number;
}

export interface KeepaliveBudget {
  /** pings per gap; null = unbounded */
  budget: number | null;
  netSavingWeight: number;
  netSavingUsd: number | null;
  /** net saving / subagent weight; null when there is no subagent weight */
  netSavingShareSubagent: number | null;
  /** net saving / all weight; null when nothing is priced */
  netSavingShareAll: number | null;
  gapsOverTtl: number;
  bridged: number;
  expiredAfterBudget: number;
  pings: number;
}

export interface Replay {
  runs: ReplayRun[];
}

export interface ReplayRun {
  kind: 'channel' | 'session';
  /** e.g. the channel log's file name, or a chain id */
  title: string;
  strategies: ReplayStrategy[];
  /**
   * recorded-vs-observed relative error (session replays) of the prompt size; from the first
   * request compared (2, or K+2 calibrated). `requests` counts the requests with an error (observed
   * above 0); the rest is `replay session`'s fidelity, in its words: `compared` (the requests from
   * `from` to the last, observed 0 included), `meanSignedRelError` (negative: the replay predicts too
   * little), `observedZero` (requests whose logged usage is all 0: no relative error) and the same
   * for the cache reads, with how many of the requests that read nothing the replay put at 0 too.
   * An error over no request is NaN here, null in the page's data.
   */
  fidelity?: {
    requests: number;
    from?: number;
    medianRelError: number;
    p90RelError: number;
    compared?: number;
    meanSignedRelError?: number;
    observedZero?: number;
    cacheRead?: { requests: number; medianRelError: number; p90RelError: number; meanSignedRelError: number; observedZero: number; predictedZeroToo: number };
  };
  /**
   * session replays: what `replay session` says around its table — the chain's rounds, compactions
   * and models, its copied and progress-only requests, the prefix calibration and settings (the
   * encoding names the tokenizer the counts estimate Claude's with), and the transcript's skipped
   * lines (read with a field ignored: `notedLines`) by reason with their first line numbers
   */
  session?: ReplaySession;
  /**
   * the conversation-scale calibration (`--calibrate K`, session replays; absent when off): the
   * scale fitted on requests 2…K+1, or null with the reason the chain was not calibrated
   */
  calibration?: { k: number; scale: number | null; heldOutFrom: number; reason: string | null };
  /**
   * the first strategy's rows never shown (channel replays): rows of a stream between its first and last
   * mention that no context block carried; each strategy's is its `rowsNeverShown` (a watermark's last_at
   * can skip a row the window shows)
   */
  rowsNeverShown?: number;
  /**
   * the model whose prices give a channel replay's weights and USD (`--channel-model`), its input price,
   * the report's `--pricing` file (null without one) and whether the model's prices are that file's (else the bundled table's) (channel replays)
   */
  prices?: { model: string; usdPerMillionInput: number; pricingFile: string | null; fromPricingFile: boolean };
  /** strategies that could not run on the chain, with the reason (session replays; `replay session`'s "not run:" lines) */
  notRun?: Array<{ strategy: string; reason: string }>;
  /**
   * channel replays: the log's lines the replay skipped (`replay channel`'s "N bad lines skipped"), by reason
   * with their first line numbers, and how many in all (a session replay's are in `session`)
   */
  channelSkipped?: { lines: number; groups: Array<{ reason: string; count: number; lines: number[] }>; utf16Lines?: number; file?: string };
}

/** A session replay's chain and its prefix, as `replay session` prints them (PrefixFacts: its prefix line). */
export interface ReplaySession extends PrefixFacts {
  chainId: string;
  /** the chain's session id: a long chain id is shown by its parts, as `replay session`'s heading shows it (absent in an older page's data) */
  sessionId?: string;
  chainKind: 'main' | 'subagent' | 'sidechain';
  requests: number;
  rounds: number;
  compactions: number;
  models: string[];
  copiedRequests: number;
  progressOnlyRequests: number;
  /** requests of the chain only other transcripts hold (a session split across project directories), not replayed; and those transcripts */
  otherFileRequests?: number;
  otherFiles?: string[];
  /** other copies of the chain's transcript that hold only requests the one replayed (`file`) holds too: not read (`replay session`'s `chain.other_copies`) */
  otherCopies?: string[];
  /** what chose `file` over them, and how many of them hold the same requests (`chain.other_copies_by`, `other_copies_tied`) */
  otherCopiesBy?: CopyChoice | null;
  otherCopiesTied?: number;
  /** the transcript replayed (with otherCopies or utf16Lines) */
  file?: string;
  /** of the skipped lines, those that look like UTF-16 text (`replay session`'s `chain.utf16_lines`) */
  utf16Lines?: number;
  skippedLines: number;
  notedLines: number;
  skipped: Array<{ reason: string; count: number; lines: number[] }>;
  /**
   * under --since/--until/--project, when some of the chain's requests are outside them: how many the filters
   * choose, and the filters as the page's title gives them (the replay is of the whole chain, as replay session's)
   */
  inScope?: { requests: number; filters: string };
}

export interface ReplayStrategy {
  /** window, watermark, unstable, recorded, dedupe-attachments, … */
  strategy: string;
  inputTokens: number;
  cacheablePrefix: number;
  /** null with no input (no ratio to take) */
  cacheableRatio: number | null;
  /** null with no warm turn (no mean to take) */
  uncachedPerWarmTurn: number | null;
  contextTokens: number;
  alreadySeen: number;
  rowsSent: number;
  weight: number;
  /** null when a request's model has no price (session replays: `pricedUsd` is what the priced requests cost) */
  usd?: number | null;
  /** channel replays: this strategy's rows never shown, as `replay channel`'s row of that name */
  rowsNeverShown?: number;
  /**
   * session replays, as `replay session`'s table: requests, those of models without a price (left
   * out of `weight` and `pricedUsd`: +?, — when all), processes, requests past the TTL (expired,
   * `expiredUnknownGap` of them stamped before the one before: gap unknown), output tokens
   */
  requests?: number;
  unpricedRequests?: number;
  pricedUsd?: number;
  processes?: number;
  expiredRequests?: number;
  expiredUnknownGap?: number;
  outputTokens?: number;
  /** per turn: input and cacheable tokens */
  turns?: Array<{ turn: number; input: number; cacheable: number }>;
}

export interface Blocks {
  /** 5-hour blocks (SPEC §7), oldest first */
  /** `unpricedRequests`: the block's requests without a price, left out of its usd and weight (marked +?, as `blocks` marks them) */
  blocks: Array<{ start: number; end: number; usd: number | null; weight: number | null; requests: number; tokens: number; unpricedRequests?: number }>;
  /**
   * the zone the section shows starts and ends in (`--timezone`; absent: UTC); the windows stay
   * UTC hours, so a zone half an hour off shows them at :30
   */
  timezone?: string;
}

/**
 * The data-quality panel. Files, lines, bytes, skipped lines, duplicates and unknown models are of
 * everything read, as `summary` counts them; `requests` and `splitMissing` are of the requests the
 * filters (ReportMeta.filters) choose, as every other section's.
 */
export interface DataQuality {
  files: number;
  lines: number;
  bytes: number;
  /** requests the filters choose */
  requests: number;
  /** line copies collapsed into one request by the de-dup (SPEC §1.3) */
  duplicatesRemoved: number;
  /** requests the filters choose whose usage had no 5m/1h split */
  splitMissing: number;
  skipped: Array<{
    reason: SkipReason;
    count: number;
    /** the first few locations; line null where a whole file or folder was skipped (a dangling link, a loop) */
    examples: Array<{ path: string; line: number | null; detail?: string }>;
    /** every file whose lines of this reason were taken for UTF-16 text, not only the examples' (summary's quality.skipped[].utf16_files; absent in an older page's data) */
    utf16Files?: Array<{ path: string; lines: number }>;
  }>;
  unknownModels: Array<{ model: string; requests: number }>;
  /** line types the reader does not know, counted (SPEC §1.2) */
  unknownLineTypes?: Array<{ type: string; count: number }>;
}

export function isSectionError(s: unknown): s is SectionError {
  return typeof s === 'object' && s !== null && typeof (s as SectionError).error === 'string';
}
