/**
 * Guarantees (SPEC §7, §8), checked from outside the process for every command:
 *
 * - cachelens never writes, renames or deletes anything under the log roots: a hash of every
 *   root (path, type, mode, size, mtime, content of every entry) is equal before and after each
 *   command — on a temp tree full of faults, on ../shared/real-logs and on sample-logs/, in place;
 * - it opens no network socket: each run carries a preload that makes every Node network entry
 *   point (net connect, dns, dgram, fetch) record and throw, and, where strace exists, runs under
 *   strace watching the socket syscalls of the whole process tree (DuckDB's native code included).
 *
 * The command list is checked against the CLI's registry, so a new command fails this test until
 * it is added here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { faultTree, has, realLogs, removeDir, repoRoot, runCli, skipsByReason, summary, tempDir, tokens, treeHash } from './helpers.js';

const SAMPLE_LOGS = path.join(repoRoot, 'sample-logs');
const CHANNEL = path.join(SAMPLE_LOGS, 'channels/backend.jsonl');
/** a main chain of the real logs (marot-spotter, SPEC §3's example) */
const REAL_SESSION = '4d5611e5';
const STRACE = has('strace', ['-V']);

test('the fault tree reads as computed by hand (the corpus the guarantees below run on)', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const s = await summary([faultTree(path.join(dir, 'logs'))], path.join(dir, 's.duckdb'));
  assert.deepEqual(tokens(s.totals), { requests: 6, input: 22, output: 100, cache_write_5m: 17_013, cache_write_1h: 0, cache_read: 37_898, unpriced_requests: 1 });
  assert.deepEqual(skipsByReason(s), {
    incomplete_last_line: { count: 1, at: ['0a0a0a0a-0000-4000-8000-000000000001.jsonl:9'] },
    invalid_json: { count: 1, at: ['0a0a0a0a-0000-4000-8000-000000000001.jsonl:5'] },
    invalid_usage: { count: 1, at: ['0a0a0a0a-0000-4000-8000-000000000001.jsonl:6'] },
    symlink_loop: { count: 1, at: ['loop'] },
    // a pipe named as a transcript: not opened, and said
    unreadable_file: { count: 1, at: ['pipe.jsonl'] },
    vanished_file: { count: 1, at: ['dangling.jsonl'] },
  });
  assert.deepEqual(s.quality.unknown_models.map((m) => m.model), ['claude-unknown-9']);
});

