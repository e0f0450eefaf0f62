// What the service counts for its operators: one port with a method per event, so the core says
// what happened and knows nothing of how it is exposed (the Prometheus adapter is at the edge,
// handlers/http/prometheus-metrics.ts). Every argument is from a closed set (a venue id from the
// configuration, a code from the spec's enums): nothing a caller sends, never a party or a key.
import type { OutcomeStatus, RejectionCode } from './contract/v1.js';

/** Which rate limit refused a request with 429 (the names the access line's `rateLimit` uses). */
export type RateLimitName = 'keyless-window' | 'keyed-window' | 'fresh-quote-budget' | 'keyed-fresh-quote-budget' | 'plan-records';

/** A presented key's verification: a partner's, none (malformed, unknown or revoked), not from an origin the key allows, or the store unreadable. */
export type KeyVerificationResult = 'valid' | 'invalid' | 'wrong_origin' | 'unavailable';

/** A plan's route, as core/plans/params.ts names it (not imported from there: the plans import this port). */
export type PlanRoute = 'app' | 'partner';

/** What a plan request came to: a new plan, the plan made before under its idempotencyKey, or a conflict with another request's. */
export type PlanResult = 'created' | 'replayed' | 'conflict';

/** A v2 plan at its terminal state, as the follower read it: no party, no key, no plan id. */
export interface EndedSwap {
  /** The plan's state (the spec's PlanState). */
  readonly outcome: string;
  /** Each leg's venue (of the configuration) and state. */
  readonly legs: ReadonlyArray<{ readonly venueId: string; readonly state: string }>;
  /** The give and want tokens' registry names, with what the paid legs gave and received (Decimal text). */
  readonly give: string;
  readonly given: string;
  readonly want: string;
  readonly received: string;
}

export interface Metrics {
  /** A base quote read from a cache (this instance's, the shared one, or a computation in flight). */
  quoteCacheHit(): void;
  /** A base quote this request started computing. */
  quoteCacheMiss(): void;
  /**
   * One venue's part in a computed quote: `available`, or its rejectionCode; `seconds` from the
   * quote's start to its answer (to the deadline for a timeout), null when it was not asked
   * (its probe reads it down).
   */
  venueQuote(venueId: string, result: 'available' | RejectionCode, seconds: number | null): void;
  /** A request refused with 429 by `limit`. */
  rateLimited(limit: RateLimitName): void;
  plan(route: PlanRoute, result: PlanResult): void;
  /** A plan refused because this process's in-memory state is at its memory cap. */
  planRefusedAtStateCap(): void;
  /** A plan the party-isolation guardrail stopped. */
  guardrailTrip(route: PlanRoute): void;
  keyVerification(result: KeyVerificationResult): void;
  /** An outcome answered, by its status. */
  outcome(status: OutcomeStatus): void;
  /** A v2 plan reached its terminal state (counted once, by the instance that follows the ledger). */
  swapEnded(swap: EndedSwap): void;
}

const nothing = (): void => {};

/** Counts nothing: the metrics listener is off (METRICS_PORT unset). */
export const NO_METRICS: Metrics = Object.freeze({
  quoteCacheHit: nothing,
  quoteCacheMiss: nothing,
  venueQuote: nothing,
  rateLimited: nothing,
  plan: nothing,
  planRefusedAtStateCap: nothing,
  guardrailTrip: nothing,
  keyVerification: nothing,
  outcome: nothing,
  swapEnded: nothing,
});
