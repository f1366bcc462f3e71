/**
 * Known failures: a one-line message and a hint. The CLI prints them on one line and exits 2.
 * Anything else is a bug and keeps its stack trace.
 */
export class UsageError extends Error {
  readonly hint: string | undefined;
  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'UsageError';
    this.hint = hint;
  }
}

/**
 * A file-system error as a skip's detail: its code, then the first line of its message, the code
 * said once (Node's messages already begin with it).
 * Example: EACCES "EACCES: permission denied, open '/x'" → "EACCES: permission denied, open '/x'";
 * an error without a code, message "boom" → "error: boom".
 */
export function fileErrorDetail(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? 'error';
  const message = String((err as Error).message ?? err).split('\n')[0]!;
  return message.startsWith(`${code}: `) ? message : `${code}: ${message}`;
}
