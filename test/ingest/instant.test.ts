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
