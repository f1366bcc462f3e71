/**
 * `report --session ID|top --calibrate K`: the session replay in the report is `replay session
 * --calibrate K`'s, and its section shows the calibration line. Spawns dist/ (npm run build first).
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO, cli, tempDir } from '../helpers/corpus.js';

const SAMPLE = join(REPO, 'sample-logs');

test('report --session top --calibrate 3 replays as replay session --calibrate 3 does, and says so in the section', () => {
  const out = join(tempDir('cachelens-report-'), 'report.html');
  const r = cli(['report', SAMPLE, '--db', ':memory:', '--timezone', 'UTC', '--session', 'top', '--calibrate', '3', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  const replay = cli(['replay', 'session', 'top', SAMPLE, '--db', ':memory:', '--calibrate', '3', '--json']);
  assert.equal(replay.code, 0, replay.stderr);
  const want = JSON.parse(replay.stdout);
  assert.ok(want.calibration.conversation.scale > 0, 'the sample session is long enough to calibrate');

  const page = readFileSync(out, 'utf8');
  const data = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(page)![1]!);
  const run = data.replay.runs.find((x: { kind: string }) => x.kind === 'session');
  assert.deepEqual(run.calibration, { k: 3, scale: want.calibration.conversation.scale, heldOutFrom: want.calibration.conversation.held_out_from, reason: null });
  assert.deepEqual([run.fidelity.requests, run.fidelity.from, run.fidelity.medianRelError], [want.fidelity.prompt.n, want.fidelity.from, want.fidelity.prompt.median_rel_error]);
  assert.equal(run.strategies.find((s: { strategy: string }) => s.strategy === 'recorded').inputTokens, want.strategies.recorded.input_tokens);

  const section = /<section class="card" id="replay"[\s\S]*?<\/section>/.exec(page)![0];
  const line = /<p class="calibration" data-k="3" data-scale="[^"]+">([^<]*)<\/p>/.exec(section);
  assert.ok(line, 'the calibration line');
  assert.match(line[1]!, new RegExp(`× ${want.calibration.conversation.scale.toFixed(3).replace('.', '\\.')} in every strategy \\(--calibrate 3: fitted on requests 2–4\\) · held-out fidelity over ${want.fidelity.prompt.n} requests \\(from request ${want.fidelity.from}\\)`));
});

test('report without --calibrate replays uncalibrated, as replay session does by default: no calibration line', () => {
  const out = join(tempDir('cachelens-report-'), 'report.html');
  const r = cli(['report', SAMPLE, '--db', ':memory:', '--timezone', 'UTC', '--session', 'top', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  const page = readFileSync(out, 'utf8');
  assert.doesNotMatch(page, /class="calibration"/);
  // the fidelity of recorded, over every request after the first, said once: replay session's table (no one-line note beside it)
  assert.match(page, /Fidelity of recorded \(requests 2–\d+; relative error/);
  assert.doesNotMatch(page, /fidelity over \d+ requests/);
});

test('report --calibrate: a whole number, and only with a session to replay', () => {
  const out = join(tempDir('cachelens-report-'), 'report.html');
  const bad = cli(['report', SAMPLE, '--db', ':memory:', '--session', 'top', '--calibrate', 'x', '--out', out]);
  assert.deepEqual([bad.code, bad.stderr.trim()], [2, 'cachelens: --calibrate must be a whole number of requests from 0 (off) to 1,000,000, got x']);
  // an empty value said "…, got " and nothing after it
  const empty = cli(['report', SAMPLE, '--db', ':memory:', '--session', 'top', '--calibrate', '', '--out', out]);
  assert.deepEqual([empty.code, empty.stderr.trim()], [2, 'cachelens: --calibrate: expected a whole number of requests from 0 (off) to 1,000,000']);
  const alone = cli(['report', SAMPLE, '--db', ':memory:', '--calibrate', '3', '--out', out]);
  assert.equal(alone.code, 2);
  assert.match(alone.stderr, /--calibrate fits the session replays, and none was asked for \(add --session ID or --session top\)/);
  // 0 is off, as in replay session: allowed without a session
  assert.equal(cli(['report', SAMPLE, '--db', ':memory:', '--calibrate', '0', '--out', out]).code, 0);
});

test('report --channel a file that cannot be read, --session one the logs do not hold: one line, exit 2, no page (as replay says)', () => {
  // both wrote the page with the replay section as an error card and exited 0
  const dir = tempDir('cachelens-report-');
  const out = join(dir, 'report.html');
  const channel = cli(['report', SAMPLE, '--db', ':memory:', '--channel', join(dir, 'nope.jsonl'), '--out', out]);
  assert.deepEqual([channel.code, channel.stdout], [2, '']);
  assert.equal(channel.stderr.trim(), `cachelens: no such file or directory: ${join(dir, 'nope.jsonl')} (give a channel log file)`);
  assert.equal(channel.stderr.trim().split('\n').length, 1, channel.stderr);
  const folder = cli(['report', SAMPLE, '--db', ':memory:', '--channel', dir, '--out', out]);
  assert.deepEqual([folder.code, folder.stderr.trim().split('\n').length], [2, 1], folder.stderr);
  assert.equal(folder.stderr.trim(), `cachelens: ${dir}: is a directory (give a channel log file)`);
  const session = cli(['report', SAMPLE, '--db', ':memory:', '--session', 'nosuch', '--out', out]);
  assert.deepEqual([session.code, session.stdout], [2, '']);
  assert.match(session.stderr, /^cachelens: no session nosuch in the logs read/);
  assert.equal(session.stderr.trim().split('\n').length, 1, session.stderr);
  // an empty --session matched every session as a prefix: "session  matches N sessions"
  const empty = cli(['report', SAMPLE, '--db', ':memory:', '--session', ' ', '--out', out]);
  assert.deepEqual([empty.code, empty.stdout, empty.stderr], [2, '', 'cachelens: --session: expected a session id, a unique prefix of one, top, or a transcript path\n']);
  // a transcript that holds no request to replay (a channel log given as a session), refused as replay session refuses it
  // (the page was written with the replay section as an error card, and exit 0; review)
  const channelLog = join(SAMPLE, 'channels/backend.jsonl');
  const noRequests = cli(['report', SAMPLE, '--db', ':memory:', '--session', channelLog, '--out', out]);
  const replayed = cli(['replay', 'session', channelLog]);
  assert.deepEqual([noRequests.code, noRequests.stdout, noRequests.stderr], [2, '', `cachelens: ${channelLog}: no requests in this transcript to replay\n`]);
  assert.deepEqual([replayed.code, replayed.stderr], [noRequests.code, noRequests.stderr]);
  assert.ok(!existsSync(out), 'no report written');
  // but `--session top` when the filters choose no request is no mistake of a file given: the page, its replay section
  // a card, exit 0 (a weekly `report --since MONDAY --session top` failed on a quiet week; second review)
  const quiet = cli(['report', SAMPLE, '--db', ':memory:', '--since', '2030-01-01', '--session', 'top', '--out', out, '--json']);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.deepEqual(JSON.parse(quiet.stdout).sections_failed, ['replay']);
  assert.ok(existsSync(out));
});

test('report --session top --session top replays the session once', () => {
  const dir = tempDir('cachelens-report-');
  const out = join(dir, 'report.html');
  const r = cli(['report', SAMPLE, '--db', ':memory:', '--session', 'top', '--session', 'top', '--out', out, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const html = readFileSync(out, 'utf8');
  const data = JSON.parse(/<script[^>]*id="cachelens-data"[^>]*>([\s\S]*?)<\/script>/.exec(html)![1]!) as { replay?: { runs: { kind: string }[] } };
  assert.deepEqual(data.replay?.runs.map((run) => run.kind), ['session']);
});

test('report --channel LOG --channel LOG replays the channel once, however the path is spelt or linked', () => {
  // it was replayed twice, as a session named twice once was
  const dir = tempDir('cachelens-report-');
  const out = join(dir, 'report.html');
  const log = join(SAMPLE, 'channels/backend.jsonl');
  // and through a link to it (it was replayed twice: paths were compared as written)
  const link = join(dir, 'link.jsonl');
  symlinkSync(log, link);
  const r = cli(['report', SAMPLE, '--db', ':memory:', '--channel', log, '--channel', join(SAMPLE, 'channels/../channels/backend.jsonl'), '--channel', link, '--out', out, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const html = readFileSync(out, 'utf8');
  const data = JSON.parse(/<script[^>]*id="cachelens-data"[^>]*>([\s\S]*?)<\/script>/.exec(html)![1]!) as { replay?: { runs: { kind: string }[] } };
  assert.deepEqual(data.replay?.runs.map((run) => run.kind), ['channel']);
});

test('report --session takes a transcript path, as replay session does: replayed as it is, wherever it is, ~ under HOME; a missing path or a directory is one line, exit 2', () => {
  const home = tempDir('cachelens-report-home-');
  const out = join(home, 'report.html');
  const transcript = join(SAMPLE, 'projects/-home-USER-projects-spotter-lite/53c5d8e8-9760-4df2-8e4d-babeff4a975a.jsonl');
  // outside the logs read, and given as --session=~/… (the shell leaves that ~ as it is)
  copyFileSync(transcript, join(home, 'copy.jsonl'));
  const want = JSON.parse(cli(['replay', 'session', transcript, '--json']).stdout);
  const r = cli(['report', join(SAMPLE, 'projects/-home-USER-projects-plan-loop'), '--db', ':memory:', '--session=~/copy.jsonl', '--out', out], { HOME: home });
  assert.equal(r.code, 0, r.stderr);
  const data = JSON.parse(/<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(readFileSync(out, 'utf8'))![1]!);
  const run = data.replay.runs.find((x: { kind: string }) => x.kind === 'session');
  assert.match(run.title, new RegExp(`chain ${want.chain.chain_id} `));
  assert.equal(run.strategies.find((s: { strategy: string }) => s.strategy === 'recorded').inputTokens, want.strategies.recorded.input_tokens);
  rmSync(out);
  // as replay session says them, not "no session … in the logs read"
  mkdirSync(join(home, 'x.jsonl'));
  for (const [target, said] of [
    [join(home, 'missing.jsonl'), /^cachelens: no such file or directory: .*missing\.jsonl \(give a transcript path or a session id\)$/],
    [join(home, 'x.jsonl'), /^cachelens: .*x\.jsonl: is a directory \(give a transcript file, or a session id and the directory to read: report .*x\.jsonl --session ID\)$/],
  ] as const) {
    const bad = cli(['report', SAMPLE, '--db', ':memory:', '--session', target, '--out', out], { HOME: home });
    assert.deepEqual([bad.code, bad.stdout], [2, ''], bad.stderr);
    assert.match(bad.stderr.trim(), said);
    assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
  }
  assert.ok(!existsSync(out), 'no report written');
});

test('report --session FILE or --channel F that is not there is said before the logs are read, as replay session and replay channel say it: no note on logs before the line, no store made', () => {
  // it was said after the whole ingest: on a HOME without logs, 'no Claude Code logs found …' came first
  const home = tempDir('cachelens-report-early-');
  const db = join(home, 's.duckdb');
  const out = join(home, 'report.html');
  for (const [flag, said] of [
    ['--session', `cachelens: no such file or directory: ${join(home, 'missing.jsonl')} (give a transcript path or a session id)\n`],
    ['--channel', `cachelens: no such file or directory: ${join(home, 'missing.jsonl')} (give a channel log file)\n`],
  ] as const) {
    const r = cli(['report', '--db', db, flag, join(home, 'missing.jsonl'), '--out', out], { HOME: home });
    assert.deepEqual([r.code, r.stdout, r.stderr], [2, '', said], flag);
    assert.ok(!existsSync(db), `${flag}: no store made`);
    assert.ok(!existsSync(out), `${flag}: no report written`);
  }
});
