/**
 * Where a chain's transcript is (SPEC §7: the replay re-reads the transcripts of the chains it
 * replays; the store records where they are). A session is named by its id or a unique prefix;
 * its main chain is replayed unless a chain is asked for.
 */
import { type Stats, realpathSync, statSync } from 'node:fs';
import { basename, resolve, sep } from 'node:path';
import { chainShortId, chainSideId } from '../analyses/chain.js';
import { UsageError } from '../errors.js';
import { shownId } from '../format/table.js';
import type { Store } from '../store/store.js';
import type { CopyChoice } from './session-notes.js';

export interface LocatedChain {
  chain_id: string;
  session_id: string;
  agent_id: string | null;
  kind: string;
  requests: number;
  path: string;
  /**
   * Requests this chain's lines repeat that the store attributes to another chain (SPEC §1.3: one
   * chain per request, its best copy, ties to the earliest): a resumed session's transcript
   * repeats the earlier session's lines, same ids, later times. The replay leaves them out of this
   * chain's requests and keeps their messages (they are in its prompt).
   */
  elsewhere: string[];
  /**
   * This chain's requests the store knows only from `agent_progress` copies in the parent's
   * transcript (SPEC §1.3: the lowest-ranked copy, best only where no other copy was read): the
   * chain's own transcript does not hold them, so the replay cannot replay them.
   */
  progress_only: number;
  /**
   * This chain's requests whose every copy is in another transcript than `path` (a session whose
   * lines Claude Code wrote into two project directories, one file each under the same name): the
   * replay reads `path` alone, so it cannot replay them; `other_files` names those transcripts.
   */
  other_file_requests: number;
  other_files: string[];
  /**
   * Other transcripts in scope holding this chain's lines that hold none of its requests `path`
   * does not, of the chain's own file name (`<session>.jsonl`, `agent-<id>.jsonl`): an older, shorter
   * copy of its transcript in another project directory (Claude Code wrote the session under two
   * names of one project, one copy stopped early). A transcript of another name (a resumed
   * session's, repeating the chain's lines under its id) is no copy. `path` is the copy holding the
   * most of the chain's requests (then the most of their best copies, then the latest line, then the
   * largest file, then the first by path), not the first by path, which may be the stale copy or the
   * resumed session's file; the replay says the others were not read (usedCopy).
   */
  other_copies: string[];
  /**
   * What chose `path` over the next copy: `requests` (it holds more), else the tie-break that did
   * (`best_copies`, `latest`, `largest`, `path`); null without copies. `other_copies_tied`: how many
   * of `other_copies` hold as many of the chain's requests, that is the same ones.
   */
  other_copies_by: CopyChoice | null;
  other_copies_tied: number;
}

/**
 * Example: `4d5611e5` → the session 4d5611e5-241a-…; no `chain` → its main chain, in
 * …/4d5611e5-241a-462a-8d15-5122611a9569.jsonl; `chain = a2898e3` → the subagent chain
 * 4d5611e5-…:a2898e3 in …/subagents/agent-a2898e3.jsonl.
 */
