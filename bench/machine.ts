/** The machine a benchmark ran on, so numbers from different machines are never compared blind. */
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';

export interface Machine {
  cpu: string;
  cores: number;
  memGiB: number;
  os: string;
  kernel: string;
}

export function machine(): Machine {
  let os = process.platform as string;
  try {
    os = /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os;
  } catch {
    // not Linux: the platform name will do
  }
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    memGiB: Math.round(totalmem() / 2 ** 30),
    os,
    kernel: release(),
  };
}

/** The 1-minute load average: other work on the machine inflates wall times, so it is recorded. */
export function load(): number {
  return loadavg()[0];
}
