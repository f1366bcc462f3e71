/**
 * A hand-made, realistic ReportData that exercises every section of the report: a week of
 * Opus/Sonnet work over three projects, subagents with a lost definition that re-buy their
 * context every round, a TTL override that loses in every bucket, a keepalive curve whose best
 * bounded budget saves a little, a channel replay and the data-quality panel.
 */
import type { CostComponent, ReportData } from '../../src/report/data.js';

const DAY = 86_400_000;
const t0 = Date.UTC(2026, 0, 5, 8, 0, 0);

const components: CostComponent[] = ['input', 'output', 'write5m', 'write1h', 'read'];
/** USD per million tokens for Opus 4.6 */
const price: Record<CostComponent, number> = { input: 5, output: 25, write5m: 6.25, write1h: 10, read: 0.5 };
const weightPerToken: Record<CostComponent, number> = { input: 1, output: 5, write5m: 1.25, write1h: 2, read: 0.1 };

function costRow(tokens: number, component: CostComponent) {
  return { tokens, weight: tokens * weightPerToken[component], usd: (tokens * price[component]) / 1e6 };
}

function days() {
  const rows = [];
  const mix: Record<CostComponent, number> = { input: 40_000, output: 120_000, write5m: 2_400_000, write1h: 300_000, read: 21_000_000 };
  for (let d = 0; d < 7; d++) {
    const day = new Date(t0 + d * DAY).toISOString().slice(0, 10);
    const scale = [1, 1.4, 0.6, 2.2, 1.8, 0.3, 0.9][d]!;
    for (const c of components) rows.push({ day, component: c, ...costRow(Math.round(mix[c] * scale), c) });
  }
  return rows;
}

