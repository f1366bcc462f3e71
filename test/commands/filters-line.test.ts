/**
 * summary, sessions, blocks and anatomy name the filters in force above their tables, as the
 * report's title line does; a --project that no project's path contains is said there. They said
 * nothing: a filtered table read as the whole, and --project nomatch printed silent zeros.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { assistant, cli, tempDir, writeCorpus } from '../helpers/corpus.js';

const SAMPLE = join(import.meta.dirname, '..', '..', 'sample-logs');

/** The sample corpus's first day, and a piece of its first project's path in another case (--project matches it). */
function dayAndProject(): { day: string; project: string } {
  const whole = cli(['summary', SAMPLE, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(whole.code, 0, whole.stderr);
  const s = JSON.parse(whole.stdout);
  return { day: s.by_day[0].day as string, project: (s.by_project[0].project as string).split('/').pop()!.slice(0, 4).toUpperCase() };
}

/** The days of the sample's requests, of all and of --project's: `from D1 to D2`, or `all on D`. */
function spans(project: string): { last: string; projectDays: string } {
  const days = (extra: string[]) => {
    const r = cli(['summary', SAMPLE, '--db', ':memory:', '--timezone', 'UTC', '--json', ...extra]);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout).by_day as { day: string }[]).map((d) => d.day);
  };
  const all = days([]);
  const mine = days(['--project', project]);
  assert.ok(all.length > 1 && mine.length > 0);
  return { last: all.at(-1)!, projectDays: mine.length === 1 ? `all on ${mine[0]}` : `from ${mine[0]} to ${mine.at(-1)}` };
}

test('summary, sessions, blocks, anatomy: one line above the tables names the filters in force, and a --project that matches no project; --json echoes them', () => {
  const { day, project } = dayAndProject();
  const { last, projectDays } = spans(project);
  for (const command of ['summary', 'sessions', 'blocks', 'anatomy']) {
    const run = (extra: string[]) => {
      const r = cli([command, SAMPLE, '--db', ':memory:', '--timezone', 'UTC', ...extra]);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    };
    assert.doesNotMatch(run([]), /Filtered/, command);
    assert.ok(run(['--since', day, '--project', project]).startsWith(`Filtered: --since ${day} --project ${project}\n\n`), command);
    assert.ok(run(['--until', day]).startsWith(`Filtered: --until ${day}\n\n`), command);
    assert.ok(run(['--project', 'nomatch']).startsWith('Filtered: --project nomatch: no project matches\n\n'), command);
    // a project that matches, on days without its requests: the days chose nothing, not the project,
    // and the line says so with the days there are (a future --since printed empty tables without a word)
    assert.ok(run(['--since', '2099-01-01', '--project', project]).startsWith(`Filtered: --since 2099-01-01 --project ${project}: no request on those days; the matching projects' requests: ${projectDays}\n\n`), command);
    assert.ok(run(['--until', '2000-01-01']).startsWith(`Filtered: --until 2000-01-01: no request on those days; the requests read: from ${day} to ${last}\n\n`), command);
    // --json is JSON alone, its filters echoed as summary's are (sessions, blocks and anatomy had none)
    const json = cli([command, SAMPLE, '--db', ':memory:', '--timezone', 'UTC', '--project', 'nomatch', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout).filters, { since: null, until: null, project: 'nomatch', timezone: 'UTC' }, command);
  }
});

test('whatif ttl, whatif keepalive, crosstab (over a store or an export) and export: the same line names the filters, and --json echoes them', () => {
  const { day, project } = dayAndProject();
  const { projectDays } = spans(project);
  const dir = tempDir();
  const exported = cli(['export', SAMPLE, '--db', ':memory:', '--timezone', 'UTC', '--parquet', join(dir, 'all')]);
  assert.equal(exported.code, 0, exported.stderr);
  let n = 0;
  const commands: [string, (extra: string[]) => string[]][] = [
    ['whatif ttl', (extra) => ['whatif', 'ttl', SAMPLE, '--db', ':memory:', ...extra]],
    ['whatif keepalive', (extra) => ['whatif', 'keepalive', SAMPLE, '--db', ':memory:', ...extra]],
    // with --kind too: the project is matched without it
    ['crosstab', (extra) => ['crosstab', SAMPLE, '--db', ':memory:', '--kind', 'main', ...extra]],
    ['crosstab --parquet', (extra) => ['crosstab', '--parquet', join(dir, 'all'), ...extra]],
    ['export', (extra) => ['export', SAMPLE, '--db', ':memory:', '--parquet', join(dir, `e${n++}`), ...extra]],
  ];
  for (const [command, args] of commands) {
    const run = (extra: string[]) => {
      const r = cli([...args(['--timezone', 'UTC', ...extra])]);
      assert.equal(r.code, 0, `${command}: ${r.stderr}`);
      return r.stdout;
    };
    assert.doesNotMatch(run([]), /Filtered/, command);
    assert.ok(run(['--since', day, '--project', project]).startsWith(`Filtered: --since ${day} --project ${project}\n\n`), command);
    assert.ok(run(['--project', 'nomatch']).startsWith('Filtered: --project nomatch: no project matches\n\n'), command);
    // the what-ifs, crosstab (over a store or an export) and export say the days there are as summary does
    assert.ok(run(['--since', '2099-01-01', '--project', project]).startsWith(`Filtered: --since 2099-01-01 --project ${project}: no request on those days; the matching projects' requests: ${projectDays}\n\n`), command);
    assert.deepEqual(JSON.parse(run(['--until', day, '--json'])).filters, { since: null, until: day, project: null, timezone: 'UTC' }, command);
  }
});