export async function locateChain(store: Store, id: string, chain?: string): Promise<LocatedChain> {
  const found = await usedCopy(store, await findChain(store, id, chain));
  const elsewhere = await store.all(
    `SELECT DISTINCT o.key FROM observations o JOIN requests r ON r.key = o.key
     WHERE o.chain_id = $chain AND r.chain_id <> $chain ORDER BY o.key`,
    { chain: found.chain_id },
  );
  const [{ progress_only, parent }] = await store.all(
    `SELECT count(*)::INTEGER AS progress_only, min(f.path) AS parent FROM requests r JOIN files f USING (file_id) WHERE r.chain_id = $chain AND r.rank = 0`,
    { chain: found.chain_id },
  );
  const only = progress_only as number;
  // a subagent seen only through the copies its parent's transcript holds (its agent-<id>.jsonl
  // not among the logs read, or holding none of its requests): the copies leave out some of its
  // messages (the real logs' copies hold none of its text replies), so what the replay would
  // rebuild from them is not what it sent
  if (found.requests > 0 && only === found.requests) {
    const own = found.agent_id !== null && basename(found.path) === `agent-${found.agent_id}.jsonl`;
    const transcript = own
      ? `its transcript ${found.path} holds none of them`
      : `its own transcript${found.agent_id ? ` (subagents/agent-${shownId(found.agent_id)}.jsonl)` : ''} is not among the logs read`;
    throw new UsageError(
      `chain ${shownId(found.chain_id)} is known only from the agent_progress copies in ${String(parent)} (${only === 1 ? 'its 1 request' : `its ${only} requests`}): ${transcript}, and the copies leave out some of its messages (its text replies)`,
      'read the logs with the subagent\'s transcript, or replay the session\'s main chain',
    );
  }
  const others = (await otherFiles(store, `SELECT file_id FROM files WHERE path = $path`, { path: found.path }, found.chain_id)).get(found.chain_id);
  return {
    ...found,
    elsewhere: elsewhere.map((r) => r.key as string),
    progress_only: only,
    other_file_requests: others?.requests ?? 0,
    other_files: others?.files ?? [],
    other_copies: found.copies,
    other_copies_by: found.copies.length ? found.by : null,
    other_copies_tied: found.tied,
  };
}

/**
 * The transcript of `found`'s chain a user means when several in scope hold its lines (a session's
 * file in two project directories, one a truncated older copy): the one holding the most of the
 * chain's requests, then the most of their best copies (SPEC §1.3: two transcripts holding them all,
 * as a resumed session's copies with the earlier session's id may, keep the earlier one), then the one
 * whose last line is latest, then the largest, then the first by path
 * (the store's chain file, by path alone, may be the stale copy: its requests' copies tie in time
 * with the full one's). `copies`: the other transcripts whose requests the one taken holds all of
 * (a transcript holding requests it does not is one of `other_files`), of its name: a transcript of
 * another name is another session's. Its name is the chain's (`<session>.jsonl`, `agent-<id>.jsonl`), else,
 * when no transcript in scope bears it, the store's chain file's. agent_progress copies in a parent's transcript are no transcript of the chain.
 * Example: -a/S.jsonl (22 requests, the first 22 of -b's) and -b/S.jsonl (39) → -b/S.jsonl, copies ['…/-a/S.jsonl'].
 */
async function usedCopy(store: Store, found: Omit<LocatedChain, 'elsewhere' | 'progress_only' | 'other_file_requests' | 'other_files' | 'other_copies' | 'other_copies_by' | 'other_copies_tied'>) {
  const rows = await store.all(
    `WITH o AS (SELECT DISTINCT o.file_id, o.key, o.t FROM observations o JOIN scope USING (file_id) WHERE o.chain_id = $chain AND o.rank > 0),
     per AS (SELECT file_id, count(DISTINCT key)::INTEGER AS n, max(t) AS last_t FROM o GROUP BY file_id),
     best AS (SELECT file_id, count(*)::INTEGER AS b FROM requests WHERE chain_id = $chain AND rank > 0 GROUP BY file_id)
     SELECT f.path, per.n, coalesce(best.b, 0) AS b, per.last_t, f.size FROM per JOIN files f USING (file_id) LEFT JOIN best USING (file_id)
     ORDER BY per.n DESC, coalesce(best.b, 0) DESC, per.last_t DESC NULLS LAST, f.size DESC NULLS LAST, f.path`,
    { chain: found.chain_id },
  );
  // copies of one transcript bear its name (<session>.jsonl, agent-<id>.jsonl): another name holding the chain's lines
  // is another transcript (a resumed session's, which may repeat them with the earlier session's id). The name is the
  // chain's own, not found.path's: the store's chain file is the first by path, which may be the resumed session's
  // (s0.jsonl before s1.jsonl); a chain none of whose transcripts bears its name (files renamed) keeps found.path's
  const own = found.agent_id !== null ? `agent-${found.agent_id}.jsonl` : `${found.session_id}.jsonl`;
  const name = rows.some((r) => basename(r.path as string) === own) ? own : basename(found.path);
  const same = rows.filter((r) => basename(r.path as string) === name);
  const none = { copies: [] as string[], by: null as CopyChoice | null, tied: 0 };
  if (same.length === 0) return { ...found, ...none };
  const path = same[0]!.path as string;
  if (same.length < 2) return { ...found, path, ...none };
  // what chose it over the next: the first of the order's keys on which they differ
  const [a, b] = [same[0]!, same[1]!];
  const differ = (k: string) => String(a[k] ?? '') !== String(b[k] ?? '');
  const by: CopyChoice = differ('n') ? 'requests' : differ('b') ? 'best_copies' : differ('last_t') ? 'latest' : differ('size') ? 'largest' : 'path';
  // the others whose every request the one taken holds: copies of it, not transcripts holding requests of their own
  const copies = await store.all(
    `WITH o AS (SELECT o.file_id, o.key FROM observations o JOIN scope USING (file_id) WHERE o.chain_id = $chain AND o.rank > 0),
     taken AS (SELECT o.key FROM o JOIN files f USING (file_id) WHERE f.path = $path)
     SELECT DISTINCT f.path FROM o JOIN files f USING (file_id)
     WHERE f.path <> $path AND NOT EXISTS (SELECT 1 FROM o x WHERE x.file_id = o.file_id AND x.key NOT IN (SELECT key FROM taken))
     ORDER BY f.path`,
    { chain: found.chain_id, path },
  );
  const kept = copies.map((r) => r.path as string).filter((p) => basename(p) === name);
  // the copies holding as many of its requests as it (every one it holds: the same ones)
  const tied = kept.filter((p) => same.some((r) => r.path === p && r.n === a.n)).length;
  return { ...found, path, copies: kept, by, tied };
}

