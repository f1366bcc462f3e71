/** report: the self-contained HTML report — where the money went, on one page that works offline. */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { clean } from '../format/table.js';
import { wrap } from '../format/wrap.js';
import { realPlace, refuseInLogs, rootsRead } from '../store/log-dirs.js';
import { refuseMissingDir } from '../store/dirs.js';
import { flaggedModelPrice } from '../pricing/pricing.js';
import { DEFAULT_CHANNEL_MODEL } from '../replay/names.js';
import { calibrateOf, type Command, type Io, listOption, type Output, nonEmpty, withContext, withLogOptions } from './command.js';

export function defaultReportName(now = new Date()): string {
  return `cachelens-report-${now.toISOString().slice(0, 10)}.html`;
}

/**
 * The report's absolute path, from `--out` (or the default name), checked before anything is read or said:
 * a place no file can be, a directory, a directory not there, inside the logs read (`argv.paths`) are each
 * a one-line usage error. `start` checks it before it says which logs it reads.
 */
export function reportOut(argv: Record<string, unknown>, io: Io): string {
  // checked before the logs are read: a report that cannot be written is a one-line error, not an internal one
  if (argv.out !== undefined && String(argv.out).trim() === '') throw new UsageError('--out: expected a file name');
  const out = resolve(String(argv.out ?? defaultReportName()));
  // a place no file can be (`--out /etc/passwd/r.html`: ENOTDIR; a directory not searchable: EACCES) threw from
  // the stat, an internal error: said as writeReport's failures are, before the logs are read
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(out, { throwIfNoEntry: false });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code !== 'string') throw err;
    throw new UsageError(`--out ${String(argv.out ?? out)}: cannot write the report: ${code}`, 'choose another file');
  }
  if (st?.isDirectory()) throw new UsageError(`--out ${String(argv.out ?? out)}: is a directory`, 'give a file name');
  // nor inside the logs (`report LOGS --out LOGS/r.html`, `--out ~/.claude/projects/r.html`, the
  // default name in a working directory among them): the page was written there
  if (argv.out !== undefined) {
    refuseInLogs(out, { flag: '--out', given: String(argv.out), choose: 'FILE', logRoots: rootsRead(argv.paths as string[] | undefined, io.env) });
    // in a directory not there (a typo: `--out ~/reprots/r.html`): the directories were made, a tree wherever it pointed
    refuseMissingDir(out, { flag: '--out', given: String(argv.out), choose: 'FILE' });
  }
  else refuseInLogs(out, { flag: 'the report', given: out, choose: 'FILE with --out', logRoots: rootsRead(argv.paths as string[] | undefined, io.env) });
  return out;
}

/** `title`: the page's title in place of "cachelens report" (`start` on the sample corpus says so on the page). */
export async function runReport(argv: Record<string, unknown>, io: Io, title?: string): Promise<Output> {
  const out = reportOut(argv, io);
  // `--session ''` matched every session as a prefix ("session  matches 120 sessions"); a session named twice was replayed twice
  // `top` in any case, as replay session takes it
  const sessions = [...new Set(listOption(argv.session).map((s) => (s.toLowerCase() === 'top' ? 'top' : s)))];
  if (sessions.some((s) => s.trim() === '')) throw new UsageError('--session: expected a session id, a unique prefix of one, top, or a transcript path');
  // off unless asked for, as in `replay session`; it only changes a session replay
  const calibrate = argv.calibrate === undefined ? 0 : calibrateOf(argv.calibrate);
  if (calibrate > 0 && sessions.length === 0) throw new UsageError('--calibrate fits the session replays, and none was asked for', 'add --session ID or --session top');
  // the model whose prices (in the report's table: --pricing's) weigh and price the channel replays, replay channel's default unless named
  // a log named twice (`--channel a.jsonl --channel ./a.jsonl`, or through a link to it) is replayed
  // once, as a session named twice is; one not there is the replay's own error, below
  const seen = new Set<string>();
  const channels = listOption(argv.channel).filter((c) => !seen.has(realPlace(resolve(c))) && Boolean(seen.add(realPlace(resolve(c)))));
  const named = nonEmpty(argv['channel-model'], '--channel-model', 'a model id such as claude-opus-4-6');
  if (named !== undefined && channels.length === 0) throw new UsageError('--channel-model prices the channel replays, and none was asked for', 'add --channel LOG');
  const channelModel = named ?? DEFAULT_CHANNEL_MODEL;
  // the report pulls in vega-lite: load it only when a report is asked for
  const [{ buildReportData, checkReplayPaths }, { writeReport, compileCharts }] = await Promise.all([import('../report/build.js'), import('../report/index.js')]);
  // a --channel or --session file that is not there is said before the logs are read, as the replay commands say it
  checkReplayPaths({ channels, sessions });
  // the charts are compiled while this thread would only wait for the walk of the logs (~0.3 s of a warm 1 GB run)
  setImmediate(compileCharts);
  const data = await withContext(
    argv,
    io,
    (ctx) => buildReportData(ctx, { channels, channelModel, sessions, calibrate }),
    // a model the table in force does not price is said before the logs are read, as replay channel --model says it
    (prices) => void (channels.length > 0 && flaggedModelPrice(prices, channelModel, '--channel-model')),
  );
  if (title !== undefined) data.meta.title = title;
  let path: string;
  try {
    path = await writeReport(data, out);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (typeof e.code !== 'string') throw err;
    throw new UsageError(`--out ${String(argv.out ?? out)}: cannot write the report: ${e.code}`, 'choose another file');
  }
  const errors = Object.entries(data).filter(([, v]) => v && typeof v === 'object' && 'error' in (v as object)).map(([k]) => k);
  return {
    // the logs it covers, and how many requests its USD leaves out for want of a price (the page marks them +?; the
    // totals alone read as the whole bill)
    json: {
      path,
      roots: data.meta.roots,
      sections_failed: errors,
      totals: data.headline && !('error' in data.headline) ? { usd: data.headline.usd, weight: data.headline.weight, unpriced_requests: data.headline.unpricedRequests } : null,
    },
    // wrapped to a terminal's width (format/wrap.ts): the path is never broken, not at its own spaces
    // either, so it is copied as one; the path as the terminal shows any text (an --out with an escape
    // or a newline in its name was written out raw)
    text: wrap(`wrote ${clean(path)}${errors.length ? `\n(sections that failed and show an error card: ${errors.join(', ')})` : ''}`, undefined, [clean(path)]),
    // after `wrote PATH` is printed: the wait for the opener held it back up to 5 s, and a Ctrl-C in
    // that wait left nothing on screen of a report that was written
    afterPrint: argv.open ? () => openInBrowser(path, io) : undefined,
  };
}

