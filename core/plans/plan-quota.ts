// Each caller's share of plan records: a client IP (its /64 for IPv6) may make PLAN_RECORDS_PER_IP
// new plans, a partner key PLAN_RECORDS_PER_KEY, within a window as long as a record is kept, so
// one caller holds at most twice that many records at any moment and cannot fill the instance's
// (or Redis's) room for everyone's. Counted in the shared state, every instance together. A
// replayed plan makes no record and is not counted; a caller over its share is refused 429
// rate_limited with the seconds until its window ends, before any venue is asked. Only plans made
// spend the share: a request counted and then not made (refused by its venue or the guardrail, over
// its share, or beaten to its record by an identical one) has its count taken back.
import { RateLimitedError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import type { RateWindows } from '../state/rate-windows.js';
import type { WindowCount, WindowHit } from '../state/shared-state.js';

export interface PlanQuotaSettings {
  readonly perIp: number;
  readonly perKey: number;
  /** The window: a record's retention. */
  readonly windowMs: number;
}

export type QuotaCaller = { readonly route: 'partner'; readonly partner: { readonly id: string } } | { readonly route: 'app'; readonly ip: string };

export class PlanQuota {
  constructor(
    private readonly windows: RateWindows,
    private readonly settings: PlanQuotaSettings,
    private readonly metrics?: Metrics,
  ) {}

  /** The window `caller`'s new plans are counted in. */
  window(caller: QuotaCaller): WindowHit {
    return caller.route === 'partner'
      ? { key: `rate:plans:key:${caller.partner.id}`, windowMs: this.settings.windowMs, max: this.settings.perKey }
      : { key: `rate:plans:ip:${caller.ip}`, windowMs: this.settings.windowMs, max: this.settings.perIp };
  }

  /** Takes back the count of a new plan `caller` was counted for and did not make. */
  async giveBack(caller: QuotaCaller): Promise<void> {
    await this.windows.unhit(this.window(caller).key);
  }

  /**
   * Counts one new plan for `caller`; throws rate_limited over its share. `counted`: the count,
   * made already with the request's other reads of the shared state (PlanService.lookup).
   */
  async admit(caller: QuotaCaller, counted?: WindowCount): Promise<void> {
    const { key, windowMs, max = Infinity } = this.window(caller);
    const { count, resetInMs } = counted ?? (await this.windows.hit(key, windowMs));
    if (count <= max) return;
    this.metrics?.rateLimited('plan-records');
    const seconds = Math.max(1, Math.ceil(resetInMs / 1000));
    throw new RateLimitedError(`this ${caller.route === 'partner' ? 'key' : 'address'} has made ${max} plans in the last ${Math.round(this.settings.windowMs / 60_000)} minutes, as many as it may; retry in ${seconds} seconds (a plan retried under its idempotencyKey is not counted)`, seconds, max);
  }
}
