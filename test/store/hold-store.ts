/**
 * Test helper process: opens a store (as a running cachelens would hold it), prints "holding",
 * and keeps it until its stdin closes. With HOLD_RELEASE_OUT, it appends `releasing` to that file
 * just before it lets the store go, so that whatever another process writes there after it is
 * known to come after the release.
 */
import { appendFileSync } from 'node:fs';
import { Store } from '../../src/store/store.js';

const store = await Store.open(process.argv[2]!);
process.stdout.write('holding\n');
process.stdin.resume();
process.stdin.on('end', () => {
  if (process.env.HOLD_RELEASE_OUT) appendFileSync(process.env.HOLD_RELEASE_OUT, 'releasing\n');
  store.close();
  process.exit(0);
});
