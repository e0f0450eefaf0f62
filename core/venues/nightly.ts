// Nightly CantonSwap: its public "Canton Swap API Docs" (cantonswap.nightly.app/docs; no auth; base
// https://mainnet.rpc.canton.nightly.app).
//
// - Tokens: GET /nswap/tokens -> {tokens: [{index, instrumentId, name, symbol, decimals,
//   displayDecimals, iconUrl, price, instrumentAdmin, minSwapAmount, maxSwapUsd}]}, amounts as
//   strings (the docs' ApiToken type). Read by the probe (which also tells which pairs exist) and
//   cached until the next probe; a quote reads it itself only when nothing is cached.
// - Quote: POST /nswap/quote {fromToken, toToken, amount, recipient, slippageTolerance?} ->
//   {fromToken, toToken, fromAmount, toAmount, minOutAmount, rate, priceImpact, memo, swapAddress,
//   magicAddress?} (documented). No fee is documented outside the price, so gross is `toAmount`
//   and the fee is null.
// - Maintenance: {"message": "Service under maintenance."} (third-party capture; its status is not
//   known, so the message is recognised on an error status and on a 200 alike) -> 'maintenance'.
// - `minSwapAmount` 125 for Amulet (third-party capture).
//
// Ambiguous in the docs, and decided here:
// - Token ids: `fromToken`/`toToken` are sent as the token list's `instrumentId` (the ledger's
//   identifier, e.g. "Amulet"), not its `symbol` (the docs say "Amulet" shows as CC in the UI
//   layer only). The service's tokens are matched to list entries by `instrumentId` equal to the
//   token's instrument, or else by `symbol` equal to its symbol or instrument, case-insensitively.
// - `recipient` is required, but a quote has no taker yet: a configured placeholder party is sent
//   (`recipient` option). The quote is assumed not to depend on it; a swap re-quotes with the
//   taker's party.
// - `amount` is sent as a decimal string, like every amount the API shows; `slippageTolerance` is
//   left out (the service uses `toAmount`, not `minOutAmount`).
// - `minSwapAmount` is in units of the token and applies to the give token: below it is
//   'below_minimum' without asking for a quote. `maxSwapUsd` applies to the give token too, valued
//   at that token's `price` (taken as USD per token): above it is 'above_maximum'. Without a
//   usable price (absent, empty or zero) the cap is left to the venue.
// - `fromAmount` must equal the amount sent: an answer for another amount (or in other units,
//   e.g. base units) would make `toAmount` mean something else, so it is unreadable (venue_error).
// - Only pairs with CC are offered (the probe's pairs); anything else is 'no_pool'.
// - `priceImpact` is taken as the share of the pool's price the trade moves, a fraction, fees
//   aside: for a constant-product pool, in' / (reserveIn + in') of the input after the in-price
//   fee, which is 1 - (toAmount / amount) / spot with spot the pool's marginal rate after that fee
//   (the service's definition, openapi/v2.yaml QuoteVenue.priceImpact). Rounded up to 10 digits;
//   absent, unreadable or not below 1, it is not known (null), and the quote stands.
//
// Execution (executionTerms, the venue port's ExecutableVenue): the docs' integration flow, step by
// step: the token list's limits, then POST /nswap/quote with the taker's party as `recipient`;
// the taker's wallet then transfers `fromAmount` to `swapAddress` with `memo` as the transfer's
// reason (or to `magicAddress`, without a memo, when the answer has one), and Nightly pays the
// recipient at least `minOutAmount`. Decided here, where the docs are silent:
// - `slippageTolerance` is a fraction (0.005 = 0.5 %), sent as a decimal string, and Nightly's
//   minOutAmount is toAmount × (1 - slippageTolerance). The adapter sends the largest tolerance
//   that keeps that at or above the service's floor when Nightly pays what the quote the floor came
//   from said: (expectedOut - floor) / expectedOut, rounded down to 10 digits (0 when the floor is
//   not below expectedOut). Whatever Nightly answers, a `minOutAmount` below the floor is refused
//   (VenueFloorBelowService, 502 venue_floor_below_service): Nightly's price moved since, or it
//   reads the tolerance otherwise; the service never plans on a guarantee below its own floor.
// - The answer must be for the pair and amount asked, with a non-empty `memo` and a party id as
//   `swapAddress` (and as `magicAddress` when present); anything else is unreadable (venue_error).
// - The same limits as a quote: below `minSwapAmount` or above `maxSwapUsd` is refused before
//   asking (below_minimum, above_maximum); maintenance and the venue's timeout as for a quote.
import { Decimal, divFloor10, ZERO } from '../decimal.js';
import { isPartyId } from '../party.js';
import { CC, pairKey, TOKENS, type Token } from '../tokens.js';
import {
  unavailable, untilAborted, VenueFloorBelowService, type Deadline, type ExecutableVenue, type ExecutionTermsRequest, type VenueExecutionTerms, type VenueProbe,
  type VenueQuote, type VenueQuoteRequest,
} from './venue.js';
import { decimalField, objectField, VenueFailure, VenueHttp, VenueHttpError, type VenueHttpOptions, VenueTimeout, VenueUnreadable } from './venue-http.js';
import { statedImpact } from './venue-math.js';

