/**
 * The replay simulator's named choices (strategies, encodings), apart from the modules that run
 * them: the CLI lists them in its options, and loading the simulator to do so cost every command
 * its start-up time.
 */
export type ChannelStrategy = 'window' | 'watermark' | 'unstable';
export const CHANNEL_STRATEGIES: readonly ChannelStrategy[] = ['window', 'watermark', 'unstable'];

export type SessionStrategy = 'recorded' | 'dedupe-attachments' | 'volatile-prefix' | 'reinject' | 'cold-replay';
export const SESSION_STRATEGIES: readonly SessionStrategy[] = ['recorded', 'dedupe-attachments', 'volatile-prefix', 'reinject', 'cold-replay'];

export type EncodingName = 'cl100k_base' | 'o200k_base';
export const ENCODINGS: readonly EncodingName[] = ['cl100k_base', 'o200k_base'];

/**
 * The model whose prices weigh and price a channel replay unless `--model` names another: the
 * agent is a Claude Code process, and this is the model of the sample sessions (Opus 4.6, $5 per
 * million input tokens).
 */
export const DEFAULT_CHANNEL_MODEL = 'claude-opus-4-6';

/** Tokens of a channel replay's framing (system prompt and tool schemas) unless `--prefix-tokens` gives another. */
export const DEFAULT_PREFIX_TOKENS = 2120;

/**
 * Whose prices a channel replay's cost is at, as its text and the report say it (the caller escapes
 * the names for where they go). Example: 'claude-opus-4-6 prices' (no --pricing); 'my-model prices
 * from own.json' (the file prices it); "claude-opus-4-6's bundled prices (own.json does not price it)".
 */
export function pricesOf(model: string, pricingFile: string | null, fromFile: boolean): string {
  if (pricingFile === null) return `${model} prices`;
  return fromFile ? `${model} prices from ${pricingFile}` : `${model}'s bundled prices (${pricingFile} does not price it)`;
}
