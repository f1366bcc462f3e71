/**
 * The proof kept beside the store that the logs are as a walk found them (ingest/unchanged.ts):
 * kept only when every directory is older than the walk, it holds until any file's size or mtime
 * or any directory's entries change; a warm run then answers without walking, the early walk's
 * worker checking it before it walks; and an answer after a change is the one a fresh store gives.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { discover } from '../../src/ingest/discover.js';
import { earlyProof, fileCount, fileListing, listingDigest, listingNames, snapshotDiscovery, storeOf, takeEarlyWalk, walkEarly } from '../../src/ingest/early-walk.js';
import { decodeSnapshot, encodeSnapshot } from '../../src/ingest/listing-snapshot.js';
import { TRUST_MARGIN_MS, UNCHANGED_SUFFIX, checkProof, isLocal, keepChecked, keepUnchanged, linesName, proofHolds, readUnchanged, trustedBefore } from '../../src/ingest/unchanged.js';
import { keptListing, readAnswers } from '../../src/store/answers.js';

/** Whether the proof beside `db` (for `roots`) holds; null when there is none. */
function holds(db: string, roots: string[]): boolean | null {
  const p = readUnchanged(db, roots);
  return p && proofHolds(db, p);
}
import { spawnSync } from 'node:child_process';
import { CONDENSE, MAROT_DOV, corpus, repoRoot, tmp } from '../store/helpers.js';

const SESSION = '61d12533-17ec-4bbe-8876-6cdec3eb838c.jsonl';

/** A copy of two real projects, walked, and a proof kept for that walk (every directory trusted: older than now). */
async function proven() {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const db = path.join(tmp(), 's.duckdb');
  const d = await discover([root], {}, true);
  // whatever changes from here on is on a later tick of the clock than any ctime recorded
  await sleep(50);
  // what a run killed while it kept a proof left behind goes with the next one kept
  writeFileSync(`${db}${UNCHANGED_SUFFIX}.12345.tmp`, 'part of a proof');
  assert.equal(keepUnchanged(db, d, listingDigest(d), 'the answers', Date.now()), true);
  assert.equal(existsSync(`${db}${UNCHANGED_SUFFIX}.12345.tmp`), false);
  return { root, db, d };
}

test('a proof kept for a walk holds while nothing changed, with the walk digest, roots and file count', async () => {
  const { db, d } = await proven();
  const p = readUnchanged(db, d.roots);
  assert.ok(p);
  assert.equal(p.digest, listingDigest(d));
  assert.deepEqual(p.roots, d.roots);
  assert.equal(p.files, d.files.length);
  assert.ok(d.dirs && d.dirs.length > 3, 'the walk listed its directories');
  assert.equal(p.dirs, d.dirs.length);
  assert.equal(p.listing, 'the answers');
  assert.equal(proofHolds(db, p), true);
  // latest first: a file's mtime, a directory's ctime
  const times = readFileSync(db + UNCHANGED_SUFFIX, 'utf8').trim().split('\n').slice(1, -1).map((l) => Number(l.split('\t')[l.startsWith('f') ? 2 : 3]));
  assert.equal(times.length, d.files.length + d.dirs.length);
  assert.ok(times.every((t, i) => i === 0 || t <= times[i - 1]), 'the latest first');
  assert.equal(readUnchanged(db, ['/elsewhere']), null, 'a proof for other roots is none');
});

test('a grown, touched, added, removed or renamed file, or a new directory, breaks the proof', async () => {
  const cases: [string, (root: string) => void][] = [
    ['a line appended', (root) => appendFileSync(path.join(root, CONDENSE, SESSION), '{}\n')],
    ['a mtime changed, same size', (root) => {
      const f = path.join(root, CONDENSE, SESSION);
      utimesSync(f, new Date(), new Date(statSync(f).mtimeMs + 5000));
    }],
    ['a transcript added beside the others', (root) => writeFileSync(path.join(root, MAROT_DOV, 'new-session.jsonl'), '{}\n')],
    ['a transcript added in a new directory', (root) => {
      mkdirSync(path.join(root, MAROT_DOV, 'new-session', 'subagents'), { recursive: true });
      writeFileSync(path.join(root, MAROT_DOV, 'new-session', 'subagents', 'agent-a1.jsonl'), '{}\n');
    }],
    ['a new project', (root) => mkdirSync(path.join(root, 'marot-spotter', 'projects', '-home-USER-new'))],
    ['a transcript removed', (root) => rmSync(path.join(root, CONDENSE, SESSION))],
    ['a project renamed', (root) => renameSync(path.join(root, MAROT_DOV), path.join(root, `${MAROT_DOV}-moved`))],
  ];
  for (const [what, change] of cases) {
    const { root, db, d } = await proven();
    change(root);
    assert.equal(holds(db, d.roots), false, what);
  }
});

