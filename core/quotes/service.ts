// The quote use case: the fee-free base quote, cached per normalised parameter combination. The
// cache has two levels: this instance's single-flight cache, always, and, when the shared state is
// shared between instances (Redis), the shared one, so every instance serves the same bytes for a
// combination within its window. There, the request that finds no instance holding a quote claims
// it in the same round trip (the claim is what others read until the body replaces it), so it can
// answer without waiting for its body's write: one round trip, the write after the answer. Others
// that read the claim wait for the body rather than compute one of their own.
import { randomUUID } from 'node:crypto';
import { quoteAcrossVenues, type QuoteEngineOptions, type QuoteRequest } from './engine.js';
import type { Claim, SharedState, StoredValue, WindowCount } from '../state/shared-state.js';
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

/** A computed quote as the caches keep it: v1's body, and beside it, never in it, the venues' price impacts. */
export interface CachedQuote {
  /** The QuoteResponse as JSON text: the same bytes for every caller within the cache window. */
  readonly json: string;
  /** The venues' price impacts (engine.ts VenueImpacts) as JSON text, computed with `json`. */
  readonly impacts: string;
}

export interface BaseQuote extends CachedQuote {
  /** False when this request computed the quote (a cache miss). */
  readonly cached: boolean;
}

/**
 * A quote in the shared cache: its impacts, a newline, its body (JSON text holds no newline). The
 * key's prefix is not the `quote:` of earlier builds, whose values were the body alone, so an
 * instance of one never serves this text as a body.
 */
const sharedKey = (key: string): string => `quote-record:${key}`;
const toShared = ({ json, impacts }: CachedQuote): string => `${impacts}\n${json}`;
function fromSharedText(value: string): CachedQuote {
  const cut = value.indexOf('\n');
  return { impacts: value.slice(0, cut), json: value.slice(cut + 1) };
}

/** What a shared cache entry holds while its claimer computes the quote: never a quote, whose text starts with a JSON object. */
const CLAIM_PREFIX = 'claim:';
const isClaim = (stored: StoredValue): boolean => stored.value.startsWith(CLAIM_PREFIX);

