// This instance's counts not yet in the shared state: per UTC day, per key, one counter per
// operation and per limit. Shaped for the request's path: the day's keys are one map held at hand,
// each counter an object incremented in place, so counting a request builds no string and
// allocates nothing once its key has counted that day.

interface Counter {
  n: number;
}

/** One key's counts on one day. */
export class Bucket {
  readonly requests = new Map<string, Counter>();
  readonly rateLimited = new Map<string, Counter>();

  add(operationId: string, rateLimit: string | null, by = 1): void {
    bump(this.requests, operationId, by);
    if (rateLimit !== null) bump(this.rateLimited, rateLimit, by);
  }

  /** Adds `other`'s counts to this bucket's. */
  merge(other: Bucket): void {
    for (const [op, c] of other.requests) bump(this.requests, op, c.n);
    for (const [limit, c] of other.rateLimited) bump(this.rateLimited, limit, c.n);
  }
}

function bump(counters: Map<string, Counter>, name: string, by: number): void {
  const counter = counters.get(name);
  if (counter === undefined) counters.set(name, { n: by });
  else counter.n += by;
}

export interface BucketOf {
  readonly dayStart: number;
  readonly keyId: string;
  readonly bucket: Bucket;
}

/** The pending counts: at most `maxBuckets` key-days, so an unreachable shared state cannot grow them without end. */
export class Tally {
  private readonly days = new Map<number, Map<string, Bucket>>();
  private buckets = 0;

  constructor(private readonly maxBuckets: number) {}

  /** The day's buckets by key, for the recorder to hold at hand. */
  day(dayStart: number): Map<string, Bucket> {
    let keys = this.days.get(dayStart);
    if (keys === undefined) this.days.set(dayStart, (keys = new Map()));
    return keys;
  }

  /** A new bucket for the key in `keys` (a map `day` gave); null when the tally holds as many as it may. */
  open(keys: Map<string, Bucket>, keyId: string): Bucket | null {
    if (this.buckets >= this.maxBuckets) return null;
    this.buckets += 1;
    const bucket = new Bucket();
    keys.set(keyId, bucket);
    return bucket;
  }

  /** Adds a bucket's counts back (a flush that failed); false when there was no room for it. */
  restore({ dayStart, keyId, bucket }: BucketOf): boolean {
    const keys = this.day(dayStart);
    const held = keys.get(keyId);
    if (held !== undefined) {
      held.merge(bucket);
      return true;
    }
    if (this.buckets >= this.maxBuckets) return false;
    this.buckets += 1;
    keys.set(keyId, bucket);
    return true;
  }

  get size(): number {
    return this.buckets;
  }

  bucket(dayStart: number, keyId: string): Bucket | undefined {
    return this.days.get(dayStart)?.get(keyId);
  }

  *[Symbol.iterator](): IterableIterator<BucketOf> {
    for (const [dayStart, keys] of this.days) for (const [keyId, bucket] of keys) yield { dayStart, keyId, bucket };
  }
}

/** Requests a bucket counts: what dropping it loses. */
export function requestsIn(bucket: Bucket): number {
  let n = 0;
  for (const c of bucket.requests.values()) n += c.n;
  return n;
}