test('a check that meets only files grown or touched gives their sizes and mtimes now, by their positions; any other change, none', async () => {
  const { root, db, d } = await proven();
  const p = readUnchanged(db, d.roots)!;
  assert.equal(checkProof(db, p), 'held');
  const grown = path.join(root, CONDENSE, SESSION);
  const touched = d.files.find((f) => f.kind === 'subagent')!.path;
  appendFileSync(grown, '{}\n');
  utimesSync(touched, new Date(), new Date(statSync(touched).mtimeMs + 5000));
  const found = checkProof(db, p);
  assert.ok(found && found !== 'held');
  d.files.forEach((f, i) => {
    const st = statSync(f.path);
    assert.equal(found.size[i], st.size, f.path);
    assert.equal(found.mtimeMs[i], st.mtimeMs, f.path);
    assert.equal(found.met[i], f.path === grown || f.path === touched ? 2 : 1, f.path);
  });
  assert.equal(proofHolds(db, p), false, 'it does not hold as it is');
  // what a walk would list otherwise: no sizes to go by
  const cases: [string, (root: string) => void][] = [
    ['a transcript added beside the others', (r) => writeFileSync(path.join(r, MAROT_DOV, 'new-session.jsonl'), '{}\n')],
    ['a new project', (r) => mkdirSync(path.join(r, 'marot-spotter', 'projects', '-home-USER-new'))],
    ['a transcript removed', (r) => rmSync(path.join(r, CONDENSE, SESSION))],
    ['a transcript made a directory', (r) => {
      rmSync(path.join(r, CONDENSE, SESSION));
      mkdirSync(path.join(r, CONDENSE, SESSION));
    }],
    ['a project renamed', (r) => renameSync(path.join(r, MAROT_DOV), path.join(r, `${MAROT_DOV}-moved`))],
  ];
  for (const [what, change] of cases) {
    const again = await proven();
    appendFileSync(path.join(again.root, CONDENSE, SESSION), '{}\n');
    change(again.root);
    assert.equal(checkProof(again.db, readUnchanged(again.db, again.d.roots)!), null, what);
  }
});

test('a proof whose lines were changed anywhere, or one line put in another\'s place, is no proof: the body\'s digest', async () => {
  const { root, db, d } = await proven();
  const text = readFileSync(db + UNCHANGED_SUFFIX, 'utf8');
  const lines = text.split('\n');
  const dirLines = lines.flatMap((l, k) => (l.startsWith('d\t') ? [k] : []));
  assert.ok(dirLines.length >= 2);
  // one directory's line in the place of another's: the counts still hold, and that other directory went unchecked
  const first = lines[dirLines[0]];
  const other = lines[dirLines.at(-1)!];
  const copied = [...lines];
  copied[dirLines.at(-1)!] = first;
  writeFileSync(db + UNCHANGED_SUFFIX, copied.join('\n'));
  writeFileSync(path.join(other.split('\t')[4], 'a-new-session.jsonl'), '{}\n');
  assert.equal(checkProof(db, readUnchanged(db, d.roots)!), null, 'a directory line copied over another');
  rmSync(path.join(other.split('\t')[4], 'a-new-session.jsonl'));
  // a digit of a size, with the file's line holding the same way: still none
  writeFileSync(db + UNCHANGED_SUFFIX, text.replace(/\nf\t(\d)/, (_m, x: string) => `\nf\t${x === '9' ? '8' : '9'}`));
  assert.equal(checkProof(db, readUnchanged(db, d.roots)!), null, 'a size changed');
  void root;
});

