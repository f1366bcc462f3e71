/**
 * The progress line on stderr (SPEC §7), as a user sees it: the built CLI run with stderr on a
 * pseudo-terminal (util-linux `script`, as Debian has it), and what that terminal received read
 * back: the line drawn with the files and MB read reaching their totals, the phases after the
 * reading, the line cleared before the answer or an error (stdout may be the same terminal),
 * never wider than the terminal, and nothing at all when stderr is no terminal or a dumb one.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { progressLine } from '../../src/format/progress.js';
import { REPO, cli, tempDir, transcripts } from '../helpers/corpus.js';

const CLI = join(REPO, 'dist/cli.js');
const SAMPLES = join(REPO, 'sample-logs/projects');
const sampleFiles = transcripts(SAMPLES);
const sampleMb = (sampleFiles.reduce((s, f) => s + statSync(f).size, 0) / 1e6).toFixed(1);

interface TerminalOptions {
  env?: NodeJS.ProcessEnv;
  cols?: number;
  stdoutTo?: string;
  nodeArgs?: string[];
}

/** `script`'s arguments and environment that run `node dist/cli.js …args` on a pseudo-terminal (see onTerminal). */
function scriptRun(args: string[], opts: TerminalOptions): { argv: string[]; env: NodeJS.ProcessEnv } {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const command = [
    `stty cols ${opts.cols ?? 200} rows 50;`,
    'exec',
    q(process.execPath),
    ...(opts.nodeArgs ?? []).map(q),
    q(CLI),
    ...args.map(q),
    ...(opts.stdoutTo ? ['>', q(opts.stdoutTo)] : []),
  ].join(' ');
  return { argv: ['-q', '-e', '-c', command, '/dev/null'], env: { ...process.env, NO_COLOR: '1', TERM: 'xterm', ...opts.env } };
}

/**
 * Runs `node dist/cli.js …args` on a pseudo-terminal `cols` wide; `stdoutTo`: a file its stdout
 * goes to instead of the terminal. Returns what the terminal received, its newlines as written
 * (the terminal's own "\r\n" for "\n" undone), and the exit code.
 */
