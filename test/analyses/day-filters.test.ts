/**
 * --since/--until on the cache analyses: a chain with a request on the days asked for is read
 * whole, its earlier requests giving the later ones their context (cached prefix, TTL in force,
 * cold or not), and only the requests on those days count.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assistant, cli, userPrompt, writeCorpus } from '../helpers/corpus.js';
import { abbreviationNote, parseDay } from '../../src/analyses/filters.js';

// 23:50 writes 50,000 1-hour tokens; 00:01 reads them (w 0); 00:10 rewrites all 50,000 at 1 hour:
// a break (9 minutes, under the 1-hour TTL in force), not a cold start or an expiry.
const dir = writeCorpus({
  'p/s1.jsonl': [
    assistant({ session: 's1', msg: 'm1', t: '2026-03-01T23:50:00Z', u: { in: 5, w1h: 50_000 } }),
    assistant({ session: 's1', msg: 'm2', t: '2026-03-02T00:01:00Z', u: { in: 5, r: 50_000 } }),
    assistant({ session: 's1', msg: 'm3', t: '2026-03-02T00:10:00Z', u: { in: 5, w1h: 50_000 } }),
  ],
});

function json(args: string[]): any {
  const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('anatomy --since: the earlier day gives the context, only the days asked for count', () => {
  const all = json(['anatomy']).totals;
  assert.deepEqual([all.requests, all.cold, all.break, all.expiry], [3, 50_000, 50_000, 0]);
  const since = json(['anatomy', '--since', '2026-03-02']).totals;
  assert.deepEqual([since.requests, since.cold, since.break, since.expiry, since.growth], [2, 0, 50_000, 0, 0]);
  const until = json(['anatomy', '--until', '2026-03-01']).totals;
  assert.deepEqual([until.requests, until.cold, until.break], [1, 50_000, 0]);
  const detail = json(['anatomy', '--since', '2026-03-02', '--chain', 's1']);
  assert.deepEqual(detail.requests.map((q: any) => [q.time, q.cold, q.break, q.expiry, q.ttl, q.cached_prefix]), [
    ['2026-03-02T00:01:00.000Z', 0, 0, 0, '1h', 50_000],
    ['2026-03-02T00:10:00.000Z', 0, 50_000, 0, '1h', 50_000],
  ]);
});

test('whatif ttl --since counts the requests of the days asked for only', () => {
  const ttl = json(['whatif', 'ttl', '--since', '2026-03-02']);
  assert.equal(ttl.requests, 2);
  const none = json(['whatif', 'ttl', '--since', '2026-03-05']);
  assert.equal(none.requests, 0);
});

test('whatif keepalive --since/--until: a gap belongs to the day of the request that ends it; the two days add up to all', () => {
  // a 5-minute chain: 23:50 (write 20,000), 00:00 (a 10-minute gap over midnight: expiry), 00:20 (a 20-minute gap)
  const five = writeCorpus({
    'p/s2.jsonl': [
      assistant({ session: 's2', msg: 'f1', t: '2026-03-01T23:50:00Z', u: { in: 5, w5: 20_000 } }),
      assistant({ session: 's2', msg: 'f2', t: '2026-03-02T00:00:00Z', u: { in: 5, w5: 21_000 } }),
      assistant({ session: 's2', msg: 'f3', t: '2026-03-02T00:20:00Z', u: { in: 5, w5: 22_000 } }),
    ],
  });
  const ka = (extra: string[]) => {
    const r = cli(['whatif', 'keepalive', five, '--db', ':memory:', '--timezone', 'UTC', '--json', '--budget', 'inf', ...extra]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const all = ka([]);
  const first = ka(['--until', '2026-03-01']);
  const second = ka(['--since', '2026-03-02']);
  assert.deepEqual([all.gaps, first.gaps, second.gaps], [2, 0, 2]);
  // both gaps end on 2 March and are priced with their context from 1 March: the same pings and saving as unfiltered
  assert.deepEqual(second.budgets[0], { ...all.budgets[0], net_saving_pct_all: second.budgets[0].net_saving_pct_all });
  assert.ok(second.budgets[0].saved_weight > 0);
  assert.equal(first.budgets[0].pings, 0);
  assert.ok(Math.abs(first.baseline_weight + second.baseline_weight - all.baseline_weight) < 1e-6);
});

test('parseDay: every day that exists, years 0000–0099 too (Date.UTC read them as 1900–1999); none that does not', () => {
  assert.equal(parseDay('0050-01-01', '--since'), '0050-01-01');
  assert.equal(parseDay('00000229', '--since'), '0000-02-29'); // year 0 is a leap year
  assert.equal(parseDay('2024-02-29', '--since'), '2024-02-29');
  for (const bad of ['0100-02-29', '1900-02-29', '2026-02-30', '2026-13-01', '2026-00-10']) assert.throws(() => parseDay(bad, '--since'), /no such day/, bad);
  // said as a day that does not exist, not as the wrong form (it read 'expected a day as YYYY-MM-DD or YYYYMMDD'; review)
  assert.throws(() => parseDay('2026-02-30', '--since'), { message: '--since 2026-02-30: no such day (February 2026 has 28 days)' });
  assert.throws(() => parseDay('20240230', '--until'), { message: '--until 20240230: no such day (February 2024 has 29 days)' });
  assert.throws(() => parseDay('2026-04-31', '--since'), { message: '--since 2026-04-31: no such day (April 2026 has 30 days)' });
  assert.throws(() => parseDay('2026-01-00', '--since'), { message: '--since 2026-01-00: no such day (January 2026 has 31 days)' });
  assert.throws(() => parseDay('2026-13-01', '--since'), { message: '--since 2026-13-01: no such day (month 13: a month is 01 to 12)' });
  assert.throws(() => parseDay('2026-2-3', '--since'), { message: '--since 2026-2-3: expected a day as YYYY-MM-DD or YYYYMMDD' });
});

test('without --timezone, days are in the zone TZ names; a TZ Node cannot read says so once on stderr, and days are in UTC', () => {
  const days = (env: NodeJS.ProcessEnv, extra: string[] = []) => {
    const r = cli(['summary', dir, '--db', ':memory:', '--json', ...extra], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    return { zone: out.filters.timezone as string, days: out.by_day.map((d: any) => `${d.day}:${d.requests}`).join(' '), stderr: r.stderr };
  };
  const utc = '2026-03-01:1 2026-03-02:2';
  const berlin = '2026-03-02:3';
  // names Node reads: no word on stderr
  for (const [tz, zone, want] of [
    [undefined, null, null],
    ['', 'UTC', utc],
    ['UTC', 'UTC', utc],
    ['Etc/UTC', 'Etc/UTC', utc],
    ['Europe/Berlin', 'Europe/Berlin', berlin],
    [':Europe/Berlin', 'Europe/Berlin', berlin],
    // named as --timezone names the same text: not by ICU's canonical name (Asia/Calcutta, Europe/Kiev)
    ['EST5EDT', 'EST5EDT', '2026-03-01:3'],
    ['Asia/Kolkata', 'Asia/Kolkata', '2026-03-02:3'],
    [':Europe/Kyiv', 'Europe/Kyiv', '2026-03-02:3'],
    // names ICU reads only in another case, as --timezone takes the same text (TZ=utc was said to be a
    // name Node cannot read, while its days were in UTC; TZ=europe/berlin counted them in UTC)
    ['utc', 'UTC', utc],
    ['europe/berlin', 'Europe/Berlin', berlin],
    ['est5edt', 'America/New_York', '2026-03-01:3'],
  ] as const) {
    const got = days({ TZ: tz });
    assert.equal(got.stderr, '', `TZ=${tz}`);
    if (zone !== null) assert.deepEqual([got.zone, got.days], [zone, want], `TZ=${tz}`);
  }
  // names it cannot: UTC, said in one line that names TZ and --timezone
  for (const tz of ['EST5EDT,M3.2.0,M11.1.0', 'JST-9', 'Etc/Unknown', '/usr/share/zoneinfo/Europe/Berlin']) {
    const got = days({ TZ: tz });
    assert.deepEqual([got.zone, got.days], ['UTC', utc], `TZ=${tz}`);
    const lines = got.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, got.stderr);
    assert.equal(lines[0], `cachelens: TZ=${tz} is not a time zone name Node can read (an IANA name such as America/New_York): days are in UTC; give --timezone`);
    // --timezone given: TZ is not read, and not mentioned
    const given = days({ TZ: tz }, ['--timezone', 'Europe/Berlin']);
    assert.deepEqual([given.zone, given.days, given.stderr], ['Europe/Berlin', berlin, '']);
  }
  // untrusted text in TZ is escaped on stderr as anywhere else
  assert.match(days({ TZ: 'x\u001b[31my' }).stderr, /^cachelens: TZ=x\?\[31my is not/);
});

test('a zone given by a short name (TZ=est, --timezone est, BST) is the zone ICU reads it as, said in one line on stderr with its offsets: not a crash, not UTC, not silent', () => {
  const run = (env: NodeJS.ProcessEnv, extra: string[] = []) => {
    const r = cli(['summary', dir, '--db', ':memory:', '--json', ...extra], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    return { zone: out.filters.timezone as string, days: out.by_day.map((d: any) => `${d.day}:${d.requests}`).join(' '), lines: r.stderr.split('\n').filter(Boolean) };
  };
  // EST is UTC-5 all year (America/Panama, no daylight saving): days were counted so without a word, where US Eastern time was likely meant
  const panama = run({ TZ: 'UTC' }, ['--timezone', 'America/Panama']).days;
  const notes: [NodeJS.ProcessEnv, string[], string, string][] = [
    [{ TZ: 'est' }, [], 'TZ=est', 'America/Panama'],
    [{ TZ: 'UTC' }, ['--timezone', 'est'], '--timezone est', 'America/Panama'],
    [{ TZ: 'UTC' }, ['--timezone', 'EST'], '--timezone EST', 'EST'],
  ];
  for (const [env, extra, said, zone] of notes) {
    const got = run(env, extra);
    assert.deepEqual([got.zone, got.days], [zone, panama], said);
    // TZ's note says to set TZ, the way out for a command without --timezone too
    const wayOut = said.startsWith('TZ=') ? 'set TZ to its name, such as TZ=America/New_York' : 'give its name, such as America/New_York';
    assert.deepEqual(got.lines, [`cachelens: ${said} is read as the zone America/Panama, UTC-05:00 all year; a short name stands for one zone, whatever else it may mean: for a region's local time ${wayOut}`]);
  }
  // --timezone given: TZ is not read, and not mentioned
  assert.deepEqual(run({ TZ: 'est' }, ['--timezone', 'UTC']).lines, []);
  // BST is Bangladesh's to ICU, not British Summer Time; PST has daylight saving, and both offsets are said
  assert.equal(abbreviationNote('BST', '--timezone BST'), "cachelens: --timezone BST is read as the zone Asia/Dhaka, UTC+06:00 all year; a short name stands for one zone, whatever else it may mean: for a region's local time give its name, such as America/New_York");
  assert.match(abbreviationNote('pst', 'TZ=pst', Date.UTC(2026, 0, 1))!, /^cachelens: TZ=pst is read as the zone America\/Los_Angeles, UTC-08:00 in January, UTC-07:00 in July; /);
  // a region's name, a UTC name, a name Intl does not read: no note (the last is an error or TZ's own line)
  for (const name of ['America/New_York', 'Japan', 'UTC', 'gmt', 'UCT', 'Zulu', 'EST5EDT', 'XYZQ']) assert.equal(abbreviationNote(name, name), undefined, name);
  // short region names and tzdata's CET/MET/EET/WET are the zones they name, with their daylight saving: no note
  for (const name of ['Iran', 'Cuba', 'Eire', 'PRC', 'ROK', 'ROC', 'CET', 'cet', 'MET', 'EET', 'WET']) assert.equal(abbreviationNote(name, `--timezone ${name}`), undefined, name);
  for (const name of ['EST', 'est', 'BST', 'IST', 'HST', 'MST', 'JST']) assert.match(abbreviationNote(name, `--timezone ${name}`) ?? '', /a short name stands for one zone/, name);
  assert.match(abbreviationNote('EST', 'TZ=EST')!, /for a region's local time set TZ to its name, such as TZ=America\/New_York$/);
  assert.deepEqual(run({ TZ: 'Iran' }).lines, [], 'TZ=Iran');
  assert.deepEqual(run({ TZ: 'UTC' }, ['--timezone', 'Cuba']).lines, [], '--timezone Cuba');
});

test('--timezone in another case (asia/tokyo) goes by its canonical name: in titles, --json and the days DuckDB counts', () => {
  // it was echoed as typed: 'By day (asia/tokyo)', "timezone": "asia/tokyo"
  const r = cli(['summary', dir, '--db', ':memory:', '--timezone', 'asia/tokyo', '--json', '--since', '2026-03-02']);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.filters.timezone, 'Asia/Tokyo');
  // 23:50 UTC on 1 March is 08:50 on 2 March in Tokyo: every request is on the 2nd
  assert.deepEqual(out.by_day.map((d: any) => `${d.day}:${d.requests}`), ['2026-03-02:3']);
  const text = cli(['summary', dir, '--db', ':memory:', '--timezone', 'asia/tokyo']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^By day \(Asia\/Tokyo\)$/m);
  assert.doesNotMatch(text.stdout, /asia\/tokyo/);
  const sessions = cli(['sessions', dir, '--db', ':memory:', '--timezone', 'asia/tokyo']);
  assert.match(sessions.stdout, /^Sessions \(first and last in Asia\/Tokyo\)$/m);
  // an alias in lower case has no case of its own: the zone ICU names; one with capitals is kept as given
  const zone = (tz: string) => {
    const z = cli(['summary', dir, '--db', ':memory:', '--timezone', tz, '--json']);
    assert.equal(z.code, 0, z.stderr);
    return JSON.parse(z.stdout).filters.timezone;
  };
  assert.deepEqual(['us/pacific', 'utc', 'Asia/Kolkata', 'europe/berlin'].map(zone), ['America/Los_Angeles', 'UTC', 'Asia/Kolkata', 'Europe/Berlin']);
});

test('anatomy --since: a chain row\'s model is that of its requests on those days; rounds and the re-purchase flag stay the whole chain\'s', () => {
  // two Opus requests on 1 March, one Sonnet request on 2 March, one round each
  const mixed = writeCorpus({
    'p/s5.jsonl': [
      userPrompt('s5', '2026-03-01T23:40:00Z'),
      assistant({ session: 's5', msg: 'o1', t: '2026-03-01T23:41:00Z', u: { in: 5, w5: 10_000 } }),
      assistant({ session: 's5', msg: 'o2', t: '2026-03-01T23:42:00Z', u: { in: 5, r: 10_000, w5: 1_000 } }),
      userPrompt('s5', '2026-03-02T00:01:00Z'),
      assistant({ session: 's5', msg: 's1', t: '2026-03-02T00:02:00Z', model: 'claude-sonnet-4-5', u: { in: 5, w5: 12_000 } }),
    ],
  });
  const chain = (extra: string[]) => {
    const r = cli(['anatomy', mixed, '--db', ':memory:', '--timezone', 'UTC', '--json', ...extra]);
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout).chains.find((x: any) => x.chain_id === 's5');
    return [c.model, c.requests, c.rounds];
  };
  assert.deepEqual(chain([]), ['claude-opus-4-6', 3, 2]);
  assert.deepEqual(chain(['--since', '2026-03-02']), ['claude-sonnet-4-5', 1, 2]);
  assert.deepEqual(chain(['--until', '2026-03-01']), ['claude-opus-4-6', 2, 2]);
});

test('times past 9999 and before 0000 (an offset across the year\'s edge): one ISO 8601 form in every command, days in time order, --since/--until as dates', () => {
  // 0000-01-01 at +14:00 is -000001-12-31 in UTC; 9999-12-31 at -12:00 is +010000-01-01; the .110 ms of year
  // 9999 is a double's t / 1000 that to_timestamp took as .109
  const edge = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: 's1', msg: 'e1', t: '0000-01-01T00:00:00.000+14:00', u: { in: 1, w5: 2_000 } }),
      assistant({ session: 's1', msg: 'e2', t: '2026-03-01T12:00:00.000Z', u: { in: 2, r: 2_000 } }),
      assistant({ session: 's1', msg: 'e3', t: '9999-06-01T12:00:00.110Z', u: { in: 3, r: 2_000 } }),
      assistant({ session: 's1', msg: 'e4', t: '9999-12-31T23:59:59.999-12:00', u: { in: 4, r: 2_000 } }),
    ],
  });
  const run = (args: string[]) => {
    const r = cli([...args, edge, '--db', ':memory:', '--timezone', 'UTC', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  // summary printed '-1-12-31' and '10000-01-01' (as text, 10000 before 2026), sessions '-1-12-31T10:00:00.000Z',
  // blocks '-000001-12-31T10:00:00.000Z'
  const s = run(['summary']);
  assert.deepEqual(s.by_day.map((d: any) => [d.day, d.input]), [['-000001-12-31', 1], ['2026-03-01', 2], ['9999-06-01', 3], ['+010000-01-01', 4]]);
  const [session] = run(['sessions']).sessions;
  assert.deepEqual([session.first, session.last, session.first_request, session.last_request],
    ['-000001-12-31 10:00', '+010000-01-01 11:59', '-000001-12-31T10:00:00.000Z', '+010000-01-01T11:59:59.999Z']);
  const blocks = run(['blocks']).blocks;
  assert.deepEqual(blocks.map((b: any) => [b.start, b.first_request]), [
    ['-000001-12-31T10:00:00.000Z', '-000001-12-31T10:00:00.000Z'],
    ['2026-03-01T12:00:00.000Z', '2026-03-01T12:00:00.000Z'],
    ['9999-06-01T12:00:00.000Z', '9999-06-01T12:00:00.110Z'],
    ['+010000-01-01T11:00:00.000Z', '+010000-01-01T11:59:59.999Z'],
  ]);
  assert.equal(new Date(blocks[3].first_request).getTime(), Date.parse('9999-12-31T23:59:59.999-12:00'), 'the text reads back');
  const inputs = (args: string[]) => ({
    summary: run(['summary', ...args]).totals.input,
    sessions: run(['sessions', ...args]).sessions.reduce((a: number, x: any) => a + x.input, 0),
    blocks: run(['blocks', ...args]).blocks.reduce((a: number, x: any) => a + x.input, 0),
    anatomy: run(['anatomy', ...args]).totals.requests,
    ttl: run(['whatif', 'ttl', ...args]).requests,
  });
  // compared as text, '+010000-01-01'/'10000-01-01' was before --since 2026-03-02 and within --until 9999-12-31
  assert.deepEqual(inputs(['--since', '2026-03-02']), { summary: 7, sessions: 7, blocks: 7, anatomy: 2, ttl: 2 });
  assert.deepEqual(inputs(['--until', '9999-12-31']), { summary: 6, sessions: 6, blocks: 6, anatomy: 3, ttl: 3 });
  assert.deepEqual(inputs(['--until', '0000-01-01']), { summary: 1, sessions: 1, blocks: 1, anatomy: 1, ttl: 1 });
  const table = cli(['blocks', edge, '--db', ':memory:']).stdout;
  assert.match(table, /^-000001-12-31 10:00 +15:00 /m);
  assert.match(table, /^\+010000-01-01 11:00 +16:00 /m);
  // the store's ts (what `query` gives) was a millisecond early past year ~2255: .110 read as .109
  const sql = join(edge, 'ts.sql');
  writeFileSync(sql, "SELECT message_id, ts FROM requests WHERE message_id = 'e3'");
  assert.deepEqual(run(['query', sql]).rows, [{ message_id: 'e3', ts: '9999-06-01T12:00:00.110Z' }]);
  // the report's cost over time (report_components) ordered its days as text: +010000-01-01 and -000001-12-31 first
  const days = (args: string[]) => [...new Set(run(['query', ...args]).rows.map((r: any) => r.grp))];
  assert.deepEqual(days(['report_components', '--param', 'group=day']), ['-000001-12-31', '2026-03-01', '9999-06-01', '+010000-01-01']);
  assert.deepEqual(days(['cost_by', '--param', 'by=day']), ['-000001-12-31', '2026-03-01', '9999-06-01', '+010000-01-01']);
  // anatomy --chain's table cut every time at 19 characters: '-000001-12-31 10:00', its seconds lost
  const chain = cli(['anatomy', edge, '--db', ':memory:', '--chain', 's1']).stdout;
  assert.match(chain, /^1 +-000001-12-31 10:00:00 /m);
  assert.match(chain, /^3 +9999-06-01 12:00:00 /m);
  assert.match(chain, /^4 +\+010000-01-01 11:59:59 /m);
});

test('crosstab --rows day (or --cols day) lists days in time order, past 9999 and before 0000 too, unknown last', () => {
  // as text, '+010000-01-01' and '-000001-12-31' came before '2026-03-01'
  const edge = writeCorpus({
    'p/s1.jsonl': [assistant({ session: 's1', msg: 'e1', t: '0000-01-01T00:00:00.000+14:00', u: { in: 1, w5: 2_000 } })],
    'p/s2.jsonl': [assistant({ session: 's2', msg: 'e2', t: '2026-03-01T12:00:00.000Z', u: { in: 2, r: 2_000 } })],
    'p/s3.jsonl': [assistant({ session: 's3', msg: 'e3', t: '9999-12-31T23:59:59.999-12:00', u: { in: 4, r: 2_000 } })],
  });
  for (const flag of ['--rows', '--cols']) {
    const r = cli(['crosstab', edge, '--db', ':memory:', '--timezone', 'UTC', flag, 'day', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(flag === '--rows' ? out.rows : out.cols, ['-000001-12-31', '2026-03-01', '+010000-01-01'], flag);
  }
});