test('a proof made over after a check that met grown files holds for the logs as they are, for the answers given; it is made over again, and not over another run\'s', async () => {
  const { root, db, d } = await proven();
  let p = readUnchanged(db, d.roots)!;
  const grown = path.join(root, CONDENSE, SESSION);
  const position = d.files.findIndex((f) => f.path === grown);
  for (const round of [1, 2]) {
    const before = readFileSync(db + UNCHANGED_SUFFIX, 'utf8').split('\n');
    appendFileSync(grown, '{}\n'.repeat(round));
    const found = checkProof(db, p);
    assert.ok(found && found !== 'held');
    const now = await discover([root], {}, true);
    assert.equal(keepChecked(db, p, found, listingDigest(now), `the answers ${round}`), true);
    const q = readUnchanged(db, d.roots)!;
    assert.equal(q.digest, listingDigest(now));
    assert.equal(q.listing, `the answers ${round}`);
    assert.equal(q.names, listingNames(now));
    assert.deepEqual([q.files, q.dirs, q.roots], [p.files, p.dirs, p.roots]);
    assert.notEqual(q.head, p.head, 'a proof of its own');
    assert.equal(checkProof(db, q), 'held');
    // every line as it was but the grown file's, in its place, with its size and mtime now
    const after = readFileSync(db + UNCHANGED_SUFFIX, 'utf8').split('\n');
    assert.equal(after.length, before.length);
    const st = statSync(grown);
    const differ = after.flatMap((line, k) => (k > 0 && line !== before[k] ? [line] : []));
    assert.deepEqual(differ, [`f\t${st.size}\t${st.mtimeMs}\t${position}\t${grown}`]);
    p = q;
  }
  // another run kept a proof since this one was checked: it is not made over, and no proof is left
  appendFileSync(grown, '{}\n');
  const found = checkProof(db, p);
  assert.ok(found && found !== 'held');
  const now = await discover([root], {}, true);
  assert.equal(keepUnchanged(db, now, listingDigest(now), 'another run', Date.now()), true);
  assert.equal(keepChecked(db, p, found, listingDigest(now), 'this run'), false);
  assert.equal(existsSync(db + UNCHANGED_SUFFIX), false);
  assert.deepEqual(readdirSync(path.dirname(db)).filter((n) => n.endsWith('.tmp')), []);
});

test('the sizes a check finds are given to a listing only where the proof\'s lines name its paths: two positions swapped, and they are not', async () => {
  const { root, db, d } = await proven();
  const grown = path.join(root, CONDENSE, SESSION);
  const g = d.files.findIndex((f) => f.path === grown);
  const o = d.files.findIndex((f, i) => i !== g && f.kind === 'main');
  appendFileSync(grown, '{}\n');
  const pathAt = (i: number) => Buffer.from(d.files[i].path);
  const differ = (found: { size: Float64Array; mtimeMs: Float64Array }) => d.files.flatMap((f, i) => (found.size[i] !== f.size || found.mtimeMs[i] !== f.mtimeMs ? [i] : []));
  const p = readUnchanged(db, d.roots)!;
  const found = checkProof(db, p);
  assert.ok(found && found !== 'held');
  assert.deepEqual(differ(found), [g]);
  assert.equal(linesName(db, p, found, differ(found), pathAt), true);
  assert.equal(linesName(db, p, found, differ(found), (i) => pathAt(i === g ? o : i)), false, 'a line that names another path');
  // the grown file's line and another's with their positions swapped: the body's digest no longer
  // holds, and nothing is taken from the check
  const text = readFileSync(db + UNCHANGED_SUFFIX, 'utf8');
  const swap = (line: string) => {
    const parts = line.split('\t');
    if (parts[0] !== 'f') return line;
    if (parts[4] === grown) parts[3] = String(o);
    else if (parts[4] === d.files[o].path) parts[3] = String(g);
    return parts.join('\t');
  };
  writeFileSync(db + UNCHANGED_SUFFIX, text.split('\n').map(swap).join('\n'));
  assert.equal(checkProof(db, readUnchanged(db, d.roots)!), null);
  // nor for a proof replaced since its check
  assert.equal(linesName(db, p, found, differ(found), pathAt), false);
});

test('a discovery made from a listing snapshot and the sizes and mtimes a check found is the walk\'s: its files, paths, digest and names', async () => {
  const root = corpus([CONDENSE, MAROT_DOV]);
  const sub = path.join(root, MAROT_DOV, '4d5611e5-241a-462a-8d15-5122611a9569', 'subagents');
  writeFileSync(path.join(sub, 'agent-a2898e3.meta.json'), '{"agentType":"Explore"}');
  const d = await discover([root], {}, true);
  assert.deepEqual(new Set(d.files.map((f) => f.kind)), new Set(['main', 'subagent', 'meta']));
  const snap = decodeSnapshot(encodeSnapshot(fileListing(d), d.files.map((_, i) => i + 1), d.roots, 'the key')!)!;
  appendFileSync(path.join(root, CONDENSE, SESSION), '{}\n');
  const agent = path.join(sub, 'agent-a2898e3.jsonl');
  utimesSync(agent, new Date(), new Date(statSync(agent).mtimeMs + 5000));
  const now = await discover([root], {}, true);
  const size = Float64Array.from(now.files, (f) => f.size);
  const mtimeMs = Float64Array.from(now.files, (f) => f.mtimeMs);
  const made = snapshotDiscovery(snap, root, size, mtimeMs, listingNames(d))!;
  assert.ok(made);
  assert.equal(listingDigest(made), listingDigest(now));
  assert.equal(listingNames(made), listingNames(now));
  assert.equal(fileCount(made), now.files.length);
  // asked for out of order, as a plan need not ask
  const listing = fileListing(made);
  for (let i = now.files.length - 1; i >= 0; i -= 3) {
    assert.deepEqual(listing.file(i), now.files[i]);
    assert.deepEqual(Buffer.from(listing.path(i)), Buffer.from(now.files[i].path));
  }
  const seen: string[] = [];
  listing.each((p, kind, s, m, i) => {
    assert.deepEqual([kind, s, m], [fileListing(now).kind(i), now.files[i].size, now.files[i].mtimeMs]);
    seen.push(p);
  });
  assert.deepEqual(seen, now.files.map((f) => f.path));
  assert.deepEqual(made.files, now.files);
  assert.deepEqual([made.roots, made.problems, made.defaults], [now.roots, [], true]);
  // a snapshot of another walk, or columns of another length: none
  assert.equal(snapshotDiscovery(snap, root, size, mtimeMs, 'other names'), null);
  assert.equal(snapshotDiscovery(snap, root, size.subarray(1), mtimeMs.subarray(1), listingNames(d)), null);
});

