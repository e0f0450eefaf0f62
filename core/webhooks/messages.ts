// What a partner's endpoint receives, as openapi/v2.yaml's `webhooks: planStatus` says it: the
// Standard Webhooks envelope of a plan's event, its id (the same on every retry and replay, so a
// receiver deduplicates by it) and its signatures, made with the `standardwebhooks` package, the
// specification's own reference implementation, so a receiver's verification is the same code.
import { Webhook } from 'standardwebhooks';
import type { PlanStatusEvent, PlanWebhook } from '../contract/v2.js';

export type PlanEventType = PlanStatusEvent['type'];

/** Every event type, in the order a plan reaches its states: what an endpoint subscribes to by default. */
export const PLAN_EVENT_TYPES = [
  'plan.awaiting_signature',
  'plan.planned',
  'plan.deposit_seen',
  'plan.completed',
  'plan.partially_completed',
  'plan.slippage_failed',
  'plan.expired',
  'plan.withdrawn',
  'plan.venue_failed',
  'plan.unobserved',
] as const satisfies readonly PlanEventType[];

// A type the contract adds and this list lacks fails the build here.
type Unlisted = Exclude<PlanEventType, (typeof PLAN_EVENT_TYPES)[number]>;
const everyTypeListed: [Unlisted] extends [never] ? true : never = true;
void everyTypeListed;

export const isPlanEventType = (value: string): value is PlanEventType => (PLAN_EVENT_TYPES as readonly string[]).includes(value);

/** `webhook-id`: one per event of a plan, whichever endpoint it goes to, however often it is sent. */
export const webhookIdOf = (planId: string, seq: number): string => `msg_${planId}_${seq}`;

/** The body sent: the envelope's JSON, fixed when the delivery is queued so every attempt signs the same bytes. */
export function webhookBody(event: PlanStatusEvent): string {
  const envelope: PlanWebhook = { type: event.type, timestamp: event.at, data: event };
  return JSON.stringify(envelope);
}

/** The three Standard Webhooks headers of one attempt; one signature per secret, space-separated (a rotation's grace period has two). */
export function signedHeaders(webhookId: string, at: Date, body: string, secrets: readonly string[]): Record<string, string> {
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(webhookId, at, body)).join(' '),
  };
}
