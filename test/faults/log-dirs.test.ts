/**
 * SPEC §8: nothing writes into the user's log directories. Every path a run writes, the store
 * (`--db`, and the files kept beside it) and the report (`--out`), is refused when it lies inside
 * the logs being read (the paths given, or the default roots) or inside any Claude Code
 * `projects/` directory: exit 2, one line naming the flag and the log directory, and the log tree
 * exactly as it was (export's `--parquet` is held to the same in test/store/export.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type RunOptions, assistant, removeDir, repoRoot, runCli, tempDir, treeHash, usage, writeLog } from './helpers.js';

/** A HOME whose ~/.claude/projects holds a transcript, and logs of one request elsewhere (`logs`). */
function setup(t: { after: (f: () => void) => void }): { dir: string; home: string; projects: string; logs: string; env: Record<string, string> } {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const home = path.join(dir, 'home');
  const projects = path.join(home, '.claude/projects');
  writeLog(projects, '-home-me-repo/0a0a0a0a-0000-4000-8000-000000000001.jsonl', [assistant({ msg: 'm1', usage: usage(1, 1, 1, 1) })]);
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm2', usage: usage(2, 2, 2, 2) })]);
  return { dir, home, projects, logs, env: { HOME: home, XDG_CACHE_HOME: path.join(dir, 'cache') } };
}