test('no proof is kept for directories changed since the walk began, for a walk that met a link or a problem; a failed keep removes the old one', async () => {
  const { root, db, d } = await proven();
  // every directory's ctime is after 0: none can be trusted
  assert.equal(keepUnchanged(db, d, listingDigest(d), 'the answers', 0), false);
  assert.equal(existsSync(db + UNCHANGED_SUFFIX), false, 'the proof kept before went with it');
  assert.equal(keepUnchanged(db, { ...d, problems: [{ path: root, reason: 'unreadable_file', detail: 'x' }] }, listingDigest(d), 'the answers', Date.now()), false);
  symlinkSync(path.join(root, CONDENSE), path.join(root, 'link'));
  const linked = await discover([root], {}, true);
  assert.equal(linked.dirs, undefined, 'a walk that met a link does not know its directories');
  assert.equal(keepUnchanged(db, linked, listingDigest(linked), 'the answers', Date.now()), false);
});

test('a damaged or cut proof does not hold', async () => {
  const { db, d } = await proven();
  const file = db + UNCHANGED_SUFFIX;
  const whole = readFileSync(file);
  const headEnd = whole.indexOf(0x0a) + 1;
  assert.equal(holds(db, d.roots), true);
  truncateSync(file, whole.length - 10);
  assert.equal(holds(db, d.roots), false, 'cut short');
  writeFileSync(file, whole.subarray(0, headEnd));
  assert.notEqual(holds(db, d.roots), true, 'a header alone');
  writeFileSync(file, Buffer.concat([whole, Buffer.from('\n1\t2\t3\tx')]));
  assert.equal(holds(db, d.roots), false, 'a line after its end');
  const body = whole.toString('latin1');
  writeFileSync(file, Buffer.from(body.replace(/\nf\t\d+\t/, '\nf\t99999\t'), 'latin1'));
  assert.equal(holds(db, d.roots), false, 'a size written wrong');
  writeFileSync(file, body.replace('"build":"source"', '"build":"0123456789abcdef"'));
  assert.equal(readUnchanged(db, d.roots), null, "another build's proof: its walk may list by other rules");
  writeFileSync(file, `{"format":6}\n${body.slice(headEnd)}`);
  assert.equal(readUnchanged(db, d.roots), null, 'a header without its fields');
  // a header naming more lines than the file could hold: none (its check's columns are sized by it)
  writeFileSync(file, body.replace(/"files":\d+/, '"files":100000000000'));
  assert.equal(readUnchanged(db, d.roots), null, 'more files than lines');
  // a position written otherwise than as its digits, or out of range
  for (const [what, to] of [['an exponent', '$11e0\t'], ['a sign', '$1+1\t'], ['empty', '$1\t'], ['a leading zero', '$101\t'], ['out of range', '$199999\t']]) {
    writeFileSync(file, Buffer.from(body.replace(/(\nf\t\d+\t[\d.]+\t)\d+\t/, to), 'latin1'));
    assert.equal(holds(db, d.roots), false, what);
  }
  writeFileSync(file, whole);
  assert.equal(holds(db, d.roots), true, 'the proof as it was');
});

test('trustedBefore: the walk\'s start on the store\'s file system\'s clock, however this machine\'s clock was stepped', () => {
  // the walk began at 9,500 (trusted before 6,500); it is 10,000 now on both clocks
  assert.equal(trustedBefore(10_000, 6_500, 10_000), 6_500);
  // a file system whose clock runs 1 s behind: its ctimes are 1 s earlier
  assert.equal(trustedBefore(9_000, 6_500, 10_000), 5_500);
  // one that runs ahead: never later than the walk's start
  assert.equal(trustedBefore(11_000, 6_500, 10_000), 6_500);
  // the wall clock stepped back by a minute since the start (the file system's time with it), so
  // a directory changed after the walk has a ctime from -50,500 on: the monotonic account of the
  // 500 ms since (what `now` takes when Date.now() is behind it) keeps it untrusted
  assert.equal(trustedBefore(10_000 - 60_000, 6_500, 10_000), 6_500 - 60_000);
  // stepped forward by a minute: Date.now() is ahead of the monotonic account, and `now` takes it
  assert.equal(trustedBefore(10_000 + 60_000, 6_500, 10_000 + 60_000), 6_500);
  // as keepUnchanged calls it, on this machine's clocks
  const start = performance.timeOrigin - TRUST_MARGIN_MS;
  assert.ok(trustedBefore(Date.now(), start) <= start);
});

