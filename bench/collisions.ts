/**
 * Why token totals may differ from ccusage's on a generated corpus: one request identity (message
 * id + request id) written by unrelated sessions. Both tools keep one request per identity, but
 * cachelens merges the copies field by field (maximum, SPEC §1.3) while ccusage keeps one copy,
 * so the totals differ by exactly those requests. Real logs do not reuse identities; a generator
 * can, when its id space is small for its --scale.
 *
 * Example: msg_01hV…/req_011CW… in a shop-api session (cache write 2,127) and in a spotter-lite
 * session (8,143): cachelens counts 8,143, ccusage 2,127.
 */
import { Store } from '../src/store/store.js';

export interface SharedIds {
  /** identities whose response lines come from more than one session */
  ids: number;
}

export async function sharedIds(dbPath: string): Promise<SharedIds> {
  const store = await Store.open(dbPath);
  try {
    const [r] = await store.all(
      `SELECT count(*)::INT AS ids FROM (SELECT key FROM observations WHERE rank > 0 GROUP BY key HAVING count(DISTINCT session_id) > 1)`,
    );
    return { ids: r.ids as number };
  } finally {
    store.close();
  }
}
