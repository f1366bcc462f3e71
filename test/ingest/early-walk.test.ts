/** The early walk (ingest/early-walk.ts): the same discovery as the main thread's, taken only when it walked what ingest would. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { discover, walkRoots } from '../../src/ingest/discover.js';
import { decodeDiscovery, digestOf, encodeDiscovery, fileCount, fileListing, kindCode, listingDigest, listingNames, takeEarlyWalk, walkEarly, walkEncoded, walkResult, wantsEarlyWalk } from '../../src/ingest/early-walk.js';
import { releaseHeap } from '../../src/ingest/heap.js';
import { UNCHANGED_SUFFIX } from '../../src/ingest/unchanged.js';
import { REAL_LOGS, REPO, cli, tempDir } from '../helpers/corpus.js';

const SESSION = '0b7ff3c6-5a6e-4d8f-9a51-0f5f3f7f7e01';

/** A config dir with a main transcript, a v2.1 subagent and its meta, a v1 agent file, a loop and an odd file. */
function configDir(): { home: string; config: string } {
  const home = tempDir('cachelens-early-');
  const config = join(home, 'cfg');
  const proj = join(config, 'projects', '-home-USER-demo');
  mkdirSync(join(proj, SESSION, 'subagents'), { recursive: true });
  const line = (t: string, id: string) =>
    JSON.stringify({
      type: 'assistant', sessionId: SESSION, timestamp: t, cwd: '/home/USER/demo', requestId: `req_${id}`,
      message: { id: `msg_${id}`, model: 'claude-sonnet-4-5-20250929', role: 'assistant', content: [], usage: { input_tokens: 3, output_tokens: 7, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 } },
    }) + '\n';
  writeFileSync(join(proj, `${SESSION}.jsonl`), line('2026-11-02T10:00:00.000Z', 'a') + line('2026-11-02T10:01:00.000Z', 'b'));
  writeFileSync(join(proj, SESSION, 'subagents', 'agent-a1.jsonl'), line('2026-11-02T10:00:30.000Z', 'c'));
  writeFileSync(join(proj, SESSION, 'subagents', 'agent-a1.meta.json'), JSON.stringify({ agentType: 'Explore' }));
  writeFileSync(join(proj, 'agent-b2.jsonl'), line('2026-11-02T10:02:00.000Z', 'd'));
  writeFileSync(join(proj, 'notes.txt'), 'not a transcript');
  symlinkSync(proj, join(proj, SESSION, 'loop'));
  return { home, config };
}

test('encoding a discovery as columns and back gives the same discovery, nulls and problems included', async () => {
  const { home, config } = configDir();
  const d = await discover([], { HOME: home, CLAUDE_CONFIG_DIR: config });
  assert.equal(d.files.length, 4);
  assert.ok(d.problems.some((p) => p.reason === 'symlink_loop'));
  assert.ok(d.files.some((f) => f.agentId === null) && d.files.some((f) => f.sessionId !== null));
  assert.deepEqual(decodeDiscovery(structuredClone(encodeDiscovery(d))), d);
  const empty = await discover([], { HOME: tempDir('cachelens-early-none-') });
  assert.deepEqual(decodeDiscovery(structuredClone(encodeDiscovery(empty))), empty);
});

test('paths of any script round-trip through the encoded text, which grows past its first guess of one byte a character', async () => {
  const home = tempDir('cachelens-early-utf8-');
  // 3 bytes of UTF-8 a character, and a surrogate pair (4 bytes): far past the ASCII-sized first buffer
  const proj = join(home, 'cfg', 'projects', `-home-ユーザー-${'日本語のプロジェクト'.repeat(5)}-😀`);
  mkdirSync(join(proj, SESSION, 'subagents'), { recursive: true });
  for (const name of [`${SESSION}.jsonl`, `${SESSION}/subagents/agent-ü${'é'.repeat(40)}.jsonl`, 'agent-b2.jsonl']) writeFileSync(join(proj, name), '{}\n');
  const d = await discover([], { HOME: home, CLAUDE_CONFIG_DIR: join(home, 'cfg') });
  assert.equal(d.files.length, 3);
  const e = encodeDiscovery(d);
  const chars = d.files.reduce((s, f) => s + f.path.length + f.root.length + f.projectDir.length + (f.agentId ?? '-').length + (f.sessionId ?? '-').length + 5, 0);
  assert.ok(e.text.byteLength > chars, 'the text outgrew its first buffer, sized at one byte a character');
  assert.deepEqual(decodeDiscovery(structuredClone(e)), d);
});

