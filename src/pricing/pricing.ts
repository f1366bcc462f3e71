/**
 * Prices and weights (SPEC §2). Weight is cost in base-input-token equivalents: a component's
 * price divided by the model's standard input price, so USD = weight × base input price per token
 * for every request, the long-context tier included (a long-context Sonnet 4.5 input token weighs 2).
 *
 * Example: claude-opus-4-6 ($5 input, $6.25 5m write, $25 output per million). A request with
 * in 3, w5 15,005, r 11,442, out 9 weighs 3 + 15,005×1.25 + 11,442×0.1 + 9×5 = 19,948.45,
 * which is 19,948.45 × $5/1e6 = $0.0997.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { UsageError } from '../errors.js';
import type { Usage } from '../types.js';
import bundled from './prices.json' with { type: 'json' };

/** USD per million tokens, as the table states them. */
export interface Rates {
  input: number;
  write_5m: number;
  write_1h: number;
  read: number;
  output: number;
}

export interface ModelPrice extends Rates {
  long_context?: Rates & { above: number };
}

/** Per-token multiples of the model's standard base input price. */
export interface Weights {
  input: number;
  write5m: number;
  write1h: number;
  read: number;
  output: number;
  /** USD of one weight unit: the standard base input price per token */
  usdPerWeight: number;
}

export interface Cost {
  weight: number;
  usd: number;
}

export class PriceTable {
  readonly date: string;
  /** the `--pricing` file that replaces or extends the bundled table; null: the bundled table alone */
  readonly file: string | null;
  private readonly models: Map<string, ModelPrice>;
  /** the models whose price is the file's (its own, and the bundled ones it replaces) */
  private readonly fromFile: ReadonlySet<string>;
  private readonly resolved = new Map<string, ModelPrice | null>();

  constructor(date: string, models: Map<string, ModelPrice>, file: string | null = null, fromFile: ReadonlySet<string> = new Set()) {
    this.date = date;
    this.models = models;
    this.file = file;
    this.fromFile = fromFile;
  }

  /** The table's key `model` is priced under: exact id first, then the id without its date suffix; null when unpriced. */
  private keyOf(model: string): string | null {
    if (this.models.has(model)) return model;
    const undated = model.replace(/-\d{8}$/, '');
    return this.models.has(undated) ? undated : null;
  }

  /** Exact id first, then the id without its date suffix (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`). */
  lookup(model: string): ModelPrice | null {
    let price = this.resolved.get(model);
    if (price !== undefined) return price;
    const key = this.keyOf(model);
    price = key === null ? null : this.models.get(key)!;
    this.resolved.set(model, price);
    return price;
  }

  /** Whether `model`'s price is the `--pricing` file's (false: the bundled one, or none). */
  pricedByFile(model: string): boolean {
    const key = this.keyOf(model);
    return key !== null && this.fromFile.has(key);
  }

  /** Weights of a request of `model` whose prompt P has `promptTokens` tokens; null when unpriced. */
  weightsFor(model: string, promptTokens: number): Weights | null {
    const price = this.lookup(model);
    if (!price) return null;
    const base = price.input;
    const rates = price.long_context && promptTokens > price.long_context.above ? price.long_context : price;
    return {
      input: rates.input / base,
      write5m: rates.write_5m / base,
      write1h: rates.write_1h / base,
      read: rates.read / base,
      output: rates.output / base,
      usdPerWeight: base / 1e6,
    };
  }

  /** Weight and USD of one request; null when its model has no price (never $0). */
  cost(model: string, u: Usage): Cost | null {
    const w = this.weightsFor(model, u.input + u.cacheWrite + u.cacheRead);
    if (!w) return null;
    const weight = weightOf(u, w);
    return { weight, usd: weight * w.usdPerWeight };
  }

  /** Rows for the store: one per model with its standard and long-context weights. */
  entries(): [string, ModelPrice][] {
    return [...this.models.entries()];
  }

  /** The models the `--pricing` file prices, in its order (none without one). */
  fileModels(): string[] {
    return [...this.fromFile];
  }
}

/** How many of a `--pricing` file's models an unknown model's error names (LiteLLM's file prices ~2,000). */
const NAMED_FILE_MODELS = 8;

/**
 * The price of a model a flag names (`replay channel --model`, `report --channel-model`) in the table
 * in force, else a one-line UsageError naming the models there are. A dated id (`claude-opus-4-6-20251101`)
 * is its model's, as a request's model is priced.
 * Example: '--model gpt-4: not in the bundled price table (use one of claude-opus-5, …, claude-3-haiku)';
 * with `--pricing own.json`: '--model gpt-4: not in the price table in force, the bundled one + own.json
 * (use one of own.json's my-model, or a bundled one: claude-opus-5, …, claude-3-haiku)'.
 */
