// Rate limits, with @fastify/rate-limit over the service's own windows (core/state/rate-windows.ts, so
// N instances sharing Redis count one window). Fixed one-minute windows: a keyless caller's per
// IP, a keyed caller's per key (a key raises the window); and a keyless caller's separate budget
// of fresh quotes (cache misses) per IP. Over a limit: 429 rate_limited with Retry-After, the whole
// seconds to the window's end. Keyed responses carry X-RateLimit-Limit and X-RateLimit-Remaining;
// keyless successes do not, since a shared cache may keep them.
import rateLimit, { normalizeIP, type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../core/errors.js';
import type { Partner } from '../../core/keys/partner-keys.js';
import type { RateWindows } from '../../core/state/rate-windows.js';

const RATE_WINDOW_MS = 60_000;

export interface RateLimitSettings {
  readonly keylessPerMinute: number;
  readonly keyedPerMinute: number;
  readonly freshQuotesPerMinute: number;
}

export interface RateLimiter {
  /** Counts the request in its caller's window; throws rate_limited over the limit. */
  admit(request: FastifyRequest, reply: FastifyReply, partner: Partner | null): Promise<void>;
  /** Counts a keyless fresh quote in its caller's budget; throws rate_limited over it. */
  spendFreshQuote(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

/** The plugin's store interface over the service's windows: one store for every limit. */
function windowsStore(windows: RateWindows): new () => FastifyRateLimitStore {
  return class WindowsStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      const counted = windows.hit(`rate:${key}`, timeWindow);
      if (!(counted instanceof Promise)) return callback(null, { current: counted.count, ttl: counted.resetInMs });
      counted.then(
        ({ count, resetInMs }) => callback(null, { current: count, ttl: resetInMs }),
        (err: Error) => callback(err),
      );
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

/** The client's IP as its keyless window and its plans' idempotency records know it. */
export const clientIp = (request: FastifyRequest): string => normalizeIP(request.ip);

export async function registerRateLimits(app: FastifyInstance, windows: RateWindows, settings: RateLimitSettings): Promise<RateLimiter> {
  await app.register(rateLimit, { global: false, store: windowsStore(windows), timeWindow: RATE_WINDOW_MS });
  // One limiter per kind of caller, each with a fixed maximum: a maximum computed per request
  // would cost every request one more promise.
  const keylessWindow = app.createRateLimit({ keyGenerator: (request) => `ip:${clientIp(request)}`, max: settings.keylessPerMinute });
  const keyedWindow = app.createRateLimit({ keyGenerator: (request) => `key:${request.partner!.id}`, max: settings.keyedPerMinute });
  const freshBudget = app.createRateLimit({ keyGenerator: (request) => `fresh:${clientIp(request)}`, max: settings.freshQuotesPerMinute });

  const enforce = async (limit: typeof keylessWindow, request: FastifyRequest, reply: FastifyReply, showCounts: boolean) => {
    const result = await limit(request);
    if (result.isAllowed) return;
    if (showCounts || result.isExceeded) {
      reply.header('x-ratelimit-limit', String(result.max));
      reply.header('x-ratelimit-remaining', String(result.remaining));
    }
    if (result.isExceeded) {
      const seconds = Math.max(1, result.ttlInSeconds);
      throw new DomainError('rate_limited', `rate limit exceeded; retry in ${seconds} seconds`, seconds);
    }
  };

  return {
    admit: (request, reply, partner) => {
      request.partner = partner;
      return partner ? enforce(keyedWindow, request, reply, true) : enforce(keylessWindow, request, reply, false);
    },
    spendFreshQuote: (request, reply) => enforce(freshBudget, request, reply, false),
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified partner of a keyed request; null for a keyless one (set before rate limiting). */
    partner?: Partner | null;
  }
}