/**
 * How long `--open` waits for the opener to say how it went: xdg-open and open hand the page to the
 * browser and exit at once, and their status is worth saying; one that is still running then (an
 * xdg-open that runs a browser in the foreground) is left to run, and the command goes on.
 */
const OPENER_WAIT_MS = 5_000;

/**
 * Opens the written report in the default browser. An opener that is not there, cannot be started
 * or exits non-zero (xdg-open with no browser set: 3) is said in one stderr line with where the
 * report is; the report was written, so the exit status stays 0. Windows' explorer exits 1 when it
 * opened the page, so its status is not read.
 */
async function openInBrowser(path: string, io: Io): Promise<void> {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  // looked for where spawn looks, on PATH (only /usr/bin and /usr/local/bin were looked in)
  if (process.platform === 'linux' && !onPath(opener)) {
    io.stderr(`cachelens: no xdg-open here; open ${path} in a browser`);
    return;
  }
  const child = spawn(opener, [path], { detached: true, stdio: 'ignore' });
  await new Promise<void>((done) => {
    let said = false;
    const say = (line?: string) => {
      if (said) return;
      said = true;
      clearTimeout(timer);
      if (line) io.stderr(line);
      done();
    };
    const timer = setTimeout(() => say(), OPENER_WAIT_MS);
    child.on('error', () => say(`cachelens: could not start ${opener}; open ${path} in a browser`));
    // an opener that failed was passed over without a word (xdg-open exits 3 when it finds no browser)
    child.on('exit', (code, signal) => {
      const failed = process.platform !== 'win32' && (signal !== null || (code !== null && code !== 0));
      say(failed ? `cachelens: ${opener} ${signal !== null ? `was stopped by ${signal}` : `exited with status ${code}`}; the report was written: open ${path} in a browser` : undefined);
    });
  });
  child.unref();
}

/** Whether an executable `name` is in a directory of `env`'s PATH. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  // with no PATH, spawn looks where execvp does (glibc: /bin:/usr/bin), and so does this
  return (env.PATH ?? '/bin:/usr/bin').split(delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return statSync(join(dir, name)).isFile();
    } catch {
      return false;
    }
  });
}

/** What report's and start's --json print, as --help says it. */
export const REPORT_JSON_HELP = 'print the report\'s path, the logs it covers, failed sections and totals as JSON';

export const reportCommand: Command = {
  command: 'report [paths..]',
  describe: 'write the self-contained HTML report (default ./cachelens-report-<date>.html)',
  options: (y: Argv) =>
    withLogOptions(y)
      .option('out', { type: 'string', requiresArg: true, describe: 'where to write the report (default ./cachelens-report-<date>.html; its directory must be there)' })
      .option('open', { type: 'boolean', describe: 'open it in the default browser' })
      // one value per flag (repeat the flag for more): a list would take the paths after it
      .option('channel', { type: 'string', array: true, nargs: 1, describe: 'also replay this channel log into the report (repeatable)' })
      .option('channel-model', { type: 'string', requiresArg: true, defaultDescription: DEFAULT_CHANNEL_MODEL, describe: "with --channel: the agent's model, whose prices in the report's table (the bundled one, or --pricing's) give the channel replays' weights and USD, as replay channel --model" })
      .option('session', { type: 'string', array: true, nargs: 1, describe: 'also replay this session: id, unique prefix, top = the most expensive, or a transcript path (a .jsonl name, or one with a /), as replay session takes (repeatable)' })
      .option('calibrate', { type: 'string', requiresArg: true, describe: 'with --session: fit a conversation scale on requests 2..K+1 of each session replay, as replay session --calibrate K (default 0 = off)' })
      // the report prints no tables: it said 'print JSON instead of tables', every log command's words
      .option('json', { type: 'boolean', describe: REPORT_JSON_HELP }),
  run: runReport,
};