export const NIGHTLY_BASE_URL = 'https://mainnet.rpc.canton.nightly.app';

export interface NightlyVenueOptions extends VenueHttpOptions {
  /** The Canton party sent as `recipient` at quote time, when there is no taker yet. */
  readonly recipient: string;
}

/** One of the service's tokens as Nightly lists it. */
interface NightlyToken {
  readonly instrumentId: string;
  readonly minSwapAmount: Decimal | null;
  readonly maxSwapUsd: Decimal | null;
  /** USD per token; null when absent or zero. */
  readonly price: Decimal | null;
}

const MAINTENANCE = /maintenance/i;

export class NightlyVenue implements ExecutableVenue {
  readonly id = 'nightly';
  readonly settlementMode = 'managed-deposit' as const;
  private readonly http: VenueHttp;
  private readonly recipient: string;
  /** The service's tokens Nightly lists, from the last read of /nswap/tokens; null before one. */
  private tokens: ReadonlyMap<Token, NightlyToken> | null = null;

  constructor(options: NightlyVenueOptions) {
    if (!options.recipient) throw new Error('the Nightly venue needs a recipient party for its quotes');
    this.http = new VenueHttp(options);
    this.recipient = options.recipient;
  }

  async quote(request: VenueQuoteRequest, deadline: Deadline): Promise<VenueQuote> {
    try {
      const pair = await this.listed(request, deadline);
      if ('rejectionCode' in pair) return unavailable(pair.rejectionCode);
      const body = { fromToken: pair.from.instrumentId, toToken: pair.to.instrumentId, amount: request.amount.toFixed(), recipient: this.recipient };
      const answer = await this.askQuote(body, request.amount, deadline);
      if (answer === 'maintenance') return unavailable('maintenance');
      const toAmount = decimalField(answer.toAmount, 'toAmount');
      if (toAmount.isZero()) return unavailable('below_minimum');
      return { available: true, gross: toAmount, fee: null, priceImpact: statedImpact(answer.priceImpact) };
    } catch (err) {
      return rejection(err);
    }
  }

  async executionTerms(request: ExecutionTermsRequest, deadline: Deadline): Promise<VenueExecutionTerms> {
    const { amount, recipient, floor, expectedOut } = request;
    if (!isPartyId(recipient)) throw new TypeError("the recipient of Nightly's terms must be a party id");
    try {
      const pair = await this.listed(request, deadline);
      if ('rejectionCode' in pair) return pair;
      const body = { fromToken: pair.from.instrumentId, toToken: pair.to.instrumentId, amount: amount.toFixed(), recipient, slippageTolerance: toleranceFor(floor, expectedOut).toFixed() };
      const answer = await this.askQuote(body, amount, deadline);
      if (answer === 'maintenance') return { available: false, rejectionCode: 'maintenance' };
      if (answer.fromToken !== pair.from.instrumentId || answer.toToken !== pair.to.instrumentId) throw new VenueUnreadable('the answer is not for the pair asked');
      const toAmount = decimalField(answer.toAmount, 'toAmount');
      const minOut = decimalField(answer.minOutAmount, 'minOutAmount');
      if (minOut.gt(toAmount)) throw new VenueUnreadable(`'minOutAmount' ${minOut.toFixed()} is above 'toAmount' ${toAmount.toFixed()}`);
      if (typeof answer.memo !== 'string' || answer.memo === '') throw new VenueUnreadable("'memo' is not a non-empty string");
      if (!isPartyId(answer.swapAddress)) throw new VenueUnreadable("'swapAddress' is not a party id");
      let magicAddress: string | null = null;
      if (answer.magicAddress !== undefined && answer.magicAddress !== null) {
        if (!isPartyId(answer.magicAddress)) throw new VenueUnreadable("'magicAddress' is not a party id");
        magicAddress = answer.magicAddress;
      }
      // Nothing is planned on a guarantee below the service's own floor.
      if (minOut.lt(floor)) throw new VenueFloorBelowService(this.id, minOut, floor);
      const priceImpact = answer.priceImpact === undefined || answer.priceImpact === null ? null : decimalField(answer.priceImpact, 'priceImpact');
      return { available: true, terms: { target: answer.swapAddress, memo: answer.memo, magicAddress, minOut, fromAmount: amount, toAmount, priceImpact } };
    } catch (err) {
      const refused = rejection(err);
      if (refused.available) throw err;
      return refused;
    }
  }

  /** The pair as Nightly lists it, within its limits for `amount`; or why not. */
  private async listed(request: VenueQuoteRequest, deadline: Deadline): Promise<{ from: NightlyToken; to: NightlyToken } | { available: false; rejectionCode: 'no_pool' | 'below_minimum' | 'above_maximum' }> {
    const { give, want, amount } = request;
    const refuse = (rejectionCode: 'no_pool' | 'below_minimum' | 'above_maximum') => ({ available: false as const, rejectionCode });
    if (give !== CC && want !== CC) return refuse('no_pool');
    const tokens = this.tokens ?? (await this.readTokens(deadline));
    const from = tokens.get(give);
    const to = tokens.get(want);
    if (!from || !to) return refuse('no_pool');
    if (from.minSwapAmount && amount.lt(from.minSwapAmount)) return refuse('below_minimum');
    if (from.maxSwapUsd && from.price && amount.times(from.price).gt(from.maxSwapUsd)) return refuse('above_maximum');
    return { from, to };
  }