/** Requests of a chain only other transcripts hold, and those transcripts (LocatedChain.other_file_requests). */
export interface OtherFiles {
  requests: number;
  files: string[];
}

/**
 * Per chain of the transcript `fileIds` selects (or of `chain` alone): its requests (not an
 * agent_progress copy's) that no line of that transcript holds, by the transcript that holds
 * them. Example: S.jsonl in -a holding 22 of the session's 39 requests, -b/S.jsonl the other
 * 17 → S: { requests: 17, files: ['…/-b/S.jsonl'] }.
 */
async function otherFiles(store: Store, fileIds: string, params: Record<string, unknown>, chain?: string): Promise<Map<string, OtherFiles>> {
  const rows = await store.all(
    `WITH here AS (${fileIds}),
     chains_here AS (SELECT DISTINCT chain_id FROM observations WHERE file_id IN (SELECT file_id FROM here)${chain === undefined ? '' : ' AND chain_id = $chain'})
     SELECT r.chain_id, f.path, count(*)::INTEGER AS n FROM requests r JOIN files f USING (file_id)
     WHERE r.chain_id IN (SELECT chain_id FROM chains_here) AND r.rank > 0 AND NOT EXISTS (
       SELECT 1 FROM observations o WHERE o.key = r.key AND o.file_id IN (SELECT file_id FROM here))
     GROUP BY ALL ORDER BY r.chain_id, f.path`,
    chain === undefined ? params : { ...params, chain },
  );
  const out = new Map<string, OtherFiles>();
  for (const r of rows) {
    const id = r.chain_id as string;
    let o = out.get(id);
    if (!o) out.set(id, (o = { requests: 0, files: [] }));
    o.requests += r.n as number;
    o.files.push(r.path as string);
  }
  return out;
}

/** For a transcript named by its path, read with logs that hold it: otherFiles of each of its chains. */
export async function otherFilesOfFile(store: Store, file: string): Promise<Map<string, OtherFiles>> {
  let real: string | null = null;
  try {
    real = realpathSync.native(file);
  } catch {
    // the replay says a file it cannot read in its own words
  }
  return otherFiles(store, `SELECT file_id FROM files JOIN scope USING (file_id) WHERE path = $given OR path = $real`, { given: resolve(file), real: real ?? resolve(file) });
}

