/**
 * Finds the channel log generator (src/samples/channel.ts, written by another engineer) if it
 * is present; the corpus is still made without it. Shared by the CLI and the determinism test
 * so both write exactly the same channels/backend.jsonl.
 */

interface ChannelModule {
  generateChannel(seed: number): unknown[];
  channelToJsonl(msgs: unknown[]): string;
}

export async function loadChannel(): Promise<((seed: number) => string) | undefined> {
  // a computed specifier: the module may not exist yet, and the build must not depend on it
  const spec = new URL('./channel.js', import.meta.url).href;
  try {
    const mod = (await import(spec)) as Partial<ChannelModule>;
    if (typeof mod.generateChannel !== 'function' || typeof mod.channelToJsonl !== 'function') return undefined;
    const { generateChannel, channelToJsonl } = mod as ChannelModule;
    return (seed) => channelToJsonl(generateChannel(seed));
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw err;
  }
}
