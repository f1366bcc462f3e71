/**
 * Odd files in the log tree (SPEC §1.1, §8): directories named like transcripts, files the run may
 * not read, files that vanish between listing and reading, symlink loops, FIFOs, files growing
 * while they are read. Each is reported with its path and reason, never fatal, and the usage of
 * every readable file is counted exactly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { approx, assistant, removeDir, runCli, skipsByReason, summary, tempDir, tokens, usage, user, writeLog } from './helpers.js';

function setup(t: { after: (fn: () => void) => void }) {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  return { dir, logs: path.join(dir, 'logs'), db: path.join(dir, 's.duckdb') };
}

const req = (msg: string, input: number) => assistant({ msg, usage: usage(input, 0, 0, 0) });

test('a directory named x.jsonl is walked as a directory, not read as a file', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/a.jsonl', [req('m1', 1)]);
  writeLog(logs, 'proj/x.jsonl/inner.jsonl', [req('m2', 10)]);
  mkdirSync(path.join(logs, 'proj/empty.jsonl'));
  mkdirSync(path.join(logs, 'proj/nested.meta.json'));
  const s = await summary([logs], db);
  assert.equal(s.totals.input, 11);
  assert.equal(s.quality.files, 2);
  assert.deepEqual(s.quality.skipped, []);
  // the same directory given as the path argument
  const direct = await summary([path.join(logs, 'proj/x.jsonl')], path.join(path.dirname(db), 'direct.duckdb'));
  assert.equal(direct.totals.input, 10);
});

/**
 * Permission denied is real here: as root (who may read anything) the run drops
 * CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH with setpriv; as any other user the chmod binds by itself.
 */
test('unreadable files and directories are reported with their paths; a later run reads them once readable', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/ok.jsonl', [req('m1', 1)]);
  const locked = writeLog(logs, 'proj/locked.jsonl', [req('m2', 10)]);
  const closedDir = path.join(logs, 'proj/closed');
  writeLog(logs, 'proj/closed/inner.jsonl', [req('m3', 100)]);
  const meta = writeLog(logs, 'proj/s1/subagents/agent-a1.meta.json', JSON.stringify({ agentType: 'Explore' }));
  writeLog(logs, 'proj/s1/subagents/agent-a1.jsonl', [assistant({ msg: 'm4', usage: usage(1000, 0, 0, 0), session: 's1', extra: { agentId: 'a1', isSidechain: true } })]);
  chmodSync(locked, 0o000);
  chmodSync(closedDir, 0o000);
  chmodSync(meta, 0o000);
  chmodSync(path.dirname(db), 0o777);
  const s = await summary([logs], db, { asNobody: true });
  assert.equal(s.totals.input, 1001);
  // in the order met: while listing, reading meta.json files, reading transcripts
  assert.deepEqual(skipsByReason(s), { unreadable_file: { count: 3, at: ['closed', 'agent-a1.meta.json', 'locked.jsonl'] } });
  // Node's message already starts with the code: said once (it was 'EACCES: EACCES: permission denied, …')
  for (const e of s.quality.skipped[0].examples) assert.match(e.detail, /^EACCES: permission denied, (open|scandir) '/);

  chmodSync(locked, 0o644);
  chmodSync(closedDir, 0o755);
  chmodSync(meta, 0o644);
  const again = await summary([logs], db, { asNobody: true });
  assert.equal(again.totals.input, 1111);
  assert.deepEqual(again.quality.skipped, []);
});

