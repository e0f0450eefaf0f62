// Tradecraft, a constant-product AMM: its public "Tradecraft AMM HTTP API" (OpenAPI v0.1.8.7, no
// auth; base https://api.tradecraft.fi/v1).
//
// - Quote: GET /quoteForFixedInput/{give}/{want}?givingAmount=<amount> -> {"user_gets": <number>},
//   the output after the pool's fees. Documented in Tradecraft's OpenAPI; the number's precision
//   (16 significant digits seen in a third-party capture) is kept by reading it as text.
// - Fees: GET /pools -> {pools: [{token1, token2, ..., lp_fee_percent, operator_fee_percent}]},
//   where 0.3 means 0.3 %. Read by the probe, which also tells which pairs exist.
// - Errors: 400 {error}, e.g. {"error": "No AMM with id TC CC/NOPE LP"} (third-party capture).
//
// Ambiguous in the docs, and decided here: the fee is taken from the give amount (the pool's
// total of LP and operator fee), so `user_gets` is the curve's output for amount - fee. The quote
// states it as the service's QuoteVenue does for a fee deducted from the give amount: gross is
// `user_gets` at the quote's average rate for the whole amount, floor(user_gets x amount /
// (amount - fee)), so that net = floor(gross x (amount - fee) / amount) never exceeds what the
// venue said. A third-party note says the fee applies on both legs; if so, `user_gets` already
// includes it and the disclosed fee understates it, never the net.
//
// Price impact, with no round trip of its own: the quote states only `user_gets`, so the spot
// comes from the pool's holdings as /pools last stated them (`token1_holdings`,
// `token2_holdings`, read with the fees: at each liveness probe). On Tradecraft's constant-product
// curve, x the holdings of the give token and a' the amount less the fee, user_gets = y × a' /
// (x + a'): gross's rate at the margin is y / x and its rate for the amount y / (x + a'), so the
// impact is 1 - x / (x + a'), whatever y is. Between two reads of /pools the holdings drift as the
// pool trades; without them the impact is not known (null).
//
// Execution (executionTerms, the venue port's ExecutableVenue): the taker's wallet transfers the
// give amount to the pair's pool party (configured: TRADECRAFT_POOL_PARTIES) with the service's
// floor as the memo ("Guide: Specifying Minimums": the trade pays at least the memo's number or
// the tokens are returned), so the venue's minimum is the floor itself. `toAmount` is the
// venue's `user_gets` for the amount now. A pair without a configured pool party is no_pool.
import { ceil10, toWire, type Decimal } from '../decimal.js';
import { impactFromRates, quoteFromOutputAfterGiveFee } from './venue-math.js';
import { pairKey, TOKENS, type Token } from '../tokens.js';
import {
  unavailable, untilAborted, type Deadline, type ExecutableVenue, type ExecutionTermsRequest, type VenueExecutionTerms, type VenueProbe, type VenueQuote, type VenueQuoteRequest,
} from './venue.js';
import { decimalField, objectField, VenueFailure, VenueHttp, VenueHttpError, type VenueHttpOptions, VenueTimeout, VenueUnreadable } from './venue-http.js';

export const TRADECRAFT_BASE_URL = 'https://api.tradecraft.fi/v1';

/** Tradecraft's path token for each of the service's tokens. */
const PATH_TOKEN: Readonly<Record<Token['symbol'], string>> = { CC: 'CC', USDCx: 'USDCx', CBTC: 'CBTC' };


interface PoolFees {
  /** The fee's share of the give amount, e.g. 0.003. */
  readonly rate: Decimal;
  /** The pool's holdings of each of its tokens; null when /pools does not state them. */
  readonly holdings: ReadonlyMap<Token, Decimal> | null;
}

export interface TradecraftVenueOptions extends VenueHttpOptions {
  /** The pool party each pair's deposits go to, by pairKey; without one a pair cannot be executed. */
  readonly poolParties?: Readonly<Record<string, string>>;
}

export class TradecraftVenue implements ExecutableVenue {
  readonly id = 'tradecraft';
  readonly settlementMode = 'managed-deposit' as const;
  private readonly http: VenueHttp;
  /** Fees per pair, by pairKey, from the last read of /pools (by the probe, or a quote before it). */
  private fees: Map<string, PoolFees> | null = null;
  private readonly poolParties: Readonly<Record<string, string>>;

  constructor(options: TradecraftVenueOptions) {
    this.poolParties = options.poolParties ?? {};
    // Tradecraft sends its amounts and fee percentages as JSON numbers.
    this.http = new VenueHttp({ ...options, amountFields: ['user_gets', 'lp_fee_percent', 'operator_fee_percent', 'token1_holdings', 'token2_holdings'] });
  }

