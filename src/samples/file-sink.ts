/**
 * One output file, written line by line through a small buffer: the corpus is streamed to disk
 * file by file, never held whole in memory (a --scale 400 corpus is about 1 GB).
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

const FLUSH_AT = 1 << 20;
/** Directories already made in this process: mkdir once per directory, not once per file. */
const made = new Set<string>();

/** Forget made directories (a new generation may have removed them). */
export function resetDirCache(): void {
  made.clear();
}

export function ensureDir(dir: string): void {
  if (made.has(dir)) return;
  mkdirSync(dir, { recursive: true });
  made.add(dir);
}

export class FileSink {
  lines = 0;
  bytes = 0;
  private fd: number | null;
  private chunks: string[] = [];
  private pending = 0;

  /** @param relPath path relative to the corpus root, with `/` separators (as in truth.json) */
  constructor(
    root: string,
    readonly relPath: string,
  ) {
    const abs = join(root, ...relPath.split('/'));
    ensureDir(dirname(abs));
    this.fd = openSync(abs, 'w');
  }

  /** Writes one complete line (a newline is appended). */
  line(text: string): void {
    this.push(text + '\n');
    this.lines++;
  }

  /** Writes a half-written last line: no newline, as a log looks while Claude Code is still writing it. */
  partial(text: string): void {
    this.push(text);
    this.lines++;
  }

  close(): void {
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private push(text: string): void {
    if (this.fd === null) throw new Error(`${this.relPath} is closed`);
    this.chunks.push(text);
    this.pending += text.length;
    if (this.pending >= FLUSH_AT) this.flush();
  }

  private flush(): void {
    if (this.fd === null || this.chunks.length === 0) return;
    this.bytes += writeSync(this.fd, this.chunks.join(''));
    this.chunks = [];
    this.pending = 0;
  }
}
