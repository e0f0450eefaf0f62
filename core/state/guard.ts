// The shared state as the service uses it: watched, and failing fast while it does not answer.
// A stalled Redis answers nothing until each command times out; without this, every request
// would wait that long for its rate-limit window, and again for the quote cache. While the state
// is down, calls fail at once, except one call per retry interval, which probes it.
import type { ComponentHealth } from '../health/component-health.js';
import { SharedStateUnavailable, type Exchange, type Exchanged, type MapIncrement, type MarkerWatch, type SharedState, type StoredValue, type WindowCount } from './shared-state.js';

export class GuardedSharedState implements SharedState {
  readonly shared: boolean;
  private nextProbeAt = 0;
  /** Once closing, failures are the close's doing, not the store's: they say nothing of its health. */
  private closed = false;

  constructor(
    private readonly inner: SharedState,
    private readonly health: ComponentHealth,
    private readonly retryMs = 1000,
    private readonly now: () => number = Date.now,
  ) {
    this.shared = inner.shared;
  }

  private async guarded<T>(operation: () => Promise<T>): Promise<T> {
    if (!this.health.isUp) {
      const t = this.now();
      if (t < this.nextProbeAt) throw new SharedStateUnavailable('the shared state is unreachable; retrying shortly');
      this.nextProbeAt = t + this.retryMs;
    }
    try {
      const result = await operation();
      this.health.up();
      return result;
    } catch (err) {
      // A command the store refused (out of memory) is that command's failure; only silence
      // means the store is down.
      if (err instanceof SharedStateUnavailable && err.reason === 'unreachable' && !this.closed) {
        this.nextProbeAt = this.now() + this.retryMs;
        this.health.down(err);
      }
      throw err;
    }
  }

  watchMarker(map: string, field: string, watch: MarkerWatch): void {
    this.inner.watchMarker?.(map, field, watch);
  }

  hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.guarded(() => this.inner.hit(key, windowMs));
  }

  unhit(key: string): Promise<void> {
    return this.guarded(() => this.inner.unhit(key));
  }

  peek(key: string): Promise<WindowCount | null> {
    return this.guarded(() => this.inner.peek(key));
  }

  get(key: string): Promise<StoredValue | null> {
    return this.guarded(() => this.inner.get(key));
  }

  exchange(exchange: Exchange): Promise<Exchanged> {
    return this.guarded(() => this.inner.exchange(exchange));
  }

  getValues(keys: readonly string[]): Promise<Array<string | null>> {
    return this.guarded(() => this.inner.getValues(keys));
  }

  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return this.guarded(() => this.inner.setIfAbsent(key, value, ttlMs));
  }

  replaceIf(key: string, expected: string, value: string | null, ttlMs: number): Promise<boolean> {
    return this.guarded(() => this.inner.replaceIf(key, expected, value, ttlMs));
  }

  mapGet(map: string, field: string): Promise<string | null> {
    return this.guarded(() => this.inner.mapGet(map, field));
  }

  mapFields(map: string, fields: readonly string[], version: string): Promise<{ readonly values: ReadonlyArray<string | null>; readonly version: string | null }> {
    return this.guarded(() => this.inner.mapFields(map, fields, version));
  }

  mapSet(map: string, field: string, value: string, version?: string): Promise<void> {
    return this.guarded(() => this.inner.mapSet(map, field, value, version));
  }

  mapSetIfAbsent(map: string, field: string, value: string, version?: string): Promise<boolean> {
    return this.guarded(() => this.inner.mapSetIfAbsent(map, field, value, version));
  }

  mapDelete(map: string, field: string, version?: string): Promise<void> {
    return this.guarded(() => this.inner.mapDelete(map, field, version));
  }

  mapEntries(map: string): Promise<ReadonlyMap<string, string>> {
    return this.guarded(() => this.inner.mapEntries(map));
  }

  incrementMaps(increments: readonly MapIncrement[]): Promise<void> {
    return this.guarded(() => this.inner.incrementMaps(increments));
  }

  close(): Promise<void> {
    this.closed = true;
    return this.inner.close();
  }
}
