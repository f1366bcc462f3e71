/**
 * Fills the report's ReportData from the store and the analyses — the same functions the
 * `summary`, `anatomy`, `whatif` and `replay` commands print, so the page and `--json` can never
 * disagree. Each section is built on its own: one that throws becomes an error card
 * (`{error}`) and the rest of the report still renders.
 */
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { AnatomyAnalysis, byWaste as byWasteUsd, type AnatomyChainRow, type AnatomyResult, type RoundRow, roundTotals } from '../analyses/anatomy-summary.js';
import { anatomizeChain } from '../analyses/anatomy.js';
import { blocks as blocksOf } from '../analyses/blocks.js';
import type { WeightsFor } from '../analyses/chain.js';
import { KeepaliveWhatIf, type KeepaliveResult } from '../analyses/keepalive.js';
import { streamChains } from '../analyses/load-chains.js';
import { detectRepurchase } from '../analyses/repurchase.js';
import { summary, type SummaryResult } from '../analyses/summary.js';
import { TtlWhatIf, type TtlResult } from '../analyses/ttl.js';
import { allUnpriced, wasteLeftOut } from '../analyses/weigh.js';
import type { Context } from '../context.js';
import type { PriceTable } from '../pricing/pricing.js';
import { UsageError } from '../errors.js';
import { channelLogError } from '../replay/channel-log.js';
import { isUtf16, skipGroups } from '../replay/skips.js';
import { realPlace } from '../store/log-dirs.js';
import { fmtCount, fmtFilters } from './format.js';
import { type ChannelReplayResult, elsewhereOfFile, locateChain, otherFilesOfFile, replaySessionFile, runChannelReplay, sessionReplayRun, topSession, transcriptPath } from '../replay/index.js';
import { runQuery } from '../store/queries.js';
import { jsonNumber } from '../format/json-numbers.js';
import { tiePhrase, tiedBudgets } from './section-keepalive.js';
import { andList } from './section.js';
import { type Filters, filterParams } from '../analyses/filters.js';
import type { Store } from '../store/store.js';
import type { Definition, SkipReason } from '../types.js';
import { COST_BY_KEYS, type BestWhatIf, type CostComponent, type CostDimension, type ReplayRun, type ReportData, type Section } from './data.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const TOP_CHAINS = 8;
/** Line types Claude Code is known to write (SPEC §1.2); anything else is listed as unknown. */
const KNOWN_TYPES = new Set(['user', 'assistant', 'system', 'attachment', 'progress', 'summary', 'file-history-snapshot', 'queue-operation', 'last-prompt']);

/** Runs one section's builder; a failure becomes that section's error card. */
async function section<T>(build: () => Promise<T> | T): Promise<Section<T>> {
  try {
    return await build();
  } catch (err) {
    if (err instanceof Refused) throw err.usage;
    return { error: (err as Error).message.split('\n')[0] || 'this analysis failed' };
  }
}

/**
 * A file the report was asked to replay that `replay session FILE`/`replay channel FILE` would
 * refuse with the same one line and exit 2 (a `--session` transcript with no request to replay): the
 * invocation's mistake, so the run ends with it, no page written, as checkReplayArgs' do. It was the
 * replay section's error card, and exit 0. Only the reading of a file given is so: `--session top`
 * when the filters choose no request, or the store failing, stays the section's card.
 */
class Refused extends Error {
  constructor(readonly usage: UsageError) {
    super(usage.message);
  }
}

/** `run`'s result; a UsageError it throws as Refused (section() lets it through). */
async function refusedAsReplay<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw err instanceof UsageError ? new Refused(err) : err;
  }
}

/**
 * The replay section's arguments, checked before any section is built: a `--channel` file that
 * cannot be read or a `--session` the logs do not hold is the invocation's mistake, not an
 * analysis's, and ends the run with one line and exit 2 as `replay channel`/`replay session` say it
 * (it was an error card, and exit 0). So does a file given that the replay commands refuse (Refused);
 * what else fails in a replay stays the section's card.
 */
async function checkReplayArgs(ctx: Context, opts: BuildOptions): Promise<void> {
  checkReplayPaths(opts);
  // a transcript path is replayed as it is, as `replay session PATH` replays it; an id must be in the logs read
  for (const id of opts.sessions ?? []) if (id !== 'top' && transcriptPath(id, `report ${id} --session ID`) === undefined) await locateChain(ctx.store, id);
}

/**
 * The replay arguments that name files (every `--channel`, a `--session` that is a transcript path):
 * one that is not there or will not open is a one-line error. They need no store, so `report`
 * checks them before it reads the logs, as `replay channel`/`replay session` do (a missing
 * `--session ./x.jsonl` was said after a whole ingest, and after 'no Claude Code logs found').
 */
