/**
 * `npm start`: the main job on the default roots, or on the bundled sample-logs/ when this machine
 * has no Claude Code logs — saying which it used.
 */
import { type Dirent, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCandidates, defaultRoots } from '../ingest/discover.js';
import type { Command, Io } from './command.js';
import { REPORT_JSON_HELP, reportOut, runReport } from './report.js';

export const SAMPLE_LOGS = fileURLToPath(new URL('../../sample-logs/', import.meta.url));

/**
 * Whether a transcript lies anywhere below `dir` (stops at the first). A directory that cannot be
 * listed (EACCES, EPERM) is passed over and noted in `denied` (`DIR: permission denied`).
 */
function hasTranscript(dir: string, denied: string[], depth = 0): boolean {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') denied.push(`${dir}: permission denied`);
    return false;
  }
  if (entries.some((e) => e.isFile() && e.name.endsWith('.jsonl'))) return true;
  return depth < 6 && entries.some((e) => e.isDirectory() && hasTranscript(join(dir, e.name), denied, depth + 1));
}

/**
 * The roots the main job reads: the user's own logs when there are any, else the sample corpus.
 * Logs that cannot be read (`denied`: a projects/ directory, or one below it, this user may not
 * list) are no absence of logs: they are read, and the report counts them as unreadable (the sample
 * corpus was reported in their place, as if there were none).
 */
export function startRoots(io: Io): { paths: string[]; sample: boolean; denied?: string; looked: string } {
  const roots = defaultRoots(io.env);
  const denied: string[] = [];
  // where it looked, as summary says it: the roots without a transcript, else the directories without a projects/
  const looked = roots.length > 0 ? `no transcript (*.jsonl) in ${roots.join(', ')}` : `none of ${defaultCandidates(io.env).join(', ')} holds a projects/ directory`;
  if (roots.some((r) => hasTranscript(r, denied))) return { paths: roots, sample: false, looked };
  if (denied.length > 0) return { paths: roots, sample: false, denied: denied[0], looked };
  if (!existsSync(SAMPLE_LOGS)) return { paths: [], sample: false, looked };
  return { paths: [SAMPLE_LOGS], sample: true, looked };
}

export const startCommand: Command = {
  command: 'start',
  describe: 'the main job: the HTML report of your logs (or of sample-logs/ when you have none)',
  options: (y) =>
    y
      .option('db', { type: 'string', requiresArg: true, describe: 'DuckDB store file (default ~/.cache/cachelens/store.duckdb; :memory: for none)' })
      .option('out', { type: 'string', requiresArg: true, describe: 'where to write the report (default ./cachelens-report-<date>.html; its directory must be there)' })
      .option('json', { type: 'boolean', describe: `${REPORT_JSON_HELP}, and whether it is of the sample corpus` }),
  async run(argv, io) {
    const { paths, sample, denied, looked } = startRoots(io);
    // a report that cannot be written is said alone, in one line: the note on which logs it read came first
    reportOut({ ...argv, paths }, io);
    const unreadable = denied === undefined ? '' : ` (no transcript could be read there: ${denied})`;
    // it said 'no Claude Code logs found here', naming no place it had looked
    io.stderr(sample ? `cachelens: no Claude Code logs found (${looked}); using the sample corpus in ${paths[0]}` : `cachelens: reading ${paths.join(', ')}${unreadable}`);
    const channel = join(SAMPLE_LOGS, 'channels', 'backend.jsonl');
    // the demo also shows both replays; on a user's own logs a replay is asked for explicitly
    // the page says it too: opened later, a report of the sample corpus is not read as the user's own bill
    const title = sample ? 'cachelens report of the sample corpus (no Claude Code logs found)' : undefined;
    const out = await runReport({ ...argv, paths, channel: sample && existsSync(channel) ? [channel] : undefined, session: sample ? ['top'] : undefined }, io, title);
    // --json says whether it is of the sample corpus, as stderr and the page do: a script took its totals for the user's
    return { ...out, json: { ...(out.json as object), sample } };
  },
};
