/**
 * Deterministic team-chat channel log for the channel replay (SPEC §6.1).
 *
 *   seed ─▶ mulberry32 ─▶ mention positions (bursts) ─▶ message kinds ─▶ text from templates
 *
 * The default log is a backend team's channel: 200 messages by five people and one agent,
 * 30 of them mentioning `@claude`, 8 pasted logs longer than 600 characters, mentions arriving
 * in bursts (1 to 21 messages apart, median about 4).
 *
 * The agent is a channel member like the others: its replies are ordinary messages whose
 * `author` is the handle without the `@` (`claude`). There is no separate "kind" field — the
 * replay recognises the agent's own messages by that author name and renders them `[agent]`.
 * Each mention is answered by one reply, posted in the first free slot after the mention, so a
 * burst of two mentions is followed by both replies in order. The default log has no threads
 * (`thread_root_id` is absent); the replay supports them.
 *
 * No Math.random, no Date.now: the same seed gives the same bytes on every machine.
 */
import { mulberry32 } from './prng.js';

export interface ChannelMessage {
  id: string;
  author: string;
  /** ISO 8601, UTC */
  created_at: string;
  text: string;
  thread_root_id?: string;
}

export interface GenerateChannelOptions {
  /** total messages, agent replies included (default 200) */
  messages?: number;
}

export const DEFAULT_CHANNEL_SEED = 42;
export const CHANNEL_AGENT = 'claude';
const PEOPLE = ['maya', 'jonas', 'priya', 'tomasz', 'aiko'] as const;
const START_MS = Date.UTC(2025, 2, 11, 8, 47, 0);
const MAX_GAP = 21;


class Rand {
  constructor(private readonly next: () => number) {}
  float(): number {
    return this.next();
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

type Kind = 'chat' | 'mention' | 'reply' | 'paste';

/**
 * Gaps (in messages) between consecutive mentions: bursts of 1–5 and lulls of 8–21, repaired
 * to an exact total. A gap of 1 (two mentions back to back) must be followed by a gap of at
 * least 3, so both replies fit before the next mention, and the last gap is at least 2.
 *
 * Example: 30 mentions, first at index 16, 200 messages, tail 3 → 29 gaps summing to 180.
 */
function mentionGaps(r: Rand, count: number, total: number): number[] {
  const gaps: number[] = [];
  for (let i = 0; i < count; i++) gaps.push(r.chance(0.66) ? r.int(1, 5) : r.int(8, MAX_GAP));
  const ok = (g: number[], i: number): boolean => {
    if (g[i]! < 1 || g[i]! > MAX_GAP) return false;
    if (i === g.length - 1 && g[i]! < 2) return false;
    if (i > 0 && g[i - 1] === 1 && g[i]! < 3) return false;
    if (i < g.length - 1 && g[i] === 1 && g[i + 1]! < 3) return false;
    return true;
  };
  for (let i = 0; i < gaps.length; i++) {
    while (!ok(gaps, i)) gaps[i]! += 1;
  }
  let sum = gaps.reduce((a, b) => a + b, 0);
  for (let guard = 0; sum !== total && guard < 100_000; guard++) {
    const i = r.int(0, gaps.length - 1);
    const step = sum > total ? -1 : 1;
    gaps[i]! += step;
    if (ok(gaps, i) && (i === 0 || ok(gaps, i - 1)) && (i === gaps.length - 1 || ok(gaps, i + 1))) sum += step;
    else gaps[i]! -= step;
  }
  if (sum !== total) throw new Error(`cannot place ${count + 1} mentions in ${total} messages`);
  return gaps;
}

/** The kind of every message, in order: chat, mentions in bursts, replies, pasted logs. */
function layout(r: Rand, n: number): Kind[] {
  const mentions = Math.max(1, Math.round(n * 0.15));
  const pastes = Math.round(n * 0.04);
  const first = Math.min(14 + r.int(0, 4), Math.max(0, n - mentions * 2 - 3));
  const tail = 3;
  const gaps = mentions > 1 ? mentionGaps(r, mentions - 1, n - first - 1 - tail) : [];
  const kinds: Kind[] = new Array<Kind>(n).fill('chat');
  let pos = first;
  kinds[pos] = 'mention';
  for (const g of gaps) kinds[(pos += g)] = 'mention';
  let pending = 0;
  for (let i = 0; i < n; i++) {
    if (kinds[i] === 'mention') pending++;
    else if (pending > 0) {
      kinds[i] = 'reply';
      pending--;
    }
  }
  const chatSlots = kinds.flatMap((k, i) => (k === 'chat' && i >= 3 ? [i] : []));
  for (let placed = 0; placed < pastes && chatSlots.length > 0; placed++) {
    const [slot] = chatSlots.splice(r.int(0, chatSlots.length - 1), 1);
    kinds[slot!] = 'paste';
  }
  return kinds;
}

const SERVICES = ['orders-api', 'billing-worker', 'auth-gateway', 'search-indexer', 'notifications', 'ledger-sync', 'checkout'];
const TABLES = ['orders', 'invoices', 'payment_attempts', 'user_sessions', 'outbox_events', 'refunds'];
const TOPICS = ['orders.created', 'invoices.finalized', 'payments.retry', 'ledger.entries', 'emails.outbound'];
const ENVS = ['staging', 'prod', 'prod-eu', 'canary'];

interface Slots {
  svc: string;
  svc2: string;
  table: string;
  topic: string;
  env: string;
  pr: number;
  ticket: number;
  n: number;
  ms: number;
  pct: number;
  person: string;
  time: string;
}

function slots(r: Rand, at: number, author: string): Slots {
  const others = PEOPLE.filter((p) => p !== author);
  let svc2 = r.pick(SERVICES);
  const svc = r.pick(SERVICES);
  if (svc2 === svc) svc2 = SERVICES[(SERVICES.indexOf(svc) + 1) % SERVICES.length]!;
  return {
    svc,
    svc2,
    table: r.pick(TABLES),
    topic: r.pick(TOPICS),
    env: r.pick(ENVS),
    pr: r.int(3100, 3999),
    ticket: r.int(1200, 1999),
    n: r.int(2, 40),
    ms: r.int(120, 2400),
    pct: r.int(2, 35),
    person: r.pick(others),
    time: new Date(at - r.int(3, 50) * 60_000).toISOString().slice(11, 16),
  };
}

function fill(template: string, s: Slots): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => String(s[k as keyof Slots]));
}

