// The key portal's answers are first-party only and hold keys: no page of another origin may read
// them (no Access-Control-Allow-Origin: handlers/http/cors.ts leaves /portal out), frame them or
// keep them. These headers go on every answer under /portal, errors and 404s included, from the
// app's one onRequest hook; a page of the portal's own (its HTML) may set a CSP that allows its
// own assets instead.
import type { FastifyReply } from 'fastify';
import { originForm } from './request-target.js';

export const PORTAL_PREFIX = '/portal';

/** A JSON answer runs nothing and loads nothing. */
export const PORTAL_JSON_CSP = "default-src 'none'; frame-ancestors 'none'";

const PORTAL_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'content-security-policy': PORTAL_JSON_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
});

/** Whether the request target `target` is the portal's: `/portal` itself or anything under it, in origin or absolute form (routed alike). */
export const isPortalUrl = (target: string): boolean => {
  const url = originForm(target);
  return url.startsWith(PORTAL_PREFIX) && (url.length === PORTAL_PREFIX.length || '/?#'.includes(url[PORTAL_PREFIX.length]!));
};

export function setPortalHeaders(reply: FastifyReply): void {
  reply.headers(PORTAL_HEADERS);
}
