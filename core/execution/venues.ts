// Which venues a walk-in wallet can execute through this build, and how each venue settles: the one
// place the v2 quote's `execution` block and the plan service both read, so the venues a quote
// calls executable are exactly the venues a plan is made for. What each venue requires of a wallet
// is from docs/api-v2.md (its sources: the venues' own documentation and SDKs).
import { DomainError } from '../errors.js';

/** How a venue settles a swap. */
export const SETTLEMENTS = [
  // tradecraft: a token-standard transfer offer to the pool's party, the floor (minimum want) as its memo.
  'memo-floor',
  // Nightly: a transfer to the quote's swap address, with the quote's memo.
  'swap-address-memo',
  // OneSwap: a swap intent made with a wallet-signed challenge, then a transfer to its deposit address with its deposit reference.
  'intent-deposit-reference',
  // Cantex: an intent signed with the trading key of a Cantex account, settled from that account's balance.
  'account-intent',
  // Temple: an order on a central limit order book, by a credentialed account.
  'account-order-book',
] as const;
export type Settlement = (typeof SETTLEMENTS)[number];

/** Why a venue is not executable by a walk-in wallet through this build; stable codes. */
export const NOT_EXECUTABLE_REASONS = [
  // Cantex: its SDK trades from a Cantex account with its own operator and trading keys.
  'venue_requires_account',
  // Temple: credentialed institutional participants only.
  'venue_requires_credential',
  // A wallet-signed challenge and the service's own API key before any swap intent: OneSwap's
  // before this build made its plans in two calls (openapi/v2.yaml signPlan); kept, a stable code.
  'venue_requires_signed_challenge',
  // A venue a wallet could execute, whose execution this build does not serve (or a venue it knows nothing of).
  'venue_execution_not_served',
] as const;
export type NotExecutableReason = (typeof NOT_EXECUTABLE_REASONS)[number];

export interface VenueExecution {
  /** Whether this build makes plans for the venue that a wallet can execute. */
  readonly executable: boolean;
  /** How the venue settles; null for a venue this build knows nothing of. */
  readonly settlement: Settlement | null;
  /** Null exactly when `executable`. */
  readonly reason: NotExecutableReason | null;
}

const EXECUTION: Readonly<Record<string, VenueExecution>> = {
  tradecraft: { executable: true, settlement: 'memo-floor', reason: null },
  // The taker's party as recipient of Nightly's quote, a transfer to its swap address with its memo.
  nightly: { executable: true, settlement: 'swap-address-memo', reason: null },
  // A plan in two calls: the taker's wallet signs OneSwap's challenge, the service makes the intent the deposit funds.
  oneswap: { executable: true, settlement: 'intent-deposit-reference', reason: null },
  cantex: { executable: false, settlement: 'account-intent', reason: 'venue_requires_account' },
  temple: { executable: false, settlement: 'account-order-book', reason: 'venue_requires_credential' },
};

const UNKNOWN: VenueExecution = Object.freeze({ executable: false, settlement: null, reason: 'venue_execution_not_served' });

/** How `venueId` executes through this build. */
export function venueExecution(venueId: string): VenueExecution {
  return Object.hasOwn(EXECUTION, venueId) ? EXECUTION[venueId]! : UNKNOWN;
}

/** The venues this build makes executable plans for. */
export const EXECUTABLE_VENUE_IDS: readonly string[] = Object.keys(EXECUTION).filter((id) => EXECUTION[id]!.executable);

/**
 * v1's one execution venue (its contract names it): v1 plans are for it alone, whatever v2 serves.
 * It is one of the executable venues above.
 */
export const V1_EXECUTION_VENUE_ID = 'tradecraft';
if (!EXECUTABLE_VENUE_IDS.includes(V1_EXECUTION_VENUE_ID)) throw new Error(`${V1_EXECUTION_VENUE_ID}, v1's execution venue, is not executable`);

/** Refuses a plan for a venue that is not executable, naming its reason. */
export function requireExecutable(venueId: string): VenueExecution {
  const execution = venueExecution(venueId);
  if (!execution.executable) {
    throw new DomainError('venue_not_executable', `venue ${venueId} is not executable by a wallet through this service: ${execution.reason} (see its execution block in the quote)`);
  }
  return execution;
}

/**
 * The least slippage a venue takes, in bps, where it bounds it: OneSwap's slippageTolerance is
 * 0.001 to 0.5. A plan asking less is refused 400 rather than planned on a tolerance the venue
 * would widen.
 */
export const MIN_SLIPPAGE_BPS: Readonly<Record<string, { readonly bps: number; readonly why: string }>> = {
  oneswap: { bps: 10, why: "OneSwap's slippage tolerance is 0.001 to 0.5 (10 to 5000 bps)" },
};
