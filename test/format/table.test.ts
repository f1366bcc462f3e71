import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clean, cleanKeepingLines, displayWidth, fit, int, jsonText, table, usd, useColor } from '../../src/format/table.js';
import { formatRows, toCsv } from '../../src/reporters/rows.js';
import { formatQuality } from '../../src/reporters/summary.js';
import { assistant, cli, REAL_LOGS, tempDir, writeCorpus } from '../helpers/corpus.js';

test('int and usd format with their own digits, whichever formatter was made first', () => {
  // usd's formats are made before int's, each kept by its digits: none may answer for another
  assert.equal(usd(0.01234), '$0.0123');
  assert.equal(usd(12.344), '$12.34');
  assert.equal(usd(-5), '-$5.00');
  assert.equal(usd(1234.5), '$1,235');
  assert.equal(int(1234567.6), '1,234,568');
  assert.equal(usd(0.5), '$0.5000');
  assert.equal(int(-0.4), '0');
  // weights are multiples of 0.05, so halves are common (a ping is 0.1 × C + 87.5): a net of −2,187.5 wt
  // (one ping of 2,187.5, nothing saved) is −2,188 beside the ping cost's 2,188, not −2,187
  assert.equal(int(2187.5), '2,188');
  assert.equal(int(-2187.5), '-2,188');
  assert.equal(int(-0.5), '-1');
  assert.equal(int(null), '—');
  assert.equal(usd(Number.NaN), 'unknown');
  // digits by what the amount rounds to; a priced cost below the last digit is not $0
  assert.equal(usd(99.996), '$100');
  assert.equal(usd(99.994), '$99.99');
  assert.equal(usd(0.99996), '$1.00');
  assert.equal(usd(0.00004), '<$0.0001');
  assert.equal(usd(-0.00004), '-<$0.0001');
  assert.equal(usd(0), '$0.0000');
});

/** No byte a terminal acts on: C0 (but for the newlines between lines), DEL, C1, bidi controls. */
const ACTIVE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

test('clean: control characters and bidi overrides from transcript text become ?', () => {
  assert.equal(clean('a\u001b[2Jb\u202e'), 'a?[2Jb?');
  assert.equal(clean('x\u001b]0;title\u0007y\rz\u009b1m\u2066'), 'x?]0;title?y?z?1m?');
  assert.equal(clean('é✓😀 plain'), 'é✓😀 plain');
  // line and paragraph separators break a table's line in some terminals and editors
  assert.equal(clean('a\u2028b\u2029c'), 'a?b?c');
  assert.equal(cleanKeepingLines('a\u2028b\nc\r\nd'), 'a?b\nc\r\nd');
});

test('the data-quality lines quote transcripts\' paths and models cleaned', () => {
  const hostile = 'p\u001b]0;PWNED\u0007\u001b[2J\u202e\r';
  const text = formatQuality({
    files: 1,
    lines: 2,
    skipped_lines: 1,
    skipped: [{ reason: 'invalid_json', count: 1, examples: [{ file: `/logs/${hostile}/s.jsonl`, line: 3, detail: 'x' }] }],
    duplicates_removed: 0,
    usage_lines: 1,
    synthetic: 0,
    unknown_models: [{ model: `claude-${hostile}`, requests: 1, tokens: 5 }],
  });
  assert.doesNotMatch(text, ACTIVE);
  assert.match(text, /unpriced model claude-p\?\]0;PWNED\?\?\[2J\?\?/);
});

test('whatif ttl and keepalive name unpriced models cleaned: an escape sequence, a bidi override or a zero-width space in a model passed raw', () => {
  const model = 'claude-x\u001b[2J\u202ey\u200bz';
  const s = 's1';
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', model, u: { in: 10, w5: 1000 } }),
      assistant({ session: s, msg: 'b', t: '2026-02-11T03:10:02.000Z', model, u: { in: 10, w5: 100, r: 1000 } }),
    ],
  });
  for (const kind of ['ttl', 'keepalive']) {
    const r = cli(['whatif', kind, dir, '--db', ':memory:', '--timezone', 'UTC']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, ACTIVE, kind);
    assert.doesNotMatch(r.stdout, /\u200b/, kind);
    assert.ok(r.stdout.includes('an unpriced model (claude-x?[2J?y?z)'), kind);
  }
});

