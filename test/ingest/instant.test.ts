/** parseInstant (src/ingest/line.ts): an ISO 8601 instant's epoch milliseconds, whatever its separator. */
import assert from 'node:assert/strict';
import test from 'node:test';
import { parseInstant } from '../../src/ingest/line.js';

test('a date and time separated by a space is the same instant as with T, years 0000-0099 too', () => {
  for (const s of ['0050-03-01T10:00:00Z', '0001-01-01T00:00:00.000+00:00', '0099-12-31T23:00:00Z', '2025-03-01T10:00:00.5+05:30']) {
    const spaced = s.slice(0, 10) + ' ' + s.slice(11);
    assert.equal(parseInstant(spaced), parseInstant(s), spaced);
    assert.equal(new Date(parseInstant(spaced)!).toISOString().slice(0, 4), new Date(parseInstant(s)!).toISOString().slice(0, 4), spaced);
  }
  // 0000-02-29 exists (year 0 is a leap year); 1900-02-29 does not
  assert.equal(parseInstant('0000-02-29 00:00:00Z'), Date.UTC(2000, 1, 29) - Date.UTC(2000, 0, 1) + Date.parse('0000-01-01T00:00:00Z'));
  assert.equal(parseInstant('1900-02-29 00:00:00Z'), null);
});

test('an offset of hours alone, a decimal comma and a leap second at a UTC month\'s end are instants; second 60 elsewhere is not', () => {
  assert.equal(parseInstant('2026-01-07T11:00:00+02'), Date.UTC(2026, 0, 7, 9));
  assert.equal(parseInstant('2026-01-07T09:00:00,5Z'), Date.UTC(2026, 0, 7, 9, 0, 0, 500));
  // a leap second is its day's last millisecond, in any offset it is written in
  assert.equal(parseInstant('2016-12-31T23:59:60Z'), Date.UTC(2016, 11, 31, 23, 59, 59, 999));
  assert.equal(parseInstant('2017-01-01T05:29:60.25+05:30'), Date.UTC(2016, 11, 31, 23, 59, 59, 999));
  assert.equal(parseInstant('0000-12-31T23:59:60Z'), Date.parse('0000-12-31T23:59:59.999Z'));
  for (const s of ['2016-12-30T23:59:60Z', '2016-12-31T23:58:60Z', '2016-12-31T23:59:60+01:00', '2026-01-07T24:00:00Z', '2026-01-07T09:00:00+02:99', '2026-01-07T09:00:00+2']) assert.equal(parseInstant(s), null, s);
});
