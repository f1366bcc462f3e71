import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { anatomizeChain } from '../../src/analyses/anatomy.js';
import type { ChainInput } from '../../src/analyses/chain.js';
import { whatifKeepalive } from '../../src/analyses/keepalive.js';
import { whatifTtl } from '../../src/analyses/ttl.js';
import { weightsFor } from './helpers/fixtures.js';

/** A difference of two large float sums: compare relative to the sums' size, not the difference's. */
function close(actual: number, expected: number, scale: number): void {
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, scale), `expected ${expected}, got ${actual}`);
}

/** Random chains: gaps from 0 to 3 hours, reads and writes up to 200k, a compaction before one request in ten. */
function arbChain(ttl: '5m' | '1h', minWrite = 0): fc.Arbitrary<ChainInput> {
  const step = fc.record({
    gap: fc.integer({ min: 0, max: 3 * 3_600_000 }),
    r: fc.integer({ min: 0, max: 200_000 }),
    w: fc.integer({ min: minWrite, max: 200_000 }),
    input: fc.integer({ min: 0, max: 50 }),
    output: fc.integer({ min: 0, max: 2_000 }),
    compact: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  });
  return fc.array(step, { minLength: 1, maxLength: 30 }).map((steps) => {
    let t = 0;
    let segment = 0;
    return {
      chainId: 'p',
      sessionId: 's',
      agentId: null,
      agentType: 'main',
      kind: 'main' as const,
      requests: steps.map((s, i) => {
        t += s.gap;
        if (s.compact) segment++;
        return {
          key: `k${i}`,
          t,
          model: 'opus',
          input: s.input,
          output: s.output,
          cacheWrite: s.w,
          cacheWrite5m: ttl === '5m' ? s.w : 0,
          cacheWrite1h: ttl === '1h' ? s.w : 0,
          cacheRead: s.r,
          segment,
          round: 1,
        };
      }),
    };
  });
}

test('every write token is in exactly one class; expiry only past the TTL, break only inside it', () => {
  fc.assert(
    fc.property(arbChain('5m'), (c) => {
      for (const a of anatomizeChain(c)) {
        assert.equal(a.cold + a.expiry + a.break + a.growth, a.request.cacheWrite);
        assert.ok(a.rewriteTokens <= a.request.cacheWrite && (a.rewriteTokens === 0 || a.rewriteTokens >= 1024));
        if (a.expiry > 0) assert.ok(a.gapMs! > 5 * 60_000);
        if (a.break > 0) assert.ok(a.gapMs! <= 5 * 60_000);
        assert.ok(a.expiry === 0 || a.break === 0);
      }
    }),
  );
});

test('TTL override to 1h: delta = 0.75 × writes − 1.9 × expiries within an hour (uniform weights)', () => {
  fc.assert(
    fc.property(arbChain('5m'), (c) => {
      const res = whatifTtl([c], { to: '1h', weightsFor });
      const writes = c.requests.reduce((s, q) => s + q.cacheWrite, 0);
      const f = res.expiry_share ?? 0;
      close(res.scenario_weight - res.baseline_weight, 0.75 * writes - 1.9 * f * writes, res.baseline_weight);
    }),
  );
});

test('TTL override to 5m on a 1-hour chain: delta = 1.9 × expiring reads − 0.75 × baseline writes', () => {
  fc.assert(
    // every request writes, so the TTL in force is 1h from the second request on
    fc.property(arbChain('1h', 1), (c) => {
      const res = whatifTtl([c], { to: '5m', weightsFor });
      const writes = c.requests.reduce((s, q) => s + q.cacheWrite, 0);
      // f = X / (W + X) with no gap ≤ 1h expiries in a pure 1-hour chain → X = f·W / (1 − f)
      const f = res.expiry_share!;
      assert.ok(f < 1);
      const expiring = (f * writes) / (1 - f);
      close(res.scenario_weight - res.baseline_weight, 1.15 * expiring - 0.75 * writes, res.baseline_weight);
    }),
  );
});

test('keepalive: budget 0 costs and saves nothing; unbounded pinging bridges every gap', () => {
  fc.assert(
    fc.property(arbChain('5m'), (c) => {
      const [zero, inf] = whatifKeepalive([c], { weightsFor, budgets: [0, Infinity] }).budgets;
      assert.equal(zero!.net_saving_weight, 0);
      assert.equal(zero!.pings, 0);
      assert.equal(zero!.expired_after_budget, zero!.gaps_over_ttl);
      assert.equal(inf!.bridged, inf!.gaps_over_ttl);
    }),
  );
});

test('keepalive equals a ping-by-ping simulation of every gap, for any interval and budget', () => {
  // The sweep sums gaps by the pings they need (closed form); here each gap is replayed ping by
  // ping: a ping at t_{i−1} + j·I is sent while j ≤ B and it falls before t_i; the cache lives 300 s
  // after the last request or ping; the gap is bridged when t_i is within that.
  fc.assert(
    fc.property(
      arbChain('5m'),
      fc.integer({ min: 1, max: 299_999 }),
      fc.oneof(fc.integer({ min: 0, max: 40 }), fc.constant(Infinity)),
      (c, intervalMs, budget) => {
        const res = whatifKeepalive([c], { weightsFor, budgets: [budget], intervalS: intervalMs / 1000 });
        const row = res.budgets[0]!;
        let pings = 0;
        let over = 0;
        let bridged = 0;
        let pingWeight = 0;
        let saved = 0;
        const anatomy = anatomizeChain(c);
        anatomy.forEach((a, i) => {
          if (i === 0 || a.coldStart) return;
          const prevT = anatomy[i - 1]!.request.t;
          let last = prevT;
          let sent = 0;
          for (let at = prevT + intervalMs; sent < budget && at < a.request.t; at += intervalMs) {
            sent++;
            last = at;
          }
          pings += sent;
          pingWeight += sent * (0.1 * a.cachedPrefix + 30 * 1.25 + 10 * 5);
          if (a.gapMs! > 300_000) {
            over++;
            if (a.request.t - last <= 300_000) {
              bridged++;
              saved += a.expiry * (1.25 - 0.1);
            }
          }
        });
        assert.deepEqual([row.pings, row.gaps_over_ttl, row.bridged, row.expired_after_budget], [pings, over, bridged, over - bridged]);
        close(row.ping_weight, pingWeight, pingWeight);
        close(row.saved_weight, saved, saved);
      },
    ),
  );
});
