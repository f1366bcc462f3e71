/**
 * What identifies the bytes a read covered: SHA-1 of `readTo` and of the first and the last KiB
 * before it. A file that was appended to keeps it; a file that was replaced, even by one that
 * starts with the same session header, almost never does, and is read again.
 *
 * Example: readTo 5,000 → SHA-1 of "5000", bytes [0, 1024) and bytes [3976, 5000).
 *
 * The reader takes it through the descriptor it read with (no second open per file); ingest
 * takes it by path when it checks whether a grown file is an append (appendFingerprint).
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

export const FINGERPRINT_BYTES = 1024;

export function fingerprintFd(fd: number, readTo: number): string {
  const n = Math.min(FINGERPRINT_BYTES, readTo);
  const head = Buffer.alloc(n);
  const tail = Buffer.alloc(n);
  const a = n > 0 ? readSync(fd, head, 0, n, 0) : 0;
  const b = n > 0 ? readSync(fd, tail, 0, n, readTo - n) : 0;
  return createHash('sha1').update(String(readTo)).update(head.subarray(0, a)).update(tail.subarray(0, b)).digest('hex');
}

export function fingerprint(path: string, readTo: number): string {
  const fd = openSync(path, 'r');
  try {
    return fingerprintFd(fd, readTo);
  } finally {
    closeSync(fd);
  }
}

/**
 * The fingerprint of a grown file's bytes up to readTo, as the check whether it was appended to:
 * null when the bytes written at readTo continue the line the last read ended on. That read took
 * a complete last line that had no newline yet (read-file.ts); written on without a newline first,
 * it is one longer line (mostly invalid JSON) to a fresh read, and read from readTo its rest was a
 * line of its own: such a file is read again whole, as a fresh read reads it. Its newline written
 * at readTo ("\n", "\r\n") is an append (the reader takes those bytes as that line's end).
 * Example: "{…}\n{…}" read to its end, then "{…}\n" appended → null; "\n{…}\n" → the fingerprint.
 */
export function appendFingerprint(path: string, readTo: number): string | null {
  const fd = openSync(path, 'r');
  try {
    if (readTo > 0) {
      const three = Buffer.alloc(3);
      const n = readSync(fd, three, 0, 3, readTo - 1);
      const endsLine = n >= 2 && (three[1] === NL || (n === 3 && three[1] === CR && three[2] === NL));
      if (n >= 1 && three[0] !== NL && !endsLine) return null;
    }
    return fingerprintFd(fd, readTo);
  } finally {
    closeSync(fd);
  }
}

const NL = 0x0a;
const CR = 0x0d;