  async quote(request: VenueQuoteRequest, deadline: Deadline): Promise<VenueQuote> {
    const pair = pairKey(request.give, request.want);
    try {
      // /pools is read once, then refreshed by the probe: a pair it does not list is no_pool
      // without a round trip per quote.
      const fees = (this.fees ?? (await this.readPools(deadline))).get(pair);
      if (!fees) return unavailable('no_pool');
      const path = `/quoteForFixedInput/${PATH_TOKEN[request.give.symbol]}/${PATH_TOKEN[request.want.symbol]}?givingAmount=${request.amount.toFixed()}`;
      const answer = objectField(await this.http.getJson(path, deadline), 'the quote');
      const userGets = decimalField(answer.user_gets, 'user_gets');
      const fee = ceil10(request.amount.times(fees.rate));
      const quote = quoteFromOutputAfterGiveFee(userGets, request.amount, fee, request.give);
      const x = fees.holdings?.get(request.give);
      if (!quote.available || !x) return quote;
      return { ...quote, priceImpact: impactFromRates(x, x.plus(request.amount.minus(fee))) };
    } catch (err) {
      return rejection(err);
    }
  }

  async executionTerms(request: ExecutionTermsRequest, deadline: Deadline): Promise<VenueExecutionTerms> {
    const { give, want, amount, floor } = request;
    const target = this.poolParties[pairKey(give, want)];
    if (!target) return { available: false, rejectionCode: 'no_pool' };
    try {
      const path = `/quoteForFixedInput/${PATH_TOKEN[give.symbol]}/${PATH_TOKEN[want.symbol]}?givingAmount=${amount.toFixed()}`;
      const toAmount = decimalField(objectField(await this.http.getJson(path, deadline), 'the quote').user_gets, 'user_gets');
      // The memo carries the floor, which the pool pays or returns the deposit: the venue's minimum is the floor.
      return { available: true, terms: { target, memo: toWire(floor), magicAddress: null, minOut: floor, fromAmount: amount, toAmount, priceImpact: null } };
    } catch (err) {
      const refused = rejection(err);
      if (refused.available) throw err;
      return refused;
    }
  }

  async probe(signal: AbortSignal): Promise<VenueProbe> {
    try {
      return { live: true, pairs: [...(await this.readPools(untilAborted(signal))).keys()] };
    } catch (err) {
      if (err instanceof VenueFailure) return { live: false, pairs: [] };
      throw err;
    }
  }

  private async readPools(deadline: Deadline): Promise<Map<string, PoolFees>> {
    const answer = objectField(await this.http.getJson('/pools', deadline), 'the pools answer');
    if (!Array.isArray(answer.pools)) throw new VenueUnreadable("'pools' is not a list");
    const fees = new Map<string, PoolFees>();
    for (const [i, entry] of answer.pools.entries()) {
      const pool = objectField(entry, `pools[${i}]`);
      const a = TOKENS.find((t) => PATH_TOKEN[t.symbol] === pool.token1);
      const b = TOKENS.find((t) => PATH_TOKEN[t.symbol] === pool.token2);
      // Pools of tokens the service does not quote (CETH, HANDL) are not its concern.
      if (!a || !b || a === b) continue;
      const percent = decimalField(pool.lp_fee_percent, `pools[${i}].lp_fee_percent`).plus(decimalField(pool.operator_fee_percent, `pools[${i}].operator_fee_percent`));
      fees.set(pairKey(a, b), { rate: percent.div(100), holdings: holdingsOf(pool, a, b) });
    }
    this.fees = fees;
    return fees;
  }
}

/** A pool's holdings of its two tokens, when /pools states both as positive amounts: they only inform the price impact, so anything else is none. */
function holdingsOf(pool: Record<string, unknown>, a: Token, b: Token): ReadonlyMap<Token, Decimal> | null {
  try {
    const holdings = new Map([
      [a, decimalField(pool.token1_holdings, 'token1_holdings')],
      [b, decimalField(pool.token2_holdings, 'token2_holdings')],
    ]);
    return [...holdings.values()].every((h) => h.gt(0)) ? holdings : null;
  } catch (err) {
    if (err instanceof VenueUnreadable) return null;
    throw err;
  }
}

/**
 * A failure as the quote's rejection: the venue's own timeout, and a 400 for an unknown pool. Any
 * other failure is thrown, so the quote engine logs it and reports venue_error.
 */
function rejection(err: unknown): VenueQuote {
  if (err instanceof VenueTimeout) return unavailable('timeout');
  if (err instanceof VenueHttpError && err.status === 400) {
    const message = typeof err.body === 'object' && err.body !== null ? (err.body as { error?: unknown }).error : undefined;
    if (typeof message === 'string' && /no amm/i.test(message)) return unavailable('no_pool');
  }
  throw err;
}
