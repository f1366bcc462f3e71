/**
 * Reconciliation with the reference tool (SPEC §2.3): token totals and USD of cachelens and of
 * `ccusage daily --offline --json` (v20.0.24, a devDependency) on each folder of ../shared/real-logs,
 * and per 5-hour block (`blocks`) and per session (`sessions` / `ccusage session`) on those folders
 * and on sample-logs/, with the differences that follow from SPEC recomputed (`explainedBlocks`,
 * `explainedSessions`). Run `npx tsx scripts/reconcile.ts` to rewrite docs/reconciliation.md; the
 * test suite calls the same functions on the same folders and asserts equality.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { loadPriceTable } from '../src/pricing/pricing.js';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REAL_LOGS = resolve(REPO, '../shared/real-logs');

export interface TokenTotals {
  input: number;
  output: number;
  cache_creation: number;
  cache_read: number;
  usd: number;
}

export interface Reconciled {
  folder: string;
  ccusage: TokenTotals;
  cachelens: TokenTotals & { requests: number; duplicates_removed: number };
}

export function realLogFolders(): string[] {
  return readdirSync(REAL_LOGS)
    .filter((d) => statSync(join(REAL_LOGS, d)).isDirectory())
    .sort();
}

export function ccusageTotals(folder: string): TokenTotals {
  const r = spawnSync(join(REPO, 'node_modules/.bin/ccusage'), ['daily', '--offline', '--json'], {
    encoding: 'utf8',
    env: { ...process.env, CLAUDE_CONFIG_DIR: folder, NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`ccusage failed on ${folder}: ${r.stderr}`);
  const days = (JSON.parse(r.stdout) as { daily: Record<string, number>[] }).daily;
  const sum = (k: string) => days.reduce((s, d) => s + Number(d[k] ?? 0), 0);
  return { input: sum('inputTokens'), output: sum('outputTokens'), cache_creation: sum('cacheCreationTokens'), cache_read: sum('cacheReadTokens'), usd: sum('totalCost') };
}

export function cachelensTotals(folder: string): Reconciled['cachelens'] {
  const r = spawnSync(process.execPath, [join(REPO, 'dist/cli.js'), 'summary', folder, '--db', ':memory:', '--json', '--timezone', 'UTC'], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`cachelens failed on ${folder}: ${r.stderr}`);
  const s = JSON.parse(r.stdout);
  const t = s.totals;
  return {
    input: t.input,
    output: t.output,
    cache_creation: t.cache_write_5m + t.cache_write_1h,
    cache_read: t.cache_read,
    usd: t.usd,
    requests: t.requests,
    duplicates_removed: s.quality.duplicates_removed,
  };
}

export function reconcile(folder: string): Reconciled {
  const path = join(REAL_LOGS, folder);
  return { folder, ccusage: ccusageTotals(path), cachelens: cachelensTotals(path) };
}

/** Folders the per-block and per-session reconciliation runs on: every real-logs folder, then sample-logs/. */
export function usageFolders(): string[] {
  return [...realLogFolders().map((f) => join(REAL_LOGS, f)), join(REPO, 'sample-logs')];
}

/** Token totals of a block or a session, cache creation = 5m + 1h, as ccusage counts them. */
export interface Tokens {
  input: number;
  output: number;
  cache_creation: number;
  cache_read: number;
  usd: number;
}

export interface BlockRow extends Tokens {
  start: string;
  end: string;
}

export interface SessionRow extends Tokens {
  session: string;
}

