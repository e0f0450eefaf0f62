// The shapes the sandbox's pricing reads and answers: a quote request, and a fee as a venue states
// it. Restated from the venue port (core/venues/venue.ts) so the sandbox quotes as a venue without
// importing the service's venue code; test/sandbox/venues/market.test.ts holds a SandboxVenue
// assignable to the port's Venue.
import type { Decimal } from '../../core/decimal.js';
import type { Token } from '../../core/tokens.js';

export interface SandboxQuoteRequest {
  readonly give: Token;
  readonly want: Token;
  readonly amount: Decimal;
}

export interface SandboxFeeQuote {
  readonly amount: Decimal;
  /** The give or the want token. */
  readonly asset: Token;
  readonly appliedTo: 'on_top' | 'deducted_from_give';
}