/** How long a claim outlives the quote's deadline: a claimer that stopped (a crash) holds the others no longer. */
const CLAIM_MARGIN_MS = 1000;
/** A claim's waiter reads the shared cache again after this, then twice as long each time, up to POLL_MAX_MS. */
const POLL_FIRST_MS = 5;
const POLL_MAX_MS = 50;

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
  // Entries hold JSON text, not the response object: two strings are three objects for the
  // garbage collector where a response is dozens, and at the 10,000-entry cap, with every miss
  // promoting a new entry, tracing those graphs cost a fresh quote 12-30 % more CPU.
  private readonly cache: SingleFlightCache<CachedQuote>;
  /** This instance, in its claims' values. */
  private readonly claimant = randomUUID();
  private claims = 0;
  /** The claims' replacements under way (release). */
  private readonly releasing = new Set<Promise<void>>();

  constructor(private readonly options: QuoteServiceOptions) {
    this.cache = new SingleFlightCache(options.cacheTtlMs, options.cacheMaxEntries);
  }

  /** The base quote at once, when this instance has it computed: the hot path takes no promise. */
  ready({ cacheKey }: KeyedQuoteRequest): BaseQuote | undefined {
    const ready = this.cache.peek(cacheKey);
    if (!ready) return undefined;
    this.options.metrics?.quoteCacheHit();
    const { json, impacts } = ready.value;
    return { json, impacts, cached: true };
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
   * the shared cache's read and, when no instance holds the quote, the fresh-quote budget and the
   * quote's claim, in one round trip (a quote this instance holds needs only the window). Each
   * count is judged, and a key verified from a kept record confirmed (`counts.key`: the key store's
   * version is read in the same round trip), before anything else is done. A quote claimed here is
   * computed here and answered at once; its body replaces the claim in the shared cache after.
   */
  async counted(keyed: KeyedQuoteRequest, counts: QuoteCounts): Promise<BaseQuote> {
    const { windows, sharedCache } = this.options;
    if (!windows) throw new Error('counted quotes need the windows (QuoteServiceOptions.windows)');
    const key = keyed.cacheKey;
    const here = this.cache.has(key) || !sharedCache;
    const version = counts.key?.versionKey;
    // A quote held here, its window counted without a version to read: its caller's lease, when
    // this instance holds one, answers it with no round trip; else the round trip asks for one.
    const leasing = here && version === undefined;
    if (leasing && windows.countLeased(counts.window)) return this.local(keyed);
    const claim = here ? undefined : this.newClaim(key);
    const hit = leasing ? windows.leasing(counts.window) : counts.window.hit;
    const exchanged = await windows.exchange(
      claim ? { hits: [hit], reads: [claim.key], hitsOnMiss: [counts.fresh.hit], claimOnMiss: claim, version } : { hits: [hit], version },
    );
    if (!exchanged) {
      // A kept record cannot be confirmed: the key is as unverifiable as the store is unreachable.
      if (counts.key) throw counts.key.unverifiable();
      // The shared state is unreachable: the counts are this process's, and the cache this instance's.
      await windows.count(counts.window);
      return this.baseQuote(keyed, () => windows.count(counts.fresh));
    }
    windows.judgeLeasing(counts.window, hit, exchanged.hits[0]!);
    if (counts.key) await counts.key.confirm(exchanged.version);
    if (!claim) return this.local(keyed);
    return this.settleClaim(keyed, counts, claim, exchanged.reads[0] ?? null, exchanged.hitsOnMiss, exchanged.claimed);
  }

  /**
   * After a round trip that read the shared cache and, on a miss, counted the fresh-quote budget and
   * took `claim`: the body read, the quote computed here when claimed, or, when another instance's
   * claim was read, its body once it is there (read again after a while, up to POLL_MAX_MS apart,
   * counting nothing), or the quote claimed again when that claim is gone without a body.
   */
  private async settleClaim(keyed: KeyedQuoteRequest, counts: QuoteCounts, claim: Claim, stored: StoredValue | null, fresh: readonly WindowCount[] | null, claimed: boolean): Promise<BaseQuote> {
    const windows = this.options.windows!;
    for (let wait = POLL_FIRST_MS; ; wait = Math.min(2 * wait, POLL_MAX_MS)) {
      if (stored && !isClaim(stored)) return this.fromShared(keyed.cacheKey, stored);
      if (!stored) {
        if (fresh?.[0]) counts.fresh.judge(fresh[0]);
        return this.local(keyed, claimed ? claim : undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      // A request of this instance's own may have read or made it meanwhile.
      if (this.cache.has(keyed.cacheKey)) return this.local(keyed);
      const again = await windows.exchange({ reads: [claim.key], hitsOnMiss: [counts.fresh.hit], claimOnMiss: claim });
      if (!again) return this.baseQuote(keyed, () => windows.count(counts.fresh));
      ({ claimed } = again);
      stored = again.reads[0] ?? null;
      fresh = again.hitsOnMiss;
    }
  }

  /** A claim on `key`'s quote, its own value (so only its claimer replaces it), lasting the quote's deadline and a margin. */
  private newClaim(key: string): Claim {
    return { key: sharedKey(key), value: `${CLAIM_PREFIX}${this.claimant}:${++this.claims}`, ttlMs: this.options.venueTimeoutMs + CLAIM_MARGIN_MS };
  }

  /** A body another instance stored, kept here until it expires there. */
  private fromShared(key: string, stored: StoredValue): BaseQuote {
    const quote = fromSharedText(stored.value);
    this.cache.get(key, async (expireIn) => {
      if (stored.ttlMs !== null) expireIn(stored.ttlMs);
      return quote;
    });
    this.options.metrics?.quoteCacheHit();
    return { ...quote, cached: true };
  }

  /**
   * The base quote from this instance's cache, or computed here. `claim`: this request took the
   * shared cache's claim on it, which the body then replaces (or, should the quote fail, which is
   * dropped).
   */
  private async local({ request, cacheKey: key }: KeyedQuoteRequest, claim?: Claim): Promise<BaseQuote> {
    const { metrics } = this.options;
    const { value, hit } = this.cache.get(key, (expireIn) => this.compute(request, key, expireIn, claim));
    if (hit) metrics?.quoteCacheHit();
    else metrics?.quoteCacheMiss();
    // Computed or read here meanwhile: the claim is answered with that body all the same.
    if (hit && claim) value.then((quote) => this.release(claim, quote), () => this.release(claim, null));
    const { json, impacts } = await value;
    return { json, impacts, cached: hit };
  }

  /** The shared level is an optimisation: when it cannot be reached, the quote is computed here. */
  private async readShared(key: string): Promise<StoredValue | null> {
    const stored = await this.options.sharedCache?.get(sharedKey(key)).catch(() => null);
    return stored && !isClaim(stored) ? stored : null;
  }

  private async compute(request: QuoteRequest, key: string, expireIn: (ms: number) => void, claim?: Claim): Promise<CachedQuote> {
    let quote: CachedQuote;
    try {
      const { response, impacts } = await quoteAcrossVenues(request, this.options);
      quote = { json: JSON.stringify(response), impacts: JSON.stringify(impacts) };
    } catch (err) {
      if (claim) this.release(claim, null);
      throw err;
    }
    const shared = this.options.sharedCache;
    if (!shared) return quote;
    if (claim) {
      this.release(claim, quote);
      return quote;
    }
    if (await shared.setIfAbsent(sharedKey(key), toShared(quote), this.options.cacheTtlMs).catch(() => true)) return quote;
    // Another instance stored its quote first: serve that one, so all instances agree byte for byte.
    const winner = await this.readShared(key);
    if (winner && winner.ttlMs !== null) expireIn(winner.ttlMs);
    return winner ? fromSharedText(winner.value) : quote;
  }

  /**
   * Replaces this instance's claim with the body (none: drops it), not awaited: the claimer serves
   * its body at once, whoever reads the claim meanwhile waits for it, and the write goes in the next
   * script this instance sends (core/state/redis.ts). Should the store not answer, the claim lapses by itself.
   */
  private release(claim: Claim, quote: CachedQuote | null): void {
    const write = this.options.sharedCache?.replaceIf(claim.key, claim.value, quote && toShared(quote), this.options.cacheTtlMs).then(
      () => {},
      () => {},
    );
    if (!write) return;
    this.releasing.add(write);
    void write.then(() => this.releasing.delete(write));
  }

  /** Once every body this instance answered with is written to the shared cache (or failed to be): before its connection closes. */
  async settled(): Promise<void> {
    await Promise.all(this.releasing);
  }
}