function runJson(cmd: string, args: string[], env: Record<string, string> = {}): any {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function ccusage(command: 'blocks' | 'session', folder: string): any {
  return runJson(join(REPO, 'node_modules/.bin/ccusage'), [command, '--offline', '--json'], { CLAUDE_CONFIG_DIR: folder });
}

function cachelens(args: string[]): any {
  return runJson(process.execPath, [join(REPO, 'dist/cli.js'), ...args, '--db', ':memory:', '--json', '--timezone', 'UTC']);
}

/** ccusage's blocks: its `isGap` pseudo-blocks (the idle time between two blocks, no usage) apart. */
/** ccusage's blocks; `entries` counts its usage lines kept, `<synthetic>` ones included. */
export function ccusageBlocks(folder: string): { blocks: (BlockRow & { entries: number })[]; gaps: (BlockRow & { entries: number })[] } {
  const all = (ccusage('blocks', folder).blocks as any[]).map((b) => ({
    start: new Date(b.startTime).toISOString(),
    end: new Date(b.endTime).toISOString(),
    input: b.tokenCounts.inputTokens,
    output: b.tokenCounts.outputTokens,
    cache_creation: b.tokenCounts.cacheCreationInputTokens,
    cache_read: b.tokenCounts.cacheReadInputTokens,
    usd: b.costUSD,
    entries: b.entries,
    gap: b.isGap === true,
  }));
  const strip = ({ gap: _g, ...row }: (typeof all)[number]) => row;
  return { blocks: all.filter((b) => !b.gap).map(strip), gaps: all.filter((b) => b.gap).map(strip) };
}

/**
 * cachelens's blocks with their token fields as `blocks --json` gives them (cache creation = its
 * `cache_write_5m` + `cache_write_1h`), and `from_requests`: the same fields summed from the block's
 * requests (scripts/reconcile-requests.sql), which they must equal.
 */
export function cachelensBlocks(folder: string, rows = requestRows(folder)): (BlockRow & { tokens: number; requests: number; from_requests: Omit<Tokens, 'usd'> })[] {
  return (cachelens(['blocks', folder]).blocks as any[]).map((b) => {
    const inside = rows.filter((r) => r.t >= Date.parse(b.start) && r.t < Date.parse(b.end));
    return {
      start: b.start, end: b.end, tokens: b.tokens, requests: b.requests, usd: b.usd,
      input: b.input, output: b.output, cache_creation: b.cache_write_5m + b.cache_write_1h, cache_read: b.cache_read,
      from_requests: sumTokens(inside),
    };
  });
}

export function ccusageSessions(folder: string): SessionRow[] {
  return (ccusage('session', folder).session as any[]).map((s) => ({
    session: s.period,
    input: s.inputTokens,
    output: s.outputTokens,
    cache_creation: s.cacheCreationTokens,
    cache_read: s.cacheReadTokens,
    usd: s.totalCost,
  }));
}

export function cachelensSessions(paths: string[]): SessionRow[] {
  return (cachelens(['sessions', ...paths]).sessions as any[]).map((s) => ({
    session: s.session_id,
    input: s.input,
    output: s.output,
    cache_creation: s.cache_write_5m + s.cache_write_1h,
    cache_read: s.cache_read,
    usd: s.usd,
  }));
}

/** One request as the store holds it (after de-dup), with its USD under SPEC §2.2. */
export interface RequestRow {
  session_id: string;
  t: number;
  model: string;
  input: number;
  output: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
  usd: number | null;
}

const REQUESTS_SQL = join(REPO, 'scripts/reconcile-requests.sql');

export function requestRows(...paths: string[]): RequestRow[] {
  return cachelens(['query', REQUESTS_SQL, ...paths]).rows as RequestRow[];
}

function sumTokens(rows: RequestRow[]): Omit<Tokens, 'usd'> {
  const t = { input: 0, output: 0, cache_creation: 0, cache_read: 0 };
  for (const r of rows) {
    t.input += r.input;
    t.output += r.output;
    t.cache_creation += r.cache_write_5m + r.cache_write_1h;
    t.cache_read += r.cache_read;
  }
  return t;
}

const prices = loadPriceTable();

/**
 * USD cachelens bills beyond ccusage on one request, from their long-context rules: SPEC §2.2 bills the
 * whole request at the long-context rates when its prompt P exceeds the threshold (200k); ccusage bills,
 * per token field, only the tokens of that field above the threshold at those rates.
 *
 * Example: claude-sonnet-4-5, in 10, w5m 2,000, read 250,000, out 1,000 (P = 252,010 > 200k). cachelens:
 * (10×6 + 2,000×7.5 + 250,000×0.6 + 1,000×22.5)/1e6 = $0.18756; ccusage: only read exceeds 200k, so
 * (10×3 + 2,000×3.75 + 200,000×0.3 + 50,000×0.6 + 1,000×15)/1e6 = $0.11253; returns $0.07503.
 */
export function longContextExcess(r: RequestRow): number {
  const price = prices.lookup(r.model);
  const lc = price?.long_context;
  if (!price || !lc || r.usd === null) return 0;
  const tier = (n: number, base: number, long: number) => (Math.min(n, lc.above) * base + Math.max(0, n - lc.above) * long) / 1e6;
  const ccusageUsd = tier(r.input, price.input, lc.input) + tier(r.output, price.output, lc.output) +
    tier(r.cache_write_5m, price.write_5m, lc.write_5m) + tier(r.cache_write_1h, price.write_1h, lc.write_1h) +
    tier(r.cache_read, price.read, lc.read);
  return r.usd - ccusageUsd;
}

export interface ExplainedBlocks {
  folder: string;
  ccusage: BlockRow[];
  /** cachelens's blocks, their token fields as `blocks --json` gives them, their USD less `long_context_excess` */
  cachelens: BlockRow[];
  /** per cachelens block: `blocks --json`'s `tokens`, and its token fields summed from its requests */
  tokens: number[];
  from_requests: Omit<Tokens, 'usd'>[];
  raw_usd: number[];
  long_context_excess: number[];
  gaps: (BlockRow & { entries: number })[];
}

/** Per block: ccusage's figures next to cachelens's, cachelens's USD recomputed under ccusage's long-context rule. */
export function explainedBlocks(folder: string): ExplainedBlocks {
  const { blocks, gaps } = ccusageBlocks(folder);
  const rows = requestRows(folder);
  const ours = cachelensBlocks(folder, rows);
  const excess = ours.map((b) => rows.filter((r) => r.t >= Date.parse(b.start) && r.t < Date.parse(b.end)).reduce((s, r) => s + longContextExcess(r), 0));
  return {
    folder,
    ccusage: blocks,
    cachelens: ours.map(({ tokens: _t, requests: _r, from_requests: _f, ...b }, i) => ({ ...b, usd: b.usd - excess[i]! })),
    tokens: ours.map((b) => b.tokens),
    from_requests: ours.map((b) => b.from_requests),
    raw_usd: ours.map((b) => b.usd),
    long_context_excess: excess,
    gaps,
  };
}

export interface ExplainedSessions {
  folder: string;
  ccusage: SessionRow[];
  /** cachelens's sessions, regrouped the way ccusage groups them and their USD less the long-context excess */
  cachelens: SessionRow[];
  /** sessions ccusage names after a `subagents/workflows/<run>/` directory, and the cachelens session holding them */
  workflow_runs: { run: string; session: string; tokens: Omit<Tokens, 'usd'>; usd: number }[];
  long_context_excess: Record<string, number>;
  /** cachelens's sessions as `sessions --json` prints them */
  raw: SessionRow[];
}

/**
 * Per session. ccusage keys a transcript by its path: a workflow run's `subagents/workflows/<run>/agent-*.jsonl`
 * becomes a session named `<run>`; cachelens keys it by the `sessionId` its lines carry, the parent's (SPEC §1.1).
 * So each ccusage session that is a directory `<run>` under a `workflows/` directory is recomputed from
 * cachelens's reading of that directory alone, and taken out of the cachelens session that holds it.
 */
export function explainedSessions(folder: string): ExplainedSessions {
  const theirs = ccusageSessions(folder);
  const raw = cachelensSessions([folder]);
  const ours = new Map(raw.map((s) => [s.session, { ...s }]));
  const rows = requestRows(folder);
  const excess: Record<string, number> = {};
  for (const r of rows) excess[r.session_id] = (excess[r.session_id] ?? 0) + longContextExcess(r);
  const runs: ExplainedSessions['workflow_runs'] = [];
  for (const s of theirs) {
    if (ours.has(s.session)) continue;
    for (const dir of workflowRunDirs(folder, s.session)) {
      const runRows = requestRows(dir);
      const [held] = cachelensSessions([dir]);
      if (!held) continue;
      const parent = ours.get(held.session);
      const runExcess = runRows.reduce((sum, r) => sum + longContextExcess(r), 0);
      runs.push({ run: s.session, session: held.session, tokens: sumTokens(runRows), usd: held.usd });
      if (parent) {
        for (const k of ['input', 'output', 'cache_creation', 'cache_read', 'usd'] as const) parent[k] -= held[k];
        excess[held.session] = (excess[held.session] ?? 0) - runExcess;
      }
      const prev = ours.get(s.session);
      ours.set(s.session, prev ? { ...prev, input: prev.input + held.input, output: prev.output + held.output, cache_creation: prev.cache_creation + held.cache_creation, cache_read: prev.cache_read + held.cache_read, usd: prev.usd + held.usd } : { ...held, session: s.session });
      excess[s.session] = (excess[s.session] ?? 0) + runExcess;
    }
  }
  const adjusted = [...ours.values()].map((s) => ({ ...s, usd: s.usd - (excess[s.session] ?? 0) }));
  return { folder, ccusage: theirs, cachelens: adjusted, workflow_runs: runs, long_context_excess: excess, raw };
}

/** Every directory `<run>` inside a `workflows` directory, at any depth of a folder. */
function workflowRunDirs(folder: string, run: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const p = join(dir, e.name);
      if (e.name === run && dir.endsWith('/workflows')) out.push(p);
      else walk(p);
    }
  };
  walk(folder);
  return out;
}

