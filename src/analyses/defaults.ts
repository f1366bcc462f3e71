/**
 * The analyses' defaults, apart from the modules that run them: the CLI prints them in its `--help`
 * and takes them when a flag is left out, from these same values (loading the analyses to do so would
 * cost every command its start-up time).
 */

/** Rewrites smaller than this many tokens are breakpoint jitter and count as 0 (SPEC §3). */
export const DEFAULT_JITTER = 1024;

/** Keepalive: seconds between pings, below the 5-minute TTL. */
export const DEFAULT_INTERVAL_S = 270;

/** Keepalive: input tokens of one ping, written at the 5-minute weight. */
export const DEFAULT_PING_IN = 30;

/** Keepalive: output tokens of one ping. */
export const DEFAULT_PING_OUT = 10;
