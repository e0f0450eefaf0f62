// Cantex (CaviarNine), a constant-product AMM: its HTTP API as the CaviarNine cantex_sdk calls it
// (base https://api.cantex.io; the API key from its challenge login sent as `Authorization:
// Bearer <key>`, which the caller passes in VenueHttpOptions.headers).
//
// - Quote: POST /v2/pools/quote with string fields {sellAmount, sellInstrumentId,
//   sellInstrumentAdmin, buyInstrumentId, buyInstrumentAdmin} (the SDK's get_swap_quote) ->
//   `returned{amount, instrument_id, instrument_admin}`, the output, with the pool's LP fee
//   (`fees.fee_percentage`, e.g. "0.0005") already inside the price; `fees.network_fee{amount,
//   instrument_id, instrument_admin}`, a network fee charged on top of the sell amount (third-party
//   observation: ~0.79 CC at 100 CC sold, 0 from 500 CC); `prices`, `pools[]`,
//   `estimated_time_seconds`, which the quote does not need. Amounts are read as text, never floats.
// - Instrument admins (the token registry parties) are configuration, not something the quote
//   looks up: `instrumentAdmins`, by instrument id (CC is `Amulet`).
// - Errors: the SDK's CantexAPIError(status, body) only; 401/403 are auth failures; 429 and
//   502-504 are transient. The error body's shape is not documented.
// - Pools: GET /v2/pools/info; its shape is documented only by the SDK's parser:
//   {pools: [{contract_id, token_a_instrument_id, token_a_instrument_admin, token_b_instrument_id,
//   token_b_instrument_admin}]}.
//
// Ambiguous in the docs, and decided here:
// - The quote is `returned.amount` as gross (floored to 10 digits) and the network fee as the
//   fee, `on_top`, in the give token when `network_fee.instrument_id` is the give instrument (the
//   usual case: a CC fee on a CC sale). A network fee in the want instrument is reported as a
//   want-side fee (net = gross - fee). A fee in any other instrument cannot be stated in the give
//   or want token, so the answer is unreadable (venue_error, logged). A zero fee is no fee. The LP
//   fee is inside `returned.amount` and is not disclosed separately.
// - `returned` naming another instrument (or admin) than the one asked for is unreadable.
// - Price impact, from the quote's own answer (no round trip of its own): `pool_size`, the pool's
//   holdings of the token bought (as the SDK's SwapQuote names it), and `returned.amount` on the
//   constant-product curve give output / pool_size (see impact()). `prices.pool_before` is the
//   pool's spot too, but to 10 digits only: for CC -> CBTC (~0.0000015) that is 5 significant
//   digits, too few for an impact of a few bps. Without a usable pool_size the impact is null.
// - A missing `fees.network_fee` is unreadable rather than taken as zero: it is a documented field,
//   and guessing zero would overstate the net.
// - Rejections: a 400 or 404 whose body says a pool is not there (mentions "pool" with "not
//   found", "unknown", "does not exist", "no ... pool", ..., e.g. {"detail": "Pool not found"}) is
//   `no_pool`; any other 400/404 (a bare 404 from a wrong path, say) and every other status -
//   401/403 (the key), 429, 5xx - is thrown, so the engine logs it and reports venue_error.
// - Probe: live when /v2/pools/info answers 2xx with JSON, whatever its shape. Pairs are read from
//   the SDK's pool entries, skipping entries that cannot be read, tokens the service does not
//   quote, and tokens whose admin differs from the configured one. When no entry can be read (no
//   `pools` list, or none of ours), the probe assumes the pairs Cantex is known to list, CC/USDCx
//   and CC/CBTC, and lets the quote's own answer (no_pool) correct that per request.
import { ceil10, floor10, type Decimal } from '../decimal.js';
import { impactFromRates } from './venue-math.js';
import { CBTC, CC, pairKey, TOKENS, USDCX, type Token } from '../tokens.js';
import {
  unavailable,
  untilAborted,
  type Deadline,
  type Venue,
  type VenueFeeQuote,
  type VenueProbe,
  type VenueQuote,
  type VenueQuoteRequest,
} from './venue.js';
import { decimalField, errorBodyText, objectField, VenueFailure, VenueHttp, VenueHttpError, type VenueHttpOptions, VenueTimeout, VenueUnreadable } from './venue-http.js';

