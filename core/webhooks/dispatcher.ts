// Partner webhooks: the plan event sink (core/plan-status/events.ts) that queues one delivery of a
// keyed plan's event for each enabled endpoint of its partner that hears its type, and the runner
// that makes each attempt: signed (messages.ts), sent (sender.ts), retried by the policy
// (retry.ts). Queueing is all the sink waits for; sending happens in the background, a bounded
// number at once, so the plans' path never waits on a partner's server. What the portal does
// with endpoints is `endpoints`; their deliveries and replays are here.
import { DomainError } from '../errors.js';
import type { CoreLog } from '../log.js';
import type { OwnedPlanEvent, PlanEventSink } from '../plan-status/events.js';
import type { WebhookEndpoints } from './endpoints.js';
import { signedHeaders, webhookBody, webhookIdOf } from './messages.js';
import { afterFailure, type RetryPolicy } from './retry.js';
import type { WebhookSender } from './sender.js';
import type { Delivery, DeliveryRunner, Settled, WebhookStore } from './store.js';

/** The deliveries the portal lists, newest first. */
export const RECENT_DELIVERIES = 50;

const WEBHOOK_ID = /^msg_(pl_[A-Za-z0-9_-]{22})_([0-9]{1,3})$/;

export interface DispatcherOptions {
  readonly store: WebhookStore;
  readonly endpoints: WebhookEndpoints;
  readonly sender: WebhookSender;
  readonly policy: RetryPolicy;
  readonly now: () => Date;
  readonly log: CoreLog;
}

export class WebhookDispatcher implements PlanEventSink, DeliveryRunner {
  readonly endpoints: WebhookEndpoints;
  private readonly closing = new AbortController();

  constructor(private readonly options: DispatcherOptions) {
    this.endpoints = options.endpoints;
  }

  /** What the plan status store hands each new event to. */
  get sink(): PlanEventSink {
    return this;
  }

  /** Queues the event for each of its partner's endpoints that hear it; a keyless plan's event has no partner and goes nowhere. */
  async accept({ event, partnerId }: OwnedPlanEvent): Promise<void> {
    if (partnerId === null) return;
    const endpoints = await this.endpoints.subscribed(partnerId, event.type);
    if (endpoints.length === 0) return;
    const body = webhookBody(event);
    const now = this.options.now().getTime();
    await this.options.store.enqueue(
      endpoints.map((endpoint) => ({
        endpointId: endpoint.id,
        partnerId,
        planId: event.planId,
        seq: event.seq,
        type: event.type,
        body,
        createdAt: now,
        windowStartedAt: now,
        state: 'pending',
        nextAttemptAt: now,
        attempts: [],
      })),
    );
  }

  /** One attempt of a due delivery, as the store hands it over. */
  async run(delivery: Delivery): Promise<Settled> {
    const { endpoints, sender, now, log } = this.options;
    const endpoint = (await this.options.store.endpoints(delivery.partnerId)).find((e) => e.id === delivery.endpointId);
    if (!endpoint) return { kind: 'dropped' };
    const at = now();
    const webhookId = webhookIdOf(delivery.planId, delivery.seq);
    // A disabled endpoint is sent nothing: what was queued for it ends unsent, and can be replayed once it is enabled again.
    if (!endpoint.enabled) return { kind: 'attempted', attempt: { at: at.getTime(), status: null, error: 'endpoint_disabled', durationMs: 0 }, state: 'failed', nextAttemptAt: null };
    const secrets = endpoints.signingSecrets(endpoint, at);
    const sent =
      secrets.length === 0
        ? { status: null, error: 'secret_unreadable' as const, durationMs: 0 }
        : await sender.send(endpoint.url, signedHeaders(webhookId, at, delivery.body, secrets), delivery.body, this.closing.signal);
    const attempt = { at: at.getTime(), ...sent };
    if (sent.status !== null && sent.status >= 200 && sent.status < 300) return { kind: 'attempted', attempt, state: 'delivered', nextAttemptAt: null };
    if (sent.error === 'secret_unreadable') log.warn({ keyId: delivery.partnerId, endpointId: endpoint.id }, 'webhook endpoint secret does not open under this IDEMPOTENCY_SECRET: its deliveries cannot be signed until it is rotated');
    const next = afterFailure(delivery, attempt, this.options.policy);
    if (next.state === 'failed') {
      log.warn({ keyId: delivery.partnerId, endpointId: endpoint.id, webhookId, attempts: delivery.attempts.length + 1 }, 'webhook delivery given up');
    }
    return { kind: 'attempted', attempt, ...next };
  }

  /** The most recent deliveries to the partner's endpoint `endpointId`, or to all its endpoints; not_found for an endpoint it does not have. */
  async deliveries(partnerId: string, endpointId: string | null): Promise<Delivery[]> {
    const ids = endpointId === null ? (await this.options.store.endpoints(partnerId)).map((e) => e.id) : [(await this.endpoints.owned(partnerId, endpointId)).id];
    return ids.length === 0 ? [] : this.options.store.deliveries(ids, RECENT_DELIVERIES);
  }

  /** Queues a delivery again, due now, with the same webhook-id; bad_request for a disabled endpoint, not_found for one it does not have or a delivery no longer kept. */
  async replay(partnerId: string, endpointId: string, webhookId: string): Promise<Delivery> {
    const endpoint = await this.endpoints.owned(partnerId, endpointId);
    if (!endpoint.enabled) throw new DomainError('bad_request', 'the endpoint is disabled: enable it before replaying its deliveries');
    const match = WEBHOOK_ID.exec(webhookId);
    const replayed = match ? await this.options.store.replay(endpoint.id, match[1]!, Number(match[2]), this.options.now().getTime()) : null;
    if (!replayed) throw new DomainError('not_found', `the endpoint has no delivery ${webhookId} kept (deliveries are kept 7 days)`);
    this.options.log.info({ keyId: partnerId, endpointId, webhookId, portalAction: 'webhook-replayed' }, 'portal: webhook delivery replayed');
    return replayed;
  }

  /** Cuts short the attempts in flight (they stay due, and are sent again), then closes the store and the sender. */
  async close(): Promise<void> {
    this.closing.abort();
    await this.options.store.close();
    await this.options.sender.close();
  }
}
