/**
 * The report's session replay says what `replay session` says: every line the text prints around
 * its tables (the chain, the prefix, the +? note, the fidelity of prompt size and cache reads, the
 * requests observed at 0, the tokenizer caveat, the skipped lines), and the figures of its table the
 * report's main table has no column for — on hand-written transcripts replayed for real, then
 * rendered without a browser.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { replaySessionFile } from '../../src/replay/session-replay.js';
import { formatSessionReplay, sessionReplayRun } from '../../src/replay/session-report.js';
import { SegmentTokenizer } from '../../src/replay/tokenizer.js';
import type { ReplayRun } from '../../src/report/data.js';
import { fmtInt, fmtPct, fmtUsd } from '../../src/report/format.js';
import { renderReplay, shownTitle } from '../../src/report/section-replay.js';
import { fitChainId } from '../../src/replay/session-notes.js';
import { ChartSink } from '../../src/report/section.js';
import { writeCorpus } from '../helpers/corpus.js';
import { SESSION, SKILLS, sessionLines } from '../replay/session-fixture.js';

type Line = { type?: string; message?: { id?: string; model?: string; usage?: Record<string, unknown> } };

const ZERO = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } };

/** The section's text as a reader sees it: tags out, entities back, a line per paragraph, list item, caption or table row. */
function shown(body: string): string {
  return body
    .replace(/<br>|<\/(p|li|caption|tr)>/g, '\n')
    .replace(/<\/t[hd]>/g, ' ')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

async function replayBoth(lines: Array<object | string>) {
  const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
  const path = join(writeCorpus({ [`p/${SESSION}.jsonl`]: text }), `p/${SESSION}.jsonl`);
  const r = await replaySessionFile(path, { tokenizer: await SegmentTokenizer.load('cl100k_base') });
  const run = sessionReplayRun(r);
  const body = String(renderReplay({ runs: [run] }, new ChartSink()).body);
  return { r, cli: formatSessionReplay(r), run, body, page: shown(body) };
}

/**
 * The lines `replay session` prints that are not its tables: its heading's facts (after the chain id
 * and kind, which the section's heading gives), the prefix line, the notes, the fidelity heading, the
 * tokenizer caveat and the skipped lines; colons that end a heading left off.
 */
function cliNotes(cli: string): string[] {
  const [head, ...rest] = cli.split('\n');
  const notes = rest.filter((l) => l.trim() && !/─/.test(l) && !/\S {2,}\S/.test(l.trim()) && !/^(metric|\s+median)\s/.test(l));
  return [head!.replace(/^Session replay · chain \S+ \(\w+\) · /, ''), ...notes].map((l) => l.trim().replace(/:$/, ''));
}

function assertSaysTheCli(x: { cli: string; page: string }): void {
  for (const line of cliNotes(x.cli)) assert.ok(x.page.includes(line), `the report says "${line}"\n--- report:\n${x.page}`);
}

/** A transcript whose requests after the first logged usage all 0. */
function usageAllZero(): object[] {
  const lines = sessionLines({ rounds: 2 }) as Line[];
  for (const l of lines) if (l.message?.usage && l.message.id !== 'msg_1a') Object.assign(l.message.usage, ZERO);
  return lines;
}

test('the report\'s session replay says every line replay session prints around its tables: requests observed 0 (usage all 0 in the log), in its words', async () => {
  const x = await replayBoth(usageAllZero());
  assert.equal(x.r.fidelity!.prompt.observed_zero, 3);
  assertSaysTheCli(x);
  assert.match(x.page, /^prompt size observed 0 in 3 requests \(usage all 0 in the log\): no relative error, left out of the prompt row$/m);
  assert.match(x.page, /^cache reads observed 0 in 3 requests; the replay predicted 0 in \d+ of them$/m);
  assert.match(x.page, /^Fidelity of recorded \(requests 2–4; relative error \|predicted − observed\| \/ observed\)$/m);
  assert.match(x.page, /^Token counts are cl100k_base estimates of Claude's tokenizer: absolute numbers are approximate, ratios are the result\.$/m);
  assert.match(x.page, /^4 requests · 2 rounds · 0 compactions · claude-opus-4-6$/m);
  assert.match(x.page, /^prefix [\d,]+ tokens \(request 1: P 12,003 − [\d,]+ message tokens\) · cl100k_base · thinking keep$/m);
  // no error over no request: — as replay session prints it, never NaN
  assert.doesNotMatch(x.body, /NaN/);
  assert.match(x.page, /^prompt size P — — — 0$/m);
});

test('the report\'s session replay gives the fidelity of cache reads and the mean signed error, as replay session\'s fidelity table', async () => {
  const x = await replayBoth(sessionLines({ rounds: 3 }));
  assertSaysTheCli(x);
  const f = x.r.fidelity!;
  const row = (label: string, e: typeof f.prompt) => `${label} ${fmtPct(e.median_rel_error)} ${fmtPct(e.p90_rel_error)} ${fmtPct(e.mean_signed_rel_error)} ${e.n}`;
  assert.ok(x.page.split('\n').includes(row('prompt size P', f.prompt)), x.page);
  assert.ok(x.page.split('\n').includes(row('cache reads', f.cache_read)), x.page);
  assert.equal(x.run.fidelity!.cacheRead!.requests, f.cache_read.n);
  assert.equal(x.run.fidelity!.meanSignedRelError, f.prompt.mean_signed_rel_error);
});

test('the report\'s session replay gives processes, requests past the TTL, output tokens and USD per strategy, as replay session\'s table', async () => {
  const x = await replayBoth(sessionLines({ rounds: 2 }));
  for (const [name, s] of Object.entries(x.r.strategies)) {
    const line = `${name} ${s!.processes} ${s!.expired_requests} ${fmtInt(s!.output_tokens)} ${fmtUsd(s!.usd)}`;
    assert.ok(x.page.split('\n').includes(line), `${line}\n--- report:\n${x.page}`);
  }
  assert.match(x.page, /^strategy processes requests past the TTL \(expired\) output tokens cost \(USD\)$/m);
});

test('a model without a price: the report marks weight and USD +? and says why, as replay session does; all unpriced: —', async () => {
  const lines = sessionLines({ rounds: 2 }) as Line[];
  lines.find((l) => l.message?.id === 'msg_2a')!.message!.model = 'claude-mystery-9';
  const x = await replayBoth(lines);
  assertSaysTheCli(x);
  assert.match(x.page, /^\+\? 1 request of a model without a price is left out of weighted cost and USD \(— where no request has a price\)/m);
  const weight = fmtInt(x.r.strategies.recorded!.weight);
  assert.match(x.page, new RegExp(`^recorded .* ${weight} \\+\\?$`, 'm'));
  assert.match(x.page, new RegExp(`^recorded 1 0 [\\d,]+ ${fmtUsd(x.r.strategies.recorded!.usd).replace('$', '\\$')} \\+\\?$`, 'm'));

  for (const l of lines) if (l.message?.model) l.message.model = 'claude-mystery-9';
  const none = await replayBoth(lines);
  assert.match(none.page, /^\+\? 4 requests of models without a price are left out of weighted cost and USD/m);
  // no weight of $0.0000 for a chain no request of which has a price
  assert.match(none.page, /^recorded( [\d,.n/a]+){7} —$/m);
  assert.match(none.page, /^recorded 1 0 [\d,]+ —$/m);
});

test('a chain of one request: the report says it has no fidelity, as replay session does, not "fidelity over 0 requests: median relative error NaN%"', async () => {
  const lines = (sessionLines({ rounds: 1 }) as Line[]).filter((l) => l.message?.id !== 'msg_1b');
  const x = await replayBoth(lines);
  assertSaysTheCli(x);
  assert.match(x.page, /^Fidelity of recorded: none \(a chain of one request: it calibrates the prefix, no request is left to compare\)$/m);
  assert.doesNotMatch(x.body, /NaN|fidelity over 0 requests/);
});

test('the transcript\'s skipped lines and lines read with a field ignored or converted are listed in the report\'s session replay, by reason, as replay session lists them', async () => {
  const lines: Array<object | string> = sessionLines({ rounds: 2 });
  // a line that is not JSON, and one whose isSidechain is not a boolean (read, the field ignored)
  lines.splice(3, 0, '{"type": "assistant", ');
  lines.push({ ...(lines[1] as object), isSidechain: 'yes', uuid: 'u-odd' });
  const x = await replayBoth(lines);
  assert.ok(x.r.chain.skipped_lines >= 1 && x.r.chain.noted_lines >= 1, formatSessionReplay(x.r));
  assertSaysTheCli(x);
  assert.match(x.page, /^1 line skipped, 1 line read with a field ignored or converted:$/m);
  assert.match(x.page, /^skipped invalid_json: 1 \(line 4\)$/m);
  assert.match(x.page, /^read \(field ignored or converted\) invalid_field: 1 \(line \d+\)$/m);
});

test('transcript text in the report\'s session replay lines is escaped: a model and an attachment type with markup and a bidi control', async () => {
  const lines = sessionLines({ rounds: 2, attachment: { type: 'skills<b>x\u202e', content: SKILLS } }) as Line[];
  lines.find((l) => l.message?.id === 'msg_1b')!.message!.model = 'claude-<i>odd</i>\u0000';
  const x = await replayBoth(lines);
  assert.ok(x.r.settings.reinject, 'the odd attachment is the one reinjected');
  assert.doesNotMatch(x.body, /<b>x|<i>odd|\u202e|\u0000/);
  assert.match(x.body, /reinject skills&lt;b&gt;x\? \([\d,]+ tokens, line \d+\)/);
  assert.match(x.body, /claude-&lt;i&gt;odd&lt;\/i&gt;\?/);
});

test('copied and progress-only requests are said in replay session\'s words in the report, beside the title that counts them', async () => {
  const x = await replayBoth(sessionLines({ rounds: 2 }));
  const run: ReplayRun = { ...x.run, session: { ...x.run.session!, copiedRequests: 4, progressOnlyRequests: 1 } };
  const page = shown(String(renderReplay({ runs: [run] }, new ChartSink()).body));
  assert.match(page, /^4 copied requests left out: this transcript repeats them from another chain \(a resumed session\), where the store counts them; their messages stay in the context$/m);
  assert.match(page, /^1 request of this chain not replayed: only agent_progress copies in the parent's transcript hold it \(the store counts it\), this chain's transcript does not$/m);
});

test('with --calibrate, the fidelity table is the held-out one, headed as replay session heads it', async () => {
  const path = join(writeCorpus({ [`p/${SESSION}.jsonl`]: sessionLines({ rounds: 4 }) }), `p/${SESSION}.jsonl`);
  const r = await replaySessionFile(path, { tokenizer: await SegmentTokenizer.load('cl100k_base'), calibrate: 2 });
  assert.ok(r.calibration.conversation?.scale != null, 'the fixture calibrates');
  const page = shown(String(renderReplay({ runs: [sessionReplayRun(r)] }, new ChartSink()).body));
  assertSaysTheCli({ cli: formatSessionReplay(r).split('\n').filter((l) => !l.startsWith('conversation tokens')).join('\n'), page });
  assert.match(page, /^Fidelity of recorded \(requests 4–8, held out from the 2-request calibration; relative error \|predicted − observed\| \/ observed\)$/m);
});

test('a long chain id holding $&, $` or $\' is shown by its parts in the replay\'s title, never read as a replacement pattern', () => {
  for (const mark of ['$&', '$`', "$'", '$$']) {
    const sessionId = `0ca1${mark}b2c3-${'s'.repeat(120)}`;
    const chainId = `${sessionId}:side:f4ab2bf6-${'u'.repeat(120)}`;
    const run = { title: `sidechain chain ${chainId} (1 request)`, session: { chainId, sessionId } } as unknown as ReplayRun;
    const shown = fitChainId(chainId, sessionId);
    assert.notEqual(shown, chainId, 'cut by its parts');
    assert.equal(shownTitle(run), `sidechain chain ${shown} (1 request)`, mark);
  }
});
