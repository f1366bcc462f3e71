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
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { UsageError, fileErrorDetail } from '../errors.js';

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
  /** the name of the transcript's project directory (the encoded project path), from its own path (projectDirOf) */
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
  /**
   * Every directory the walk listed, the roots among them, when it met no symbolic link (absent
   * otherwise, and in a discovery made some other way): what a later run checks instead of
   * walking (unchanged.ts).
   */
  dirs?: string[];
}

export function expandHome(p: string, home = homedir()): string {
  return p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : p;
}

/** Where the default roots are looked for, in SPEC order: CLAUDE_CONFIG_DIR's entries, else XDG's and ~/.claude. */
export function defaultCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.HOME || homedir();
  // a variable that names no path (empty, blanks, only commas) is as one not set
  const listed = (env.CLAUDE_CONFIG_DIR ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return listed.length > 0 ? listed : [join(xdgDir(env.XDG_CONFIG_HOME) ?? join(home, '.config'), 'claude'), join(home, '.claude')];
}

/**
 * An XDG base directory variable's value when it names one: an absolute path. The XDG Base Directory
 * spec has a relative one ignored, as one not set (`XDG_CACHE_HOME=rel` put the store in ./rel of
 * whatever directory the command ran in). Example: '/x/cache' → '/x/cache'; 'rel', '' → undefined.
 */
export function xdgDir(value: string | undefined): string | undefined {
  return value && isAbsolute(value) ? value : undefined;
}

