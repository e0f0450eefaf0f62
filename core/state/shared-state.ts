// The shared-state port: what several instances behind one load balancer must agree on (partner
// keys, rate-limit windows, cached quote bodies, idempotency records) lives behind it. Two
// adapters: this file's in-process one, the embedded default for a single instance, and Redis
// (core/state/redis.ts) when REDIS_URL is set. Adapters that cannot reach their store
// reject with SharedStateUnavailable; callers decide how to degrade. The in-process adapter holds
// at most its bounds' entries (core/state/capacity.ts).
import { randomUUID } from 'node:crypto';
import type { StateCapacity } from './capacity.js';

export interface WindowCount {
  /** Hits in the current window, this one included. */
  readonly count: number;
  /** Milliseconds until the window ends. */
  readonly resetInMs: number;
  /** Hits counted right after this one for later requests of the caller here (WindowHit.lease); absent: none. */
  readonly leased?: number;
}

export interface StoredValue {
  readonly value: string;
  /** Milliseconds the value has left; null when it does not expire. */
  readonly ttlMs: number | null;
}

/** A hit to count in a key's fixed window (SharedState.hit). */
export interface WindowHit {
  readonly key: string;
  readonly windowMs: number;
  /** The window's limit: a count over it spends no window counted after it in the same Exchange. */
  readonly max?: number;
  /**
   * In an Exchange's hits, with a `max`: count up to this many hits at once, this one and, right
   * after it, hits kept for the caller's later requests here (`WindowCount.leased`). More than one
   * only while the window has room for LEASE_SHARE times as many; never past `max`.
   */
  readonly lease?: number;
}

/** A lease takes at most this share of its window's room: 1/16 (WindowHit.lease). */
export const LEASE_SHARE = 16;

/** The hits a leasing hit counts at once, with `count` hits counted before it in its window: 1 but for a lease with room for it. */
export const leaseGrant = (count: number, { max, lease = 1 }: WindowHit): number =>
  lease > 1 && max !== undefined ? Math.max(1, Math.min(lease, Math.floor((max - count) / LEASE_SHARE))) : 1;

/**
 * Work for the store sent together: one round trip to Redis (one script), however many windows
 * and values it touches. Hits are counted first, then values read; `hitsOnMiss` are counted only
 * when every read finds nothing (a quote no instance has cached, a plan no record holds) and no
 * hit is over its limit, in order, up to the first over its limit: a request refused by one
 * window spends nothing in the others.
 */
export interface Exchange {
  readonly hits?: readonly WindowHit[];
  readonly reads?: readonly string[];
  readonly hitsOnMiss?: readonly WindowHit[];
  /**
   * A version key (mapSet's `version`) read with the rest: unlike `reads`, it never makes the
   * request a hit. A keyed request reads the key store's version here (core/keys/shared-store.ts).
   */
  readonly version?: string;
  /**
   * Taken when `hitsOnMiss` are counted and none is over its limit (every read found nothing):
   * `key` set to `value` for `ttlMs` unless it holds a value, in the same round trip. Whoever
   * reads the key meanwhile finds the claim, not nothing, and can wait for what its claimer writes
   * there (replaceIf) rather than make it too.
   */
  readonly claimOnMiss?: Claim;
}

/** A value to set under a key that holds none: a claim on the value to come (Exchange.claimOnMiss). */
export interface Claim {
  readonly key: string;
  readonly value: string;
  readonly ttlMs: number;
}

export interface Exchanged {
  /** `hits`' counts, in their order. */
  readonly hits: readonly WindowCount[];
  /** `reads`' values, in their order. */
  readonly reads: ReadonlyArray<StoredValue | null>;
  /** `hitsOnMiss`' counts, up to the first over its limit; null when a read found a value or a hit is over its limit, so none was counted. */
  readonly hitsOnMiss: readonly WindowCount[] | null;
  /** `version`'s value; null when it has none (never set, or the store lost it), or none was asked. */
  readonly version: string | null;
  /** Whether `claimOnMiss` was set. */
  readonly claimed: boolean;
}

/** Increments to one map's fields, and the time the map is to expire in. */
export interface MapIncrement {
  readonly map: string;
  /** Each field's increment; a field not set counts from 0. */
  readonly fields: ReadonlyMap<string, number>;
  /** From now; every increment sets the map's expiry again. */
  readonly ttlMs: number;
}