/**
 * For a transcript named by its path (`replay session FILE PATHS..`, `report LOGS --session FILE`):
 * the requests its lines repeat that the store attributes to another chain, as
 * LocatedChain.elsewhere gives them for a chain named by its id, or undefined when the logs read do
 * not hold the file (by its path as given, made absolute, or its real path). A key stays in when a
 * chain of this file is the one the store counts it in (it is that chain's own).
 * Example: B.jsonl resumes A.jsonl, both read: A's 4 requests that B's lines repeat (the store
 * counts them in A) → their 4 keys; A.jsonl → none; /tmp/B-copy.jsonl, not read → undefined.
 */
export async function elsewhereOfFile(store: Store, file: string): Promise<string[] | undefined> {
  let real: string | null = null;
  try {
    real = realpathSync.native(file);
  } catch {
    // the replay says a file it cannot read in its own words
  }
  const [hit] = await store.all(
    `SELECT min(file_id) AS file_id FROM files JOIN scope USING (file_id) WHERE path = $given OR path = $real`,
    { given: resolve(file), real: real ?? resolve(file) },
  );
  if (hit?.file_id === null || hit?.file_id === undefined) return undefined;
  const keys = await store.all(
    `SELECT DISTINCT o.key FROM observations o JOIN requests r ON r.key = o.key
     WHERE o.file_id = $file AND NOT EXISTS (SELECT 1 FROM observations m WHERE m.file_id = $file AND m.key = o.key AND m.chain_id = r.chain_id)
     ORDER BY o.key`,
    { file: hit.file_id },
  );
  return keys.map((r) => r.key as string);
}

async function findChain(store: Store, id: string, chain?: string): Promise<Omit<LocatedChain, 'elsewhere'>> {
  // an inline sidechain's `side:U`, or a prefix of it (`replay session side:f4ab`, `report --session side:f4ab`):
  // Claude Code's session ids are hex UUIDs, and it said "no session side:f4ab". A session whose id
  // does begin so (a hand-made log) is still named by it.
  if (id.toLowerCase().startsWith('side:')) {
    const [{ n }] = await store.all(`SELECT count(*)::INTEGER AS n FROM chains WHERE starts_with(lower(session_id), $id)`, { id: id.toLowerCase() });
    if (n === 0) return sideChain(store, id, chain);
  }
  // an inline sidechain's bare uuid, or a subagent's agent id (`a2898e3`, `acompact-e1f845`), or a prefix of one
  // (`replay session f4ab`, `a2898`), when it names no session: as `anatomy --chain a2898e3` takes it, and as
  // `side:f4ab` names it here; a session's id still comes first
  return sessionChain(store, id, chain, () => sideChain(store, id, chain, `no session ${shownId(id)} in the logs read`));
}

