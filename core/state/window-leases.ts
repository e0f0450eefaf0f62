// Leases on shared rate-limit windows: hits an instance counted in a caller's window ahead of the
// caller's later requests, so a caller that keeps coming back to this instance is counted here,
// with no round trip to the shared state each time. The store grants a lease only while the
// window has room for many times as many (core/state/shared-state.ts, leaseGrant), so a window
// never admits more than its limit and, near it, every hit is counted in the store again. A
// window known to be over its limit is refused here until it ends, once its leased hits are
// spent: a fixed window's count only grows until then.
import type { WindowCount, WindowHit } from './shared-state.js';

/** The most hits one lease asks for: each lease asks twice as many as the caller's last here. */
export const MAX_LEASE = 64;

/** The callers whose leases an instance holds at most; past it the longest unused goes. */
export const MAX_LEASES = 10_000;

interface Lease {
  /**
   * Counts leased and not yet taken, as [next, last] ranges, oldest first: requests that ask at
   * once (concurrent ones) each bring a range, and every hit of each is taken in turn.
   */
  readonly ranges: Array<[number, number]>;
  /** When the window ends, on this instance's clock. */
  endsAt: number;
  /** The hits the last lease asked for. */
  asked: number;
  /** The window's count over its limit, once seen: refused here until it ends. */
  full: number | null;
}

export class WindowLeases {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxLeases = MAX_LEASES,
  ) {}

  /** `hit`'s count from its lease here, the window's end with it; undefined when no hit is left here. */
  take({ key }: WindowHit): WindowCount | undefined {
    const lease = this.leases.get(key);
    if (lease === undefined) return undefined;
    const resetInMs = lease.endsAt - this.now();
    if (resetInMs <= 0) return undefined;
    const range = lease.ranges[0];
    if (range === undefined) return lease.full === null ? undefined : { count: lease.full, resetInMs };
    const count = range[0]++;
    if (range[0] > range[1]) lease.ranges.shift();
    return { count, resetInMs };
  }

  /** `hit` asking for a lease: twice the hits of the caller's last lease in the window, up to MAX_LEASE; 1 in a new window. */
  asking(hit: WindowHit): WindowHit {
    const lease = this.live(hit.key);
    return { ...hit, lease: lease === undefined ? 1 : Math.min(2 * lease.asked, MAX_LEASE) };
  }

  /** Keeps what the store counted for `hit` (asking's): the hits leased after its own, or, over its limit, the window as full. */
  keep(hit: WindowHit, { count, resetInMs, leased = 0 }: WindowCount): void {
    let lease = this.live(hit.key);
    this.leases.delete(hit.key);
    if (lease === undefined) {
      if (this.leases.size >= this.maxLeases) this.leases.delete(this.leases.keys().next().value!);
      lease = { ranges: [], endsAt: this.now() + resetInMs, asked: 1, full: null };
    }
    // Map order is use order: the caller goes last, the longest unused first.
    this.leases.set(hit.key, lease);
    lease.asked = Math.max(lease.asked, hit.lease ?? 1);
    if (hit.max !== undefined && count > hit.max) lease.full = Math.max(lease.full ?? 0, count);
    else if (leased > 0) lease.ranges.push([count + 1, count + leased]);
  }

  /** The callers whose leases are held. */
  get size(): number {
    return this.leases.size;
  }

  /** `key`'s lease in a window that has not ended. */
  private live(key: string): Lease | undefined {
    const lease = this.leases.get(key);
    return lease !== undefined && lease.endsAt > this.now() ? lease : undefined;
  }
}
