/** SPEC §2.3: token totals equal ccusage 20.0.24's on every folder of ../shared/real-logs, USD within 0.5%. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { realLogFolders, reconcile } from '../../scripts/reconcile.js';

const folders = realLogFolders();

test('there are real-log folders to reconcile', () => {
  assert.ok(folders.length >= 5, `found ${folders.join(', ')}`);
});

for (const folder of folders) {
  test(`reconciles with ccusage: ${folder}`, () => {
    const { ccusage, cachelens } = reconcile(folder);
    assert.ok(ccusage.input + ccusage.output + ccusage.cache_read > 0, 'ccusage found usage');
    assert.equal(cachelens.input, ccusage.input, 'input');
    assert.equal(cachelens.output, ccusage.output, 'output');
    assert.equal(cachelens.cache_creation, ccusage.cache_creation, 'cache creation (5m + 1h)');
    assert.equal(cachelens.cache_read, ccusage.cache_read, 'cache read');
    assert.ok(Math.abs(cachelens.usd - ccusage.usd) <= 0.005 * ccusage.usd, `USD ${cachelens.usd} vs ${ccusage.usd}`);
  });
}