test('the file systems whose timestamps are this machine\'s clock: the test\'s temp directory\'s, not /proc\'s', () => {
  assert.equal(isLocal(tmp()), true);
  assert.equal(isLocal('/proc'), false);
  assert.equal(isLocal('/no/such/path'), false);
});

test('a directory or a named pipe at the names of the files kept beside the store: no proof, no part left, no wait', { timeout: 30_000 }, async () => {
  const { db, d } = await proven();
  rmSync(db + UNCHANGED_SUFFIX);
  mkdirSync(db + UNCHANGED_SUFFIX);
  assert.equal(keepUnchanged(db, d, listingDigest(d), 'the answers', Date.now()), false);
  assert.deepEqual(readdirSync(path.dirname(db)).filter((n) => n.endsWith('.tmp')), [], 'the part written went');
  assert.equal(readUnchanged(db, d.roots), null);
  rmSync(db + UNCHANGED_SUFFIX, { recursive: true });
  for (const name of [db + UNCHANGED_SUFFIX, `${db}.answers`]) {
    assert.equal(spawnSync('mkfifo', [name]).status, 0);
  }
  // a pipe that no one writes reads as empty, at once: no proof, no answers
  assert.equal(readUnchanged(db, d.roots), null);
  assert.equal(keptListing(db), null);
  assert.equal(readAnswers(db), null);
});