function markdown(rows: Reconciled[]): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const lines = [
    '# Reconciliation with ccusage',
    '',
    'Token totals and USD of `cachelens summary --json` next to `ccusage daily --offline --json` (v20.0.24) on each',
    'folder of `../shared/real-logs` (`CLAUDE_CONFIG_DIR` pointed at the folder). Produced by `npx tsx scripts/reconcile.ts`',
    '(after `npm run build`); the test `test/ingest/reconcile.test.ts` asserts the same equalities on every run.',
    '',
    '| folder | tool | requests | input | output | cache creation (5m+1h) | cache read | USD |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.folder} | ccusage | | ${n(r.ccusage.input)} | ${n(r.ccusage.output)} | ${n(r.ccusage.cache_creation)} | ${n(r.ccusage.cache_read)} | $${r.ccusage.usd.toFixed(4)} |`);
    lines.push(`| | cachelens | ${n(r.cachelens.requests)} | ${n(r.cachelens.input)} | ${n(r.cachelens.output)} | ${n(r.cachelens.cache_creation)} | ${n(r.cachelens.cache_read)} | $${r.cachelens.usd.toFixed(4)} |`);
  }
  const diffs = rows.filter((r) => (['input', 'output', 'cache_creation', 'cache_read'] as const).some((k) => r.ccusage[k] !== r.cachelens[k]));
  lines.push('');
  lines.push(diffs.length === 0
    ? 'Every token total is equal on every folder, and USD agrees to within rounding (well inside the 0.5% allowed).'
    : `Folders whose token totals differ: ${diffs.map((d) => d.folder).join(', ')} — see the notes below.`);
  lines.push('');
  lines.push('Notes: both tools count a response once per `(message.id, requestId)` and take its final usage; cachelens also');
  lines.push('reads `agent_progress` copies in parent transcripts, which on these logs only repeat requests that stand in');
  lines.push('subagent files, so they change nothing here. `duplicates removed` (usage lines beyond one per request) per folder: ');
  lines.push(rows.map((r) => `${r.folder} ${n(r.cachelens.duplicates_removed)}`).join(', ') + '.');
  return lines.join('\n') + '\n';
}

