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

/** What the SDK reads of an HTTP answer to name its error: the platform's Response is one. */
export interface AnswerHead {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
}

/** The service's answer outside 2xx as one BestexError: its `error`, `code` and `action` (the spec's Error), and a 429's Retry-After. */
export function answerError(response: AnswerHead, body: unknown): BestexError {
  const shaped = typeof body === 'object' && body !== null ? (body as { error?: unknown; code?: unknown; action?: unknown }) : {};
  const retryAfter = response.headers.get('retry-after');
  const seconds = retryAfter !== null && /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) : null;
  return new BestexError(typeof shaped.error === 'string' ? shaped.error : `the service answered HTTP ${response.status}`, {
    status: response.status,
    code: typeof shaped.code === 'string' ? shaped.code : 'unreadable_response',
    action: typeof shaped.action === 'string' ? shaped.action : null,
    retryAfterSeconds: seconds,
  });
}

/** The error of an answer that does not say it speaks `version` (`x-service-api-version`, which the spec tells clients to check); null when it does. */
export function versionError(response: AnswerHead, version: string): BestexError | null {
  const said = response.headers.get('x-service-api-version');
  if (said === version) return null;
  return new BestexError(`the service speaks API version ${said ?? '(none said)'}; this client speaks ${version}`, { status: response.status, code: 'unsupported_api_version' });
}