const CHAT = [
  'deploying {svc} to {env} now, shout if you see anything weird',
  '{svc} deploy to {env} finished, dashboards look normal so far',
  'anyone else seeing {svc} p99 around {ms}ms? it was ~300 this morning',
  'PR #{pr} is up: moves the {table} cleanup job off the primary. small one, needs a reviewer',
  'approved #{pr}, left two nits about the retry backoff',
  '{person} can you take a look at #{pr} when you have a minute?',
  'flaky again: {svc} integration suite, the {table} fixture test timed out after 30s',
  're-ran CI on #{pr}, green now. I think it was the shared runner',
  'heads up: migration on {table} adds an index concurrently, should take ~{n} min on prod',
  'the {topic} consumer lag is at {n}k messages, slowly draining',
  'lag on {topic} is back to zero',
  'I am on call today, ping me directly for pages',
  'lunch, back in 30',
  'back',
  'BE-{ticket} is done, moving it to review',
  'picked up BE-{ticket} (idempotency keys for {svc})',
  'do we still need the feature flag for the new {table} writer? it has been at 100% for two weeks',
  'I would keep the flag until the {env} backfill is done',
  'error rate on {svc} went up {pct}% since {time}, looking',
  'false alarm, it was a synthetic check hitting the old endpoint',
  'the connection pool on {svc} is maxed at 50 again',
  'bumped the pool to 80 on {env}, let us see if that holds',
  'standup notes are in the doc, nothing blocking',
  'who owns the {topic} schema? I need to add a nullable field',
  '{person} does, but any of us can review the schema change',
  'rollback of {svc} on {env} done, we are on the previous image',
  'postgres on {env} is at {pct}% CPU, mostly autovacuum on {table}',
  'I will write the postmortem for the {time} incident tomorrow',
  'nice, thanks {person}',
  'ok, merging',
  '+1',
  'makes sense to me',
  'can we timebox that to Friday?',
  'the {svc} healthcheck hits the database on every probe, that is probably why the pool is busy',
  'opened BE-{ticket} to make the healthcheck shallow',
  'canary for {svc} looks good after {n} minutes, promoting',
  'retry storm from {svc2} again: {svc} returned 503 for ~{n}s and everything retried at once',
  'we should add jitter to the {svc2} client retries, it is fixed 200ms right now',
  'terraform plan for {env} shows a change to the {svc} security group, was that intended?',
  'yes, that is the new egress rule for the payment provider',
];

