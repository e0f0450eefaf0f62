// The usage port's implementation: a request is counted in this instance's memory (a tally), and
// the tally is added to the shared state every `flushMs` and on close, where every instance's counts
// meet. Reading sums the shared state's counts and this instance's pending ones, so an instance
// shows its own requests at once. While the shared state cannot be reached, the counts stay in
// the tally (at most `maxPendingBuckets` key-days) and go with the next flush.
//
// Counting reads no clock: a clock read costs more than the count itself (Date.now, ~60 ns, against
// ~30 for a Map lookup and increment). The day counted in is turned by a timer at each UTC
// midnight and checked again at each flush; a request answered between midnight and the timer's
// turn (the event loop's lag, milliseconds) counts in the day before.
import type { CoreLog } from '../log.js';
import type { MapIncrement, SharedState } from '../state/shared-state.js';
import { mapOf, fieldsOf, usageDay } from './stored-counts.js';
import { Tally, requestsIn, type Bucket, type BucketOf } from './tally.js';
import type { UsageDay, UsageReader, UsageRecorder } from './usage.js';
import { DAY_MS, RETENTION_MS, dayStartOf } from './utc-days.js';

/** Days a reader is shown at most: of the 8 kept, the last 7 with traffic. */
const SHOWN_DAYS = 7;

/**
 * Key-days a tally holds at most (a key's counts for one day: about 0.5 KB of heap): about 11 MB,
 * thousands of keys over the days an outage of the shared state may last.
 */
export const MAX_PENDING_BUCKETS = 20_000;

/** Maps per transaction: a flush of many keys does not hold Redis in one long transaction. */
const FLUSH_CHUNK = 500;

export interface UsageCounterOptions {
  readonly state: SharedState;
  readonly log: CoreLog;
  /**
   * How often the tally is flushed in the background; null: no timers at all, the tally is flushed
   * only when `flush` or `close` is called, and the day turned only then or by `turnDay` (tests on a
   * fake clock).
   */
  readonly flushMs: number | null;
  readonly now?: () => number;
  readonly maxPendingBuckets?: number;
  /** Runs `turn` in `ms` (default: an unref'd setTimeout); returns what cancels it. */
  readonly schedule?: (turn: () => void, ms: number) => () => void;
}

function scheduleUnref(turn: () => void, ms: number): () => void {
  const timer = setTimeout(turn, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

export class UsageCounter implements UsageRecorder, UsageReader {
  private readonly state: SharedState;
  private readonly log: CoreLog;
  private readonly now: () => number;
  private tally: Tally;
  private readonly maxPendingBuckets: number;
  /** The current day's buckets, at hand: counting a request looks up only its key. */
  private today: Map<string, Bucket>;
  private readonly schedule: ((turn: () => void, ms: number) => () => void) | null;
  private cancelTurn: () => void = () => {};
  /** Flushes and reads run one at a time: a read never sees counts that are both pending and stored. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly timer: NodeJS.Timeout | null;
  private failing = false;
  /** Requests not counted since the tally last had room; logged once per time it fills. */
  private dropped = 0;

  constructor(options: UsageCounterOptions) {
    this.state = options.state;
    this.log = options.log;
    this.now = options.now ?? Date.now;
    this.maxPendingBuckets = options.maxPendingBuckets ?? MAX_PENDING_BUCKETS;
    this.tally = new Tally(this.maxPendingBuckets);
    this.today = this.tally.day(dayStartOf(this.now()));
    this.timer = options.flushMs === null ? null : setInterval(() => void this.flush(), options.flushMs);
    this.timer?.unref();
    this.schedule = options.flushMs === null ? null : (options.schedule ?? scheduleUnref);
    this.turnDay();
  }

  record(keyId: string, operationId: string, rateLimit: string | null): void {
    const bucket = this.today.get(keyId) ?? this.tally.open(this.today, keyId);
    if (bucket === null) return this.drop(1);
    bucket.add(operationId, rateLimit);
  }

  async days(keyId: string): Promise<UsageDay[]> {
    return this.exclusive(async () => {
      const today = dayStartOf(this.now());
      const starts = Array.from({ length: RETENTION_MS / DAY_MS }, (_, i) => today - (RETENTION_MS / DAY_MS - 1 - i) * DAY_MS);
      const stored = await Promise.all(starts.map((start) => this.state.mapEntries(mapOf(keyId, start))));
      const days: UsageDay[] = [];
      starts.forEach((start, i) => {
        const day = usageDay(start, stored[i]!, this.tally.bucket(start, keyId));
        if (day) days.push(day);
      });
      return days.slice(-SHOWN_DAYS);
    });
  }

  /** Adds the pending counts to the shared state; never rejects: what could not be added stays pending. */
  flush(): Promise<void> {
    return this.exclusive(() => this.flushNow());
  }

  /** Stops the timers and flushes once more. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.cancelTurn();
    await this.flush();
  }

  /** Counts in the day the clock says from now on; with timers, again at the next UTC midnight. */
  turnDay(): void {
    const t = this.now();
    const start = dayStartOf(t);
    this.today = this.tally.day(start);
    if (this.schedule === null) return;
    this.cancelTurn();
    // A timer may fire a little early by the wall clock: it then finds the same day, and waits out the rest.
    this.cancelTurn = this.schedule(() => this.turnDay(), start + DAY_MS - t);
  }

  /** Key-days pending: counts not yet in the shared state. */
  get pending(): number {
    return this.tally.size;
  }

  private async flushNow(): Promise<void> {
    const t = this.now();
    const taken = this.tally;
    if (taken.size > 0) this.tally = new Tally(this.maxPendingBuckets);
    this.today = this.tally.day(dayStartOf(t));
    if (taken.size === 0) return;
    const buckets = [...taken].filter(({ dayStart }) => dayStart + RETENTION_MS > t);
    for (let i = 0; i < buckets.length; i += FLUSH_CHUNK) {
      const chunk = buckets.slice(i, i + FLUSH_CHUNK);
      const increments: MapIncrement[] = chunk.map(({ dayStart, keyId, bucket }) => ({ map: mapOf(keyId, dayStart), fields: fieldsOf(bucket), ttlMs: dayStart + RETENTION_MS - t }));
      try {
        await this.state.incrementMaps(increments);
      } catch (err) {
        this.keep(buckets.slice(i), err);
        return;
      }
    }
    if (this.failing) {
      this.failing = false;
      this.log.info({}, 'usage counts reach the shared state again');
    }
    if (this.dropped > 0) {
      this.log.warn({ requests: this.dropped }, 'requests went uncounted while the pending usage counts were full');
      this.dropped = 0;
    }
  }

  /** Puts a failed flush's buckets back, behind nothing: the tally counted on meanwhile. */
  private keep(buckets: readonly BucketOf[], err: unknown): void {
    for (const kept of buckets) if (!this.tally.restore(kept)) this.drop(requestsIn(kept.bucket));
    if (this.failing) return;
    this.failing = true;
    this.log.warn(
      { reason: err instanceof Error ? err.message : String(err), pending: this.tally.size },
      'usage counts could not be added to the shared state: they are kept in memory and added with the next flush',
    );
  }

  private drop(requests: number): void {
    if (this.dropped === 0) {
      this.log.warn({ maxPendingBuckets: this.maxPendingBuckets }, 'usage counts pending for as many key-days as may be: requests of other key-days are not counted until a flush makes room');
    }
    this.dropped += requests;
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.then(
      () => {},
      () => {},
    );
    return run;
  }
}
