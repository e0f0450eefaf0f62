// A plan's status events as they leave the instance that derives them: each new event is handed
// to the sinks (partner webhooks) before it is published to the streams of every instance, so a
// delivery is queued durably before anyone can have seen the event.
import type { PlanStatusEvent } from '../contract/v2.js';

/** An event with whose plan it is: the key record id (`key_...`) of a keyed plan, null for a keyless one. */
export interface OwnedPlanEvent {
  readonly event: PlanStatusEvent;
  readonly partnerId: string | null;
}

/**
 * Hears every new event of every plan once, in each plan's `seq` order, on the one instance that
 * follows the ledger. Its promise settles once the event is kept durably (a webhook delivery
 * queued); it must not wait for anything outside the service. A rejection is retried with the
 * same event (the sink deduplicates by planId and seq).
 */
export interface PlanEventSink {
  accept(owned: OwnedPlanEvent): Promise<void>;
}

/** Every instance's view of new events, for the streams it serves (server-sent events). */
export interface PlanEventFeed {
  /** Calls `listener` with each new event published from now on, on any instance; returns its unsubscribe. */
  subscribe(listener: (event: PlanStatusEvent) => void): () => void;
}
