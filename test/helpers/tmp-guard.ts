/**
 * Preloaded by `npm test` (--import) into every test file's process: a TMPDIR of the file's own,
 * and the file fails if anything but test/helpers/temp.ts's dirs is left in it (see there).
 */
import { guardTempDir } from './temp.js';

guardTempDir();
