// The quote use case: the fee-free base quote, cached per normalised parameter combination. The
// cache has two levels: this instance's single-flight cache, always, and, when the shared state is
// shared between instances (Redis), the shared one, so every instance serves the same bytes for a
// combination within its window.
import { quoteAcrossVenues, type QuoteEngineOptions, type QuoteRequest } from './engine.js';
import type { SharedState, StoredValue } from '../state/shared-state.js';
import type { PendingCount, RateWindows } from '../state/rate-windows.js';
import { SingleFlightCache } from './single-flight-cache.js';
import { toWire } from '../decimal.js';
import type { KeyCheck } from '../keys/partner-keys.js';

export interface QuoteServiceOptions extends QuoteEngineOptions {
  readonly cacheTtlMs: number;
  readonly cacheMaxEntries: number;
  /** The cache shared with other instances; omitted for a single instance. */
  readonly sharedCache?: SharedState;
  /** The windows over the shared cache's state: a request's counts made in the round trip that reads the cache (`counted`). */
  readonly windows?: RateWindows;
}

/** A quote request's counts, not made yet (core/state/rate-windows.ts). */
export interface QuoteCounts {
  /** The caller's window: counted for every request. */
  readonly window: PendingCount;
  /** The caller's fresh-quote budget: counted only for a quote computed for this request. */
  readonly fresh: PendingCount;
  /** A key verified from a record this instance kept: confirmed with the store's version, read in the same round trip. */
  readonly key?: KeyCheck;
}

export interface BaseQuote {
  /** The QuoteResponse as JSON text: the same bytes for every caller within the cache window. */
  readonly json: string;
  /** False when this request computed the quote (a cache miss). */
  readonly cached: boolean;
}

/** The normalised parameter combination a base quote is cached under. */
export const quoteCacheKey = (request: QuoteRequest): string =>
  `${request.give.symbol}|${request.want.symbol}|${toWire(request.amount)}`;

/** A request with its cache key, made together (parseQuoteParams) so they cannot disagree. */
export interface KeyedQuoteRequest {
  readonly request: QuoteRequest;
  /** quoteCacheKey(request). */
  readonly cacheKey: string;
}

export class QuoteService {
  // Entries hold the JSON text, not the response object: one string is one object for the
  // garbage collector where a response is dozens, and at the 10,000-entry cap, with every miss
  // promoting a new entry, tracing those graphs cost a fresh quote 12-30 % more CPU.
  private readonly cache: SingleFlightCache<string>;

  constructor(private readonly options: QuoteServiceOptions) {
    this.cache = new SingleFlightCache(options.cacheTtlMs, options.cacheMaxEntries);
  }

  /** The base quote at once, when this instance has it computed: the hot path takes no promise. */
  ready({ cacheKey }: KeyedQuoteRequest): BaseQuote | undefined {
    const ready = this.cache.peek(cacheKey);
    if (!ready) return undefined;
    this.options.metrics?.quoteCacheHit();
    return { json: ready.value, cached: true };
  }

  /**
   * The base quote from this instance's cache (computed or in flight), else from the cache shared
   * with other instances (then kept here until it expires there), else computed here. Only in the
   * last case does `beforeCompute` run first, and its rejection refuses the request: a quote
   * another instance computed is no fresh quote for the caller.
   */
  async baseQuote({ request, cacheKey: key }: KeyedQuoteRequest, beforeCompute?: () => void | Promise<void>): Promise<BaseQuote> {
    const ready = this.ready({ request, cacheKey: key });
    if (ready) return ready;
    if (!this.cache.has(key)) {
      const stored = await this.readShared(key);
      if (stored) return this.fromShared(key, stored);
      await beforeCompute?.();
    }
    return this.local({ request, cacheKey: key });
  }

  /**
   * `baseQuote`, with the request's counts made where the windows are shared: the caller's window,
   * the shared cache's read and, when no instance holds the quote, the fresh-quote budget, in one
   * round trip (a quote this instance holds needs only the window). Each count is judged, and a
   * key verified from a kept record confirmed (`counts.key`: the key store's version is read in
   * the same round trip), before anything else is done; a quote computed here is then stored in
   * the shared cache (a second round trip, the only other one).
   */
  async counted(keyed: KeyedQuoteRequest, counts: QuoteCounts): Promise<BaseQuote> {
    const { windows } = this.options;
    if (!windows) throw new Error('counted quotes need the windows (QuoteServiceOptions.windows)');
    const key = keyed.cacheKey;
    const here = this.cache.has(key) || !this.options.sharedCache;
    const version = counts.key?.versionKey;
    const exchanged = await windows.exchange(here ? { hits: [counts.window.hit], version } : { hits: [counts.window.hit], reads: [`quote:${key}`], hitsOnMiss: [counts.fresh.hit], version });
    if (!exchanged) {
      // A kept record cannot be confirmed: the key is as unverifiable as the store is unreachable.
      if (counts.key) throw counts.key.unverifiable();
      // The shared state is unreachable: the counts are this process's, and the cache this instance's.
      await windows.count(counts.window);
      return this.baseQuote(keyed, () => windows.count(counts.fresh));
    }
    counts.window.judge(exchanged.hits[0]!);
    if (counts.key) await counts.key.confirm(exchanged.version);
    const stored = exchanged.reads[0];
    if (stored) return this.fromShared(key, stored);
    const [fresh] = exchanged.hitsOnMiss ?? [];
    if (fresh) counts.fresh.judge(fresh);
    return this.local(keyed);
  }

  /** A body another instance stored, kept here until it expires there. */
  private fromShared(key: string, stored: StoredValue): BaseQuote {
    this.cache.get(key, async (expireIn) => {
      if (stored.ttlMs !== null) expireIn(stored.ttlMs);
      return stored.value;
    });
    this.options.metrics?.quoteCacheHit();
    return { json: stored.value, cached: true };
  }

  /** The base quote from this instance's cache, or computed here. */
  private async local({ request, cacheKey: key }: KeyedQuoteRequest): Promise<BaseQuote> {
    const { metrics } = this.options;
    const { value, hit } = this.cache.get(key, (expireIn) => this.compute(request, key, expireIn));
    if (hit) metrics?.quoteCacheHit();
    else metrics?.quoteCacheMiss();
    return { json: await value, cached: hit };
  }

  /** The shared level is an optimisation: when it cannot be reached, the quote is computed here. */
  private async readShared(key: string): Promise<StoredValue | null> {
    return (await this.options.sharedCache?.get(`quote:${key}`).catch(() => null)) ?? null;
  }

  private async compute(request: QuoteRequest, key: string, expireIn: (ms: number) => void): Promise<string> {
    const json = JSON.stringify(await quoteAcrossVenues(request, this.options));
    const shared = this.options.sharedCache;
    if (!shared) return json;
    if (await shared.setIfAbsent(`quote:${key}`, json, this.options.cacheTtlMs).catch(() => true)) return json;
    // Another instance stored its body first: serve that one, so all instances agree byte for byte.
    const winner = await this.readShared(key);
    if (winner && winner.ttlMs !== null) expireIn(winner.ttlMs);
    return winner?.value ?? json;
  }
}