test('a proof is not kept after a walk by a run whose clock was stepped back since it started, when a transcript came after the walk', { timeout: 120_000 }, async () => {
  const home = tmp('cachelens-home-');
  const root = corpus([CONDENSE]);
  const config = path.join(root, 'condense-chat-minmax-bench');
  const db = path.join(tmp(), 's.duckdb');
  const env = { HOME: home, CLAUDE_CONFIG_DIR: config, XDG_CACHE_HOME: path.join(home, 'cache') };
  const run = (extra: NodeJS.ProcessEnv = {}) => {
    const r = cli(['summary', '--db', db, '--json', '--timezone', 'UTC'], { ...env, ...extra });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  // a transcript of new responses, written only after the walk of the warm run below
  const later = path.join(tmp(), 'later.jsonl');
  writeFileSync(later, readFileSync(path.join(root, CONDENSE, SESSION), 'utf8').replaceAll('"id":"msg_', '"id":"msg_later_'));
  await sleep(TRUST_MARGIN_MS + 100);
  const cold = run();
  // the warm run started on a clock a minute ahead, stepped back since: by the wall clock alone,
  // the directory the transcript came into changed a minute before the run began
  const preload = path.join(repoRoot, 'test/fixtures/clock-stepped-back.mjs');
  const injected = path.join(root, CONDENSE, '0b7e3c1f-6e2d-4b8f-8c4a-3d9e8f7a6b5c.jsonl');
  const warm = run({ NODE_OPTIONS: `--import ${preload}`, CLOCK_STEP_MS: '60000', CLOCK_INJECT_SRC: later, CLOCK_INJECT_DST: injected });
  assert.deepEqual(warm, cold, 'it answered for the logs its walk found');
  assert.ok(existsSync(injected), 'the transcript came after its walk');
  assert.equal(existsSync(db + UNCHANGED_SUFFIX), false, 'and it kept no proof');
  const next = run();
  assert.notDeepEqual(next, cold);
  assert.deepEqual(next, freshAnswer(env));
});

function freshAnswer(env: NodeJS.ProcessEnv) {
  const r = cli(['summary', '--db', ':memory:', '--json', '--timezone', 'UTC'], env);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('a proof of many chunks: every line checked once, whichever chunk it starts in; a change anywhere breaks it', async () => {
  const root = tmp('cachelens-many-');
  for (let p = 0; p < 60; p++) {
    const dir = path.join(root, `-home-USER-projects-a-project-with-a-long-name-${p}`);
    mkdirSync(dir);
    for (let f = 0; f < 50; f++) writeFileSync(path.join(dir, `${String(f).padStart(8, '0')}-aaaa-bbbb-cccc-dddddddddddd.jsonl`), '{}\n'.repeat(f % 3));
  }
  const db = path.join(tmp(), 's.duckdb');
  const d = await discover([root], {}, true);
  await sleep(50);
  assert.equal(keepUnchanged(db, d, listingDigest(d), 'the answers', Date.now()), true);
  assert.ok(statSync(db + UNCHANGED_SUFFIX).size > 3 * 128 * 1024, 'several chunks');
  assert.equal(holds(db, d.roots), true);
  for (const [p, f] of [[0, 0], [31, 17], [59, 49]]) {
    appendFileSync(path.join(root, `-home-USER-projects-a-project-with-a-long-name-${p}`, `${String(f).padStart(8, '0')}-aaaa-bbbb-cccc-dddddddddddd.jsonl`), '{}\n');
    assert.equal(holds(db, d.roots), false, `${p}/${f}`);
    const again = await discover([root], {}, true);
    assert.equal(keepUnchanged(db, again, listingDigest(again), 'the answers', Date.now()), true);
    assert.equal(holds(db, d.roots), true);
  }
});

test('a run over the default roots after appends lists the logs from the proof\'s check, without a walk, and keeps the proof made over, whatever answers it; a directory changed, and it walks', { timeout: 120_000 }, async () => {
  const home = tmp('cachelens-home-');
  const root = corpus([CONDENSE, MAROT_DOV]);
  // both projects under one root, as Claude Code keeps them
  const config = path.join(root, 'condense-chat-minmax-bench');
  cpSync(path.join(root, MAROT_DOV), path.join(config, 'projects', path.basename(MAROT_DOV)), { recursive: true });
  const env = { HOME: home, CLAUDE_CONFIG_DIR: config, XDG_CACHE_HOME: path.join(home, 'cache') };
  // each run a process of its own, as the CLI's: a proof trusts only directories older than the process that keeps it
  const ask = async (db: string, question: 'summary' | 'sessions' = 'summary') => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/fixtures/listed-run.ts'), db, question], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { out: unknown; listed: string };
  };
  let fresh = 0;
  const afresh = async (question: 'summary' | 'sessions' = 'summary') => (await ask(path.join(tmp(), `fresh-${fresh++}.duckdb`), question)).out;
  const db = path.join(tmp(), 's.duckdb');
  await sleep(TRUST_MARGIN_MS + 100);
  assert.equal((await ask(db)).listed, 'walk', 'a first run');
  assert.equal((await ask(db)).listed, 'walk', 'a warm run walks and keeps a proof');
  assert.equal((await ask(db)).listed, 'proof');
  const file = path.join(config, 'projects', '-app', SESSION);
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const response = (id: string) => `${lines.find((l) => l.includes('"usage"'))!.replace(/"id":"msg_[^"]+"/, `"id":"${id}"`)}\n`;
  const proofListing = () => readUnchanged(db)?.listing;
  // appended responses, again and again: the delta answers, from the check's listing
  for (const id of ['msg_listed_1', 'msg_listed_2']) {
    appendFileSync(file, response(id));
    const r = await ask(db);
    assert.equal(r.listed, 'check', id);
    assert.deepEqual(r.out, await afresh(), id);
    assert.equal(proofListing(), keptListing(db), `the proof made over after ${id}`);
    assert.equal((await ask(db)).listed, 'proof', `and the next run answered by it (${id})`);
  }
  // a transcript touched, one written shorter, a question of another command: the store answers,
  // from the check's listing, and the proof is made over for its answers all the same
  const other = path.join(config, 'projects', path.basename(MAROT_DOV), '4d5611e5-241a-462a-8d15-5122611a9569.jsonl');
  const changes: [string, () => void, 'summary' | 'sessions'][] = [
    ['a transcript touched', () => utimesSync(other, new Date(), new Date(statSync(other).mtimeMs + 5000)), 'summary'],
    ['a transcript written shorter', () => writeFileSync(file, `${lines.join('\n')}\n`), 'summary'],
    ['sessions after an append', () => appendFileSync(file, response('msg_listed_3')), 'sessions'],
  ];
  for (const [what, change, question] of changes) {
    change();
    const r = await ask(db, question);
    assert.equal(r.listed, 'check', what);
    assert.deepEqual(r.out, await afresh(question), what);
    assert.equal(proofListing(), keptListing(db), `the proof made over: ${what}`);
    assert.equal((await ask(db, question)).listed, 'proof', `the next run answered by it: ${what}`);
  }
  // a proof damaged yet read, the grown transcript's line and another's with their positions
  // swapped: the check's sizes would go to each other's files, and the logs are walked
  const lines0 = readFileSync(db + UNCHANGED_SUFFIX, 'utf8').split('\n');
  const at = (p: string) => lines0.findIndex((l) => l.startsWith('f\t') && l.endsWith(`\t${p}`));
  const [g, o] = [at(file), at(other)];
  assert.ok(g > 0 && o > 0);
  const [pg, po] = [lines0[g].split('\t'), lines0[o].split('\t')];
  [pg[3], po[3]] = [po[3], pg[3]];
  [lines0[g], lines0[o]] = [pg.join('\t'), po.join('\t')];
  writeFileSync(db + UNCHANGED_SUFFIX, lines0.join('\n'));
  appendFileSync(file, response('msg_listed_5'));
  const swapped = await ask(db);
  assert.equal(swapped.listed, 'walk', 'positions swapped');
  assert.deepEqual(swapped.out, await afresh());
  // a transcript added: a directory changed, and the logs are walked
  writeFileSync(path.join(config, 'projects', '-app', '0a6f2b9e-5d1c-4a7e-9b3f-2c8d7e6f5a4b.jsonl'), response('msg_listed_4'));
  const added = await ask(db);
  assert.equal(added.listed, 'walk');
  assert.deepEqual(added.out, await afresh());
});

test('storeOf: the store the arguments name, as yargs would read them, else the default; none for :memory:', () => {
  const env = { XDG_CACHE_HOME: '/c' };
  assert.equal(storeOf(['summary', '--json'], env), '/c/cachelens/store.duckdb');
  assert.equal(storeOf(['summary', '--db', 'x.duckdb'], env), 'x.duckdb');
  assert.equal(storeOf(['summary', '--db=y.duckdb', '--json'], env), 'y.duckdb');
  assert.equal(storeOf(['summary', '--db', ':memory:'], env), null);
  // the CLI expands a `~` the shell left (`--db=~/x`): the worker checks the proof beside that store
  assert.equal(storeOf(['summary', '--db=~/z.duckdb'], { ...env, HOME: '/h' }), '/h/z.duckdb');
  assert.equal(storeOf(['summary', '--db', '~other/z.duckdb'], { ...env, HOME: '/h' }), '~other/z.duckdb');
  // without XDG_CACHE_HOME, the default store is under the HOME the walk is given, not this
  // process's (a walk for a temp HOME checked the proof kept beside the machine's own store)
  assert.equal(storeOf(['summary', '--json'], { HOME: '/h' }), '/h/.cache/cachelens/store.duckdb');
});

/** The listing key of the answers the proof beside `db` was kept with, whichever build kept it (readUnchanged reads only this build's), or null. */
function keptBy(db: string): string | null {
  try {
    return (JSON.parse(readFileSync(db + UNCHANGED_SUFFIX, 'utf8').split('\n')[0]) as { listing: string }).listing;
  } catch {
    return null;
  }
}

/** The built CLI, stopped after a minute: a run that waits on a worker that waits would fail here rather than hang the suite. */
function cli(args: string[], env: NodeJS.ProcessEnv): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'dist/cli.js'), ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr || String(r.error ?? '') };
}

