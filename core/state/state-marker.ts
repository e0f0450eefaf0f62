// Whether the shared state still holds what it held: a marker written when the service starts
// (unless an instance wrote it first: then that one's is kept). One that is gone, or another (an
// instance started after the loss wrote its own), is a loss. A Redis that restarted without
// persistence, or was flushed, or evicted it, no longer has it, and with it went every partner
// key, idempotency record and rate window. That is said once, in an error line, and the state
// reads `lost` from then on (in the status and its metric), for this instance's life: what was
// lost is not back because the store answers again, and an operator must restore the keys.
//
// The marker is read with every request's work (SharedState.watchMarker: in the same script or
// transaction, no round trip of its own), so the first request that reaches the store after the
// loss notices it, and its work is answered as during an outage. Leased windows reach no store:
// `confirmedRecently` tells them when a second has passed since the marker was last read, so
// that, under any traffic, some request reaches it within about a second. Without traffic it is
// read at every check (the probe interval).
import { randomUUID } from 'node:crypto';
import type { CoreLog } from '../log.js';
import type { SharedState } from './shared-state.js';

/** The map and field of the marker: a map, so it has no expiry. */
const MAP = 'state';
const FIELD = 'marker';

/** How long a marker read is trusted for leased windows, which reach no store. */
export const CONFIRMED_FOR_MS = 1000;

export class StateMarker {
  /** The marker the store held when this instance first wrote or read it; null until then. */
  private known: string | null = null;
  private lostAt: string | null = null;
  /** When the marker was last read as known, on `clock`. */
  private confirmedAt = Number.NEGATIVE_INFINITY;
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking: Promise<void> | null = null;

  constructor(
    private readonly state: SharedState,
    private readonly log: CoreLog,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Whether the store lost the marker since this instance wrote or first read it. */
  get lost(): boolean {
    return this.lostAt !== null;
  }

  /**
   * Whether work that reaches no store may go on trusting it: the marker was read as known less
   * than CONFIRMED_FOR_MS ago, or the loss is already known (nothing more to notice).
   */
  confirmedRecently(): boolean {
    return this.lostAt !== null || this.clock() - this.confirmedAt < CONFIRMED_FOR_MS;
  }

  /** Writes the marker (a store that does not answer now is tried again at the next check), then checks every `everyMs`. */
  async start(everyMs: number): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), everyMs);
    this.timer.unref();
  }

  /** One check: writes the marker until it is written, then reads it. Never rejects: a store that does not answer says nothing of its data, and is tried at the next. */
  check(): Promise<void> {
    this.checking ??= this.checkOnce().finally(() => (this.checking = null));
    return this.checking;
  }

  /**
   * Judges the marker as read with a request's work (SharedState.watchMarker): false only for the
   * read that shows the loss first, whose work is then answered as during an outage. Once the loss
   * is known, the store is what it is now, and work on it goes on (keyed requests find no keys).
   */
  private readonly seen = (value: string | null): boolean => {
    if (this.lostAt !== null) return true;
    if (value === this.known) {
      this.confirmedAt = this.clock();
      return true;
    }
    this.noticeLoss();
    return false;
  };

  private async checkOnce(): Promise<void> {
    if (this.lostAt !== null) return;
    try {
      if (this.known === null) {
        await this.state.mapSetIfAbsent(MAP, FIELD, `${new Date(this.clock()).toISOString()} ${randomUUID()}`);
        const known = await this.state.mapGet(MAP, FIELD);
        // Flushed between the write and the read: written again at the next check.
        if (known === null) return;
        this.known = known;
        this.confirmedAt = this.clock();
        this.state.watchMarker?.(MAP, FIELD, this.seen);
        return;
      }
      this.seen(await this.state.mapGet(MAP, FIELD));
    } catch {
      // Unanswered: the guard already reads the store unreachable; its data is checked when it answers.
    }
  }

  private noticeLoss(): void {
    this.lostAt = new Date(this.clock()).toISOString();
    this.log.error(
      { since: this.lostAt },
      "the shared state lost its data (its marker is gone or another instance's: a Redis restarted without persistence, flushed, or evicting): partner keys, idempotency records and rate windows are gone; keyed requests get 503 until the keys are restored, and this instance reads shared-state lost until it restarts",
    );
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
  }
}