export function checkReplayPaths(opts: Pick<BuildOptions, 'channels' | 'sessions'>): void {
  for (const file of opts.channels ?? []) {
    let dir: boolean;
    try {
      const fd = openSync(file, 'r');
      dir = fstatSync(fd).isDirectory();
      closeSync(fd);
    } catch (e) {
      throw channelLogError(file, e);
    }
    if (dir) throw new UsageError(`${file}: is a directory`, 'give a channel log file');
  }
  for (const id of opts.sessions ?? []) if (id !== 'top') transcriptPath(id, `report ${id} --session ID`);
}

export interface BuildOptions {
  /** channel logs to replay into the report's replay section */
  channels?: string[];
  /** the model whose prices, in the report's table (ctx.prices), the channel replays are at (default DEFAULT_CHANNEL_MODEL, as replay channel's) */
  channelModel?: string;
  /** sessions (id or unique prefix) whose main chain to replay, `top` = the most expensive one, or transcript paths (replay session's targets) */
  sessions?: string[];
  /** `--calibrate K` for the session replays: fit a conversation scale on requests 2…K+1 (0 or absent: off) */
  calibrate?: number;
  /** DuckDB's memory bound while the report is built (default ANALYSIS_MEMORY_MB) */
  memoryMb?: number;
}

/**
 * The report's data, built with DuckDB's memory bounded (ANALYSIS_MEMORY_MB; Store.boundedMemory):
 * should a section run out of memory within the bound (logs far larger than any measured), the
 * report is built again without it, slower, but no section is lost to the bound.
 */
export async function buildReportData(ctx: Context, opts: BuildOptions = {}): Promise<ReportData> {
  return ctx.store.boundedMemory(() => buildOnce(ctx, opts), {
    mb: opts.memoryMb,
    // a section that failed keeps its error's first line
    ranOut: (data, outOfMemory) => Object.values(data).some((v) => v && typeof v === 'object' && 'error' in v && outOfMemory(new Error(String(v.error)))),
  });
}