function usageMarkdown(blocks: ExplainedBlocks[], sessions: ExplainedSessions[]): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const usd = (x: number) => `$${x.toFixed(4)}`;
  const tok = (t: Omit<Tokens, 'usd'>) => `${n(t.input)} | ${n(t.output)} | ${n(t.cache_creation)} | ${n(t.cache_read)}`;
  const name = (folder: string) => folder.split('/').pop()!;
  const lines = [
    '',
    '## 5-hour blocks and sessions',
    '',
    '`cachelens blocks --json` next to `ccusage blocks --offline --json`, and `cachelens sessions --json` next to',
    '`ccusage session --offline --json`, on each real-logs folder and on `sample-logs/` (`--timezone UTC`). Same script;',
    'the test `test/ingest/reconcile-usage.test.ts` recomputes every difference below from the logs and asserts equality.',
    'A block\'s token fields on the cachelens side are `blocks --json`\'s own (`input`, `output`, `cache_write_5m` +',
    '`cache_write_1h` as cache creation, `cache_read`), compared with ccusage\'s `tokenCounts`; they also equal the same',
    'fields summed from the block\'s requests (`scripts/reconcile-requests.sql`), and their total (`tokens`) equals',
    'ccusage\'s `totalTokens` on every block.',
    '',
    '### Blocks',
    '',
    '| folder | start | end | input | output | cache creation | cache read | ccusage USD | cachelens USD | long-context excess |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const b of blocks) {
    b.ccusage.forEach((c, i) => {
      lines.push(`| ${name(b.folder)} | ${c.start.slice(0, 16)} | ${c.end.slice(0, 16)} | ${tok(c)} | ${usd(c.usd)} | ${usd(b.raw_usd[i]!)} | ${b.long_context_excess[i]! > 5e-5 ? usd(b.long_context_excess[i]!) : '—'} |`);
    });
  }
  lines.push('');
  lines.push('Starts, ends and token fields are equal on every block of every folder (the table shows ccusage\'s tokens; cachelens\'s');
  lines.push('are the same). The differences:');
  lines.push('');
  const gaps = blocks.flatMap((b) => b.gaps.map((g) => `${name(b.folder)} ${g.start.slice(0, 19)}Z → ${g.end.slice(0, 19)}Z`));
  lines.push(`- **Gap blocks.** ccusage adds an \`isGap\` pseudo-block (no entries, no tokens, $0) for the idle time between two`);
  lines.push('  blocks, from the last request + 5 h to the next request; cachelens lists only blocks with requests (SPEC §7).');
  lines.push(`  Here: ${gaps.join('; ')}. The test checks each holds no usage and that no cachelens block overlaps it.`);
  lines.push('- **Long context.** SPEC §2.2 bills a Sonnet 4 / 4.5 request whose prompt P exceeds 200,000 tokens wholly at the');
  lines.push('  long-context rates; ccusage bills, per token field, only the tokens of that field above 200,000 at those rates');
  lines.push('  (so a 250k-token prompt of 249k cache reads and 1k input pays the higher rate on 49k reads only). The column');
  lines.push('  "long-context excess" is cachelens\'s USD minus ccusage\'s rule recomputed on the same requests (`longContextExcess`);');
  const lcFolders = blocks.filter((b) => b.long_context_excess.some((x) => x > 5e-5)).map((b) => name(b.folder));
  lines.push(`  cachelens USD − excess = ccusage USD to the nano-dollar on every block. Folders with such requests: ${lcFolders.join(', ') || 'none'}.`);
  lines.push('- **A request\'s time.** cachelens times a request by the first line of its identity (SPEC §1.3); ccusage by the');
  lines.push('  copy whose usage it keeps, the last streaming snapshot, seconds later (marot-spotter: `msg_01AjAtmphJjr4oSLfTyzk8LA`');
  lines.push('  at 14:12:01.177 vs 14:12:02.971, which is where ccusage\'s gap above ends). A block start floors that time to the');
  lines.push('  hour, so the two would disagree only for a request whose copies straddle a full hour; none on these logs does.');
  lines.push('- **Exactly 5 h after the start.** cachelens\'s block is the half-open window [start, start + 5 h): a request at');
  lines.push('  start + 5 h exactly opens the next block. ccusage keeps it in the block it ends (a new block only when more than');
  lines.push('  5 h have passed). Requests at 09:10, 14:00:00.000 and 14:10 give ccusage 09:00–14:00 with 2 entries and');
  lines.push('  14:00–19:00 with 1, cachelens 1 and 2. No request of these logs falls exactly on an end; SPEC\'s "lasts 5 hours"');
  lines.push('  and the `end` both tools print say the request at 14:00:00.000 is outside the first block, so this stays. The');
  lines.push('  test builds those three requests (re-timed from DRMacIver\'s transcript) and recomputes both tools\' counts.');
  lines.push('- **Entries.** ccusage\'s `entries` counts `<synthetic>` lines (local error messages, zero usage); cachelens\'s `requests`');
  lines.push('  does not (SPEC §1.3). sample-logs: 117 vs 116 in 2026-02-10 09:00 and 43 vs 42 in 2026-02-11 03:00, tokens equal.');
  lines.push('');
  lines.push('### Sessions');
  lines.push('');
  lines.push('ccusage\'s figures; "cachelens" is what `sessions --json` prints where it differs (— where equal).');
  lines.push('');
  lines.push('| folder | session | input | output | cache creation | cache read | ccusage USD | cachelens |');
  lines.push('|---|---|---:|---:|---:|---:|---:|---|');
  for (const s of sessions) {
    const printed = new Map(s.raw.map((x) => [x.session, x]));
    for (const c of s.ccusage) {
      const p = printed.get(c.session);
      const same = p && tok(p) === tok(c) && Math.abs(p.usd - c.usd) < 5e-5;
      lines.push(`| ${name(s.folder)} | ${c.session} | ${tok(c)} | ${usd(c.usd)} | ${same ? '—' : p ? `${tok(p).replaceAll(' | ', ' / ')}, ${usd(p.usd)}` : 'none (in its parent)'} |`);
    }
  }
  lines.push('');
  lines.push('Every session\'s token fields and USD are equal once the differences below are recomputed:');
  lines.push('');
  const runs = sessions.flatMap((s) => s.workflow_runs.map((r) => ({ ...r, folder: name(s.folder) })));
  lines.push('- **Workflow runs.** ccusage keys a transcript by its path, so `<session>/subagents/workflows/<run>/agent-*.jsonl`');
  lines.push('  is a session named `<run>`; cachelens keys it by the `sessionId` its lines carry, the parent session\'s (SPEC §1.1),');
  lines.push('  so the run\'s requests count in the parent. The test reads the run\'s directory alone with cachelens and moves it:');
  for (const r of runs) lines.push(`  ${r.folder}: run \`${r.run}\` (in cachelens session \`${r.session}\`): ${tok(r.tokens)} tokens (input | output | creation | read), ${usd(r.usd)}.`);
  const lc = sessions.flatMap((s) => Object.entries(s.long_context_excess).filter(([, x]) => x > 5e-5).map(([id, x]) => `${name(s.folder)} ${id} ${usd(x)}`));
  lines.push(`- **Long context** (as for blocks): ${lc.join('; ')} of cachelens USD above ccusage\'s rule.`);
  return lines.join('\n') + '\n';
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rows = realLogFolders().map(reconcile);
  const folders = usageFolders();
  const text = markdown(rows) + usageMarkdown(folders.map(explainedBlocks), folders.map(explainedSessions));
  writeFileSync(join(REPO, 'docs/reconciliation.md'), text);
  process.stdout.write(text);
}
