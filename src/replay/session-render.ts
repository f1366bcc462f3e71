/**
 * The text the session replay tokenizes for each logged message block and attachment (SPEC §6.2).
 * The transcript holds what Claude Code sent, not the exact bytes of the API request, so this is
 * the closest plain rendering: text as is, a tool call as its name and JSON input, a tool result
 * as its text, an attachment as its content. Role markers and the `<system-reminder>` wrapper are
 * left out: they are a few tokens per message, and the calibrated prefix absorbs what the first
 * request had of them.
 */
import { canonicalJson } from '../ingest/file-parser.js';
import type { Block } from './session-transcript.js';

/**
 * What `thinking` blocks of earlier replies add to later prompts. `keep` counts their logged
 * text; a signature-only block (empty text, as some Claude Code versions log it) adds nothing
 * either way, since the API does not count it either. `drop` counts none (see docs/session-replay.md).
 */
export type ThinkingRule = 'drop' | 'keep';

/** Tokens an image costs (the API's estimate for a ~1.15 megapixel image); images are never tokenized as base64. */
export const IMAGE_TOKENS = 1600;

/**
 * Tokens a PDF page costs, an estimate as IMAGE_TOKENS is: the API sends each page as its extracted
 * text and as an image, and the replay cannot extract a page's text. Published third-party counts
 * on Claude 4.5 and later models put a page of text at ~2,100 – 2,500 tokens, a scanned page at
 * ~1,600 (not measured here: no real log holds a PDF).
 */
export const PDF_PAGE_TOKENS = 2_300;

/** One rendered piece: text to tokenize, or a fixed token count for content that is not text. */
export type Piece = { text: string } | { opaque: number; label: string };

/**
 * Pages of a base64 PDF, an estimate from its uncompressed text: its `/Type /Page` objects, or the
 * largest `/Count` (its page tree's root) when that is fewer — an incremental update writes a
 * changed page again, so objects overcount, while an outline's `/Count` can exceed the pages. Page
 * objects in compressed object streams (PDF 1.5 and later) cannot be seen: then the `/Count`; else
 * one page.
 */
export function pdfPages(base64: string): number {
  const pdf = Buffer.from(base64, 'base64').toString('latin1');
  const objects = pdf.match(/\/Type\s*\/Page(?![A-Za-z0-9])/g)?.length ?? 0;
  let count = 0;
  for (const m of pdf.matchAll(/\/Count\s+(\d{1,6})(?![0-9])/g)) count = Math.max(count, Number(m[1]));
  if (objects > 0 && count > 0) return Math.min(objects, count);
  return Math.max(1, objects, count);
}

/**
 * Pieces of a `document` block: a text document as its text; a content document as its blocks; a
 * base64 PDF as PDF_PAGE_TOKENS per page, never as its base64 (about one token per byte of the PDF).
 * A document by URL or file id (no bytes in the log) keeps its JSON.
 */
function documentPieces(b: Block): Piece[] {
  const source = b.source as Record<string, unknown> | null | undefined;
  if (source?.type === 'text' && typeof source.data === 'string') return source.data ? [{ text: source.data }] : [];
  if (source?.type === 'content') return resultPieces(source.content);
  if (source?.type === 'base64' && typeof source.data === 'string') {
    const pages = pdfPages(source.data);
    return [{ opaque: pages * PDF_PAGE_TOKENS, label: pages === 1 ? 'PDF, 1 page' : `PDF, ${pages} pages` }];
  }
  return [{ text: canonicalJson(b) }];
}

function resultPieces(content: unknown): Piece[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return content === undefined || content === null ? [] : [{ text: canonicalJson(content) }];
  return content.flatMap((c): Piece[] => {
    const b = c as Block;
    if (b?.type === 'text' && typeof b.text === 'string') return b.text ? [{ text: b.text }] : [];
    if (b?.type === 'image') return [{ opaque: IMAGE_TOKENS, label: 'image' }];
    if (b?.type === 'document') return documentPieces(b);
    return [{ text: canonicalJson(b) }];
  });
}

/**
 * Pieces of one content block.
 *
 * Example: `{type:'tool_use', name:'Bash', input:{command:'ls'}}` → `Bash {"command":"ls"}`;
 * `{type:'thinking', thinking:'…', signature:'…'}` → nothing under `drop`, its text under `keep`.
 */
export function blockPieces(b: Block, thinking: ThinkingRule): Piece[] {
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' && b.text ? [{ text: b.text }] : [];
    case 'tool_use':
      return [{ text: `${String(b.id ?? '')} ${String(b.name ?? 'tool')} ${canonicalJson(b.input ?? {})}` }];
    case 'tool_result':
      return [{ text: String(b.tool_use_id ?? '') }, ...resultPieces(b.content)];
    case 'thinking':
      return thinking === 'keep' && typeof b.thinking === 'string' && b.thinking ? [{ text: b.thinking }] : [];
    case 'redacted_thinking':
      return [];
    case 'image':
      return [{ opaque: IMAGE_TOKENS, label: 'image' }];
    case 'document':
      return documentPieces(b);
    default:
      return [{ text: canonicalJson(b) }];
  }
}

/**
 * The text of an attachment as it reaches the model: its `content` when that is text, the lines
 * a `*_delta` attachment adds, else the attachment's JSON.
 *
 * Example: `{type:'skill_listing', content:'- deep-research: …'}` → `- deep-research: …`;
 * `{type:'budget_usd', used:0, total:5, remaining:5}` → `{"remaining":5,"total":5,"type":"budget_usd","used":0}`.
 */
export function attachmentText(a: Record<string, unknown>): string {
  if (typeof a.content === 'string') return a.content;
  if (Array.isArray(a.addedLines) && a.addedLines.every((x) => typeof x === 'string')) return (a.addedLines as string[]).join('\n');
  return canonicalJson(a);
}

/** One line of the `cold-replay` flattening: `User: …` or `Assistant: …`. */
export function flatLine(role: 'user' | 'assistant', pieces: readonly Piece[]): string {
  const body = pieces.map((p) => ('text' in p ? p.text : `[${p.label}]`)).join('\n');
  return `${role === 'user' ? 'User' : 'Assistant'}: ${body}\n`;
}
