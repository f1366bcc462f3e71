/** `cachelens replay channel` end to end on the sample channel: the documented JSON shape and SPEC §6.1's shapes. */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO, cli } from '../helpers/corpus.js';
import { tempDir } from '../helpers/temp.js';

const CHANNEL = join(REPO, 'sample-logs/channels/backend.jsonl');
const KEYS = ['input_tokens', 'cacheable_tokens', 'cacheable_ratio', 'uncached_per_warm_turn', 'context_tokens', 'already_seen_tokens', 'rows_sent', 'rows_never_shown', 'weight'];

test('replay channel --json: every strategy carries the documented metrics, and the shapes hold', () => {
  const r = cli(['replay', 'channel', CHANNEL, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  for (const s of ['window', 'watermark', 'unstable']) for (const k of KEYS) assert.equal(typeof d.strategies[s][k], 'number', `${s}.${k}`);
  const { window: w, watermark: m, unstable: u } = d.strategies;
  assert.ok(Math.abs(w.cacheable_ratio - m.cacheable_ratio) <= 0.02 && m.cacheable_ratio > 0.9);
  assert.equal(m.already_seen_tokens, 0);
  assert.ok(w.already_seen_tokens > 0.4 * w.context_tokens);
  assert.ok(u.cacheable_ratio < 0.05);
  assert.ok(Array.isArray(d.turns) && d.turns.length === 90, '30 mentions × 3 strategies');
});

test('replay channel: a missing file and an unknown strategy are one-line errors with exit 2', () => {
  const a = cli(['replay', 'channel', join(REPO, 'no-such-channel.jsonl')]);
  assert.equal(a.code, 2);
  assert.equal(a.stderr.trim().split('\n').length, 1);
  const b = cli(['replay', 'channel', CHANNEL, '--strategy', 'telepathy']);
  assert.equal(b.code, 2);
  assert.match(b.stderr, /--strategy telepathy/);
});

test('replay channel: events past the last mention, no strategy, and an unbounded framing are one-line errors', () => {
  const cases: [string[], RegExp][] = [
    [['--evict-at', '31'], /--evict-at 31: the channel has 30 mentions of @claude/],
    [['--fail-at', '2,99'], /--fail-at 99: the channel has 30 mentions/],
    [['--strategy', ','], /--strategy ,: name at least one of window, watermark, unstable/],
    // an empty --evict-at / --fail-at ran with no event, silently
    [['--evict-at', ''], /--evict-at : expected a mention number/],
    [['--fail-at=', '--strategy', 'window'], /--fail-at : expected a mention number/],
    [['--evict-at', ' , '], /--evict-at  , : expected a mention number/],
    [['--prefix-tokens', '1e12'], /--prefix-tokens 1e12: expected a whole number of tokens up to 1,000,000/],
  ];
  for (const [args, expected] of cases) {
    const r = cli(['replay', 'channel', CHANNEL, ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.match(r.stderr, expected);
  }
  const last = cli(['replay', 'channel', CHANNEL, '--evict-at', '30', '--strategy', 'window', '--json']);
  assert.equal(last.code, 0, last.stderr);
});

test('replay channel flags given no value are one-line errors, not the default run silently', () => {
  // --ttl, --encoding, --agent and --strategy alone ran with their defaults (5m, cl100k_base,
  // @claude, every strategy); --idle-reap alone said "--idle-reap : expected a duration"
  for (const flag of ['ttl', 'encoding', 'agent', 'strategy', 'idle-reap', 'model']) {
    for (const args of [[`--${flag}`], [`--${flag}`, '--json']]) {
      const r = cli(['replay', 'channel', CHANNEL, ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trim().split('\n').length, 1);
      assert.match(r.stderr, new RegExp(`Not enough arguments following: ${flag}`));
    }
  }
  const d = JSON.parse(cli(['replay', 'channel', CHANNEL, '--strategy', 'window', '--strategy', 'unstable', '--ttl', '1h', '--json']).stdout);
  assert.deepEqual(d.settings.strategies, ['window', 'unstable']);
  assert.equal(d.settings.ttl, '1h');
});

test('replay channel --model: an unknown model is a one-line error naming the models there are; an empty one says what is expected', () => {
  const r = cli(['replay', 'channel', CHANNEL, '--model', 'gpt-4']);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /--model gpt-4: not in the bundled price table \(use one of claude-opus-5, .*claude-opus-4-6, .*claude-3-haiku\)/);
  const empty = cli(['replay', 'channel', CHANNEL, '--model', '']);
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /--model: expected a model id/);
  const d = JSON.parse(cli(['replay', 'channel', CHANNEL, '--model', 'claude-haiku-4-5', '--strategy', 'window', '--json']).stdout);
  assert.equal(d.settings.model, 'claude-haiku-4-5');
  assert.equal(d.settings.usd_per_input_token, 1e-6);
});

test('replay session of a chain of one request: no fidelity to compare, said so', () => {
  const dir = join(REPO, '../shared/real-logs/marot-spotter');
  const r = cli(['replay', 'session', '4d5611e5', dir, '--chain', 'acompact', '--db', ':memory:', '--strategy', 'recorded']);
  assert.equal(r.code, 0, r.stderr);
  // singular for one: it read `· 1 requests · 1 rounds ·`
  assert.match(r.stdout, /· 1 request · 1 round · 0 compactions ·/);
  assert.match(r.stdout, /Fidelity of recorded: none \(a chain of one request/);
  assert.doesNotMatch(r.stdout, /requests 2–1/);
});

test('replay session of a .jsonl path that is not there names the missing file', () => {
  const r = cli(['replay', 'session', join(REPO, 'no-such-transcript.jsonl'), '--db', ':memory:']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^cachelens: no such file or directory: .*no-such-transcript\.jsonl/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
});

test('replay session of a path that stat cannot follow (through a file, a symlink loop) is a one-line error, not an internal one', () => {
  const dir = tempDir('cachelens-replay-stat-');
  writeFileSync(join(dir, 'a.jsonl'), '');
  symlinkSync('loop.jsonl', join(dir, 'loop.jsonl'));
  for (const [target, said] of [
    [join(dir, 'a.jsonl', 'x.jsonl'), /^cachelens: no such file or directory: .*a\.jsonl\/x\.jsonl/],
    [join(dir, 'loop.jsonl'), /^cachelens: .*loop\.jsonl: cannot read transcript \(ELOOP/],
  ] as const) {
    const r = cli(['replay', 'session', target, '--db', ':memory:']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, said);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test('replay session of a directory (one named x.jsonl, a session\'s <session>/) says it is one, not that no session has its name', () => {
  const dir = tempDir('cachelens-replay-dir-');
  mkdirSync(join(dir, 'x.jsonl'));
  for (const target of [join(dir, 'x.jsonl'), `${dir}/`]) {
    const r = cli(['replay', 'session', target, '--db', ':memory:'], { HOME: dir, XDG_CONFIG_HOME: dir, CLAUDE_CONFIG_DIR: '' });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^cachelens: .*: is a directory \(give a transcript file, or a session id and the directory/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});

test('replay channel of a log that is not there, or will not open, says it as replay session says it of a transcript path', () => {
  // it read 'cannot read channel log F (ENOENT)' where replay session read 'no such file or directory: F'
  const dir = tempDir('cachelens-replay-chmiss-');
  writeFileSync(join(dir, 'a.jsonl'), '');
  symlinkSync('loop.jsonl', join(dir, 'loop.jsonl'));
  const line = (r: { code: number | null; stderr: string }) => {
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    return r.stderr.trim();
  };
  for (const target of [join(dir, 'no-such.jsonl'), join(dir, 'a.jsonl', 'x.jsonl')]) {
    const channel = line(cli(['replay', 'channel', target]));
    assert.equal(channel, `cachelens: no such file or directory: ${target} (give a channel log file)`);
    assert.equal(channel.replace(/ \(.*$/, ''), line(cli(['replay', 'session', target, '--db', ':memory:'])).replace(/ \(.*$/, ''));
  }
  const loop = join(dir, 'loop.jsonl');
  assert.match(line(cli(['replay', 'channel', loop])), new RegExp(`^cachelens: ${loop}: cannot read channel log \\(ELOOP[^)]*\\)$`));
  assert.match(line(cli(['replay', 'session', loop, '--db', ':memory:'])), new RegExp(`^cachelens: ${loop}: cannot read transcript \\(ELOOP`));
});

test('replay channel of a directory says it is one, in one line with exit 2, as replay session does (not EISDIR)', () => {
  const dir = tempDir('cachelens-replay-chdir-');
  mkdirSync(join(dir, 'c.jsonl'));
  for (const target of [dir, join(dir, 'c.jsonl')]) {
    const r = cli(['replay', 'channel', target]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim(), `cachelens: ${target}: is a directory (give a channel log file)`);
  }
});

test('replay channel: --strategy and --evict-at may be repeated as well as comma-listed', () => {
  const a = cli(['replay', 'channel', CHANNEL, '--strategy', 'window', '--strategy', 'watermark', '--evict-at', '3', '--evict-at', '5', '--json']);
  const b = cli(['replay', 'channel', CHANNEL, '--strategy', 'window,watermark', '--evict-at', '3,5', '--json']);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(a.stdout, b.stdout);
  assert.deepEqual(Object.keys(JSON.parse(a.stdout).strategies), ['window', 'watermark']);
});

test('replay channel --json on a threaded channel: per-stream blocks, the root already seen once, no loss in unmentioned threads', () => {
  // test/fixtures/replay/threaded.jsonl is the 22-message log of test/replay/channel-threads.test.ts
  // (figures worked out there by hand): mentions M1 top, M2 thread R, M3 top, M4 R, M5 top
  const r = cli(['replay', 'channel', join(REPO, 'test/fixtures/replay/threaded.jsonl'), '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  const rows = (s: string) => d.turns.filter((t: { strategy: string }) => t.strategy === s).map((t: { rows: number }) => t.rows);
  assert.deepEqual(rows('window'), [3, 3, 7, 7, 9]);
  assert.deepEqual(rows('watermark'), [3, 3, 4, 4, 2]);
  const seen = d.turns.filter((t: { strategy: string }) => t.strategy === 'watermark').map((t: { already_seen_tokens: number }) => t.already_seen_tokens);
  assert.ok(seen[1] > 0 && seen.filter((x: number) => x > 0).length === 1, `only M2 re-sends the root: ${seen}`);
  assert.deepEqual([d.strategies.window.already_seen_tokens, d.strategies.watermark.already_seen_tokens], [194, 17]);
  for (const s of ['window', 'watermark', 'unstable']) assert.equal(d.strategies[s].rows_never_shown, 0, s);
  assert.equal(d.channel.replies_from_log, 5);
});
