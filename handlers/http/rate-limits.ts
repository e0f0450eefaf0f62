// Rate limits, with @fastify/rate-limit over the service's own windows (core/state/rate-windows.ts, so
// N instances sharing Redis count one window). Fixed one-minute windows: a keyless caller's per
// IP, a keyed caller's per key (a key raises the window); and a separate budget of fresh quotes
// (cache misses: each asks every venue), per IP keyless and per key keyed. Over a limit: 429 rate_limited with Retry-After, the whole
// seconds to the window's end. Keyed responses carry X-RateLimit-Limit and X-RateLimit-Remaining;
// keyless successes do not, since a shared cache may keep them.
import rateLimit, { normalizeIP, type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../core/errors.js';
import type { Partner } from '../../core/keys/partner-keys.js';
import type { Metrics, RateLimitName } from '../../core/metrics.js';
import type { QuoteCounts } from '../../core/quotes/service.js';
import type { PendingCount, RateWindows } from '../../core/state/rate-windows.js';
import type { WindowCount, WindowHit } from '../../core/state/shared-state.js';

const RATE_WINDOW_MS = 60_000;

export interface RateLimitSettings {
  readonly keylessPerMinute: number;
  readonly keyedPerMinute: number;
  readonly freshQuotesPerMinute: number;
  readonly keyedFreshQuotesPerMinute: number;
}

export interface RateLimiter {
  /** Counts the request in its caller's window; throws rate_limited over the limit. At once (no promise) when the windows are this process's own. */
  admit(request: FastifyRequest, reply: FastifyReply, partner: Partner | null): void | Promise<void>;
  /** Counts a fresh quote in its caller's budget (per IP keyless, per key keyed); throws rate_limited over it. At once when the windows are this process's own. */
  spendFreshQuote(request: FastifyRequest, reply: FastifyReply): void | Promise<void>;
  /**
   * Where the windows are shared: the request's counts in its caller's window and fresh-quote
   * budget, not made yet, for the core to make with its first shared-state read (one round trip
   * for both and the read). Null where the windows are this process's own: counted at once there.
   */
  pending?(request: FastifyRequest, reply: FastifyReply, partner: Partner | null): QuoteCounts | null;
}

class Pending implements PendingCount {
  counted = false;

  constructor(
    readonly hit: WindowHit,
    readonly leasable: boolean,
    private readonly enforce: (count: WindowCount) => void,
  ) {}

  judge(count: WindowCount): void {
    this.counted = true;
    this.enforce(count);
  }
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

/** What a limit says of one counted request: the fields of @fastify/rate-limit's answer that the service reads. */
interface Verdict {
  readonly max: number;
  readonly remaining: number;
  readonly ttlInSeconds: number;
  readonly isExceeded: boolean;
}

/** The verdict on a window's count, as @fastify/rate-limit reaches it from its store's count (a test holds the two together). */
function verdict({ count, resetInMs }: WindowCount, max: number): Verdict {
  return { max, remaining: Math.max(0, max - count), ttlInSeconds: Math.ceil(resetInMs / 1000), isExceeded: count > max };
}

/**
 * The client's IP as its keyless window and its plans' idempotency records know it: IPv6 by its
 * /64 (the plugin's normalisation), anything else as it is, lower-cased. An IPv4 address never
 * reaches the plugin's IPv6 pattern, a regular expression that cost every request ~1 % of a
 * cached quote.
 */
export const clientIp = (request: FastifyRequest): string => {
  const ip = request.ip;
  return ip.includes(':') ? normalizeIP(ip) : ip.toLowerCase();
};

/** `metrics` hears each 429, by the limit that refused it. */
export async function registerRateLimits(app: FastifyInstance, windows: RateWindows, settings: RateLimitSettings, metrics: Metrics): Promise<RateLimiter> {
  await app.register(rateLimit, { global: false, store: windowsStore(windows), timeWindow: RATE_WINDOW_MS });
  // One limit per kind of caller, each with a fixed maximum. Where the windows are this process's
  // own, the count is read at once: the plugin's limiter always answers with a promise (three,
  // with its store's and its key's), which cost a cached quote ~7.5 % of its CPU. Shared windows
  // (Redis) answer with a promise anyway, and go through the plugin.
  const limit = (kind: string, name: RateLimitName, caller: (request: FastifyRequest) => string, max: number) => {
    const shared = app.createRateLimit({ keyGenerator: (request) => `${kind}:${caller(request)}`, max });
    // The last caller's window key, kept: one client's requests then build no new key string
    // (and the window map hashes none) per request.
    let lastCaller = '';
    let lastKey = '';
    const windowKey = (request: FastifyRequest): string => {
      const who = caller(request);
      if (who !== lastCaller) {
        lastCaller = who;
        lastKey = `rate:${kind}:${who}`;
      }
      return lastKey;
    };
    const count = (request: FastifyRequest, reply: FastifyReply, showCounts: boolean): void | Promise<void> => {
      if (windows.isLocal) return enforce(verdict(windows.hitNow(windowKey(request), RATE_WINDOW_MS), max), name, reply, showCounts, metrics);
      return shared(request).then((result) => (result.isAllowed ? undefined : enforce(result, name, reply, showCounts, metrics)));
    };
    // A window whose count no answer shows may be counted ahead, by lease (core/state/window-leases.ts).
    const pending = (request: FastifyRequest, reply: FastifyReply, showCounts: boolean): PendingCount =>
      new Pending({ key: windowKey(request), windowMs: RATE_WINDOW_MS, max }, !showCounts, (counted) => enforce(verdict(counted, max), name, reply, showCounts, metrics));
    return Object.assign(count, { pending });
  };
  const keylessWindow = limit('ip', 'keyless-window', clientIp, settings.keylessPerMinute);
  const keyedWindow = limit('key', 'keyed-window', (request) => request.partner!.id, settings.keyedPerMinute);
  const freshBudget = limit('fresh', 'fresh-quote-budget', clientIp, settings.freshQuotesPerMinute);
  const keyedFreshBudget = limit('kfresh', 'keyed-fresh-quote-budget', (request) => request.partner!.id, settings.keyedFreshQuotesPerMinute);

  return {
    admit: (request, reply, partner) => {
      request.partner = partner;
      return partner ? keyedWindow(request, reply, true) : keylessWindow(request, reply, false);
    },
    spendFreshQuote: (request, reply) => (request.partner ? keyedFreshBudget : freshBudget)(request, reply, false),
    pending: (request, reply, partner) => {
      if (windows.isLocal) return null;
      request.partner = partner;
      return {
        window: partner ? keyedWindow.pending(request, reply, true) : keylessWindow.pending(request, reply, false),
        fresh: (partner ? keyedFreshBudget : freshBudget).pending(request, reply, false),
      };
    },
  };
}

function enforce(result: Verdict, name: RateLimitName, reply: FastifyReply, showCounts: boolean, metrics: Metrics): void {
  if (showCounts || result.isExceeded) {
    reply.header('x-ratelimit-limit', String(result.max));
    reply.header('x-ratelimit-remaining', String(result.remaining));
  }
  if (result.isExceeded) {
    // The access line and the metrics say which limit refused it: the 429s of each read the same to the caller.
    (reply.request.logFields ??= {}).rateLimit = name;
    metrics.rateLimited(name);
    const seconds = Math.max(1, result.ttlInSeconds);
    throw new DomainError('rate_limited', `rate limit exceeded; retry in ${seconds} seconds`, seconds);
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified partner of a keyed request; null for a keyless one (set before rate limiting). */
    partner?: Partner | null;
  }
}
