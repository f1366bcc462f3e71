/**
 * Where the fault-suite preloads report what they saw: one JSON object per line, appended to
 * FAULT_PROBE_OUT synchronously (so a record survives a crash, and worker threads cannot
 * overwrite each other).
 */
import { appendFileSync } from 'node:fs';

export function record(entry) {
  const out = process.env.FAULT_PROBE_OUT;
  if (out) appendFileSync(out, JSON.stringify(entry) + '\n');
}