test('days that hold requests are not said to hold none when --scope or --kind emptied the answer (a run without subagents, asked of subagents)', () => {
  const root = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'm1', t: '2026-02-10T09:00:00.000Z', u: { w5: 10_000 } }),
      assistant({ session: 's1', msg: 'm2', t: '2026-02-10T09:20:00.000Z', u: { w5: 10_000 } }),
    ],
  });
  const first = (args: string[]) => {
    const r = cli([...args, root, '--db', ':memory:', '--timezone', 'UTC', '--since', '2026-02-10']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.split('\n')[0];
  };
  assert.equal(first(['whatif', 'ttl', '--scope', 'subagent']), 'Filtered: --since 2026-02-10');
  assert.equal(first(['whatif', 'keepalive', '--scope', 'subagent']), 'Filtered: --since 2026-02-10');
  assert.equal(first(['crosstab', '--kind', 'subagent']), 'Filtered: --since 2026-02-10');
  // the days themselves choosing nothing are still said
  const later = cli(['crosstab', root, '--db', ':memory:', '--timezone', 'UTC', '--since', '2026-03-01', '--kind', 'subagent']);
  assert.match(later.stdout.split('\n')[0]!, /^Filtered: --since 2026-03-01: no request on those days; the requests read: all on 2026-02-10$/);
});

test('the line names the zone whose days --since/--until are, unless UTC: whatif and anatomy show no by-day table that names it', () => {
  // 2026-02-10 23:30 UTC is 2026-02-11 in Tokyo: the requests there are on the Tokyo day asked for
  const root = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'm1', t: '2026-02-10T23:30:00.000Z', u: { w5: 10_000 } }),
      assistant({ session: 's1', msg: 'm2', t: '2026-02-10T23:40:00.000Z', u: { w5: 10_000 } }),
    ],
  });
  const first = (args: string[], zone: string[]) => {
    const r = cli([...args, root, '--db', ':memory:', ...zone, '--since', '2026-02-11']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.split('\n')[0];
  };
  for (const command of [['whatif', 'ttl'], ['whatif', 'keepalive'], ['anatomy'], ['summary']]) {
    assert.equal(first(command, ['--timezone', 'Asia/Tokyo']), 'Filtered: --since 2026-02-11 (days in Asia/Tokyo)', command.join(' '));
    assert.equal(first(command, ['--timezone', 'UTC']), 'Filtered: --since 2026-02-11: no request on those days; the requests read: all on 2026-02-10', command.join(' '));
  }
  // UTC by another name (TZ=Etc/UTC, a Docker image's; --timezone GMT) is UTC: no zone named, as README says;
  // a zone at 0 only by its place (Africa/Abidjan) or in winter (Europe/London) is named
  const unnamed = 'Filtered: --since 2026-02-11: no request on those days; the requests read: all on 2026-02-10';
  const line = (zone: string[], env: NodeJS.ProcessEnv = {}) => {
    const r = cli(['whatif', 'ttl', root, '--db', ':memory:', ...zone, '--since', '2026-02-11'], env);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.split('\n')[0];
  };
  for (const z of ['Etc/UTC', 'GMT', 'Zulu', 'Etc/GMT+0', 'UCT', 'Universal']) {
    assert.equal(line(['--timezone', z]), unnamed, z);
    assert.equal(line([], { TZ: z }), unnamed, `TZ=${z}`);
  }
  assert.match(line(['--timezone', 'Africa/Abidjan']), /\(days in Africa\/Abidjan\)/);
  assert.match(line(['--timezone', 'Europe/London']), /\(days in Europe\/London\)/);
  // a --project alone chooses no days: no zone to name
  const r = cli(['whatif', 'ttl', root, '--db', ':memory:', '--timezone', 'Asia/Tokyo', '--project', 'nomatch']);
  assert.equal(r.stdout.split('\n')[0], 'Filtered: --project nomatch: no project matches');
});
