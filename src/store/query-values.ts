/**
 * What `cachelens query` makes of a DuckDB value, by its type and at any depth: a DATE inside a
 * struct, a list or a map is printed as one at the top level is (the JS converter of
 * @duckdb/node-api made nested ones epoch-millisecond Dates, a TIME microseconds, an INTERVAL
 * `{months, days, micros}` and a BLOB a Buffer's JSON).
 *
 * Every value becomes one JSON holds exactly, and CSV and the table print as it is:
 * - BIGINT, HUGEINT and the other integers: a number while exact (|n| ≤ 2^53 − 1), else decimal text;
 * - DECIMAL: a number when the number's shortest text is the decimal's value (1.50 → 1.5), else
 *   the decimal's exact text (123456789012345678.123 as a double would be …680);
 * - FLOAT/DOUBLE: the number (a FLOAT's shortest text, `0.1`, as DuckDB's); NaN and ±Infinity, which
 *   JSON has not (JSON.stringify made them null), as the text `NaN`, `Infinity`, `-Infinity`;
 * - DATE: `YYYY-MM-DD`; a year outside 0000 – 9999 in ISO 8601's expanded form, as days are written
 *   everywhere (`+010000-01-01`; 45 BC is year -44, `-000044-03-15`); `infinity`, `-infinity`;
 * - TIMESTAMP (any precision, with or without time zone): ISO 8601 in UTC to the millisecond, its
 *   year written as a DATE's (also beyond what a JS Date holds: `+294247-01-10T04:00:54.775Z`);
 *   `infinity`, `-infinity`;
 * - TIME: `HH:MM:SS`, with its microseconds when it has a fraction; TIME_NS and TIME WITH TIME
 *   ZONE, INTERVAL (`1 year 2 months 3 days 01:02:03.5`), BLOB (`\x01ab`), BIT and GEOMETRY:
 *   DuckDB's text, what `CAST(x AS VARCHAR)` gives;
 * - UUID, ENUM, VARCHAR: text; LIST and ARRAY: arrays; STRUCT: objects, each key its own (`__proto__`
 *   too); MAP: `[{key, value}]`; UNION: `{tag, value}` — their members converted by these same rules.
 */
import type { DuckDBType, DuckDBValue, DuckDBValueConverter } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';

/** A value of any DuckDB type as `cachelens query` prints it (see the module's comment). */
export const printedValue: DuckDBValueConverter<unknown> = (value, type, self) => {
  if (value === null || value === undefined) return null;
  const { DuckDBTypeId: T, JSDuckDBValueConverter } = duckdb();
  switch (type.typeId) {
    case T.TINYINT:
    case T.SMALLINT:
    case T.INTEGER:
    case T.UTINYINT:
    case T.USMALLINT:
    case T.UINTEGER:
    case T.BIGINT:
    case T.UBIGINT:
    case T.HUGEINT:
    case T.UHUGEINT:
    case T.BIGNUM:
      return integer(value);
    case T.FLOAT:
      return double(float32(Number(value)));
    case T.DOUBLE:
      return double(Number(value));
    case T.DECIMAL:
      return decimal(String(value));
    case T.DATE:
      return dateText(value as { days: number });
    case T.TIME:
      return timeOfDay((value as { micros: bigint }).micros);
    case T.TIMESTAMP:
    case T.TIMESTAMP_TZ:
    case T.TIMESTAMP_S:
    case T.TIMESTAMP_MS:
    case T.TIMESTAMP_NS:
      return timestampText(value, type);
    case T.STRUCT:
      return structObject(value, type, self);
    case T.BLOB:
      return blobText((value as { bytes: Uint8Array }).bytes);
    case T.TIME_NS:
    case T.TIME_TZ:
    case T.INTERVAL:
    case T.BIT:
    case T.GEOMETRY:
      return String(value);
    default:
      // VARCHAR, BOOLEAN, UUID, ENUM as they are; LIST, ARRAY, STRUCT, MAP, UNION and VARIANT
      // take their shape from the JS converter, which converts their members with `self`
      return JSDuckDBValueConverter(value, type, self as unknown as Parameters<typeof JSDuckDBValueConverter>[2]);
  }
};

