/** `npm start` (cachelens start): the report of the user's logs, or of sample-logs/ when there are none — saying which. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REAL_LOGS, REPO, cli, tempDir } from '../helpers/corpus.js';

function embedded(file: string): any {
  const m = /<script type="application\/json" id="cachelens-data">([\s\S]*?)<\/script>/.exec(readFileSync(file, 'utf8'));
  assert.ok(m, 'the report embeds its data');
  return JSON.parse(m[1]);
}

test('with no logs (an empty ~/.claude/projects), start reports the sample corpus and says so', () => {
  const home = tempDir('cachelens-home-');
  mkdirSync(join(home, '.claude/projects/empty'), { recursive: true });
  const out = join(home, 'report.html');
  const r = cli(['start', '--db', ':memory:', '--out', out, '--json'], { HOME: home, CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: '' });
  assert.equal(r.code, 0, r.stderr);
  // --json says it is of the sample corpus, and that its USD leaves out the requests without a price, as
  // the page does (a script read the sample's totals as the user's, and as the whole bill; review)
  const json = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(json), ['path', 'roots', 'sections_failed', 'totals', 'sample']);
  assert.equal(json.sample, true);
  assert.equal(json.path, out);
  const data = embedded(out);
  assert.deepEqual(json.roots, data.meta.roots);
  assert.deepEqual(json.totals, { usd: data.headline.usd, weight: data.headline.weight, unpriced_requests: data.headline.unpricedRequests });
  assert.ok(json.totals.unpriced_requests > 0, 'the sample corpus holds a model without a price');
  // where it looked is named (it said 'no Claude Code logs found here')
  assert.match(r.stderr, new RegExp(`^cachelens: no Claude Code logs found \\(no transcript \\(\\*\\.jsonl\\) in ${join(home, '.claude/projects')}\\); using the sample corpus in `, 'm'));
  const none = cli(['start', '--db', ':memory:', '--out', out], { HOME: tempDir('cachelens-home-'), CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: '' });
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stderr, /^cachelens: no Claude Code logs found \(none of .*\/\.config\/claude, .*\/\.claude holds a projects\/ directory\); using the sample corpus in /m);
  const d = embedded(out);
  assert.ok(d.meta.roots.some((root: string) => root.endsWith('sample-logs/projects')));
  assert.ok(d.headline.requests > 200);
  assert.deepEqual(d.replay.runs.map((x: any) => x.kind), ['channel', 'session']);
  // the page says so too, in its heading and tab title: opened later, it is not read as the user's own bill
  const page = readFileSync(out, 'utf8');
  assert.match(page, /<h1[^>]*>cachelens report of the sample corpus \(no Claude Code logs found\)<\/h1>/);
  assert.match(page, /<title>cachelens report of the sample corpus/);
});

test('with logs under CLAUDE_CONFIG_DIR, start reports those', () => {
  const home = tempDir('cachelens-home-');
  const out = join(home, 'report.html');
  const r = cli(['start', '--db', ':memory:', '--out', out, '--json'], { HOME: home, CLAUDE_CONFIG_DIR: join(REAL_LOGS, 'chiphuyen-sniffly') });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /reading .*chiphuyen-sniffly/);
  const json = JSON.parse(r.stdout);
  assert.equal(json.sample, false);
  assert.deepEqual(json.roots, [join(REAL_LOGS, 'chiphuyen-sniffly/projects')]);
  assert.equal(json.totals.unpriced_requests, 0);
  const d = embedded(out);
  assert.equal(d.headline.requests, 62);
  assert.equal(d.replay, undefined, 'no replay is run on a user\'s own logs unless asked');
  assert.doesNotMatch(readFileSync(out, 'utf8'), /sample corpus/);
});

test('with ~/.claude/projects there but unreadable, start reads it and says so, not the sample corpus in its place', (t) => {
  const home = tempDir('cachelens-home-');
  const projects = join(home, '.claude/projects');
  mkdirSync(join(projects, '-home-u-app'), { recursive: true });
  copyFileSync(join(REAL_LOGS, 'chiphuyen-sniffly/projects/-Users-chip-dev-ai-music/d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl'), join(projects, '-home-u-app/s.jsonl'));
  chmodSync(projects, 0o000);
  t.after(() => chmodSync(projects, 0o755));
  const out = join(home, 'report.html');
  // root reads anything: drop the two capabilities that let it, so that the mode binds as for anyone
  const cmd = [process.execPath, join(REPO, 'dist/cli.js'), 'start', '--db', ':memory:', '--out', out];
  const asUser = process.getuid?.() === 0 ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--inh-caps=-dac_override,-dac_read_search', ...cmd] : cmd;
  const r = spawnSync(asUser[0]!, asUser.slice(1), { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', HOME: home, CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: '' } });
  assert.equal(r.status, 0, r.stderr);
  // it said "no Claude Code logs found …; using the sample corpus" and reported the sample's 271 requests
  assert.doesNotMatch(r.stderr, /sample corpus/);
  assert.match(r.stderr, new RegExp(`^cachelens: reading ${projects} \\(no transcript could be read there: ${projects}: permission denied\\)$`, 'm'));
  // and not, after it, that there is none there
  assert.doesNotMatch(r.stderr, /no Claude Code transcript \(\*\.jsonl\) in /);
  assert.match(r.stderr, new RegExp(`^cachelens: no Claude Code transcript \\(\\*\\.jsonl\\) could be read in ${projects} \\(1 unreadable, listed under data quality\\)$`, 'm'));
  const d = embedded(out);
  assert.deepEqual(d.meta.roots, [projects]);
  assert.equal(d.headline.requests, 0);
  assert.doesNotMatch(readFileSync(out, 'utf8'), /sample corpus/);
});

test('a bad --out is one line and exit 2, said before start says which logs it reads', () => {
  const home = tempDir('cachelens-home-');
  writeFileSync(join(home, 'notes.txt'), 'a file\n');
  const env = { ...process.env, NO_COLOR: '1', HOME: home, CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: '' };
  const start = (out: string, extra: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, [join(REPO, 'dist/cli.js'), 'start', '--db', ':memory:', '--out', out], { cwd: home, encoding: 'utf8', env: { ...env, ...extra } });
  const cases: [string, RegExp, NodeJS.ProcessEnv?][] = [
    ['', /^cachelens: --out: expected a file name$/],
    ['/proc/x/r.html', /^cachelens: --out \/proc\/x\/r\.html: no directory \/proc\/x /],
    [home, /^cachelens: --out .*: is a directory /],
    ['notes.txt/r.html', /^cachelens: --out notes\.txt\/r\.html: cannot write the report: ENOTDIR /],
    // with logs of one's own, the note is 'reading …': not said either
    ['/proc/x/r.html', /^cachelens: --out \/proc\/x\/r\.html: no directory /, { CLAUDE_CONFIG_DIR: join(REAL_LOGS, 'chiphuyen-sniffly') }],
  ];
  for (const [out, error, extra] of cases) {
    const r = start(out, extra);
    assert.equal(r.status, 2, `--out '${out}': ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, `--out '${out}': one line, the error alone: ${r.stderr}`);
    assert.match(r.stderr.trim(), error);
  }
});