test('a file that vanishes between listing and reading is reported as vanished; the rest is counted', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/a.jsonl', [req('m1', 1)]);
  writeLog(logs, 'proj/b.jsonl', [req('m2', 10)]);
  writeLog(logs, 'proj/s1/subagents/agent-a1.meta.json', JSON.stringify({ agentType: 'Explore' }));
  const s = await summary([logs], db, { fsFaults: { FAULT_VANISH: 'b.jsonl,agent-a1.meta.json' } });
  // in either order: .meta.json files are read while the transcripts are
  assert.deepEqual([...s.ran.faults].sort(), ['vanish agent-a1.meta.json', 'vanish b.jsonl']);
  assert.equal(s.totals.input, 1);
  assert.deepEqual(skipsByReason(s), { vanished_file: { count: 2, at: ['agent-a1.meta.json', 'b.jsonl'] } });
  // the next run no longer lists it: nothing to report, nothing stale kept
  const again = await summary([logs], db);
  assert.equal(again.totals.input, 1);
  assert.deepEqual(again.quality.skipped, []);
});

test('a transcript read before that vanishes while changed is retired: its old usage is not kept as if read', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/a.jsonl', [req('m1', 1)]);
  const b = writeLog(logs, 'proj/b.jsonl', [req('m2', 10)]);
  assert.equal((await summary([logs], db)).totals.input, 11);
  appendFileSync(b, req('m3', 100) + '\n');
  const s = await summary([logs], db, { fsFaults: { FAULT_VANISH: 'b.jsonl' } });
  assert.equal(s.totals.input, 1);
  assert.deepEqual(skipsByReason(s), { vanished_file: { count: 1, at: ['b.jsonl'] } });
});

test('a file rewritten to the same size with another mtime is read again whole, not taken for an empty append', async (t) => {
  const { logs, db } = setup(t);
  // 40 requests of 100 and one of 200 in the middle: beyond the first and last KiB the fingerprint covers
  const lines = Array.from({ length: 41 }, (_, i) => req(`m${i}`, i === 20 ? 200 : 100));
  const a = writeLog(logs, 'proj/a.jsonl', lines);
  assert.equal((await summary([logs], db)).totals.input, 4_200);
  // an edit in the middle, of the same length, with an mtime a day earlier than the one stored
  writeFileSync(a, readFileSync(a, 'utf8').replace('"input_tokens":200', '"input_tokens":900'));
  execFileSync('touch', ['-d', '@' + String(Math.floor(Date.now() / 1000) - 86_400), a]);
  assert.equal((await summary([logs], db)).totals.input, 4_900);
  assert.equal((await summary([logs], db)).totals.input, 4_900, 'and stays so');
});

test('symlink loops, self-links and dangling links are reported; a file linked twice is counted once', async (t) => {
  const { dir, logs, db } = setup(t);
  writeLog(logs, 'proj/a.jsonl', [req('m1', 1)]);
  writeLog(dir, 'elsewhere/linked.jsonl', [req('m2', 10)]);
  symlinkSync('..', path.join(logs, 'proj/up'));
  mkdirSync(path.join(logs, 'ring/one'), { recursive: true });
  symlinkSync('../two', path.join(logs, 'ring/one/to-two'));
  mkdirSync(path.join(logs, 'ring/two'));
  symlinkSync('../one', path.join(logs, 'ring/two/to-one'));
  symlinkSync('self.jsonl', path.join(logs, 'proj/self.jsonl'));
  symlinkSync('nowhere.jsonl', path.join(logs, 'proj/dangling.jsonl'));
  symlinkSync(path.join(dir, 'elsewhere/linked.jsonl'), path.join(logs, 'proj/link1.jsonl'));
  symlinkSync(path.join(dir, 'elsewhere/linked.jsonl'), path.join(logs, 'proj/link2.jsonl'));
  const s = await summary([logs], db);
  assert.equal(s.totals.input, 11);
  assert.equal(s.totals.requests, 2);
  assert.deepEqual(skipsByReason(s), {
    // ring/two is first reached through one/to-two (no loop yet); one/to-two/to-one closes the ring
    symlink_loop: { count: 3, at: ['self.jsonl', 'up', 'to-one'] },
    vanished_file: { count: 1, at: ['dangling.jsonl'] },
  });
});

