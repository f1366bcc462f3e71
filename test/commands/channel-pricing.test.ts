/**
 * The channel replay prices with the price table in force: `replay channel --pricing FILE` as every
 * other command takes it (the same loader, the same errors), `--model` checked against that table,
 * and `report --channel LOG` at the report's `--pricing`, `--channel-model` choosing the model.
 * Spawns dist/ (npm run build first).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assistant, cli, REPO, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';

const CHANNEL = join(REPO, 'sample-logs/channels/backend.jsonl');
const dir = tempDir('cachelens-channel-pricing-');

/** claude-opus-4-6 at twice its bundled prices (writes and reads at their usual multiples), and a model the bundled table has not. */
const OWN = join(dir, 'own.json');
writeFileSync(OWN, JSON.stringify({ models: { 'claude-opus-4-6': { input: 10, output: 50 }, 'my-model': { input: 2, write_5m: 3, read: 0.4, output: 8 } } }));
/** the same in LiteLLM's format (USD per token) */
const LITELLM = join(dir, 'litellm.json');
writeFileSync(LITELLM, JSON.stringify({ 'claude-opus-4-6': { input_cost_per_token: 10e-6, output_cost_per_token: 50e-6, cache_creation_input_token_cost: 12.5e-6, cache_read_input_token_cost: 1e-6 } }));

type Replay = { settings: Record<string, any>; strategies: Record<string, { weight: number; usd: number }> };

function replay(...args: string[]): Replay {
  const r = cli(['replay', 'channel', CHANNEL, '--json', ...args]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** A one-line error, exit 2, nothing on stdout. */
function oneLine(r: { code: number; stdout: string; stderr: string }): string {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  return r.stderr.trim();
}

const bundled = replay();

test('replay channel --pricing: an own price file (or LiteLLM\'s) changes the USD; the weights are the model\'s multiples, the same here', () => {
  for (const file of [OWN, LITELLM]) {
    const own = replay('--pricing', file);
    assert.equal(own.settings.model, 'claude-opus-4-6');
    assert.equal(own.settings.usd_per_input_token, 10e-6);
    assert.equal(own.settings.pricing_file, file);
    assert.equal(own.settings.model_prices_from, 'pricing_file');
    for (const s of ['window', 'watermark', 'unstable']) {
      assert.equal(own.strategies[s]!.weight, bundled.strategies[s]!.weight, s);
      assert.ok(Math.abs(own.strategies[s]!.usd - 2 * bundled.strategies[s]!.usd) < 1e-9, `${s}: twice the bundled USD`);
    }
  }
  assert.equal(bundled.settings.pricing_file, null);
  assert.equal(bundled.settings.model_prices_from, 'bundled');
  const text = cli(['replay', 'channel', CHANNEL, '--pricing', OWN, '--strategy', 'window']);
  assert.equal(text.code, 0, text.stderr);
  assert.ok(text.stdout.includes(`cost (USD) at claude-opus-4-6 prices from ${OWN}, per million tokens: input $10, cache write $12.50 (5m) / $20 (1h), cache read $1.00, output $50 (--model names another).`), text.stdout);
});

test('replay channel --model: a model only the --pricing file prices is taken, at its prices; without the file it is the one-line error', () => {
  const mine = replay('--pricing', OWN, '--model', 'my-model', '--strategy', 'watermark');
  assert.equal(mine.settings.model, 'my-model');
  assert.equal(mine.settings.usd_per_input_token, 2e-6);
  // write_1h not given: twice the input price, as the loader fills it in for every command
  assert.deepEqual(mine.settings.weights, { input: 1, write5m: 1.5, write1h: 2, read: 0.2, output: 4 });
  assert.equal(mine.settings.model_prices_from, 'pricing_file');
  assert.ok(Math.abs(mine.strategies.watermark!.usd - mine.strategies.watermark!.weight * 2e-6) < 1e-12);
  assert.match(oneLine(cli(['replay', 'channel', CHANNEL, '--model', 'my-model'])), /^cachelens: --model my-model: not in the bundled price table \(use one of claude-opus-5, /);
  // a file that does not price the model named: its bundled prices, and the text says so
  const sonnet = replay('--pricing', OWN, '--model', 'claude-sonnet-4-5', '--strategy', 'window');
  assert.equal(sonnet.settings.usd_per_input_token, 3e-6);
  assert.equal(sonnet.settings.model_prices_from, 'bundled');
  const text = cli(['replay', 'channel', CHANNEL, '--pricing', OWN, '--model', 'claude-sonnet-4-5', '--strategy', 'window']);
  assert.ok(text.stdout.includes(`cost (USD) at claude-sonnet-4-5's bundled prices (${OWN} does not price it), per million tokens: input $3,`), text.stdout);
});

test('replay channel --model a model neither table prices, with --pricing: one line naming the table in force and the models there are', () => {
  const line = oneLine(cli(['replay', 'channel', CHANNEL, '--pricing', OWN, '--model', 'gpt-4']));
  assert.equal(
    line,
    `cachelens: --model gpt-4: not in the price table in force, the bundled one + ${OWN} (use one of ${OWN}'s claude-opus-4-6, my-model, or a bundled one: claude-opus-5, claude-opus-4-8, claude-opus-4-7, claude-opus-4-5, ` +
      'claude-opus-4-1, claude-opus-4, claude-sonnet-5, claude-sonnet-4-6, claude-sonnet-4-5, claude-sonnet-4, claude-haiku-4-5, claude-3-7-sonnet, claude-3-5-sonnet, claude-3-5-haiku, claude-3-opus, claude-3-haiku)',
  );
  // LiteLLM's file prices ~2,000 models: the line names a few of them and how many there are
  const big = join(dir, 'big.json');
  writeFileSync(big, JSON.stringify(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`m-${i}`, { input_cost_per_token: 1e-6, output_cost_per_token: 5e-6 }]))));
  assert.match(oneLine(cli(['replay', 'channel', CHANNEL, '--pricing', big, '--model', 'gpt-4'])), new RegExp(`use one of ${big}'s m-0, m-1, m-2, m-3, m-4, m-5, m-6, m-7, … \\(50 in all\\), or a bundled one: claude-opus-5, `));
});

