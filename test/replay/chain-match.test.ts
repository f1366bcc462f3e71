/**
 * ChainMatch, the one rule by which `anatomy --chain`, `replay session --chain` and the store's
 * chain lookup name a chain: a whole id over a prefix, the chain's id or its agent's, as typed over
 * folded, and an id cut to a narrow terminal's width (head…tail).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChainMatch, chainNamed, manyChainsError } from '../../src/replay/session-locate.js';

type C = { chain: string; agent: string | null };
const ids = (c: C) => [c.chain, c.agent] as const;
const main: C = { chain: 's1', agent: null };
const sub: C = { chain: 's1:a2898e3', agent: 'a2898e3' };
const side: C = { chain: 's1:side:f4ab2bf6-d642-431a-85cb-66691f24c404', agent: null };
const chains = [main, sub, side];

test('a whole id is picked over the prefixes it is also part of; an agent id names its chain', () => {
  assert.deepEqual(chainNamed(chains, 's1', ids), { hit: main });
  assert.deepEqual(chainNamed(chains, 'a28', ids), { hit: sub });
  assert.deepEqual(chainNamed(chains, 's1:', ids), { many: 2, ids: [sub.chain, side.chain] });
  assert.equal(chainNamed(chains, 'zz', ids), null);
});

test('an id cut in the middle (head…tail) names the one id with both ends, in any case', () => {
  assert.deepEqual(chainNamed(chains, 's1:side…f24c404', ids), { hit: side });
  assert.deepEqual(chainNamed(chains, 'S1:SIDE…F24C404', ids), { hit: side });
  assert.deepEqual(chainNamed(chains, 's1…4', ids), { hit: side });
  assert.deepEqual(chainNamed(chains, 's1…', ids), { many: 2, ids: [sub.chain, side.chain] });
  // the ends may not overlap: 's1:a2898e3' is not 's1:a28' + … + '98e3'
  assert.equal(chainNamed(chains, 's1:a289…898e3', ids), null);
});

test('two ids that differ in case alone, each the id folded: neither is picked; typed exactly, the one', () => {
  const twins: C[] = [{ chain: 'ab', agent: null }, { chain: 'AB', agent: null }];
  assert.deepEqual(chainNamed(twins, 'Ab', ids), { many: 2, ids: ['ab', 'AB'] });
  assert.deepEqual(chainNamed(twins, 'AB', ids), { hit: twins[1] });
  // offered one at a time (a stream that is not kept), the same answer
  const m = new ChainMatch<C>('Ab');
  for (const c of twins) m.offer(c, c.chain, c.agent);
  assert.deepEqual(m.result(), { many: 2, ids: ['ab', 'AB'] });
});

test('an inline sidechain is named by its uuid, and by `side:` and its uuid, whole or a unique prefix, in any case', () => {
  assert.deepEqual(chainNamed(chains, 'f4ab', ids), { hit: side });
  assert.deepEqual(chainNamed(chains, 'side:f4ab', ids), { hit: side });
  assert.deepEqual(chainNamed(chains, 'SIDE:F4AB2BF6', ids), { hit: side });
  assert.deepEqual(chainNamed(chains, 'side:f4ab2bf6-d642-431a-85cb-66691f24c404', ids), { hit: side });
  assert.deepEqual(chainNamed(chains, 'side:…c404', ids), { hit: side });
  const other: C = { chain: 's1:side:f4546a51-ea10-47e0-b4e0-76802974f8a9', agent: null };
  assert.deepEqual(chainNamed([...chains, other], 'side:f4', ids), { many: 2, ids: [side.chain, other.chain] });
  // a subagent's chain id holds no `side:`: `side:a28` is no name of it
  assert.equal(chainNamed(chains, 'side:a28', ids), null);
});

test('an id several chains fit names the first three of them, and counts them all', () => {
  const many: C[] = ['1', '2', '3', '4'].map((n) => ({ chain: `s1:a${n}`, agent: `a${n}` }));
  assert.deepEqual(chainNamed(many, 's1:a', ids), { many: 4, ids: ['s1:a1', 's1:a2', 's1:a3'] });
  assert.equal(manyChainsError('s1:a', { many: 4, ids: ['s1:a1', 's1:a2', 's1:a3'] }).message, '--chain s1:a matches 4 chains (s1:a1, s1:a2, s1:a3, …); give more of the id');
});
