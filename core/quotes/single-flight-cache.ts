// A TTL cache that computes each key once: concurrent misses for the same key share one
// computation, and a failed computation is not cached.

export interface CacheLookup<V> {
  readonly value: Promise<V>;
  /** False when this call started the computation. */
  readonly hit: boolean;
}

interface Entry<V> {
  readonly key: string;
  expiresAt: number;
  readonly value: Promise<V>;
  /** The value once computed: a hit on a computed entry needs no promise. */
  settled?: { readonly value: V };
}

/** Queue records popped before the queue array is compacted. */
const COMPACT_AFTER = 1024;

export class SingleFlightCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  // Entries in insertion order, oldest at `head`, for eviction. Scanning the Map from its start
  // instead would step over every deleted slot V8 keeps until its next rehash: ~10 µs per miss
  // at 10,000 entries.
  private queue: Array<Entry<V>> = [];
  private head = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The computed value for `key` if it is cached, unexpired and no longer in flight. */
  peek(key: string): { readonly value: V } | undefined {
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > this.now() ? entry.settled : undefined;
  }

  /** Whether `key` is cached and unexpired, computed or in flight: a get() would not compute. */
  has(key: string): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.expiresAt > this.now();
  }

  /**
   * The value for `key`, computed by `compute` unless it is cached or in flight. `compute` may
   * shorten its entry's life with `expireIn`: a value taken from a cache shared with other
   * instances expires when it does there.
   */
  get(key: string, compute: (expireIn: (ms: number) => void) => Promise<V>): CacheLookup<V> {
    const t = this.now();
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > t) return { value: entry.value, hit: true };
    let expiresAt = t + this.ttlMs;
    let fresh: Entry<V> | undefined;
    // `expireIn` may be called before compute returns (synchronously) or after (once it awaits).
    const value = compute((ms) => {
      expiresAt = Math.min(fresh?.expiresAt ?? expiresAt, this.now() + ms);
      if (fresh) fresh.expiresAt = expiresAt;
    });
    fresh = { key, expiresAt, value };
    this.entries.set(key, fresh);
    this.queue.push(fresh);
    value.then(
      (computed) => {
        fresh.settled = { value: computed };
      },
      () => {
        if (this.entries.get(key) === fresh) this.entries.delete(key);
      },
    );
    this.evict(t);
    return { value, hit: false };
  }

  get size(): number {
    return this.entries.size;
  }

  // Drops expired entries from the old end, then the oldest live ones while over the cap. A queue
  // record whose key has since been replaced or removed is skipped.
  private evict(t: number): void {
    while (this.head < this.queue.length) {
      const oldest = this.queue[this.head]!;
      if (this.entries.get(oldest.key) === oldest) {
        if (this.entries.size <= this.maxEntries && oldest.expiresAt > t) break;
        this.entries.delete(oldest.key);
      }
      this.head += 1;
    }
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