interface Exchange {
  ask: string;
  reply: string[];
}

/** A mention and the sentences the agent's answer is built from (the answer fits in 600 characters). */
const EXCHANGES: Exchange[] = [
  {
    ask: '@claude can you check why {svc} p99 jumped after the {time} deploy?',
    reply: [
      'Looked at the {time} deploy of {svc}.',
      'The p99 jump lines up with the new {table} query in the list endpoint: it runs once per item instead of once per page, so a 50-item page makes 50 round trips.',
      'The diff in #{pr} moved the lookup inside the loop.',
      'Batching it back into one IN (...) query should bring p99 down to where it was.',
      'I can open a PR with that change and a test that counts queries per request.',
    ],
  },
  {
    ask: '@claude is the {table} migration safe to run on {env} during business hours?',
    reply: [
      'Mostly yes.',
      'CREATE INDEX CONCURRENTLY does not block writes, but it waits for open transactions, and {svc} holds long ones during the nightly export.',
      'Run it outside the export window and set lock_timeout to 5s so it fails fast instead of queueing behind a lock.',
      'The second step (the NOT NULL constraint) needs a NOT VALID constraint first, then VALIDATE separately, otherwise it scans {table} under an exclusive lock.',
    ],
  },
  {
    ask: '@claude summarize what changed in #{pr} please, I do not have time to read the whole diff',
    reply: [
      '#{pr} does three things.',
      'It moves the {table} cleanup job from the primary to the replica for the read phase, keeping deletes on the primary.',
      'It adds a batch size setting (default 500) so deletes stop holding locks for seconds.',
      'It adds a metric for rows deleted per run.',
      'Risk: replica lag means the job can see rows that were already deleted; the delete is idempotent so that is harmless, just wasted work.',
    ],
  },
  {
    ask: '@claude why is the {topic} consumer lagging?',
    reply: [
      'The {topic} consumer group has {n} partitions but only 3 consumers are running; two pods are in CrashLoopBackOff since {time}.',
      'They fail on startup because the new config key for the schema registry URL is missing in {env}.',
      'The lag will keep growing until they start.',
      'Adding the key to the {env} values file (same value as staging) should fix it; after that the lag should drain in roughly 20 minutes at the current rate.',
    ],
  },
  {
    ask: '@claude the {svc} integration tests are flaky again, any idea which test?',
    reply: [
      'Across the last 20 CI runs, 6 failures, all in the same test: the {table} fixture test that waits for the outbox to flush.',
      'It sleeps a fixed 2 seconds and then asserts, and on the shared runners the flush sometimes takes longer.',
      'Replacing the sleep with a poll (check every 100ms, give up after 10s) should make it stable.',
      'Nothing in the product code looks wrong.',
    ],
  },
  {
    ask: '@claude can you draft the postmortem timeline for the {time} incident?',
    reply: [
      'Draft timeline from the channel and the deploy log:',
      '{time} {svc} deploy starts.',
      '+4 min error rate rises, retries from {svc2} amplify it.',
      '+9 min page fires, on-call acknowledges.',
      '+15 min rollback started.',
      '+19 min error rate back to baseline.',
      'Open questions: why the canary did not catch it, and why the {svc2} retries have no jitter.',
      'I left out names.',
    ],
  },
  {
    ask: '@claude what does this stack trace mean? the one {person} pasted above',
    reply: [
      'The trace is a connection pool timeout, not a database error: the request waited 30s for a free connection and gave up.',
      'The pool is exhausted because the healthcheck opens a connection on every probe and the probes run every 2s across {n} pods.',
      'Making the healthcheck shallow (no database call) or giving it its own tiny pool would free the main pool.',
    ],
  },
  {
    ask: '@claude do we have an alert on {topic} consumer lag?',
    reply: [
      'There is one, but it only fires above 500k messages for 15 minutes, which is about two hours of backlog at normal traffic.',
      'A rate-based alert (lag growing for 10 minutes while the consumer count is below the partition count) would have caught this morning much earlier.',
      'I can write the rule in the alerts repo if you want.',
    ],
  },
  {
    ask: '@claude how many rows in {table} would the new retention job delete on prod?',
    reply: [
      'I cannot query prod from here, but from the staging counts and the prod table size in the dashboard, roughly {pct}% of {table}, around {n} million rows.',
      'At the default batch size that is a few hours of work.',
      'I would run it first with the dry-run flag, which logs the count without deleting, and compare.',
    ],
  },
  {
    ask: '@claude review #{pr}? mostly interested in the retry logic',
    reply: [
      'Reviewed #{pr}.',
      'The retry logic retries on every exception, including validation errors that will never succeed; it should retry only on timeouts and 5xx.',
      'The backoff is exponential but has no jitter, so callers that fail together retry together.',
      'The max attempts setting is read once at import time, so changing it needs a restart.',
      'Left comments inline.',
    ],
  },
  {
    ask: '@claude quick one: what is the timeout on the {svc} -> {svc2} client?',
    reply: [
      'Connect timeout 2s, read timeout 30s, set in the shared HTTP client defaults; {svc} does not override them.',
      'With 3 retries that is up to about 96s for one call in the worst case, longer than the 60s gateway timeout in front of {svc}.',
      'A read timeout of 5s for that client would keep the worst case under the gateway limit.',
    ],
  },
  {
    ask: '@claude can you write the runbook entry for the pool exhaustion alert?',
    reply: [
      'Draft runbook: pool exhaustion on {svc}.',
      '1. Check the pool metrics: in-use vs max, and wait time.',
      '2. Check for long transactions in pg_stat_activity (state idle in transaction).',
      '3. If the healthcheck is the cause, scale down probe frequency or restart with the shallow check flag.',
      '4. Do not just raise the pool size: the database has a connection limit shared with the other services.',
    ],
  },
];