test('replay channel --pricing: a bad file is the one-line error every other command gives for it', () => {
  const negative = join(dir, 'negative.json');
  writeFileSync(negative, JSON.stringify({ models: { m: { input: -1, output: 1 } } }));
  const empty = join(dir, 'empty.json');
  writeFileSync(empty, '{}');
  for (const args of [['--pricing', join(dir, 'no-such.json')], ['--pricing', negative], ['--pricing', empty], ['--pricing='], ['--pricing', dir], ['--pricing']]) {
    const want = oneLine(cli(['summary', join(REPO, 'sample-logs'), '--db', ':memory:', ...args]));
    assert.equal(oneLine(cli(['replay', 'channel', CHANNEL, ...args])), want, args.join(' '));
  }
});

/** A corpus of one request: the report's other sections are not what these tests look at. */
const LOGS = writeCorpus(
  { 'projects/-p/s.jsonl': [userPrompt('s', '2026-02-11T03:00:00.000Z'), assistant({ session: 's', msg: 'a', t: '2026-02-11T03:00:01.000Z', u: { in: 10, w5: 1000 } })] },
  join(dir, 'logs'),
);

function reportRun(...args: string[]): { prices: Record<string, unknown>; strategies: Array<{ strategy: string; usd: number }>; section: string } {
  const out = join(tempDir('cachelens-report-'), 'report.html');
  const r = cli(['report', LOGS, '--db', ':memory:', '--timezone', 'UTC', '--channel', CHANNEL, '--out', out, ...args]);
  assert.equal(r.code, 0, r.stderr);
  const page = readFileSync(out, 'utf8');
  const data = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(page)![1]!);
  const run = data.replay.runs.find((x: { kind: string }) => x.kind === 'channel');
  return { ...run, section: /<section class="card" id="replay"[\s\S]*?<\/section>/.exec(page)![0] };
}

