// How long a plan stays valid: a term the API publishes (openapi/v1.yaml: a plan expires 90 seconds
// after it is made), so the service that makes plans and a client that reads them back share it,
// as they share the tokens and decimals.

/** How long a plan, and its deposit offer, stays valid. */
export const PLAN_VALIDITY_MS = 90_000;
