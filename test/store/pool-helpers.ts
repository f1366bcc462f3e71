/** Shared by the pool tests (pool-paths, pool-walk): the real logs' projects an export is made of, and the export. */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { runCli } from '../faults/helpers.js';
import { REAL_LOGS } from '../helpers/corpus.js';

const projects = path.join(REAL_LOGS, 'marot-spotter', 'projects');
export const DOV = path.join(projects, '-home-USER-projects-spotter-worktrees-spotter-dov');
export const TE = path.join(projects, '-home-USER-projects-spotter-worktrees-spotter-4te');
export const FUM = path.join(projects, '-home-USER-projects-spotter-worktrees-spotter-fum');

/** Exports `logs` to `dir` (the directories above it made first: export makes DIR alone); returns its requests' count. */
export async function exportTo(logs: string, dir: string): Promise<number> {
  mkdirSync(path.dirname(dir), { recursive: true });
  const r = await runCli(['export', logs, '--db', ':memory:', '--parquet', dir, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { tables: { table: string; rows: number }[] }).tables.find((t) => t.table === 'requests')!.rows;
}