async function buildOnce(ctx: Context, opts: BuildOptions): Promise<ReportData> {
  await checkReplayArgs(ctx, opts);
  const weightsFor: WeightsFor = (m, p) => ctx.prices.weightsFor(m, p);
  const store = ctx.store;
  // The analyses several sections share, each computed once; a failure is kept for the sections that need it.
  const attempt = async <T>(f: () => Promise<T> | T): Promise<T | Error> => {
    try {
      return await f();
    } catch (err) {
      return err as Error;
    }
  };
  // The report's own queries are sent now, one after another on a second connection: DuckDB
  // answers them on its threads while this thread loads the chains and runs the analyses in JS
  // (BENCHMARKS-log.md Report). Each is awaited where a section needs it.
  const side = inOrder(await store.beside());
  // every section counts the requests of the filters, as `summary` does (the days in their time zone)
  const f = ctx.filters;
  const scope = filterParams(f);
  const spanRows = attempt(() =>
    side.all(`SELECT min(t) AS "from", max(t) AS "to", count(DISTINCT session_id) AS sessions, count(DISTINCT chain_id) AS chains FROM (${IN_SCOPE})`, scope),
  );
  // every grouping of the cost components in one pass over the requests, asked for by two sections;
  // the projects, models and agent types beyond the top COST_BY_KEYS come summed as one (a 10 GB
  // sample corpus has 22,361 projects: 114,000 rows, 14 MB of the page's data, held all along)
  const componentRows = attempt(() => runQuery(side, 'report_components', { ...scope, top: COST_BY_KEYS, group: null }));
  const skillRows = attempt(() => runQuery(side, 'skill_listing_by_agent_type', scope));
  const qualityRows = attempt(() =>
    side.all(
      `SELECT
      (SELECT coalesce(sum(size), 0) FROM files JOIN scope USING (file_id) WHERE kind <> 'meta') AS bytes,
      (SELECT count(*) FROM (${IN_SCOPE}) WHERE split_missing) AS split_missing`,
      scope,
    ),
  );
  const typeRows = attempt(() => side.all(`SELECT type, sum(n) AS n FROM line_counts JOIN scope USING (file_id) GROUP BY type ORDER BY n DESC`));

  // every query sent beside is awaited before this returns or throws: the store closes its
  // connections when the report is built, and a connection must not close under a running query
  const sideWork = [spanRows, componentRows, skillRows, qualityRows, typeRows];
  try {
    // the totals and the data quality, not the summary's groups (held to the end otherwise)
    const sum = await attempt<Pick<SummaryResult, 'totals' | 'quality'>>(async () => {
      const { totals, quality } = await summary(store, ctx.filters, ctx.walkSkips);
      return { totals, quality };
    });
    const pass = await attempt(() => analyseChains(store, ctx.filters, weightsFor));
    const components = async () => need(await componentRows);
    const anatomy = pass instanceof Error ? pass : pass.anatomy;
    const ttl = pass instanceof Error ? pass : pass.ttl;
    const keepalive = pass instanceof Error ? pass : pass.keepalive;
    const [span] = need(await spanRows);

    return {
      meta: {
        generatedAt: new Date().toISOString(),
        version: VERSION,
        roots: ctx.roots,
        from: (span?.from as number | null) ?? null,
        to: (span?.to as number | null) ?? null,
        prices: ctx.prices.date,
        timezone: f.timezone,
        ...(f.since !== null || f.until !== null || f.project !== null ? { filters: { since: f.since, until: f.until, project: f.project } } : {}),
      },
      headline: await section(() => {
        const s = need(sum);
        const a = need(anatomy);
        const t = s.totals;
        // nothing priced: the waste is unknown as the cost is, not $0 (anatomy's sums are 0 then), unless the
        // requests wrote no expiry or break token: then it is 0, as anatomy's waste line says (README's one rule for +?)
        const known = t.weight !== null || !wasteLeftOut(a.totals);
        return {
          usd: t.usd,
          weight: t.weight,
          hitRatio: a.totals.hit_ratio,
          wasteWeight: known ? a.totals.waste_weight : null,
          wasteUsd: known ? a.totals.waste_usd : null,
          requests: t.requests,
          sessions: Number(span?.sessions ?? 0),
          chains: Number(span?.chains ?? 0),
          unpricedRequests: t.unpriced_requests,
          wasteUnpricedTokens: a.totals.unpriced_tokens.expiry + a.totals.unpriced_tokens.break,
          wasteUnpricedRequests: a.totals.unpriced_waste_requests,
          tokens: { input: t.input, output: t.output, write5m: t.cache_write_5m, write1h: t.cache_write_1h, read: t.cache_read },
          bestWhatIf: bestWhatIf(ttl, keepalive),
        };
      }),
      costOverTime: await section(async () => ({
        rows: (await components()).filter((r) => r.grouping === 'day').map((r) => ({
          day: String(r.grp),
          component: r.component as CostComponent,
          usd: r.usd === null ? null : Number(r.usd),
          // no priced request: unknown as summary gives it, not the query's 0
          weight: r.usd === null ? null : Number(r.weight),
          tokens: Number(r.tokens),
          unpricedRequests: Number(r.unpriced_requests),
          unpricedTokens: Number(r.unpriced_tokens),
        })),
        timezone: f.timezone,
      })),
      costBy: await section(async () => {
        const rows = [];
        const all = await components();
        for (const [dimension, group] of [['project', 'project'], ['model', 'model'], ['agentType', 'agent_type']] as const) {
          for (const r of all.filter((x) => x.grouping === group)) {
            rows.push({
              dimension: dimension as CostDimension,
              key: r.grp === null ? null : String(r.grp),
              groups: Number(r.groups),
              ...(r.grp === null ? { unpricedGroups: Number(r.unpriced_groups) } : {}),
              ...(r.grp === null && Array.isArray(r.unpriced_names) ? { unpricedNames: (r.unpriced_names as unknown[]).map(String) } : {}),
              component: r.component as CostComponent,
              usd: r.usd === null ? null : Number(r.usd),
              weight: r.usd === null ? null : Number(r.weight),
              unpricedRequests: Number(r.unpriced_requests),
              // the segment's own: a component the unpriced requests have no tokens of is whole, as cost over time marks it
              unpricedTokens: Number(r.unpriced_tokens),
            });
          }
        }
        return { rows };
      }),
      anatomy: await section(() => ({
        rows: need(anatomy).by_agent_type.flatMap((a) =>
          (['cold', 'growth', 'expiry', 'break'] as const).map((component) => ({
            agentType: a.agent_type,
            component,
            tokens: a[component],
            // an agent type none of whose requests has a price: its weights are unknown, not 0 (its row says unknown whole)
            weight: allUnpriced(a) ? null : a.anatomy_weight[component],
            usd: allUnpriced(a) ? null : a.anatomy_usd[component],
            unpricedTokens: a.unpriced_tokens[component],
          })),
        ),
        unpricedModels: need(anatomy).unpriced_models,
      })),
      topChains: await section(async () => {
        need(anatomy);
        const { top: ranked, withoutWaste } = need(pass);
        const projectOf = await projectsOf(side, ranked.map((x) => x.row.session_id));
        return {
          chains: ranked.map(({ row: c, rounds, readMedian }) => ({
            chainId: c.chain_id,
            sessionId: c.session_id,
            project: projectOf.get(c.session_id) ?? 'unknown',
            agentType: c.agent_type,
            model: c.model,
            requests: c.requests,
            // a chain none of whose requests has a price: its cost and waste are unknown, not 0
            weight: allUnpriced(c) ? null : c.weight,
            usd: allUnpriced(c) ? null : c.usd,
            wasteWeight: allUnpriced(c) && wasteLeftOut(c) ? null : c.waste_weight,
            wasteUsd: allUnpriced(c) && wasteLeftOut(c) ? null : c.waste_usd,
            unpricedRequests: c.unpriced_requests,
            wasteUnpricedTokens: c.unpriced_tokens.expiry + c.unpriced_tokens.break,
            hitRatio: c.hit_ratio,
            repurchase: c.repurchase,
            ...(c.repurchase ? { readMedian } : {}),
            rounds: rounds.map((r) => ({ round: r.round, read: r.read, write: r.write, rewrite: r.rewrite })),
            roundCount: c.rounds,
          })),
          withoutWaste,
        };
      }),
      crossTab: await section(async () => ({
        rowDimension: 'agent_type',
        rows: need(await skillRows).map((r) => ({
          key: String(r.agent_type),
          definition: r.definition as Definition,
          chains: Number(r.chains),
          chainsWithoutRequests: Number(r.chains_without_requests),
          chainsWithSkillListing: Number(r.chains_with_skill_listing),
          skillListings: Number(r.skill_listings),
          rounds: Number(r.rounds),
          chainsListingsEqualRounds: Number(r.chains_listings_equal_rounds),
          weight: r.weight === null ? null : Number(r.weight),
          unpricedRequests: Number(r.unpriced_requests ?? 0),
        })),
      })),
      ttlOverride: await section(() => {
        const t = need(ttl);
        // nothing priced: unknown, as `whatif ttl` prints it, not $0
        const known = !allUnpriced(t);
        return {
          direction: 'force1h' as const,
          baseline: { weight: known ? t.baseline_weight : null, usd: known ? t.baseline_usd : null },
          scenario: { weight: known ? t.scenario_weight : null, usd: known ? t.scenario_usd : null },
          // by USD, as the verdict: weights of different models do not add up to one cost
          deltaShare: t.delta_usd_pct === null ? null : t.delta_usd_pct / 100,
          expiryShare: t.expiry_share,
          breakEvenShare: t.break_even_share,
          unpricedRequests: t.unpriced_requests,
          unpricedModels: t.unpriced_models,
          changedUnpricedChains: t.changed_unpriced_chains ?? 0,
          buckets: t.buckets.map((b) => ({
            dimension: b.dimension,
            bucket: b.bucket,
            baselineWeight: allUnpriced(b) ? null : b.baseline_weight,
            scenarioWeight: allUnpriced(b) ? null : b.scenario_weight,
            deltaShare: b.delta_usd_pct === null ? null : b.delta_usd_pct / 100,
            expiryShare: b.expiry_share,
            changedUnpricedChains: b.changed_unpriced_chains,
          })),
        };
      }),
      keepalive: await section(() => {
        const k = need(keepalive);
        return {
          intervalSeconds: k.interval_s,
          ttlSeconds: k.ttl_s,
          ...(k.best_budget === null ? {} : { best: k.best_budget === 'inf' ? null : k.best_budget }),
          gaps: k.gaps,
          unpricedGaps: k.unpriced_gaps,
          unpricedPingedGaps: k.unpriced_pinged_gaps,
          budgets: k.budgets.map((b) => ({
            budget: b.budget === 'inf' ? null : b.budget,
            netSavingWeight: b.net_saving_weight,
            netSavingUsd: b.net_saving_usd,
            netSavingShareSubagent: b.net_saving_pct_subagent === null ? null : b.net_saving_pct_subagent / 100,
            netSavingShareAll: b.net_saving_pct_all === null ? null : b.net_saving_pct_all / 100,
            gapsOverTtl: b.gaps_over_ttl,
            bridged: b.bridged,
            expiredAfterBudget: b.expired_after_budget,
            pings: b.pings,
          })),
        };
      }),
      replay:
        (opts.channels?.length ?? 0) + (opts.sessions?.length ?? 0) > 0
          ? await section(async () => {
              const runs: ReplayRun[] = [];
              for (const file of opts.channels ?? []) runs.push(await refusedAsReplay(() => channelRun(file, ctx.prices, opts.channelModel)));
              // one chain named twice (its id and a prefix, `top` and its id, its transcript's path) is replayed once, as a
              // --channel log named twice is: it was replayed, shown and counted ("2 replays") once per name
              const seen = new Set<string>();
              for (const id of opts.sessions ?? []) {
                const run = await sessionRun(ctx, id, opts.calibrate ?? 0, seen);
                if (run) runs.push(run);
              }
              return { runs };
            })
          : undefined,
      blocks: await section(async () => ({
        blocks: (await blocksOf(store, ctx.filters)).blocks.map((b) => ({
          start: Date.parse(b.start),
          end: Date.parse(b.end),
          usd: b.usd,
          weight: b.weight,
          requests: b.requests,
          tokens: b.tokens,
          unpricedRequests: b.unpriced_requests,
        })),
        timezone: f.timezone,
      })),
      dataQuality: await section(async () => {
        const q = need(sum).quality;
        const [x] = need(await qualityRows);
        const types = need(await typeRows);
        return {
          files: q.files,
          lines: q.lines,
          bytes: Number(x.bytes),
          requests: need(sum).totals.requests,
          duplicatesRemoved: q.duplicates_removed,
          splitMissing: Number(x.split_missing),
          skipped: q.skipped.map((s) => ({
            reason: s.reason as SkipReason,
            count: s.count,
            examples: s.examples.map((e) => ({ path: e.file, line: e.line ?? null, detail: e.detail })),
            ...(s.utf16_files?.length ? { utf16Files: s.utf16_files.map((u) => ({ path: u.file, lines: u.lines })) } : {}),
          })),
          unknownModels: q.unknown_models.map((m) => ({ model: m.model, requests: m.requests })),
          unknownLineTypes: types.filter((t) => !KNOWN_TYPES.has(String(t.type))).map((t) => ({ type: String(t.type), count: Number(t.n) })),
        };
      }),
    };
  } finally {
    await Promise.all(sideWork);
  }
}

