/**
 * `progress` lines and the session replay. A parent's `agent_progress` lines repeat its subagents'
 * messages: no part of the parent's context (the replay reads none of them), and too few of the
 * subagent's messages to rebuild it from. A subagent the store knows only from them is said so in
 * one line; requests that only they hold, beside a subagent transcript cut short, are counted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli, tempDir, writeCorpus } from '../helpers/corpus.js';
import { MAROT_DOV, MAROT_DOV_MAIN, realLogs } from '../store/helpers.js';
import { sessionReplayRun } from '../../src/replay/index.js';
import { renderReplay } from '../../src/report/section-replay.js';
import { ChartSink } from '../../src/report/section.js';

const SESSION = '4d5611e5-241a-462a-8d15-5122611a9569';
const AGENT = 'a2898e3';
const AGENT_FILE = `${MAROT_DOV}/${SESSION}/subagents/agent-${AGENT}.jsonl`;
const real = (rel: string) => readFileSync(path.join(realLogs, rel), 'utf8');

/** The store's requests of the subagent chain, over the logs under `root`. */
function storedRequests(root: string): number {
  const q = path.join(tempDir(), 'q.sql');
  writeFileSync(q, `SELECT requests FROM chains WHERE agent_id = '${AGENT}'`);
  const r = cli(['query', q, root, '--db', ':memory:', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).rows[0].requests;
}

test('a subagent known only from its parent\'s agent_progress copies is not replayed: one line says why, not "no such chain"', () => {
  // the main transcript without its subagents/ directory
  const root = writeCorpus({ [MAROT_DOV_MAIN]: real(MAROT_DOV_MAIN) });
  const n = storedRequests(root);
  assert.ok(n > 0, 'the store counts the subagent\'s requests from the copies');
  const r = cli(['replay', 'session', SESSION, root, '--db', ':memory:', '--chain', AGENT, '--strategy', 'recorded']);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`chain ${SESSION}:${AGENT} is known only from the agent_progress copies in \\S+${SESSION}\\.jsonl \\(its ${n} requests\\): its own transcript \\(subagents/agent-${AGENT}\\.jsonl\\) is not among the logs read`));
  const report = cli(['report', root, '--db', ':memory:', '--session', `${SESSION}:${AGENT}`, '--out', path.join(tempDir(), 'r.html')]);
  assert.equal(report.code, 2, report.stderr);
  assert.match(report.stderr, /is known only from the agent_progress copies/, 'report --session says the same');
  // its transcript is there but stops before its first response: it holds none of them
  const started = writeCorpus({ [MAROT_DOV_MAIN]: real(MAROT_DOV_MAIN), [AGENT_FILE]: real(AGENT_FILE).split('\n')[0] + '\n' });
  const none = cli(['replay', 'session', SESSION, started, '--db', ':memory:', '--chain', AGENT, '--strategy', 'recorded']);
  assert.equal(none.code, 2, none.stderr);
  assert.equal(none.stderr.trim().split('\n').length, 1, none.stderr);
  assert.match(none.stderr, new RegExp(`is known only from the agent_progress copies in \\S+${SESSION}\\.jsonl \\(its ${n} requests\\): its transcript \\S+agent-${AGENT}\\.jsonl holds none of them`));
});