test('a plan reads the same files from the columns as from the objects: each in walk order, and any of them whole', async () => {
  const { home, config } = configDir();
  const proj = join(config, 'projects', `-home-ユーザー-😀`);
  mkdirSync(proj, { recursive: true });
  writeFileSync(join(proj, `${SESSION}.jsonl`), '{}\n');
  const d = await discover([], { HOME: home, CLAUDE_CONFIG_DIR: config });
  assert.equal(d.files.length, 5);
  const want = d.files.map((f, i) => [f.path, kindCode(f.kind), f.size, f.mtimeMs, i]);
  for (const listing of [fileListing(d), fileListing(decodeDiscovery(structuredClone(encodeDiscovery(d))))]) {
    assert.equal(listing.count, 5);
    const seen: unknown[] = [];
    listing.each((...x) => seen.push(x));
    assert.deepEqual(seen, want);
    assert.deepEqual([4, 0, 2].map(listing.file), [d.files[4], d.files[0], d.files[2]]);
    assert.deepEqual([4, 0, 2].map(listing.size), [d.files[4].size, d.files[0].size, d.files[2].size]);
  }
});

test('the names are the SHA-1 of the fields joined as one string, as before the text was a buffer (stored snapshots stay valid); the digest, of the names, sizes and mtimes', async () => {
  const { home, config } = configDir();
  const d = await discover([], { HOME: home, CLAUDE_CONFIG_DIR: config });
  const e = encodeDiscovery(d);
  const joined = d.files.flatMap((f) => [f.path, f.root, f.projectDir, f.agentId ?? '\u0001', f.sessionId ?? '\u0001']).join('\0');
  const names = createHash('sha1').update(joined).update(e.kind).digest('hex');
  assert.equal(e.names, names);
  const sizes = Float64Array.from(d.files, (f) => f.size);
  const mtimes = Float64Array.from(d.files, (f) => f.mtimeMs);
  assert.equal(e.digest, createHash('sha1').update(names).update(new Uint8Array(sizes.buffer)).update(new Uint8Array(mtimes.buffer)).digest('hex'));
  assert.equal(digestOf(names, sizes, mtimes), e.digest);
  // of views into larger buffers too: only their own bytes
  const wide = new Float64Array(sizes.length + 2);
  wide.set(sizes, 1);
  assert.equal(digestOf(names, wide.subarray(1, 1 + sizes.length), mtimes), e.digest);
});

test('the listing digest and file count are known before the files are decoded, and the digest changes with any file', async () => {
  const { home, config } = configDir();
  const d = await discover([], { HOME: home, CLAUDE_CONFIG_DIR: config });
  const early = decodeDiscovery(structuredClone(encodeDiscovery(d)));
  assert.equal(fileCount(early), 4);
  assert.equal(listingDigest(early), listingDigest(d), 'the early walk hashes what a walk on this thread does');
  assert.equal(fileCount(d), 4);
  const variants = [
    { ...d, files: d.files.map((f, i) => (i === 1 ? { ...f, size: f.size + 1 } : f)) },
    { ...d, files: d.files.map((f, i) => (i === 1 ? { ...f, mtimeMs: f.mtimeMs + 0.001 } : f)) },
    { ...d, files: d.files.map((f, i) => (i === 1 ? { ...f, path: `${f.path}x` } : f)) },
    { ...d, files: d.files.slice(1) },
  ];
  const digests = new Set([listingDigest(d), ...variants.map(listingDigest)]);
  assert.equal(digests.size, 5);
  // the names change with the files found, not with their sizes and times
  assert.equal(listingNames(early), listingNames(d));
  assert.deepEqual(variants.map((v) => listingNames(v) === listingNames(d)), [true, true, false, false]);
  assert.equal(listingNames({ ...d, files: d.files.map((f, i) => (i === 2 ? { ...f, kind: f.kind === 'main' ? 'subagent' : 'main' } : f)) }) === listingNames(d), false, 'a kind changed');
});

