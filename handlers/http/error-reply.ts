// Shapes every failure into the spec's error body {error, code, action}. Nothing from a stack,
// a framework message or a secret reaches a body: unknown failures become a generic 500.
import type { FastifyReply } from 'fastify';
import { DomainError, RateLimitedError } from '../../core/errors.js';
import { ERROR_CATALOGUE, type ErrorCode } from './error-catalogue.js';

export interface ErrorReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: { error: string; code: ErrorCode; action: string };
}

/** Sends the error, and puts its code on the request's access-log line. */
export function sendError(reply: FastifyReply, shaped: ErrorReply): FastifyReply {
  (reply.request.logFields ??= {}).code = shaped.body.code;
  return reply.code(shaped.status).headers(shaped.headers).send(shaped.body);
}

/** The contract's bound on `error` (Error.error's maxLength): a message may quote the request, which can be long. */
export const MAX_MESSAGE_LENGTH = 1000;

const bounded = (message: string): string => (message.length <= MAX_MESSAGE_LENGTH ? message : `${message.slice(0, MAX_MESSAGE_LENGTH - 3)}...`);

export function errorReply(code: ErrorCode, message: string, headers: Record<string, string> = {}): ErrorReply {
  const { status, action } = ERROR_CATALOGUE[code];
  return { status, headers: { 'cache-control': 'no-store', ...headers }, body: { error: bounded(message), code, action } };
}

// fastify's own request errors, by code, in the caller's terms.
const FRAMEWORK_ERRORS: Readonly<Record<string, string>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'the request body must be JSON (Content-Type: application/json)',
  // A method that carries a body by definition (QUERY) sent without a Content-Type, on any path.
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: 'the request body must be JSON (Content-Type: application/json)',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'the request body does not match its Content-Length',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the request body is empty; send a JSON object',
  FST_ERR_CTP_INVALID_JSON_BODY: 'the request body is not valid JSON',
  FST_ERR_BAD_URL: 'the request URL is malformed',
  FST_ERR_ASYNC_CONSTRAINT: 'the request could not be routed',
};

/** The reply for any failure the caller cannot act on: nothing about it leaves the server. */
export const internalErrorReply = (): ErrorReply => errorReply('internal', 'internal error; nothing was created');

/** The reply for a thrown error, and whether it is unexpected (to be logged with its stack). */
export function replyForError(err: unknown): { reply: ErrorReply; unexpected: boolean } {
  if (err instanceof DomainError) {
    const headers: Record<string, string> = err.retryAfterSeconds === undefined ? {} : { 'retry-after': String(err.retryAfterSeconds) };
    if (err instanceof RateLimitedError) Object.assign(headers, { 'x-ratelimit-limit': String(err.limit), 'x-ratelimit-remaining': '0' });
    return { reply: errorReply(err.code, err.message, headers), unexpected: false };
  }
  const e = err as { code?: unknown; statusCode?: unknown; name?: unknown };
  const known = typeof e.code === 'string' && Object.hasOwn(FRAMEWORK_ERRORS, e.code) ? FRAMEWORK_ERRORS[e.code] : undefined;
  if (known) return { reply: errorReply('bad_request', known), unexpected: false };
  // The connection closes after it: what is left of the body is not read (handlers/http/body-drain.ts).
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { reply: errorReply('payload_too_large', 'the request body is over the 16 KB limit; nothing was read past it', { connection: 'close' }), unexpected: false };
  // JSON.parse failures from the body parser carry statusCode 400 and no fastify code.
  if (e.statusCode === 400 && e.name === 'SyntaxError') {
    return { reply: errorReply('bad_request', FRAMEWORK_ERRORS.FST_ERR_CTP_INVALID_JSON_BODY!), unexpected: false };
  }
  return { reply: internalErrorReply(), unexpected: true };
}