export const CANTEX_BASE_URL = 'https://api.cantex.io';

export interface CantexOptions extends VenueHttpOptions {
  /** The registry admin party of each instrument, by instrument id. */
  readonly instrumentAdmins: Readonly<Record<Token['instrument'], string>>;
}

/** The pairs assumed when /v2/pools/info lists none the service can read. */
const ASSUMED_PAIRS: readonly string[] = [pairKey(CC, USDCX), pairKey(CC, CBTC)];

export class CantexVenue implements Venue {
  readonly id = 'cantex';
  readonly settlementMode = 'managed-deposit' as const;
  private readonly http: VenueHttp;
  private readonly admins: Readonly<Record<Token['instrument'], string>>;

  constructor(options: CantexOptions) {
    const { instrumentAdmins, ...http } = options;
    this.http = new VenueHttp(http);
    this.admins = instrumentAdmins;
  }

  async quote(request: VenueQuoteRequest, deadline: Deadline): Promise<VenueQuote> {
    const { give, want, amount } = request;
    try {
      const body = {
        sellAmount: amount.toFixed(),
        sellInstrumentId: give.instrument,
        sellInstrumentAdmin: this.admins[give.instrument],
        buyInstrumentId: want.instrument,
        buyInstrumentAdmin: this.admins[want.instrument],
      };
      const answer = objectField(await this.http.postJson('/v2/pools/quote', body, deadline), 'the quote');
      const returned = objectField(answer.returned, "'returned'");
      this.expectInstrument(returned, want, 'returned');
      const output = decimalField(returned.amount, 'returned.amount');
      const gross = floor10(output);
      const fees = objectField(answer.fees, "'fees'");
      const fee = this.networkFee(objectField(fees.network_fee, "'fees.network_fee'"), request);
      if (gross.isZero()) return unavailable('below_minimum');
      return { available: true, gross, fee, priceImpact: this.impact(answer.pool_size, output, want) };
    } catch (err) {
      return rejection(err);
    }
  }

  async probe(signal: AbortSignal): Promise<VenueProbe> {
    let answer: unknown;
    try {
      answer = await this.http.getJson('/v2/pools/info', untilAborted(signal));
    } catch (err) {
      if (err instanceof VenueFailure) return { live: false, pairs: [] };
      throw err;
    }
    const { pairs, otherAdmins } = this.readPairs(answer);
    // Pools of our instruments under other admins, and none under ours: CANTEX_INSTRUMENT_ADMINS
    // is wrong. The venue reads as dead (venue_down, and so in the status), not as one whose
    // every quote is silently no_pool.
    if (pairs.length === 0 && otherAdmins) return { live: false, pairs: [] };
    return { live: true, pairs: pairs.length > 0 ? pairs : [...ASSUMED_PAIRS] };
  }

  /** The pairs of the pool entries that can be read, and whether any named our instruments under other admins; never throws. */
  private readPairs(answer: unknown): { pairs: string[]; otherAdmins: boolean } {
    const pools = typeof answer === 'object' && answer !== null ? (answer as { pools?: unknown }).pools : undefined;
    const pairs = new Set<string>();
    let otherAdmins = false;
    if (!Array.isArray(pools)) return { pairs: [], otherAdmins };
    for (const entry of pools) {
      if (typeof entry !== 'object' || entry === null) continue;
      const pool = entry as Record<string, unknown>;
      const a = this.tokenOf(pool.token_a_instrument_id, pool.token_a_instrument_admin);
      const b = this.tokenOf(pool.token_b_instrument_id, pool.token_b_instrument_admin);
      if (a && b && a !== b) pairs.add(pairKey(a, b));
      else if (TOKENS.some((t) => t.instrument === pool.token_a_instrument_id) && TOKENS.some((t) => t.instrument === pool.token_b_instrument_id)) otherAdmins = true;
    }
    return { pairs: [...pairs], otherAdmins };
  }