interface ChainAnalyses {
  anatomy: AnatomyResult | Error;
  ttl: TtlResult | Error;
  keepalive: KeepaliveResult | Error;
  /**
   * the chains with the most waste (then weight, then id), at most TOP_CHAINS, with their sums per
   * round, not the chains (one 700 MB session's four of 25,000 – 89,000 requests were held to the
   * end; BENCHMARKS-log.md, Report, session 27)
   */
  top: { row: AnatomyChainRow; rounds: RoundRow[]; readMedian: number | null }[];
  /** chains that re-bought nothing (no expiry or break rewrite): never among `top` */
  withoutWaste: number;
}

/**
 * The anatomy, the 1-hour TTL and the keepalive what-ifs over every chain in scope, in one pass
 * over the chains as they are read (streamChains): the report holds a batch of chains and the
 * analyses' sums, not every request (a 10 GB report held 1.48 million of them). An analysis that
 * throws fails alone, as when each read the chains itself.
 */
async function analyseChains(store: Store, filters: Filters, weightsFor: WeightsFor): Promise<ChainAnalyses> {
  const attempt = <T>(f: () => T): T | Error => {
    try {
      return f();
    } catch (err) {
      return err as Error;
    }
  };
  let anatomy = attempt(() => new AnatomyAnalysis({ weightsFor }, { lists: false }));
  let ttl = attempt(() => new TtlWhatIf({ to: '1h', scope: 'all', weightsFor }));
  let keepalive = attempt(() => new KeepaliveWhatIf({ weightsFor }));
  const top: ChainAnalyses['top'] = [];
  let withoutWaste = 0;
  const rank = (row: AnatomyChainRow, chain: Parameters<typeof roundTotals>[0]) => {
    // a re-purchase chain's pinned read is its rounds' first reads (the rule's), not the rounds' sums the chart draws
    if (wasted(row)) keepTop(top, row, () => ({ rounds: roundTotals(chain, { weightsFor }), readMedian: row.repurchase ? detectRepurchase(anatomizeChain(chain)).readMedian : null }));
    else withoutWaste++;
  };
  for await (const batch of streamChains(store, filters, { keys: false })) {
    for (const chain of batch) {
      // an analysis that throws is its error from then on
      const [a, t, k] = [anatomy, ttl, keepalive];
      if (!(a instanceof Error)) anatomy = attempt(() => (rank(a.add(chain), chain), a));
      if (!(t instanceof Error)) ttl = attempt(() => (t.add(chain), t));
      if (!(k instanceof Error)) keepalive = attempt(() => (k.add(chain), k));
    }
  }
  return {
    anatomy: anatomy instanceof Error ? anatomy : anatomy.result(),
    ttl: ttl instanceof Error ? ttl : ttl.result(),
    keepalive: keepalive instanceof Error ? keepalive : keepalive.result(),
    top,
    withoutWaste,
  };
}

