/**
 * The records that flow from the reader through the store to every analysis and reporter.
 * One definition, used everywhere (SPEC §1.3–1.6): analyses and reporters derive from these,
 * they never restate them.
 */

/** Usage of one API request, with the SPEC's short names. */
export interface Usage {
  /** input_tokens: uncached input */
  input: number;
  /** output_tokens (a streaming snapshot: the maximum over copies is kept) */
  output: number;
  /** cache_creation_input_tokens (w) */
  cacheWrite: number;
  /** cache_creation.ephemeral_5m_input_tokens (w5); equals w when the split is missing */
  cacheWrite5m: number;
  /** cache_creation.ephemeral_1h_input_tokens (w1h); 0 when the split is missing */
  cacheWrite1h: number;
  /** cache_read_input_tokens (r) */
  cacheRead: number;
  webSearch: number;
  webFetch: number;
}

/** Where a copy of a request was seen; a higher rank wins attribution (SPEC §1.3). */
export const enum SourceRank {
  Progress = 0,
  MainFile = 1,
  SubagentFile = 2,
}

/**
 * One copy of a request as seen in one file (several lines of one response in one file are
 * pre-merged into one observation). The store keeps observations; requests are their de-dup.
 */
export interface Observation extends Usage {
  fileId: number;
  /** 1-based line of the first line of this copy in its file */
  line: number;
  /**
   * The identity `(message.id, requestId)` as message.id, NUL, requestId; message.id alone when
   * requestId is absent. message.id holds no NUL (file-parser.ts), so the key splits back into both.
   */
  key: string;
  /** epoch milliseconds */
  t: number;
  model: string;
  rank: SourceRank;
  sessionId: string;
  /** chain this copy belongs to (see chainIdFor) */
  chainId: string;
  agentId: string | null;
  splitMissing: boolean;
  serviceTier: string | null;
  speed: string | null;
  /** line count the response used in this file (content blocks) */
  copies: number;
  /** compaction segment of the chain at this copy (0 before the first compact_boundary) */
  segment: number;
  /** round of the chain at this copy (1-based; 0 before any user prompt) */
  round: number;
}

/** A de-duplicated request: field-wise max usage, attribution from the best-ranked copy. */
export interface RequestRecord extends Usage {
  key: string;
  messageId: string;
  requestId: string | null;
  t: number;
  model: string;
  sessionId: string;
  chainId: string;
  agentId: string | null;
  project: string;
  splitMissing: boolean;
  serviceTier: string | null;
  speed: string | null;
  segment: number;
  round: number;
  fileId: number;
}

export type ChainKind = 'main' | 'subagent' | 'sidechain';
/** `main` for main threads (SPEC §1.5 judges subagents only), so that `unknown` is the subagents it could not judge */
export type Definition = 'resolved' | 'lost' | 'unknown' | 'main';
/**
 * The order definitions are listed in wherever they are a dimension (crosstab's rows and columns,
 * its `--json`, the report): most to least certain, not alphabetical (lost came before main).
 */
export const DEFINITIONS = ['main', 'resolved', 'lost', 'unknown'] as const satisfies readonly Definition[];

export interface ChainRecord {
  chainId: string;
  sessionId: string;
  agentId: string | null;
  kind: ChainKind;
  /** `main` for main threads; meta.json agentType → spawning tool_use subagent_type → `unknown` */
  agentType: string;
  requestedType: string | null;
  spawnName: string | null;
  definition: Definition;
  project: string;
  fileId: number;
  rounds: number;
  compactions: number;
}

export interface AttachmentRecord {
  chainId: string;
  fileId: number;
  line: number;
  t: number;
  type: string;
  bytes: number;
  hash: string;
  round: number;
  /** the line's `uuid` (null when it has none): a resumed session's transcript repeats it with the line */
  uuid: string | null;
}

export interface SkippedLine {
  fileId: number;
  line: number;
  reason: SkipReason;
  detail: string;
}

export type SkipReason =
  | 'invalid_json'
  | 'incomplete_last_line'
  | 'not_an_object'
  | 'invalid_usage'
  | 'invalid_field'
  | 'invalid_type'
  | 'unreadable_file'
  | 'vanished_file'
  | 'not_a_file'
  | 'symlink_loop';

/**
 * The skip reasons whose line is still read, a field of it read as absent (`invalid_field`): listed
 * with the skips, by reason, but not counted as skipped lines, whose content was not read.
 */
export const READ_ANYWAY: ReadonlySet<string> = new Set<SkipReason>(['invalid_field']);

export interface FileRecord {
  fileId: number;
  path: string;
  root: string;
  size: number;
  mtimeMs: number;
  /** bytes read up to the end of the last complete line */
  readTo: number;
  lines: number;
  sessionId: string | null;
  project: string;
}
