/**
 * --pricing values past the checks of test/faults/cli.test.ts (SPEC §2.2, §8): a long-context
 * threshold that is no whole token count, a long_context of the wrong type, negative LiteLLM
 * prices. Each is one stderr line and exit 2, or (LiteLLM) an entry that is not used — never an
 * internal error, never a negative cost.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { assistant, pricingSetup, runCli, usage, usageError, writeLog } from './helpers.js';

const lc = (above: string) => `{"models": {"claude-opus-4-6": {"input": 5, "output": 25, "long_context": {"above": ${above}, "input": 10, "output": 37.5}}}}`;

test('--pricing long_context.above that is not a whole token count: one line, exit 2 (was an internal error in the store)', async (t) => {
  const { logs, file } = pricingSetup(t);
  for (const [name, above] of [['frac', '1.5'], ['huge', '1e300'], ['int64', '2e19']] as const) {
    await usageError(['summary', logs, '--db', ':memory:', '--pricing', file(`${name}.json`, lc(above))], new RegExp(`--pricing .*${name}\\.json: claude-opus-4-6\\.long_context\\.above must be a whole number of tokens`));
  }
});

test('--pricing LiteLLM entries with a negative price are not used (they gave negative costs)', async (t) => {
  const { logs, file } = pricingSetup(t);
  const entry = (extra: string) => `{"claude-opus-4-6": {"input_cost_per_token": 5e-6, "output_cost_per_token": 2.5e-5, ${extra}}}`;
  const cases = [
    ['neg-out', '"output_cost_per_token": -2.5e-3'],
    ['neg-read', '"cache_read_input_token_cost": -1e-6'],
    ['neg-write', '"cache_creation_input_token_cost": -1e-6'],
    ['neg-lc', '"input_cost_per_token_above_200k_tokens": -1e-5, "output_cost_per_token_above_200k_tokens": 3e-5'],
  ] as const;
  for (const [name, extra] of cases) {
    await usageError(['summary', logs, '--db', ':memory:', '--pricing', file(`${name}.json`, entry(extra))], new RegExp(`--pricing .*${name}\\.json: no model prices found`));
  }
  // beside a usable entry, the negative one is left out and the costs stay the bundled ones
  const mixed = file('mixed.json', `{"claude-opus-4-6": {"input_cost_per_token": 5e-6, "output_cost_per_token": -1}, "other-model": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}`);
  const r = await runCli(['summary', logs, '--db', ':memory:', '--pricing', mixed, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const usd = [...r.stdout.matchAll(/"usd": (-?[\d.e+-]+)/g)].map((m) => Number(m[1]));
  assert.ok(usd.length > 0, 'usd in the JSON');
  for (const u of usd) assert.ok(u >= 0, `usd ${u} is not negative`);
});

test('--pricing long_context of the wrong type, or a bad long-context price: named as such, exit 2', async (t) => {
  const { logs, file } = pricingSetup(t);
  const m = (long: string) => `{"models": {"m": {"input": 5, "output": 25, "long_context": ${long}}}}`;
  const cases = [
    ['lc-num', m('5'), /m\.long_context must be an object$/],
    ['lc-arr', m('[]'), /m\.long_context must be an object$/],
    ['lc-str', m('"x"'), /m\.long_context must be an object$/],
    ['lc-zero', m('{"above": 200000, "input": 0, "output": 30}'), /m\.long_context\.input must be a number above 0$/],
    ['lc-neg', m('{"above": 200000, "input": 6, "output": -30}'), /m\.long_context\.output must be a non-negative number$/],
  ] as const;
  for (const [name, text, expected] of cases) await usageError(['summary', logs, '--db', ':memory:', '--pricing', file(`${name}.json`, text)], expected);
});

test('--pricing prices a model named like an object key (__proto__, constructor) in both formats', async (t) => {
  const { dir, file } = pricingSetup(t);
  const logs = path.join(dir, 'odd-logs');
  writeLog(logs, 'proj/s1.jsonl', [
    assistant({ msg: 'm1', model: '__proto__', usage: usage(1000, 100, 0, 0) }),
    assistant({ msg: 'm2', model: 'constructor', usage: usage(1000, 100, 0, 0), t: '2025-03-01T10:01:00.000Z' }),
  ]);
  const own = file('own.json', '{"models": {"__proto__": {"input": 2, "output": 10}, "constructor": {"input": 4, "output": 20}}}');
  const litellm = file('litellm.json', '{"__proto__": {"input_cost_per_token": 2e-6, "output_cost_per_token": 1e-5}, "constructor": {"input_cost_per_token": 4e-6, "output_cost_per_token": 2e-5}}');
  for (const pricing of [own, litellm]) {
    const r = await runCli(['summary', logs, '--db', ':memory:', '--pricing', pricing, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { totals: { unpriced_requests: number; usd: number } };
    // the model named __proto__ was dropped ("no model prices found", or left unpriced beside another)
    assert.equal(out.totals.unpriced_requests, 0, pricing);
    // 1000 input + 100 output (5× input): 1,500 weight at $2/M and at $4/M
    assert.equal(out.totals.usd, 0.009, pricing);
  }
});