test('a FIFO named like a transcript is not opened (the run does not hang), found in a walk or given as a path, and is reported', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/a.jsonl', [req('m1', 1)]);
  const fifo = path.join(logs, 'proj/pipe.jsonl');
  execFileSync('mkfifo', [fifo]);
  // and a link to it, named as a transcript too
  symlinkSync(fifo, path.join(logs, 'proj/to-pipe.jsonl'));
  const s = await summary([logs], db);
  assert.equal(s.totals.input, 1);
  // once, as one file linked twice is read once (second review: the pipe and the link to it were 2)
  const once = [['unreadable_file', 1, [`${fifo}: a pipe, not a file: not read`]]];
  assert.deepEqual(s.quality.skipped.map((g) => [g.reason, g.count, g.examples.map((e) => `${e.file}: ${e.detail}`)]), once);
  // and once when given as a path beside the directory that holds it
  const both = await summary([logs, fifo], db);
  assert.deepEqual(both.quality.skipped.map((g) => [g.reason, g.count, g.examples.map((e) => `${e.file}: ${e.detail}`)]), once);
  const direct = await summary([fifo, path.join(logs, 'proj/a.jsonl')], db);
  assert.equal(direct.totals.input, 1);
  assert.deepEqual(Object.keys(skipsByReason(direct)), ['unreadable_file']);
});

test('pipes named as transcripts under the default roots (the walk shared by two threads) are each said once, on every run', async (t) => {
  const { dir, db } = setup(t);
  const config = path.join(dir, 'config');
  for (const p of ['p1', 'p2', 'p3']) writeLog(config, `projects/${p}/s-${p}.jsonl`, [req(`m-${p}`, 1)]);
  // one directly under the root (a unit of its own), one inside a project
  const top = path.join(config, 'projects/pipe.jsonl');
  const inner = path.join(config, 'projects/p2/x.jsonl');
  execFileSync('mkfifo', [top]);
  execFileSync('mkfifo', [inner]);
  // in the walk's order, as discover() lists files: p2/ before pipe.jsonl
  const said = [['unreadable_file', 2, [`${inner}: a pipe, not a file: not read`, `${top}: a pipe, not a file: not read`]]];
  for (const run of ['first', 'second']) {
    const r = await runCli(['summary', '--db', db, '--json'], { env: { CLAUDE_CONFIG_DIR: config } });
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout) as Awaited<ReturnType<typeof summary>>;
    assert.equal(s.totals.input, 3, run);
    assert.deepEqual(s.quality.skipped.map((g) => [g.reason, g.count, g.examples.map((e) => `${e.file}: ${e.detail}`)]), said, run);
  }
  // no proof kept beside the store while a walk meets a problem: every run walks, to say it again
  assert.equal(existsSync(`${db}.unchanged`), false);
});

test('a pipe or device given as a path is an unreadable_file skip that says what it is: it read "ENOTDIR: not a directory, scandir", or vanished for a <(cat s.jsonl)', async (t) => {
  const { dir, logs, db } = setup(t);
  writeLog(logs, 'proj/a.jsonl', [req('m1', 1)]);
  mkdirSync(path.join(dir, 'pipes'));
  const fifo = path.join(dir, 'pipes', 'pipe.jsonl');
  execFileSync('mkfifo', [fifo]);
  const s = await summary([fifo, '/dev/null', path.join(logs, 'proj/a.jsonl')], db);
  assert.equal(s.totals.input, 1);
  assert.deepEqual(s.quality.skipped.map((g) => [g.reason, g.examples.map((e) => `${e.file}: ${e.detail}`)]), [
    ['unreadable_file', [`${fifo}: a pipe, not a file: not read (give the transcript file itself)`, '/dev/null: a device, not a file: not read (give the transcript file itself)']],
  ]);
});