test('the data-quality line says 1 file, 1 line, 1 duplicate usage line, 1 <synthetic> line in the singular', () => {
  // it said "1 files, 1 lines, …, 1 duplicate usage lines removed, 1 <synthetic> lines ignored"
  const q = { files: 1, lines: 1, skipped_lines: 0, skipped: [], duplicates_removed: 1, usage_lines: 1, synthetic: 1, unknown_models: [] };
  assert.match(formatQuality(q), /^Data quality: 1 file, 1 line, 0 skipped, 1 duplicate usage line removed, 1 <synthetic> line ignored$/m);
  assert.match(formatQuality({ ...q, files: 2, lines: 1_424, duplicates_removed: 0, synthetic: 3 }), /^Data quality: 2 files, 1,424 lines, 0 skipped, 0 duplicate usage lines removed, 3 <synthetic> lines ignored$/m);
});

test('an error that quotes what it was given is printed cleaned', () => {
  const r = cli(['summary', '/nowhere/\u001b[2J\u202e', '--db', ':memory:']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no such file or directory: \/nowhere\/\?\[2J\?/);
  assert.doesNotMatch(r.stderr, ACTIVE);
});

test('jsonText: the same JSON value, with DEL, C1, bidi controls and line separators escaped', () => {
  const value = { ['k\u009b']: ['a\u001b[2J\u009b1m\u202e\u2066\u2028\u2029\u007f', 1, null, 'é😀'] };
  const text = jsonText(value, 2);
  assert.deepEqual(JSON.parse(text), value);
  assert.doesNotMatch(text, ACTIVE);
  assert.doesNotMatch(text, /[\u2028\u2029]/);
  assert.match(text, /\\u009b1m\\u202e/);
  assert.equal(jsonText(undefined), 'null');
});

test('CSV keeps its data for files and pipes, and to a terminal drops what would act on it', () => {
  const rows = [{ project: 'p\u001b]0;PWNED\u0007\u009b2J\u202e', note: 'two\nlines\tand "quotes"' }];
  const plainCsv = toCsv(rows);
  assert.match(plainCsv, /\u001b\]0;PWNED\u0007/);
  const shown = toCsv(rows, true);
  assert.doesNotMatch(shown.replace(/[\t\n]/g, ''), ACTIVE);
  assert.equal(shown, 'project,note\np?]0;PWNED??2J?,"two\nlines\tand ""quotes"""');
  assert.equal(cleanKeepingLines('a\r\nb\tc\u0000'), 'a\r\nb\tc?');
  // a carriage return alone would print the rest of the line over its start
  assert.equal(cleanKeepingLines('ok\rFAKE\r\n'), 'ok?FAKE\r\n');
});

test('a query\'s table cleans its column names as its cells: a PIVOT over transcript text makes them', () => {
  // `PIVOT requests ON model`: a model named with an escape sequence was printed raw in the header line
  const shown = formatRows([{ 'claude\u001b]0;PWNED\u0007\u009b2J\u202e': 1, 'cell': 'x\u001b[31m' }], false);
  assert.doesNotMatch(shown, ACTIVE);
  assert.match(shown, /^claude\?\]0;PWNED\?\?2J\?  cell/);
});

test('CSV: NULL is an empty field, an empty text "" (they were the same); commas, quotes and line breaks are quoted (RFC 4180)', () => {
  const rows = [{ n: null, e: '', odd: 'a,"b"\r\nc', num: 0, list: ['x,y'] }];
  assert.equal(toCsv(rows), 'n,e,odd,num,list\n,"","a,""b""\r\nc",0,"[""x,y""]"');
  assert.equal(toCsv([{ 'a,b': 1 }]), '"a,b"\n1');
});

test('--json output escapes the C1 and bidi controls a transcript brings', () => {
  const hostile = 'claude-x\u009b2J\u202e\u2028';
  const dir = writeCorpus({ 'p/s.jsonl': [assistant({ session: 's1', msg: 'm1', t: '2026-01-01T00:00:00Z', model: hostile, u: { in: 10, out: 5 } })] });
  const r = cli(['summary', dir, '--db', ':memory:', '--json', '--timezone', 'UTC']);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, ACTIVE);
  assert.doesNotMatch(r.stdout, /[\u2028\u2029]/);
  assert.ok(JSON.stringify(JSON.parse(r.stdout)).includes(hostile), 'the model name survives as data');
});

