/**
 * What a run leaves behind (SPEC §7: cachelens writes only what it is asked to): every command,
 * run from an empty working directory with an empty HOME and an empty TMPDIR, leaves nothing in
 * the temp dir and nothing in the other two but what it was asked to write (a store, a report, an
 * export) — also when it fails: a bad flag, a missing path, an unreadable file, a report or export
 * whose disk is full. The command list is checked against the CLI's registry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { assistant, removeDir, repoRoot, runCli, tempDir, usage, writeLog } from './helpers.js';

const SAMPLE_LOGS = path.join(repoRoot, 'sample-logs');
const CHANNEL = path.join(SAMPLE_LOGS, 'channels/backend.jsonl');

/** Every entry below `dir`, relative, sorted. */
function entries(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((e) => e.split(path.sep).join('/')).sort();
}

interface Run {
  name: string;
  args: string[];
  /** 0, or 2 for a usage error */
  code: number;
  /** what may be in the working directory and in HOME afterwards (an entry and what is below it) */
  cwd?: RegExp;
  home?: RegExp;
  asNobody?: boolean;
  fsFaults?: Record<string, string>;
}

test('no command leaves anything in the temp dir, or in the working dir and HOME besides what it was asked to write, also when it fails', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const logs = path.join(dir, 'logs');
  writeLog(logs, 'proj/s1.jsonl', [assistant({ msg: 'm1', usage: usage(10, 5, 2000, 0) }), assistant({ msg: 'm2', usage: usage(10, 5, 100, 2000) })]);
  // unreadable to the run (asNobody): a counted skip
  chmodSync(writeLog(logs, 'proj/s2.jsonl', [assistant({ msg: 'm3', usage: usage(1, 1, 1, 1) })]), 0o000);
  const S = SAMPLE_LOGS;
  const store = /^\.cache(\/cachelens(\/store\.duckdb(\.[a-z]+)?)?)?$/;
  const runs: Run[] = [
    { name: 'summary', args: ['summary', S, '--db', ':memory:', '--json'], code: 0 },
    { name: 'summary (the default store)', args: ['summary', S, '--json'], code: 0, home: store },
    { name: 'sessions', args: ['sessions', S, '--db', ':memory:'], code: 0 },
    { name: 'blocks', args: ['blocks', S, '--db', ':memory:'], code: 0 },
    { name: 'anatomy', args: ['anatomy', S, '--db', ':memory:'], code: 0 },
    { name: 'whatif ttl', args: ['whatif', 'ttl', S, '--db', ':memory:'], code: 0 },
    { name: 'whatif keepalive', args: ['whatif', 'keepalive', S, '--db', ':memory:'], code: 0 },
    { name: 'crosstab', args: ['crosstab', S, '--db', ':memory:'], code: 0 },
    { name: 'query', args: ['query', 'cost_by', S, '--db', ':memory:'], code: 0 },
    { name: 'replay session', args: ['replay', 'session', 'top', S, '--db', ':memory:'], code: 0 },
    { name: 'replay channel', args: ['replay', 'channel', CHANNEL], code: 0 },
    { name: 'report (into the working directory)', args: ['report', S, '--db', ':memory:'], code: 0, cwd: /^cachelens-report-\d{4}-\d{2}-\d{2}\.html$/ },
    { name: 'export', args: ['export', S, '--db', ':memory:', '--parquet', 'pq'], code: 0, cwd: /^pq(\/|$)/ },
    { name: 'start (no logs: the sample corpus)', args: ['start', '--db', 's.duckdb', '--out', 'r.html'], code: 0, cwd: /^(r\.html|s\.duckdb(\.[a-z]+)?)$/ },
    { name: 'an unreadable file', args: ['summary', logs, '--db', ':memory:', '--json'], code: 0, asNobody: true },
    { name: 'a bad flag', args: ['report', S, '--db', 'new/s.duckdb', '--out', 'new/r.html', '--bogus'], code: 2 },
    { name: 'a missing path', args: ['export', path.join(dir, 'none'), '--db', 'new/s.duckdb', '--parquet', 'new/pq'], code: 2 },
    { name: 'a bad time zone', args: ['summary', S, '--timezone', 'Nowhere/Else'], code: 2 },
    { name: 'a report on a full disk', args: ['report', S, '--db', ':memory:', '--out', 'r.html'], code: 2, fsFaults: { FAULT_FULL_WRITE: 'r.html' } },
  ];
  const { commands } = (await import(pathToFileURL(path.join(repoRoot, 'dist/commands/index.js')).href)) as { commands: { command: string }[] };
  const covered = new Set(runs.map((r) => r.args[0]));
  for (const c of commands) assert.ok(covered.has(c.command.split(' ')[0]), `command ${c.command} is not run here`);

  runs.forEach((r, i) => {
    for (const d of ['cwd', 'home', 'tmp']) mkdirSync(path.join(dir, String(i), d), { recursive: true });
  });
  for (const [i, r] of runs.entries()) {
    const at = (d: string) => path.join(dir, String(i), d);
    const ran = await runCli(r.args, { cwd: at('cwd'), env: { HOME: at('home'), XDG_CACHE_HOME: undefined, TMPDIR: at('tmp') }, asNobody: r.asNobody, fsFaults: r.fsFaults });
    assert.equal(ran.code, r.code, `${r.name}: ${ran.stderr}`);
    if (r.fsFaults) assert.equal(ran.faults.length, 1, `${r.name}: the fault fired`);
    assert.deepEqual(entries(at('tmp')), [], `${r.name}: left in the temp dir`);
    for (const [d, allowed] of [['cwd', r.cwd], ['home', r.home]] as const) {
      const left = entries(at(d)).filter((e) => !allowed?.test(e));
      assert.deepEqual(left, [], `${r.name}: left in ${d === 'cwd' ? 'the working dir' : 'HOME'}`);
    }
    if (r.cwd && r.code === 0) assert.notDeepEqual(entries(at('cwd')), [], `${r.name}: wrote what it was asked to`);
  }
});
