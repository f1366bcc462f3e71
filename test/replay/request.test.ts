import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SegmentTokenizer } from '../../src/replay/tokenizer.js';
import { SegmentList, commonPrefixTokens, requestOf } from '../../src/replay/request.js';

const tokP = SegmentTokenizer.load('cl100k_base');

test('each distinct text is encoded once; special-token text is ordinary text', async () => {
  const tok = await SegmentTokenizer.load('cl100k_base'); // a fresh cache over the shared encoder
  const a = tok.segment('hello world');
  assert.equal(tok.segment('hello world'), a);
  tok.segment('<|endoftext|> is just text here');
  assert.deepEqual(tok.stats, { encode_calls: 2, tokens_encoded: a.tokens.length + tok.count('<|endoftext|> is just text here') });
  assert.ok(tok.count('<|endoftext|> is just text here') > 3);
});

test('a warm turn: the whole previous request is the cacheable prefix', async () => {
  const tok = await tokP;
  const lead = new SegmentList([tok.segment('You are a helpful agent.\n'), tok.segment('{"name":"read_file"}\n')]);
  const history = new SegmentList();
  const turn1 = new SegmentList([tok.segment('{"message_id":"m1"}\n'), tok.segment('Task brief.\n')]);
  const req1 = requestOf(lead, history, turn1);
  history.push(...turn1.segments, tok.segment('Reply one.\n'));
  const turn2 = new SegmentList([tok.segment('{"message_id":"m2"}\n'), tok.segment('Task brief.\n')]);
  const req2 = requestOf(lead, history, turn2);
  assert.equal(commonPrefixTokens(req1, req2), req1.tokens);
  assert.equal(req2.tokens, req1.tokens + tok.count('Reply one.\n') + turn2.tokens);
  // the run snapshot does not move when history grows later
  history.push(tok.segment('more\n'));
  assert.equal(requestOf(lead, new SegmentList(history.segments.slice(0, 3))).tokens, lead.tokens + history.tokensBetween(0, 3));
  assert.equal(commonPrefixTokens(req1, req2), req1.tokens);
});

test('only the first differing segment is compared token by token', async () => {
  const tok = await tokP;
  const sys = tok.segment('System prompt.\n');
  const a = requestOf(new SegmentList([tok.segment('Channel #backend · 6 online · turn at 10:01\n'), sys]));
  const b = requestOf(new SegmentList([tok.segment('Channel #backend · 5 online · turn at 10:07\n'), sys]));
  const shared = tok.count('Channel #backend · ');
  const got = commonPrefixTokens(a, b);
  assert.ok(got >= shared - 1 && got <= shared + 1, `${got} vs ~${shared}`);
  assert.ok(got < a.tokens - sys.tokens.length, 'nothing after the volatile line counts');
});

test('identical requests share every token; a new process shares nothing', async () => {
  const tok = await tokP;
  const l = new SegmentList([tok.segment('alpha\n'), tok.segment('beta\n')]);
  const r = requestOf(l);
  assert.equal(commonPrefixTokens(r, requestOf(new SegmentList(l.segments))), r.tokens);
  assert.equal(commonPrefixTokens(requestOf(), r), 0);
});