/**
 * A STRUCT as an object whose keys are the struct's own, defined rather than assigned: assigned
 * (as the JS converter and the struct vector assign them), `{'__proto__': 1}` set no key at all
 * (a number is no prototype) and `--json` printed `{}`; the vector keeps that entry (keepStructKeys).
 */
function structObject(value: DuckDBValue, type: DuckDBType, self: DuckDBValueConverter<unknown>): Record<string, unknown> {
  const { DuckDBStructType, DuckDBStructValue } = duckdb();
  if (!(value instanceof DuckDBStructValue) || !(type instanceof DuckDBStructType)) throw new Error(`expected a STRUCT value, got ${String(value)}`);
  const out: Record<string, unknown> = {};
  type.entryNames.forEach((name, i) => {
    const entry = Object.hasOwn(value.entries, name) ? value.entries[name]! : null;
    Object.defineProperty(out, name, { value: self(entry, type.entryTypes[i]!, self), enumerable: true, writable: true, configurable: true });
  });
  return out;
}

/**
 * Makes @duckdb/node-api's STRUCT vectors keep an entry named `__proto__`: they assign each entry to
 * a plain object, where that name sets the prototype (or nothing) and the value was lost before any
 * converter saw it. A struct without such an entry is read as before. Called once, as DuckDB loads.
 */
export function keepStructKeys(api: typeof import('@duckdb/node-api')): void {
  const vector = api.DuckDBStructVector.prototype as unknown as { getItem(i: number): unknown; keepsKeys?: true };
  if (vector.keepsKeys) return;
  const getItem = vector.getItem;
  vector.getItem = function (this: InstanceType<typeof api.DuckDBStructVector>, itemIndex: number) {
    const item = getItem.call(this, itemIndex);
    const names = this.type.entryNames;
    if (item === null || !names.includes('__proto__')) return item;
    const entries: Record<string, DuckDBValue> = {};
    names.forEach((name, i) => Object.defineProperty(entries, name, { value: this.getItemValue(itemIndex, i), enumerable: true, writable: true, configurable: true }));
    return new api.DuckDBStructValue(entries);
  };
  vector.keepsKeys = true;
}

function integer(v: DuckDBValue): number | string {
  if (typeof v === 'number') return v;
  const n = BigInt(v as bigint);
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
}

/**
 * A FLOAT (a 32-bit float, read as the double of the same value) as the shortest number that is that
 * float, as DuckDB prints it: 0.1::FLOAT is 0.1, not the double's 0.10000000149011612.
 * Example: float32(Math.fround(1.1)) → 1.1; float32(16777216) → 16777216.
 */
export function float32(n: number): number {
  if (!Number.isFinite(n)) return n;
  for (let p = 1; p <= 9; p++) {
    const shorter = Number(n.toPrecision(p));
    if (Math.fround(shorter) === n) return shorter;
  }
  return n;
}

/**
 * A BLOB as `CAST(x AS VARCHAR)` writes it, which `'…'::BLOB` reads back as the same bytes: printable
 * ASCII as it is, but for `"`, `'` and `\`, and every other byte as `\xHH`. node-api's text left the
 * backslash bare, so the 4 bytes `\x41` printed as `\x41`, which reads back as the 1 byte `A`.
 * Example: bytes 61 5C 00 FF → 'a\x5C\x00\xFF'.
 */
