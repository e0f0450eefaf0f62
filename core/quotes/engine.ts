// Asks every venue for a quote within one shared deadline and ranks the answers. A venue that
// does not answer in time is reported as `timeout` and never holds the response.
import { toWire, type Decimal } from '../decimal.js';
import { edgeBps, toQuoteVenue } from './math.js';
import type { Metrics } from '../metrics.js';
import type { Token } from '../tokens.js';
import { unavailable, type Deadline, type Venue, type VenueQuote } from '../venues/venue.js';
import type { QuoteResponse, QuoteVenue } from '../contract/v1.js';

export interface QuoteRequest {
  readonly give: Token;
  readonly want: Token;
  readonly amount: Decimal;
}

export interface QuoteEngineOptions {
  readonly venues: readonly Venue[];
  readonly venueTimeoutMs: number;
  /** A venue whose probe reads it dead is not asked (a circuit breaker fed by the liveness probe). */
  readonly isVenueDown: (venueId: string) => boolean;
  readonly onVenueError: (venueId: string, err: unknown) => void;
  readonly now: () => Date;
  /** Hears each venue's result and answer time in every computed quote. */
  readonly metrics?: Metrics;
}

/** Each venue's price impact by venueId, as the wire writes it (null: not known, or unavailable). */
export type VenueImpacts = Readonly<Record<string, string | null>>;

/** A computed quote: v1's body, and beside it what later versions add to its venue entries. */
export interface RankedQuote {
  readonly response: QuoteResponse;
  readonly impacts: VenueImpacts;
}

export async function quoteAcrossVenues(request: QuoteRequest, options: QuoteEngineOptions): Promise<RankedQuote> {
  const asOf = options.now().toISOString();
  const seconds = new Array<number | null>(options.venues.length).fill(null);
  const answers = await collectAnswers(request, options, seconds);
  const entries = options.venues.map((venue, i) => toQuoteVenue(venue.id, request.amount, request.want, request.give, answers[i]!));
  const { metrics } = options;
  // The result counted is the entry's, as the response lists it: an answer may still be rejected
  // here (a net below zero, a fee in a third asset).
  if (metrics) for (let i = 0; i < entries.length; i++) metrics.venueQuote(entries[i]!.venueId, entries[i]!.rejectionCode ?? 'available', seconds[i]!);
  const impacts: Record<string, string | null> = {};
  for (const entry of entries) impacts[entry.venueId] = entry.priceImpact;
  return { response: rank(request, asOf, entries), impacts };
}

/**
 * Every venue's answer in venue order, within one shared deadline; a venue that has not
 * answered by then is a timeout. One promise settled by per-venue callbacks, because this runs
 * on every cache miss and a race per venue costs several promises each. `seconds` gets each asked
 * venue's time to its answer (to the deadline for a timeout).
 */
function collectAnswers(request: QuoteRequest, options: QuoteEngineOptions, seconds: Array<number | null>): Promise<VenueQuote[]> {
  const { venues } = options;
  const answers: Array<VenueQuote | undefined> = new Array<VenueQuote | undefined>(venues.length);
  const deadline = new SharedDeadline(Date.now() + options.venueTimeoutMs);
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  return new Promise((resolve) => {
    let pending = venues.length;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      for (let i = 0; i < answers.length; i++) {
        if (answers[i] !== undefined) continue;
        answers[i] = unavailable('timeout');
        seconds[i] = elapsed();
      }
      resolve(answers as VenueQuote[]);
    };
    const record = (i: number, answer: VenueQuote, asked = true) => {
      if (settled) return;
      answers[i] = answer;
      if (asked) seconds[i] = elapsed();
      pending -= 1;
      if (pending === 0) settle();
    };
    venues.forEach((venue, i) => {
      if (options.isVenueDown(venue.id)) return record(i, unavailable('venue_down'), false);
      let quote: Promise<VenueQuote>;
      try {
        quote = venue.quote(request, deadline);
      } catch (err) {
        quote = Promise.reject(err);
      }
      quote.then(
        (answer) => record(i, answer),
        (err: unknown) => {
          // A venue giving up because the deadline aborted it is a timeout, not a venue error.
          if (deadline.expired) return;
          options.onVenueError(venue.id, err);
          record(i, unavailable('venue_error'));
        },
      );
    });
    if (pending === 0) return settle();
    // The deadline's timer is armed one microtask later, after the answers of venues that have
    // already answered (in-process ones answer at once) have been recorded: when every venue has,
    // no timer is set and cleared on each cache miss. The deadline counts from here.
    queueMicrotask(() => {
      if (settled) return;
      timer = setTimeout(() => {
        deadline.expire();
        settle();
      }, options.venueTimeoutMs);
    });
  });
}

/**
 * A deadline whose AbortSignal is made on first read: an AbortController costs ~3 µs on every
 * cache miss, and in-process venues never read it.
 */
class SharedDeadline implements Deadline {
  #controller: AbortController | undefined;
  #expired = false;

  constructor(readonly endsAt: number) {}

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#expired) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  get expired(): boolean {
    return this.#expired;
  }

  expire(): void {
    this.#expired = true;
    this.#controller?.abort();
  }
}

type Entry = ReturnType<typeof toQuoteVenue>;

/** Available venues by net, best first (ties by venueId); unavailable venues after, by venueId. */
export function rank(request: QuoteRequest, asOf: string, entries: readonly Entry[]): QuoteResponse {
  const available = entries.filter((e) => e.netValue !== null);
  available.sort((a, b) => b.netValue!.comparedTo(a.netValue!) || byVenueId(a, b));
  const rejected = entries.filter((e) => e.netValue === null).sort(byVenueId);
  const [first, second] = available;
  return {
    pair: { give: request.give.instrument, want: request.want.instrument },
    amount: toWire(request.amount),
    asOf,
    venues: [...available, ...rejected].map(wireEntry),
    best: first ? { venueId: first.venueId, gross: first.gross!, net: first.net! } : null,
    edgeBps: first && second ? edgeBps(first.netValue!, second.netValue!) : null,
  };
}

function byVenueId(a: Entry, b: Entry): number {
  return a.venueId < b.venueId ? -1 : a.venueId > b.venueId ? 1 : 0;
}

// A literal of fixed shape: a rest spread to drop netValue cost more than the rest of rank().
function wireEntry(e: Entry): QuoteVenue {
  return {
    venueId: e.venueId,
    settlementMode: e.settlementMode,
    available: e.available,
    gross: e.gross,
    net: e.net,
    fee: e.fee,
    feeBps: e.feeBps,
    rejectionCode: e.rejectionCode,
  };
}