/** The default roots that exist, in SPEC order. */
export function defaultRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.HOME || homedir();
  const roots: string[] = [];
  for (const c of defaultCandidates(env)) {
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

/** `dirs`: keep the directories listed (Discovery.dirs). */
export async function discover(paths: string[] | undefined, env: NodeJS.ProcessEnv = process.env, dirs = false): Promise<Discovery> {
  const files: FoundFile[] = [];
  const found = walkRoots(
    paths,
    env,
    (path, root, kind, size, mtimeMs, agentId, sessionId, projectDir) => {
      files.push({ path, root, kind, size, mtimeMs, agentId, sessionId, projectDir });
    },
    dirs,
  );
  const { roots, problems, defaults } = found;
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { roots, files, problems, defaults, ...(found.dirs ? { dirs: found.dirs } : {}) };
}

/** Takes each file the walk finds, in walk order, without an object for it (`dev` and `ino`: the file's device and inode). */
export type FileSink = (
  path: string,
  root: string,
  kind: FoundFile['kind'],
  size: number,
  mtimeMs: number,
  agentId: string | null,
  sessionId: string | null,
  projectDir: string,
  dev: number,
  ino: number,
) => void;

/**
 * The walk of `discover()`, each file given to `sink` as it is found. Within a root the files come
 * in path order, as `discover()` sorts them (every directory's entries are walked in the order of
 * their names, a directory's with a `/` after it), except where a link to a directory sorts by its
 * own name; roots come one after another as given.
 */
export function walkRoots(paths: string[] | undefined, env: NodeJS.ProcessEnv, sink: FileSink, dirs = false): Omit<Discovery, 'files'> {
  const defaults = !paths || paths.length === 0;
  const roots = defaults ? defaultRoots(env) : explicitRoots(paths, env.HOME || homedir());
  const w = newWalk(sink, false, dirs);
  for (const root of roots) {
    const st = statOrNull(root);
    if (st?.isFile()) {
      addFile(w, root, basename(root), dirname(root));
      continue;
    }
    // a pipe given as a path (`summary <(cat s.jsonl)`, a FIFO) is not read, as a FIFO met in a walk
    // is not: it was said as 'ENOTDIR: not a directory, scandir …', or for /dev/fd/N as vanished
    if (st && !st.isDirectory()) {
      if (!firstMeeting(w, st as { dev: number; ino: number })) continue;
      const what = st.isFIFO() ? 'a pipe' : st.isSocket() ? 'a socket' : 'a device';
      w.problems.push({ path: root, reason: 'unreadable_file', detail: `${what}, not a file: not read (give the transcript file itself)` });
      continue;
    }
    // a root that is a directory walked already (~/.claude a link to ~/.config/claude, both
    // default roots; a root inside another) is no loop: its files are found, once
    const real = st?.isDirectory() ? realOrNull(root) : null;
    if (real !== null && w.seenDirs.has(real)) continue;
    walk(w, root, null, root);
    // a later root that holds this one (through a link) meets it walked already: no loop either
    if (real !== null) w.rootsWalked.add(real);
  }
  return { roots, problems: w.problems, defaults, ...(w.dirs ? { dirs: w.dirs } : {}) };
}

/** A walk in progress: what it found and met so far, and what it has seen. */
export interface Walk {
  sink: FileSink;
  problems: WalkProblem[];
  /** directories entered, by real path */
  seenDirs: Set<string>;
  /** the real paths of the directory roots walked before the current one */
  rootsWalked: Set<string>;
  /** files found, by device and inode: one reached twice (links, nested roots) counts once */
  seenFiles: Map<number, Set<number>>;
  /** whether a symbolic link was met */
  links: boolean;
  /** the directories listed, in the order listed, if asked for; null once a symbolic link is met (Discovery.dirs) */
  dirs: string[] | null;
  /**
   * A part of a shared walk (early-walk.ts): it does not follow a symbolic link (it only notes
   * one: the walk is then done again on one thread), so it meets no directory twice, and it leaves
   * a file met twice to the merge of the parts. It keeps no sets of what it has seen.
   */
  shared: boolean;
}

export function newWalk(sink: FileSink, shared = false, dirs = false): Walk {
  return { sink, problems: [], seenDirs: new Set(), rootsWalked: new Set(), seenFiles: new Map(), links: false, dirs: dirs ? [] : null, shared };
}

/** A directory's entry: a Dirent, or one handed from another thread (WalkUnit). */
interface Entry {
  name: string;
  isDirectory(): boolean;
  isFile(): boolean;
  isSymbolicLink(): boolean;
}

/** `known`: the directory's real path when its parent's is known and it is not a link, else null. */
function walk(w: Walk, dir: string, known: string | null, root: string): void {
  const listed = list(w, dir, known);
  if (listed) for (const e of listed.entries) walkEntry(w, dir, listed.real, root, e);
}

/** A directory's real path and its entries in walk order; null (a problem noted) when it is not walked. */
function list(w: Walk, dir: string, known: string | null): { real: string; entries: Dirent[] } | null {
  let real: string;
  try {
    real = known ?? realpathSync.native(dir);
  } catch (err) {
    w.problems.push(problem(dir, err));
    return null;
  }
  if (w.seenDirs.has(real)) {
    if (dir !== real && !w.rootsWalked.has(real)) w.problems.push({ path: dir, reason: 'symlink_loop', detail: `directory already walked as ${real}` });
    return null;
  }
  if (!w.shared) w.seenDirs.add(real);
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    w.problems.push(problem(dir, err));
    return null;
  }
  w.dirs?.push(dir);
  // by name: which of two paths to one directory or file is kept does not depend on the disk's
  // order; a directory's name with a `/` after it, so that the files come in path order
  // (`a-b/…` before `a/…`, as `-` sorts before `/`)
  entries.sort((a, b) => (entryKey(a) < entryKey(b) ? -1 : 1));
  return { real, entries };
}