/** The chain (`chain`, else the main one) of the session `id` names: its id, a unique prefix, a cut id, in any case. */
async function sessionChain(store: Store, id: string, chain?: string, orElse?: () => Promise<Omit<LocatedChain, 'elsewhere'>>): Promise<Omit<LocatedChain, 'elsewhere'>> {
  // as typed, then, when that names none, in any case: the ids Claude Code writes are lower-case
  // (hex UUIDs, `S:side:U`, `S:acompact-f46190`), and `1F517242` said "no session"; an id that
  // matches as typed is never made ambiguous by another that differs from it in case alone
  // an id as a narrow terminal's table cut it (`ae4a77f8…c91af04`): the session or chain id with those ends
  const cut = cutId(id);
  const ends = (col: string) => `(starts_with(${col}, $head) AND ends_with(${col}, $tail) AND length(${col}) > $n)`;
  const find = async (fold: boolean) => {
    const f = (s: string) => (fold ? s.toLowerCase() : s);
    const at = (col: string) => (fold ? `lower(${col})` : col);
    return (await store.all(
      `SELECT c.chain_id, c.session_id, c.agent_id, c.kind, c.requests, f.path
       FROM chains c JOIN files f ON f.file_id = c.file_id
       WHERE ${cut ? `${ends(at('c.session_id'))} OR ${ends(at('c.chain_id'))}` : `starts_with(${at('c.session_id')}, $id) OR ${at('c.chain_id')} = $id`}
       ORDER BY c.session_id, c.chain_id`,
      cut ? { head: f(cut.head), tail: f(cut.tail), n: cut.head.length + cut.tail.length } : { id: f(id) },
    )) as unknown as Omit<LocatedChain, 'elsewhere'>[];
  };
  let rows = await find(false);
  const folded = rows.length === 0;
  if (folded) rows = await find(true);
  if (rows.length === 0 && orElse) return orElse();
  if (rows.length === 0) throw new UsageError(`no session ${shownId(id)} in the logs read`, 'give a session id (or a unique prefix) from `cachelens sessions`, or a transcript path');
  // folded, two ids that differ in case alone are both the id: the sessions' count below says so
  const exacts = rows.filter((r) => (folded ? r.chain_id.toLowerCase() === id.toLowerCase() : r.chain_id === id));
  if (new Set(exacts.map((r) => r.chain_id)).size === 1 && !chain) return exacts[0]!;
  const sessions = [...new Set(rows.map((r) => r.session_id))];
  if (sessions.length > 1) throw new UsageError(`session ${shownId(id)} matches ${sessions.length} sessions (${sessions.slice(0, 3).map(shownId).join(', ')}${sessions.length > 3 ? ', …' : ''}); give more of the id`);
  if (chain) {
    // as the session id: as typed, then in any case when that names no chain
    const m = chainNamed(rows, chain, (r) => [r.chain_id, r.agent_id]);
    if (m && 'hit' in m) return m.hit;
    if (m) throw manyChainsError(chain, m, '', ` of session ${shownId(sessions[0]!)}`);
    throw new UsageError(`--chain ${shownId(chain)}: no such chain in session ${shownId(sessions[0]!)}`);
  }
  const main = rows.find((r) => r.kind === 'main' && r.requests > 0);
  if (main) return main;
  const busiest = [...rows].sort((a, b) => b.requests - a.requests)[0]!;
  if (busiest.requests === 0) throw new UsageError(`session ${shownId(sessions[0]!)} has no requests to replay`);
  return busiest;
}

/**
 * The chain other than a session's main one that `want` names among every session's: an inline sidechain's `side:U`,
 * its bare `U`, a subagent's agent id (`a2898e3`, `acompact-e1f845`), or a unique prefix of one, as `anatomy --chain`
 * takes them; with `chain`, that chain of its session. `none`: the error when no chain fits (a bare id is first a
 * session's: 'no session …').
 * Example: 'side:f4ab' or 'f4ab' → fe5e1c67-…:side:f4ab2bf6-…; 'a2898' → 4d5611e5-…:a2898e3;
 * 'side:f4' → "side:f4 matches 2 sidechains (…); give more of the id".
 */
async function sideChain(store: Store, want: string, chain?: string, none = `no sidechain ${shownId(want)} in the logs read`): Promise<Omit<LocatedChain, 'elsewhere'>> {
  const rows = (await store.all(
    `SELECT c.chain_id, c.session_id, c.agent_id, c.kind, c.requests, f.path
     FROM chains c JOIN files f ON f.file_id = c.file_id
     WHERE c.agent_id IS NOT NULL OR contains(c.chain_id, ':side:')
     ORDER BY c.session_id, c.chain_id`,
  )) as unknown as Omit<LocatedChain, 'elsewhere'>[];
  const m = chainNamed(rows, want, (r) => [r.chain_id, r.agent_id]);
  if (m === null) throw new UsageError(none, 'give a session id (or a unique prefix) from `cachelens sessions`, or a transcript path');
  // the chains a prefix fits, named as such: inline sidechains ('sidechains', as before), subagents, or both ('chains')
  const side = m && 'many' in m ? rows.filter((r) => m.ids.includes(r.chain_id)) : [];
  const kind = side.every((r) => r.agent_id === null) ? 'sidechains' : side.every((r) => r.agent_id !== null) ? 'subagent chains' : 'chains';
  if ('many' in m) throw new UsageError(`${shownId(want)} matches ${m.many} ${kind} (${m.ids.map(shownId).join(', ')}${m.many > m.ids.length ? ', …' : ''}); give more of the id`);
  // its session by its whole id, never through findChain again: a session id beginning `side:` looped
  return chain ? sessionChain(store, m.hit.session_id, chain) : m.hit;
}

