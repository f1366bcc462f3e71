/**
 * Where logs are found (SPEC §1.1). Roots: every comma-separated path in CLAUDE_CONFIG_DIR (a
 * config dir holding `projects/`, or a `projects/` dir itself; `~` expanded), else
 * `$XDG_CONFIG_HOME/claude` (default `~/.config/claude`) and `~/.claude`. Explicit paths replace
 * the defaults. Below each root: every `*.jsonl` transcript and every `*.meta.json`.
 *
 * The walk is our own rather than fast-glob's so that symlink loops, unreadable directories and
 * files that vanish mid-walk are each reported with their path instead of aborting or being
 * silently dropped; every directory is entered once by its real path.
 *
 * The walk is synchronous: it is the whole of a warm run's file work (a stat per transcript), and
 * a sync stat costs a few µs where a promise round-trip costs tens. An entry's real path is its
 * directory's real path plus its name unless the entry is itself a link, so only roots and links
 * cost a realpath call.
 */
import { type Dirent, existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';

export interface FoundFile {
  path: string;
  root: string;
  kind: 'main' | 'subagent' | 'meta';
  size: number;
  mtimeMs: number;
  /** from `agent-<id>.jsonl` / `agent-<id>.meta.json` */
  agentId: string | null;
  /** from `<uuid>.jsonl`, or for v2.1 subagents the `<session>` dir above `subagents/` */
  sessionId: string | null;
  /** the directory name directly under the root (the encoded project path) */
  projectDir: string;
}

export interface WalkProblem {
  path: string;
  reason: 'unreadable_file' | 'vanished_file' | 'symlink_loop' | 'not_a_file';
  detail: string;
}

export interface Discovery {
  roots: string[];
  files: FoundFile[];
  problems: WalkProblem[];
  /** true when no explicit paths were given and the default roots were used */
  defaults: boolean;
}

export function expandHome(p: string, home = homedir()): string {
  return p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : p;
}

/** The default roots that exist, in SPEC order. */
export function defaultRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.HOME || homedir();
  const candidates = env.CLAUDE_CONFIG_DIR?.trim()
    ? env.CLAUDE_CONFIG_DIR.split(',').map((s) => s.trim()).filter(Boolean)
    : [join(env.XDG_CONFIG_HOME || join(home, '.config'), 'claude'), join(home, '.claude')];
  const roots: string[] = [];
  for (const c of candidates) {
    const dir = resolve(expandHome(c, home));
    const projects = basename(dir) === 'projects' ? dir : join(dir, 'projects');
    if (isDir(projects) && !roots.includes(projects)) roots.push(projects);
  }
  return roots;
}

/** Roots for explicit path arguments; a missing path is a usage error (exit 2). */
export function explicitRoots(paths: string[], home = homedir()): string[] {
  return paths.map((p) => {
    const abs = resolve(expandHome(p, home));
    if (!existsSync(abs)) throw new UsageError(`no such file or directory: ${p}`);
    const projects = join(abs, 'projects');
    return isDir(abs) && basename(abs) !== 'projects' && isDir(projects) ? projects : abs;
  });
}

export async function discover(paths: string[] | undefined, env: NodeJS.ProcessEnv = process.env): Promise<Discovery> {
  const defaults = !paths || paths.length === 0;
  const roots = defaults ? defaultRoots(env) : explicitRoots(paths, env.HOME || homedir());
  const files: FoundFile[] = [];
  const problems: WalkProblem[] = [];
  const seenDirs = new Set<string>();
  const seenFiles = new Set<string>();
  for (const root of roots) {
    const st = statOrNull(root);
    if (st?.isFile()) {
      addFile(root, dirname(root), null, files, problems, seenFiles);
      continue;
    }
    walk(root, null, root, files, problems, seenDirs, seenFiles);
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { roots, files, problems, defaults };
}

/** `known`: the directory's real path when its parent's is known and it is not a link, else null. */
function walk(dir: string, known: string | null, root: string, files: FoundFile[], problems: WalkProblem[], seenDirs: Set<string>, seenFiles: Set<string>): void {
  let real: string;
  try {
    real = known ?? realpathSync.native(dir);
  } catch (err) {
    problems.push(problem(dir, err));
    return;
  }
  if (seenDirs.has(real)) {
    if (dir !== real) problems.push({ path: dir, reason: 'symlink_loop', detail: `directory already walked as ${real}` });
    return;
  }
  seenDirs.add(real);
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    problems.push(problem(dir, err));
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    const full = child(dir, e.name);
    let isDirectory = e.isDirectory();
    let isFile = e.isFile();
    const link = e.isSymbolicLink();
    if (link) {
      try {
        const st = statSync(full);
        isDirectory = st.isDirectory();
        isFile = st.isFile();
      } catch (err) {
        problems.push(problem(full, err));
        continue;
      }
    }
    if (isDirectory) walk(full, link ? null : child(real, e.name), root, files, problems, seenDirs, seenFiles);
    else if (isFile && (e.name.endsWith('.jsonl') || e.name.endsWith('.meta.json'))) addFile(full, root, link ? null : child(real, e.name), files, problems, seenFiles);
  }
}

/** `real`: the file's real path when already known (a plain entry of a walked directory), else null. */
function addFile(path: string, root: string, real: string | null, files: FoundFile[], problems: WalkProblem[], seenFiles: Set<string>): void {
  const name = basename(path);
  if (!name.endsWith('.jsonl') && !name.endsWith('.meta.json')) {
    problems.push({ path, reason: 'not_a_file', detail: 'not a .jsonl transcript' });
    return;
  }
  let st;
  try {
    st = statSync(path);
    real ??= realpathSync.native(path);
    if (seenFiles.has(real)) return;
    seenFiles.add(real);
  } catch (err) {
    problems.push(problem(path, err));
    return;
  }
  const meta = name.endsWith('.meta.json');
  const agentMatch = /^agent-(.+?)\.(?:jsonl|meta\.json)$/.exec(name);
  const agentId = agentMatch ? agentMatch[1] : null;
  let sessionId: string | null = null;
  if (!agentId) sessionId = name.replace(/\.jsonl$/, '');
  else {
    // v2.1: <session>/subagents/agent-<id>.jsonl, also <session>/subagents/workflows/<run>/agent-*.jsonl
    const parts = dirname(path).split('/');
    const i = parts.lastIndexOf('subagents');
    if (i > 0) sessionId = parts[i - 1];
  }
  const rel = path.startsWith(root + '/') ? path.slice(root.length + 1) : name;
  const projectDir = rel.includes('/') ? rel.split('/')[0] : basename(root);
  files.push({
    path,
    root,
    kind: meta ? 'meta' : agentId ? 'subagent' : 'main',
    size: st.size,
    mtimeMs: st.mtimeMs,
    agentId,
    sessionId,
    projectDir,
  });
}

function problem(path: string, err: unknown): WalkProblem {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return { path, reason: 'symlink_loop', detail: 'symbolic link loop' };
  if (code === 'ENOENT') return { path, reason: 'vanished_file', detail: 'vanished (or a dangling link) while listing' };
  return { path, reason: 'unreadable_file', detail: `${code ?? 'error'}: ${(err as Error).message.split('\n')[0]}` };
}

/** path.join for a normalised absolute directory and a directory entry's name, without re-normalising. */
function child(dir: string, name: string): string {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

function statOrNull(p: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** `-home-USER-projects-spotter` → `/home/USER/projects/spotter` (lossy: Claude Code encodes `/` and `.` alike). */
export function decodeProjectDir(dir: string): string {
  return dir.startsWith('-') ? dir.replace(/-/g, '/') : dir;
}