/** One entry of the directory `dir` (real path `real`): a file found, or a directory walked. */
function walkEntry(w: Walk, dir: string, real: string, root: string, e: Entry): void {
  const name = e.name;
  let isDirectory = e.isDirectory();
  let isFile = e.isFile();
  const link = e.isSymbolicLink();
  // transcripts, and the .meta.json of a subagent's beside it (SPEC §1.1: agent-<id>.meta.json)
  const wanted = name.endsWith('.jsonl') || (name.startsWith('agent-') && name.endsWith('.meta.json'));
  if (!isDirectory && !link && !(isFile && wanted)) {
    // a pipe, socket or device named as a transcript: passed over, and said so
    if (wanted && !isFile) notAFile(w, child(dir, name));
    return;
  }
  const full = child(dir, name);
  if (link) {
    w.links = true;
    w.dirs = null;
    if (w.shared) return;
    try {
      const st = statSync(full);
      isDirectory = st.isDirectory();
      isFile = st.isFile();
    } catch (err) {
      w.problems.push(problem(full, err));
      return;
    }
  }
  if (isDirectory) walk(w, full, link ? null : child(real, name), root);
  else if (isFile && wanted) addFile(w, full, name, root);
  else if (wanted) notAFile(w, full);
}

/**
 * A walk problem for `path`, named as a transcript but neither a file nor a directory (a link to
 * one too): read, a pipe would wait for a writer, a device could be read for ever.
 * Example: a pipe /r/p/x.jsonl → 'a pipe, not a file: not read'.
 */
function notAFile(w: Walk, path: string): void {
  let what = 'not a file';
  try {
    const st = statSync(path);
    // one pipe met twice (through a link, or given as a path too) is said once, as a file is read once
    if (!firstMeeting(w, st)) return;
    what = `${st.isFIFO() ? 'a pipe' : st.isSocket() ? 'a socket' : 'a device'}, not a file`;
  } catch {
    // gone since it was listed: said as not a file all the same
  }
  w.problems.push({ path, reason: 'unreadable_file', detail: `${what}: not read` });
}

/** Whether this walk meets the file `st` is of for the first time (by device and inode; a shared walk's threads do not tell). */
function firstMeeting(w: Walk, st: { dev: number; ino: number }): boolean {
  if (w.shared) return true;
  let inodes = w.seenFiles.get(st.dev);
  if (!inodes) w.seenFiles.set(st.dev, (inodes = new Set()));
  if (inodes.has(st.ino)) return false;
  inodes.add(st.ino);
  return true;
}

/**
 * One entry directly under a root, to be walked by whichever thread takes it (early-walk.ts
 * shares the walk of the default roots between its worker and the main thread). `type`: 1 a
 * directory, 2 a file, 4 a symbolic link, as its Dirent said.
 */
export interface WalkUnit {
  root: string;
  real: string;
  name: string;
  type: number;
}

/**
 * The entries of the default root as units, in walk order, when there is one root and it is a
 * directory; else null (the walk is then not shared: a root inside another is walked as part of
 * it, which depends on the order of the whole walk). What listing the root met is in `w.problems`.
 */
export function walkUnits(env: NodeJS.ProcessEnv, w: Walk): { roots: string[]; units: WalkUnit[] } | null {
  const roots = defaultRoots(env);
  if (roots.length !== 1 || !statOrNull(roots[0])?.isDirectory()) return null;
  const root = roots[0];
  const listed = list(w, root, null);
  const units = (listed?.entries ?? []).map((e) => ({
    root,
    real: listed!.real,
    name: e.name,
    type: (e.isDirectory() ? 1 : 0) | (e.isFile() ? 2 : 0) | (e.isSymbolicLink() ? 4 : 0),
  }));
  return { roots, units };
}

/** Walks one unit (walkUnits) as the walk of its root would. */
export function walkUnit(w: Walk, u: WalkUnit): void {
  const e: Entry = { name: u.name, isDirectory: () => (u.type & 1) !== 0, isFile: () => (u.type & 2) !== 0, isSymbolicLink: () => (u.type & 4) !== 0 };
  walkEntry(w, u.root, u.real, u.root, e);
}