  /** The service's token with this instrument id and (when given) the configured admin. */
  private tokenOf(id: unknown, admin: unknown): Token | undefined {
    const token = TOKENS.find((t) => t.instrument === id);
    if (!token) return undefined;
    if (admin !== undefined && admin !== this.admins[token.instrument]) return undefined;
    return token;
  }

  private expectInstrument(leg: Record<string, unknown>, token: Token, what: string): void {
    if (leg.instrument_id !== undefined && leg.instrument_id !== token.instrument) {
      throw new VenueUnreadable(`'${what}' is in ${JSON.stringify(leg.instrument_id)}, not ${token.instrument}`);
    }
    if (leg.instrument_admin !== undefined && leg.instrument_admin !== this.admins[token.instrument]) {
      throw new VenueUnreadable(`'${what}' names admin ${JSON.stringify(leg.instrument_admin)} for ${token.instrument}`);
    }
  }

  /**
   * The price impact from `pool_size`, the pool's holdings of the token bought before the trade:
   * on the constant-product curve, output = y × a' / (x + a') (a' the amount after the LP fee), so
   * 1 - (output / amount) / spot, spot = y × (1 - fee) / x, is output / y = 1 - (y - output) / y.
   * Null when pool_size is absent, unreadable, of another instrument, or not above the output.
   */
  private impact(poolSize: unknown, output: Decimal, want: Token): Decimal | null {
    try {
      const leg = objectField(poolSize, "'pool_size'");
      if (leg.instrument_id !== want.instrument) return null;
      this.expectInstrument(leg, want, 'pool_size');
      const y = decimalField(leg.amount, 'pool_size.amount');
      return y.gt(output) ? impactFromRates(y.minus(output), y) : null;
    } catch (err) {
      if (err instanceof VenueUnreadable) return null;
      throw err;
    }
  }

  private networkFee(networkFee: Record<string, unknown>, { give, want }: VenueQuoteRequest): VenueFeeQuote | null {
    const amount = decimalField(networkFee.amount, 'fees.network_fee.amount');
    if (amount.isZero()) return null;
    const asset = networkFee.instrument_id === give.instrument ? give : networkFee.instrument_id === want.instrument ? want : undefined;
    if (!asset) throw new VenueUnreadable(`the network fee is in ${JSON.stringify(networkFee.instrument_id)}, neither ${give.instrument} nor ${want.instrument}`);
    if (networkFee.instrument_admin !== undefined && networkFee.instrument_admin !== this.admins[asset.instrument]) {
      throw new VenueUnreadable(`the network fee names admin ${JSON.stringify(networkFee.instrument_admin)} for ${asset.instrument}`);
    }
    // What the user pays rounds up.
    return { amount: ceil10(amount), asset, appliedTo: 'on_top' };
  }
}

/** Wording that says something is not there: with "pool", an unknown pool. */
const UNKNOWN = /not found|no such|does not exist|doesn't exist|unknown|missing|\bno\b[^.]*pool/i;

/**
 * A failure as the quote's rejection: the timeout, and a 400/404 about an unknown pool. Any other
 * failure is thrown, so the quote engine logs it and reports venue_error.
 */
function rejection(err: unknown): VenueQuote {
  if (err instanceof VenueTimeout) return unavailable('timeout');
  if (err instanceof VenueHttpError && (err.status === 400 || err.status === 404)) {
    const text = errorBodyText(err.body);
    if (/pool/i.test(text) && UNKNOWN.test(text)) return unavailable('no_pool');
  }
  throw err;
}
