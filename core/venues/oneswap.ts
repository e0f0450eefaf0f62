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
import { ceil10, dec, type Decimal } from '../decimal.js';
import { quoteFromOutputAfterGiveFee, statedImpact } from './venue-math.js';
import { CBTC, CC, pairKey, USDCX, type Token } from '../tokens.js';
import { unavailable, untilAborted, type Deadline, type Venue, type VenueProbe, type VenueQuote, type VenueQuoteRequest } from './venue.js';
import { decimalField, errorBodyText, objectField, VenueFailure, VenueHttp, VenueHttpError, type VenueHttpOptions, VenueTimeout, VenueUnreadable } from './venue-http.js';

export const ONESWAP_BASE_URL = 'https://api.oneswap.cc';

/** What the probe quotes on each pair. */
const PROBE_AMOUNT = dec('100');
const PROBE_PAIRS: readonly (readonly [Token, Token])[] = [
  [CC, USDCX],
  [CC, CBTC],
];

export class OneSwapVenue implements Venue {
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
