// A TTL cache that computes each key once: concurrent misses for the same key share one
// computation, and a failed computation is not cached.

export interface CacheLookup<V> {
  readonly value: Promise<V>;
  /** False when this call started the computation. */
  readonly hit: boolean;
}

export class SingleFlightCache<V> {
  private readonly entries = new Map<string, { expiresAt: number; value: Promise<V> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string, compute: () => Promise<V>): CacheLookup<V> {
    const t = this.now();
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > t) return { value: entry.value, hit: true };
    if (entry) this.entries.delete(key);
    const value = compute();
    const fresh = { expiresAt: t + this.ttlMs, value };
    this.entries.set(key, fresh);
    value.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    this.evict(t);
    return { value, hit: false };
  }

  get size(): number {
    return this.entries.size;
  }

  // Map keeps insertion order, so the first entries are the oldest: drop expired ones, then the
  // oldest live ones while over the cap.
  private evict(t: number): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && entry.expiresAt > t) break;
      this.entries.delete(key);
    }
  }
}