  /** POST /nswap/quote: its answer for `amount`, or 'maintenance'. */
  private async askQuote(body: Record<string, string>, amount: Decimal, deadline: Deadline): Promise<Record<string, unknown> | 'maintenance'> {
    const answer = objectField(await this.http.postJson('/nswap/quote', body, deadline), 'the quote');
    if (answer.toAmount === undefined && isMaintenance(answer)) return 'maintenance';
    const fromAmount = decimalField(answer.fromAmount, 'fromAmount');
    if (!fromAmount.eq(amount)) throw new VenueUnreadable(`'fromAmount' ${fromAmount.toFixed()} is not the amount asked, ${amount.toFixed()}`);
    return answer;
  }

  async probe(signal: AbortSignal): Promise<VenueProbe> {
    try {
      const tokens = await this.readTokens(untilAborted(signal));
      const pairs = tokens.has(CC) ? [...tokens.keys()].filter((t) => t !== CC).map((t) => pairKey(CC, t)) : [];
      return { live: true, pairs };
    } catch (err) {
      // Maintenance reads the venue dead until it lists its tokens again.
      if (err instanceof VenueFailure) return { live: false, pairs: [] };
      throw err;
    }
  }

  private async readTokens(deadline: Deadline): Promise<ReadonlyMap<Token, NightlyToken>> {
    const answer = objectField(await this.http.getJson('/nswap/tokens', deadline), 'the tokens answer');
    if (!Array.isArray(answer.tokens)) {
      if (isMaintenance(answer)) throw new NightlyMaintenance();
      throw new VenueUnreadable("'tokens' is not a list");
    }
    const entries = answer.tokens.map((entry, i) => objectField(entry, `tokens[${i}]`));
    const tokens = new Map<Token, NightlyToken>();
    for (const token of TOKENS) {
      const i = findEntry(entries, token);
      // Tokens the service does not quote are not its concern, nor are their figures read.
      if (i < 0) continue;
      const entry = entries[i]!;
      const price = optionalDecimal(entry.price, `tokens[${i}].price`);
      tokens.set(token, {
        instrumentId: entry.instrumentId as string,
        minSwapAmount: optionalDecimal(entry.minSwapAmount, `tokens[${i}].minSwapAmount`),
        maxSwapUsd: optionalDecimal(entry.maxSwapUsd, `tokens[${i}].maxSwapUsd`),
        price: price && !price.isZero() ? price : null,
      });
    }
    this.tokens = tokens;
    return tokens;
  }
}

const ALMOST_ONE = new Decimal('0.9999999999');

/**
 * The largest tolerance, to 10 digits, for which expectedOut × (1 - tolerance) is not below the
 * floor: (expectedOut - floor) / expectedOut rounded down; 0 when the floor is not below expectedOut.
 */
export function toleranceFor(floor: Decimal, expectedOut: Decimal): Decimal {
  if (!expectedOut.gt(floor)) return ZERO;
  const tolerance = divFloor10(expectedOut.minus(floor), expectedOut);
  return tolerance.gt(ALMOST_ONE) ? ALMOST_ONE : tolerance;
}

/** The venue says it is under maintenance (an answer other than the one asked for). */
class NightlyMaintenance extends VenueFailure {
  override readonly name = 'NightlyMaintenance';
}

/** The list entry for `token`: by instrumentId first, else by symbol; -1 when not listed. */
function findEntry(entries: readonly Record<string, unknown>[], token: Token): number {
  const same = (value: unknown, name: string) => typeof value === 'string' && value.toLowerCase() === name.toLowerCase();
  const byId = entries.findIndex((e) => same(e.instrumentId, token.instrument));
  if (byId >= 0) return byId;
  return entries.findIndex((e) => typeof e.instrumentId === 'string' && e.instrumentId !== '' && (same(e.symbol, token.symbol) || same(e.symbol, token.instrument)));
}

/** An amount the list may leave out (absent, null or empty): null then. */
function optionalDecimal(value: unknown, field: string): Decimal | null {
  if (value === undefined || value === null || value === '') return null;
  return decimalField(value, field);
}

function isMaintenance(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const message = (body as { message?: unknown }).message;
  return typeof message === 'string' && MAINTENANCE.test(message);
}

/**
 * A failure as the quote's rejection: the venue's own timeout, and its maintenance message. Any
 * other failure is thrown, so the quote engine logs it and reports venue_error.
 */
function rejection(err: unknown): VenueQuote {
  if (err instanceof VenueTimeout) return unavailable('timeout');
  if (err instanceof NightlyMaintenance) return unavailable('maintenance');
  if (err instanceof VenueHttpError && isMaintenance(err.body)) return unavailable('maintenance');
  throw err;
}