function onTerminal(args: string[], opts: TerminalOptions = {}): { code: number; screen: string } {
  const { argv, env } = scriptRun(args, opts);
  const r = spawnSync('script', argv, { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.error, undefined, 'util-linux script runs the CLI on a pseudo-terminal');
  return { code: r.status ?? -1, screen: r.stdout.replaceAll('\r\n', '\n') };
}

/**
 * onTerminal for a run held in the middle of its work: DuckDB's statement holding `sql` waits
 * (kill-at-sql preload, KILL_AT_SQL_HOLD) and the run is sent `signal` there, once it is known to
 * wait: the preload writes its process id when the statement comes.
 */
async function signalledOnTerminal(args: string[], sql: string, signal: NodeJS.Signals): Promise<{ code: number; screen: string }> {
  const held = join(tempDir('cachelens-progress-'), 'held.pid');
  const { argv, env } = scriptRun(args, {
    stdoutTo: '/dev/null',
    nodeArgs: ['--import', join(REPO, 'test/faults/preload/kill-at-sql.mjs')],
    env: { KILL_AT_SQL: sql, KILL_AT_SQL_HOLD: held },
  });
  const child = spawn('script', argv, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (screen += d));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  // (the screen is whole once the pipe has closed too, which may come after the exit)
  const closed = once(child, 'close');
  // (polled: the run is not signalled before it waits, however long it takes to get there)
  const pid = async (): Promise<number> => (existsSync(held) && readFileSync(held, 'utf8') !== '' ? Number(readFileSync(held, 'utf8')) : (await setTimeout(20), pid()));
  process.kill(await Promise.race([pid(), exited.then(() => assert.fail(`the run ended before it waited: ${screen}`))]), signal);
  const [code] = await exited;
  await closed;
  return { code: code ?? -1, screen: screen.replaceAll('\r\n', '\n') };
}

/** The lines drawn: each redraw is "\r<text>\e[K", a clearing "\r\e[K". */
function drawn(screen: string): string[] {
  return [...screen.matchAll(/\r([^\r\n\u001b]*)\u001b\[K/g)].map((m) => m[1]);
}

const READING = /^reading (\d+)\/(\d+) files, ([\d.]+)\/([\d.]+) MB/;

test('on a terminal, a cold run shows files and MB read up to their totals, then its phases, and clears the line; stdout holds only the JSON', () => {
  const dir = tempDir('cachelens-progress-');
  const out = join(dir, 'out.json');
  const { code, screen } = onTerminal(['summary', SAMPLES, '--db', join(dir, 's.duckdb'), '--json'], { stdoutTo: out });
  assert.equal(code, 0, screen);
  const lines = drawn(screen);
  const reading = lines.map((l) => READING.exec(l)).filter((m) => m !== null);
  assert.ok(reading.length >= 2, `the reading is shown from its start to its end: ${JSON.stringify(lines)}`);
  assert.deepEqual(reading[0].slice(1), ['0', String(sampleFiles.length), '0.0', sampleMb], 'shown as the reading starts');
  assert.deepEqual(reading.at(-1)!.slice(1), [String(sampleFiles.length), String(sampleFiles.length), sampleMb, sampleMb], 'all files and MB read');
  const files = reading.map((m) => Number(m[1]));
  assert.deepEqual(files, [...files].sort((a, b) => a - b), 'files read only go up');
  // the seconds after the reading are not a frozen "28/28" line
  // (each phase word redrawn with its seconds while it lasts: how often depends on the machine)
  const after = lines.slice(lines.findLastIndex((l) => READING.test(l)) + 1).map((l) => l.replace(/ \d+ s$/, ''));
  assert.deepEqual(after.filter((l, i) => l !== after[i - 1]), ['storing…', 'de-duplicating…', 'analysing…', '']);
  assert.ok(screen.endsWith('\r\u001b[K'), 'the line is cleared: nothing of it is left on the terminal');
  const json = readFileSync(out, 'utf8');
  assert.doesNotMatch(json, /[\r\u001b]/);
  assert.ok(JSON.parse(json).totals.requests > 0);

  // a warm run reads nothing and shows nothing (its walk, were it to last a second on a loaded
  // machine, at most as `listing logs… 1 s`, cleared)
  const warm = onTerminal(['summary', SAMPLES, '--db', join(dir, 's.duckdb'), '--json'], { stdoutTo: out });
  assert.equal(warm.code, 0, warm.screen);
  for (const l of drawn(warm.screen)) assert.match(l, /^((listing logs|analysing)… \d+ s|analysing…)?$/);
  assert.ok(warm.screen === '' || warm.screen.endsWith('\r\u001b[K'), warm.screen);
});

test('with stdout on the same terminal, the line is cleared before the answer, which then parses', () => {
  for (const args of [['summary', '--json'], ['summary']]) {
    const { code, screen } = onTerminal([...args, SAMPLES, '--db', ':memory:']);
    assert.equal(code, 0, screen);
    assert.match(screen, /\rreading /);
    const answer = screen.slice(screen.lastIndexOf('\r\u001b[K') + '\r\u001b[K'.length);
    assert.doesNotMatch(answer, /[\r\u001b]|reading|…/, 'the answer is not mixed with the line');
    if (args.includes('--json')) assert.ok(JSON.parse(answer).totals.requests > 0);
    else assert.match(answer, /^\S/, 'the table starts at the line\'s start');
  }
});

test('a file that vanishes as the last one is read still ends the reading, and the line is cleared before the answer', () => {
  // two transcripts read one after another on the CLI's thread (below the workers' threshold); the second is gone when opened
  const logs = join(tempDir('cachelens-progress-'), 'projects', 'p');
  mkdirSync(logs, { recursive: true });
  const two = sampleFiles.slice(0, 2).map((f, i) => join(logs, `${i}-${basename(f)}`));
  sampleFiles.slice(0, 2).forEach((f, i) => copyFileSync(f, two[i]));
  const { code, screen } = onTerminal(['summary', logs, '--db', ':memory:', '--json'], {
    nodeArgs: ['--import', join(REPO, 'test/faults/preload/fs-faults.mjs')],
    env: { FAULT_VANISH: basename(two[1]) },
  });
  assert.equal(code, 0, screen);
  assert.match(drawn(screen).join('\n'), /^reading 2\/2 files/m);
  const answer = screen.slice(screen.lastIndexOf('\r\u001b[K') + '\r\u001b[K'.length);
  assert.deepEqual(JSON.parse(answer).quality.skipped.map((s: { reason: string }) => s.reason), ['vanished_file']);
});

test('an error in the middle of the work comes on a line of its own, the progress line cleared first', () => {
  // DuckDB fails once the facts are stored, as the de-dup starts (a bug: reported with its stack, exit 1)
  const { code, screen } = onTerminal(['summary', SAMPLES, '--db', ':memory:', '--json'], {
    nodeArgs: ['--import', join(REPO, 'test/faults/preload/kill-at-sql.mjs')],
    env: { KILL_AT_SQL: 'count(*) AS n FROM observations', KILL_AT_SQL_THROW: '1' },
  });
  assert.equal(code, 1, screen);
  assert.ok(drawn(screen).includes('de-duplicating…'), screen);
  const at = screen.indexOf('cachelens: internal error');
  assert.ok(at > 0, screen);
  assert.ok(screen.slice(0, at).endsWith('\r\u001b[K'), `cleared before the error: ${JSON.stringify(screen.slice(Math.max(0, at - 60), at + 40))}`);
});

test('Ctrl-C or a kill in the middle of the work erases the line and ends the run as the signal does (130, 143); the store stays whole', async () => {
  const dir = tempDir('cachelens-progress-');
  const db = join(dir, 's.duckdb');
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    // stopped as the de-dup starts, the facts stored: without a handler the line stayed, the cursor after it
    const run = await signalledOnTerminal(['summary', SAMPLES, '--db', db, '--json'], 'count(*) AS n FROM observations', signal);
    assert.equal(run.code, code, `${signal}: ${JSON.stringify(run.screen)}`);
    assert.ok(drawn(run.screen).includes('de-duplicating…'), run.screen);
    assert.ok(run.screen.endsWith('\r\u001b[K'), `${signal}: the line is erased before the run ends: ${JSON.stringify(run.screen.slice(-80))}`);
  }
  // the next run (no terminal) answers from that store as a run on a fresh one
  const after = cli(['summary', SAMPLES, '--db', db, '--json']);
  const fresh = cli(['summary', SAMPLES, '--db', ':memory:', '--json']);
  assert.equal(after.code, 0, after.stderr);
  assert.deepEqual(JSON.parse(after.stdout).totals, JSON.parse(fresh.stdout).totals);
});

test('on a narrow terminal the line is cut to its width (a wrapped line cannot be redrawn)', () => {
  const { code, screen } = onTerminal(['summary', SAMPLES, '--db', ':memory:', '--json'], { cols: 24, stdoutTo: '/dev/null' });
  assert.equal(code, 0, screen);
  const lines = drawn(screen);
  assert.ok(lines.some((l) => l.startsWith('reading 0/')), screen);
  for (const l of lines) assert.ok(l.length <= 23, `${JSON.stringify(l)} fits in 24 columns with the cursor`);
});

test('nothing is drawn when stderr is no terminal, or a dumb one', () => {
  const piped = cli(['summary', SAMPLES, '--db', ':memory:', '--json']);
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stderr, '');
  const dumb = onTerminal(['summary', SAMPLES, '--db', ':memory:', '--json'], { env: { TERM: 'dumb' }, stdoutTo: '/dev/null' });
  assert.equal(dumb.code, 0, dumb.screen);
  assert.equal(dumb.screen, '');
});

