// The key portal's page (portal/, built into dist/portal/ by make build): GET /portal (and
// /portal/) and its two assets, served only when PORTAL_ENABLED; disabled, they are the 404 every
// unknown path is. Its headers let the page load nothing but its own files and talk to nothing but
// this origin; no page may frame it; nothing is cached (a browser's back button must not show a
// key once issued), and no CORS header lets another origin read it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { errorReply, sendError } from '../http/error-reply.js';
import { PORTAL_PREFIX } from '../http/portal-headers.js';

export const PORTAL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * What the page's answers set beyond every /portal answer's headers (handlers/http/portal-headers.ts,
 * set by the app's onRequest hook: no-store, no framing, nosniff, no referrer): a CSP that lets the
 * page load its own assets, in place of the JSON answers' one that allows nothing.
 */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': PORTAL_CSP,
  'cross-origin-opener-policy': 'same-origin',
};

/** Each file the page is made of: its URL paths, its file under dist/portal/, its media type. */
const FILES = [
  { urls: [PORTAL_PREFIX, `${PORTAL_PREFIX}/`], file: 'index.html', type: 'text/html; charset=utf-8' },
  { urls: [`${PORTAL_PREFIX}/assets/portal.js`], file: 'assets/portal.js', type: 'text/javascript; charset=utf-8' },
  { urls: [`${PORTAL_PREFIX}/assets/portal.css`], file: 'assets/portal.css', type: 'text/css; charset=utf-8' },
] as const;

/** `built` is the directory make build writes the page to (dist/portal/). */
export function registerPortalPage(server: FastifyInstance, enabled: boolean, built: string): void {
  if (!enabled) return;
  for (const { urls, file, type } of FILES) {
    const location = path.join(built, file);
    // Read once: the page is a build's output and changes only with the next build and start.
    const content = existsSync(location) ? readFileSync(location) : null;
    for (const url of urls) {
      server.get(url, async (request, reply) =>
        content === null
          ? sendError(reply, errorReply('not_found', `no such path: ${request.method} ${url} (the portal page is not built: make build)`))
          : reply.headers(PAGE_HEADERS).type(type).send(content),
      );
    }
  }
}
