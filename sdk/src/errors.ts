// One error type for everything the SDK refuses or the service answers outside 2xx: partners
// branch on `code`, never on a message.

/** Codes the SDK itself gives, beside the service's own (the spec's `Error.code`). */
export type SdkErrorCode =
  | 'network_error'
  | 'unreadable_response'
  | 'unsupported_api_version'
  | 'plan_expired'
  | 'plan_unverifiable'
  | 'insufficient_funds'
  | 'batching_unavailable'
  | 'signing_unavailable'
  | 'client_required'
  | 'not_signed'
  | 'venue_failed'
  | 'user_rejected'
  | 'submit_failed'
  | 'ledger_unreadable'
  | 'unknown_plan'
  | 'nothing_to_withdraw'
  | 'aborted';

export interface BestexErrorDetails {
  /** The HTTP status, for an answer of the service; null for what the SDK decided itself. */
  readonly status: number | null;
  /** The service's `code`, or one of SdkErrorCode. */
  readonly code: string;
  /** What to do about it, as the service says (`action`), when it says. */
  readonly action?: string | null | undefined;
  /** Whole seconds a 429 asks to wait (`Retry-After`). */
  readonly retryAfterSeconds?: number | null | undefined;
  readonly cause?: unknown;
}

export class BestexError extends Error {
  override readonly name = 'BestexError';
  readonly status: number | null;
  readonly code: string;
  readonly action: string | null;
  readonly retryAfterSeconds: number | null;

  constructor(message: string, details: BestexErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.code = details.code;
    this.action = details.action ?? null;
    this.retryAfterSeconds = details.retryAfterSeconds ?? null;
  }
}