function addFile(w: Walk, path: string, name: string, root: string): void {
  if (!name.endsWith('.jsonl') && !name.endsWith('.meta.json')) {
    w.problems.push({ path, reason: 'not_a_file', detail: 'not a .jsonl transcript' });
    return;
  }
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    w.problems.push(problem(path, err));
    return;
  }
  if (!firstMeeting(w, st)) return;
  const f = fileFields(path, name);
  w.sink(path, root, f.kind, st.size, st.mtimeMs, f.agentId, f.sessionId, f.projectDir, st.dev, st.ino);
}

/**
 * What the walk derives from a found file's path (`name`: its last part, a `.jsonl` or
 * `.meta.json`): its kind, agent and session ids and project directory. Example:
 * `/c/projects/-home-u-app/s1/subagents/agent-a1.jsonl` → subagent, agent a1, session s1,
 * project `-home-u-app`.
 */
export function fileFields(path: string, name: string): Pick<FoundFile, 'kind' | 'agentId' | 'sessionId' | 'projectDir'> {
  const meta = name.endsWith('.meta.json');
  const stem = name.slice(0, meta ? -10 : -6);
  const agentId = stem.startsWith('agent-') && stem.length > 6 ? stem.slice(6) : null;
  const sessionId = agentId === null ? (meta ? name : stem) : agentSessionDir(path);
  return { kind: meta ? 'meta' : agentId !== null ? 'subagent' : 'main', agentId, sessionId, projectDir: projectDirOf(path, agentId !== null) };
}

/**
 * The name of a transcript's project directory, from its own path: the directory holding it, or
 * for a v2.1 subagent file (`<project>/<session>/subagents/[workflows/<run>/]agent-<id>.jsonl`)
 * the one holding its session's directory. Not from the root it was found under: the project of
 * a session without `cwd` lines was the name of the directory directly under the root, so the
 * same file read through `projects/`, a project directory, a session directory or as a path gave
 * `/home/u/app`, `s1` or `subagents` (and a store kept whichever root read the file first).
 * Example: `/c/projects/-home-u-app/s1/subagents/agent-a1.jsonl` → `-home-u-app`, and so does
 * `/c/projects/-home-u-app/s1.jsonl`.
 */
export function projectDirOf(path: string, agent = true): string {
  // only an agent file can be in that layout: a main transcript's is its own directory (no regex
  // for each of a warm run's files)
  const layout = agent ? /\/([^/]+)\/[^/]+\/subagents\/(?:workflows\/[^/]+\/)?agent-[^/]+$/.exec(path) : null;
  if (layout) return layout[1];
  const end = path.lastIndexOf('/');
  return end <= 0 ? '' : path.slice(path.lastIndexOf('/', end - 1) + 1, end);
}

/**
 * The session of a v2.1 subagent file from its place: `<session>/subagents/agent-<id>.jsonl`, or
 * `<session>/subagents/workflows/<run>/agent-<id>.jsonl`. Only that layout: a `subagents` directory
 * higher up (in the root's own path) names no session.
 */
export function agentSessionDir(path: string): string | null {
  return /\/([^/]+)\/subagents\/(?:workflows\/[^/]+\/)?agent-[^/]+$/.exec(path)?.[1] ?? null;
}

/** An entry's place among its directory's entries: its name, a directory's with a `/` after it. */
function entryKey(e: Dirent): string {
  return e.isDirectory() ? `${e.name}/` : e.name;
}

function problem(path: string, err: unknown): WalkProblem {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return { path, reason: 'symlink_loop', detail: 'symbolic link loop' };
  if (code === 'ENOENT') {
    // a name that is not UTF-8 comes from readdir with U+FFFD in place of its bytes: no such path
    if (path.includes('\ufffd')) return { path, reason: 'unreadable_file', detail: 'its name is not valid UTF-8: not read' };
    return { path, reason: 'vanished_file', detail: 'vanished (or a dangling link) while listing' };
  }
  return { path, reason: 'unreadable_file', detail: fileErrorDetail(err) };
}

/** path.join for a normalised absolute directory and a directory entry's name, without re-normalising. */
function child(dir: string, name: string): string {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
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
