/** Discovery exactly as SPEC §1.1: roots from CLAUDE_CONFIG_DIR / XDG / ~/.claude, explicit paths, the three subagent layouts. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { defaultRoots, discover, explicitRoots } from '../../src/ingest/discover.js';
import { UsageError } from '../../src/errors.js';
import { defaultDbPath } from '../../src/store/location.js';
import { fileIdentity } from '../../src/replay/session-transcript.js';
import { cli, tempDir } from '../helpers/corpus.js';
import { run } from '../store/helpers.js';

function touch(path: string, text = '{}\n'): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

test('CLAUDE_CONFIG_DIR: a comma list of config dirs or projects/ dirs, ~ expanded; missing ones passed over', () => {
  const home = tempDir('cachelens-home-');
  mkdirSync(join(home, 'a/projects'), { recursive: true });
  mkdirSync(join(home, 'b/projects'), { recursive: true });
  const env = { HOME: home, CLAUDE_CONFIG_DIR: `~/a, ${join(home, 'b/projects')} ,~/missing` };
  assert.deepEqual(defaultRoots(env), [join(home, 'a/projects'), join(home, 'b/projects')]);
  // one that names no path is as one not set: the defaults, not no root at all
  mkdirSync(join(home, '.claude/projects'), { recursive: true });
  for (const v of ['', ' ', ',', ' , ,, ']) assert.deepEqual(defaultRoots({ HOME: home, CLAUDE_CONFIG_DIR: v }), [join(home, '.claude/projects')], JSON.stringify(v));
});

test('without CLAUDE_CONFIG_DIR: $XDG_CONFIG_HOME/claude (default ~/.config/claude), then ~/.claude', () => {
  const home = tempDir('cachelens-home-');
  mkdirSync(join(home, '.config/claude/projects'), { recursive: true });
  mkdirSync(join(home, '.claude/projects'), { recursive: true });
  assert.deepEqual(defaultRoots({ HOME: home }), [join(home, '.config/claude/projects'), join(home, '.claude/projects')]);
  mkdirSync(join(home, 'xdg/claude/projects'), { recursive: true });
  assert.deepEqual(defaultRoots({ HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') }), [join(home, 'xdg/claude/projects'), join(home, '.claude/projects')]);
});

test('a relative XDG_CONFIG_HOME or XDG_CACHE_HOME is ignored, as the XDG spec asks: logs and the store are not looked for under the working directory', () => {
  const home = tempDir('cachelens-home-');
  touch(join(home, '.config/claude/projects/-w/s1.jsonl'));
  const work = tempDir('cachelens-work-');
  touch(join(work, 'rel/claude/projects/-w/s2.jsonl'));
  touch(join(work, 'rel/claude/projects/-w/s3.jsonl'));
  // from the working directory `work`, where ./rel/claude would be found
  const here = process.cwd();
  try {
    process.chdir(work);
    assert.deepEqual(defaultRoots({ HOME: home, XDG_CONFIG_HOME: 'rel' }), [join(home, '.config/claude/projects')]);
    assert.equal(defaultDbPath({ HOME: home, XDG_CACHE_HOME: 'rel/cache' }), join(home, '.cache/cachelens/store.duckdb'));
    assert.equal(defaultDbPath({ HOME: home, XDG_CACHE_HOME: join(work, 'c') }), join(work, 'c/cachelens/store.duckdb'));
  } finally {
    process.chdir(here);
  }
  // the CLI, run there: reads ~/.config/claude's transcript and makes no store under the working directory
  const r = spawnSync(process.execPath, [join(process.cwd(), 'dist/cli.js'), 'summary', '--json'], {
    cwd: work,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', HOME: home, CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: 'rel', XDG_CACHE_HOME: 'rel-cache' },
  });
  assert.equal(r.status, 0, r.stderr);
  // the one transcript under ~/.config/claude, not the two under ./rel/claude
  assert.equal((JSON.parse(r.stdout) as { quality: { files: number } }).quality.files, 1);
  assert.deepEqual(readdirSync(work).sort(), ['rel']);
  assert.equal(existsSync(join(home, '.cache/cachelens/store.duckdb')), true);
});

test('two roots that are one directory (~/.claude a link to ~/.config/claude) are walked once, with no symlink_loop', async () => {
  const home = tempDir('cachelens-home-');
  touch(join(home, '.config/claude/projects/-w/s1.jsonl'));
  symlinkSync('.config/claude', join(home, '.claude'));
  const d = await discover(undefined, { HOME: home });
  assert.deepEqual(d.roots, [join(home, '.config/claude/projects'), join(home, '.claude/projects')]);
  assert.deepEqual(d.files.map((f) => relative(home, f.path)), ['.config/claude/projects/-w/s1.jsonl']);
  assert.deepEqual(d.problems, []);
  // the same, given as paths, the link first or second; a root inside another too
  for (const paths of [[join(home, '.config/claude'), join(home, '.claude')], [join(home, '.claude'), join(home, '.config/claude')], [join(home, '.claude'), join(home, '.config/claude/projects/-w')], [join(home, '.config/claude/projects/-w'), join(home, '.claude')]]) {
    const e = await discover(paths, { HOME: home });
    assert.equal(e.files.length, 1, paths.join(' '));
    assert.deepEqual(e.problems, [], paths.join(' '));
  }
  // a real loop is still one
  symlinkSync('..', join(home, '.config/claude/projects/-w/up'));
  assert.deepEqual((await discover(undefined, { HOME: home })).problems.map((p) => [relative(home, p.path), p.reason]), [['.config/claude/projects/-w/up', 'symlink_loop']]);
});

test('explicit paths replace the defaults; a config dir resolves to its projects/; a missing path is a usage error', () => {
  const home = tempDir('cachelens-home-');
  mkdirSync(join(home, 'cfg/projects'), { recursive: true });
  const file = touch(join(home, 'one.jsonl'));
  assert.deepEqual(explicitRoots([join(home, 'cfg'), file, '~/cfg/projects'], home), [join(home, 'cfg/projects'), file, join(home, 'cfg/projects')]);
  assert.throws(() => explicitRoots([join(home, 'nope')], home), UsageError);
});

test('all three layouts and meta.json files are found, with agent and session ids from their names', async () => {
  const root = tempDir('cachelens-layouts-');
  const p = join(root, 'projects/-work-app');
  touch(join(p, '11111111-aaaa.jsonl')); // v1.x main file (sidechains inline)
  touch(join(p, 'agent-a0.jsonl')); // v2.0 project-level agent file
  touch(join(p, '22222222-bbbb.jsonl'));
  touch(join(p, '22222222-bbbb/subagents/agent-a1.jsonl')); // v2.1
  touch(join(p, '22222222-bbbb/subagents/agent-a1.meta.json'), '{"agentType":"Explore"}');
  touch(join(p, '22222222-bbbb/subagents/workflows/run-1/agent-a2.jsonl'));
  touch(join(p, 'notes.txt'));
  // .meta.json files other than a subagent's (agent-<id>.meta.json) are not transcripts' metadata
  touch(join(p, 'notes/draft.meta.json'), 'not json');
  touch(join(root, 'projects/x.meta.json'), 'not json');
  const d = await discover([root], { HOME: root });
  assert.deepEqual(d.roots, [join(root, 'projects')]);
  const seen = d.files.map((f) => [relative(join(root, 'projects'), f.path), f.kind, f.agentId, f.sessionId, f.projectDir]);
  assert.deepEqual(seen, [
    ['-work-app/11111111-aaaa.jsonl', 'main', null, '11111111-aaaa', '-work-app'],
    ['-work-app/22222222-bbbb.jsonl', 'main', null, '22222222-bbbb', '-work-app'],
    ['-work-app/22222222-bbbb/subagents/agent-a1.jsonl', 'subagent', 'a1', '22222222-bbbb', '-work-app'],
    ['-work-app/22222222-bbbb/subagents/agent-a1.meta.json', 'meta', 'a1', '22222222-bbbb', '-work-app'],
    ['-work-app/22222222-bbbb/subagents/workflows/run-1/agent-a2.jsonl', 'subagent', 'a2', '22222222-bbbb', '-work-app'],
    ['-work-app/agent-a0.jsonl', 'subagent', 'a0', null, '-work-app'],
  ]);
  assert.deepEqual(d.problems, []);
});

test('a subagents directory above the layout (in the root\'s own path) names no session', async () => {
  const root = join(tempDir('cachelens-place-'), 'subagents/logs');
  const p = join(root, 'projects/-work-app');
  touch(join(p, 'agent-a0.jsonl')); // v2.0 agent file: its session comes from its lines, not from the path
  touch(join(p, 'notes/agent-a3.jsonl'));
  touch(join(p, '33333333-cccc/subagents/agent-a1.jsonl'));
  const d = await discover([root], { HOME: root });
  assert.deepEqual(d.files.map((f) => [relative(p, f.path), f.sessionId]), [
    ['33333333-cccc/subagents/agent-a1.jsonl', '33333333-cccc'],
    ['agent-a0.jsonl', null],
    ['notes/agent-a3.jsonl', null],
  ]);
  assert.deepEqual(fileIdentity(join(p, 'agent-a0.jsonl')), { fileAgentId: 'a0', fileSessionId: null });
  assert.deepEqual(fileIdentity(join(p, '33333333-cccc/subagents/agent-a1.jsonl')), { fileAgentId: 'a1', fileSessionId: '33333333-cccc' });
});

test('a name that is not UTF-8 is reported as such, not as a file that vanished; the others are read', async () => {
  const root = tempDir('cachelens-bytes-');
  const p = join(root, 'projects/-work-app');
  touch(join(p, 'good.jsonl'));
  writeFileSync(Buffer.concat([Buffer.from(`${p}/bad-`), Buffer.from([0xff, 0xfe]), Buffer.from('.jsonl')]), '{}\n');
  mkdirSync(Buffer.concat([Buffer.from(`${p}/dir-`), Buffer.from([0xff])]));
  const d = await discover([root], { HOME: root });
  assert.deepEqual(d.files.map((f) => relative(p, f.path)), ['good.jsonl']);
  assert.deepEqual(d.problems.map((x) => [relative(p, x.path), x.reason, x.detail]), [
    ['bad-\ufffd\ufffd.jsonl', 'unreadable_file', 'its name is not valid UTF-8: not read'],
    ['dir-\ufffd', 'unreadable_file', 'its name is not valid UTF-8: not read'],
  ]);
});

test('the CLI says when the default roots hold no logs, on stderr; the answer is still given', () => {
  const home = tempDir('cachelens-home-');
  const r = cli(['summary', '--db', ':memory:', '--json'], { HOME: home, CLAUDE_CONFIG_DIR: `${home}/nowhere, ~/elsewhere` });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).totals.requests, 0);
  assert.match(r.stderr, /no Claude Code logs found: none of .*\/nowhere, ~\/elsewhere holds a projects\/ directory/);
  mkdirSync(join(home, 'cfg/projects'), { recursive: true });
  const empty = cli(['summary', '--db', ':memory:', '--json'], { HOME: home, CLAUDE_CONFIG_DIR: join(home, 'cfg') });
  assert.doesNotMatch(empty.stderr, /no Claude Code logs/);
  // a projects/ directory without a transcript: said as paths given without one are
  assert.equal(empty.stderr, `cachelens: no Claude Code transcript (*.jsonl) in ${join(home, 'cfg/projects')}\n`);
});

test('paths given that hold no transcript are said on stderr, on a warm store too; the answer is still given', () => {
  // an empty directory, or a file that is no transcript: empty tables said nowhere (but summary's `0 files`)
  const home = tempDir('cachelens-home-');
  const empty = join(home, 'empty');
  mkdirSync(empty);
  writeFileSync(join(home, 'notes.md'), '# notes\n');
  const db = join(home, 's.duckdb');
  for (const [command, path, store] of [['summary', empty, ':memory:'], ['sessions', join(home, 'notes.md'), ':memory:'], ['anatomy', empty, ':memory:'], ['summary', empty, db], ['summary', empty, db]]) {
    const r = cli([command!, path!, '--db', store!, '--json'], { HOME: home });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(JSON.parse(r.stdout));
    assert.equal(r.stderr, `cachelens: no Claude Code transcript (*.jsonl) in ${path}\n`, `${command} ${path} --db ${store}`);
  }
  const logs = join(home, 'logs/-w-app');
  mkdirSync(logs, { recursive: true });
  writeFileSync(join(logs, 's.jsonl'), '{}\n');
  assert.equal(cli(['summary', join(home, 'logs'), '--db', ':memory:'], { HOME: home }).stderr, '', 'a transcript, even one without requests, is not said');
});

test('a session without cwd lines takes its project from its files\' own places, whatever root or path order read them', async () => {
  const root = tempDir('cachelens-cwdless-');
  const projects = join(root, 'projects');
  const p = join(projects, '-home-u-app');
  const line = (i: number, agent: string | null) =>
    JSON.stringify({
      type: 'assistant', sessionId: 's1', timestamp: `2026-01-05T10:00:0${i}Z`, requestId: `r${agent ?? 'm'}${i}`, ...(agent ? { agentId: agent, isSidechain: true } : {}),
      message: { id: `m${agent ?? 'm'}${i}`, model: 'claude-sonnet-4-5', role: 'assistant', content: [], usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0 } },
    });
  const agentFile = touch(join(p, 's1/subagents/agent-a1.jsonl'), `${line(1, 'a1')}\n${line(2, 'a1')}\n`);
  touch(join(p, 's1/subagents/workflows/run-1/agent-a2.jsonl'), `${line(3, 'a2')}\n`);
  touch(join(p, 'agent-a0.jsonl'), `${line(4, 'a0')}\n`);
  // every way to name these files: the config dir, projects/, the project dir, the session dir, the file itself
  const ways = [[root], [projects], [p], [join(p, 's1')], [agentFile], [p, projects], [projects, p], [join(p, 's1'), root]];
  for (const paths of ways) {
    const d = await discover(paths, { HOME: root });
    assert.deepEqual([...new Set(d.files.map((f) => f.projectDir))], ['-home-u-app'], paths.join(' '));
  }
  // one store read through each in turn: a file read first through a narrower root kept its project from it
  const db = join(root, 'store.duckdb');
  for (const paths of ways) {
    const r = await run(paths, db);
    try {
      assert.deepEqual(await r.store.all(`SELECT DISTINCT project FROM requests`), [{ project: '/home/u/app' }], paths.join(' '));
    } finally {
      r.store.close();
    }
  }
});
