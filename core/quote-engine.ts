// Asks every venue for a quote within one shared deadline and ranks the answers. A venue that
// does not answer in time is reported as `timeout` and never holds the response.
import { toWire, type Decimal } from './decimal.js';
import { edgeBps, toQuoteVenue } from './quote-math.js';
import type { Token } from './tokens.js';
import { unavailable, type Venue, type VenueQuote } from './venue.js';
import type { QuoteResponse, QuoteVenue } from './wire.js';

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
}

const TIMED_OUT = Symbol('timeout');

export async function quoteAcrossVenues(request: QuoteRequest, options: QuoteEngineOptions): Promise<QuoteResponse> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(TIMED_OUT);
    }, options.venueTimeoutMs);
  });
  const asOf = options.now().toISOString();
  try {
    const answers = await Promise.all(
      options.venues.map(async (venue): Promise<VenueQuote> => {
        if (options.isVenueDown(venue.id)) return unavailable('venue_down');
        const answer = await Promise.race([
          // async wrapper: a venue that throws synchronously still yields a rejection, not a crash
          (async () => venue.quote(request, controller.signal))().catch((err: unknown) => {
            if (controller.signal.aborted) return unavailable('timeout');
            options.onVenueError(venue.id, err);
            return unavailable('venue_error');
          }),
          deadline,
        ]);
        return answer === TIMED_OUT ? unavailable('timeout') : answer;
      }),
    );
    const entries = options.venues.map((venue, i) =>
      toQuoteVenue(venue.id, request.amount, request.want, request.give, answers[i]!),
    );
    return rank(request, asOf, entries);
  } finally {
    clearTimeout(timer);
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
    venues: [...available, ...rejected].map(stripNetValue),
    best: first ? { venueId: first.venueId, gross: first.gross!, net: first.net! } : null,
    edgeBps: first && second ? edgeBps(first.netValue!, second.netValue!) : null,
  };
}

function byVenueId(a: Entry, b: Entry): number {
  return a.venueId < b.venueId ? -1 : a.venueId > b.venueId ? 1 : 0;
}

function stripNetValue({ netValue: _netValue, ...venue }: Entry): QuoteVenue {
  return venue;
}
