// A fake `fetch` for the venue adapters' tests (test/core/venues/*.test.ts), and the deadlines they
// quote under. Every adapter takes its fetch as an option (VenueHttpOptions.fetch), so a test can
// serve fixture bodies of a venue's documented shapes, see exactly what the adapter sent, and make
// a venue hang, all without a network. One fake for all venues, so that each behaves as a real
// fetch does in the same way: in particular a hanging request settles only when its AbortSignal
// aborts, which is what the adapters' timeout handling relies on.
import type { Deadline, VenueQuote } from '../../core/venues/venue.js';

/** One request an adapter made, as the fake saw it. */
export interface SentRequest {
  readonly url: string;
  /** GET unless the request said otherwise, as fetch does. */
  readonly method: string;
  /** The request's headers as sent (VenueHttp sends a plain object, so names keep their case). */
  readonly headers: Record<string, string>;
  /** The request body's text, or undefined when it sent none. */
  readonly body: string | undefined;
}

/**
 * What the fake answers a request with: a status (200 unless given) and the body's text, kept as
 * written so a JSON number can carry more digits than a float; or 'hang', never answering.
 */
export type Reply = { readonly status?: number; readonly body: string } | 'hang';

export interface FakeFetch {
  /** To pass as the adapter's `fetch` option. */
  readonly fetch: typeof fetch;
  /** Every request made so far, in order (a probe's parallel requests in the order they started). */
  readonly calls: SentRequest[];
}

/** A fetch that records each request and answers it with `route(request)`. */
export function fakeFetch(route: (request: SentRequest) => Reply): FakeFetch {
  const calls: SentRequest[] = [];
  const fake = (async (input: string | URL | Request, init?: RequestInit) => {
    const request: SentRequest = {
      url: String(input),
      method: init?.method ?? 'GET',
      headers: { ...(init?.headers as Record<string, string> | undefined) },
      body: typeof init?.body === 'string' ? init.body : undefined,
    };
    calls.push(request);
    const reply = route(request);
    if (reply === 'hang') {
      // As a real fetch: settles only when its signal aborts (at once if it already has), rejecting
      // with the signal's reason.
      return new Promise<Response>((_, reject) => {
        const signal = init?.signal;
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    return new Response(reply.body, { status: reply.status ?? 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { fetch: fake, calls };
}

/** A request's JSON body, parsed (null when it sent none), for comparing with what was meant. */
export function sentJson(request: SentRequest | undefined): unknown {
  return JSON.parse(request?.body ?? 'null');
}

/** A signal nothing aborts: a probe or quote with no deadline of its own, so only the venue's timeout applies. */
export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}

/** A quote's deadline that never ends (see neverAborted). */
export function noDeadline(): Deadline {
  return { signal: neverAborted(), endsAt: Number.POSITIVE_INFINITY };
}

/**
 * A quote's deadline that ends `ms` from now. A timer of its own rather than AbortSignal.timeout,
 * whose timer does not keep the process alive, so a test waiting on a hang cannot end early.
 */
export function deadlineIn(ms: number): Deadline {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), ms);
  return { signal: controller.signal, endsAt: Date.now() + ms };
}

/** An available quote as plain strings (the fee's asset by symbol), or its rejection code: what tests compare. */
export function plainQuote(q: VenueQuote) {
  if (!q.available) return q.rejectionCode;
  return {
    gross: q.gross.toFixed(),
    fee: q.fee && { amount: q.fee.amount.toFixed(), asset: q.fee.asset.symbol, appliedTo: q.fee.appliedTo },
  };
}

/** A quote's failure, or its result when it did not fail. */
export const outcome = (p: Promise<VenueQuote>): Promise<unknown> => p.then((q) => q, (e: unknown) => e);
