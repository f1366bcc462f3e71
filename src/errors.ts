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