test('a command reading logs with no path-like argument walks early; explicit paths, other commands and `--` do not', () => {
  assert.equal(wantsEarlyWalk(['summary']), true);
  assert.equal(wantsEarlyWalk(['summary', '--db', '/tmp/x.duckdb', '--json', '--since', '2026-01-01']), true);
  assert.equal(wantsEarlyWalk(['report', '--out=r.html']), true);
  assert.equal(wantsEarlyWalk(['whatif', 'ttl', '--json']), true);
  assert.equal(wantsEarlyWalk(['whatif', 'ttl', 'logs']), false);
  assert.equal(wantsEarlyWalk(['summary', '~/logs']), false);
  assert.equal(wantsEarlyWalk(['summary', '--json=true', 'logs']), false);
  assert.equal(wantsEarlyWalk(['summary', '--db', 'x', 'logs']), false);
  assert.equal(wantsEarlyWalk(['summary', '--', '--odd-dir']), false);
  assert.equal(wantsEarlyWalk(['replay', 'channel', 'c.jsonl']), false);
  assert.equal(wantsEarlyWalk(['start']), false);
  assert.equal(wantsEarlyWalk(['--help']), false);
  assert.equal(wantsEarlyWalk([]), false);
});

test('the worker writes the listing as it walks, as discover() lists it: names sorting apart from their paths, several roots, a link to a directory', async () => {
  const home = tempDir('cachelens-early-order-');
  const one = join(home, 'one', 'projects');
  const two = join(home, 'two', 'projects');
  // by name `a` comes before `a-b`, by path `a-b/…` before `a/…` (`-` sorts before `/`)
  const files = [join(one, 'p', 'a', 'x.jsonl'), join(one, 'p', 'a-b', 'y.jsonl'), join(one, 'p-q', 'w.jsonl'), join(one, 'p', 'agent-k.jsonl'), join(two, 'é', 'z.jsonl'), join(two, 'é', 'agent-m.meta.json')];
  for (const f of files) {
    mkdirSync(join(f, '..'), { recursive: true });
    writeFileSync(f, `{"type":"user"}\n`);
  }
  const order = (env: NodeJS.ProcessEnv) => {
    const seen: string[] = [];
    walkRoots([], env, (path) => void seen.push(path));
    return seen;
  };
  const within = order({ HOME: home, CLAUDE_CONFIG_DIR: one });
  assert.deepEqual(within, [...within].sort(), 'within a root the walk gives path order');
  assert.ok(within.indexOf(files[1]) < within.indexOf(files[0]));
  // a link sorts by its own name: `l` before `l.jsonl`, whose path sorts first
  symlinkSync(join(two, 'é'), join(one, 'p', 'l'));
  writeFileSync(join(one, 'p', 'l.jsonl'), `{"type":"user"}\n`);
  const linked = order({ HOME: home, CLAUDE_CONFIG_DIR: one });
  assert.notDeepEqual(linked, [...linked].sort());
  for (const roots of [one, `${one},${two}`, `${two},${one}`]) {
    const env = { HOME: home, CLAUDE_CONFIG_DIR: roots };
    const d = await discover([], env);
    const e = walkEncoded(env);
    assert.deepEqual(decodeDiscovery(structuredClone(e)), d, roots);
    assert.equal(e.digest, encodeDiscovery(d).digest);
  }
  assert.equal((await discover([], { HOME: home, CLAUDE_CONFIG_DIR: `${two},${one}` })).files.length, 7, 'the linked files once, by the first root');
});

test('the worker walks the default roots exactly as discover() does; it is taken once, and only for the same roots', async () => {
  const { home, config } = configDir();
  const env = { HOME: home, CLAUDE_CONFIG_DIR: config };
  const expected = await discover([], env);

  walkEarly(['summary', '--json'], env);
  assert.deepEqual(await takeEarlyWalk([], env), expected);
  assert.equal(takeEarlyWalk([], env), null, 'taken once (known at once, not awaited)');

  walkEarly(['summary'], env);
  assert.equal(takeEarlyWalk([config], env), null, 'explicit paths: walked by ingest');
  walkEarly(['summary'], env);
  assert.equal(takeEarlyWalk(undefined, { ...env, CLAUDE_CONFIG_DIR: home }), null, 'other roots: walked by ingest');
  walkEarly(['replay', 'channel', 'x.jsonl'], env);
  assert.equal(takeEarlyWalk([], env), null, 'nothing was started');
});

test('the CLI on the default roots (walked early) answers as it does on the same logs named explicitly', () => {
  const { home, config } = configDir();
  const env = { HOME: home, CLAUDE_CONFIG_DIR: config, XDG_CACHE_HOME: join(home, 'cache') };
  const early = cli(['summary', '--db', ':memory:', '--json', '--timezone', 'UTC'], env);
  const named = cli(['summary', join(config, 'projects'), '--db', ':memory:', '--json', '--timezone', 'UTC'], env);
  assert.equal(early.code, 0, early.stderr);
  assert.equal(named.code, 0, named.stderr);
  const a = JSON.parse(early.stdout);
  assert.equal(a.totals.requests, 4);
  assert.equal(a.totals.cache_read, 4000);
  assert.deepEqual(a, JSON.parse(named.stdout));
});

