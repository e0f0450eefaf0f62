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

/**
 * An end user's short-lived proof, from a venue, that their wallet signed its challenge. Opaque: it
 * is never logged nor stored, so it prints, serialises and inspects as "[wallet token]"; only a
 * venue adapter reads it, for its request's header.
 */
export class WalletToken {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The token itself, for the venue's request header and nothing else. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return '[wallet token]';
  }

  toJSON(): string {
    return '[wallet token]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[wallet token]';
  }
}

/** What a venue asks the wallet of `party` to sign. */
export interface WalletChallenge {
  readonly party: string;
  /** Given back, with the signature, to verifyChallenge. */
  readonly nonce: string;
  /** The text the wallet signs (its signMessage). */
  readonly message: string;
  /** How long the venue takes a signature for it, in seconds. */
  readonly expiresInSeconds: number;
}

/** The wallet's answer to a WalletChallenge. */
export interface SignedChallenge {
  readonly party: string;
  readonly nonce: string;
  readonly signature: string;
  /** The key the wallet signed with. */
  readonly publicKey: string;
}

/** A swap intent to create for the signed-in party. */
export interface IntentRequest extends VenueQuoteRequest {
  readonly walletToken: WalletToken;
  /** The signed-in party: the only sender whose deposit the venue takes, and who it pays. */
  readonly party: string;
  /** The least the party is to receive (the service's floor): the intent's own minimum must not be below it. */
  readonly minOutput: Decimal;
  /** What the service's quote said `amount` pays, which the floor was taken from. */
  readonly expectedOutput: Decimal;
}

/** A created intent: where the party's wallet deposits, and what the venue guarantees. */
export interface SwapIntent {
  readonly intentId: string;
  /** The party the deposit goes to (the venue's, not the user's). */
  readonly depositAddress: string;
  /** The reference the deposit carries (the transfer's reason), exactly as given. */
  readonly depositReference: string;
  /** What the party deposits. */
  readonly amount: Decimal;
  /** What the venue says it pays now; null when it does not say. */
  readonly expectedOutput: Decimal | null;
  /** The least the venue pays, or it refunds: never below the request's minOutput. */
  readonly minOutput: Decimal;
  /** The deposit must arrive before this. */
  readonly expiresAt: Date;
}

/**
 * Why a venue refused to create an intent: as a quote is refused, or `intent_exists` when the
 * party already has an intent awaiting its deposit that this one would stand beside (OneSwap
 * takes one per wallet, pool and input token).
 */
export type IntentRejection = RejectionCode | 'intent_exists';

export type VenueIntent =
  | { readonly available: true; readonly intent: SwapIntent }
  | { readonly available: false; readonly rejectionCode: IntentRejection };

/**
 * Where an intent stands, whatever the venue's own words for it: `awaiting_deposit`;
 * `in_progress` (the deposit is being swapped); `completed` (the output was paid); `refunded` (the
 * swap did not happen and the deposit went back); `expired` or `cancelled` (no deposit was taken);
 * `failed` (terminal, neither paid nor known to be refunded: the venue's operators must look).
 */
export const INTENT_STATES = ['awaiting_deposit', 'in_progress', 'completed', 'refunded', 'expired', 'cancelled', 'failed'] as const;
export type IntentState = (typeof INTENT_STATES)[number];

export interface IntentStatus {
  readonly intentId: string;
  readonly state: IntentState;
  /** The venue's own status, one it documents. */
  readonly venueStatus: string;
  /** What the venue paid, once it has; null before, or when it does not say. */
  readonly actualOutput: Decimal | null;
  readonly minOutput: Decimal | null;
  readonly expiresAt: Date;
}

/** An intent of the signed-in party's, named to the venue. */
export interface IntentRef {
  readonly intentId: string;
  readonly walletToken: WalletToken;
}

/**
 * A venue whose swaps execute through an intent its user's wallet proves it owns: the wallet signs
 * the venue's challenge for its party, the venue gives a short-lived wallet token for it, and with
 * that token the intent is created, read and cancelled. The party's wallet then deposits to the
 * intent's `depositAddress` with its `depositReference`.
 */
export interface IntentVenue extends Venue {
  /** Throws WalletChallengeRefused when the venue refuses to sign the party in. */
  requestChallenge(party: string, deadline: Deadline): Promise<WalletChallenge>;
  /** Throws WalletSignatureRefused when the venue refuses the signature. */
  verifyChallenge(signed: SignedChallenge, deadline: Deadline): Promise<WalletToken>;
  /**
   * Refused as a quote is refused (no_pool, below_minimum, insufficient_liquidity), or
   * intent_exists beside the party's intent awaiting its deposit; throws
   * VenueFloorBelowService when the intent's minimum would be below `minOutput` (the intent is then
   * cancelled), WalletTokenRefused when the token is no longer good.
   */
  createIntent(request: IntentRequest, deadline: Deadline): Promise<VenueIntent>;
  /** Throws IntentNotFound for an intent the venue does not know for the token's party. */
  intentStatus(ref: IntentRef, deadline: Deadline): Promise<IntentStatus>;
  /** Whether it was cancelled: false when it no longer waits for a deposit (read its status). */
  cancelIntent(ref: IntentRef, deadline: Deadline): Promise<boolean>;
}

/** Whether `venue`'s adapter executes through wallet-signed intents. */
export const isIntentVenue = (venue: Venue): venue is IntentVenue => typeof (venue as Partial<IntentVenue>).createIntent === 'function';

/**
 * The venue refused the wallet's signed challenge (a bad signature, another key than the party's,
 * or a challenge used or expired): the wallet must sign a new one. For a 400 `bad_signature`.
 */
export class WalletSignatureRefused extends Error {
  override readonly name = 'WalletSignatureRefused';
  readonly code = 'bad_signature';

  constructor(readonly venueId: string) {
    super(`venue ${venueId} refused the wallet's signature of its challenge: request a new challenge and sign it`);
  }
}

/**
 * The venue refused to issue a challenge for the party (a party it does not know, say): the
 * party's wallet cannot sign in there. For a 409 venue_unavailable.
 */
export class WalletChallengeRefused extends Error {
  override readonly name = 'WalletChallengeRefused';

  constructor(readonly venueId: string) {
    super(`venue ${venueId} refused to issue a wallet challenge for the party`);
  }
}

/** The venue no longer takes the wallet token (expired or invalid): the wallet must sign a new challenge. */
export class WalletTokenRefused extends Error {
  override readonly name = 'WalletTokenRefused';

  constructor(readonly venueId: string) {
    super(`venue ${venueId} refused the wallet token: it expired or is invalid; sign a new challenge`);
  }
}

/** The venue knows no such intent for the wallet token's party. */
export class IntentNotFound extends Error {
  override readonly name = 'IntentNotFound';

  constructor(
    readonly venueId: string,
    readonly intentId: string,
  ) {
    super(`venue ${venueId} knows no intent ${intentId} for this wallet`);
  }
}
