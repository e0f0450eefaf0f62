// Rate-limit windows over the shared state, with the degradation the service promises: when the
// shared state (Redis) cannot be reached, windows are counted in this instance's memory until it
// is back, so limits still hold per instance and no request fails for want of a counter. The
// shared state's health (core/state/guard.ts) logs each change and feeds the status.
import { WindowLeases } from './window-leases.js';
import { InProcessSharedState } from './in-process.js';
import { SharedStateUnavailable, type Exchange, type Exchanged, type SharedState, type WindowCount, type WindowHit } from './shared-state.js';

/** The window a partner key's requests are counted in (handlers/http/rate-limits.ts names it so: `rate:` + kind + caller). */
export const keyedWindowKey = (partnerId: string): string => `rate:key:${partnerId}`;

/**
 * A request's count in one of its caller's windows, not made yet: where windows are shared, it is
 * made in the round trip of the request's first read of the shared state (Exchange), then judged.
 */
export interface PendingCount {
  readonly hit: WindowHit;
  /**
   * Whether its window may be counted ahead by a lease (core/state/window-leases.ts): a window
   * whose count no answer shows (a keyless caller's); a keyed one shows it in X-RateLimit-Remaining.
   */
  readonly leasable: boolean;
  /** Whether `judge` was called: the count is made. */
  readonly counted: boolean;
  /** Judges the count made: throws the caller's refusal (rate_limited) when it is over the limit. */
  judge(count: WindowCount): void;
}

export class RateWindows {
  private readonly local: InProcessSharedState;
  private readonly leases: WindowLeases;

  /**
   * `fallback`: where windows are counted while a shared state is unreachable (bounded, in the
   * service). `now`: the leases' clock. `leasesTrusted`: whether the shared state was recently
   * seen to hold its data (core/state/state-marker.ts): a leased count reaches no store, so while
   * it was not, the request goes to the store, which shows it.
   */
  constructor(
    private readonly state: SharedState,
    fallback: InProcessSharedState = new InProcessSharedState(),
    now: () => number = Date.now,
    private readonly leasesTrusted: () => boolean = () => true,
  ) {
    this.local = state instanceof InProcessSharedState ? state : fallback;
    this.leases = new WindowLeases(now);
  }

  /** Whether the windows are this process's own (no shared state): then hitNow counts. */
  get isLocal(): boolean {
    return this.state === this.local;
  }

  /** Counts a hit in `key`'s window in this process's memory, at once; for windows that are its own (isLocal). */
  hitNow(key: string, windowMs: number): WindowCount {
    return this.local.hitNow(key, windowMs);
  }

  /**
   * Counts a hit in `key`'s fixed window of `windowMs` (core/state/shared-state.ts): at once when the
   * windows are this process's own, so a single instance's requests wait on no promise for it.
   */
  hit(key: string, windowMs: number): WindowCount | Promise<WindowCount> {
    return this.isLocal ? this.local.hitNow(key, windowMs) : this.sharedHit(key, windowMs);
  }

  /**
   * Takes one hit back from `key`'s window (a count made for work that was then not done). While the
   * shared state is unreachable, from this process's count, where the hit was then counted.
   */
  async unhit(key: string): Promise<void> {
    if (this.isLocal) return this.local.unhitNow(key);
    try {
      await this.state.unhit(key);
    } catch (err) {
      if (!(err instanceof SharedStateUnavailable)) throw err;
      this.local.unhitNow(key);
    }
  }

  /** `key`'s window as it stands, without counting; null when none is running. Falls back to this process's count like `hit`. */
  async peek(key: string): Promise<WindowCount | null> {
    if (this.isLocal) return this.local.peekNow(key);
    try {
      return await this.state.peek(key);
    } catch (err) {
      if (!(err instanceof SharedStateUnavailable)) throw err;
      return this.local.peekNow(key);
    }
  }

  /**
   * Counts and reads as `exchange` says, in one round trip to the shared state; null, having counted
   * nothing, while it is unreachable: callers then count each window with `hit`, which falls back
   * to this process's memory.
   */
  async exchange(exchange: Exchange): Promise<Exchanged | null> {
    try {
      return await this.state.exchange(exchange);
    } catch (err) {
      if (!(err instanceof SharedStateUnavailable)) throw err;
      return null;
    }
  }

  /**
   * `pending` counted and judged from its lease on this instance, with no round trip: true when it
   * was (judge may have thrown its refusal). False when it is not leasable, no leased hit is left,
   * or the leases are not trusted now.
   */
  countLeased(pending: PendingCount): boolean {
    if (!pending.leasable || this.isLocal || !this.leasesTrusted()) return false;
    const count = this.leases.take(pending.hit);
    if (count === undefined) return false;
    pending.judge(count);
    return true;
  }

  /** `pending`'s hit as an exchange is to count it: asking for a lease when it is leasable (then `judgeLeasing` judges it). */
  leasing(pending: PendingCount): WindowHit {
    return pending.leasable && !this.isLocal ? this.leases.asking(pending.hit) : pending.hit;
  }

  /** Judges `pending` on the count an exchange made of `hit` (leasing's), keeping the hits it leased. */
  judgeLeasing(pending: PendingCount, hit: WindowHit, count: WindowCount): void {
    if (hit !== pending.hit) this.leases.keep(hit, count);
    pending.judge(count);
  }

  /** Counts `pending` with `hit` (this process's memory while the shared state is unreachable) and judges it. */
  async count(pending: PendingCount): Promise<void> {
    pending.judge(await this.hit(pending.hit.key, pending.hit.windowMs));
  }

  private async sharedHit(key: string, windowMs: number): Promise<WindowCount> {
    try {
      return await this.state.hit(key, windowMs);
    } catch (err) {
      if (!(err instanceof SharedStateUnavailable)) throw err;
      return this.local.hitNow(key, windowMs);
    }
  }
}
