// The webhook store's port: the endpoints each partner key registered, and the durable queue of
// their deliveries with each delivery's attempts. Two adapters: embedded-store.ts (a SQLite file in
// DATA_DIR, one instance) and redis-store.ts (BullMQ over REDIS_URL, every instance). Either
// hands each due delivery to a runner (the dispatcher), at most `concurrency` at once per
// instance, and per endpoint and plan in `seq` order: a delivery waits while an earlier one of the
// same plan to the same endpoint is still pending.
import type { PlanEventType } from './messages.js';

/** Why an attempt got no answer (a status is an answer, 3xx included). */
export type AttemptError = 'timeout' | 'connection_failed' | 'dns_failed' | 'tls_failed' | 'refused_address' | 'secret_unreadable' | 'endpoint_disabled';

export interface Attempt {
  /** Unix milliseconds the attempt started. */
  readonly at: number;
  readonly status: number | null;
  readonly error: AttemptError | null;
  readonly durationMs: number;
}

/** `pending` (queued, or waiting for its next attempt), `delivered` (a 2xx), `failed` (given up). */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One event to one endpoint, with what became of each attempt. */
export interface Delivery {
  readonly endpointId: string;
  /** The key record id (`key_...`) the endpoint belongs to. */
  readonly partnerId: string;
  readonly planId: string;
  readonly seq: number;
  readonly type: PlanEventType;
  /** The envelope's JSON, signed and sent as it is on every attempt. */
  readonly body: string;
  readonly createdAt: number;
  /** When its retries started: its queueing, or its last replay; it is given up WEBHOOK_RETRY_FOR_MS after. */
  readonly windowStartedAt: number;
  readonly state: DeliveryState;
  /** When it is due; null once it is no longer pending. */
  readonly nextAttemptAt: number | null;
  /** Oldest first, the last MAX_ATTEMPTS_KEPT. */
  readonly attempts: readonly Attempt[];
}

/** An endpoint as stored: its secrets sealed (secrets.ts). */
export interface StoredEndpoint {
  readonly id: string;
  readonly partnerId: string;
  readonly url: string;
  readonly eventTypes: readonly PlanEventType[];
  readonly enabled: boolean;
  readonly createdAt: string;
  readonly secret: string;
  /** The secret a rotation replaced, still signing until `previousSecretUntil`. */
  readonly previousSecret: string | null;
  readonly previousSecretUntil: string | null;
}

/** What became of a delivery handed to the runner. */
export type Settled =
  /** Its endpoint is gone: the delivery goes with it. */
  | { readonly kind: 'dropped' }
  | { readonly kind: 'attempted'; readonly attempt: Attempt; readonly state: DeliveryState; readonly nextAttemptAt: number | null };

export interface DeliveryRunner {
  /** Makes one attempt of `delivery`; rejects with SendAborted (sender.ts) when the service is closing, leaving it due. */
  run(delivery: Delivery): Promise<Settled>;
}

export interface WebhookStore {
  /** A partner's endpoints, oldest first. */
  endpoints(partnerId: string): Promise<StoredEndpoint[]>;
  /** Adds `endpoint` unless its partner has `max` already (false then). */
  addEndpoint(endpoint: StoredEndpoint, max: number): Promise<boolean>;
  /** Replaces the endpoint of the same id and partner; false when there is none. */
  replaceEndpoint(endpoint: StoredEndpoint): Promise<boolean>;
  /** Removes the endpoint and its deliveries; false when there is none. */
  removeEndpoint(partnerId: string, endpointId: string): Promise<boolean>;
  /** Queues each delivery once, by endpoint, plan and seq (queueing one again changes nothing); resolves once they are kept durably. */
  enqueue(deliveries: readonly Delivery[]): Promise<void>;
  /** The most recent deliveries to these endpoints, newest first. */
  deliveries(endpointIds: readonly string[], limit: number): Promise<Delivery[]>;
  /** Queues the delivery again, due now, its retries counted afresh from `now`; null when it is not kept. */
  replay(endpointId: string, planId: string, seq: number, now: number): Promise<Delivery | null>;
  /** Starts handing due deliveries to `runner`. */
  start(runner: DeliveryRunner): void;
  /** Stops handing out deliveries, waits for those handed out, keeps what they did. */
  close(): Promise<void>;
}

/** How long a delivery is kept once it is no longer pending: the portal shows the recent ones. */
export const DELIVERY_RETENTION_MS = 7 * 86_400_000;

/** The attempts a delivery keeps (a day of retries is about 35). */
export const MAX_ATTEMPTS_KEPT = 60;

/** A delivery with one more attempt and what follows it. */
export function withAttempt(delivery: Delivery, settled: Extract<Settled, { kind: 'attempted' }>): Delivery {
  return { ...delivery, attempts: [...delivery.attempts, settled.attempt].slice(-MAX_ATTEMPTS_KEPT), state: settled.state, nextAttemptAt: settled.nextAttemptAt };
}
