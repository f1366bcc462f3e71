/**
 * The tools a planned session calls: each yields the tool_use input, the tool_result text and
 * the `toolUseResult` object Claude Code stores beside it (shapes as in the real logs).
 */
import type { Rng } from './prng.js';
import { sentence, sourceExcerpt, words } from './text.js';

export type ToolName = 'Read' | 'Bash' | 'Grep' | 'Edit' | 'Glob' | 'TodoWrite';

export interface ToolCall {
  name: ToolName;
  input: Record<string, unknown>;
  result: string;
  toolUseResult: Record<string, unknown>;
  /** how long the tool ran (ms) */
  durationMs: number;
}

const FILES = [
  'src/server.ts', 'src/routes/orders.ts', 'src/db/schema.ts', 'src/cache/store.ts', 'src/config.ts',
  'test/orders.test.ts', 'src/plan/loop.ts', 'src/review/checks.ts', 'README.md', 'package.json',
];

const COMMANDS = ['npm test', 'npx tsc --noEmit', 'git status --short', 'git diff --stat', 'npm run lint', 'ls -la src'];

export function toolCall(rng: Rng, name: ToolName, cwd: string): ToolCall {
  const file = `${cwd}/${rng.pick(FILES)}`;
  switch (name) {
    case 'Read': {
      const lines = rng.int(12, 60);
      const content = sourceExcerpt(rng, lines);
      return {
        name,
        input: { file_path: file },
        result: content,
        toolUseResult: { type: 'text', file: { filePath: file, content, numLines: lines, startLine: 1, totalLines: lines + rng.int(0, 300) } },
        durationMs: rng.int(20, 400),
      };
    }
    case 'Bash': {
      const command = rng.pick(COMMANDS);
      const stdout = Array.from({ length: rng.int(3, 24) }, () => words(rng, rng.int(4, 14))).join('\n');
      return {
        name,
        input: { command, description: sentence(rng, 3, 6) },
        result: stdout,
        toolUseResult: { stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
        durationMs: rng.int(300, 20_000),
      };
    }
    case 'Grep': {
      const n = rng.int(1, 6);
      const filenames = Array.from({ length: n }, () => rng.pick(FILES));
      return {
        name,
        input: { pattern: words(rng, 1), path: cwd, output_mode: 'files_with_matches' },
        result: `Found ${n} files\n${filenames.join('\n')}`,
        toolUseResult: { mode: 'files_with_matches', filenames, numFiles: n },
        durationMs: rng.int(30, 600),
      };
    }
    case 'Glob': {
      const n = rng.int(1, 8);
      const filenames = Array.from({ length: n }, () => `${cwd}/${rng.pick(FILES)}`);
      return {
        name,
        input: { pattern: 'src/**/*.ts' },
        result: filenames.join('\n'),
        toolUseResult: { filenames, durationMs: rng.int(5, 90), numFiles: n, truncated: false },
        durationMs: rng.int(10, 200),
      };
    }
    case 'Edit': {
      const oldString = words(rng, rng.int(3, 8));
      const newString = words(rng, rng.int(3, 10));
      return {
        name,
        input: { file_path: file, old_string: oldString, new_string: newString, replace_all: false },
        result: `The file ${file} has been updated successfully.`,
        toolUseResult: { filePath: file, oldString, newString, originalFile: null, structuredPatch: [], userModified: false, replaceAll: false },
        durationMs: rng.int(20, 300),
      };
    }
    case 'TodoWrite': {
      const todos = Array.from({ length: rng.int(2, 5) }, () => ({
        content: sentence(rng, 3, 7),
        status: rng.pick(['pending', 'in_progress', 'completed']),
        activeForm: sentence(rng, 3, 6),
      }));
      return {
        name,
        input: { todos },
        result: 'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable',
        toolUseResult: { oldTodos: [], newTodos: todos },
        durationMs: rng.int(5, 60),
      };
    }
  }
}
