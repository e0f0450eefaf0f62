// OneSwap, a constant-product AMM with managed deposits: its quote API as its SDK types and
// docs.oneswap.cc describe it (third-party notes verified against the SDK and a probe; base
// https://api.oneswap.cc; the `os_live_...` key sent as `X-API-Key`, which the caller passes in
// VenueHttpOptions.headers).
//
// - Quote: GET /api/v1/quote?from=<instrument>&to=<instrument>&amount=<amount>, with `Amulet` for
//   CC -> {inputToken, inputTokenAdmin, outputToken, outputTokenAdmin, inputAmount, outputAmount,
//   rate, priceImpact (strings), fee (a number, e.g. 0.003: the 0.3 % pool fee, inside the price),
//   poolId, expiresIn, maxPriceImpact?, estimatedTrafficCost?{bytes, usd, cc, ...},
//   trafficFeeInInput?, inputAmountAfterTrafficFee?}. `outputAmount` is computed from the input
//   net of the traffic fee. Amounts are read as text, never floats.
// - Errors by status: 400 validation (also the 15 % price-impact cap), 401 auth, 404, 409
//   {error, code: 'ambiguous_pool_pair', candidates: [{poolId, tokenA, tokenB}]}, 429, 500.
// - No health or pools endpoint is documented.
//
// Ambiguous in the docs, and decided here:
// - The traffic fee is the fee, in the give token, deducted from the give amount:
//   max(trafficFeeInInput, amount - inputAmountAfterTrafficFee) over whichever of the two is
//   present (the larger, should they disagree, so the net is never overstated), rounded up; none
//   when neither is present or it is 0. `estimatedTrafficCost` is informational (it is the same
//   cost in other units) and the 0.3 % `fee` is inside the price: neither is read.
// - Gross, as for Tradecraft, is `outputAmount` at the quote's average rate for the whole amount,
//   floor(outputAmount x amount / (amount - fee)), so that the service's net,
//   floor(gross x (amount - fee) / amount), never exceeds what OneSwap said; without a fee, gross
//   is `outputAmount` floored to 10 digits. A fee as large as the amount, or a zero output, is
//   `below_minimum`.
// - An `inputAmount` other than the amount asked for is unreadable (the output would belong to
//   another amount).
// - `priceImpact` is taken as the share of the pool's price the trade moves, a fraction (its
//   `maxPriceImpact` cap reads "0.15" for 15 %), fees aside: in / (reserveIn + in) of the input
//   that reaches the curve, which is 1 - (gross / amount) / spot with spot gross's marginal rate
//   (the service's definition, openapi/v2.yaml QuoteVenue.priceImpact). Rounded up to 10 digits;
//   absent, unreadable or not below 1, it is not known (null), and the quote stands.
// - Rejections: a 404 whose JSON body speaks of the pool or pair is `no_pool` (a bare or HTML 404
//   is a wrong base URL, thrown, and no answer for the probe); a 400 whose message mentions price impact is
//   `insufficient_liquidity`. A 409 ambiguous_pool_pair is thrown (venue_error, logged), not
//   `no_pool`: pools exist, and choosing among the candidates is an integration decision the
//   operator should see, not one to make silently. Any other 400, 401, 429 and 5xx are thrown too.
// - Probe: as no health endpoint is documented, it asks for a small quote (100 CC) on each pair the
//   service quotes from CC, CC->USDCx and CC->CBTC (one quote per pair per probe against the key's
//   rate limit). The venue is live when any of them gets an answer OneSwap documents for a working
//   API: 2xx, or 400, 409 or a no-pool 404 about the request. A pair is served unless that answer was a no-pool 404 or
//   the pair's probe failed (timeout, 401, 429, 5xx, unreadable).
//
// Execution (IntentVenue, the venue port's): OneSwap's wallet auth and swap intents as its docs
// describe them (docs.oneswap.cc /guides/wallets, /guides/swaps, /guides/error-handling,
// /reference/sdk-methods, /reference/types). The user's wallet signs a challenge for its party:
// walletAuth.requestChallenge(partyId) -> {partyId, nonce, message, expiresIn}; the wallet's
// signMessage(message); walletAuth.verifyChallenge({partyId, nonce, signature, publicKey}) ->
// {partyId, token}, a short-lived wallet token. With the API key and that token, swaps.create
// {fromToken, toToken, amount (a string), slippageTolerance? (0.001-0.5, default 0.01),
// walletAddress? (must match the token), poolId?, fromAdmin?, toAdmin?} at /api/v1/swaps ->
// SwapIntentResponse {intentId, poolId, depositAddress (the pool's swap party), swapAddress,
// depositReference, inputToken, inputTokenAdmin, outputToken, outputTokenAdmin, expectedAmount,
// expectedOutput|null, minOutput|null, slippageTolerance (a number), outputAddress|null, expiresAt,
// instructions}, minOutput = expectedOutput x (1 - slippageTolerance), output below it refunded; a
// 24 h deposit window (read from expiresAt); the 15 % price-impact cap, a 400 at creation; a 400
// with `minimumAmount` for an amount below the traffic cost; 409 for another active intent of the
// wallet, pool and input token, or an ambiguous pair. swaps.getStatus(intentId) ->
// SwapStatusResponse {intentId, poolId, status, ..., actualOutput|null, minOutput|null, ...,
// expiresAt}, and swaps.cancel(intentId) -> {success}, both for the token's party. Errors: 400
// validation, 401 API key or wallet token, 404 pool, intent or party, 409, 429, 500.
//
// Ambiguous in the docs, and decided here:
// - Paths (only /api/v1/swaps is named): POST /api/v1/wallet-auth/challenge {partyId}, POST
//   /api/v1/wallet-auth/verify {partyId, nonce, signature, publicKey}, POST /api/v1/swaps, GET
//   /api/v1/swaps/<intentId>, POST /api/v1/swaps/<intentId>/cancel (body {}). Every call carries
//   `X-API-Key`; the wallet token rides as `Authorization: Bearer <token>` on create, status and
//   cancel (the calls the docs say need it), never in a path, a body, an error message or a log.
//   It is a WalletToken, which prints as "[wallet token]".
// - A 400 or 401 answering verify whose body does not speak of the API key is the wallet's proof
//   refused (a bad signature, another key, a used or expired challenge): WalletSignatureRefused,
//   for a 400 bad_signature; the wallet signs a new challenge. A 401 speaking of the API key is the
//   operator's, thrown as is.
// - A 401 on create, status or cancel whose body speaks of the wallet or its token, and not of the
//   API key, is WalletTokenRefused (sign a new challenge); any other 401 is thrown as is.
// - A 4xx answering the challenge other than 401 (the API key) and 429 is OneSwap refusing to sign
//   the party in (its 404 for a party it does not find): WalletChallengeRefused.
// - A 409 on create other than ambiguous_pool_pair is the party's other intent awaiting its
//   deposit on the same pool and input token: the refusal `intent_exists`.
// - The floor: the docs' create has no minOutput, only slippageTolerance. The adapter sends the
//   widest tolerance that keeps OneSwap's minOutput at or above the service's floor if OneSwap
//   expects what the service's quote said: (expectedOutput - floor) / expectedOutput rounded down
//   to 10 digits, raised to 0.001 and capped at 0.5 (the documented range), as a JSON number (the
//   documented type; 10 digits print exactly). Whatever OneSwap answers, an intent whose minOutput
//   is below the floor, or null, is cancelled and refused: VenueFloorBelowService (502).
// - walletAddress is sent (the party), so OneSwap checks it against the token. Tokens as for the
//   quote (`Amulet` for CC), without admins or poolId: an ambiguous pair is a 409, thrown.
// - The answer must be for the pair and amount asked (inputToken, outputToken, expectedAmount),
//   with an intentId of letters, digits, '-' and '_', a party id as depositAddress, a non-empty
//   depositReference and a readable expiresAt; anything else is unreadable, and the intent is
//   cancelled (best effort, within the same deadline) so it does not block the next one.
// - Creation refusals as for a quote: a 400 about price impact is insufficient_liquidity, a 400
//   with `minimumAmount` (below the traffic cost) below_minimum, a no-pool 404 no_pool. 409 and
//   every other failure are thrown; a timeout too, since the intent may exist.
// - Statuses, closed: an undocumented one is unreadable. pending is awaiting_deposit; matched,
//   deposit_received, forwarded, processing, sending_output in_progress; completed; refunded:
//   slippage_failed, price_impact_exceeded, insufficient_amount, insufficient_liquidity, and
//   output_failed ("the input refund succeeded"); expired; cancelled; failed: no_output_holdings,
//   failed and refund_failed (the docs: terminal, "may require manual investigation").
// - A 404 on status or cancel is IntentNotFound (an unknown intent, or another wallet's). Cancel
//   answers whether it cancelled: {success: true}; false for {success: false} or a 409 (no longer
//   pending: its status tells what happened).
import { ceil10, dec, Decimal, divFloor10, ZERO } from '../decimal.js';
import { isPartyId } from '../party.js';
import { quoteFromOutputAfterGiveFee, statedImpact } from './venue-math.js';
import { CBTC, CC, pairKey, USDCX, type Token } from '../tokens.js';
import {
  IntentNotFound, unavailable, untilAborted, VenueFloorBelowService, WalletChallengeRefused, WalletSignatureRefused, WalletToken, WalletTokenRefused, type Deadline, type IntentRef, type IntentRequest,
  type IntentState, type IntentStatus, type IntentVenue, type SignedChallenge, type SwapIntent, type VenueIntent, type VenueProbe, type VenueQuote, type VenueQuoteRequest,
  type WalletChallenge,
} from './venue.js';
import { decimalField, errorBodyText, objectField, VenueFailure, VenueHttp, VenueHttpError, type VenueHttpOptions, VenueTimeout, VenueUnreadable } from './venue-http.js';

