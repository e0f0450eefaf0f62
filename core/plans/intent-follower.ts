// Follows the swap intents this instance made for completed intent plans (OneSwap), in memory
// only: each with the wallet token it was made with, which is never stored, so only this
// instance can read or cancel it. Every INTENT_POLL_INTERVAL_MS it reads each intent's status and
// hands it to `record` (the outcome reads it from there); an intent whose plan has expired still
// awaiting its deposit is cancelled, so nobody funds it after the plan's expiry. An intent is let
// go once terminal, once the venue no longer takes its token (its lifetime), or on close; at most
// INTENT_FOLLOW_MAX are followed at once (an intent over the bound is not followed: its status
// stays as it was made, and it lapses unfunded at its own expiry).
import type { CoreLog } from '../log.js';
import { IntentNotFound, WalletTokenRefused, type IntentRef, type IntentStatus, type IntentVenue } from '../venues/venue.js';

/** An intent to follow, with what following it needs. */
export interface FollowedIntent {
  /** What its status is recorded under (the plan's). */
  readonly key: string;
  readonly venue: IntentVenue;
  readonly ref: IntentRef;
  /** When its plan expires, in ms: an intent still awaiting its deposit after it is cancelled. */
  readonly planExpiry: number;
  /** When its wallet token ends, in ms: the intent is let go then. */
  readonly tokenExpiry: number;
}

export interface IntentFollowerOptions {
  /** How often every followed intent is read (INTENT_POLL_INTERVAL_MS). */
  readonly intervalMs: number;
  /** How many intents are followed at once at most (INTENT_FOLLOW_MAX). */
  readonly max: number;
  /** How long one venue call may take (VENUE_TIMEOUT_MS). */
  readonly timeoutMs: number;
  readonly now: () => Date;
  /** Keeps an intent's status where the outcome reads it; its failure is logged, and the intent read again next round. */
  readonly record: (key: string, status: IntentStatus) => Promise<void>;
  readonly log: CoreLog;
}

/** States after which an intent never changes. */
const TERMINAL: ReadonlySet<IntentStatus['state']> = new Set(['completed', 'refunded', 'expired', 'cancelled', 'failed']);

/** How many followed intents one round reads at once. */
const ROUND_CONCURRENCY = 16;

/** Rounds after a plan's expiry before its unfunded intent is cancelled. */
const CANCEL_GRACE_ROUNDS = 2;

export class IntentFollower {
  private readonly followed = new Map<string, FollowedIntent & { last: string | null }>();
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: IntentFollowerOptions) {}

  /** How many intents are followed now. */
  get size(): number {
    return this.followed.size;
  }

  /** Whether another intent would be followed now (follow() would take it). */
  get hasRoom(): boolean {
    return !this.closed && this.followed.size < this.options.max;
  }

  /** Follows `intent` from now on; false when the bound is reached or the follower is closed (it is not followed). */
  follow(intent: FollowedIntent): boolean {
    if (this.closed) return false;
    if (this.followed.size >= this.options.max) {
      this.options.log.warn({ venueId: intent.venue.id, followed: this.followed.size }, 'an intent is not followed: INTENT_FOLLOW_MAX intents are followed already; its outcome stays as made, and it lapses unfunded at its own expiry if its plan expires');
      return false;
    }
    this.followed.set(intent.key, { ...intent, last: null });
    this.timer ??= setInterval(() => void this.tick(), this.options.intervalMs).unref();
    return true;
  }

  /** One round over every followed intent (the timer's; a test's, on its own clock); a round already running is waited for, not doubled. */
  tick(): Promise<void> {
    this.round ??= this.readAll().then(() => {
      this.round = null;
      if (this.followed.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    });
    return this.round;
  }

  /**
   * Every followed intent read, ROUND_CONCURRENCY at a time, so a thousand of them never become a
   * thousand requests at once to the venue; the round's failures said in one line.
   */
  private async readAll(): Promise<void> {
    const intents = [...this.followed.values()];
    const failed = new Map<string, number>();
    for (let start = 0; start < intents.length; start += ROUND_CONCURRENCY) {
      const reasons = await Promise.all(intents.slice(start, start + ROUND_CONCURRENCY).map((intent) => this.read(intent)));
      for (const reason of reasons) if (reason !== null) failed.set(reason, (failed.get(reason) ?? 0) + 1);
    }
    if (failed.size > 0) this.options.log.warn({ failures: Object.fromEntries(failed) }, 'followed intents could not be read this round; they are read again next round');
  }

  /** Reads one intent; the name of the failure when it could not be read (to try again), else null. */
  private async read(intent: FollowedIntent & { last: string | null }): Promise<string | null> {
    const { venue, ref, key } = intent;
    const now = this.options.now().getTime();
    if (now >= intent.tokenExpiry) {
      this.followed.delete(key);
      return null;
    }
    try {
      let status = await venue.intentStatus(ref, this.deadline());
      // A grace after the plan's expiry: a deposit accepted just before it may not show in the venue's status yet.
      if (status.state === 'awaiting_deposit' && now >= intent.planExpiry + this.options.intervalMs * CANCEL_GRACE_ROUNDS) {
        // The plan expired unfunded: its deposit address is no one's to fund any more.
        await venue.cancelIntent(ref, this.deadline());
        status = await venue.intentStatus(ref, this.deadline());
      }
      const seen = `${status.venueStatus}\0${status.actualOutput?.toFixed() ?? ''}`;
      if (seen !== intent.last) {
        await this.options.record(key, status);
        intent.last = seen;
      }
      if (TERMINAL.has(status.state)) this.followed.delete(key);
      return null;
    } catch (err) {
      if (err instanceof WalletTokenRefused || err instanceof IntentNotFound) {
        this.followed.delete(key);
        this.options.log.warn({ venueId: venue.id, reason: err.name }, 'a followed intent can no longer be read: it is let go');
        return null;
      }
      // Its name, not its message: a venue's answer could quote what the service must not log.
      return `${venue.id}: ${err instanceof Error ? err.name : 'not an error'}`;
    }
  }

  private deadline() {
    const { timeoutMs } = this.options;
    return { signal: AbortSignal.timeout(timeoutMs), endsAt: Date.now() + timeoutMs };
  }

  /**
   * Stops following every intent (their tokens dropped), waiting for a round in progress; first,
   * each intent whose plan has expired still awaiting its deposit is cancelled: with its token gone
   * no one could, and it would block its taker's next intent until the venue's own expiry.
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.round;
    const now = this.options.now().getTime();
    const lapsed = [...this.followed.values()].filter((intent) => now >= intent.planExpiry && now < intent.tokenExpiry);
    for (let start = 0; start < lapsed.length; start += ROUND_CONCURRENCY) {
      await Promise.all(lapsed.slice(start, start + ROUND_CONCURRENCY).map((intent) => this.cancelLapsed(intent)));
    }
    this.followed.clear();
  }

  /** Cancels an intent still awaiting its deposit; a failure is logged by name and changes nothing. */
  private async cancelLapsed({ venue, ref }: FollowedIntent): Promise<void> {
    try {
      const status = await venue.intentStatus(ref, this.deadline());
      if (status.state === 'awaiting_deposit') await venue.cancelIntent(ref, this.deadline());
    } catch (err) {
      this.options.log.warn({ venueId: venue.id, reason: err instanceof Error ? err.name : 'not an error' }, 'an expired plan\'s intent could not be cancelled on close: it lapses unfunded at the venue\'s own expiry');
    }
  }
}