export function flaggedModelPrice(table: PriceTable, model: string, flag: string): ModelPrice {
  const price = table.lookup(model);
  if (price) return price;
  const own = table.fileModels();
  // the bundled models the file does not replace (those it does are among its own)
  const builtIn = Object.keys(bundled.models).filter((name) => !own.includes(name)).join(', ');
  if (table.file === null) throw new UsageError(`${flag} ${model}: not in the bundled price table`, `use one of ${builtIn}`);
  const named = own.length <= NAMED_FILE_MODELS ? own.join(', ') : `${own.slice(0, NAMED_FILE_MODELS).join(', ')}, … (${own.length} in all)`;
  // a file that prices every bundled model leaves no bundled one to name (it read 'or a bundled one: )')
  throw new UsageError(`${flag} ${model}: not in the price table in force, the bundled one + ${table.file}`, `use one of ${table.file}'s ${named}${builtIn ? `, or a bundled one: ${builtIn}` : ''}`);
}

export function weightOf(u: Usage, w: Weights): number {
  return u.input * w.input + u.cacheWrite5m * w.write5m + u.cacheWrite1h * w.write1h + u.cacheRead * w.read + u.output * w.output;
}

/** The bundled table, optionally replaced or extended by `--pricing FILE`. */
export function loadPriceTable(pricingFile?: string): PriceTable {
  const models = new Map(Object.entries(bundled.models as Record<string, ModelPrice>));
  if (pricingFile === '') throw new UsageError('--pricing: expected a file name');
  if (!pricingFile) return new PriceTable(bundled.date, models);
  const own = readPricingFile(pricingFile);
  for (const [name, price] of own) models.set(name, price);
  return new PriceTable(`${bundled.date} + ${pricingFile}`, models, pricingFile, new Set(own.keys()));
}

/** A price table is a few MB (LiteLLM's ~1.5 MB); past this the file is no price table (`--pricing /dev/zero` read until memory ran out). */
export const MAX_PRICING_BYTES = 256 * 1024 * 1024;

/** The file's bytes, read up to MAX_PRICING_BYTES: a pipe or device (`--pricing <(…)`) has no size to check first. */
function readBounded(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const parts: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(1 << 20);
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) return Buffer.concat(parts, total);
      total += n;
      if (total > MAX_PRICING_BYTES) throw new Error(`larger than ${MAX_PRICING_BYTES / 1024 / 1024} MiB: no price table`);
      parts.push(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
}

