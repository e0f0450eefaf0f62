// Which contract a request target belongs to, for the `x-service-api-version` header every answer
// carries: `2` for every path under /api/v2/ (and /api/v2 itself), whatever answers it (an
// operation, an error, a 404 or 405, a 429, a refusal before routing), `1` for every other path.
import { originForm } from './request-target.js';

/** The swap API's v2 paths all start here. */
export const V2_PREFIX = '/api/v2';

export type ApiVersion = '1' | '2';

/** The contract version of a request target (`/api/v2/quote?from=CC`, or an absolute-form target). */
export function apiVersionOf(target: string): ApiVersion {
  const path = originForm(target);
  if (!path.startsWith(V2_PREFIX)) return '1';
  const next = path.charCodeAt(V2_PREFIX.length);
  // `/api/v2`, `/api/v2/...`, `/api/v2?...`, `/api/v2#...`; not `/api/v20`.
  return Number.isNaN(next) || next === 0x2f || next === 0x3f || next === 0x23 ? '2' : '1';
}