test('meta.json files that are not JSON objects are reported; the chain falls back to its spawning tool_use', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/s1/subagents/agent-a1.meta.json', '{"agentType": "Expl');
  writeLog(logs, 'proj/s1/subagents/agent-a2.meta.json', '["Explore"]');
  writeLog(logs, 'proj/s1/subagents/agent-a1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 0, 0, 0), session: 's1', extra: { agentId: 'a1' } })]);
  writeLog(logs, 'proj/s1/subagents/agent-a2.jsonl', [assistant({ msg: 'm2', usage: usage(10, 0, 0, 0), session: 's1', extra: { agentId: 'a2' } })]);
  const s = await summary([logs], db);
  assert.equal(s.totals.input, 11);
  assert.deepEqual(skipsByReason(s), {
    invalid_json: { count: 1, at: ['agent-a1.meta.json:1'] },
    not_an_object: { count: 1, at: ['agent-a2.meta.json:1'] },
  });
  const again = await summary([logs], db);
  assert.deepEqual(again.quality.skipped, s.quality.skipped, 'an unchanged bad meta.json is still reported on the next run');
});

test('a meta.json that begins with a byte-order mark is read, as transcripts are: no invalid_json, its agent type kept', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/s1/subagents/agent-a1.meta.json', '\ufeff' + JSON.stringify({ agentType: 'Explore' }));
  writeLog(logs, 'proj/s1/subagents/agent-a1.jsonl', [assistant({ msg: 'm1', usage: usage(1, 0, 0, 0), session: 's1', extra: { agentId: 'a1' } })]);
  const s = await summary([logs], db);
  assert.deepEqual(s.quality.skipped, []);
  const a = await runCli(['anatomy', logs, '--db', db, '--json']);
  assert.equal(a.code, 0, a.stderr);
  assert.deepEqual((JSON.parse(a.stdout) as { by_agent_type: { agent_type: string }[] }).by_agent_type.map((r) => r.agent_type), ['Explore']);
});

test('a transcript saved as UTF-16 (LE with a BOM, BE without) is skipped line by line with a detail that says so, not only "not a JSON object"', async (t) => {
  const { logs, db } = setup(t);
  const text = [user('hi'), assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) })].join('\n') + '\n';
  writeLog(logs, 'proj/le.jsonl', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
  writeLog(logs, 'proj/be.jsonl', Buffer.from(text, 'utf16le').swap16());
  writeLog(logs, 'proj/ok.jsonl', ['{"type": 7'].join('\n') + '\n'); // a line that is just not JSON keeps its own words
  const s = await summary([logs], db);
  assert.equal(s.totals.requests, 0);
  // every skip group: the LE file's last "line", the NUL after its last newline (0A 00), is the rest of
  // that newline, not a line still being written (it was an incomplete_last_line skip besides)
  assert.deepEqual(s.quality.skipped.map((g) => g.reason), ['invalid_json'], JSON.stringify(s.quality.skipped));
  const bad = s.quality.skipped.find((g) => g.reason === 'invalid_json')!;
  assert.equal(bad.count, 5, JSON.stringify(bad));
  for (const e of bad.examples) {
    if (path.basename(e.file) === 'ok.jsonl') assert.doesNotMatch(e.detail ?? '', /UTF-16/);
    else assert.match(e.detail ?? '', /^UTF-16 text, not UTF-8 \(/, `${path.basename(e.file)}:${e.line}`);
  }
  // the LE file alone (as Python's encode("utf-16") writes it: a BOM, then LE): its two lines skipped, nothing else
  const one = path.join(path.dirname(db), 'one.duckdb');
  const le = await summary([path.join(logs, 'proj/le.jsonl')], one);
  assert.deepEqual(le.quality.skipped.map((g) => [g.reason, g.count]), [['invalid_json', 2]]);
  const again = await summary([path.join(logs, 'proj/le.jsonl')], one);
  assert.deepEqual(again.quality.skipped, le.quality.skipped, 'a second run reads it the same');
  // the text says it too, once per file, in the words of --json: it listed `skipped invalid_json: 5` and the lines alone
  const out = await runCli(['summary', logs, '--db', db]);
  assert.equal(out.code, 0, out.stderr);
  const said = out.stdout.split('\n').filter((l) => l.includes('UTF-16'));
  const hint = 'UTF-16 text, not UTF-8 (Claude Code writes UTF-8: convert the file, e.g. iconv -f UTF-16 -t UTF-8)';
  assert.deepEqual(said.sort(), [`    ${path.join(logs, 'proj/be.jsonl')}: ${hint} (2 lines)`, `    ${path.join(logs, 'proj/le.jsonl')}: ${hint} (2 lines)`]);
  assert.deepEqual(bad.utf16_files, [{ file: path.join(logs, 'proj/be.jsonl'), lines: 2 }, { file: path.join(logs, 'proj/le.jsonl'), lines: 2 }]);
});