test('runs over a kept store on the default roots (walked early) answer as a fresh store does after appends, new files and removals', () => {
  const { home, config } = configDir();
  const env = { HOME: home, CLAUDE_CONFIG_DIR: config, XDG_CACHE_HOME: join(home, 'cache') };
  const db = join(home, 'kept.duckdb');
  const summary = (store: string) => {
    const r = cli(['summary', '--db', store, '--json', '--timezone', 'UTC'], env);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  assert.equal(summary(db).totals.requests, 4);
  const proj = join(config, 'projects', '-home-USER-demo');
  const main = join(proj, `${SESSION}.jsonl`);
  const last = readFileSync(main, 'utf8').trim().split('\n').at(-1)!;
  appendFileSync(main, last.replaceAll('msg_b', 'msg_e').replaceAll('req_b', 'req_e') + '\n');
  writeFileSync(join(proj, 'agent-c3.jsonl'), last.replaceAll('msg_b', 'msg_f').replaceAll('req_b', 'req_f') + '\n');
  rmSync(join(proj, 'agent-b2.jsonl'));
  const kept = summary(db);
  assert.equal(kept.totals.requests, 5, 'one appended, one new, one removed');
  assert.deepEqual(kept, summary(join(home, 'fresh.duckdb')));
  assert.deepEqual(summary(db), kept, 'and a warm run after it');
});

/**
 * The walk shared by the worker and the main thread (shareWalk): with the units taken alternately
 * (the worker the even ones, this thread the odd ones), so that both parts hold files and every
 * unit's neighbour is the other thread's, the listing is the one discover() gives, its digest too.
 */
test('a shared walk lists what discover() does: parts put in walk order, a file reached twice kept once, problems in order', async () => {
  const home = tempDir('cachelens-shared-');
  const cfg = join(home, 'cfg');
  const projects = join(cfg, 'projects');
  const line = JSON.stringify({ type: 'user', sessionId: SESSION, timestamp: '2026-11-02T10:00:00.000Z', message: { role: 'user', content: 'hi' } }) + '\n';
  // projects in an order where names and paths sort apart (`a-b` before `a/`), sessions with
  // subagents, a transcript directly under the root, an empty project, one that cannot be read,
  // and a hard link to a transcript of an earlier project from a later one
  for (const p of ['a', 'a-b', 'b', 'c', 'd', 'e', 'empty', 'locked']) mkdirSync(join(projects, p), { recursive: true });
  for (const [p, i] of [['a', 1], ['a-b', 2], ['b', 3], ['c', 4], ['d', 5], ['e', 6]] as const) {
    writeFileSync(join(projects, p, `${SESSION.slice(0, -1)}${i}.jsonl`), line);
    mkdirSync(join(projects, p, `s${i}`, 'subagents'), { recursive: true });
    writeFileSync(join(projects, p, `s${i}`, 'subagents', `agent-x${i}.jsonl`), line.repeat(i));
    writeFileSync(join(projects, p, `s${i}`, 'subagents', `agent-x${i}.meta.json`), '{}');
  }
  writeFileSync(join(projects, 'top.jsonl'), line);
  linkSync(join(projects, 'a', `${SESSION.slice(0, -1)}1.jsonl`), join(projects, 'd', 'linked.jsonl'));
  linkSync(join(projects, 'e', `${SESSION.slice(0, -1)}6.jsonl`), join(projects, 'b', 'early.jsonl'));
  writeFileSync(join(projects, 'locked', 'x.jsonl'), line);
  chmodSync(join(projects, 'locked'), 0o000);
  try {
    const env = { HOME: home, CLAUDE_CONFIG_DIR: cfg };
    const expected = await discover([], env);
    assert.ok(expected.files.length >= 20);
    if (process.getuid?.() !== 0) assert.ok(expected.problems.length > 0, 'the locked project is a problem');
    for (const sharing of ['alternate', 'cursor', 'none'] as const) {
      walkEarly(['summary'], env, sharing);
      const got = await takeEarlyWalk([], env);
      assert.deepEqual(got, expected, sharing);
      assert.equal(listingDigest(got!), encodeDiscovery(expected).digest, sharing);
      assert.equal(listingNames(got!), encodeDiscovery(expected).names, sharing);
      // put together from the shared buffer, not walked again on one thread
      assert.equal(fileListing(got!).path(0).buffer instanceof SharedArrayBuffer, sharing !== 'none', sharing);
    }
    // several roots: listed one after the other, then sorted as discover() sorts them
    const other = join(home, 'other', 'projects', 'z');
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, '0.jsonl'), line);
    const two = { HOME: home, CLAUDE_CONFIG_DIR: `${join(home, 'other')},${cfg}` };
    walkEarly(['summary'], two, 'alternate');
    assert.deepEqual(await takeEarlyWalk([], two), await discover([], two));
  } finally {
    chmodSync(join(projects, 'locked'), 0o755);
  }
});

