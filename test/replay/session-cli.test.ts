/** `cachelens replay session` end to end through the built CLI (npm test builds dist first). */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REAL_LOGS, REPO, assistant, cli, tempDir, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { SKILLS, SESSION, sessionLines, writeSession } from './session-fixture.js';

const MAROT = join(REAL_LOGS, 'marot-spotter');

test('a transcript path is replayed directly, no store needed', () => {
  const path = writeSession({ rounds: 2, attachment: { type: 'skill_listing', content: SKILLS } });
  const r = cli(['replay', 'session', path, '--strategy', 'recorded,reinject', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.chain.chain_id, SESSION);
  assert.deepEqual(Object.keys(d.strategies), ['recorded', 'reinject']);
  assert.equal(d.settings.reinject.type, 'skill_listing');
  assert.equal(d.fidelity.requests, 3);
  const text = cli(['replay', 'session', path]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /cacheable ratio/);
  assert.match(text.stdout, /Fidelity of recorded/);
});

test('a strategy named twice (in one list or the flag repeated) runs once: its turns and fidelity are counted once', () => {
  const path = writeSession({ rounds: 2, attachment: { type: 'skill_listing', content: SKILLS } });
  const once = JSON.parse(cli(['replay', 'session', path, '--strategy', 'recorded,cold-replay', '--json']).stdout);
  for (const args of [['--strategy', 'recorded,recorded,cold-replay,recorded'], ['--strategy', 'recorded,cold-replay', '--strategy', 'recorded']]) {
    const r = cli(['replay', 'session', path, ...args, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout);
    assert.deepEqual(d.settings.strategies, ['recorded', 'cold-replay']);
    assert.equal(d.turns.length, once.turns.length);
    assert.equal(d.fidelity.requests, 3);
    assert.deepEqual(d.fidelity, once.fidelity);
  }
  const channel = join(REPO, 'sample-logs/channels/backend.jsonl');
  const w1 = JSON.parse(cli(['replay', 'channel', channel, '--strategy', 'window', '--json']).stdout);
  const w2 = JSON.parse(cli(['replay', 'channel', channel, '--strategy', 'window,window', '--json']).stdout);
  assert.deepEqual(w2.settings.strategies, ['window']);
  assert.equal(w2.turns.length, w1.turns.length);
});

test('weighted cost and USD say when requests of unpriced models are left out: +? for some, — for all (not $0.0000)', () => {
  const path = writeSession({ rounds: 2 });
  const lines = readFileSync(path, 'utf8').split('\n');
  const some = join(tempDir('cachelens-unpriced-'), `${SESSION}.jsonl`);
  let n = 0;
  writeFileSync(some, lines.map((l) => (l.includes('"assistant"') && ++n === 2 ? l.replace(/"model":"[^"]+"/, '"model":"claude-future-9"') : l)).join('\n'));
  const all = join(tempDir('cachelens-unpriced-'), `${SESSION}.jsonl`);
  writeFileSync(all, lines.map((l) => l.replace(/"model":"[^"]+"/, '"model":"claude-future-9"')).join('\n'));
  const cost = (text: string) => text.split('\n').filter((l) => /^(weighted cost|cost \(USD\))/.test(l));
  const partly = cli(['replay', 'session', some, '--strategy', 'recorded']);
  assert.equal(partly.code, 0, partly.stderr);
  for (const l of cost(partly.stdout)) assert.match(l, / \+\?$/, l);
  assert.match(partly.stdout, /\+\? 1 request of a model without a price is left out of weighted cost and USD/, 'one request in the singular ("1 requests … are" before)');
  const none = cli(['replay', 'session', all, '--strategy', 'recorded']);
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /\+\? 4 requests of models without a price are left out/);
  for (const l of cost(none.stdout)) assert.match(l, / —$/, l);
  assert.doesNotMatch(none.stdout, /\$0\.0000/);
  const priced = cli(['replay', 'session', path, '--strategy', 'recorded']);
  assert.doesNotMatch(priced.stdout, /\+\?/);
});

test('cold-replay flattens an image as its 1,600 tokens, as recorded counts it, not as an [image] label', () => {
  const lines = sessionLines({ rounds: 2 }) as { type: string; message?: { content: unknown } }[];
  const prompt = lines.find((l) => l.type === 'user')!;
  prompt.message!.content = [{ type: 'text', text: String(prompt.message!.content) }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }];
  const path = join(tempDir('cachelens-image-'), `${SESSION}.jsonl`);
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const r = cli(['replay', 'session', path, '--strategy', 'recorded,cold-replay', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const turns = JSON.parse(r.stdout).turns as { strategy: string; request: number; input_tokens: number }[];
  const input = (s: string) => turns.filter((t) => t.strategy === s).map((t) => t.input_tokens);
  const [recorded, cold] = [input('recorded'), input('cold-replay')];
  assert.equal(cold.length, 4);
  // the same conversation, give or take the User:/Assistant: markers; a lost image is 1,600 short
  for (let i = 0; i < cold.length; i++) assert.ok(Math.abs(cold[i]! - recorded[i]!) < 100, `request ${i + 1}: cold ${cold[i]}, recorded ${recorded[i]}`);
});

test('a PDF read by a tool counts 2,300 tokens per page in every later prompt, not the tokens of its base64', () => {
  const lines = sessionLines({ rounds: 2 }) as { type: string; message?: { content: unknown } }[];
  const pages = Array.from({ length: 3 }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj`).join('\n');
  const data = Buffer.concat([Buffer.from(`%PDF-1.4\n${pages}\n`), Buffer.alloc(30_000, 0xa7), Buffer.from('%%EOF\n')]).toString('base64');
  const write = (withPdf: boolean) => {
    const copy = structuredClone(lines);
    // round 2's tool result (the 4th user line): the Read of a PDF
    const result = copy.filter((l) => l.type === 'user')[3]!;
    const block = (result.message!.content as Record<string, unknown>[])[0]!;
    if (withPdf) block.content = [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } }];
    else block.content = [];
    const path = join(tempDir('cachelens-pdf-'), `${SESSION}.jsonl`);
    writeFileSync(path, copy.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = cli(['replay', 'session', path, '--strategy', 'recorded', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout).turns as { input_tokens: number }[]).map((t) => t.input_tokens);
  };
  const [without, withPdf] = [write(false), write(true)];
  assert.equal(withPdf.length, 4);
  assert.deepEqual(withPdf.slice(0, 3), without.slice(0, 3));
  assert.equal(withPdf[3]! - without[3]!, 3 * 2300);
});

test('--calibrate K: the fitted scale and K in --json (keys added, none renamed) and in the table; off by default', () => {
  const path = writeSession({ rounds: 3 });
  const off = JSON.parse(cli(['replay', 'session', path, '--strategy', 'recorded', '--json']).stdout);
  assert.equal(off.settings.calibrate, 0);
  assert.equal(off.fidelity.calibration, null);
  assert.equal(off.calibration.conversation, null);
  assert.equal(off.fidelity.from, 2);
  const r = cli(['replay', 'session', path, '--strategy', 'recorded,cold-replay', '--calibrate', '2', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(d), Object.keys(off));
  assert.deepEqual(Object.keys(d.fidelity).sort(), ['cache_read', 'calibration', 'from', 'prompt', 'requests', 'rows']);
  for (const k of Object.keys(off.calibration)) assert.ok(k in d.calibration, k);
  const c = d.fidelity.calibration;
  assert.deepEqual(Object.keys(c).sort(), ['fit_requests', 'held_out_from', 'k', 'reason', 'scale']);
  assert.equal(c.k, 2);
  assert.equal(typeof c.scale, 'number');
  assert.equal(c.reason, null);
  assert.deepEqual(d.calibration.conversation, c);
  assert.equal(d.settings.calibrate, 2);
  // 6 requests: 2–3 fit, 4–6 held out
  assert.equal(d.fidelity.from, 4);
  assert.equal(d.fidelity.requests, 3);
  assert.equal(d.fidelity.prompt.n, 3);
  const text = cli(['replay', 'session', path, '--calibrate', '2']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /conversation tokens × \d\.\d{3} in every strategy \(--calibrate 2: fitted on requests 2–3; fidelity on requests 4–6, held out\)/);
  assert.match(text.stdout, /Fidelity of recorded \(requests 4–6, held out/);
  const short = cli(['replay', 'session', path, '--calibrate', '5']);
  assert.match(short.stdout, /--calibrate 5: not calibrated \(a chain of 6 requests/);
  // without recorded no fidelity is measured: the calibration line does not promise one
  for (const k of ['2', '5']) {
    const without = cli(['replay', 'session', path, '--strategy', 'cold-replay', '--calibrate', k]);
    assert.equal(without.code, 0, without.stderr);
    assert.match(without.stdout, /--calibrate /);
    assert.doesNotMatch(without.stdout, /[Ff]idelity/, `--calibrate ${k}`);
  }
  for (const bad of ['-1', 'x', '1.5', '1000001', '1e23', '100000000000000000000000']) {
    const e = cli(['replay', 'session', path, `--calibrate=${bad}`]);
    assert.equal(e.code, 2, bad);
    assert.match(e.stderr, /--calibrate must be a whole number/);
  }
});

test('a session id prefix is found through the store; --chain picks a subagent', () => {
  const main = cli(['replay', 'session', '4d5611e5', MAROT, '--db', ':memory:', '--strategy', 'recorded', '--json']);
  assert.equal(main.code, 0, main.stderr);
  const d = JSON.parse(main.stdout);
  assert.equal(d.chain.chain_id, '4d5611e5-241a-462a-8d15-5122611a9569');
  assert.equal(d.chain.kind, 'main');
  assert.equal(d.chain.requests, 139);
  const sub = cli(['replay', 'session', '4d5611e5', MAROT, '--db', ':memory:', '--chain', 'a2898e3', '--strategy', 'recorded', '--json']);
  assert.equal(sub.code, 0, sub.stderr);
  const s = JSON.parse(sub.stdout);
  assert.equal(s.chain.chain_id, '4d5611e5-241a-462a-8d15-5122611a9569:a2898e3');
  assert.match(s.chain.file, /subagents\/agent-a2898e3\.jsonl$/);
});

test('a session or chain id as a narrow terminal\'s table cuts it (head…tail) names the one with those ends, in any case; a cut that fits none or several is said', () => {
  // anatomy's By session table cut to a narrow terminal shows `4d5611e5…11a9569`, which said "no session"
  const replayed = (id: string) => {
    const r = cli(['replay', 'session', id, MAROT, '--db', ':memory:', '--strategy', 'recorded', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).chain.chain_id;
  };
  assert.equal(replayed('4d5611e5…11a9569'), '4d5611e5-241a-462a-8d15-5122611a9569');
  assert.equal(replayed('4D5611E5…11A9569'), '4d5611e5-241a-462a-8d15-5122611a9569');
  assert.equal(replayed('4d5611e5…a2898e3'), '4d5611e5-241a-462a-8d15-5122611a9569:a2898e3');
  const none = cli(['replay', 'session', '4d5611e5…zz', MAROT, '--db', ':memory:']);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /^cachelens: no session 4d5611e5…zz in the logs read/);
  const many = cli(['replay', 'session', '…', MAROT, '--db', ':memory:']);
  assert.equal(many.code, 2);
  assert.match(many.stderr, /^cachelens: session … matches 3 sessions/);
});

test('a session id, prefix or --chain in capitals names the lower-case ids Claude Code writes; an id that matches as typed is never made ambiguous', () => {
  // `replay session 1F517242` said "no session" while 1f517242 worked
  const main = cli(['replay', 'session', '4D5611E5', MAROT, '--db', ':memory:', '--strategy', 'recorded', '--json']);
  assert.equal(main.code, 0, main.stderr);
  assert.equal(JSON.parse(main.stdout).chain.chain_id, '4d5611e5-241a-462a-8d15-5122611a9569');
  const sub = cli(['replay', 'session', '4D5611E5-241A-462A-8D15-5122611A9569', MAROT, '--db', ':memory:', '--chain', 'A2898', '--strategy', 'recorded', '--json']);
  assert.equal(sub.code, 0, sub.stderr);
  assert.equal(JSON.parse(sub.stdout).chain.chain_id, '4d5611e5-241a-462a-8d15-5122611a9569:a2898e3');
  // `top` in any case, as replay session and report --session take the word (TOP said 'no session TOP')
  const top = cli(['replay', 'session', 'TOP', MAROT, '--db', ':memory:', '--strategy', 'recorded', '--json']);
  assert.equal(top.code, 0, top.stderr);
  assert.equal(JSON.parse(top.stdout).chain.chain_id, JSON.parse(cli(['replay', 'session', 'top', MAROT, '--db', ':memory:', '--strategy', 'recorded', '--json']).stdout).chain.chain_id);
  // a transcript named by its path: --chain in any case too
  const file = join(MAROT, 'projects/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl');
  const byPath = cli(['replay', 'session', file, '--chain', 'A2898E3', '--strategy', 'recorded', '--json']);
  assert.equal(byPath.code, 0, byPath.stderr);
  assert.equal(JSON.parse(byPath.stdout).chain.chain_id, '4d5611e5-241a-462a-8d15-5122611a9569:a2898e3');
  // two ids that differ in case alone: each, typed as it is, is its own session; folded only when none matches
  const lower = '1f517242-0000-4000-8000-00000000000a';
  const upper = lower.toUpperCase();
  const lines = (s: string, t: string) => [userPrompt(s, t), assistant({ session: s, msg: `m-${s}`, t, u: { in: 10, w5: 2000, out: 5 } })];
  const dir = writeCorpus({ [`p/${lower}.jsonl`]: lines(lower, '2026-02-01T10:00:00.000Z'), [`p/${upper}.jsonl`]: lines(upper, '2026-02-02T10:00:00.000Z') });
  for (const id of [lower, upper, lower.slice(0, 12)]) {
    const r = cli(['replay', 'session', id, dir, '--db', ':memory:', '--strategy', 'recorded', '--json']);
    assert.equal(r.code, 0, `${id}: ${r.stderr}`);
    assert.equal(JSON.parse(r.stdout).chain.chain_id, id.length < 36 ? lower : id, id);
  }
  // matching neither as typed, folded it matches both: said so, not one of them picked
  const both = cli(['replay', 'session', '1f517242-0000-4000-8000-00000000000A', dir, '--db', ':memory:']);
  assert.equal(both.code, 2, both.stderr);
  assert.match(both.stderr, /matches 2 sessions/);
});

test('unknown or ambiguous sessions and bad strategies are one-line usage errors (exit 2)', () => {
  const none = cli(['replay', 'session', 'ffffffff', MAROT, '--db', ':memory:']);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /no session ffffffff/);
  const two = cli(['replay', 'session', '4', REAL_LOGS, '--db', ':memory:']);
  assert.equal(two.code, 2);
  assert.match(two.stderr, /matches 2 sessions/);
  const bad = cli(['replay', 'session', 'x', '--strategy', 'recorded,warm']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--strategy warm/);
});

test('a transcript with no requests is named in the error, cleaned, as the other replay errors name it', () => {
  // it said only "no requests in this transcript to replay"
  const dir = writeCorpus({ 'p/s\u001b[2J1.jsonl': [userPrompt('s1', '2026-02-11T03:00:00.000Z')] });
  const r = cli(['replay', 'session', join(dir, 'p', 's\u001b[2J1.jsonl')]);
  assert.deepEqual([r.code, r.stdout], [2, '']);
  assert.equal(r.stderr, `cachelens: ${join(dir, 'p', 's?[2J1.jsonl')}: no requests in this transcript to replay\n`);
});

test('--chain that is no chain of the transcript names the transcript, cleaned', () => {
  // it said only "--chain zzzz: no such chain in this transcript"
  const dir = writeCorpus({ 'p/s\u001b[2J1.jsonl': [userPrompt('s1', '2026-02-11T03:00:00.000Z')] });
  const r = cli(['replay', 'session', join(dir, 'p', 's\u001b[2J1.jsonl'), '--chain', 'zzzz']);
  assert.deepEqual([r.code, r.stdout], [2, '']);
  assert.equal(r.stderr, `cachelens: ${join(dir, 'p', 's?[2J1.jsonl')}: --chain zzzz: no such chain in this transcript\n`);
});

test('top replays the most expensive session, as `sessions` ranks them and `report --session top` takes it', () => {
  const ranked = cli(['sessions', MAROT, '--db', ':memory:', '--json']);
  assert.equal(ranked.code, 0, ranked.stderr);
  const first = JSON.parse(ranked.stdout).sessions[0].session_id as string;
  const top = cli(['replay', 'session', 'top', MAROT, '--db', ':memory:', '--strategy', 'recorded', '--json']);
  assert.equal(top.code, 0, top.stderr);
  assert.equal(JSON.parse(top.stdout).chain.session_id, first);
  const none = cli(['replay', 'session', 'top', tempDir('cachelens-none-'), '--db', ':memory:']);
  assert.equal(none.code, 2, none.stderr);
  assert.match(none.stderr, /no session to replay/);
});

test('--calibrate 1 is fitted on "request 2" and a single held-out request is "request 6", not "requests 2–2" / "requests 6–6"', () => {
  const path = writeSession({ rounds: 3 });
  const one = cli(['replay', 'session', path, '--strategy', 'recorded', '--calibrate', '1']);
  assert.equal(one.code, 0, one.stderr);
  assert.match(one.stdout, /\(--calibrate 1: fitted on request 2; fidelity on requests 3–6, held out\)/);
  const last = cli(['replay', 'session', path, '--strategy', 'recorded', '--calibrate', '4']);
  assert.equal(last.code, 0, last.stderr);
  assert.match(last.stdout, /\(--calibrate 4: fitted on requests 2–5; fidelity on request 6, held out\)/);
  assert.match(last.stdout, /Fidelity of recorded \(request 6, held out/);
});

test('--calibrate K on a chain of K+1 requests or fewer says what it has and needs, and the requests fidelity is on: no "requests 2–6" of a 4-request chain, no "2–2" or "2–1"', () => {
  const four = writeSession({ rounds: 2 });
  const lines = readFileSync(four, 'utf8').split('\n');
  const one = join(tempDir('cachelens-one-'), `${SESSION}.jsonl`);
  writeFileSync(one, lines.slice(0, lines.findIndex((l) => l.includes('"tool_result"'))).join('\n') + '\n');
  const two = writeSession({ rounds: 1 });
  const line = (path: string, k: number) => {
    const r = cli(['replay', 'session', path, '--strategy', 'recorded', '--calibrate', String(k)]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.split('\n').filter((l) => /calibrat|^Fidelity/.test(l));
  };
  assert.deepEqual(line(four, 5), [
    '--calibrate 5: not calibrated (a chain of 4 requests; fitting on 5 requests after the first and holding one out needs 7); fidelity on requests 2–4',
    'Fidelity of recorded (requests 2–4; relative error |predicted − observed| / observed):',
  ]);
  assert.deepEqual(line(two, 1), [
    '--calibrate 1: not calibrated (a chain of 2 requests; fitting on 1 request after the first and holding one out needs 3); fidelity on request 2',
    'Fidelity of recorded (request 2; relative error |predicted − observed| / observed):',
  ]);
  assert.deepEqual(line(one, 2), [
    '--calibrate 2: not calibrated (a chain of 1 request; fitting on 2 requests after the first and holding one out needs 4)',
    'Fidelity of recorded: none (a chain of one request: it calibrates the prefix, no request is left to compare)',
  ]);
});

test('a resumed session: the requests its transcript copies from the earlier one are left out (counted), their messages kept; requests as the store counts them', () => {
  // B resumes A after A's first 2 rounds: those 8 lines again, same ids, an hour later, in B's file; then 2 rounds of its own
  const B = '5e55104e-0000-4000-8000-00000000000b';
  const later = (l: object) => ({ ...l, sessionId: B, timestamp: new Date(Date.parse((l as { timestamp: string }).timestamp) + 3_600_000).toISOString() });
  const a = sessionLines({ rounds: 3 });
  const own = sessionLines({ rounds: 4, start: Date.parse('2026-03-01T11:05:00Z') }).slice(8).map((l) => JSON.parse(JSON.stringify({ ...l, sessionId: B }).replace(/"msg_(\d)/g, '"msg_B$1')));
  const root = writeCorpus({ [`projects/-work-demo/${SESSION}.jsonl`]: a, [`projects/-work-demo/${B}.jsonl`]: [...a.slice(0, 8).map(later), ...own] });
  const stored = JSON.parse(cli(['sessions', root, '--db', ':memory:', '--json']).stdout).sessions.find((s: { session_id: string }) => s.session_id === B);
  assert.equal(stored.requests, 4);
  const r = cli(['replay', 'session', B, root, '--db', ':memory:', '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.chain.requests, stored.requests, 'A\'s 4 requests are not B\'s too');
  assert.equal(d.chain.copied_requests, 4);
  assert.equal(d.chain.first_at, stored.first_request);
  assert.equal(d.strategies.recorded.output_tokens, stored.output);
  assert.equal(d.turns[0].round, 3, 'request 1 is in round 3, after the 2 copied rounds (as the store numbers it)');
  assert.ok(d.calibration.message_tokens > 200, `the copied rounds are in request 1's prompt: ${d.calibration.message_tokens} message tokens`);
  const text = cli(['replay', 'session', B, root, '--db', ':memory:', '--strategy', 'recorded']);
  assert.match(text.stdout, /· 4 requests ·/);
  assert.match(text.stdout, /4 copied requests left out: this transcript repeats them from another chain \(a resumed session\)/);
  const first = JSON.parse(cli(['replay', 'session', SESSION, root, '--db', ':memory:', '--strategy', 'recorded', '--json']).stdout);
  assert.equal(first.chain.requests, 6, 'A keeps its own requests');
  assert.equal(first.chain.copied_requests, 0);
  const out = join(tempDir(), 'report.html');
  const report = cli(['report', root, '--db', ':memory:', '--session', B, '--out', out]);
  assert.equal(report.code, 0, report.stderr);
  const page = readFileSync(out, 'utf8');
  assert.match(page, /main chain 5e55104e-0000-4000-8000-00000000000b \(4 requests; 4 copied requests of a resumed session left out\)/, 'report --session replays it alike');
  // and says it in replay session's words, with what becomes of them
  assert.match(page, /<p class="muted">4 copied requests left out: this transcript repeats them from another chain \(a resumed session\), where the store counts them; their messages stay in the context<\/p>/);
  // a resumed session that sent nothing of its own: its requests are all A's
  const C = '5e55104e-0000-4000-8000-00000000000c';
  const copiesOnly = writeCorpus({ [`projects/-work-demo/${SESSION}.jsonl`]: a, [`projects/-work-demo/${C}.jsonl`]: a.slice(0, 8).map(later).map((l) => ({ ...l, sessionId: C })) });
  const none = cli(['replay', 'session', C, copiesOnly, '--db', ':memory:', '--strategy', 'recorded']);
  assert.equal(none.code, 2, none.stderr);
  assert.equal(none.stderr.trim().split('\n').length, 1, none.stderr);
  assert.match(none.stderr, /chain 5e55104e-0000-4000-8000-00000000000c has no requests of its own to replay: its 4 requests are copies of another chain's \(a resumed session\)/);
});

test('a resumed session compacted before its own first request: the prefix is sized on the messages after the compaction, not on the copied ones it dropped', () => {
  // B repeats A's long first round, compacts, then sends its own first request: its prompt is the prefix, the summary and the prompt
  const A = '5e55104e-0000-4000-8000-00000000000d';
  const B = '5e55104e-0000-4000-8000-00000000000e';
  const round = (s: string, hour: number) => [
    userPrompt(s, `2026-03-01T${hour}:00:00.000Z`, `Explain the retry loop. ${'word '.repeat(3000)}`),
    assistant({ session: s, msg: 'msg_A1', t: `2026-03-01T${hour}:00:05.000Z`, u: { in: 3, w5: 13_000, out: 50 }, content: [{ type: 'text', text: 'It retries three times.' }] }),
  ];
  const root = writeCorpus({
    [`projects/-work-demo/${A}.jsonl`]: round(A, 10),
    [`projects/-work-demo/${B}.jsonl`]: [
      ...round(B, 11),
      { type: 'system', subtype: 'compact_boundary', sessionId: B, timestamp: '2026-03-01T11:01:00.000Z', content: 'Conversation compacted', uuid: 'cb-1' },
      { type: 'user', isCompactSummary: true, sessionId: B, timestamp: '2026-03-01T11:01:01.000Z', uuid: 'cs-1', message: { role: 'user', content: 'Summary: the retry loop was explained.' } },
      userPrompt(B, '2026-03-01T11:01:02.000Z', 'Now raise the budget.'),
      assistant({ session: B, msg: 'msg_B1', t: '2026-03-01T11:01:05.000Z', u: { in: 3, w5: 10_050, out: 20 }, content: [{ type: 'text', text: 'Done.' }] }),
    ],
  });
  const r = cli(['replay', 'session', B, root, '--db', ':memory:', '--strategy', 'recorded', '--json'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.deepEqual([d.chain.requests, d.chain.copied_requests, d.chain.compactions], [1, 1, 1]);
  assert.ok(d.calibration.message_tokens < 50, `only the summary and the prompt are request 1's messages: ${d.calibration.message_tokens} tokens (the copied round's 3,000 words were counted)`);
  assert.equal(d.turns[0].input_tokens, d.calibration.observed_prompt, 'request 1 is predicted as observed: the prefix was sized on it');
});

test('a resumed transcript named by its path: with the logs that hold it, its copied requests are left out as for its id; alone, every request is replayed', () => {
  const B = '5e55104e-0000-4000-8000-00000000000b';
  const later = (l: object) => ({ ...l, sessionId: B, timestamp: new Date(Date.parse((l as { timestamp: string }).timestamp) + 3_600_000).toISOString() });
  const a = sessionLines({ rounds: 3 });
  const own = sessionLines({ rounds: 4, start: Date.parse('2026-03-01T11:05:00Z') }).slice(8).map((l) => JSON.parse(JSON.stringify({ ...l, sessionId: B }).replace(/"msg_(\d)/g, '"msg_B$1')));
  const root = writeCorpus({ [`projects/-work-demo/${SESSION}.jsonl`]: a, [`projects/-work-demo/${B}.jsonl`]: [...a.slice(0, 8).map(later), ...own] });
  const file = join(root, `projects/-work-demo/${B}.jsonl`);
  const replay = (args: string[]) => {
    const r = cli(['replay', 'session', ...args, '--strategy', 'recorded', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const byId = replay([B, root, '--db', ':memory:']);
  const byPath = replay([file, root, '--db', ':memory:']);
  assert.deepEqual([byPath.chain.requests, byPath.chain.copied_requests], [4, 4], 'the store says which requests are A\'s');
  assert.deepEqual(byPath.strategies, byId.strategies, 'the path and the id replay the same requests');
  assert.deepEqual(byPath.turns, byId.turns);
  const text = cli(['replay', 'session', file, root, '--db', ':memory:', '--strategy', 'recorded']);
  assert.match(text.stdout, /4 copied requests left out: this transcript repeats them from another chain \(a resumed session\)/);
  const earlier = replay([join(root, `projects/-work-demo/${SESSION}.jsonl`), root, '--db', ':memory:']);
  assert.deepEqual([earlier.chain.requests, earlier.chain.copied_requests], [6, 0], 'A keeps its own');
  // alone there is no other transcript to tell a copy by: the file is replayed as it is
  const alone = replay([file]);
  assert.deepEqual([alone.chain.requests, alone.chain.copied_requests], [8, 0]);
  // logs that do not hold it: said, not replayed alone unsaid
  const elsewhere = writeCorpus({ [`projects/-work-demo/${SESSION}.jsonl`]: a });
  const missing = cli(['replay', 'session', file, elsewhere, '--db', ':memory:', '--strategy', 'recorded']);
  assert.equal(missing.code, 2, missing.stderr);
  assert.equal(missing.stderr.trim().split('\n').length, 1, missing.stderr);
  assert.match(missing.stderr, /: not among the logs read \(/);
  const out = join(tempDir(), 'report.html');
  const report = cli(['report', root, '--db', ':memory:', '--session', file, '--out', out]);
  assert.equal(report.code, 0, report.stderr);
  assert.match(readFileSync(out, 'utf8'), /main chain 5e55104e-0000-4000-8000-00000000000b \(4 requests; 4 copied requests of a resumed session left out\)/, 'report --session PATH replays it alike');
  // a resumed transcript that sent nothing of its own, named by its path with its logs: said as for its id
  const C = '5e55104e-0000-4000-8000-00000000000c';
  const copiesOnly = writeCorpus({ [`projects/-work-demo/${SESSION}.jsonl`]: a, [`projects/-work-demo/${C}.jsonl`]: a.slice(0, 8).map(later).map((l) => ({ ...l, sessionId: C })) });
  const none = cli(['replay', 'session', join(copiesOnly, `projects/-work-demo/${C}.jsonl`), copiesOnly, '--db', ':memory:', '--strategy', 'recorded']);
  assert.equal(none.code, 2, none.stderr);
  assert.equal(none.stderr.trim().split('\n').length, 1, none.stderr);
  assert.match(none.stderr, /chain 5e55104e-0000-4000-8000-00000000000c has no requests of its own to replay: its 4 requests are copies of another chain's \(a resumed session\)/);
});

test('a resumed transcript of a 600-character session id with no requests of its own is one line with the id cut in the middle (…), by its path and by its id', () => {
  const L = 'b'.repeat(300) + 'c'.repeat(300);
  const later = (l: object) => ({ ...l, sessionId: L, timestamp: new Date(Date.parse((l as { timestamp: string }).timestamp) + 3_600_000).toISOString() });
  const a = sessionLines({ rounds: 3 });
  const root = writeCorpus({ [`projects/-work-demo/${SESSION}.jsonl`]: a, ['projects/-work-demo/b.jsonl']: a.slice(0, 4).map(later) });
  for (const target of [join(root, 'projects/-work-demo/b.jsonl'), L]) {
    const r = cli(['replay', 'session', target, root, '--db', ':memory:', '--strategy', 'recorded']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /chain b+…c+ has no requests of its own to replay: its 2 requests are copies/);
    assert.ok(!r.stderr.includes(L), 'the id is not printed whole');
    assert.ok(r.stderr.length < 500, `${r.stderr.length} characters`);
  }
});
