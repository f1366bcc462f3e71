/** makeDirs (src/store/dirs.ts): mkdir -p a level at a time, failing as mkdir does. */
import assert from 'node:assert/strict';
import test from 'node:test';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeDirs } from '../../src/store/dirs.js';
import { tmp } from './helpers.js';

test('makeDirs makes the missing levels, relative ones too; a file or a dangling link in the way is an error', () => {
  const dir = tmp('cachelens-dirs-');
  makeDirs(path.join(dir, 'a/b/c'));
  assert.ok(existsSync(path.join(dir, 'a/b/c')));
  makeDirs(path.join(dir, 'a/b/c'));
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    makeDirs('r/s');
    assert.ok(existsSync(path.join(dir, 'r/s')));
  } finally {
    process.chdir(cwd);
  }
  writeFileSync(path.join(dir, 'file'), '');
  symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'dangling'));
  // as mkdirSync(p, { recursive: true }) refuses them (a file: EEXIST; below a file: ENOTDIR)
  assert.throws(() => makeDirs(path.join(dir, 'file')), { code: 'EEXIST' });
  assert.throws(() => makeDirs(path.join(dir, 'file/x')), { code: 'ENOTDIR' });
  assert.throws(() => makeDirs(path.join(dir, 'dangling')), { code: 'EEXIST' });
  assert.throws(() => makeDirs(path.join(dir, 'dangling/x')), { code: 'EEXIST' });
  mkdirSync(path.join(dir, 'target'));
  symlinkSync(path.join(dir, 'target'), path.join(dir, 'link'));
  makeDirs(path.join(dir, 'link/x'));
  assert.ok(existsSync(path.join(dir, 'target/x')));
});