test('tables align by the columns a terminal gives: wide CJK and emoji take two, combining marks none', () => {
  assert.equal(displayWidth('項目/a'), 6);
  assert.equal(displayWidth('e\u0301'), 1);
  assert.equal(displayWidth('😀x'), 3);
  assert.equal(displayWidth('🚀✅⚡🪐'), 8);
  assert.equal(displayWidth('✓→'), 2);
  const text = table([{ header: 'project' }, { header: 'n', align: 'num' }], [['/home/项目', 1], ['/home/ab', 22]]);
  const [, , a, b] = text.split('\n');
  assert.equal(displayWidth(a!), displayWidth(b!));
  assert.deepEqual([a, b], ['/home/项目   1', '/home/ab    22']);
});

test('an emoji joined of several, a flag, a keycap, a text symbol asked to show as emoji and a Hangul syllable of jamo take the two columns a terminal draws them in', () => {
  const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}'; // 👨‍👩‍👧, three emoji joined: one picture
  assert.equal(displayWidth(family), 2);
  assert.equal(displayWidth('\u{1F1EF}\u{1F1F5}'), 2); // 🇯🇵: two regional indicators, one flag
  assert.equal(displayWidth('1\uFE0F\u20E3'), 2); // 1️⃣
  assert.equal(displayWidth('\u2764\uFE0F'), 2); // ❤️; without U+FE0F a text symbol, one column
  assert.equal(displayWidth('\u2764'), 1);
  assert.equal(displayWidth('\u1112\u1161\u11AB'), 2); // 한 written as three jamo
  assert.equal(displayWidth(`a${family}b`), 4);
  // an Indic or Thai syllable is measured character by character, as terminals do (wcwidth): its spacing
  // vowel signs take a column, its combining ones none (a cluster's widest character alone made नमस्ते 3)
  assert.equal(displayWidth('नमस्ते'), 4);
  assert.equal(displayWidth('हिंदी'), 4);
  assert.equal(displayWidth('กำลัง'), 4);
  assert.equal(displayWidth('a\u200db'), 2);
  const indic = table([{ header: 'project' }, { header: 'n', align: 'num' }], [['/home/u/नमस्ते', 1], ['/home/u/abc', 22]]);
  assert.deepEqual(indic.split('\n').slice(2), ['/home/u/नमस्ते   1', '/home/u/abc   22']);
  const text = table([{ header: 'project' }, { header: 'n', align: 'num' }], [[`/home/${family}🇯🇵`, 1], ['/home/ab', 22]]);
  const [, , a, b] = text.split('\n');
  assert.deepEqual([a, b], [`/home/${family}🇯🇵   1`, '/home/ab    22']);
});

test('fit cuts between the characters a reader sees, never inside an emoji joined of several', () => {
  const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}';
  const cut = fit(family.repeat(200), 21);
  assert.equal(cut, `${family.repeat(5)}…${family.repeat(5)}`);
  assert.equal(displayWidth(cut), 21);
});

test('a table of hundreds of thousands of rows (a query\'s result) is laid out, not a stack overflow', () => {
  const rows = Array.from({ length: 300_000 }, (_, i) => [String(i), i]);
  const text = table([{ header: 'k' }, { header: 'n', align: 'num' }], rows);
  assert.equal(text.split('\n').length, 300_002);
});

test('colour: a NO_COLOR set to an empty string leaves colour on (no-color.org: only a non-empty one turns it off)', () => {
  const tty = { isTTY: true } as NodeJS.WriteStream;
  assert.equal(useColor(tty, { NO_COLOR: '' }), true);
  assert.equal(useColor(tty, { NO_COLOR: '1' }), false);
  assert.equal(useColor(tty, { NO_COLOR: '0' }), false);
  assert.equal(useColor(tty, {}), true);
  assert.equal(useColor(tty, { TERM: 'dumb' }), false);
  assert.equal(useColor({ isTTY: false } as NodeJS.WriteStream, { NO_COLOR: '' }), false);
});