/**
 * Judges the state marker (core/state/state-marker.ts) a store read along with a request's work:
 * true when it is the one known, so the work's answers stand; false when the store lost its data
 * since, and they must not be used.
 */
export type MarkerWatch = (value: string | null) => boolean;

export interface SharedState {
  /** Whether other instances see the same state (false for the in-process adapter). */
  readonly shared: boolean;
  /**
   * From now on, reads the marker `field` of `map` in the same round trip as each request's work
   * (an Exchange, a key's lookup) and gives it to `watch`; when `watch` answers false, that work
   * rejects with SharedStateUnavailable (`lost`). Absent where the store cannot lose its data
   * while this process runs (this process's own memory).
   */
  watchMarker?(map: string, field: string, watch: MarkerWatch): void;
  /**
   * Counts one hit in `key`'s fixed window: the window starts with its first hit and lasts
   * `windowMs`; the count starts over with the first hit after it ends.
   */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  /** Takes one hit back from `key`'s window while it runs (a count made for work that was then not done); nothing once it has ended. */
  unhit(key: string): Promise<void>;
  /** `key`'s window as it stands, without counting a hit; null when it has none running. */
  peek(key: string): Promise<WindowCount | null>;
  get(key: string): Promise<StoredValue | null>;
  /** Counts and reads as `exchange` says, all in one round trip. */
  exchange(exchange: Exchange): Promise<Exchanged>;
  /** The values under `keys`, in their order (null where there is none), in one round trip and without their expiries. */
  getValues(keys: readonly string[]): Promise<Array<string | null>>;
  /** Stores `value` under `key` for `ttlMs` unless the key holds a value; true when stored. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Stores `value` under `key` for `ttlMs` (deletes the key when `value` is null) if it holds `expected`; true when it did. */
  replaceIf(key: string, expected: string, value: string | null, ttlMs: number): Promise<boolean>;
  /** A field of the map (hash) `map`, or null. */
  mapGet(map: string, field: string): Promise<string | null>;
  /** Fields of a map (null where unset) and a version key's value (null when it has none), read together in one round trip. */
  mapFields(map: string, fields: readonly string[], version: string): Promise<{ readonly values: ReadonlyArray<string | null>; readonly version: string | null }>;
  /**
   * Sets a field of a map, replacing any value. `version`: a key of its own, not expiring, set to
   * a new random value with the change, all or nothing, so whoever read it before learns the map
   * changed since. Random, not counted: a store that lost its data and counted again from 1 would
   * repeat versions read before.
   */
  mapSet(map: string, field: string, value: string, version?: string): Promise<void>;
  /** Sets a field of a map unless it is set; true when set. `version` as for mapSet, set either way. */
  mapSetIfAbsent(map: string, field: string, value: string, version?: string): Promise<boolean>;
  /** Deletes a field of a map, if set. `version` as for mapSet. */
  mapDelete(map: string, field: string, version?: string): Promise<void>;
  /** Every field of a map with its value. */
  mapEntries(map: string): Promise<ReadonlyMap<string, string>>;
  /** Adds each increment to its map's fields and sets the map's expiry: all of them, or none. */
  incrementMaps(increments: readonly MapIncrement[]): Promise<void>;
  close(): Promise<void>;
}

export class SharedStateUnavailable extends Error {
  override readonly name = 'SharedStateUnavailable';

  /**
   * `unreachable`: the store did not answer (down, or too slow); `refused`: it answered, refusing
   * this one command (out of memory, say), so the store as a whole is not down; `lost`: it
   * answered, but no longer holds the data it held (MarkerWatch), so what it answered this time
   * says nothing true of the windows, keys and records.
   */
  constructor(
    message: string,
    readonly reason: 'unreachable' | 'refused' | 'lost' = 'unreachable',
  ) {
    super(message);
  }
}

/**
 * The in-process state holds as many values as it may (STATE_MAX_PLAN_RECORDS): nothing was stored.
 * `retryInMs`: until its oldest value expires, making room.
 */
