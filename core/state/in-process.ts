// The in-process adapter of the shared-state port (core/state/shared-state.ts): the embedded
// default for a single instance, within its bounds (core/state/capacity.ts).
import { randomUUID } from 'node:crypto';
import type { StateCapacity } from './capacity.js';
import { ExpiringMap, type Expiring } from './expiring-map.js';
import { leaseGrant, SharedStateFull, type Exchange, type Exchanged, type MapIncrement, type SharedState, type StoredValue, type WindowCount, type WindowHit } from './shared-state.js';

const overLimit = ({ count }: WindowCount, { max }: WindowHit): boolean => max !== undefined && count > max;

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