/** Runs the CLI; asserts exit 2, nothing on stdout, one `cachelens:` line matching `expected`, and `trees` unchanged. */
async function refused(args: string[], expected: RegExp, trees: string[], opts: RunOptions = {}): Promise<void> {
  const before = trees.map((t) => treeHash(t));
  const r = await runCli(args, opts);
  assert.equal(r.code, 2, `exit code of ${args.join(' ')}: ${r.stderr}`);
  assert.equal(r.stdout, '', 'nothing on stdout');
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one line on stderr: ${JSON.stringify(r.stderr)}`);
  assert.match(lines[0]!, expected);
  assert.match(lines[0]!, /\(cachelens never writes into log directories; choose another .*\)$/);
  trees.forEach((t, i) => assert.deepEqual(treeHash(t).entries, before[i]!.entries, `${t} unchanged by ${args.join(' ')}`));
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('--db inside the logs being read, or inside a Claude Code projects/ directory, is refused and nothing is written there', async (t) => {
  const { dir, home, projects, logs, env } = setup(t);
  const trees = [home, logs];
  const inLogs = (db: string, root: string) => new RegExp(`^cachelens: --db ${esc(db)} is inside the logs being read \\(${esc(root)}\\)`);
  // the default roots (~/.claude/projects), by every kind of command that opens the store
  for (const cmd of [['summary'], ['sessions'], ['blocks'], ['anatomy'], ['query', 'cost_by'], ['crosstab'], ['replay', 'session', 'top'], ['report', '--out', path.join(dir, 'r.html')], ['export', '--parquet', path.join(dir, 'out')]]) {
    const db = path.join(projects, 'x.duckdb');
    await refused([...cmd, '--db', db], inLogs(db, projects), trees, { env });
  }
  // `--db=~/…` (expanded by the CLI), and the paths given
  await refused(['summary', '--db=~/.claude/projects/x.duckdb'], inLogs(path.join(projects, 'x.duckdb'), projects), trees, { env });
  await refused(['summary', logs, '--db', path.join(logs, 's.duckdb')], inLogs(path.join(logs, 's.duckdb'), logs), trees, { env });
  // relative to the working directory; a directory not there yet
  await refused(['summary', logs, '--db', 'proj/new/s.duckdb'], inLogs('proj/new/s.duckdb', logs), trees, { env, cwd: logs });
  // a transcript given stands for its directory
  await refused(['summary', path.join(logs, 'proj/s1.jsonl'), '--db', path.join(logs, 'proj/s.duckdb')], inLogs(path.join(logs, 'proj/s.duckdb'), path.join(logs, 'proj')), trees, { env });
  // through a link to the logs
  symlinkSync(logs, path.join(dir, 'link'));
  await refused(['summary', logs, '--db', path.join(dir, 'link/s.duckdb')], inLogs(path.join(dir, 'link/s.duckdb'), logs), trees, { env });
  // a Claude Code projects/ directory this run does not read
  const other = path.join(projects, 'new/x.duckdb');
  await refused(['summary', logs, '--db', other], new RegExp(`^cachelens: --db ${esc(other)} is inside a Claude Code log directory \\(${esc(projects)}\\)`), trees, { env });
  // a store an older cachelens left there (its answers, listing and proof, which the early walk reads) stays as it was
  const cache = path.join(dir, 'cache/cachelens');
  const first = await runCli(['summary', '--json'], { env });
  assert.equal(first.code, 0, first.stderr);
  const again = await runCli(['summary', '--json'], { env });
  assert.equal(again.code, 0, again.stderr);
  for (const f of readdirSync(cache)) copyFileSync(path.join(cache, f), path.join(projects, f.replace(/^store/, 'x')));
  assert.ok(existsSync(path.join(projects, 'x.duckdb.answers')));
  for (const cmd of ['summary', 'sessions']) await refused([cmd, '--db', path.join(projects, 'x.duckdb')], inLogs(path.join(projects, 'x.duckdb'), projects), trees, { env });
  // elsewhere, and :memory:, are fine (a --db's directory must be there: cachelens makes none)
  mkdirSync(path.join(dir, 'store'));
  for (const db of [path.join(dir, 'store/s.duckdb'), ':memory:']) {
    const r = await runCli(['summary', logs, '--db', db, '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
  }
});

test('the default store inside Claude Code\'s log directories (XDG_CACHE_HOME in them) is refused and nothing is written there; logs given that hold it (a transcript in the home directory) are read', async (t) => {
  const { dir, home, projects, logs, env } = setup(t);
  const trees = [home, logs];
  // it was made there unsaid: ~/.claude/projects/cache/cachelens/store.duckdb and the files beside it
  for (const cache of [path.join(projects, 'cache'), path.join(home, '.claude')]) {
    const store = path.join(cache, 'cachelens/store.duckdb');
    const root = cache === path.join(home, '.claude') ? path.join(home, '.claude') : projects;
    for (const cmd of [['summary'], ['sessions'], ['anatomy'], ['query', 'cost_by'], ['replay', 'session', 'top'], ['report', '--out', path.join(dir, 'r.html')]]) {
      await refused(cmd, new RegExp(`^cachelens: the default store ${esc(store)} \\(\\$XDG_CACHE_HOME/cachelens\\) is inside the logs being read \\(${esc(root)}\\)`), trees, { env: { ...env, XDG_CACHE_HOME: cache } });
    }
  }
  // logs given that hold the default store, the user's choice of what to read, not Claude Code's own
  // directories: a transcript in the home directory (it stands for ~, which holds ~/.cache) was refused
  const transcript = path.join(home, 's.jsonl');
  writeFileSync(transcript, readFileSync(path.join(logs, 'proj/s1.jsonl')));
  const inHome = await runCli(['summary', transcript, '--json'], { env: { HOME: home, XDG_CACHE_HOME: path.join(home, '.cache') } });
  assert.equal(inHome.code, 0, inHome.stderr);
  assert.equal(JSON.parse(inHome.stdout).totals.requests, 1);
  assert.ok(existsSync(path.join(home, '.cache/cachelens/store.duckdb')));
  // elsewhere it is used as before
  const r = await runCli(['summary', logs, '--json'], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(path.join(dir, 'cache/cachelens/store.duckdb')));
});

test('report --out and start --out inside the logs, or the report\'s default name in a working directory among them, are refused and nothing is written there', async (t) => {
  const { dir, home, projects, logs, env } = setup(t);
  const trees = [home, logs];
  const db = ['--db', ':memory:'];
  const inLogs = (out: string, root: string) => new RegExp(`^cachelens: --out ${esc(out)} is inside the logs being read \\(${esc(root)}\\)`);
  await refused(['report', logs, ...db, '--out', path.join(logs, 'proj/r.html')], inLogs(path.join(logs, 'proj/r.html'), logs), trees, { env });
  await refused(['report', ...db, '--out=~/.claude/projects/r.html'], inLogs(path.join(projects, 'r.html'), projects), trees, { env });
  await refused(['report', logs, ...db, '--out', 'new/r.html'], inLogs('new/r.html', logs), trees, { env, cwd: logs });
  symlinkSync(logs, path.join(dir, 'link'));
  await refused(['report', logs, ...db, '--out', path.join(dir, 'link/r.html')], inLogs(path.join(dir, 'link/r.html'), logs), trees, { env });
  const other = path.join(projects, '-home-me-repo/r.html');
  await refused(['report', logs, ...db, '--out', other], new RegExp(`^cachelens: --out ${esc(other)} is inside a Claude Code log directory \\(${esc(projects)}\\)`), trees, { env });
  // no --out: cachelens-report-<date>.html in the working directory
  await refused(['report', logs, ...db], new RegExp(`^cachelens: the report ${esc(path.join(logs, 'proj'))}/cachelens-report-[\\d-]+\\.html is inside the logs being read \\(${esc(logs)}\\)`), trees, { env, cwd: path.join(logs, 'proj') });
  // start reads the default roots, says so, then the one error line
  const before = treeHash(home).entries;
  const r = await runCli(['start', ...db, '--out', path.join(projects, 'r.html')], { env });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr.trim().split('\n').at(-1)!, inLogs(path.join(projects, 'r.html'), projects));
  assert.deepEqual(treeHash(home).entries, before);
  // elsewhere is fine
  const ok = await runCli(['report', logs, ...db, '--out', path.join(dir, 'r.html')], { env });
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(existsSync(path.join(dir, 'r.html')));
});

test('start on the sample corpus (no logs of the user\'s) refuses a --db or --out inside sample-logs/', async () => {
  const sample = path.join(repoRoot, 'sample-logs');
  const env = { CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: '' };
  // --out is checked before start says which logs it reads (one line); --db once the store opens, after it
  const last = async (args: string[], expected: RegExp, noted: boolean) => {
    const before = treeHash(sample).entries;
    const r = await runCli(args, { env });
    assert.equal(r.code, 2, r.stderr);
    if (noted) assert.match(r.stderr, /using the sample corpus/);
    else assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr.trim().split('\n').at(-1)!, expected);
    assert.deepEqual(treeHash(sample).entries, before);
  };
  await last(['start', '--db', path.join(sample, 's.duckdb'), '--out', path.join(tempDir(), 'r.html')], /^cachelens: --db .*sample-logs\/s\.duckdb is inside the logs being read \(.*sample-logs\)/, true);
  await last(['start', '--db', ':memory:', '--out', path.join(sample, 'r.html')], /^cachelens: --out .*sample-logs\/r\.html is inside the logs being read \(.*sample-logs\)/, false);
});

test('the whole Claude Code directory of a default root read (~/.claude, a CLAUDE_CONFIG_DIR entry) is refused for --db, --out and --parquet, by start too', async (t) => {
  const { dir, home, logs, env } = setup(t);
  const claude = path.join(home, '.claude');
  const trees = [home, logs];
  const inLogs = (flag: string, target: string, root: string) => new RegExp(`^cachelens: ${flag} ${esc(target)} is inside the logs being read \\(${esc(root)}\\)`);
  await refused(['summary', '--db', path.join(claude, 's.duckdb')], inLogs('--db', path.join(claude, 's.duckdb'), claude), trees, { env });
  await refused(['report', '--db', ':memory:', '--out', path.join(claude, 'r.html')], inLogs('--out', path.join(claude, 'r.html'), claude), trees, { env });
  await refused(['export', '--db', ':memory:', '--parquet', path.join(claude, 'out')], inLogs('--parquet', path.join(claude, 'out'), claude), trees, { env });
  // start reads the default roots (naming them as paths): the same, after its line saying which
  const cases: [string[], RegExp][] = [
    [['--db', path.join(claude, 's.duckdb'), '--out', path.join(dir, 'r.html')], inLogs('--db', path.join(claude, 's.duckdb'), claude)],
    [['--db', ':memory:', '--out', path.join(claude, 'r.html')], inLogs('--out', path.join(claude, 'r.html'), claude)],
  ];
  for (const [args, expected] of cases) {
    const before = treeHash(home).entries;
    const r = await runCli(['start', ...args], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr.trim().split('\n').at(-1)!, expected);
    assert.deepEqual(treeHash(home).entries, before);
  }
  // a CLAUDE_CONFIG_DIR entry in place of ~/.claude
  const cfg = path.join(dir, 'cfg');
  writeLog(cfg, 'projects/-home-me-other/0a0a0a0a-0000-4000-8000-000000000002.jsonl', [assistant({ msg: 'm3', usage: usage(3, 3, 3, 3) })]);
  await refused(['summary', '--db', path.join(cfg, 's.duckdb')], inLogs('--db', path.join(cfg, 's.duckdb'), cfg), [...trees, cfg], { env: { ...env, CLAUDE_CONFIG_DIR: cfg } });
});

test('--db :memory: stages a large ingest in the temp directory: a TMPDIR inside the logs read is refused in one line, and nothing is staged there', async (t) => {
  const { ingest } = await import('../../src/ingest/ingest.js');
  const { UsageError } = await import('../../src/errors.js');
  const { loadPriceTable } = await import('../../src/pricing/pricing.js');
  const { dir, logs, env } = setup(t);
  const saved = process.env.TMPDIR;
  t.after(() => (saved === undefined ? delete process.env.TMPDIR : (process.env.TMPDIR = saved)));
  const prices = loadPriceTable();
  // stageBytes 0: this ingest stages as one of 32 MB would
  const run = (tmp: string) => {
    process.env.TMPDIR = tmp;
    return ingest({ paths: [logs], env, dbPath: ':memory:', prices, workers: 1, stageBytes: 0 });
  };
  const before = treeHash(logs);
  for (const tmp of [logs, path.join(logs, 'proj/tmp')]) {
    await assert.rejects(run(tmp), (e: Error) => {
      assert.ok(e instanceof UsageError, e.stack);
      assert.equal(e.message, `the temp directory (TMPDIR) ${tmp} is inside the logs being read (${logs})`);
      assert.equal(e.hint, 'cachelens never writes into log directories; choose another TMPDIR, or a --db PATH');
      return true;
    });
    assert.deepEqual(treeHash(logs).entries, before.entries, `nothing staged in ${tmp}`);
  }
  // a temp directory elsewhere stages, reads the logs and leaves nothing behind
  const elsewhere = path.join(dir, 'tmp');
  mkdirSync(elsewhere);
  const r = await run(elsewhere);
  try {
    assert.equal(r.stats.files, 1);
    assert.deepEqual(readdirSync(elsewhere).filter((e) => e.startsWith('cachelens-facts-')), []);
  } finally {
    r.store.close();
  }
});