export const ONESWAP_BASE_URL = 'https://api.oneswap.cc';

/** What the probe quotes on each pair. */
const PROBE_AMOUNT = dec('100');
const PROBE_PAIRS: readonly (readonly [Token, Token])[] = [
  [CC, USDCX],
  [CC, CBTC],
];

export class OneSwapVenue implements IntentVenue {
  readonly id = 'oneswap';
  readonly settlementMode = 'managed-deposit' as const;
  private readonly http: VenueHttp;

  constructor(options: VenueHttpOptions) {
    this.http = new VenueHttp(options);
  }

  async quote(request: VenueQuoteRequest, deadline: Deadline): Promise<VenueQuote> {
    try {
      return await this.ask(request, deadline);
    } catch (err) {
      return rejection(err);
    }
  }

  async probe(signal: AbortSignal): Promise<VenueProbe> {
    const answers = await Promise.all(
      PROBE_PAIRS.map(async ([give, want]) => {
        try {
          await this.ask({ give, want, amount: PROBE_AMOUNT }, untilAborted(signal));
          return { pair: pairKey(give, want), answered: true, served: true };
        } catch (err) {
          if (err instanceof VenueHttpError && (err.status === 400 || err.status === 409 || isNoPool(err))) {
            return { pair: pairKey(give, want), answered: true, served: !isNoPool(err) };
          }
          if (err instanceof VenueFailure) {
            return { pair: pairKey(give, want), answered: false, served: false };
          }
          throw err;
        }
      }),
    );
    const live = answers.some((a) => a.answered);
    return { live, pairs: live ? answers.filter((a) => a.served).map((a) => a.pair) : [] };
  }

