/** What the session replay tokenizes for a logged block (session-render.ts): documents. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PDF_PAGE_TOKENS, blockPieces, pdfPages } from '../../src/replay/session-render.js';

/** A small PDF with `pages` page objects in plain text, padded with `pad` bytes of binary. */
function pdf(pages: number, pad = 0): string {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(' ');
  const objs = Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj\n`).join('');
  const body = `%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [${kids}] /Count ${pages} >> endobj\n${objs}`;
  const binary = Buffer.from(Array.from({ length: pad }, (_, i) => (i * 131 + 7) % 256));
  return Buffer.concat([Buffer.from(body, 'latin1'), binary, Buffer.from('%%EOF\n')]).toString('base64');
}

const doc = (source: Record<string, unknown>) => ({ type: 'document', source });

test('a base64 PDF counts PDF_PAGE_TOKENS per page, not the tokens of its base64', () => {
  assert.deepEqual(blockPieces(doc({ type: 'base64', media_type: 'application/pdf', data: pdf(3, 50_000) }), 'keep'), [
    { opaque: 3 * PDF_PAGE_TOKENS, label: 'PDF, 3 pages' },
  ]);
  assert.deepEqual(blockPieces(doc({ type: 'base64', media_type: 'application/pdf', data: pdf(1) }), 'keep'), [{ opaque: PDF_PAGE_TOKENS, label: 'PDF, 1 page' }]);
});

test('pages: the /Type /Page objects (not /Pages) or the largest /Count when fewer, else either, else one', () => {
  assert.equal(pdfPages(pdf(7)), 7);
  // page objects packed in a compressed object stream: only the (uncompressed) trailer-side /Count is readable
  const packed = Buffer.from('%PDF-1.7\n5 0 obj << /Type /ObjStm /N 12 /First 80 /Filter /FlateDecode >> stream\nx\x9c...\nendstream\n9 0 obj << /Type /Pages /Count 12 /Kids [] >>\n%%EOF\n', 'latin1');
  assert.equal(pdfPages(packed.toString('base64')), 12);
  assert.equal(pdfPages(Buffer.from('not a pdf at all').toString('base64')), 1);
  // an incremental update writes page 2 again: 4 page objects, 3 pages by the tree's /Count
  const updated = Buffer.concat([Buffer.from(pdf(3), 'base64'), Buffer.from('4 0 obj << /Type /Page /Parent 2 0 R /Rotate 90 >> endobj\n%%EOF\n')]);
  assert.equal(pdfPages(updated.toString('base64')), 3);
  // an outline of 40 entries (/Count 40) in a 2-page PDF: the page objects
  const outlined = Buffer.concat([Buffer.from(pdf(2), 'base64'), Buffer.from('9 0 obj << /Type /Outlines /Count 40 >> endobj\n')]);
  assert.equal(pdfPages(outlined.toString('base64')), 2);
  assert.equal(pdfPages(''), 1);
});

test('a text document is its text; a content document its blocks; one by URL or file id keeps its JSON', () => {
  assert.deepEqual(blockPieces(doc({ type: 'text', media_type: 'text/plain', data: 'the notes' }), 'keep'), [{ text: 'the notes' }]);
  assert.deepEqual(blockPieces(doc({ type: 'text', media_type: 'text/plain', data: '' }), 'keep'), []);
  assert.deepEqual(blockPieces(doc({ type: 'content', content: [{ type: 'text', text: 'a' }, { type: 'image', source: {} }] }), 'keep'), [
    { text: 'a' },
    { opaque: 1600, label: 'image' },
  ]);
  assert.deepEqual(blockPieces(doc({ type: 'url', url: 'https://example.com/a.pdf' }), 'keep'), [
    { text: '{"source":{"type":"url","url":"https://example.com/a.pdf"},"type":"document"}' },
  ]);
  assert.deepEqual(blockPieces({ type: 'document' }, 'keep'), [{ text: '{"type":"document"}' }]);
});

test('a PDF inside a tool result counts the same as one in a message', () => {
  const data = pdf(2, 10_000);
  assert.deepEqual(blockPieces({ type: 'tool_result', tool_use_id: 'toolu_1', content: [doc({ type: 'base64', media_type: 'application/pdf', data })] }, 'keep'), [
    { text: 'toolu_1' },
    { opaque: 2 * PDF_PAGE_TOKENS, label: 'PDF, 2 pages' },
  ]);
});
