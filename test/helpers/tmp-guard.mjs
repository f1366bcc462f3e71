/**
 * Preloaded by `npm test` (--import, after tsx) into every test file's process: a TMPDIR of the
 * file's own, and the file fails if anything but test/helpers/temp.ts's dirs is left in it (see
 * there). Plain JavaScript, and nothing off the main thread: worker threads inherit the flag but
 * not tsx's loader (a .ts preload failed the readers' workers with "Unknown file extension").
 */
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const { guardTempDir } = await import('./temp.ts');
  guardTempDir();
}
