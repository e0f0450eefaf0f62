// The in-process shared state's bounds: how many idempotency records and rate-limit windows this
// process's memory may hold (STATE_MAX_PLAN_RECORDS, STATE_MAX_RATE_WINDOWS), and the one place a
// refusal at a bound is counted and logged. Without them, callers from enough addresses could hold
// the process's memory for the records' 5-minute retention (about 1.5 KB of heap per keyless plan record, bench/record-memory.ts measures it).
import type { CoreLog } from '../log.js';

/** What the in-process state bounds: plan (idempotency) records, and rate-limit windows. */
export type BoundedEntries = 'plan-records' | 'rate-windows';

export interface StateLimits {
  readonly maxPlanRecords: number;
  readonly maxRateWindows: number;
}

/**
 * Below this share of its bound, a bound that refused counts as having room again, so a map that
 * hovers at its bound (one entry expiring, one refused) is not logged per request.
 */
const ROOM_AGAIN_SHARE = 0.9;

const FULL_MESSAGES: Readonly<Record<BoundedEntries, string>> = {
  'plan-records': 'the in-process shared state holds STATE_MAX_PLAN_RECORDS idempotency records: new plans are refused (503 at_capacity with Retry-After) until older records expire; replays still answer',
  'rate-windows': 'the in-process shared state holds STATE_MAX_RATE_WINDOWS rate-limit windows: callers without a window are refused (429) until older windows end',
};

export class StateCapacity {
  private readonly counts: Record<BoundedEntries, number> = { 'plan-records': 0, 'rate-windows': 0 };
  private readonly full = new Set<BoundedEntries>();

  constructor(
    readonly limits: StateLimits,
    private readonly log?: CoreLog,
  ) {}

  max(bounded: BoundedEntries): number {
    return bounded === 'plan-records' ? this.limits.maxPlanRecords : this.limits.maxRateWindows;
  }

  /** Whether `bounded` refused an entry and has not had room again since: a bound that is biting. */
  isFull(bounded: BoundedEntries): boolean {
    return this.full.has(bounded);
  }

  /** Entries refused at `bounded`'s bound since start. */
  refusals(bounded: BoundedEntries): number {
    return this.counts[bounded];
  }

  /**
   * A new entry refused at its bound. The one place such a refusal is counted (a metrics counter
   * belongs here); logged once each time the bound fills, never per refusal.
   */
  refused(bounded: BoundedEntries): void {
    this.counts[bounded] += 1;
    if (this.full.has(bounded)) return;
    this.full.add(bounded);
    this.log?.warn({ bound: bounded, max: this.max(bounded) }, FULL_MESSAGES[bounded]);
  }

  /** The number of entries after one was added: a bound that refused has room again well below it. */
  held(bounded: BoundedEntries, size: number): void {
    if (!this.full.has(bounded) || size >= this.max(bounded) * ROOM_AGAIN_SHARE) return;
    this.full.delete(bounded);
    this.log?.info({ bound: bounded, held: size }, `the in-process shared state has room for ${bounded} again`);
  }
}