test('summary\'s text names a UTF-16 file whose lines are not among the 5 examples of their reason (5 bad lines of a file before it by path)', async (t) => {
  const { logs, db } = setup(t);
  writeLog(logs, 'proj/0000bad.jsonl', Array.from({ length: 5 }, () => 'garbage'));
  // a UTF-16LE copy of a real log (or of a made one, where the real logs are not there)
  const real = '/work/shared/real-logs/marot-spotter/projects/-home-USER-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl';
  const text = existsSync(real) ? readFileSync(real, 'utf8') : [user('hi'), assistant({ msg: 'm1', usage: usage(1, 2, 3, 4) })].join('\n') + '\n';
  const lines = text.split('\n').filter((l) => l.trim() !== '').length;
  const le = writeLog(logs, 'proj/le.jsonl', Buffer.from(text, 'utf16le'));
  const out = await runCli(['summary', logs, '--db', db]);
  assert.equal(out.code, 0, out.stderr);
  const hint = 'UTF-16 text, not UTF-8 (Claude Code writes UTF-8: convert the file, e.g. iconv -f UTF-16 -t UTF-8)';
  assert.deepEqual(out.stdout.split('\n').filter((l) => l.includes('UTF-16')), [`    ${le}: ${hint} (${lines.toLocaleString('en-US')} lines)`]);
  const s = await summary([logs], db);
  const bad = s.quality.skipped.find((g) => g.reason === 'invalid_json')!;
  assert.ok(bad.examples.every((e) => path.basename(e.file) === '0000bad.jsonl'), 'the examples are the other file\'s');
  assert.deepEqual(bad.utf16_files, [{ file: le, lines }]);
  // the report's data quality says it too, under the examples
  const out2 = path.join(path.dirname(db), 'r.html');
  const report = await runCli(['report', logs, '--db', db, '--out', out2]);
  assert.equal(report.code, 0, report.stderr);
  const page = readFileSync(out2, 'utf8').replace(/<wbr>/g, '').replace(/<[^>]*>/g, '');
  assert.ok(page.includes(`${le}: ${hint} (${lines.toLocaleString('en-US')} lines)`), 'the page names the UTF-16 file');
});

test('a line of NUL bytes (a zero-filled block, as a crash leaves) in a UTF-8 transcript is said as such, not as UTF-16 text; the lines around it count', async (t) => {
  // any failed line with a NUL in its first two bytes was 'UTF-16 text, not UTF-8'
  const { logs, db } = setup(t);
  const ok = (m: string, n: number) => assistant({ msg: m, usage: usage(n, 0, 0, 0) });
  writeLog(logs, 'proj/s1.jsonl', Buffer.concat([Buffer.from(ok('m1', 1) + '\n'), Buffer.alloc(4096), Buffer.from('\n' + ok('m2', 10) + '\n')]));
  // NULs, then a line's text written after them (the next append after the crash)
  writeLog(logs, 'proj/s2.jsonl', Buffer.concat([Buffer.alloc(100), Buffer.from(ok('m3', 100) + '\n'), Buffer.from('\0x\0y\n'), Buffer.from(ok('m4', 1000) + '\n')]));
  const s = await summary([logs], db);
  assert.equal(s.totals.input, 1011, 'the lines around them count');
  assert.deepEqual(s.quality.skipped.map((g) => g.reason), ['invalid_json'], JSON.stringify(s.quality.skipped));
  const details = new Map(s.quality.skipped[0]!.examples.map((e) => [`${path.basename(e.file)}:${e.line}`, e.detail ?? '']));
  assert.equal(details.size, 3, JSON.stringify([...details]));
  for (const [at, detail] of details) assert.doesNotMatch(detail, /UTF-16/, at);
  assert.equal(details.get('s1.jsonl:2'), '4,096 NUL bytes (a zero-filled block, as a crash leaves)');
  assert.match(details.get('s2.jsonl:1')!, /^opens with 100 NUL bytes \(a zero-filled block, as a crash leaves\), then: /u);
  // a short line with a NUL or two is no block: its parser's words alone
  assert.doesNotMatch(details.get('s2.jsonl:2')!, /NUL|UTF-16/);
});