/**
 * Whether a chain wasted anything: it re-bought context after an expiry or a break. By tokens, so
 * a chain without a price that re-bought is listed (its waste unknown), as anatomy counts it;
 * priced, these are the chains whose waste_weight is above 0.
 */
function wasted(row: AnatomyChainRow): boolean {
  return row.expiry + row.break > 0;
}

/** The report's order of chains: anatomy's byWaste (the USD of the waste, unknown last), as its re-purchase list. */
function byWaste(a: AnatomyChainRow, b: AnatomyChainRow): number {
  return byWasteUsd({ ...a, unknown: allUnpriced(a) }, { ...b, unknown: allUnpriced(b) });
}

/** Puts a chain among `top` if it ranks there (byWaste), keeping at most TOP_CHAINS; `rounds` only then. */
function keepTop(top: ChainAnalyses['top'], row: AnatomyChainRow, rounds: () => { rounds: RoundRow[]; readMedian: number | null }): void {
  if (top.length === TOP_CHAINS && byWaste(row, top[top.length - 1]!.row) >= 0) return;
  let i = top.length;
  while (i > 0 && byWaste(row, top[i - 1]!.row) < 0) i--;
  top.splice(i, 0, { row, ...rounds() });
  if (top.length > TOP_CHAINS) top.pop();
}

