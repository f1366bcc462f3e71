/**
 * Appends `items` to `to` one by one. `to.push(...items)` passes every item as an argument, and
 * past ~120,000 of them (a transcript of 150,000 attachment lines without a prompt between them,
 * a chain of 150,000 requests) V8 ends it with "Maximum call stack size exceeded".
 */
export function pushAll<T>(to: T[], items: readonly T[]): void {
  for (const x of items) to.push(x);
}
