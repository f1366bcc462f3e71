/**
 * What cachelens reads from one transcript line: the projection schema (only these fields are
 * decoded) and the typed view of a projected line.
 */
import type { SchemaObject } from './project.js';

/**
 * The usage fields readUsage looks at (usage.ts). Projecting only these, rather than taking the
 * whole block with JSON.parse, is a third of the cost of an assistant line; readUsage gives the
 * same result either way (a block that is not an object, or a field of the wrong type, reads the
 * same, since a mismatched field keeps its scalar value or becomes a marker that is not an object).
 */
const usageBlock: SchemaObject = {
  input_tokens: true,
  output_tokens: true,
  cache_creation_input_tokens: true,
  cache_read_input_tokens: true,
  cache_creation: { ephemeral_5m_input_tokens: true, ephemeral_1h_input_tokens: true },
  server_tool_use: { web_search_requests: true, web_fetch_requests: true },
  service_tier: true,
  speed: true,
};

export const LINE_SCHEMA: SchemaObject = {
  type: true,
  subtype: true,
  timestamp: true,
  sessionId: true,
  cwd: true,
  isSidechain: true,
  agentId: true,
  uuid: true,
  parentUuid: true,
  requestId: true,
  isCompactSummary: true,
  isMeta: true,
  message: {
    id: true,
    model: true,
    role: true,
    usage: usageBlock,
    content: [{ type: true, id: true, name: true, tool_use_id: true, input: { subagent_type: true, name: true, prompt: true } }],
  },
  toolUseResult: { agentId: true, status: true },
  attachment: true,
  data: {
    type: true,
    agentId: true,
    message: { type: true, timestamp: true, requestId: true, message: { id: true, model: true, usage: usageBlock } },
  },
};

/** A projected line, as far as the reader relies on it. Every field may be absent or mistyped. */
export interface Line {
  type?: unknown;
  subtype?: unknown;
  timestamp?: unknown;
  sessionId?: unknown;
  cwd?: unknown;
  isSidechain?: unknown;
  agentId?: unknown;
  uuid?: unknown;
  parentUuid?: unknown;
  requestId?: unknown;
  isCompactSummary?: unknown;
  isMeta?: unknown;
  message?: unknown;
  toolUseResult?: unknown;
  attachment?: unknown;
  data?: unknown;
}

export function str(x: unknown): string | null {
  return typeof x === 'string' && x.length > 0 && x.charCodeAt(0) !== 0 ? x : null;
}

export function obj(x: unknown): Record<string, unknown> | null {
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : null;
}