test('a report stopped while it is written leaves the previous report whole, and the next run leaves no part of it', async (t) => {
  const { dir, logs, db } = setup(t);
  writeLog(logs, 'proj/s1.jsonl', [req('m1', 1), req('m2', 10)]);
  const out = path.join(dir, 'report.html');
  const first = await runCli(['report', logs, '--db', db, '--out', out]);
  assert.equal(first.code, 0, first.stderr);
  const before = readFileSync(out, 'utf8');
  assert.ok(before.trimEnd().endsWith('</html>'));
  writeLog(logs, 'proj/s2.jsonl', [req('m3', 100)]);
  const killed = await runCli(['report', logs, '--db', db, '--out', out], { fsFaults: { FAULT_KILL_WRITE: 'report.html' } });
  assert.equal(killed.signal, 'SIGKILL', killed.stderr);
  assert.equal(killed.faults.length, 1, 'the write was under way when the run was killed');
  // written straight to --out, the page was cut in half
  assert.equal(readFileSync(out, 'utf8'), before);
  const next = await runCli(['report', logs, '--db', db, '--out', out]);
  assert.equal(next.code, 0, next.stderr);
  assert.ok(readFileSync(out, 'utf8').trimEnd().endsWith('</html>'));
  assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('report.html')), ['report.html']);
});

test('a report that cannot be written (a full disk) is one line, and leaves nothing beside it', async (t) => {
  const { dir, logs, db } = setup(t);
  writeLog(logs, 'proj/s1.jsonl', [req('m1', 1)]);
  // cachelens makes no directory for --out (test/faults/cli.test.ts)
  mkdirSync(path.join(dir, 'sub'));
  const out = path.join(dir, 'sub', 'report.html');
  const full = await runCli(['report', logs, '--db', db, '--out', out], { fsFaults: { FAULT_FULL_WRITE: 'report.html' } });
  assert.equal(full.code, 2, full.stderr);
  assert.equal(full.faults.length, 1, 'the write failed');
  assert.match(full.stderr, /^cachelens: --out .*report\.html: cannot write the report: ENOSPC/);
  assert.deepEqual(readdirSync(path.join(dir, 'sub')), [], 'no page, whole or in part');
});

test('a file growing while it is read: the run counts what was there when it opened the file, the next run the rest', async (t) => {
  const { dir, logs, db } = setup(t);
  const tail = assistant({ msg: 'm3', usage: usage(100, 0, 0, 0) });
  const file = writeLog(logs, 'proj/s1.jsonl', user('hi') + '\n' + req('m1', 1) + '\n' + req('m2', 10) + '\n' + tail.slice(0, 40));
  const grow = path.join(dir, 'grow.bin');
  writeFileSync(grow, tail.slice(40) + '\n' + req('m4', 1000) + '\n');
  const s = await summary([logs], db, { fsFaults: { FAULT_GROW: 's1.jsonl', FAULT_GROW_DATA: grow } });
  assert.deepEqual(s.ran.faults, ['grow s1.jsonl']);
  assert.equal(readFileSync(file, 'utf8').split('\n').length, 6, 'the file did grow during the run');
  assert.equal(s.totals.input, 11);
  assert.deepEqual(skipsByReason(s), { incomplete_last_line: { count: 1, at: ['s1.jsonl:4'] } });
  const next = await summary([logs], db);
  assert.equal(next.totals.input, 1111);
  assert.deepEqual(next.quality.skipped, []);
  assert.equal(next.quality.lines, 5);
});