test('progressLine: rate and ETA only once the reading has gone on a while; redraws at most every 200 ms; clear() only erases a shown line', () => {
  const written: string[] = [];
  let t = 0;
  // told when a line comes and goes (the CLI handles Ctrl-C meanwhile)
  const shown: boolean[] = [];
  const line = progressLine({ write: (s) => written.push(s), columns: 80 }, () => t, () => () => {}, (on) => shown.push(on));
  line.clear();
  assert.deepEqual(written, [], 'nothing shown, nothing erased');
  assert.deepEqual(shown, []);
  const p = (files: number, mb: number) => ({ phase: 'reading' as const, files, filesTotal: 10, bytes: mb * 1e6, bytesTotal: 100e6 });
  line.update(p(0, 0));
  t = 100;
  line.update(p(1, 5)); // within 200 ms of the last draw: skipped
  t = 1000;
  line.update(p(5, 50)); // 50 MB in 1 s: 50 MB/s, 1 s left
  t = 2000;
  line.update(p(10, 100)); // the last file: drawn, and no ETA once all is read
  line.clear();
  assert.deepEqual(written, [
    '\rreading 0/10 files, 0/100 MB\u001b[K',
    '\rreading 5/10 files, 50/100 MB, 50 MB/s, reading ETA 1 s\u001b[K',
    '\rreading 10/10 files, 100/100 MB, 50 MB/s\u001b[K',
    '\r\u001b[K',
  ]);
  assert.deepEqual(shown, [true, false], 'once as the line came, once as it went, however many redraws between');
  // a slow reading: 0.3 MB in 1 s is 0.3 MB/s, and 99.7 MB then take 333 s
  written.length = 0;
  line.update(p(0, 0));
  t = 3000;
  line.update(p(1, 0.3));
  assert.equal(written.at(-1), '\rreading 1/10 files, 0/100 MB, 0.3 MB/s, reading ETA 6 min\u001b[K');
  assert.deepEqual(shown, [true, false, true]);
});