/** Each of these sessions' project (any of its requests'), by session id. */
async function projectsOf(source: Pick<Store, 'all'>, sessions: string[]): Promise<Map<string, string>> {
  if (sessions.length === 0) return new Map();
  const params = Object.fromEntries(sessions.map((s, i) => [`s${i}`, s]));
  const rows = await source.all(
    `SELECT session_id, any_value(project) AS project FROM requests WHERE session_id IN (${sessions.map((_, i) => `$s${i}`).join(', ')}) GROUP BY session_id`,
    params,
  );
  return new Map(rows.map((r) => [r.session_id as string, r.project as string]));
}

/** Queries sent to `source` run one after another, each once the one before has finished. */
function inOrder(source: Pick<Store, 'all'>): Pick<Store, 'all'> {
  let last: Promise<unknown> = Promise.resolve();
  return {
    all(sql, params) {
      const rows = last.then(() => source.all(sql, params));
      last = rows.catch(() => undefined);
      return rows;
    },
  };
}

/** A failed shared analysis fails each section that needs it with the analysis's own message. */
function need<T>(x: T | Error): T {
  if (x instanceof Error) throw x;
  return x;
}

/**
 * The what-if that saves the most USD (weight when USD is unknown), with the others that save
 * exactly as much (`tiedWith`): a tie names them all, not whichever sorted first.
 * Example: the 1-hour TTL and keepalive at budget 3 both save $4.06 and 812,000 wt → label
 * "force the 1-hour cache TTL", tiedWith ["keepalive pings, budget 3 per gap (every larger budget nets the same)"].
 */
