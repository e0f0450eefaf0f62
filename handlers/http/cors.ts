// Browsers: every answer of the API (and the SDK's scripts, and the spec) may be read by a page of
// any origin, and a preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered
// 204. Keyless reads are public and cacheable; a keyed request is held to its key's origins where
// it is verified (handlers/http/credentials.ts), which no CORS header could do: a page that is
// refused there still reads why (401 invalid_key). The headers a browser client needs to see are
// exposed: Retry-After and X-RateLimit-* (to wait), x-service-* (the contract asks clients to
// check the API version), x-request-id (to quote to support). An OPTIONS that is no preflight is
// routed like any other request: 405 in the contract's error shape.
//
// Two fixed headers on the cross-origin paths, written by the app's one onRequest hook
// (handlers/app.ts): @fastify/cors, which wrote them before, normalised its options for every
// request when they depend on the path (a delegator), which cost a cached quote ~7 % of its CPU.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { originForm } from './request-target.js';

const METHODS = 'GET, POST';
const ALLOWED_HEADERS = 'content-type, x-api-key, authorization';
const EXPOSED_HEADERS = 'retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-service-api-version, x-service-build, x-request-id';
/** How long a browser may reuse a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE_S = '600';

/** The API and the SDK's scripts are for any page; the demo page (it holds the sandbox's token) is not. */
const crossOrigin = (target: string) => {
  const url = originForm(target);
  return url.startsWith('/api/') || url.startsWith('/sdk/') || url.startsWith('/openapi/');
};

/** The CORS headers of an answer to `url` that is no preflight's. */
export const crossOriginHeaders = (url: string): Record<string, string> =>
  crossOrigin(url) ? { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS } : {};

/**
 * The CORS headers of `request`'s answer; true when that answer is a preflight's, sent here: it
 * runs before routing, so a preflight is never counted, verified or logged as a refusal.
 */
export function answerCors(request: FastifyRequest, reply: FastifyReply): boolean {
  if (!crossOrigin(request.url)) return false;
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-expose-headers', EXPOSED_HEADERS);
  if (request.method !== 'OPTIONS' || request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined) return false;
  reply
    .code(204)
    .headers({ 'access-control-allow-methods': METHODS, 'access-control-allow-headers': ALLOWED_HEADERS, 'access-control-max-age': PREFLIGHT_MAX_AGE_S })
    .send();
  return true;
}
