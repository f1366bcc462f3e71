import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeAnatomy, chainDetail } from '../../src/analyses/anatomy-summary.js';
import { formatAnatomy, formatChain } from '../../src/analyses/format/anatomy.js';
import { clean, duration, fraction, int, num, signedPct, table, usd } from '../../src/analyses/format/table.js';
import { formatKeepalive, formatTtl } from '../../src/analyses/format/whatif.js';
import { whatifKeepalive } from '../../src/analyses/keepalive.js';
import { whatifTtl } from '../../src/analyses/ttl.js';
import { chain, chainASpecs, SEC, weightsFor } from './helpers/fixtures.js';

test('number formats: thousands separators, percent, USD, durations', () => {
  assert.equal(int(1_234_567.8), '1,234,568');
  assert.equal(int(-4_275), '-4,275');
  assert.equal(int(999), '999');
  assert.equal(num(1_234.567, 1), '1,234.6');
  assert.equal(num(-0.001, 2), '0.00');
  assert.equal(fraction(0.3947), '39.5 %');
  assert.equal(fraction(null), '–');
  assert.equal(signedPct(2.2413), '+2.24 %');
  assert.equal(signedPct(-10.3667), '-10.37 %');
  assert.equal(usd(1_234.567), '$1,234.57');
  assert.equal(usd(0.123456), '$0.1235');
  assert.equal(usd(-0.5), '-$0.5000');
  assert.equal(duration(5), '5s');
  assert.equal(duration(1_152), '19.2m');
  assert.equal(duration(15_060), '4.2h');
});

test('table aligns columns: right-aligned numbers end in the same column', () => {
  const text = table(
    [{ header: 'name' }, { header: 'tokens', align: 'right' }],
    [
      ['a', '1,000'],
      ['longer name', '12'],
    ],
  );
  assert.deepEqual(text.split('\n'), ['name         tokens', 'a             1,000', 'longer name      12']);
});

test('untrusted text cannot drive the terminal', () => {
  assert.equal(clean('evil\u001b[31mred\u0007'), 'evil\\u001b[31mred\\u0007');
  assert.equal(clean('a\u202eb'), 'a\\u202eb');
  const c = chain('A\u001b]0;pwned\u0007', chainASpecs, { agentType: 'x\u001b[2J' });
  const text = formatAnatomy(analyzeAnatomy([c], { weightsFor })) + formatChain(chainDetail(c, { weightsFor }));
  assert.ok(!/[\u0000-\u0009\u000b-\u001f]/.test(text), 'no control characters but newlines');
  assert.ok(text.includes('A\\u001b]0;pwned\\u0007'));
});

test('formatAnatomy shows causes, totals and the chain table', () => {
  const B = chain(
    'B',
    [
      { t: 0, w: 10_000 },
      { t: 30 * SEC, r: 4_000, w: 8_000 },
    ],
    { kind: 'subagent', agentType: 'Explore', events: [{ t: 20 * SEC, kind: 'attachment', detail: 'skill_listing' }] },
  );
  const text = formatAnatomy(analyzeAnatomy([chain('A', chainASpecs), B], { weightsFor }));
  const line = (start: string) => text.split('\n').find((l) => l.startsWith(start)) ?? '';
  assert.match(line('expiry'), /^expiry\s+12,000\s+/);
  assert.match(line('break'), /^break\s+6,000\s+\S+ %\s+1$/);
  assert.match(text, /attachment:skill_listing\s+1\s+6,000/);
  // A: 35,450 weight × $5e-6 = $0.17725
  assert.match(line('A '), /^A\s+main\s+4\s+1\s+10,000\s+3,500\s+12,000\s+0\s+13,800\s+35,450\s+\$0\.177[23]$/);
});

test('formatChain prints one aligned row per request', () => {
  const text = formatChain(chainDetail(chain('A', chainASpecs), { weightsFor }));
  const rows = text.split('\n').filter((l) => /^\s*\d+\s+1970/.test(l));
  assert.equal(rows.length, 4);
  assert.match(rows[2]!, /6\.0m\s+5m\s+13,005\s+0\s+13,000\s+12,000\s+12,000\s+expiry\s+16,505\s+opus/);
  assert.match(rows[0]!, /–\s+–\s+10,010/);
});

test('formatTtl and formatKeepalive print the headline numbers', () => {
  const ttl = formatTtl(whatifTtl([chain('A', chainASpecs)], { to: '1h', weightsFor }));
  assert.match(ttl, /baseline\s+35,450\s+\$0\.177[23]/);
  assert.match(ttl, /scenario\s+31,775\s+\$0\.1589/);
  assert.match(ttl, /delta\s+-10\.37 %/);
  assert.match(ttl, /expiry share f 47\.1 %, break-even f\* 39\.5 %: forcing 1h saves/);
  const ka = formatKeepalive(whatifKeepalive([chain('A', chainASpecs)], { weightsFor, budgets: [0, 1, Infinity] }));
  assert.match(ka, /^\s+1\s+1\s+1\s+1\s+0\s+1,288\s+13,800\s+12,51[23]\s+\$0\.0626\s+–\s+\+35\.30 %$/m);
  assert.match(ka, /best budget: 1 pings per gap/);
});
