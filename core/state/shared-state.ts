// The shared-state port: what several instances behind one load balancer must agree on (partner
// keys, rate-limit windows, cached quote bodies, idempotency records) lives behind it. Two
// adapters: the in-process one (core/state/in-process.ts), the embedded default for a single
// instance, and Redis (core/state/redis.ts) when REDIS_URL is set. Adapters that cannot reach their
// store reject with SharedStateUnavailable; callers decide how to degrade.
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