export function bestWhatIf(ttl: TtlResult | Error, keepalive: KeepaliveResult | Error): BestWhatIf | null {
  const options: BestWhatIf[] = [];
  if (!(ttl instanceof Error) && ttl.baseline_weight > 0) {
    const saving = ttl.baseline_weight - ttl.scenario_weight;
    const unknown = ttl.changed_unpriced_chains ?? 0;
    options.push({
      label: 'force the 1-hour cache TTL',
      savingWeight: saving,
      savingUsd: ttl.baseline_usd - ttl.scenario_usd,
      ...shareOf(ttl.baseline_usd - ttl.scenario_usd, ttl.baseline_usd, saving, ttl.baseline_weight),
      ...(unknown > 0 ? { unknownEffect: `${fmtCount(unknown, 'chain')} of unpriced models` } : {}),
    });
  }
  if (!(keepalive instanceof Error) && keepalive.baseline_weight > 0 && keepalive.best_budget !== null) {
    // budget 0 sends no ping: it is the bill as it is, not a what-if ("keepalive pings, budget 0 per gap, changes cost by
    // 0.0%"), and nor is a budget that sends none. So the what-if is the best budget above 0 that pings, ranked as
    // best_budget is (by USD, ties to the smaller): when every such budget costs more, best_budget is 0 and the least
    // costly of them is still the keepalive what-if (it was left out, and the TTL override was called "the least
    // costly" while one ping per gap cost less)
    const pinging = keepalive.budgets.filter((b) => b.budget !== 0 && b.pings > 0);
    let best = pinging.find((b) => b.budget === keepalive.best_budget);
    if (keepalive.best_budget === 0) {
      for (const row of pinging) if (!best || row.net_saving_usd > best.net_saving_usd + 1e-12 * Math.abs(best.net_saving_usd)) best = row;
    }
    if (best) {
      // the budgets that net what the best (the smallest of them) nets, as the keepalive section names them
      const nets = pinging.map((b) => ({ budget: b.budget === 'inf' ? null : b.budget, netSavingUsd: b.net_saving_usd, netSavingWeight: b.net_saving_weight, pings: b.pings }));
      const bestNet = nets[pinging.indexOf(best)]!;
      options.push({
        label: `keepalive pings, budget ${best.budget === 'inf' ? '∞' : best.budget} per gap${tiePhrase(nets, bestNet, tiedBudgets(nets, bestNet))}`,
        savingWeight: best.net_saving_weight,
        savingUsd: best.net_saving_usd,
        ...shareOf(best.net_saving_usd, keepalive.baseline_usd, best.net_saving_weight, keepalive.baseline_weight),
        // a budget above 0 pings every gap of an unpriced model longer than the interval: their cost and saving no sum holds
        ...(keepalive.unpriced_pinged_gaps > 0 ? { unknownEffect: `${fmtCount(keepalive.unpriced_pinged_gaps, 'gap')} of unpriced models` } : {}),
      });
    }
  }
  // by USD: weights of models with different base prices do not add up to one cost; sums of
  // doubles compared as --json writes them, so float noise in the last bits is no winner
  const usd = (o: BestWhatIf) => (o.savingUsd === null ? -Infinity : jsonNumber(o.savingUsd));
  const order = (a: BestWhatIf, b: BestWhatIf) => usd(b) - usd(a) || jsonNumber(b.savingWeight) - jsonNumber(a.savingWeight);
  options.sort(order);
  const [top, ...rest] = options;
  if (!top) return null;
  const ties = rest.filter((o) => order(top, o) === 0);
  if (!ties.length) return top;
  // the tie's unknowns, each what-if's: "1 chain of unpriced models and 2 gaps of unpriced models"
  const unknown = [...new Set([top, ...ties].flatMap((o) => (o.unknownEffect ? [o.unknownEffect] : [])))];
  const { unknownEffect: _, ...sums } = top;
  return { ...sums, tiedWith: ties.map((o) => o.label), ...(unknown.length ? { unknownEffect: andList(unknown) } : {}) };
}

/**
 * A what-if's saving as a share of the bill: of its USD when that is known, as the TTL section's
 * verdict says it (the weight share beside a dollar saving read as a share of it: "$2.11 (5.9%)" of
 * $41.94, which is 5.0%), else of its weight.
 */
function shareOf(usd: number, baselineUsd: number, weight: number, baselineWeight: number): Pick<BestWhatIf, 'savingShare' | 'shareOf'> {
  return baselineUsd > 0 ? { savingShare: usd / baselineUsd, shareOf: 'cost' } : { savingShare: weight / baselineWeight, shareOf: 'weight' };
}

/** The requests the filters choose ($tz, $since, $until, $project: filterParams), as `summary` counts them. */
const IN_SCOPE = `SELECT * FROM requests
  WHERE ($since IS NULL OR CAST(timezone($tz, ts) AS DATE) >= CAST($since AS DATE)) AND ($until IS NULL OR CAST(timezone($tz, ts) AS DATE) <= CAST($until AS DATE))
    AND ($project IS NULL OR contains(fold_case(project), fold_case($project)))`;

/**
 * Replays a session's main chain (`top`: the most expensive session's) under every session
 * strategy, with `replay session --calibrate K`'s conversation scale when `calibrate` > 0.
 */