test('a 3,000-character model id is cut in the middle to 120 columns in every table and line that names it; --json keeps it whole', () => {
  // each table with the model was as wide as the id: ~10,400 columns a row for a 10 KB one (one over
  // 4,096 characters is stored shortened, ingest/line.ts longText: test/faults/long-fields.test.ts)
  const model = `claude-${'x'.repeat(3_000)}-end`;
  const s = 's1';
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', model, u: { in: 10, w5: 1000 } }),
      assistant({ session: s, msg: 'b', t: '2026-02-11T03:10:02.000Z', model, u: { in: 10, w5: 100, r: 1000 } }),
    ],
  });
  const shown = `claude-${'x'.repeat(53)}…${'x'.repeat(55)}-end`;
  assert.equal(displayWidth(shown), 120);
  for (const args of [['summary'], ['anatomy'], ['blocks'], ['whatif', 'ttl'], ['whatif', 'keepalive']]) {
    const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC'], { HOME: tempDir() });
    assert.equal(r.code, 0, r.stderr);
    const what = args.join(' ');
    assert.ok(r.stdout.includes(shown), `${what} names the model by its ends`);
    const widest = Math.max(...r.stdout.split('\n').map(displayWidth));
    assert.ok(widest < 400, `${what}: a line ${widest} columns wide`);
  }
  const json = cli(['summary', dir, '--db', ':memory:', '--json'], { HOME: tempDir() });
  assert.equal((JSON.parse(json.stdout) as { by_model: { model: string }[] }).by_model[0]!.model, model);
});

test('fit keeps a text within its columns by its two ends, wide characters counted as two', () => {
  assert.equal(fit('short'), 'short');
  assert.equal(fit('claude-' + 'x'.repeat(1000) + '-v9', 20), 'claude-xxx…xxxxxx-v9');
  const wide = fit('漢'.repeat(300) + '😀'.repeat(100), 21);
  assert.equal(wide, `${'漢'.repeat(5)}…${'😀'.repeat(5)}`);
  assert.ok(displayWidth(wide) <= 21);
  const cells = table([{ header: 'model' }], [['m'.repeat(500)]]).split('\n');
  assert.equal(displayWidth(cells[2]!), 120);
});

test('a 3,000-character agent type is cut to 120 columns as a crosstab column header, a row and in its equality lines, and in a chain\'s anatomy', () => {
  // as a column header it made the crosstab as wide as the type, and its 'lost × …' line as long
  const s = '11111111-0000-4000-8000-000000000001';
  const type = `planner:${'y'.repeat(3_000)}-end`;
  const dir = writeCorpus({
    [`p/${s}.jsonl`]: [
      assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:01.000Z', u: { in: 10, w5: 1000 }, content: [{ type: 'tool_use', id: 'tu1', name: 'Task', input: { subagent_type: 'planner', prompt: 'p' } }] }),
    ],
    [`p/${s}/subagents/agent-a1.jsonl`]: [assistant({ session: s, msg: 'b', t: '2026-02-11T03:00:05.000Z', agentId: 'a1', u: { in: 10, w5: 2000 } })],
    [`p/${s}/subagents/agent-a1.meta.json`]: JSON.stringify({ agentType: type, toolUseId: 'tu1' }),
  });
  const shown = `planner:${'y'.repeat(52)}…${'y'.repeat(55)}-end`;
  assert.equal(displayWidth(shown), 120);
  for (const args of [['crosstab', '--rows', 'definition', '--cols', 'agent_type'], ['crosstab', '--rows', 'agent_type', '--cols', 'definition'], ['anatomy', '--chain', `${s}:a1`]]) {
    const r = cli([...args, dir, '--db', ':memory:'], { HOME: tempDir() });
    assert.equal(r.code, 0, r.stderr);
    const what = args.join(' ');
    assert.ok(r.stdout.includes(shown), `${what} names the agent type by its ends`);
    const widest = Math.max(...r.stdout.split('\n').map(displayWidth));
    assert.ok(widest < 400, `${what}: a line ${widest} columns wide`);
  }
});

