/**
 * The replay simulator's public surface (SPEC §6). The CLI builds ChannelReplayOptions from its
 * flags, calls runChannelReplay, and prints formatChannelReplay(result) or JSON.stringify(result).
 */
export { runChannelReplay, CHANNEL_STRATEGIES, OPUS_WEIGHTS, OPUS_USD_PER_INPUT_TOKEN } from './channel-replay.js';
export type { ChannelReplayOptions, ChannelReplayResult, ChannelStrategy, ChannelTurn, StrategySummary, ReplayWeights, Ttl } from './channel-replay.js';
export { formatChannelReplay } from './channel-report.js';
export { readChannelLog, parseChannelLog } from './channel-log.js';
export { parseDurationMinutes } from './duration.js';
export { ENCODINGS, SegmentTokenizer, loadEncoder } from './tokenizer.js';
export type { EncodingName } from './tokenizer.js';
export { WatermarkStore, advanceWatermark } from './watermark.js';
export type { Watermark, WatermarkKey, StagedRows } from './watermark.js';
export { replaySessionFile, replayChain, pickChain, chooseReinjected } from './session-replay.js';
export type { SessionReplayOptions, SessionReplayResult } from './session-replay.js';
export { SESSION_STRATEGIES } from './session-strategy.js';
export type { SessionStrategy, SessionStrategySummary, SessionTurn } from './session-strategy.js';
export type { SessionFidelity, ErrorStats, FidelityRow } from './session-fidelity.js';
export type { ThinkingRule } from './session-render.js';
export { readSessionTranscript } from './session-transcript.js';
export { rebuildChain } from './session-rebuild.js';
export { elsewhereOfFile, locateChain, otherFilesOfFile, topSession, transcriptPath } from './session-locate.js';
export type { LocatedChain } from './session-locate.js';
export { formatSessionReplay, sessionReplayRun } from './session-report.js';