/**
 * A real writer: a child process appends requests in random pieces (half lines included) to two
 * transcripts, one created mid-way, while cachelens runs again and again on the same store.
 * Every run succeeds and never counts more than was written; once the writer stops, one more run
 * gives exactly the written totals, equal to a rebuild.
 */
test('files written by another process during several runs end with exact totals', async (t) => {
  const { dir, logs, db } = setup(t);
  mkdirSync(path.join(logs, 'proj'), { recursive: true });
  const writer = startWriter([path.join(logs, 'proj/w1.jsonl'), path.join(logs, 'proj/w2.jsonl')]);
  await writer.started;
  const seen: number[] = [];
  try {
    for (let i = 0; i < 4; i++) {
      const s = await summary([logs], db);
      for (const g of s.quality.skipped) assert.equal(g.reason, 'incomplete_last_line', JSON.stringify(g));
      seen.push(s.totals.requests);
    }
  } finally {
    writer.child.stdin!.end();
  }
  const written = JSON.parse(await writer.done) as { requests: number; input: number; output: number };
  const last = await summary([logs], db);
  assert.ok(written.requests > seen[0], `the writer kept writing during the runs (${seen.join(', ')} → ${written.requests})`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] >= seen[i - 1], `runs never lose requests: ${seen.join(', ')}`);
  assert.deepEqual(tokens(last.totals), { requests: written.requests, input: written.input, output: written.output, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0, unpriced_requests: 0 });
  assert.deepEqual(last.quality.skipped, []);
  const rebuilt = await summary([logs], path.join(dir, 'fresh.duckdb'));
  assert.deepEqual(tokens(rebuilt.totals), tokens(last.totals));
  approx(rebuilt.totals.usd, last.totals.usd ?? NaN, 'usd (summed in another order)');
  assert.deepEqual(rebuilt.quality, last.quality);
});

/** Appends requests to the files in random pieces until stdin closes; prints what it wrote. */
function startWriter(files: string[]): { child: ChildProcess; started: Promise<void>; done: Promise<string> } {
  const code = `
    import { appendFileSync } from 'node:fs';
    const files = ${JSON.stringify(files)};
    let requests = 0, input = 0, output = 0, n = 0, stop = false, seed = 7;
    const rand = (k) => (seed = (seed * 1103515245 + 12345) % 2147483648) % k;
    process.stdin.on('end', () => (stop = true)).resume();
    const line = (i) => JSON.stringify({ type: 'assistant', sessionId: 'w', timestamp: new Date(Date.UTC(2025, 2, 1, 10) + i * 1000).toISOString(),
      requestId: 'req_' + i, message: { id: 'msg_' + i, model: 'claude-opus-4-6', role: 'assistant',
      content: [{ type: 'text', text: 'x'.repeat(rand(3000)) }], usage: { input_tokens: i % 7 + 1, output_tokens: i % 5 } } }) + '\\n';
    process.stderr.write('started\\n');
    const step = () => {
      const file = files[n < 40 ? 0 : n % 2];
      const text = line(n);
      const cut = rand(text.length);
      appendFileSync(file, text.slice(0, cut));
      setTimeout(() => {
        appendFileSync(file, text.slice(cut));
        requests++; input += n % 7 + 1; output += n % 5; n++;
        if (stop) process.stdout.write(JSON.stringify({ requests, input, output }));
        else setTimeout(step, rand(3));
      }, rand(3));
    };
    step();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const started = new Promise<void>((resolve) => child.stderr!.once('data', () => resolve()));
  const done = new Promise<string>((resolve) => child.on('close', () => resolve(out)));
  return { child, started, done };
}
