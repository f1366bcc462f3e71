/**
 * Directories the store and an export are written into, made one level at a time.
 */
import { lstatSync, mkdirSync, readlinkSync, rmdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { UsageError } from '../errors.js';

/**
 * mkdir -p, without Node's recursive mkdir: Node 20's `mkdirSync(p, { recursive: true })` never
 * returns for a path under a file system that answers ENOENT to a mkdir of an existing parent's
 * child (`--db /proc/x/a.duckdb` spun at 100% CPU). Each missing level is made on its own, so such
 * a path fails with that level's error. Throws as mkdirSync does: EEXIST where a level is a file
 * or a dangling link, ENOTDIR below a file.
 * Returns the directories it made, outermost first (for unmakeDirs, when what was to go in them failed).
 * Example: makeDirs('/tmp/a/b/c') makes /tmp/a, /tmp/a/b and /tmp/a/b/c where they are missing.
 */
export function makeDirs(dir: string): string[] {
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    const st = statSync(d, { throwIfNoEntry: false });
    if (st) {
      // a file where a directory should be: mkdir's own error (EEXIST)
      if (!st.isDirectory()) mkdirSync(d);
      break;
    }
    missing.push(d);
    if (dirname(d) === d) break;
  }
  const made: string[] = [];
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
      made.push(d);
    } catch (err) {
      // made meanwhile by another process: as good as made here (a dangling link is not), but not ours to remove
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(d, { throwIfNoEntry: false })?.isDirectory()) {
        unmakeDirs(made);
        throw err;
      }
    }
  }
  return made;
}

/**
 * Removes what makeDirs made, innermost first, while they are empty: a report or an export that
 * could not be written leaves no empty directories behind (`--out new/r.html` on a full disk left
 * new/). One that holds something (another run's output) stays, and so do those around it.
 * Example: unmakeDirs(['/tmp/a', '/tmp/a/b']) removes /tmp/a/b, then /tmp/a.
 */
export function unmakeDirs(made: readonly string[]): void {
  for (const d of [...made].reverse()) {
    try {
      rmdirSync(d);
    } catch {
      return;
    }
  }
}

/**
 * The directory on the way to `path` that this user may not search, the first from the top, as
 * the system walks it (each link followed where it stands, its `..` taken from where it leads),
 * named by its real path; or null when there is none: what an EACCES from a look at `path` means,
 * when it is not `path`'s own mode (a path below it reads as absent to existsSync). Through a link
 * (`home/u/teamlink -> ../../shares/team/x`, shares/team mode 000) it named the link's directory
 * (`home/u`), which can be searched: the prefixes were stat'ed, following the link whole.
 * Example: /a mode 000 → unsearchable('/a/b/pool') is '/a'.
 */
export function unsearchable(path: string): string | null {
  const todo = resolve(path).split(sep).filter(Boolean);
  let real: string = sep;
  for (let links = 0; todo.length > 0; ) {
    const part = todo.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      real = dirname(real);
      continue;
    }
    const at = real === sep ? sep + part : real + sep + part;
    let st;
    try {
      st = lstatSync(at);
    } catch (e) {
      const c = (e as NodeJS.ErrnoException).code;
      return c === 'EACCES' || c === 'EPERM' ? real : null;
    }
    if (st.isSymbolicLink()) {
      if (++links > 40) return null; // a loop: ELOOP, not a permission
      let to: string;
      try {
        to = readlinkSync(at);
      } catch {
        return null;
      }
      if (isAbsolute(to)) real = sep;
      todo.unshift(...to.split(sep).filter(Boolean));
      continue;
    }
    if (!st.isDirectory()) return null;
    real = at;
  }
  return null;
}

/**
 * Refuses a file the user named (`--db`, `--out`) whose directory is not there, naming the
 * outermost directory missing: a typo (`--out ~/reprots/r.html`) made a tree of directories
 * wherever it pointed, without a word. Only the default store's directory (under ~/.cache) is
 * made by cachelens. A link that leads nowhere on the way is named as one; a level that is a file, or that cannot be
 * searched, is not told here: the write's own error says it.
 * Example: ('/tmp/typo/a/r.html', { flag: '--out', given: 'typo/a/r.html', choose: 'FILE' }) with no /tmp/typo →
 * "--out typo/a/r.html: no directory /tmp/typo (cachelens makes no directory for --out; create it first, or choose another FILE)".
 */
export function refuseMissingDir(file: string, o: { flag: string; given: string; choose: string; makes?: string }): void {
  let missing: string | undefined;
  try {
    for (let d = dirname(resolve(file)); !statSync(d, { throwIfNoEntry: false }); d = dirname(d)) {
      // a link that leads nowhere: named as one (the write said EEXIST, or 'no directory <link>')
      if (lstatSync(d, { throwIfNoEntry: false })) {
        throw new UsageError(`${o.flag} ${o.given}: ${d} is a link that leads nowhere, not a directory`, `create what it leads to first, or choose another ${o.choose}`);
      }
      missing = d;
      if (dirname(d) === d) break;
    }
  } catch (e) {
    if (e instanceof UsageError) throw e;
    return;
  }
  if (missing !== undefined) throw new UsageError(`${o.flag} ${o.given}: no directory ${missing}`, `cachelens makes ${o.makes ?? `no directory for ${o.flag}`}; create it first, or choose another ${o.choose}`);
}
