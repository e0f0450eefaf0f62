// What a handler is: read the validated request, call one core function, shape the response.
import type { Partner } from '../../core/keys/partner-keys.js';
import type { QuoteCounts } from '../../core/quotes/service.js';
import type { AccessLogFields } from './access-log.js';
import type { FieldCodes } from './validation-error.js';

export interface OperationContext<Query = unknown, Body = unknown> {
  /** Schema-valid once `handle` runs; raw in `guard`. */
  readonly query: Query;
  readonly body: Body;
  readonly partner: Partner | null;
  /** The client's IP (behind TRUST_PROXY, the address the outermost proxy saw); resolved when asked. */
  clientIp(): string;
  /** The scheme and host the request was sent to (`http://127.0.0.1:8080`), as the client named them (Host): for text shown back to that client, never for a decision. */
  baseUrl(): string;
  /** A request header the operation's spec names (lower-case name), as sent once; undefined when absent. */
  header(name: string): string | undefined;
  /** Adds fields to this request's access-log line. */
  annotate(fields: AccessLogFields): void;
  /** Counts a keyless fresh quote (a cache miss) in its caller's budget; throws (or, with shared windows, rejects) rate_limited over it. */
  spendFreshQuote(): void | Promise<void>;
  /**
   * Where the windows are shared (Redis) and the handler counts the request itself
   * (`countsWithReads`): its count in its caller's window and its fresh-quote budget, not made
   * yet, for the core to make in the round trip of the request's first shared-state read. What
   * the handler did not count when it fails, the route counts. Undefined otherwise: the route
   * counted the request before the handler ran.
   */
  readonly counts?: QuoteCounts;
}

export interface OperationResult {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** A JSON-serialisable body, the exact JSON text to send (with its content-type in headers), or a stream to pipe (server-sent events). */
  readonly body: unknown;
}

export interface OperationHandler<Query = unknown, Body = unknown> {
  /**
   * The operation's validated queries may be kept by URL, so a repeated request skips validation
   * (handlers/http/validated-queries.ts). Only for queries that hold nothing the service must not
   * keep beyond the request, such as the party of an outcome query.
   */
  readonly rememberQueries?: boolean;
  /** Query parameters or body fields whose validation failures have their own code (default: bad_request). */
  readonly fieldCodes?: FieldCodes;
  /** Rules that must answer before schema validation (for example, key-only parameters). */
  guard?(context: OperationContext<Record<string, unknown>, unknown>): void;
  /**
   * The stored answer to this very request (an idempotent replay), or null: looked up once the
   * request is valid and before it is counted in a rate-limit window, so a replay is never counted
   * and carries no rate-limit headers. Only for operations that document a 429.
   */
  /** The handler makes the request's counts itself when the route gives it `counts`. */
  readonly countsWithReads?: boolean;
  replay?(context: OperationContext<Query, Body>): Promise<OperationResult | null>;
  handle(context: OperationContext<Query, Body>): Promise<OperationResult> | OperationResult;
}

/** An operation the spec describes and this build does not serve yet: it answers 501. */
export const NOT_IMPLEMENTED = Symbol('not implemented');

export type HandlerMap = Record<string, OperationHandler<never, never> | typeof NOT_IMPLEMENTED>;

export const JSON_TEXT = 'application/json; charset=utf-8';

export const json = (status: number, body: unknown, cacheControl: string): OperationResult => ({
  status,
  headers: { 'cache-control': cacheControl },
  body,
});
