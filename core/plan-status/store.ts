// The plan status store port: every v2 plan followed, its events in order, kept for the
// retention after its last change, and the one lease that lets a single instance follow the
// ledger. Two adapters: SQLite in the data folder for one instance (sqlite-store.ts), Redis
// for several (redis-store.ts).
import type { PlanStatusEvent } from '../contract/v2.js';
import type { PlanEventFeed } from './events.js';
import type { TrackedPlan } from './status.js';
import type { TradeStore } from './trade-store.js';

export interface PlanStatusStore extends PlanEventFeed {
  /** Whether other instances share it (then the follower holds the lease). */
  readonly shared: boolean;
  /** The partners' trade ledger, kept beside the plans. */
  readonly trades: TradeStore;
  /** Settles once the feed hears every event published from then on (Redis subscribes over the network). */
  listening(): Promise<void>;
  /** Keeps a new plan, whose first event is `firstEvent(plan)` (a store may derive it again rather than keep it); false when a plan of that id is already kept (its replay). */
  add(plan: TrackedPlan): Promise<boolean>;
  /** Replaces what is kept of a plan (its legs, once its message is signed). */
  update(plan: TrackedPlan): Promise<void>;
  plan(planId: string): Promise<TrackedPlan | null>;
  /** The plan's events after `afterSeq`, in order, its first included. */
  events(planId: string, afterSeq: number): Promise<PlanStatusEvent[]>;
  /** Appends the plan's next event (seq one more than the last) and publishes it; false when that seq is kept already. */
  append(event: PlanStatusEvent, terminal: boolean): Promise<boolean>;
  /**
   * The live plans added or changed since `after` (a cursor this call answered before), or, when
   * `after` is null or too old to answer from, every live plan (`full`). The follower's one read of
   * what is new: proportional to change, not to the plans kept.
   */
  changes(after: string | null): Promise<PlanChanges>;
  /** Holds (or renews) the follower's lease for `holder`; true while it is this holder's. */
  lease(holder: string, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface PlanChanges {
  readonly plans: TrackedPlan[];
  /** What to pass as `after` next time. */
  readonly cursor: string;
  /** Every live plan, not only those changed: a plan not among them is no longer live. */
  readonly full: boolean;
}

/** Listeners of a feed, each called once per event, one failing listener never stopping the rest. */
export class Listeners {
  private readonly listeners = new Set<(event: PlanStatusEvent) => void>();

  subscribe(listener: (event: PlanStatusEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: PlanStatusEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A stream that cannot take an event closes itself; the others still get it.
      }
    }
  }

  get size(): number {
    return this.listeners.size;
  }
}
