// The venue port: every integrated venue, sandbox or real, quotes through this interface.
import type { Decimal } from '../decimal.js';
import { DomainError } from '../errors.js';
import type { Token } from '../tokens.js';
import type { RejectionCode } from '../contract/v1.js';

export interface VenueQuoteRequest {
  readonly give: Token;
  readonly want: Token;
  readonly amount: Decimal;
}

export interface VenueFeeQuote {
  readonly amount: Decimal;
  /** Must be the give or the want token. */
  readonly asset: Token;
  readonly appliedTo: 'on_top' | 'deducted_from_give';
}

export type VenueQuote =
  | {
      readonly available: true;
      /** Output for the full amount at the venue's headline price, before `fee`. */
      readonly gross: Decimal;
      readonly fee: VenueFeeQuote | null;
      /**
       * The trade's price impact: 1 - (gross / amount) / spot, where spot is the rate the venue's
       * gross pays at the margin before the trade (fees inside its price included, `fee` not),
       * rounded up to 10 digits (venue-math.ts); or the venue's own figure of it. Absent or null:
       * the venue's answer gives nothing to know it from.
       */
      readonly priceImpact?: Decimal | null;
    }
  | { readonly available: false; readonly rejectionCode: RejectionCode };

export interface VenueProbe {
  readonly live: boolean;
  /** The pairs the venue serves, by pairKey(). */
  readonly pairs: readonly string[];
}

/** The deadline a quote shares among its venues. */
export interface Deadline {
  /** Aborts when the deadline passes. */
  readonly signal: AbortSignal;
  /**
   * When it passes, in Date.now() ms (Infinity: only when the signal says so). A venue request
   * that this ends no later than its own timeout would needs no timer of its own.
   */
  readonly endsAt: number;
}

/** A deadline that is only `signal`: a probe's, which the venue's own timeout bounds. */
export const untilAborted = (signal: AbortSignal): Deadline => ({ signal, endsAt: Number.POSITIVE_INFINITY });

/** A venue's own limits on what it is given of a token, in that token's units; null: not known. */
export interface VenueLimits {
  readonly min: Decimal | null;
  readonly max: Decimal | null;
}

export interface Venue {
  readonly id: string;
  readonly settlementMode: 'managed-deposit';
  /** The venue's limits on what it is given of `token`, where the adapter knows them; absent or null: none known. */
  limits?(token: Token): VenueLimits | null;
  /** Must settle or give up promptly once `deadline.signal` aborts; the caller stops waiting at the deadline anyway. */
  quote(request: VenueQuoteRequest, deadline: Deadline): Promise<VenueQuote>;
  probe(signal: AbortSignal): Promise<VenueProbe>;
}

export const unavailable = (rejectionCode: RejectionCode): VenueQuote => ({ available: false, rejectionCode });

/** A swap the taker's wallet is to execute on a venue: what is given, who is paid, and the service's floor. */
export interface ExecutionTermsRequest extends VenueQuoteRequest {
  /** The taker's party: the venue pays it, and the venue's terms are bound to it. */
  readonly recipient: string;
  /** The service's floor, floor(net × (1 - slippageBps/10000)): the venue's own minimum must not be below it. */
  readonly floor: Decimal;
  /** The net the floor was taken from: what the venue's quote said `amount` pays. */
  readonly expectedOut: Decimal;
}

/** What a plan's deposit step needs to execute on a venue. */
export interface ExecutionTerms {
  /** The party the taker's wallet transfers `fromAmount` of the give token to. */
  readonly target: string;
  /** The transfer's memo (the token standard's reason), exactly as given; null when the target needs none. */
  readonly memo: string | null;
  /** Where the venue also takes the transfer without a memo (Nightly's magicAddress); null when it offers none. */
  readonly magicAddress: string | null;
  /** The least the venue pays the recipient, at settlement or never: not below the request's floor. */
  readonly minOut: Decimal;
  readonly fromAmount: Decimal;
  /** What the venue says it pays now. */
  readonly toAmount: Decimal;
  /** The share of the pool's price the trade moves, as the venue states it; null when it states none. */
  readonly priceImpact: Decimal | null;
}

export type VenueExecutionTerms =
  | { readonly available: true; readonly terms: ExecutionTerms }
  | { readonly available: false; readonly rejectionCode: RejectionCode };

/** A venue a taker's wallet can execute on: it gives the terms of a swap for a named recipient. */
export interface ExecutableVenue extends Venue {
  /**
   * The venue's terms for the swap, bound to the recipient: refused as a quote is refused (limits,
   * maintenance, timeout), and thrown VenueFloorBelowService when the venue would guarantee less
   * than the service's floor. Nothing is planned on terms it did not return.
   */
  executionTerms(request: ExecutionTermsRequest, deadline: Deadline): Promise<VenueExecutionTerms>;
}

/** Whether `venue`'s adapter gives execution terms. */
export const isExecutableVenue = (venue: Venue): venue is ExecutableVenue => typeof (venue as Partial<ExecutableVenue>).executionTerms === 'function';

/**
 * The venue's guaranteed minimum is below the service's floor: the swap is not planned (502
 * venue_floor_below_service), nothing created.
 */
export class VenueFloorBelowService extends DomainError {
  constructor(
    readonly venueId: string,
    readonly minOut: Decimal,
    readonly floor: Decimal,
  ) {
    super('venue_floor_below_service', `venue ${venueId} would guarantee at least ${minOut.toFixed()}, below the service's floor of ${floor.toFixed()}; nothing was created: re-quote and plan again`);
  }
}