test('the CLI: a warm run keeps the proof, the next answers by it (the early worker checked it), and any change is answered as a fresh store answers', async () => {
  const home = tmp('cachelens-home-');
  const root = corpus([CONDENSE]);
  const config = path.join(root, 'condense-chat-minmax-bench');
  // two projects: a shared walk gives each thread one
  cpSync(path.join(root, CONDENSE), path.join(config, 'projects', '-app-two'), { recursive: true });
  const db = path.join(tmp(), 's.duckdb');
  const env = { HOME: home, CLAUDE_CONFIG_DIR: config, XDG_CACHE_HOME: path.join(home, 'cache') };
  const run = (dbPath = db) => {
    const r = cli(['summary', '--db', dbPath, '--json', '--timezone', 'UTC'], env);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  // a proof trusts only directories older than the run that keeps it, by TRUST_MARGIN_MS
  await sleep(3100);
  const cold = run();
  assert.equal(existsSync(db + UNCHANGED_SUFFIX), false, 'an ingest keeps none');
  assert.deepEqual(run(), cold);
  assert.equal(existsSync(db + UNCHANGED_SUFFIX), true, 'a warm run that walked keeps one');

  // the early walk's worker, started as the CLI starts it (here from the sources, so with a proof
  // of theirs: a proof names the build that kept it), finds the logs as the proof says
  const built = readFileSync(db + UNCHANGED_SUFFIX);
  const walkedNow = await discover([], env, true);
  assert.equal(keepUnchanged(db, walkedNow, listingDigest(walkedNow), keptListing(db)!, Date.now()), true);
  walkEarly(['summary', '--db', db], env);
  const found = await earlyProof(undefined, env);
  assert.ok(found);
  assert.equal(await found.done, true);
  assert.equal(found.proof.store, db);
  assert.equal(found.proof.digest, readUnchanged(db)!.digest);
  // asked to walk after all, it walks: the same listing as discover(), its directories too, in
  // the same order, however the two threads share the walk
  const expected = await discover([], env, true);
  assert.deepEqual(await takeEarlyWalk(undefined, env), expected);
  walkEarly(['summary', '--db', db], env, 'alternate');
  assert.equal(await (await earlyProof(undefined, env))?.done, true);
  assert.deepEqual(await takeEarlyWalk(undefined, env), expected);
  assert.ok(expected.dirs!.length >= 3);
  // a command that never answers from the answers kept beside the store (anatomy, report, …) has
  // no use for the proof: its worker walks at once, and keeps no directories for one
  for (const command of [['anatomy'], ['report'], ['whatif', 'ttl']]) {
    walkEarly([...command, '--db', db], env);
    const checking = await earlyProof(undefined, env);
    // taken before anything is asserted: a worker left waiting to be asked would hold the test
    const walked = await takeEarlyWalk(undefined, env);
    assert.equal(checking, null, command.join(' '));
    assert.deepEqual(walked?.files, expected.files, command.join(' '));
    assert.equal(walked?.dirs, undefined, command.join(' '));
  }
  writeFileSync(db + UNCHANGED_SUFFIX, built);

  assert.deepEqual(run(), cold, 'answered by the proof');
  // a run that does not answer from the answers takes the walk the worker, its proof holding, waits to be asked for
  const rebuilt = cli(['summary', '--db', db, '--json', '--timezone', 'UTC', '--rebuild'], env);
  assert.equal(rebuilt.code, 0, rebuilt.stderr);
  assert.deepEqual(JSON.parse(rebuilt.stdout), cold);
  assert.deepEqual(run(), cold);
  assert.deepEqual(run(), cold);
  const file = path.join(root, CONDENSE, SESSION);
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  // a response appended, then a transcript added: each run answers as a fresh store does
  const response = (id: string) => `${lines.find((l) => l.includes('"usage"'))!.replace(/"id":"msg_[^"]+"/, `"id":"${id}"`)}\n`;
  appendFileSync(file, response('msg_unchanged_test_1'));
  const grown = run();
  assert.notDeepEqual(grown, cold);
  assert.deepEqual(grown, run(':memory:'));
  // only a transcript grown since the proof: its check made the listing, and the proof was made over for the answers given
  assert.equal(keptBy(db), keptListing(db), 'the proof, made over');
  // the answers changed with the logs: a proof kept for other answers is not checked
  const now = await discover([], env, true);
  assert.equal(keepUnchanged(db, now, listingDigest(now), 'the answers before', Date.now()), true);
  walkEarly(['summary', '--db', db], env);
  assert.equal(await earlyProof(undefined, env), null);
  assert.deepEqual(await takeEarlyWalk(undefined, env), await discover([], env, true));
  assert.deepEqual(run(), grown, 'warm again');
  writeFileSync(path.join(root, CONDENSE, '0a6f2b9e-5d1c-4a7e-9b3f-2c8d7e6f5a4b.jsonl'), response('msg_unchanged_test_2'));
  const added = run();
  assert.deepEqual(added, run(':memory:'));
  assert.notDeepEqual(added, grown);

  // transcripts grown since the proof, again and again: each run answers as a fresh store does,
  // and keeps the proof made over for its answers, which the next run without a change answers by
  // (once the directory the transcript was added to is older than a proof trusts)
  await sleep(TRUST_MARGIN_MS + 100);
  assert.deepEqual(run(), added);
  assert.equal(keptBy(db), keptListing(db), 'a warm run keeps a proof');
  let last = added;
  for (const id of ['msg_unchanged_test_3', 'msg_unchanged_test_4']) {
    appendFileSync(file, response(id));
    const next = run();
    assert.notDeepEqual(next, last);
    assert.deepEqual(next, run(':memory:'), id);
    assert.equal(keptBy(db), keptListing(db), `the proof made over after ${id}`);
    assert.deepEqual(run(), next);
    last = next;
  }
  // a transcript written again shorter: the check's listing, answered by the store
  writeFileSync(file, `${lines.join('\n')}\n`);
  const cut = run();
  assert.deepEqual(cut, run(':memory:'));
  assert.notDeepEqual(cut, last);
  // a grown transcript when the listing snapshot is gone: the check's listing cannot be made, the logs are walked
  assert.deepEqual(run(), cut);
  assert.equal(keptBy(db), keptListing(db));
  appendFileSync(file, response('msg_unchanged_test_5'));
  rmSync(`${db}.listing`);
  const walked = run();
  assert.deepEqual(walked, run(':memory:'));
  assert.notDeepEqual(walked, cut);
});