const PASTE_INTRO = [
  'here is the trace from {env}:',
  'kubectl output for {svc}:',
  'pg log around {time}:',
  'EXPLAIN ANALYZE for the slow {table} query:',
  'CI log of the failing run (#{pr}):',
];

const PASTE_LINES = [
  '  at {svc}/src/db/pool.ts:{n}:17 acquireConnection (timeout after 30000ms)',
  '  at processTicksAndRejections (node:internal/process/task_queues:{n}:5)',
  'Warning  BackOff  pod/{svc}-7f9c{n}d-x2k  Back-off restarting failed container',
  'Normal   Pulled   pod/{svc}-7f9c{n}d-x2k  Container image "registry.internal/{svc}:{pr}" already present',
  'ERROR:  canceling statement due to lock timeout  STATEMENT:  ALTER TABLE {table} ADD COLUMN',
  'LOG:  duration: {ms}.412 ms  execute <unnamed>: SELECT * FROM {table} WHERE account_id = $1',
  '  ->  Index Scan using {table}_account_id_idx on {table}  (cost=0.43..{ms}.10 rows={n} width=212)',
  '  ->  Seq Scan on {table}  (actual time=0.021..{ms}.554 rows={n}000 loops=1)',
  'FAIL test/{table}.fixture.test.ts > flushes outbox  Error: timed out after 2000ms',
  '{time}:41.203Z level=error svc={svc} msg="upstream {svc2} returned 503" attempt={n}',
];

function pasteText(r: Rand, s: Slots): string {
  const target = r.int(650, 1800);
  const lines = [fill(r.pick(PASTE_INTRO), s)];
  let len = lines[0]!.length;
  while (len < target) {
    const line = fill(r.pick(PASTE_LINES), { ...s, n: r.int(2, 400), ms: r.int(120, 9000) });
    lines.push(line);
    len += line.length + 1;
  }
  return lines.join('\n');
}

