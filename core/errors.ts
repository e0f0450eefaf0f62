// The one domain error type. Core throws these with a stable code; the HTTP layer maps each code
// to a status and an action in one catalogue (handlers/http/error-catalogue.ts).

export const DOMAIN_ERROR_CODES = [
  'bad_request',
  'unknown_token',
  'missing_key',
  'bad_party',
  'bad_fee_params',
  'no_pool',
  'bad_signature',
  'invalid_key',
  'plan_not_found',
  'not_found',
  'unsupported_pair',
  'venue_unavailable',
  'venue_not_executable',
  'split_changed',
  'idempotency_conflict',
  'plan_expired',
  'rate_limited',
  'guardrail',
  'internal',
  'quote_failed',
  'venue_floor_below_service',
  'key_verification_unavailable',
  'fee_unconfigured',
  'at_capacity',
  'ledger_unavailable',
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** 429 rate_limited from a limit the core counts: the limit's size goes with it, as the contract's X-RateLimit-Limit (none remaining). */
export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    retryAfterSeconds: number,
    readonly limit: number,
  ) {
    super('rate_limited', message, retryAfterSeconds);
  }
}

export const badRequest = (message: string): DomainError => new DomainError('bad_request', message);