test('blocks list a block\'s models whole, however many, each model cut to 120 columns on its own', () => {
  // cut as one cell, six real model ids (~150 columns) lost their middle models
  const models = ['claude-opus-4-6', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001', 'claude-sonnet-4-20250514', 'claude-opus-4-1-20250805', 'claude-opus-4-5-20251101'];
  const long = `claude-${'x'.repeat(3_000)}-end`;
  const s = 's1';
  const dir = writeCorpus({
    'p/s1.jsonl': [...models, long].map((model, i) => assistant({ session: s, msg: `m${i}`, t: `2026-02-11T03:0${i}:00.000Z`, model, u: { in: 10, w5: 1000 } })),
  });
  const r = cli(['blocks', dir, '--db', ':memory:', '--timezone', 'UTC'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const row = r.stdout.split('\n').find((l) => l.startsWith('2026-02-11'))!;
  for (const m of models) assert.ok(row.includes(m), `${m} in ${row}`);
  assert.ok(row.includes(`claude-${'x'.repeat(53)}…${'x'.repeat(55)}-end`), 'the long model by its ends');
  assert.ok(displayWidth(row) < 400, `a row ${displayWidth(row)} columns wide`);
});

test('a chain\'s anatomy lists every cause that preceded a break whole, each cut to 120 columns on its own', () => {
  const types = ['skill_listing', 'deferred_tools_delta', 'mcp_instructions_delta', 'agent_listing_delta', 'hook_additional_context'];
  const s = 's1';
  const dir = writeCorpus({
    'p/s1.jsonl': [
      assistant({ session: s, msg: 'a', t: '2026-02-11T03:00:00.000Z', u: { in: 10, w5: 20_000 } }),
      ...types.map((type, i) => ({ type: 'attachment', sessionId: s, timestamp: `2026-02-11T03:00:1${i}.000Z`, attachment: { type, content: 'x' } })),
      assistant({ session: s, msg: 'b', t: '2026-02-11T03:01:00.000Z', u: { in: 10, w5: 20_000 } }),
    ],
  });
  const r = cli(['anatomy', dir, '--chain', s, '--db', ':memory:'], { HOME: tempDir() });
  assert.equal(r.code, 0, r.stderr);
  const row = r.stdout.split('\n').find((l) => l.startsWith('2 '))!;
  assert.match(row, / break /);
  for (const type of types) assert.ok(row.includes(`attachment:${type}`), `${type} in ${row}`);
});

test('a query\'s table shows its values and column names whole (the user\'s own SQL), where analysis tables cut them at 120 columns', () => {
  const long = `v${'x'.repeat(500)}-end`;
  const out = formatRows([{ [long]: long, n: 1 }], false);
  assert.equal(out.split(long).length, 3, 'the column name and the value, whole');
  // a result without rows shows its column names whole too (they were cut there only)
  const none = formatRows([], false, [long, 'n']);
  assert.ok(none.includes(long) && !none.includes('…'), none);
  assert.ok(table([{ header: long }], [[long]]).includes('…'));
});

test('a group literally named `total` cannot pass for the totals: summary\'s By model and crosstab\'s table draw the totals row below a rule, and crosstab\'s totals column after one', () => {
  const S = '70a1a100-0000-4000-8000-0000000000a1';
  const at = (s: number) => new Date(Date.UTC(2026, 0, 5, 9, 0, s)).toISOString();
  const dir = writeCorpus({
    [`projects/-work-total/${S}.jsonl`]: [
      assistant({ session: S, msg: 'msg_t1', t: at(1), u: { in: 3, w5: 500, out: 2 }, model: 'total' }),
      assistant({ session: S, msg: 'msg_t2', t: at(2), u: { in: 3, w5: 100, out: 2 }, model: ' Total ' }),
      assistant({ session: S, msg: 'msg_o', t: at(3), u: { in: 3, r: 100, out: 2 }, model: 'claude-opus-4-6' }),
    ],
  });
  const env = { HOME: tempDir('cachelens-home-') };
  const lines = (args: string[]) => {
    const r = cli([...args, dir, '--db', ':memory:', '--timezone', 'UTC'], env);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.split('\n');
  };
  const rule = (l: string | undefined) => /^─+(┼─+)?$/.test(l ?? '');

  // summary: the models named total are rows above the rule; the one row below it is the sum of all three requests
  const s = lines(['summary']);
  const byModel = s.slice(s.indexOf('By model'), s.indexOf('', s.indexOf('By model')));
  const below = byModel.findIndex(rule);
  assert.ok(below > 2, byModel.join('\n'));
  assert.deepEqual(byModel.slice(below + 1).map((l) => l.split(/\s{2,}/).slice(0, 2)), [['total', '3']], byModel.join('\n'));
  assert.deepEqual(byModel.slice(3, below).map((l) => l.trim().split(/\s{2,}/)[0]).sort(), ['Total', 'claude-opus-4-6', 'total'], byModel.join('\n'));

  // crosstab, models as rows: one rule, and below it the grand total: the session's one chain
  const rows = lines(['crosstab', '--rows', 'model', '--cols', 'kind']);
  const r = rows.findIndex((l, i) => i > 2 && rule(l));
  assert.ok(r > 0, rows.join('\n'));
  assert.match(rows[r - 1]!, /^total +1 │ +1$/, `the chain's model, above the rule: ${rows.join('\n')}`);
  assert.match(rows[r + 1]!, /^total +1 │ +1$/, rows.join('\n'));
  // models as columns: a column headed total before the rule is the model's, the one after it the totals
  const cols = lines(['crosstab', '--rows', 'kind', '--cols', 'model', '--measure', 'requests']);
  const header = cols.find((l) => l.startsWith('kind \\ model'))!;
  assert.match(header, /^kind \\ model +total │ total$/, cols.join('\n'));
  assert.match(cols.find((l) => l.startsWith('main'))!, /^main +3 │ +3$/, cols.join('\n'));
  assert.match(cols.at(cols.findIndex((l, i) => i > 2 && rule(l)) + 1)!, /^total +3 │ +3$/, cols.join('\n'));
});

test('data quality: a file skipped whole says why, as --json does; one unpriced request is "1 request"', () => {
  // it said `skipped not_a_file: 1 (README.md)` of a file that is one, and `1 requests`
  const q = {
    files: 0, lines: 0, skipped_lines: 2, duplicates_removed: 0, usage_lines: 0, synthetic: 0,
    skipped: [
      { reason: 'not_a_file', count: 1, examples: [{ file: '/x/README.md', line: null, detail: 'not a .jsonl transcript' }] },
      { reason: 'invalid_json', count: 1, examples: [{ file: '/x/s.jsonl', line: 3, detail: 'Unexpected token' }] },
    ],
    unknown_models: [{ model: 'claude-mystery-9', requests: 1, tokens: 5 }],
  };
  const text = formatQuality(q as never);
  assert.match(text, /^ {2}skipped not_a_file: 1 \(\/x\/README\.md: not a \.jsonl transcript\)$/m);
  assert.match(text, /^ {2}skipped invalid_json: 1 \(\/x\/s\.jsonl:3\)$/m, 'a line\'s detail stays in --json');
  assert.match(text, /^ {2}unpriced model claude-mystery-9: 1 request, cost unknown/m);
  const dir = tempDir();
  writeFileSync(join(dir, 'notes.md'), '# notes\n');
  const r = cli(['summary', join(dir, 'notes.md'), '--db', ':memory:']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /skipped not_a_file: 1 \(.*notes\.md: not a \.jsonl transcript\)/);
});

test('a weight or amount is rounded as --json writes it before it is printed: one sum added up in two orders prints the same', () => {
  // the real logs' weight is 8,734,583.5: summary (an exact DECIMAL sum) printed 8,734,584, anatomy and the what-ifs
  // (doubles added in another order, 8,734,583.4999999…) printed 8,734,583
  assert.equal(int(8_734_583.499999999), '8,734,584');
  assert.equal(int(8_734_583.5), '8,734,584');
  assert.equal(int(-2_187.4999999999995), '-2,188');
  assert.equal(usd(0.12499999999999999), usd(0.125));
  assert.equal(usd(12.344999999999999), usd(12.345));
  const total = (args: string[], line: RegExp): string => {
    const r = cli([...args, REAL_LOGS, '--db', ':memory:']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.match(line)?.[1] ?? `no ${line} in\n${r.stdout}`;
  };
  const summary = total(['summary'], /^total\s+(?:[\d,]+\s+){6}([\d,]+)\s/m);
  assert.match(summary, /^[\d,]+$/);
  assert.equal(total(['anatomy'], /^all requests\s+([\d,]+)\s/m), summary, 'anatomy\'s all requests');
  assert.equal(total(['whatif', 'ttl'], /^baseline\s+([\d,]+)\s/m), summary, 'whatif ttl\'s baseline');
  assert.equal(total(['whatif', 'keepalive', '--budget', '1'], /over all weight \(([\d,]+) wt/), summary, 'whatif keepalive\'s all weight');
});