function costBy() {
  const rows: NonNullable<Extract<ReportData['costBy'], { rows: unknown }>>['rows'] = [];
  const keys = {
    project: ['/home/dev/marot-spotter', '/home/dev/cachelens', '/home/dev/notes'],
    model: ['claude-opus-4-6', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5'],
    agentType: ['main', 'general-purpose', 'myplugin:planner', 'planner', 'Explore'],
  } as const;
  for (const [dimension, list] of Object.entries(keys) as Array<[keyof typeof keys, readonly string[]]>) {
    list.forEach((key, i) => {
      for (const c of components) {
        const base = { input: 30_000, output: 90_000, write5m: 2_000_000, write1h: 200_000, read: 18_000_000 }[c];
        rows.push({ dimension, key, groups: 1, component: c, ...costRow(Math.round(base / (i + 1)), c) });
      }
    });
  }
  return rows;
}

/** A chain that re-buys its whole context every round: reads pinned at 13,818, writes climbing. */
function repurchaseRounds(n: number) {
  return Array.from({ length: n }, (_, i) => {
    const write = 131_000 + i * 12_400;
    return { round: i + 1, read: 13_818, write, rewrite: i === 0 ? 0 : Math.round(write * 0.92) };
  });
}

function healthyRounds(n: number) {
  return Array.from({ length: n }, (_, i) => ({ round: i + 1, read: 20_000 + i * 9_000, write: i === 0 ? 20_000 : i === 6 ? 90_957 : 9_000, rewrite: i === 6 ? 81_957 : 0 }));
}

export function fixtureReport(): ReportData {
  const keepaliveBudgets = [...Array.from({ length: 21 }, (_, b) => b), null].map((budget) => {
    const b = budget ?? 40;
    const bridged = Math.min(84, Math.round(84 * (1 - Math.exp(-b / 2.5))));
    const saving = budget === null ? -0.18 : 0.05 * (1 - Math.exp(-b / 2)) - 0.0025 * b;
    return {
      budget,
      netSavingWeight: Math.round(saving * 4_000_000),
      netSavingUsd: saving * 20,
      netSavingShareSubagent: saving,
      netSavingShareAll: saving / 5,
      gapsOverTtl: 105,
      bridged: budget === null ? 105 : bridged,
      expiredAfterBudget: budget === null ? 0 : 105 - bridged,
      pings: budget === null ? 1_480 : b * 90,
    };
  });
  const turns = (uncachedWarm: number, unstable = false) =>
    Array.from({ length: 30 }, (_, i) => {
      const input = 2_586 + i * 420;
      const cacheable = unstable ? 5 : i === 0 ? 0 : input - uncachedWarm - (i % 4) * 40;
      return { turn: i + 1, input, cacheable };
    });
  // a session replay's strategy as replay session's table gives it: processes, expired requests, USD (11 requests, all priced)
  const costs = (processes: number, expiredRequests: number, usd: number) => ({ requests: 11, unpricedRequests: 0, usd, pricedUsd: usd, processes, expiredRequests, expiredUnknownGap: 0, outputTokens: 9_140 });
  return {
    meta: {
      title: 'cachelens report — fixture',
      generatedAt: '2026-01-12T09:30:00.000Z',
      version: '0.1.0',
      roots: ['/home/dev/.claude/projects'],
      from: t0,
      to: t0 + 6 * DAY + 9 * 3_600_000,
      prices: 'bundled table of 2026-01-01',
    },
    headline: {
      usd: 412.37,
      weight: 82_474_000,
      hitRatio: 0.874,
      wasteWeight: 9_120_000,
      wasteUsd: 45.6,
      requests: 12_480,
      sessions: 41,
      chains: 468,
      unpricedRequests: 3,
      tokens: { input: 300_000, output: 950_000, write5m: 18_200_000, write1h: 2_100_000, read: 160_000_000 },
      bestWhatIf: { label: 'keepalive pings, budget 3 per gap', savingWeight: 812_000, savingUsd: 4.06, savingShare: 0.0098, shareOf: 'cost' },
    },
    costOverTime: { rows: days() },
    costBy: { rows: costBy() },
    anatomy: {
      rows: [
        ['main', [1_900_000, 5_200_000, 1_400_000, 300_000]],
        ['general-purpose', [900_000, 2_100_000, 400_000, 150_000]],
        ['planner', [420_000, 300_000, 80_000, 2_900_000]],
        ['myplugin:planner', [380_000, 1_100_000, 60_000, 20_000]],
        ['Explore', [200_000, 600_000, 10_000, 5_000]],
      ].flatMap(([agentType, v]) =>
        (['cold', 'growth', 'expiry', 'break'] as const).map((component, i) => {
          const tokens = (v as number[])[i]!;
          return { agentType: agentType as string, component, tokens, weight: tokens * 1.25, usd: (tokens * 6.25) / 1e6 };
        }),
      ),
    },
    topChains: {
      chains: [
        {
          chainId: 'agent-a4f2c9e1', sessionId: '4d5611e5-0c1e-4b7e-9a55-0f3b5c8d9e21', project: '/home/dev/marot-spotter',
          agentType: 'planner', model: 'claude-opus-4-6', requests: 9, weight: 2_260_000, usd: 11.3,
          wasteWeight: 1_720_000, wasteUsd: 8.6, hitRatio: 0.08, repurchase: true, rounds: repurchaseRounds(9),
        },
        {
          chainId: 'agent-b7d03a22', sessionId: '91aa0c3e-6f7d-4d1a-8c1b-3e2f1d0c9b88', project: '/home/dev/cachelens',
          agentType: 'planner', model: 'claude-opus-4-6', requests: 8, weight: 1_790_000, usd: 8.95,
          wasteWeight: 1_310_000, wasteUsd: 6.55, hitRatio: 0.09, repurchase: true, rounds: repurchaseRounds(8),
        },
        {
          chainId: 'main:4d5611e5', sessionId: '4d5611e5-0c1e-4b7e-9a55-0f3b5c8d9e21', project: '/home/dev/marot-spotter',
          agentType: 'main', model: 'claude-opus-4-6', requests: 214, weight: 9_400_000, usd: 47,
          wasteWeight: 410_000, wasteUsd: 2.05, hitRatio: 0.93, repurchase: false, rounds: healthyRounds(12),
        },
      ],
      withoutWaste: 131,
    },
    crossTab: {
      rowDimension: 'definition',
      rows: [
        { key: 'resolved', chains: 165, chainsWithSkillListing: 0, skillListings: 0, rounds: 612, chainsListingsEqualRounds: 0, weight: 21_000_000, definition: 'resolved' },
        { key: 'lost', chains: 62, chainsWithSkillListing: 62, skillListings: 301, rounds: 301, chainsListingsEqualRounds: 62, weight: 14_500_000, definition: 'lost' },
        { key: 'unknown', chains: 207, chainsWithSkillListing: 12, skillListings: 19, rounds: 540, chainsListingsEqualRounds: 3, weight: 9_800_000, definition: 'unknown' },
      ],
    },
    ttlOverride: {
      direction: 'force1h',
      baseline: { weight: 82_474_000, usd: 412.37 },
      scenario: { weight: 97_319_000, usd: 486.6 },
      deltaShare: 0.18,
      expiryShare: 0.16,
      breakEvenShare: 0.75 / 1.9,
      buckets: [
        { dimension: 'chain', bucket: 'main', baselineWeight: 52_000_000, scenarioWeight: 60_300_000, deltaShare: 0.16, expiryShare: 0.19 },
        { dimension: 'chain', bucket: 'subagent', baselineWeight: 30_474_000, scenarioWeight: 37_019_000, deltaShare: 0.215, expiryShare: 0.13 },
        { dimension: 'model', bucket: 'claude-opus-4-6', baselineWeight: 70_000_000, scenarioWeight: 82_000_000, deltaShare: 0.171, expiryShare: 0.17 },
        { dimension: 'model', bucket: 'claude-sonnet-4-5-20250929', baselineWeight: 12_474_000, scenarioWeight: 15_319_000, deltaShare: 0.228, expiryShare: 0.11 },
        { dimension: 'rounds', bucket: '1–3', baselineWeight: 8_000_000, scenarioWeight: 9_900_000, deltaShare: 0.237, expiryShare: 0.04 },
        { dimension: 'rounds', bucket: '20+', baselineWeight: 41_000_000, scenarioWeight: 46_700_000, deltaShare: 0.139, expiryShare: 0.24 },
      ],
    },
    keepalive: { intervalSeconds: 270, ttlSeconds: 300, budgets: keepaliveBudgets, best: 3 },
    replay: {
      runs: [
        {
          kind: 'channel',
          title: 'backend-channel.jsonl (@builder, 30 mentions)',
          rowsNeverShown: 25,
          strategies: [
            { strategy: 'window', inputTokens: 515_784, cacheablePrefix: 485_477, cacheableRatio: 0.941, uncachedPerWarmTurn: 943, contextTokens: 9_132, alreadySeen: 5_057, rowsSent: 360, weight: 118_000, turns: turns(943) },
            { strategy: 'watermark', inputTokens: 417_419, cacheablePrefix: 392_256, cacheableRatio: 0.94, uncachedPerWarmTurn: 766, contextTokens: 4_075, alreadySeen: 0, rowsSent: 162, weight: 96_000, turns: turns(766) },
            { strategy: 'unstable', inputTokens: 418_259, cacheablePrefix: 145, cacheableRatio: 0, uncachedPerWarmTurn: 14_315, contextTokens: 4_075, alreadySeen: 0, rowsSent: 162, weight: 530_000, turns: turns(0, true) },
          ],
        },
        {
          kind: 'session',
          title: 'planner chain agent-a4f2c9e1',
          fidelity: {
            requests: 9,
            from: 2,
            medianRelError: 0.062,
            p90RelError: 0.14,
            compared: 10,
            meanSignedRelError: -0.048,
            observedZero: 1,
            cacheRead: { requests: 8, medianRelError: 0.071, p90RelError: 0.19, meanSignedRelError: -0.052, observedZero: 2, predictedZeroToo: 1 },
          },
          session: {
            chainId: 'agent-a4f2c9e1',
            chainKind: 'subagent',
            requests: 11,
            rounds: 3,
            compactions: 0,
            models: ['claude-sonnet-4-5-20250929'],
            copiedRequests: 0,
            progressOnlyRequests: 0,
            prefixTokens: 14_210,
            observedPrompt: 15_030,
            messageTokens: 820,
            clamped: false,
            encoding: 'cl100k_base',
            thinking: 'keep',
            reinject: null,
            skippedLines: 1,
            notedLines: 0,
            skipped: [{ reason: 'invalid_json', count: 1, lines: [212] }],
          },
          strategies: [
            { strategy: 'recorded', inputTokens: 1_640_000, cacheablePrefix: 124_000, cacheableRatio: 0.076, uncachedPerWarmTurn: 168_000, contextTokens: 0, alreadySeen: 0, rowsSent: 0, weight: 2_260_000, ...costs(1, 0, 11.3) },
            { strategy: 'dedupe-attachments', inputTokens: 1_480_000, cacheablePrefix: 1_310_000, cacheableRatio: 0.885, uncachedPerWarmTurn: 21_000, contextTokens: 0, alreadySeen: 0, rowsSent: 0, weight: 410_000, ...costs(1, 0, 2.05) },
            { strategy: 'volatile-prefix', inputTokens: 1_480_000, cacheablePrefix: 0, cacheableRatio: 0, uncachedPerWarmTurn: 185_000, contextTokens: 0, alreadySeen: 0, rowsSent: 0, weight: 2_310_000, ...costs(1, 0, 11.55) },
            { strategy: 'cold-replay', inputTokens: 1_520_000, cacheablePrefix: 1_280_000, cacheableRatio: 0.842, uncachedPerWarmTurn: 30_000, contextTokens: 0, alreadySeen: 0, rowsSent: 0, weight: 520_000, ...costs(3, 1, 2.6) },
          ],
        },
      ],
    },
    blocks: {
      blocks: Array.from({ length: 14 }, (_, i) => {
        const start = t0 + Math.floor(i / 2) * DAY + (i % 2) * 5 * 3_600_000;
        const usd = [18, 31, 42, 12, 9, 60, 74, 22, 51, 38, 4, 11, 27, 13][i]!;
        return { start, end: start + 5 * 3_600_000, usd, weight: usd * 200_000, requests: Math.round(usd * 30), tokens: usd * 420_000 };
      }),
    },
    dataQuality: {
      files: 512,
      lines: 184_220,
      bytes: 912_000_000,
      requests: 12_480,
      duplicatesRemoved: 21_337,
      splitMissing: 140,
      skipped: [
        { reason: 'incomplete_last_line', count: 2, examples: [{ path: '/home/dev/.claude/projects/-home-dev-cachelens/91aa0c3e.jsonl', line: 4_211 }] },
        { reason: 'invalid_json', count: 5, examples: [{ path: '/home/dev/.claude/projects/-home-dev-notes/0c3e.jsonl', line: 12, detail: 'Unexpected token } in JSON at position 88' }, { path: '/home/dev/.claude/projects/-home-dev-notes/0c3e.jsonl', line: 19 }] },
      ],
      unknownModels: [{ model: 'claude-experimental-x', requests: 3 }],
      unknownLineTypes: [{ type: 'custom-title', count: 4 }],
    },
  };
}

/**
 * Strings that would run if the report spliced transcript text into HTML, a script element, a
 * spec or a template; each sets `window.__xss` (or opens a dialog) when it runs.
 */
export const PAYLOADS = [
  '<script>window.__xss=1;alert(1)</script>',
  '</script><script>window.__xss=2</script>',
  '<img src=x onerror="window.__xss=3">',
  'javascript:window.__xss=4',
  '\u2028\u2029<!--<script>window.__xss=5</script>-->',
  '"><svg onload="window.__xss=6">',
  "'-alert(7)-'",
  '{{data}} {{vega}} $& $` $\'',
  '${window.__xss=9}`${alert(9)}`',
] as const;

/** The fixture with a payload in every transcript-derived string the report shows. */
export function hostileReport(): ReportData {
  const d = fixtureReport();
  const p = (i: number) => PAYLOADS[i % PAYLOADS.length]!;
  d.meta.roots = [p(0) + '/projects'];
  d.meta.title = 'hostile ' + p(1);
  const h = d.headline as Extract<ReportData['headline'], { usd: unknown }>;
  h.bestWhatIf!.label = p(2);
  const cb = d.costBy as Extract<ReportData['costBy'], { rows: unknown }>;
  for (const r of cb.rows) {
    if (r.key === '/home/dev/marot-spotter') r.key = p(0);
    if (r.key === 'claude-opus-4-6') r.key = p(1);
    if (r.key === 'myplugin:planner') r.key = p(2);
    if (r.key === 'main') r.key = p(3);
  }
  const an = d.anatomy as Extract<ReportData['anatomy'], { rows: unknown }>;
  for (const r of an.rows) if (r.agentType === 'planner') r.agentType = p(4);
  const tc = d.topChains as Extract<ReportData['topChains'], { chains: unknown }>;
  tc.chains.forEach((c, i) => {
    c.project = p(i);
    c.agentType = p(i + 3);
    c.model = p(i + 5);
    c.chainId = p(i + 1);
    c.sessionId = p(i + 2);
  });
  const ct = d.crossTab as Extract<ReportData['crossTab'], { rows: unknown }>;
  ct.rowDimension = p(6);
  ct.rows.forEach((r, i) => (r.key = p(i + 2)));
  const ttl = d.ttlOverride as Extract<ReportData['ttlOverride'], { buckets: unknown }>;
  ttl.buckets.forEach((b, i) => (b.bucket = p(i)));
  // a chart label, drawn by vega from data: a template literal there stays text
  ttl.buckets[ttl.buckets.length - 1]!.bucket = p(8);
  const rp = d.replay as Extract<ReportData['replay'], { runs: unknown }>;
  rp.runs[0]!.title = p(5);
  rp.runs[0]!.strategies.forEach((s, i) => (s.strategy = p(i + 1)));
  const dq = d.dataQuality as Extract<ReportData['dataQuality'], { files: unknown }>;
  dq.skipped[1]!.examples = [{ path: p(0), line: 3, detail: p(4) }, { path: p(7), line: 9, detail: p(2) }];
  dq.unknownModels = [{ model: p(1), requests: 2 }];
  dq.unknownLineTypes = [{ type: p(5), count: 1 }];
  d.blocks = { error: 'attachment text ' + p(2) + p(0) };
  return d;
}
