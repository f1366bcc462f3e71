/**
 * The buckets every what-if is reported by (SPEC §5): main vs subagent, agent type, model and
 * rounds bucket. A request belongs to one bucket of each dimension; `model` is the request's own.
 */
import { mainOrSubagent, roundsBucket, roundsOf, type ChainInput } from './chain.js';

export type BucketDimension = 'kind' | 'agent_type' | 'model' | 'rounds';
export const BUCKET_DIMENSIONS: readonly BucketDimension[] = ['kind', 'agent_type', 'model', 'rounds'];

/** A chain's buckets: those of each of its requests but `model`, which is the request's own. */
export function chainBuckets(chain: ChainInput): [BucketDimension, string][] {
  return [
    ['kind', mainOrSubagent(chain)],
    ['agent_type', chain.agentType],
    ['rounds', roundsBucket(roundsOf(chain))],
  ];
}

/** Map keyed by dimension and bucket, whose rows come out grouped by dimension in a fixed order. */
export class BucketMap<T> {
  private readonly rows = new Map<string, { dimension: BucketDimension; bucket: string; value: T }>();
  constructor(private readonly make: () => T) {}

  get(dimension: BucketDimension, bucket: string): T {
    const k = `${dimension}\u0000${bucket}`;
    let row = this.rows.get(k);
    if (!row) this.rows.set(k, (row = { dimension, bucket, value: this.make() }));
    return row.value;
  }

  /** Rows by dimension order, then by `order` (e.g. weight descending), then bucket name. */
  entries(order: (a: T, b: T) => number): { dimension: BucketDimension; bucket: string; value: T }[] {
    return [...this.rows.values()].sort(
      (a, b) =>
        BUCKET_DIMENSIONS.indexOf(a.dimension) - BUCKET_DIMENSIONS.indexOf(b.dimension) ||
        (a.dimension === 'rounds' ? ROUNDS_ORDER.indexOf(a.bucket) - ROUNDS_ORDER.indexOf(b.bucket) : 0) ||
        order(a.value, b.value) ||
        (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0),
    );
  }
}

const ROUNDS_ORDER = ['0', '1', '2-3', '4-9', '10+'];
