/**
 * Directories the store and an export are written into, made one level at a time.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * mkdir -p, without Node's recursive mkdir: Node 20's `mkdirSync(p, { recursive: true })` never
 * returns for a path under a file system that answers ENOENT to a mkdir of an existing parent's
 * child (`--db /proc/x/a.duckdb` spun at 100% CPU). Each missing level is made on its own, so such
 * a path fails with that level's error. Throws as mkdirSync does.
 * Example: makeDirs('/tmp/a/b/c') makes /tmp/a, /tmp/a/b and /tmp/a/b/c where they are missing.
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      // made meanwhile by another process: as good as made here
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