test('a subagent transcript cut short: the requests only the parent\'s agent_progress copies hold are counted, not replayed', () => {
  const lines = real(AGENT_FILE).split('\n');
  // the subagent file up to the line after its 5th distinct response
  const ids: string[] = [];
  let cut = 0;
  for (const [i, l] of lines.entries()) {
    if (!l) continue;
    const id = JSON.parse(l).message?.id;
    if (id && !ids.includes(id)) ids.push(id);
    if (ids.length === 6) break;
    cut = i + 1;
  }
  const root = writeCorpus({ [MAROT_DOV_MAIN]: real(MAROT_DOV_MAIN), [AGENT_FILE]: lines.slice(0, cut).join('\n') + '\n' });
  const n = storedRequests(root);
  const r = cli(['replay', 'session', SESSION, root, '--db', ':memory:', '--chain', AGENT, '--strategy', 'recorded', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.chain.requests, 5);
  assert.ok(d.chain.progress_only_requests > 0);
  assert.equal(d.chain.requests + d.chain.progress_only_requests, n, 'what is replayed and what is counted apart are the store\'s requests');
  const text = cli(['replay', 'session', SESSION, root, '--db', ':memory:', '--chain', AGENT, '--strategy', 'recorded']);
  assert.equal(text.code, 0, text.stderr);
  assert.ok(
    text.stdout.includes(`${d.chain.progress_only_requests} requests of this chain not replayed: only agent_progress copies in the parent's transcript hold them (the store counts them), this chain's transcript does not`),
    text.stdout,
  );
  // the report's title says the same in words that read: it was '…; 2 requests only agent_progress copies hold not replayed)'
  const title = sessionReplayRun(d).title;
  assert.ok(title.endsWith(`; ${d.chain.progress_only_requests} requests not replayed, held only by the parent's agent_progress copies)`), title);
  // and its replay section says it in replay session's words (the apostrophes escaped)
  const body = String(renderReplay({ runs: [sessionReplayRun(d)] }, new ChartSink()).body);
  assert.ok(
    body.includes(`${d.chain.progress_only_requests} requests of this chain not replayed: only agent_progress copies in the parent&#39;s transcript hold them (the store counts them), this chain&#39;s transcript does not`),
    body,
  );
  // report --session under filters that choose every request it replays says no whole-chain note: it said
  // '11 of its 5 requests are among those the filters choose', counting the ones only the copies hold
  const out = path.join(tempDir(), 'r.html');
  const report = cli(['report', root, '--db', ':memory:', '--session', `${SESSION}:${AGENT}`, '--since', '2000-01-01', '--out', out]);
  assert.equal(report.code, 0, report.stderr);
  const html = readFileSync(out, 'utf8');
  assert.ok(html.includes(`${d.chain.progress_only_requests} requests of this chain not replayed`), 'the report replays the cut chain');
  assert.doesNotMatch(html, /the whole chain is replayed/);
  // filters that choose none of it: counted on the replay's basis, of its 5 requests
  const none = cli(['report', root, '--db', ':memory:', '--session', `${SESSION}:${AGENT}`, '--project', 'nomatch', '--out', out]);
  assert.equal(none.code, 0, none.stderr);
  assert.match(readFileSync(out, 'utf8').replace(/<[^>]*>/g, ''), /the whole chain is replayed \(a request's context is every request before it\): 0 of its 5 requests are among those the filters choose \(--project nomatch\)/);
  // the whole transcript: none left out
  const whole = cli(['replay', 'session', SESSION, path.join(realLogs, MAROT_DOV), '--db', ':memory:', '--chain', AGENT, '--strategy', 'recorded', '--json']);
  assert.equal(whole.code, 0, whole.stderr);
  assert.equal(JSON.parse(whole.stdout).chain.progress_only_requests, 0);
});

test('a main chain whose transcript has agent_progress lines replays the same context as without them', () => {
  const text = real(MAROT_DOV_MAIN);
  const all = text.split('\n').filter(Boolean);
  const without = all.filter((l) => JSON.parse(l).type !== 'progress');
  assert.ok(all.length - without.length >= 60, 'the transcript has its progress lines');
  const dir = tempDir();
  const a = path.join(dir, 'with', `${SESSION}.jsonl`);
  const b = path.join(dir, 'without', `${SESSION}.jsonl`);
  writeCorpus({ [`with/${SESSION}.jsonl`]: text, [`without/${SESSION}.jsonl`]: without.join('\n') + '\n' }, dir);
  const replay = (file: string) => {
    const r = cli(['replay', 'session', file, '--strategy', 'recorded', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const x = replay(a);
  const y = replay(b);
  assert.equal(x.chain.requests, 139);
  // line numbers differ (the progress lines are gone); everything the context is made of does not
  const turns = (d: any) => d.turns.map(({ line: _line, ...t }: { line: number }) => t);
  assert.deepEqual(turns(x), turns(y));
  assert.deepEqual(x.calibration, y.calibration);
  assert.deepEqual(x.strategies, y.strategies);
  assert.deepEqual({ ...x.chain, file: null, skipped: null }, { ...y.chain, file: null, skipped: null });
});
