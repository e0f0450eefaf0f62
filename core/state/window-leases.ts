// Leases on shared rate-limit windows: hits an instance counted in a caller's window ahead of the
// caller's later requests, so a caller that keeps coming back to this instance is counted here,
// with no round trip to the shared state each time. The store grants a lease only while the
// window has room for many times as many (core/state/shared-state.ts, leaseGrant), so a window
// never admits more than its limit and, near it, every hit is counted in the store again. A
// window known to be over its limit is refused here until it ends: a fixed window's count only
// grows until then.
import type { WindowCount, WindowHit } from './shared-state.js';

/** The most hits one lease asks for: each lease asks twice as many as the caller's last here. */
export const MAX_LEASE = 64;

/** The callers whose leases an instance holds at most; past it the longest unused goes. */
export const MAX_LEASES = 10_000;

interface Lease {
  /** The count of the next hit leased; past `last`, none is left. */
  next: number;
  readonly last: number;
  /** When the window ends, on this instance's clock. */
  readonly endsAt: number;
  /** The hits the lease asked for. */
  readonly asked: number;
  /** The window was over its limit: refused here until it ends. */
  readonly full: boolean;
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
    if (lease.full) return { count: lease.last, resetInMs };
    if (lease.next > lease.last) return undefined;
    return { count: lease.next++, resetInMs };
  }

  /** `hit` asking for a lease: twice the hits of the caller's last lease in the window, up to MAX_LEASE; 1 in a new window. */
  asking(hit: WindowHit): WindowHit {
    const lease = this.leases.get(hit.key);
    const asked = lease !== undefined && lease.endsAt > this.now() ? Math.min(2 * lease.asked, MAX_LEASE) : 1;
    return { ...hit, lease: asked };
  }

  /** Keeps what the store counted for `hit` (asking's): the hits leased after its own, or, over its limit, the window as full. */
  keep(hit: WindowHit, { count, resetInMs, leased = 0 }: WindowCount): void {
    this.leases.delete(hit.key);
    if (this.leases.size >= this.maxLeases) this.leases.delete(this.leases.keys().next().value!);
    const full = hit.max !== undefined && count > hit.max;
    this.leases.set(hit.key, { next: count + 1, last: full ? count : count + leased, endsAt: this.now() + resetInMs, asked: hit.lease ?? 1, full });
  }

  /** The callers whose leases are held. */
  get size(): number {
    return this.leases.size;
  }
}