test('a shared walk that meets a symbolic link is walked again on one thread: the same listing as discover()', async () => {
  const { home, config } = configDir();
  // more projects, so that each thread has units, the link (and its loop) in the first one
  for (const p of ['-home-USER-other', '-home-USER-third']) {
    mkdirSync(join(config, 'projects', p), { recursive: true });
    writeFileSync(join(config, 'projects', p, `${SESSION}.jsonl`), '{}\n');
  }
  const env = { HOME: home, CLAUDE_CONFIG_DIR: config };
  const expected = await discover([], env);
  assert.ok(expected.problems.some((p) => p.reason === 'symlink_loop'));
  walkEarly(['summary'], env, 'alternate');
  const got = await takeEarlyWalk([], env);
  assert.deepEqual(got, expected);
  assert.equal(fileListing(got!).path(0).buffer instanceof SharedArrayBuffer, false, 'walked again, on one thread');
});

test("once the walk's result is taken, the worker's listeners do not hold the listing: it can go while the worker lives on", async () => {
  const { home, config } = configDir();
  const encoded = encodeDiscovery(await discover([], { HOME: home, CLAUDE_CONFIG_DIR: config }));
  // a stand-in for the walk worker that never exits: its listeners stay attached
  const worker = new EventEmitter();
  const taken = async (): Promise<WeakRef<object>> => {
    const { result } = walkResult(worker as unknown as Worker, { HOME: home, CLAUDE_CONFIG_DIR: config }, 'none');
    worker.emit('message', encoded);
    const d = await result;
    assert.ok(d && fileCount(d) === 4);
    return new WeakRef(d);
  };
  const listing = await taken();
  await new Promise((r) => setImmediate(r)); // a WeakRef's target is held until the job that made it ends
  releaseHeap(2, 0);
  assert.ok(worker.listenerCount('message') > 0 && worker.listenerCount('exit') > 0, 'the listeners are still attached');
  assert.equal(listing.deref(), undefined, 'the discovery was collected');
});

test('a command that never takes the early walk exits once it has answered or failed, over a warm store whose proof held', { timeout: 240_000 }, () => {
  // the walk's worker waits to be asked to walk once the proof beside the store held; `summary
  // --bogus`, `query --list`, a bad --since… printed their line and then never exited
  const home = tempDir('cachelens-early-exit-');
  const env = { ...process.env, NO_COLOR: '1', HOME: home, CLAUDE_CONFIG_DIR: join(REAL_LOGS, 'marot-spotter'), XDG_CACHE_HOME: join(home, 'cache') };
  const db = join(home, 's.duckdb');
  const run = (args: string[]) => spawnSync(process.execPath, [join(REPO, 'dist/cli.js'), ...args, '--db', db], { encoding: 'utf8', env, timeout: 60_000 });
  // a cold run, then a warm one that keeps the proof (the real logs' directories are old enough to trust)
  for (let i = 0; i < 2; i++) assert.equal(run(['summary']).status, 0);
  assert.ok(existsSync(db + UNCHANGED_SUFFIX), 'the proof is kept');
  for (const [args, code] of [[['summary', '--bogus'], 2], [['summary', '--since', '2026-02-12', '--until', '2026-02-01'], 2], [['whatif', 'ttl', '--to', '2h'], 2], [['query', '--list'], 0]] as const) {
    // `query --list` takes no --db (a usage error): it runs without the one run() adds
    const r = args[0] === 'query' ? spawnSync(process.execPath, [join(REPO, 'dist/cli.js'), ...args], { encoding: 'utf8', env, timeout: 60_000 }) : run([...args]);
    assert.equal(r.signal, null, `${args.join(' ')} did not exit by itself: ${r.stderr}`);
    assert.equal(r.status, code, `${args.join(' ')}: ${r.stderr}`);
  }
  assert.equal(run(['summary']).status, 0, 'and the store still answers');
});
