/**
 * Test helper process: opens a store (as a running cachelens would hold it), prints "holding",
 * and keeps it until its stdin closes.
 */
import { Store } from '../../src/store/store.js';

const store = await Store.open(process.argv[2]!);
process.stdout.write('holding\n');
process.stdin.resume();
process.stdin.on('end', () => {
  store.close();
  process.exit(0);
});