export class SharedStateFull extends Error {
  override readonly name = 'SharedStateFull';
  constructor(readonly retryInMs: number) {
    super('the in-process shared state holds as many values as it may');
  }
}

export interface Expiring<T> {
  value: T;
  expiresAt: number;
}

const overLimit = ({ count }: WindowCount, { max }: WindowHit): boolean => max !== undefined && count > max;

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

/**
 * The embedded default: one process's memory. Nothing survives a restart; nothing is shared. With a
 * capacity, it holds at most its bounds' windows and values (core/state/capacity.ts): a window it
 * has no room for counts as over any limit, a value it has no room for is refused (SharedStateFull).
 * Its maps (partner keys) are the operator's to fill, and unbounded; so are its counted maps (a
 * verified key's usage per day), one per key and day, expiring: they are as many as the keys.
 */
export class InProcessSharedState implements SharedState {
  readonly shared = false;
  private readonly windows: ExpiringMap<number>;
  private readonly values: ExpiringMap<string>;
  private readonly maps = new Map<string, Map<string, string>>();
  /** The maps' version keys (mapSet's `version`): as few as the maps, never expiring. */
  private readonly versions = new Map<string, string>();
  /** Maps that incrementMaps wrote: counts, expiring; read as any map is. */
  private readonly counted = new ExpiringMap<Map<string, number>>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly capacity: StateCapacity | null = null,
  ) {
    this.windows = new ExpiringMap(capacity?.limits.maxRateWindows);
    this.values = new ExpiringMap(capacity?.limits.maxPlanRecords);
  }

  /** Synchronous, for callers on a hot path that know they hold this adapter. `leasing`: an Exchange's hit that may lease. */
  hitNow(key: string, windowMs: number, leasing?: WindowHit): WindowCount {
    const t = this.now();
    let window = this.windows.get(key);
    if (!window || window.expiresAt <= t) {
      window = { value: 0, expiresAt: t + windowMs };
      if (!this.windows.add(key, window, t)) {
        this.capacity?.refused('rate-windows');
        return { count: Number.MAX_SAFE_INTEGER, resetInMs: this.windows.firstExpiresInMs(t) };
      }
      this.capacity?.held('rate-windows', this.windows.size);
    }
    if (leasing === undefined) {
      window.value += 1;
      return { count: window.value, resetInMs: window.expiresAt - t };
    }
    const granted = leaseGrant(window.value, leasing);
    window.value += granted;
    return { count: window.value - granted + 1, resetInMs: window.expiresAt - t, ...(granted > 1 ? { leased: granted - 1 } : {}) };
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.hitNow(key, windowMs);
  }

  /** Synchronous, like hitNow. */
  unhitNow(key: string): void {
    const window = this.windows.get(key);
    if (window && window.expiresAt > this.now() && window.value > 0) window.value -= 1;
  }

  async unhit(key: string): Promise<void> {
    this.unhitNow(key);
  }

  /** Synchronous, like hitNow. */
  peekNow(key: string): WindowCount | null {
    const t = this.now();
    const window = this.windows.get(key);
    if (!window || window.expiresAt <= t) return null;
    return { count: window.value, resetInMs: window.expiresAt - t };
  }

  async peek(key: string): Promise<WindowCount | null> {
    return this.peekNow(key);
  }

  /** The value held under `key` at `t`: undefined when none is, or it has expired. */
  private liveValue(key: string, t: number): Expiring<string> | undefined {
    const entry = this.values.get(key);
    return entry && entry.expiresAt > t ? entry : undefined;
  }

  async get(key: string): Promise<StoredValue | null> {
    const t = this.now();
    const entry = this.liveValue(key, t);
    if (!entry) return null;
    return { value: entry.value, ttlMs: entry.expiresAt === Infinity ? null : entry.expiresAt - t };
  }

  async exchange(exchange: Exchange): Promise<Exchanged> {
    const { hits = [], reads = [], hitsOnMiss = [] } = exchange;
    const counted = hits.map((hit) => this.hitNow(hit.key, hit.windowMs, hit));
    const t = this.now();
    const values = reads.map((key): StoredValue | null => {
      const entry = this.liveValue(key, t);
      return entry ? { value: entry.value, ttlMs: entry.expiresAt === Infinity ? null : entry.expiresAt - t } : null;
    });
    const version = this.versionOf(exchange.version);
    if (!values.every((value) => value === null) || counted.some((c, i) => overLimit(c, hits[i]!))) return { hits: counted, reads: values, hitsOnMiss: null, version, claimed: false };
    const onMiss: WindowCount[] = [];
    for (const hit of hitsOnMiss) {
      const count = this.hitNow(hit.key, hit.windowMs, hit);
      onMiss.push(count);
      if (overLimit(count, hit)) break;
    }
    const claim = exchange.claimOnMiss;
    const claimed = claim !== undefined && !onMiss.some((c, i) => overLimit(c, hitsOnMiss[i]!)) && (await this.setIfAbsent(claim.key, claim.value, claim.ttlMs).catch(() => false));
    return { hits: counted, reads: values, hitsOnMiss: onMiss, version, claimed };
  }

  async getValues(keys: readonly string[]): Promise<Array<string | null>> {
    const t = this.now();
    return keys.map((key) => this.liveValue(key, t)?.value ?? null);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    const t = this.now();
    if (this.liveValue(key, t)) return false;
    if (!this.values.add(key, { value, expiresAt: t + ttlMs }, t)) {
      this.capacity?.refused('plan-records');
      throw new SharedStateFull(this.values.firstExpiresInMs(t));
    }
    this.capacity?.held('plan-records', this.values.size);
    return true;
  }

  async replaceIf(key: string, expected: string, value: string | null, ttlMs: number): Promise<boolean> {
    const t = this.now();
    if (this.liveValue(key, t)?.value !== expected) return false;
    this.values.delete(key);
    if (value !== null) this.values.add(key, { value, expiresAt: t + ttlMs }, t);
    return true;
  }

  async mapGet(map: string, field: string): Promise<string | null> {
    const counts = this.liveCounts(map);
    if (counts) return counts.get(field)?.toString() ?? null;
    return this.maps.get(map)?.get(field) ?? null;
  }

  async mapFields(map: string, fields: readonly string[], version: string): Promise<{ readonly values: ReadonlyArray<string | null>; readonly version: string | null }> {
    const values = await Promise.all(fields.map((field) => this.mapGet(map, field)));
    return { values, version: this.versionOf(version) };
  }

  async mapSet(map: string, field: string, value: string, version?: string): Promise<void> {
    this.mapOf(map).set(field, value);
    this.newVersion(version);
  }

  async mapSetIfAbsent(map: string, field: string, value: string, version?: string): Promise<boolean> {
    const fields = this.mapOf(map);
    this.newVersion(version);
    if (fields.has(field)) return false;
    fields.set(field, value);
    return true;
  }

  async mapDelete(map: string, field: string, version?: string): Promise<void> {
    this.maps.get(map)?.delete(field);
    this.newVersion(version);
  }

  private newVersion(version: string | undefined): void {
    if (version !== undefined) this.versions.set(version, randomUUID());
  }

  private versionOf(version: string | undefined): string | null {
    return version === undefined ? null : (this.versions.get(version) ?? null);
  }

  async mapEntries(map: string): Promise<ReadonlyMap<string, string>> {
    const counts = this.liveCounts(map);
    if (counts) return new Map([...counts].map(([field, count]) => [field, count.toString()]));
    return new Map(this.maps.get(map));
  }

  async incrementMaps(increments: readonly MapIncrement[]): Promise<void> {
    const t = this.now();
    for (const { map, fields, ttlMs } of increments) {
      const entry = this.counted.get(map);
      const counts = entry && entry.expiresAt > t ? entry.value : new Map<string, number>();
      for (const [field, by] of fields) counts.set(field, (counts.get(field) ?? 0) + by);
      this.counted.add(map, { value: counts, expiresAt: t + ttlMs }, t);
    }
  }

  async close(): Promise<void> {}

  private liveCounts(map: string): Map<string, number> | null {
    const entry = this.counted.get(map);
    return entry && entry.expiresAt > this.now() ? entry.value : null;
  }

  private mapOf(map: string): Map<string, string> {
    let fields = this.maps.get(map);
    if (!fields) {
      fields = new Map();
      this.maps.set(map, fields);
    }
    return fields;
  }
}