test('progressLine: a phase word with its seconds while it lasts; the walk only once it has lasted a second; a warm run shows nothing', () => {
  const written: string[] = [];
  let t = 0;
  // the ticker as the line set it: what it calls, and whether it was stopped
  const ticks: { f: () => void; stopped: boolean }[] = [];
  const ticker = (f: () => void) => {
    const tick = { f, stopped: false };
    ticks.push(tick);
    return () => void (tick.stopped = true);
  };
  const tickAt = (ms: number) => {
    t = ms;
    for (const k of ticks) if (!k.stopped) k.f();
  };
  const warm = progressLine({ write: (s) => written.push(s), columns: 80 }, () => t, ticker);
  warm.update({ phase: 'listing' });
  warm.update({ phase: 'done' });
  warm.clear();
  assert.deepEqual(written, [], 'a warm run (its walk under a second) shows nothing');
  assert.ok(ticks.every((k) => k.stopped));

  const line = progressLine({ write: (s) => written.push(s), columns: 80 }, () => t, ticker);
  t = 0;
  line.update({ phase: 'listing' });
  tickAt(1000);
  tickAt(2000);
  t = 2100; // the reading's start is drawn however soon it follows a draw
  line.update({ phase: 'reading', files: 0, filesTotal: 1, bytes: 0, bytesTotal: 1e6 });
  tickAt(3100); // the walk's ticker is stopped: nothing
  line.update({ phase: 'reading', files: 1, filesTotal: 1, bytes: 1e6, bytesTotal: 1e6 });
  line.update({ phase: 'storing' });
  tickAt(3500);
  tickAt(5200);
  line.update({ phase: 'done' });
  line.clear();
  tickAt(9000);
  assert.deepEqual(written, [
    '\rlisting logs… 1 s\u001b[K',
    '\rlisting logs… 2 s\u001b[K',
    '\rreading 0/1 files, 0.0/1.0 MB\u001b[K',
    '\rreading 1/1 files, 1.0/1.0 MB, 1.0 MB/s\u001b[K',
    '\rstoring…\u001b[K',
    '\rstoring…\u001b[K',
    '\rstoring… 2 s\u001b[K',
    '\ranalysing…\u001b[K',
    '\r\u001b[K',
  ]);
  assert.ok(ticks.every((k) => k.stopped), 'nothing ticks once the line is cleared');
});
