/**
 * The sample corpus generator (issue #3):
 *
 *   seed, scale ─▶ sessions (recipe mix × scale) ─▶ per session: plan + write files ─▶ truth.json
 *
 * Session k uses recipe k mod 8 with its own PRNG stream (seed, k), so the corpus is the same
 * bytes on every run, and files are written one session at a time (streamed, not held).
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { JITTER_TOLERANCE } from './anatomy.js';
import { resetDirCache } from './file-sink.js';
import { hashSeed, Rng } from './prng.js';
import { PROJECTS, RECIPES } from './recipes.js';
import { projectDir, Session } from './session.js';
import { TruthSink, zeroTokens, type TokenTotals, type TruthCounts } from './truth.js';

/** Every timestamp is relative to this fixed instant (never the wall clock). */
export const EPOCH_MS = Date.UTC(2026, 1, 10, 9, 0, 0);
/** Sessions of one unit of the mix start this far apart (plus a seeded offset)... */
const SESSION_SPACING_MS = 3 * 3_600_000;
/** ...and each further unit (other projects, other people) starts this much later, overlapping the first. */
const UNIT_SPACING_MS = 2 * 3_600_000;

export interface GenerateOptions {
  seed: number;
  scale: number;
  out: string;
  /** `summary` leaves the per-request list out of truth.json (for benchmark corpora of many GB) */
  truth?: 'full' | 'summary';
  /** renders the channel log (`channels/backend.jsonl`) for a seed; omitted when no channel generator exists */
  channel?: (seed: number) => string;
}

export interface GenerateResult {
  out: string;
  truthPath: string;
  sessions: number;
  files: number;
  bytes: number;
  totals: TokenTotals;
  counts: TruthCounts;
}

export function sessionCount(scale: number): number {
  return Math.max(1, Math.round(RECIPES.length * scale));
}

/**
 * Refuses to write over a directory the generator did not make: `--out` is emptied of its
 * previous corpus (projects/ and truth.json) only when a truth.json of ours marks it.
 */
function prepareOut(out: string): void {
  if (!existsSync(out)) {
    mkdirSync(out, { recursive: true });
    return;
  }
  const entries = readdirSync(out);
  const ours = entries.includes('truth.json');
  if (!ours && entries.includes('projects')) {
    throw new UsageError(`${out} holds a projects/ directory that the generator did not write`, 'choose an empty --out directory');
  }
  if (ours) {
    rmSync(join(out, 'projects'), { recursive: true, force: true });
    rmSync(join(out, 'truth.json'), { force: true });
    rmSync(join(out, 'channels', 'backend.jsonl'), { force: true });
  }
}

export function generateCorpus(opts: GenerateOptions): GenerateResult {
  if (!Number.isInteger(opts.seed) || opts.seed < 0) throw new UsageError(`--seed must be a non-negative integer, got ${opts.seed}`);
  if (!(opts.scale > 0) || !Number.isFinite(opts.scale)) throw new UsageError(`--scale must be a positive number, got ${opts.scale}`);
  prepareOut(opts.out);
  resetDirCache();
  const truth = new TruthSink(opts.out, opts.truth ?? 'full');
  const n = sessionCount(opts.scale);
  const projects = new Set<string>();
  for (let k = 0; k < n; k++) {
    const recipe = RECIPES[k % RECIPES.length] as (typeof RECIPES)[number];
    const unit = Math.floor(k / RECIPES.length);
    const base = PROJECTS[recipe.project] as (typeof PROJECTS)[number];
    const cwd = unit === 0 ? base.cwd : `${base.cwd}-${unit + 1}`;
    projects.add(cwd);
    const rng = new Rng(hashSeed(opts.seed, 'session', k));
    const session = new Session({
      root: opts.out,
      truth,
      rng,
      project: { cwd, dir: projectDir(cwd), branch: base.branch },
      style: recipe.style,
      startMs: EPOCH_MS + (k % RECIPES.length) * SESSION_SPACING_MS + unit * UNIT_SPACING_MS + rng.int(0, 40 * 60_000),
      mainModel: recipe.mainModel,
      mainTtl: recipe.mainTtl,
      mainSystemTokens: recipe.mainSystemTokens,
      progressCopies: recipe.progressCopies,
    });
    recipe.run(session);
    session.finish();
  }
  if (opts.channel) {
    const rel = 'channels/backend.jsonl';
    mkdirSync(join(opts.out, 'channels'), { recursive: true });
    const text = opts.channel(opts.seed);
    writeFileSync(join(opts.out, 'channels', 'backend.jsonl'), text);
    truth.addFile({
      path: rel,
      kind: 'channel',
      session_id: null,
      chain_id: null,
      lines: text.split('\n').filter((l) => l.length > 0).length,
      bytes: Buffer.byteLength(text),
      requests: 0,
      tokens: zeroTokens(),
      progress_copy_lines: 0,
      invalid_lines: 0,
      incomplete_last_line: false,
      synthetic_lines: 0,
    });
  }
  truth.counts.sessions = n;
  truth.counts.projects = projects.size;
  const truthPath = truth.finish({
    generator: { seed: opts.seed, scale: opts.scale, epoch: new Date(EPOCH_MS).toISOString(), recipes: RECIPES.map((r) => r.name) },
    jitter_tolerance: JITTER_TOLERANCE,
    chain_id_convention: 'main chain = <sessionId>; subagent chain = <sessionId>:<agentId>',
  });
  return {
    out: opts.out,
    truthPath,
    sessions: n,
    files: truth.counts.files,
    bytes: truth.files.reduce((b, f) => b + f.bytes, 0),
    totals: truth.totals,
    counts: truth.counts,
  };
}