test('no command writes under the log roots or opens a network socket', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const faults = faultTree(path.join(dir, 'logs'));
  const home = path.join(dir, 'home');
  faultTree(path.join(home, '.claude/projects'));
  const emptyHome = path.join(dir, 'empty-home');
  const out = (name: string) => path.join(dir, 'out', name);
  const db = path.join(dir, 'out', 's.duckdb');
  // cachelens makes no directory for --db or --out
  mkdirSync(path.join(dir, 'out'));
  const roots = [faults, realLogs, path.join(SAMPLE_LOGS, 'projects')];
  const watched = [...roots, CHANNEL, path.join(home, '.claude')];

  const runs: { name: string; args: string[]; env?: Record<string, string> }[] = [
    { name: 'summary', args: ['summary', ...roots, '--db', db, '--json'] },
    { name: 'summary (default roots, default store)', args: ['summary', '--json'], env: { HOME: home } },
    { name: 'sessions', args: ['sessions', ...roots, '--db', db, '--json'] },
    { name: 'blocks', args: ['blocks', ...roots, '--db', db, '--json'] },
    { name: 'anatomy', args: ['anatomy', ...roots, '--db', db, '--json'] },
    { name: 'whatif ttl', args: ['whatif', 'ttl', ...roots, '--db', db, '--json'] },
    { name: 'whatif keepalive', args: ['whatif', 'keepalive', ...roots, '--db', db, '--json'] },
    { name: 'crosstab', args: ['crosstab', ...roots, '--db', db, '--json'] },
    { name: 'query', args: ['query', 'cost_by', ...roots, '--db', db, '--json'] },
    { name: 'export', args: ['export', ...roots, '--db', db, '--parquet', out('parquet')] },
    { name: 'query --parquet', args: ['query', 'cost_by', '--parquet', out('parquet'), '--json'] },
    { name: 'replay session', args: ['replay', 'session', REAL_SESSION, ...roots, '--db', db, '--json'] },
    { name: 'replay channel', args: ['replay', 'channel', CHANNEL, '--json'] },
    { name: 'report', args: ['report', ...roots, '--db', db, '--out', out('report.html'), '--session', 'top', '--channel', CHANNEL] },
    { name: 'report (no --out: into the working directory)', args: ['report', ...roots, '--db', db] },
    { name: 'start (default roots)', args: ['start', '--db', db, '--out', out('start.html')], env: { HOME: home } },
    { name: 'start (no logs: the sample corpus)', args: ['start', '--db', out('sample.duckdb'), '--out', out('start-sample.html')], env: { HOME: emptyHome } },
    { name: 'summary --rebuild', args: ['summary', ...roots, '--db', db, '--rebuild', '--json'] },
  ];

  const { commands } = (await import(pathToFileURL(path.join(repoRoot, 'dist/commands/index.js')).href)) as { commands: { command: string }[] };
  const covered = new Set(runs.map((r) => r.args[0]));
  for (const c of commands) assert.ok(covered.has(c.command.split(' ')[0]), `command ${c.command} is not exercised here`);

  const hashes = () => watched.map((w) => (w === CHANNEL ? fileHash(w) : treeHash(w).hash));
  const before = hashes();
  const listings = watched.map((w) => (w === CHANNEL ? [] : treeHash(w).entries));
  for (const r of runs) {
    const trace = path.join(dir, 'strace.txt');
    const ran = await runCli(r.args, {
      noNetwork: true,
      env: r.env,
      wrap: STRACE ? ['strace', '-f', '-qq', '--seccomp-bpf', '-e', 'trace=socket,connect,bind,sendto,sendmsg', '-o', trace] : undefined,
    });
    assert.equal(ran.code, 0, `${r.name}: ${ran.stderr}`);
    assert.deepEqual(ran.netAttempts, [], `${r.name}: network attempts`);
    if (STRACE) {
      const calls = readFileSync(trace, 'utf8').split('\n').filter((l) => /AF_INET6?|connect\(/.test(l));
      assert.deepEqual(calls, [], `${r.name}: socket syscalls`);
    }
    const after = hashes();
    watched.forEach((w, i) => {
      if (after[i] !== before[i]) {
        const now = w === CHANNEL ? [] : treeHash(w).entries;
        const changed = now.filter((e) => !listings[i].includes(e)).concat(listings[i].filter((e) => !now.includes(e)).map((e) => `gone: ${e}`));
        assert.fail(`${r.name} changed ${w}: ${changed.slice(0, 5).join('; ')}`);
      }
    });
  }
  t.diagnostic(`${runs.length} runs; socket syscalls ${STRACE ? 'traced with strace' : 'not traced (no strace here): Node entry points only'}`);
});

test('a query of the user’s naming a URL opens no socket: DuckDB installs and loads no extension by itself', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = faultTree(path.join(dir, 'logs'));
  writeFileSync(path.join(dir, 'url.sql'), "SELECT * FROM read_csv('https://example.invalid/x.csv')");
  mkdirSync(path.join(dir, 'export'));
  const exported = await runCli(['export', logs, '--db', ':memory:', '--parquet', path.join(dir, 'export')]);
  assert.equal(exported.code, 0, exported.stderr);
  for (const where of [['--db', path.join(dir, 's.duckdb')], ['--db', ':memory:'], ['--parquet', path.join(dir, 'export')]]) {
    const trace = path.join(dir, 'strace.txt');
    const ran = await runCli(['query', path.join(dir, 'url.sql'), ...(where[0] === '--db' ? [logs] : []), ...where], {
      noNetwork: true,
      wrap: STRACE ? ['strace', '-f', '-qq', '--seccomp-bpf', '-e', 'trace=socket,connect,bind,sendto,sendmsg', '-o', trace] : undefined,
    });
    // refused for want of httpfs; before, DuckDB went to fetch it (DNS, then a failed download)
    assert.equal(ran.code, 2, `${where.join(' ')}: ${ran.stderr}`);
    assert.match(ran.stderr, /requires the extension httpfs to be loaded/);
    if (STRACE) {
      const calls = readFileSync(trace, 'utf8').split('\n').filter((l) => /AF_INET6?|connect\(/.test(l));
      assert.deepEqual(calls, [], `${where.join(' ')}: socket syscalls`);
    }
  }
});

