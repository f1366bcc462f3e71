/**
 * Temp directories for tests, removed when the test file's process exits, so that a test run
 * leaves nothing in the system temp dir (each made a store or a corpus of a few MB; thousands were
 * left behind before). CACHELENS_KEEP_TEST_TMP=1 keeps them, to look at after a failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A fresh directory under the system temp dir whose name starts with `prefix`, removed at exit. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (made.push(dir) === 1 && !process.env.CACHELENS_KEEP_TEST_TMP) process.on('exit', removeMade);
  return dir;
}

function removeMade(): void {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      process.stderr.write(`# could not remove ${dir}: ${(err as Error).message}\n`);
    }
  }
}