async function sessionRun(ctx: Context, id: string, calibrate: number, seen: Set<string>): Promise<ReplayRun | null> {
  // the same chain of the same file (where it really is) is replayed once: null when `seen` holds it
  const first = (file: string, chainId: string) => {
    const key = `${realPlace(resolve(file))}\0${chainId}`;
    return !seen.has(key) && Boolean(seen.add(key));
  };
  // a transcript path: its main chain, replayed as `replay session PATH` replays it (checkReplayArgs checked it)
  const path = transcriptPath(id, `report ${id} --session ID`);
  // and when the logs read hold it, its copies of another transcript's requests left out, as for an id
  if (path !== undefined) {
    const elsewhere = await elsewhereOfFile(ctx.store, path);
    const otherFiles = await otherFilesOfFile(ctx.store, path);
    // the file's own refusals (no request to replay in it) are the invocation's: they end the run (Refused)
    const run = sessionReplayRun(await refusedAsReplay(() => replaySessionFile(path, { elsewhere, otherFiles, prices: ctx.prices, calibrate })));
    return run.session && !first(path, run.session.chainId) ? null : withDays(ctx, run);
  }
  // `top`: the most expensive session in scope, as `sessions` ranks them
  const want = id === 'top' ? await topSession(ctx.store, IN_SCOPE, filterParams(ctx.filters)) : id;
  const chain = await locateChain(ctx.store, want);
  if (!first(chain.path, chain.chain_id)) return null;
  return withDays(ctx, sessionReplayRun(await replaySessionFile(chain.path, { chain: chain.chain_id, elsewhere: chain.elsewhere, progressOnly: chain.progress_only, otherFiles: { requests: chain.other_file_requests, files: chain.other_files }, otherCopies: chain.other_copies, otherCopiesBy: chain.other_copies_by, otherCopiesTied: chain.other_copies_tied, prices: ctx.prices, calibrate })));
}

/**
 * A session replay is of its whole chain, whatever days --since/--until (or --project) choose (a request's
 * context is every request before it); when some of the chain's requests are outside them, how many the filters
 * choose, so that its "6 requests" beside the page's 3 of that session is not read as a miscount. The chain as the store
 * counts it: a transcript the logs read do not hold has no requests in scope to count, and says nothing. The
 * requests held only by a parent's agent_progress copies are left out of both counts, as the replay leaves them out.
 */
async function withDays(ctx: Context, run: ReplayRun): Promise<ReplayRun> {
  const c = run.session;
  if (!c || (ctx.filters.since === null && ctx.filters.until === null && ctx.filters.project === null)) return run;
  // on the replay's basis: the requests only a parent's agent_progress copies hold (rank 0, SPEC §1.3) are not
  // replayed, so are not counted here either ('11 of its 5 requests' counted them among the chosen)
  const rows = await ctx.store.all(`SELECT count(*) AS n, (SELECT count(*) FROM requests WHERE chain_id = $chain AND rank <> 0) AS held FROM (${IN_SCOPE}) WHERE chain_id = $chain AND rank <> 0`, {
    ...filterParams(ctx.filters),
    chain: c.chainId,
  });
  const n = Number(rows[0]?.n ?? 0);
  if (Number(rows[0]?.held ?? 0) === 0 || n === c.requests) return run;
  return { ...run, session: { ...c, inScope: { requests: n, filters: fmtFilters(ctx.filters) } } };
}

/** A channel log replayed at `model`'s prices in the report's table (its --pricing), as `replay channel --pricing --model` replays it. */
async function channelRun(file: string, prices: PriceTable, model: string | undefined): Promise<ReplayRun> {
  const r: ChannelReplayResult = await runChannelReplay({ file, prices, model });
  const strategies = Object.entries(r.strategies).map(([strategy, s]) => ({
    strategy,
    inputTokens: s.input_tokens,
    cacheablePrefix: s.cacheable_tokens,
    cacheableRatio: s.cacheable_ratio,
    uncachedPerWarmTurn: s.uncached_per_warm_turn,
    contextTokens: s.context_tokens,
    alreadySeen: s.already_seen_tokens,
    rowsSent: s.rows_sent,
    weight: s.weight,
    usd: s.usd,
    rowsNeverShown: s.rows_never_shown,
    turns: r.turns.filter((t) => t.strategy === strategy).map((t) => ({ turn: t.mention, input: t.input_tokens, cacheable: t.cacheable_tokens })),
  }));
  return {
    kind: 'channel',
    title: r.channel.file ? basename(r.channel.file) : r.channel.channel_id,
    strategies,
    rowsNeverShown: strategies.length ? Object.values(r.strategies)[0].rows_never_shown : 0,
    // what replay channel says of the log's bad lines: the section left them out without a word
    channelSkipped: {
      lines: r.channel.skipped_lines.length,
      groups: skipGroups(r.channel.skipped_lines),
      ...(r.channel.skipped_lines.some((l) => isUtf16(l.detail)) ? { utf16Lines: r.channel.skipped_lines.filter((l) => isUtf16(l.detail)).length, file: r.channel.file ?? '' } : {}),
    },
    prices: { model: r.settings.model, usdPerMillionInput: r.settings.usd_per_input_token * 1e6, pricingFile: r.settings.pricing_file, fromPricingFile: r.settings.model_prices_from === 'pricing_file' },
  };
}
