// The venue port: every integrated venue, sandbox or real, quotes through this interface.
import type { Decimal } from '../decimal.js';
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