/**
 * The most expensive session among `requests` (an SQL source of request rows; the whole store by
 * default), as `sessions` ranks them: by USD, then weight, then id. `top` names it on the command
 * line (`replay session top`, `report --session top`); no session id is `top` (ids are hex).
 */
export async function topSession(store: Store, requests = 'SELECT * FROM requests', params: Record<string, unknown> = {}): Promise<string> {
  const [top] = await store.all(
    `SELECT session_id FROM (${requests}) GROUP BY session_id
     ORDER BY sum(usd::DECIMAL(38, 15)) DESC NULLS LAST, sum(weight::DECIMAL(38, 15)) DESC NULLS LAST, session_id LIMIT 1`,
    params,
  );
  if (!top) throw new UsageError('no session to replay', 'the logs read hold no requests');
  return top.session_id as string;
}

/**
 * The transcript a session target names when it is a path (`replay session TARGET`, `report
 * --session TARGET`), or undefined when it names a session in the store (an id, a unique prefix,
 * or top): a session id neither ends in .jsonl nor holds a path separator. A path that is not
 * there is a missing file, and a directory (Claude Code's <session>/ beside <session>.jsonl, one
 * named x.jsonl) a directory: neither is an unknown session id, looked for in the logs read.
 * `readDirectory`: the command that reads a directory and replays a session of it, for the hint.
 * Example: `~/x/4d5611e5.jsonl` (expanded) → that path; `4d5611e5` and `top` → undefined;
 * `./missing.jsonl` → "no such file or directory: ./missing.jsonl".
 */
export function transcriptPath(target: string, readDirectory: string): string | undefined {
  if (!(target.endsWith('.jsonl') || target.includes('/') || target.includes(sep))) return undefined;
  const st = statTarget(target);
  if (!st) throw new UsageError(`no such file or directory: ${target}`, 'give a transcript path or a session id');
  if (st.isDirectory()) throw new UsageError(`${target}: is a directory`, `give a transcript file, or a session id and the directory to read: ${readDirectory}`);
  return target;
}

/**
 * The target path's stat; undefined when it is not there, a path through a file (`a.jsonl/x.jsonl`,
 * ENOTDIR) included. Any other failure (a directory on the way that cannot be searched) is a
 * one-line error: statSync throws them whatever throwIfNoEntry says, and they were internal errors.
 */
function statTarget(target: string): Stats | undefined {
  try {
    return statSync(target, { throwIfNoEntry: false });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return undefined;
    // as replaySessionFile says it of a file that will not open
    throw new UsageError(`${target}: cannot read transcript (${code ?? (err as Error).message})`);
  }
}

/**
 * An id as a table cut it to a narrow terminal's width (format/table.ts fit()): its head and tail
 * around one '…', which no id Claude Code writes holds; null for any other text.
 * Example: 'fe5e1c67…f24c404' → { head: 'fe5e1c67', tail: 'f24c404' }; 'fe5e1c67' → null.
 */
export function cutId(want: string): { head: string; tail: string } | null {
  const at = want.indexOf('…');
  if (at < 0 || want.indexOf('…', at + 1) >= 0) return null;
  return { head: want.slice(0, at), tail: want.slice(at + 1) };
}

/**
 * The chain `want` names, among chains offered one at a time (a store's, a transcript's, or a
 * stream of them that is not kept): either id (the chain's, or its short id: chainShortId, the agent's
 * or an inline sidechain's uuid; an inline sidechain's `side:U` too: chainSideId) whole, else a unique prefix
 * of one; as typed, then, when that names none, in any case (Claude Code writes ids in lower case, so
 * ids that differ in case alone stay apart); an id as a table cut it to a narrow terminal's width
 * (`fe5e1c67…f24c404`: its head and tail) names the one id with those ends. result(): `{ many, ids }` counts the chains a prefix fits
 * and names the first MANY_SHOWN of them; null: none; two chains the id names whole (in case alone apart) are `{ many, ids }` too. Example: offered
 * 'ab12…' and 'ab34…', 'AB1' finds 'ab12…'; 'ab' fits 2.
 */