test('report --channel with --pricing: the channel replay is at the report\'s price table, as replay channel --pricing prices it, and says so', () => {
  const want = replay('--pricing', OWN);
  const run = reportRun('--pricing', OWN);
  assert.deepEqual(run.prices, { model: 'claude-opus-4-6', usdPerMillionInput: 10, pricingFile: OWN, fromPricingFile: true });
  for (const s of run.strategies) assert.equal(s.usd, want.strategies[s.strategy]!.usd, s.strategy);
  assert.ok(run.section.includes(`cost in USD at claude-opus-4-6 prices from ${OWN}, $10 per million input tokens (--channel-model prices another model): “window” $5.43`), run.section);
  // --channel-model: a model the file alone prices, as replay channel --model
  const mine = reportRun('--pricing', OWN, '--channel-model', 'my-model');
  const wantMine = replay('--pricing', OWN, '--model', 'my-model');
  assert.deepEqual(mine.prices, { model: 'my-model', usdPerMillionInput: 2, pricingFile: OWN, fromPricingFile: true });
  for (const s of mine.strategies) assert.equal(s.usd, wantMine.strategies[s.strategy]!.usd, s.strategy);
});

test('report --channel-model: a model the table in force does not price is one line before the logs are read; only with --channel', () => {
  const db = join(dir, 'store.duckdb');
  const out = join(dir, 'r.html');
  const line = oneLine(cli(['report', LOGS, '--db', db, '--channel', CHANNEL, '--channel-model', 'my-model', '--out', out]));
  assert.match(line, /^cachelens: --channel-model my-model: not in the bundled price table \(use one of claude-opus-5, /);
  assert.ok(!existsSync(db), 'no store opened: said before the logs are read');
  assert.match(oneLine(cli(['report', LOGS, '--db', db, '--channel', CHANNEL, '--pricing', OWN, '--channel-model', 'gpt-4', '--out', out])), /--channel-model gpt-4: not in the price table in force, the bundled one \+ /);
  assert.match(oneLine(cli(['report', LOGS, '--db', ':memory:', '--channel-model', 'my-model', '--pricing', OWN, '--out', out])), /--channel-model prices the channel replays, and none was asked for \(add --channel LOG\)/);
  assert.match(oneLine(cli(['report', LOGS, '--db', ':memory:', '--channel', CHANNEL, '--channel-model', '', '--out', out])), /--channel-model: expected a model id such as claude-opus-4-6/);
  assert.match(oneLine(cli(['report', LOGS, '--db', ':memory:', '--channel', CHANNEL, '--out', out, '--channel-model'])), /Not enough arguments following: channel-model/);
  assert.ok(!existsSync(out));
});

test('a --pricing file that prices every bundled model: an unknown --model names the file\'s models alone, not "or a bundled one: " and nothing', () => {
  const bundledModels = Object.keys((JSON.parse(readFileSync(join(REPO, 'src/pricing/prices.json'), 'utf8')) as { models: Record<string, unknown> }).models);
  const all = join(dir, 'all.json');
  writeFileSync(all, JSON.stringify({ models: Object.fromEntries(bundledModels.map((m) => [m, { input: 1, output: 5 }])) }));
  const line = oneLine(cli(['replay', 'channel', CHANNEL, '--pricing', all, '--model', 'gpt-4']));
  assert.match(line, /^cachelens: --model gpt-4: not in the price table in force, the bundled one \+ .*all\.json \(use one of .*all\.json's .*\(\d+ in all\)\)$/);
  assert.doesNotMatch(line, /or a bundled one/);
});