  async requestChallenge(party: string, deadline: Deadline): Promise<WalletChallenge> {
    if (!isPartyId(party)) throw new TypeError('a OneSwap wallet challenge is for a party id');
    let asked: unknown;
    try {
      asked = await this.http.postJson(CHALLENGE_PATH, { partyId: party }, deadline);
    } catch (err) {
      // A refusal about the party (OneSwap's 404 for a party it does not find), not the operator's key or its limit.
      if (err instanceof VenueHttpError && err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 429) throw new WalletChallengeRefused(this.id);
      throw err;
    }
    const answer = objectField(asked, 'the challenge');
    if (answer.partyId !== party) throw new VenueUnreadable('the challenge is not for the party asked');
    const nonce = textField(answer.nonce, 'nonce');
    const message = textField(answer.message, 'message');
    if (typeof answer.expiresIn !== 'number' || !Number.isFinite(answer.expiresIn) || answer.expiresIn <= 0) throw new VenueUnreadable("'expiresIn' is not a positive number");
    return { party, nonce, message, expiresInSeconds: answer.expiresIn };
  }

  async verifyChallenge({ party, nonce, signature, publicKey }: SignedChallenge, deadline: Deadline): Promise<WalletToken> {
    let answer: Record<string, unknown>;
    try {
      answer = objectField(await this.http.postJson(VERIFY_PATH, { partyId: party, nonce, signature, publicKey }, deadline), 'the verification');
    } catch (err) {
      if (err instanceof VenueHttpError && (err.status === 400 || err.status === 401) && !speaksOfApiKey(err)) throw new WalletSignatureRefused(this.id);
      throw err;
    }
    if (answer.partyId !== party) throw new VenueUnreadable('the wallet token is not for the party asked');
    if (typeof answer.token !== 'string' || answer.token === '') throw new VenueUnreadable("'token' is not a non-empty string");
    return new WalletToken(answer.token);
  }