const CLOSERS = [
  'I have not changed anything yet; say the word and I will open a PR for it.',
  'Happy to dig further if someone can share the {env} dashboard link.',
  'If that does not match what you are seeing, paste the request id and I will follow it through the logs.',
  'I checked this against the last {n} runs, so it should not be a one-off.',
  'The relevant code is in {svc}, mostly the repository layer; the handlers are fine.',
  'Caveat: I only looked at {env}; the other environments may differ.',
];

/**
 * The agent's answer: sentences of its exchange, then closing sentences, until it is 430–590
 * characters (about 100–140 tokens; the default log keeps every reply under the 600-character cut).
 */
function replyText(r: Rand, ex: Exchange, s: Slots): string {
  const out: string[] = [];
  const add = (sentence: string): boolean => {
    const text = fill(sentence, s);
    if ([...out, text].join(' ').length > 590) return false;
    out.push(text);
    return true;
  };
  for (const sentence of ex.reply) if (!add(sentence)) break;
  const closers = [...CLOSERS];
  while (out.join(' ').length < 430 && closers.length > 0) {
    add(closers.splice(r.int(0, closers.length - 1), 1)[0]!);
  }
  return out.join(' ');
}

/** Gap to the previous message: mostly seconds to minutes, sometimes a lull of up to an hour. */
function gapMs(r: Rand, kind: Kind): number {
  if (kind === 'reply') return r.int(25, 90) * 1000;
  const u = r.float();
  if (u < 0.8) return r.int(10, 150) * 1000;
  if (u < 0.975) return r.int(3, 12) * 60_000;
  return r.int(20, 55) * 60_000;
}

/**
 * The channel log for a seed. Example: generateChannel(42) → 200 messages, 30 mention @claude
 * (each answered by a `claude` message), 8 pasted logs over 600 characters.
 */
export function generateChannel(seed: number, opts: GenerateChannelOptions = {}): ChannelMessage[] {
  return generateChannelWithAnswers(seed, opts).messages;
}

/**
 * The channel log for a seed and which reply answers which mention, as the generator wrote them
 * (the log itself does not say): `answers` maps a mention's id to its reply's id.
 * Example: generateChannelWithAnswers(42).answers.size === 30.
 */
export function generateChannelWithAnswers(seed: number, opts: GenerateChannelOptions = {}): { messages: ChannelMessage[]; answers: Map<string, string> } {
  const n = opts.messages ?? 200;
  if (!Number.isInteger(n) || n < 20) throw new RangeError(`messages must be an integer ≥ 20, got ${n}`);
  const r = new Rand(mulberry32(seed));
  const kinds = layout(r, n);
  const asked: Array<{ ex: Exchange; s: Slots; id: string }> = [];
  const answers = new Map<string, string>();
  const out: ChannelMessage[] = [];
  let at = START_MS;
  let lastAuthor = '';
  for (let i = 0; i < n; i++) {
    const kind = kinds[i]!;
    if (i > 0) at += gapMs(r, kind);
    const id = `m${String(i + 1).padStart(4, '0')}`;
    let author: string;
    let text: string;
    if (kind === 'reply') {
      author = CHANNEL_AGENT;
      const q = asked.shift()!;
      answers.set(q.id, id);
      text = replyText(r, q.ex, q.s);
    } else {
      author = r.pick(PEOPLE.filter((p) => p !== lastAuthor || r.chance(0.3)));
      const s = slots(r, at, author);
      if (kind === 'mention') {
        const ex = r.pick(EXCHANGES);
        asked.push({ ex, s, id });
        text = fill(ex.ask, s);
      } else if (kind === 'paste') text = pasteText(r, s);
      else text = fill(r.pick(CHAT), s);
    }
    lastAuthor = author;
    out.push({ id, author, created_at: new Date(at).toISOString(), text });
  }
  return { messages: out, answers };
}

/** One JSON object per line, keys in a fixed order, trailing newline. */
export function channelToJsonl(msgs: readonly ChannelMessage[]): string {
  return msgs
    .map((m) => {
      const o: ChannelMessage = { id: m.id, author: m.author, created_at: m.created_at, text: m.text };
      if (m.thread_root_id !== undefined) o.thread_root_id = m.thread_root_id;
      return JSON.stringify(o) + '\n';
    })
    .join('');
}
