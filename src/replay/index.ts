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
