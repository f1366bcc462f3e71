/**
 * Renders transcript lines shaped like the real ones in ../shared/real-logs: the key order,
 * envelope fields and usage block of Claude Code 2.1.39 (marot-spotter) or 2.1.20x
 * (condense-chat-minmax-bench). Functions return one JSON text without its newline.
 */

export interface Style {
  version: string;
  /** 2.1.39 writes the envelope first and no `entrypoint`; 2.1.20x writes the envelope last */
  layout: 'v39' | 'v200';
  entrypoint: 'cli' | 'sdk-cli' | null;
}

export const STYLE_V39: Style = { version: '2.1.39', layout: 'v39', entrypoint: null };
export const STYLE_V201: Style = { version: '2.1.201', layout: 'v200', entrypoint: 'cli' };
export const STYLE_SDK: Style = { version: '2.1.200', layout: 'v200', entrypoint: 'sdk-cli' };

export interface LineCtx {
  style: Style;
  sessionId: string;
  cwd: string;
  gitBranch: string;
  slug: string | null;
  isSidechain: boolean;
  agentId: string | null;
}

export interface UsageTokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

export type Block =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; caller: { type: 'direct' } };

export function usageBlock(style: Style, u: UsageTokens): Record<string, unknown> {
  const w = u.cacheWrite5m + u.cacheWrite1h;
  if (style.layout === 'v39') {
    return {
      input_tokens: u.input,
      cache_creation_input_tokens: w,
      cache_read_input_tokens: u.cacheRead,
      cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite5m, ephemeral_1h_input_tokens: u.cacheWrite1h },
      output_tokens: u.output,
      service_tier: 'standard',
      inference_geo: 'global',
    };
  }
  return {
    input_tokens: u.input,
    cache_creation_input_tokens: w,
    cache_read_input_tokens: u.cacheRead,
    output_tokens: u.output,
    server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
    service_tier: 'standard',
    cache_creation: { ephemeral_1h_input_tokens: u.cacheWrite1h, ephemeral_5m_input_tokens: u.cacheWrite5m },
    inference_geo: 'global',
    iterations: [],
    speed: 'standard',
  };
}

/** The `message` object of one assistant line (one content block). */
export function assistantMessage(
  style: Style,
  model: string,
  id: string,
  block: Block,
  stopReason: 'tool_use' | 'end_turn' | null,
  usage: Record<string, unknown>,
): Record<string, unknown> {
  if (style.layout === 'v39') {
    return { model, id, type: 'message', role: 'assistant', content: [block], stop_reason: null, stop_sequence: null, usage };
  }
  return {
    model,
    id,
    type: 'message',
    role: 'assistant',
    content: [block],
    stop_reason: stopReason,
    stop_sequence: null,
    stop_details: null,
    usage,
  };
}

/**
 * Wraps a body in the envelope. `head` fields (e.g. `promptId`) go right after isSidechain,
 * `body` carries the type-specific fields and `tail` any trailing extras.
 */
export function envelope(
  ctx: LineCtx,
  parentUuid: string | null,
  uuid: string,
  ts: string,
  type: string,
  body: Record<string, unknown>,
  tail: Record<string, unknown> = {},
): string {
  const agent = ctx.agentId !== null ? { agentId: ctx.agentId } : {};
  if (ctx.style.layout === 'v39') {
    const slug = ctx.slug !== null ? { slug: ctx.slug } : {};
    return JSON.stringify({
      parentUuid,
      isSidechain: ctx.isSidechain,
      userType: 'external',
      cwd: ctx.cwd,
      sessionId: ctx.sessionId,
      version: ctx.style.version,
      gitBranch: ctx.gitBranch,
      ...agent,
      ...slug,
      type,
      ...body,
      uuid,
      timestamp: ts,
      ...tail,
    });
  }
  return JSON.stringify({
    parentUuid,
    isSidechain: ctx.isSidechain,
    ...agent,
    ...body,
    type,
    uuid,
    timestamp: ts,
    ...tail,
    userType: 'external',
    ...(ctx.style.entrypoint !== null ? { entrypoint: ctx.style.entrypoint } : {}),
    cwd: ctx.cwd,
    sessionId: ctx.sessionId,
    version: ctx.style.version,
    gitBranch: ctx.gitBranch,
  });
}

export function fileHistorySnapshot(messageId: string, ts: string): string {
  return JSON.stringify({
    type: 'file-history-snapshot',
    messageId,
    snapshot: { messageId, trackedFileBackups: {}, timestamp: ts },
    isSnapshotUpdate: false,
  });
}

export function queueOperation(operation: 'enqueue' | 'dequeue', ts: string, sessionId: string, content?: string): string {
  return JSON.stringify({ type: 'queue-operation', operation, timestamp: ts, sessionId, ...(content !== undefined ? { content } : {}) });
}

export function lastPrompt(text: string, leafUuid: string, sessionId: string): string {
  const cut = text.length > 200 ? text.slice(0, 200) + '\u2026' : text;
  return JSON.stringify({ type: 'last-prompt', lastPrompt: cut, leafUuid, sessionId });
}