export function blobText(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b >= 0x20 && b <= 0x7e && b !== 0x22 && b !== 0x27 && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** JSON has no NaN or Infinity: those become their names. */
export function double(n: number): number | string {
  return Number.isFinite(n) ? n : String(n);
}

/**
 * A DECIMAL's exact text (`12.50`) as a number when the number prints as the same value, else the text.
 * Example: '1.50' → 1.5; '-0.000001' → -0.000001 (printed 1e-6); '123456789012345678.123' → the text.
 */
export function decimal(text: string): number | string {
  const n = Number(text);
  return Number.isFinite(n) && sameDecimal(String(n), text) ? n : text;
}

/** Whether two decimal texts (either may have an exponent: `1e-7`) are the same value. */
function sameDecimal(a: string, b: string): boolean {
  return canonical(a) === canonical(b);
}

function canonical(s: string): string | null {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(s.trim());
  if (!m) return null;
  const frac = m[3] ?? '';
  let digits = (m[2]! + frac).replace(/^0+/, '');
  let exp = Number(m[4] ?? 0) - frac.length;
  if (digits === '') return '0';
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exp++;
  }
  return `${m[1] === '-' ? '-' : ''}${digits}e${exp}`;
}

// DuckDB's DATE 'infinity' and '-infinity' (days ±(2^31 − 1)); its text for them is a far date
const INFINITE_DAYS = 2147483647;

function dateText(v: { days: number }): string {
  if (v.days === INFINITE_DAYS) return 'infinity';
  if (v.days === -INFINITE_DAYS) return '-infinity';
  // DuckDB's text was `10000-01-01` and `0045-03-15 (BC)`, where a TIMESTAMP's was `+010000-…`
  return isoDay(v.days);
}

/**
 * Days since 1970-01-01 as ISO 8601 writes the day (proleptic Gregorian; years 0000 – 9999 in four
 * digits, others signed, in six or more, as JavaScript's toISOString and iso_year write them).
 * Example: 0 → '1970-01-01'; 2932897 → '+010000-01-01'; -735964 → '-000045-01-01' (46 BC).
 */
export function isoDay(days: number): string {
  // H. Hinnant's civil_from_days: eras of 400 years, each year from March so that Feb 29 comes last
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const year = y >= 0 && y <= 9999 ? String(y).padStart(4, '0') : (y < 0 ? '-' : '+') + String(Math.abs(y)).padStart(6, '0');
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** A TIME (microseconds since midnight) as HH:MM:SS, with its fraction when it has one. */
export function timeOfDay(us: bigint): string {
  // arithmetic, not a Date: TIME '24:00:00' is a time DuckDB has (a Date made it 00:00:00)
  const s = us / 1000000n;
  const whole = [s / 3600n, (s / 60n) % 60n, s % 60n].map((x) => String(x).padStart(2, '0')).join(':');
  const frac = us % 1000000n;
  return frac === 0n ? whole : `${whole}.${String(frac).padStart(6, '0')}`;
}

// what a JS Date holds: ±8.64e15 ms around 1970
const MAX_MS = 8640000000000000n;

function timestampText(v: DuckDBValue, type: DuckDBType): string {
  const T = duckdb().DuckDBTypeId;
  const t = v as { micros?: bigint; seconds?: bigint; millis?: bigint; nanos?: bigint };
  const ms =
    type.typeId === T.TIMESTAMP_S ? t.seconds! * 1000n
    : type.typeId === T.TIMESTAMP_MS ? t.millis!
    : type.typeId === T.TIMESTAMP_NS ? floorDiv(t.nanos!, 1000000n)
    : floorDiv(t.micros!, 1000n);
  if (ms >= -MAX_MS && ms <= MAX_MS) return new Date(Number(ms)).toISOString();
  const text = String(v);
  if (text === 'infinity' || text === '-infinity') return text;
  // beyond a JS Date (years past 275760): DuckDB's text was `294247-01-10 04:00:54.775806`
  const day = floorDiv(ms, 86400000n);
  const inDay = Number(ms - day * 86400000n);
  return `${isoDay(Number(day))}T${new Date(inDay).toISOString().slice(11)}`;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}