test('a query of the user’s that INSTALLs or LOADs an extension is refused before it runs: no socket, one line, exit 2', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = faultTree(path.join(dir, 'logs'));
  const files = {
    'install.sql': 'INSTALL httpfs',
    'force.sql': "SELECT 1;\nFORCE INSTALL httpfs FROM 'http://example.invalid';",
    'load.sql': 'LOAD httpfs',
    'update.sql': 'UPDATE EXTENSIONS',
  };
  mkdirSync(path.join(dir, 'export'));
  const exported = await runCli(['export', logs, '--db', ':memory:', '--parquet', path.join(dir, 'export')]);
  assert.equal(exported.code, 0, exported.stderr);
  for (const [name, sql] of Object.entries(files)) {
    writeFileSync(path.join(dir, name), sql);
    for (const where of [['--db', ':memory:'], ['--parquet', path.join(dir, 'export')]]) {
      const trace = path.join(dir, 'strace.txt');
      const ran = await runCli(['query', path.join(dir, name), ...(where[0] === '--db' ? [logs] : []), ...where], {
        noNetwork: true,
        wrap: STRACE ? ['strace', '-f', '-qq', '--seccomp-bpf', '-e', 'trace=socket,connect,bind,sendto,sendmsg', '-o', trace] : undefined,
      });
      // INSTALL went to download httpfs from extensions.duckdb.org (autoinstall off or not)
      assert.equal(ran.code, 2, `${name} ${where[0]}: ${ran.stderr}`);
      assert.match(ran.stderr, /INSTALL, LOAD and UPDATE EXTENSIONS are refused( \(statement 2\))?: cachelens never touches the network/, name);
      assert.equal(ran.stderr.trim().split('\n').filter((l) => l.startsWith('cachelens: query')).length, 1, ran.stderr);
      if (STRACE) {
        const calls = readFileSync(trace, 'utf8').split('\n').filter((l) => /AF_INET6?|connect\(/.test(l));
        assert.deepEqual(calls, [], `${name} ${where[0]}: socket syscalls`);
      }
    }
  }
});

function fileHash(file: string): string {
  return treeHash(path.dirname(file)).entries.find((e) => e.startsWith(path.basename(file) + ' ')) ?? 'missing';
}

/** The probes above must be able to fail: each is shown a process that does what it forbids. */
test('the probes see what they forbid: a network attempt (in a worker thread too), a socket syscall, a touched log file', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const worker = path.join(dir, 'worker.mjs');
  writeFileSync(worker, `import net from 'node:net'; try { net.connect(9, '127.0.0.1'); } catch {}`);
  const script = path.join(dir, 'offender.mjs');
  writeFileSync(
    script,
    `import dns from 'node:dns'; import { Worker } from 'node:worker_threads';
     try { await fetch('http://192.0.2.1/'); } catch {}
     try { dns.lookup('example.com', () => {}); } catch {}
     await new Promise((r) => new Worker(${JSON.stringify(worker)}).on('exit', r));`,
  );
  const ran = await runCli([], { noNetwork: true, script: [script] });
  assert.equal(ran.code, 0, ran.stderr);
  assert.deepEqual(ran.netAttempts, ['fetch http://192.0.2.1/', 'dns lookup example.com', 'net connect 127.0.0.1:9']);

  if (STRACE) {
    const trace = path.join(dir, 'strace.txt');
    const raw = path.join(dir, 'raw-socket.mjs');
    writeFileSync(raw, `import net from 'node:net'; const s = net.connect(9, '127.0.0.1'); s.on('error', () => {});`);
    await runCli([], { script: [raw], wrap: ['strace', '-f', '-qq', '--seccomp-bpf', '-e', 'trace=socket,connect,bind,sendto,sendmsg', '-o', trace] });
    assert.ok(readFileSync(trace, 'utf8').split('\n').some((l) => /AF_INET/.test(l)), 'strace saw the socket');
  }

  const logs = faultTree(path.join(dir, 'logs'));
  const before = treeHash(logs);
  const file = path.join(logs, '-work-project/bom-crlf.jsonl');
  utimesSync(file, new Date(), new Date(Date.now() - 1000));
  assert.notEqual(treeHash(logs).hash, before.hash, 'an mtime change is seen');
  chmodSync(file, 0o600);
  renameSync(file, file + '.bak');
  assert.notEqual(treeHash(logs).hash, before.hash, 'a rename is seen');
});
