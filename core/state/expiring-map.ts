// The expiring map the in-process shared state (core/state/in-process.ts) keeps its windows, values
// and counted maps in, each within its bound.

export interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/** Entries past which expired ones are swept, so one-off keys (a caller's IP) do not pile up. */
const SWEEP_AT = 10_000;

/** Queue records dropped before the queue array is compacted. */
const COMPACT_AFTER = 1024;

/**
 * A map of expiring entries. Each map's entries share one lifetime (a window's minute, a record's
 * retention), so the order they were added in is their expiry order: a queue of them, oldest first,
 * lets each add drop the expired ones in O(1) per entry, so the map holds its live entries, not up
 * to twice as many until a sweep (make soak saw the process grow 46 % in the five minutes after the
 * first records expired, at 780 plans a second). The queue, not the Map's own order: scanning a Map
 * from its start steps over every deleted slot V8 keeps until its next rehash. A map whose entries
 * do not share one lifetime is also swept when it grows, each sweep setting the next at twice the
 * entries it left. It holds at most `max` entries.
 */
export class ExpiringMap<T> extends Map<string, Expiring<T>> {
  private sweepAt = SWEEP_AT;
  /** Entries oldest first; a slot behind `head` is cleared, so no entry dropped is held until the queue is compacted. */
  private queue: Array<readonly [string, Expiring<T>] | undefined> = [];
  private head = 0;

  constructor(private readonly max = Infinity) {
    super();
  }

  /** Adds `entry` under `key`; false, adding nothing, when the map holds `max` live entries. */
  add(key: string, entry: Expiring<T>, t: number): boolean {
    this.delete(key);
    this.dropExpired(t);
    if (this.size >= this.max) return false;
    if (this.size >= this.sweepAt) {
      for (const [k, e] of this) if (e.expiresAt <= t) this.delete(k);
      this.sweepAt = Math.max(SWEEP_AT, this.size * 2);
    }
    this.set(key, entry);
    this.queue.push([key, entry]);
    // An entry replaced leaves its record behind, skipped once it is the oldest; behind a long-lived
    // one (a map whose lifetimes differ) such records would pile up: past twice the entries held,
    // the queue is made anew from the map, in expiry order, at a cost spread over as many adds.
    if (this.queue.length - this.head > 2 * this.size + COMPACT_AFTER) {
      this.queue = [...this].sort((a, b) => a[1].expiresAt - b[1].expiresAt);
      this.head = 0;
    }
    return true;
  }

  /** Milliseconds until the oldest live entry expires (at least 1). */
  firstExpiresInMs(t: number): number {
    this.dropExpired(t);
    const oldest = this.oldest();
    return oldest ? Math.max(1, oldest.expiresAt - t) : 1;
  }

  /** The oldest entry still held, its queue records of replaced or removed entries skipped. */
  private oldest(): Expiring<T> | undefined {
    while (this.head < this.queue.length) {
      const [key, entry] = this.queue[this.head]!;
      if (this.get(key) === entry) return entry;
      this.queue[this.head] = undefined;
      this.head += 1;
    }
    return undefined;
  }

  private dropExpired(t: number): void {
    for (let oldest = this.oldest(); oldest !== undefined && oldest.expiresAt <= t; oldest = this.oldest()) {
      this.delete(this.queue[this.head]![0]);
      this.queue[this.head] = undefined;
      this.head += 1;
    }
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