// Maps, not objects: a model named `__proto__` set an object's prototype and was lost
function readPricingFile(file: string): Map<string, ModelPrice> {
  let raw: unknown;
  try {
    // a byte-order mark is no part of the JSON (editors on Windows write one)
    raw = JSON.parse(readBounded(file).toString('utf8').replace(/^\ufeff/, ''));
  } catch (err) {
    // JSON.parse quotes the text it stopped at, line breaks, NULs and all: one line of printable text
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message.replace(/\s*\n\s*/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
    throw new UsageError(`--pricing ${file}: ${why}`);
  }
  if (!isObject(raw)) throw new UsageError(`--pricing ${file}: expected a JSON object`);
  const own = raw.models;
  const out = isObject(own) ? parseOwn(own, file) : parseLiteLLM(raw, file);
  if (out.size === 0) throw new UsageError(`--pricing ${file}: no model prices found (own format {"models": {...}} or LiteLLM format)`);
  return out;
}

/** Above this (USD per million tokens, or times a model's input price) a price is a typo, and its sums no longer fit the store's DECIMAL(38, 15). */
const MAX_PRICE = 1e6;

/**
 * A price no model has: negative, over a million dollars per million tokens, or a component over a million
 * times the input price (the weight of one token). Such a table gave infinite weights or sums
 * beyond DECIMAL(38, 15), and a run ended in the store's conversion error, naming no price.
 */
function outOfBounds(price: ModelPrice, name: string): string | null {
  for (const [rates, what] of [[price, name], [price.long_context, `${name}.long_context`]] as const) {
    if (!rates) continue;
    for (const k of ['input', 'write_5m', 'write_1h', 'read', 'output'] as const) {
      // the own format refuses these in num(); a LiteLLM entry with one gave negative costs
      if (!(rates[k] >= 0)) return `${what}.${k} must be a non-negative number`;
      if (rates[k] > MAX_PRICE) return `${what}.${k} must be at most 1000000 (USD per million tokens)`;
      // every weight is a price divided by the standard input price (weightsFor)
      if (rates[k] > price.input * MAX_PRICE) return `${what}.${k} is more than a million times ${name}.input`;
    }
  }
  return null;
}

function parseOwn(models: Record<string, unknown>, file: string): Map<string, ModelPrice> {
  const out = new Map<string, ModelPrice>();
  for (const [name, v] of Object.entries(models)) {
    if (!isObject(v)) throw new UsageError(`--pricing ${file}: model ${name} is not an object`);
    const rates = readRates(v, name, file);
    const lc = v.long_context;
    // a long_context that is no object was passed over silently: the long-context tier then unpriced
    if (lc !== undefined && lc !== null && !isObject(lc)) throw new UsageError(`--pricing ${file}: ${name}.long_context must be an object`);
    const price = isObject(lc) ? { ...rates, long_context: { ...readRates(lc, `${name}.long_context`, file), above: tokenCount(lc.above, `${name}.long_context.above`, file) } } : rates;
    const bad = outOfBounds(price, name);
    if (bad) throw new UsageError(`--pricing ${file}: ${bad}`);
    out.set(name, price);
  }
  return out;
}

function readRates(v: Record<string, unknown>, name: string, file: string): Rates {
  // every weight is a multiple of the input price: a zero input price would make them all infinite. Said
  // one way for a string, a negative price and 0 alike (-1 read 'must be a non-negative number', then 0 'must be above 0')
  const input = v.input;
  if (typeof input !== 'number' || !Number.isFinite(input) || !(input > 0)) throw new UsageError(`--pricing ${file}: ${name}.input must be a number above 0`);
  return {
    input,
    write_5m: v.write_5m === undefined ? input * 1.25 : num(v.write_5m, `${name}.write_5m`, file),
    write_1h: v.write_1h === undefined ? input * 2 : num(v.write_1h, `${name}.write_1h`, file),
    read: v.read === undefined ? input * 0.1 : num(v.read, `${name}.read`, file),
    output: num(v.output, `${name}.output`, file),
  };
}

/** LiteLLM's model_prices_and_context_window.json: USD per token, keyed by model id. */
function parseLiteLLM(raw: Record<string, unknown>, file: string): Map<string, ModelPrice> {
  const out = new Map<string, ModelPrice>();
  const perM = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x * 1e6 : undefined);
  for (const [name, v] of Object.entries(raw)) {
    if (!isObject(v)) continue;
    const input = perM(v.input_cost_per_token);
    const output = perM(v.output_cost_per_token);
    if (input === undefined || output === undefined || input <= 0) continue;
    const price: ModelPrice = {
      input,
      output,
      write_5m: perM(v.cache_creation_input_token_cost) ?? input * 1.25,
      write_1h: perM(v.cache_creation_input_token_cost_above_1hr) ?? input * 2,
      read: perM(v.cache_read_input_token_cost) ?? input * 0.1,
    };
    const lcIn = perM(v.input_cost_per_token_above_200k_tokens);
    const lcOut = perM(v.output_cost_per_token_above_200k_tokens);
    if (lcIn !== undefined && lcOut !== undefined) {
      price.long_context = {
        above: 200_000,
        input: lcIn,
        output: lcOut,
        write_5m: perM(v.cache_creation_input_token_cost_above_200k_tokens) ?? lcIn * 1.25,
        write_1h: perM(v.cache_creation_input_token_cost_above_1hr_above_200k_tokens) ?? lcIn * 2,
        read: perM(v.cache_read_input_token_cost_above_200k_tokens) ?? lcIn * 0.1,
      };
    }
    // like an entry without token prices, one beyond any real token price is not used
    if (outOfBounds(price, name)) continue;
    out.set(name, price);
  }
  return out;
}

/**
 * A token count: the store keeps `above` as a BIGINT, so 1.5 or 1e300 ended the run in an
 * internal error (BigInt's RangeError, DuckDB's "bigint out of int64 range") after the file was read.
 */
function tokenCount(x: unknown, what: string, file: string): number {
  if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) throw new UsageError(`--pricing ${file}: ${what} must be a whole number of tokens from 0 to ${Number.MAX_SAFE_INTEGER}`);
  return x;
}

function num(x: unknown, what: string, file: string): number {
  if (typeof x !== 'number' || !Number.isFinite(x) || x < 0) throw new UsageError(`--pricing ${file}: ${what} must be a non-negative number`);
  return x;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
