// Every error code the service answers with, its HTTP status and the caller's next action: the
// one place a code meets HTTP. openapi/v2.yaml documents the same table; openapi/v1.yaml all of it
// but the codes v2 added (V2_ONLY_ERROR_CODES), which a v1 operation never answers.
import type { DomainErrorCode } from '../../core/errors.js';

export type HttpOnlyErrorCode = 'method_not_allowed' | 'request_timeout' | 'payload_too_large' | 'uri_too_long' | 'headers_too_large' | 'not_implemented';
export type ErrorCode = DomainErrorCode | HttpOnlyErrorCode;

export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, { readonly status: number; readonly action: string }>> = {
  bad_request: { status: 400, action: 'fix the request per the message' },
  unknown_token: { status: 400, action: 'use a supported symbol' },
  missing_key: { status: 400, action: 'obtain a key, send as x-api-key' },
  bad_party: { status: 400, action: 'send a ledger party id <hint>::1220<64 hex>' },
  bad_fee_params: { status: 400, action: 'fix the fee params' },
  no_pool: { status: 400, action: 're-quote a supported pair' },
  bad_signature: { status: 400, action: 'make a new plan with a new idempotencyKey and sign its message' },
  invalid_key: { status: 401, action: 'check the key' },
  plan_not_found: { status: 404, action: 'make a new plan' },
  not_found: { status: 404, action: 'see /docs (or /openapi/v1.json, /openapi/v1.yaml) for the paths' },
  method_not_allowed: { status: 405, action: 'use a method from the Allow header' },
  request_timeout: { status: 408, action: 'send the whole request promptly' },
  payload_too_large: { status: 413, action: 'send a smaller body' },
  uri_too_long: { status: 414, action: 'send a shorter URL' },
  headers_too_large: { status: 431, action: 'send fewer or smaller headers' },
  unsupported_pair: { status: 409, action: 're-quote a supported pair' },
  venue_unavailable: { status: 409, action: 're-quote and choose an available venue' },
  venue_not_executable: { status: 409, action: 'choose a venue whose execution.executable is true in the quote' },
  split_changed: { status: 409, action: "re-quote and plan the quote's split, or its bestExecutable venue" },
  idempotency_conflict: { status: 409, action: 'send a new idempotencyKey' },
  plan_expired: { status: 409, action: 'make a new plan with a new idempotencyKey' },
  rate_limited: { status: 429, action: 'back off until Retry-After' },
  guardrail: { status: 500, action: 'contact support' },
  internal: { status: 500, action: 'retry' },
  ledger_unavailable: { status: 500, action: 'retry' },
  not_implemented: { status: 501, action: 'use a method and an operation this spec defines' },
  quote_failed: { status: 502, action: 'retry' },
  venue_floor_below_service: { status: 502, action: 're-quote and plan again' },
  key_verification_unavailable: { status: 503, action: 'retry after Retry-After' },
  fee_unconfigured: { status: 503, action: 'retry later' },
  at_capacity: { status: 503, action: 'retry after Retry-After' },
};

/** not_found's action on a path under /api/v2/: v2's own contract, where the catalogue's names v1's. */
export const V2_NOT_FOUND_ACTION = 'see /docs (or /openapi/v2.json, /openapi/v2.yaml) for the paths';

/** The codes only v2 operations answer: v1's contract, frozen, does not list them. */
export const V2_ONLY_ERROR_CODES: readonly ErrorCode[] = ['venue_not_executable', 'venue_floor_below_service', 'bad_signature', 'plan_not_found', 'plan_expired', 'split_changed'];