  async createIntent(request: IntentRequest, deadline: Deadline): Promise<VenueIntent> {
    const { give, want, amount, party, walletToken, minOutput, expectedOutput } = request;
    if (!isPartyId(party)) throw new TypeError('a OneSwap intent is for a party id');
    const body = {
      fromToken: give.instrument,
      toToken: want.instrument,
      amount: amount.toFixed(),
      slippageTolerance: toleranceFor(minOutput, expectedOutput).toNumber(),
      walletAddress: party,
    };
    let answer: Record<string, unknown>;
    try {
      answer = objectField(await this.http.postJson(SWAPS_PATH, body, deadline, bearer(walletToken)), 'the swap intent');
    } catch (err) {
      const refused = creationRefusal(err);
      if (refused) return { available: false, rejectionCode: refused };
      throw this.tokenRefusal(err);
    }
    let intent: SwapIntent;
    try {
      intent = readIntent(answer, request);
    } catch (err) {
      if (typeof answer.intentId === 'string' && INTENT_ID.test(answer.intentId)) await this.cancelQuietly({ intentId: answer.intentId, walletToken }, deadline);
      throw err;
    }
    // Nothing is planned on a guarantee below the service's own floor.
    if (intent.minOutput.lt(minOutput)) {
      await this.cancelQuietly({ intentId: intent.intentId, walletToken }, deadline);
      throw new VenueFloorBelowService(this.id, intent.minOutput, minOutput);
    }
    return { available: true, intent };
  }

  async intentStatus(ref: IntentRef, deadline: Deadline): Promise<IntentStatus> {
    const answer = objectField(await this.onIntent(ref, () => this.http.getJson(intentPath(ref.intentId), deadline, bearer(ref.walletToken))), 'the swap status');
    if (answer.intentId !== ref.intentId) throw new VenueUnreadable('the status is not for the intent asked');
    const venueStatus = answer.status;
    if (typeof venueStatus !== 'string' || !Object.hasOwn(STATE_OF, venueStatus)) throw new VenueUnreadable("'status' is not one OneSwap documents");
    return {
      intentId: ref.intentId,
      state: STATE_OF[venueStatus as OneSwapSwapStatus],
      venueStatus,
      actualOutput: optionalDecimal(answer.actualOutput, 'actualOutput'),
      minOutput: optionalDecimal(answer.minOutput, 'minOutput'),
      expiresAt: dateField(answer.expiresAt, 'expiresAt'),
    };
  }

  async cancelIntent(ref: IntentRef, deadline: Deadline): Promise<boolean> {
    let answer: unknown;
    try {
      answer = await this.onIntent(ref, () => this.http.postJson(`${intentPath(ref.intentId)}/cancel`, {}, deadline, bearer(ref.walletToken)));
    } catch (err) {
      if (err instanceof VenueHttpError && err.status === 409) return false;
      throw err;
    }
    const { success } = objectField(answer, 'the cancellation');
    if (typeof success !== 'boolean') throw new VenueUnreadable("'success' is not a boolean");
    return success;
  }

  /** `call` on the intent `ref` names: a 404 is IntentNotFound, a refused token WalletTokenRefused. */
  private async onIntent(ref: IntentRef, call: () => Promise<unknown>): Promise<unknown> {
    if (!INTENT_ID.test(ref.intentId)) throw new TypeError('not a OneSwap intent id');
    try {
      return await call();
    } catch (err) {
      if (err instanceof VenueHttpError && err.status === 404) throw new IntentNotFound(this.id, ref.intentId);
      throw this.tokenRefusal(err);
    }
  }

