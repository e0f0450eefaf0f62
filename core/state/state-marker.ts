// Whether the shared state still holds what it held: a marker written when the service starts
// (unless an instance wrote it first: then that one's is kept) and read again every check; one
// that is gone, or another (an instance started after the loss wrote its own), is a loss. A Redis that restarted without
// persistence, or was flushed, or evicted it, no longer has it, and with it went every partner
// key, idempotency record and rate window. That is said once, in an error line, and the state
// reads `lost` from then on (in the status and its metric), for this instance's life: what was
// lost is not back because the store answers again, and an operator must restore the keys.
import { randomUUID } from 'node:crypto';
import type { CoreLog } from '../log.js';
import type { SharedState } from './shared-state.js';

/** The map and field of the marker: a map, so it has no expiry. */
const MAP = 'state';
const FIELD = 'marker';

export class StateMarker {
  /** The marker the store held when this instance first wrote or read it; null until then. */
  private known: string | null = null;
  private lostAt: string | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking: Promise<void> | null = null;

  constructor(
    private readonly state: SharedState,
    private readonly log: CoreLog,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Whether the store lost the marker since this instance wrote or first read it. */
  get lost(): boolean {
    return this.lostAt !== null;
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

  private async checkOnce(): Promise<void> {
    if (this.lostAt !== null) return;
    try {
      if (this.known === null) {
        await this.state.mapSetIfAbsent(MAP, FIELD, `${this.now().toISOString()} ${randomUUID()}`);
        this.known = await this.state.mapGet(MAP, FIELD);
        return;
      }
      if ((await this.state.mapGet(MAP, FIELD)) === this.known) return;
      this.lostAt = this.now().toISOString();
      this.log.error(
        { since: this.lostAt },
        'the shared state lost its data (its marker is gone: a Redis restarted without persistence, flushed, or evicting): partner keys, idempotency records and rate windows are gone; keyed requests get 503 until the keys are restored, and this instance reads shared-state lost until it restarts',
      );
    } catch {
      // Unanswered: the guard already reads the store unreachable; its data is checked when it answers.
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
  }
}
