// Rate-limit windows over the shared state, with the degradation the service promises: when the
// shared state (Redis) cannot be reached, windows are counted in this instance's memory until it
// is back, so limits still hold per instance and no request fails for want of a counter. Every
// change between the two is logged once and shows in the status.
import { InProcessSharedState, SharedStateUnavailable, type SharedState, type WindowCount } from './shared-state.js';

export interface SharedStateLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** Whether the shared state answers, as last seen by any of its users. */
export class SharedStateHealth {
  private reachable = true;

  constructor(
    readonly shared: boolean,
    private readonly log: SharedStateLog,
  ) {}

  get state(): 'in-process' | 'shared' | 'unreachable' {
    if (!this.shared) return 'in-process';
    return this.reachable ? 'shared' : 'unreachable';
  }

  up(): void {
    if (this.reachable) return;
    this.reachable = true;
    this.log.info({ component: 'shared-state' }, 'shared state reachable again: rate limits are counted across instances');
  }

  down(err?: unknown): void {
    if (!this.reachable) return;
    this.reachable = false;
    const reason = err instanceof Error ? err.message : undefined;
    this.log.warn({ component: 'shared-state', reason }, 'shared state unreachable: rate limits are counted per instance until it is back; keyed requests get 503');
  }
}

export class RateWindows {
  private readonly local: InProcessSharedState;

  constructor(
    private readonly state: SharedState,
    private readonly health: SharedStateHealth,
    now?: () => number,
  ) {
    this.local = state instanceof InProcessSharedState ? state : new InProcessSharedState(now);
  }

  /**
   * Counts a hit in `key`'s fixed window of `windowMs` (core/shared-state.ts): at once when the
   * windows are this process's own, so a single instance's requests wait on no promise for it.
   */
  hit(key: string, windowMs: number): WindowCount | Promise<WindowCount> {
    return this.state === this.local ? this.local.hitNow(key, windowMs) : this.sharedHit(key, windowMs);
  }

  private async sharedHit(key: string, windowMs: number): Promise<WindowCount> {
    try {
      const count = await this.state.hit(key, windowMs);
      this.health.up();
      return count;
    } catch (err) {
      if (!(err instanceof SharedStateUnavailable)) throw err;
      this.health.down(err);
      return this.local.hitNow(key, windowMs);
    }
  }
}