  /** A 401 about the wallet or its token, not the API key, as WalletTokenRefused; `err` otherwise. */
  private tokenRefusal(err: unknown): unknown {
    if (err instanceof VenueHttpError && err.status === 401 && !speaksOfApiKey(err) && /wallet|token/i.test(errorBodyText(err.body))) return new WalletTokenRefused(this.id);
    return err;
  }

  /** Cancels an intent the service will not use, so it does not block the party's next one; its failure changes nothing. */
  private async cancelQuietly(ref: IntentRef, deadline: Deadline): Promise<void> {
    try {
      await this.cancelIntent(ref, deadline);
    } catch {
      // Uncancelled, it expires unfunded: nobody is given its deposit address.
    }
  }

  /** The quote, or the failure thrown. */
  private async ask({ give, want, amount }: VenueQuoteRequest, deadline: Deadline): Promise<VenueQuote> {
    const query = new URLSearchParams({ from: give.instrument, to: want.instrument, amount: amount.toFixed() });
    const answer = objectField(await this.http.getJson(`/api/v1/quote?${query.toString()}`, deadline), 'the quote');
    if (answer.inputAmount !== undefined && !decimalField(answer.inputAmount, 'inputAmount').eq(amount)) {
      throw new VenueUnreadable(`'inputAmount' ${String(answer.inputAmount)} is not the amount asked for, ${amount.toFixed()}`);
    }
    const output = decimalField(answer.outputAmount, 'outputAmount');
    const quote = quoteFromOutputAfterGiveFee(output, amount, trafficFee(answer, amount), give);
    return quote.available ? { ...quote, priceImpact: statedImpact(answer.priceImpact) } : quote;
  }
}

const CHALLENGE_PATH = '/api/v1/wallet-auth/challenge';
const VERIFY_PATH = '/api/v1/wallet-auth/verify';
const SWAPS_PATH = '/api/v1/swaps';
/** What the adapter takes as an intent id: it goes into a path. */
const INTENT_ID = /^[A-Za-z0-9_-]{1,128}$/;
const intentPath = (intentId: string): string => `${SWAPS_PATH}/${intentId}`;
const bearer = (token: WalletToken): Record<string, string> => ({ authorization: `Bearer ${token.reveal()}` });

/** The documented slippageTolerance range. */
const MIN_TOLERANCE = dec('0.001');
const MAX_TOLERANCE = dec('0.5');

/** OneSwap's SwapStatus, as /reference/types lists it. */
export const ONESWAP_SWAP_STATUSES = [
  'pending', 'matched', 'deposit_received', 'forwarded', 'processing', 'sending_output', 'completed', 'slippage_failed', 'price_impact_exceeded',
  'insufficient_liquidity', 'insufficient_amount', 'output_failed', 'no_output_holdings', 'failed', 'refund_failed', 'expired', 'cancelled',
] as const;
export type OneSwapSwapStatus = (typeof ONESWAP_SWAP_STATUSES)[number];

const STATE_OF: Readonly<Record<OneSwapSwapStatus, IntentState>> = {
  pending: 'awaiting_deposit',
  matched: 'in_progress',
  deposit_received: 'in_progress',
  forwarded: 'in_progress',
  processing: 'in_progress',
  sending_output: 'in_progress',
  completed: 'completed',
  slippage_failed: 'refunded',
  price_impact_exceeded: 'refunded',
  insufficient_liquidity: 'refunded',
  insufficient_amount: 'refunded',
  output_failed: 'refunded',
  no_output_holdings: 'failed',
  failed: 'failed',
  refund_failed: 'failed',
  expired: 'expired',
  cancelled: 'cancelled',
};

/**
 * The widest tolerance whose minOutput stays at or above `floor` when OneSwap expects
 * `expectedOutput`, rounded down, within the documented range.
 */
function toleranceFor(floor: Decimal, expectedOutput: Decimal): Decimal {
  const room = expectedOutput.gt(floor) ? divFloor10(expectedOutput.minus(floor), expectedOutput) : ZERO;
  return Decimal.min(Decimal.max(room, MIN_TOLERANCE), MAX_TOLERANCE);
}

