/**
 * The log directories cachelens never writes into (SPEC §8), and the one check every path it
 * writes goes through: the store (`--db`, and the files kept beside it), the report (`--out`) and
 * an export (`--parquet`). A target inside the logs being read, or inside any Claude Code
 * `projects/` directory, is refused in one line (UsageError) before anything is written.
 */
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { UsageError } from '../errors.js';
import { defaultCandidates, defaultRoots, expandHome } from '../ingest/discover.js';

/**
 * The log directory a root stands for: a transcript file given as a path stands for its directory,
 * and a root inside Claude Code's `projects/` directory (a project's, a session's subagents/, a
 * workflow run's: up to 5 levels, the deepest layout) for that `projects/` (an export into a
 * transcript's own directory, or beside the project given, was written into the logs). Only a
 * `projects/` entered through a directory named as Claude Code names a project's (its absolute
 * path with '-' for each separator: `-home-me-repo`, `C--Users-me-repo`) counts: a user's own
 * `~/projects/myrepo/logs` stands for itself, so `~/projects/myrepo/exports` may be written.
 */
export function logDirOf(root: string): string {
  const r = resolve(root);
  const dir = existsSync(r) && !statSync(r).isDirectory() ? dirname(r) : r;
  let p = dir;
  for (let i = 0; i <= 5; i++) {
    const up = dirname(p);
    if (up === p) break;
    if (basename(up) === 'projects' && CLAUDE_PROJECT_DIR.test(basename(p))) return up;
    p = up;
  }
  return dir;
}

/** A project directory's name as Claude Code writes it: an absolute path, '-' for each separator. */
const CLAUDE_PROJECT_DIR = /^(-|[A-Za-z]--)/;

/**
 * The roots a command reads, for the check: the paths given, as given (`summary ~/.claude --db
 * ~/.claude/s.duckdb` reads all of ~/.claude), else the default roots; and the Claude Code
 * directory of each default root read (a CLAUDE_CONFIG_DIR entry, else `$XDG_CONFIG_HOME/claude`,
 * `~/.claude`), whole: its history and todos lie beside the transcripts (`start` names the default
 * roots as paths: the same).
 * Example: no paths, ~/.claude/projects there → [~/.claude/projects, ~/.claude].
 */
export function rootsRead(paths: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || homedir();
  const defaults = defaultRoots(env);
  const read = paths && paths.length > 0 ? paths.map((p) => resolve(expandHome(p, home))) : defaults;
  // the projects/ first: a target in them is said to be there
  const dirs = defaultCandidates(env)
    .map((c) => resolve(expandHome(c, home)))
    .filter((dir) => !read.includes(dir) && defaults.includes(join(dir, 'projects')) && read.includes(join(dir, 'projects')));
  return [...read, ...dirs];
}

/**
 * Refuses `target`, a file or directory this run is to write (`flag` names it, `given` as the user
 * gave it, `choose` what to choose instead: DIR, PATH, FILE), when it lies inside the logs being read
 * (`logRoots`, each standing for its log directory: logDirOf) or inside a Claude Code `projects/`
 * directory this run does not read. Compared where both really are: a target (or a directory above
 * it) that is a link into the logs, or logs read through a link, is inside them all the same; a
 * target not there yet is where its nearest existing directory really is. A few stat and realpath
 * calls per root, no walk. Returns the target's absolute and real places.
 * Example: `--db ~/.claude/projects/x.duckdb` → "--db … is inside a Claude Code log directory (…/projects)".
 */
export function refuseInLogs(target: string, o: { flag: string; given: string; choose: string; logRoots: readonly string[] }): { abs: string; real: string } {
  const abs = resolve(target);
  const real = realPlace(abs);
  const hint = `cachelens never writes into log directories; choose another ${o.choose}`;
  for (const root of o.logRoots) {
    const r = logDirOf(root);
    const rr = realPlace(r);
    if (abs === r || abs.startsWith(r + sep) || real === rr || real.startsWith(rr + sep)) throw new UsageError(`${o.flag} ${o.given} is inside the logs being read (${r})`, hint);
  }
  // and inside a Claude Code projects/ directory this run does not read (`export ./logs --parquet
  // ~/.claude/projects/out`): still a log directory
  const claude = claudeProjectsAbove(real) ?? claudeProjectsAbove(abs);
  if (claude !== null) throw new UsageError(`${o.flag} ${o.given} is inside a Claude Code log directory (${claude})`, hint);
  return { abs, real };
}

/**
 * The Claude Code `projects/` directory `p` is or lies in, whether or not this run reads it: a
 * directory named `projects` holding a directory named as Claude Code names a project's
 * (CLAUDE_PROJECT_DIR) with a transcript (`*.jsonl`) in it; null when there is none. A user's own
 * `~/projects` (entries `myrepo`, or a `-scratch` without transcripts) is none.
 * Example: /home/me/.claude/projects/out → /home/me/.claude/projects.
 */
function claudeProjectsAbove(p: string): string | null {
  for (let at = p; ; at = dirname(at)) {
    if (basename(at) === 'projects') {
      try {
        if (readdirSync(at, { withFileTypes: true }).some((e) => e.isDirectory() && CLAUDE_PROJECT_DIR.test(e.name) && holdsTranscript(join(at, e.name)))) return at;
      } catch {
        // not there (yet), or not listable: nothing to tell by
      }
    }
    if (dirname(at) === at) return null;
  }
}

/** Whether a directory holds a `.jsonl` file (a `-scratch` folder of the user's holds none). */
function holdsTranscript(dir: string): boolean {
  try {
    return readdirSync(dir).some((e) => e.endsWith('.jsonl'));
  } catch {
    return false;
  }
}

/**
 * Where a path really is: its deepest existing directory's real path (links resolved) with the
 * rest of the path after it. Example: /tmp/l/out, /tmp/l → /logs/projects → /logs/projects/out.
 */
export function realPlace(p: string): string {
  const rest: string[] = [];
  for (let at = p; ; at = dirname(at)) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch {
      if (dirname(at) === at) return p;
      rest.push(basename(at));
    }
  }
}