export class ChainMatch<T> {
  private readonly wants: readonly [string, string];
  private readonly exact: [T[], T[]] = [[], []];
  private readonly first: [T[], T[]] = [[], []];
  private readonly exactIds: [string[], string[]] = [[], []];
  private readonly firstIds: [string[], string[]] = [[], []];
  private readonly hits: [number, number] = [0, 0];
  private readonly exacts: [number, number] = [0, 0];

  constructor(want: string) {
    this.wants = [want, want.toLowerCase()];
  }

  /** Whether `id` begins with `w`; a `w` cut as a narrow terminal's table cuts an id (`fe5e1c67…f24c404`): begins with its head and ends with its tail. */
  private static fits(id: string, w: string): boolean {
    const cut = cutId(w);
    return cut ? id.length > cut.head.length + cut.tail.length && id.startsWith(cut.head) && id.endsWith(cut.tail) : id.startsWith(w);
  }

  offer(x: T, chain: string, agent: string | null): void {
    // its chain id, or its short id: the agent id (`a2898e3`), an inline sidechain's uuid (`S:side:U`)
    // and its `side:U`, which named no chain (`--chain side:f4ab`)
    const ids = [chain, chainShortId(chain, agent), chainSideId(chain, agent)].filter((id): id is string => id !== null);
    for (const fold of [0, 1] as const) {
      const w = this.wants[fold];
      const shown = fold ? ids.map((id) => id.toLowerCase()) : ids;
      if (shown.some((id) => id === w)) {
        this.exacts[fold]++;
        if (this.exact[fold].length < MANY_SHOWN) {
          this.exact[fold].push(x);
          this.exactIds[fold].push(chain);
        }
      }
      if (shown.some((id) => ChainMatch.fits(id, w))) {
        this.hits[fold]++;
        if (this.first[fold].length < MANY_SHOWN) {
          this.first[fold].push(x);
          this.firstIds[fold].push(chain);
        }
      }
    }
  }

  result(): { hit: T } | { many: number; ids: string[] } | null {
    for (const fold of [0, 1] as const) {
      // two ids that differ in case alone, both the id folded: neither is picked
      if (this.exacts[fold] === 1) return { hit: this.exact[fold][0]! };
      if (this.exacts[fold] > 1) return { many: this.exacts[fold], ids: this.exactIds[fold] };
      if (this.hits[fold] === 1) return { hit: this.first[fold][0]! };
      if (this.hits[fold] > 1) return { many: this.hits[fold], ids: this.firstIds[fold] };
    }
    return null;
  }
}

/** How many of the chains an ambiguous `--chain` fits its error names, as a session prefix's names its sessions. */
const MANY_SHOWN = 3;

/**
 * The one-line error of a `--chain` that fits several chains: how many, and the first of them, as
 * an ambiguous session id names its sessions. `where`: what the error says before it (a transcript's path);
 * `of`: whose chains they are (a session).
 * Example: ('f4', { many: 2, ids: ['s:side:f4ab…', 's:side:f4c0…'] }) → '--chain f4 matches 2 chains (s:side:f4ab…, s:side:f4c0…); give more of the id'.
 */
export function manyChainsError(want: string, m: { many: number; ids: readonly string[] }, where = '', of = ''): UsageError {
  const more = m.many > m.ids.length ? ', …' : '';
  return new UsageError(`${where}--chain ${shownId(want)} matches ${m.many} chains${of} (${m.ids.map(shownId).join(', ')}${more}); give more of the id`);
}

/** The chain `want` names among `items` (`ids` gives an item's chain id and agent id), as ChainMatch finds it. */
export function chainNamed<T>(items: readonly T[], want: string, ids: (x: T) => readonly [string, string | null]): { hit: T } | { many: number; ids: string[] } | null {
  const match = new ChainMatch<T>(want);
  for (const x of items) match.offer(x, ...ids(x));
  return match.result();
}