/** A created intent's answer, for the request it answers; VenueUnreadable when it is not. */
function readIntent(answer: Record<string, unknown>, { give, want, amount }: IntentRequest): SwapIntent {
  if (typeof answer.intentId !== 'string' || !INTENT_ID.test(answer.intentId)) throw new VenueUnreadable("'intentId' is not an intent id");
  if (answer.inputToken !== give.instrument || answer.outputToken !== want.instrument) throw new VenueUnreadable('the intent is not for the pair asked');
  if (!decimalField(answer.expectedAmount, 'expectedAmount').eq(amount)) throw new VenueUnreadable("'expectedAmount' is not the amount asked for");
  if (!isPartyId(answer.depositAddress)) throw new VenueUnreadable("'depositAddress' is not a party id");
  return {
    intentId: answer.intentId,
    depositAddress: answer.depositAddress,
    depositReference: textField(answer.depositReference, 'depositReference'),
    amount,
    expectedOutput: optionalDecimal(answer.expectedOutput, 'expectedOutput'),
    // No minimum is no guarantee: below any floor.
    minOutput: optionalDecimal(answer.minOutput, 'minOutput') ?? ZERO,
    expiresAt: dateField(answer.expiresAt, 'expiresAt'),
  };
}

/** Why creation was refused; null for a failure to throw. */
function creationRefusal(err: unknown): 'no_pool' | 'below_minimum' | 'insufficient_liquidity' | 'intent_exists' | null {
  if (!(err instanceof VenueHttpError)) return null;
  if (isNoPool(err)) return 'no_pool';
  // The documented 409s: another active intent of the wallet, pool and input token, or an
  // ambiguous pair (thrown, for the operator to see, as the quote throws it).
  if (err.status === 409) return /ambiguous_pool_pair/.test(errorBodyText(err.body)) ? null : 'intent_exists';
  if (err.status !== 400) return null;
  if (/price[\s_-]*impact/i.test(errorBodyText(err.body))) return 'insufficient_liquidity';
  if (typeof err.body === 'object' && err.body !== null && 'minimumAmount' in err.body) return 'below_minimum';
  return null;
}

const speaksOfApiKey = (err: VenueHttpError): boolean => /api[\s_-]*key/i.test(errorBodyText(err.body));

function textField(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new VenueUnreadable(`'${field}' is not a non-empty string`);
  return value;
}

const optionalDecimal = (value: unknown, field: string): Decimal | null => (value === null || value === undefined ? null : decimalField(value, field));

function dateField(value: unknown, field: string): Date {
  const date = typeof value === 'string' ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) throw new VenueUnreadable(`'${field}' is not a timestamp`);
  return date;
}

/** The traffic fee in the give token, rounded up; null when none is stated or it is 0. */
function trafficFee(answer: Record<string, unknown>, amount: Decimal): Decimal | null {
  let fee: Decimal | null = null;
  if (answer.trafficFeeInInput !== undefined && answer.trafficFeeInInput !== null) {
    fee = decimalField(answer.trafficFeeInInput, 'trafficFeeInInput');
  }
  if (answer.inputAmountAfterTrafficFee !== undefined && answer.inputAmountAfterTrafficFee !== null) {
    const implied = amount.minus(decimalField(answer.inputAmountAfterTrafficFee, 'inputAmountAfterTrafficFee'));
    if (!fee || implied.gt(fee)) fee = implied;
  }
  return fee && fee.gt(0) ? ceil10(fee) : null;
}

/**
 * OneSwap's own "no such pool" answer: a 404 whose JSON body speaks of the pool or pair. A bare or
 * HTML 404 is a wrong base URL, which must read as a failing venue, not as one without pools.
 */
function isNoPool(err: VenueHttpError): boolean {
  return err.status === 404 && typeof err.body === 'object' && err.body !== null && /pool|pair/i.test(errorBodyText(err.body));
}

/**
 * A failure as the quote's rejection: the timeout, 404 (no pool) and a 400 over the price-impact
 * cap. Any other failure, a 409 ambiguous_pool_pair included, is thrown, so the quote engine logs
 * it and reports venue_error.
 */
function rejection(err: unknown): VenueQuote {
  if (err instanceof VenueTimeout) return unavailable('timeout');
  if (err instanceof VenueHttpError) {
    if (isNoPool(err)) return unavailable('no_pool');
    if (err.status === 400 && /price[\s_-]*impact/i.test(errorBodyText(err.body))) return unavailable('insufficient_liquidity');
  }
  throw err;
}
