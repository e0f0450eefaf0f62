// When a failed delivery is tried again: about WEBHOOK_FIRST_RETRY_MS after its first failure,
// doubling with each further one, never more than WEBHOOK_MAX_ATTEMPT_INTERVAL_MS apart, and not
// after WEBHOOK_RETRY_FOR_MS from its queueing (or its last replay): then it is given up. Each wait
// is stretched by up to a tenth at random, so an endpoint that comes back is not sent every
// backlog at the same instant.
import type { Attempt, Delivery, DeliveryState } from './store.js';

export interface RetryPolicy {
  readonly firstRetryMs: number;
  readonly maxAttemptIntervalMs: number;
  readonly retryForMs: number;
}

/** The state and next attempt of `delivery` after `failed`, its latest attempt, failed. */
export function afterFailure(delivery: Delivery, failed: Attempt, policy: RetryPolicy, random: () => number = Math.random): { state: DeliveryState; nextAttemptAt: number | null } {
  const failures = delivery.attempts.filter((a) => a.at >= delivery.windowStartedAt).length + 1;
  const wait = Math.min(policy.firstRetryMs * 2 ** (failures - 1) * (1 + random() / 10), policy.maxAttemptIntervalMs);
  const next = failed.at + Math.round(wait);
  if (next > delivery.windowStartedAt + policy.retryForMs) return { state: 'failed', nextAttemptAt: null };
  return { state: 'pending', nextAttemptAt: next };
}
