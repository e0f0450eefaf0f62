// The sandbox's Cantex on the wire: the endpoints core/venues/cantex.ts calls, as the CaviarNine
// cantex_sdk documents them, answered from the sandbox cantex spec's constant-product pools.
//
// - POST /v2/pools/quote {sellAmount, sellInstrumentId, sellInstrumentAdmin, buyInstrumentId,
//   buyInstrumentAdmin} (strings) -> {returned, prices, fees{..., network_fee}, pools[],
//   pool_size, estimated_time_seconds}, every amount a decimal string. `returned.amount` is
//   priced exactly as the in-process venue prices it (the LP fee inside the price); the network
//   fee is the spec's own fee function's answer (Cantex states only on-top fees), or "0" in CC
//   when it charges none.
// - GET /v2/pools/info -> {pools: [{contract_id, token_a_instrument_id, token_a_instrument_admin,
//   token_b_instrument_id, token_b_instrument_admin}]}: the adapter's probe.
//
// Choices where the docs say nothing:
// - Errors are FastAPI-style {"detail": ...}, the shape the adapter's fixtures use. An instrument
//   is its id AND its admin, so a wrong admin names an instrument no pool holds: 404 "Pool not
//   found", as for a pair without a pool (the adapter's no_pool). Malformed requests are 400 with
//   wording that never says "pool", so the adapter reports them as venue errors, not no_pool.
// - Anything but `Authorization: Bearer <SANDBOX_VENUE_KEY>` is 401 (the adapter: venue_error).
//   Unknown paths are 404 and known paths under another method 405 before the key is checked, as
//   a FastAPI router answers them.
// - The LP fee splits 5 % to the admin, 95 % to liquidity (the split the adapter's fixture
//   shows). Prices are buy per sell to 10 fractional digits: `pool_before` the pool's spot,
//   `pool_after` the spot once the whole sell amount is in and `returned` out, `trade` returned /
//   sold, `trade_no_fees` the same without the LP fee, `slippage` 1 - trade_no_fees / pool_before.
import { createHash } from 'node:crypto';
import { BPS, ceil10, dec, divFloor10, floor10, toWire, type Decimal } from '../../core/decimal.js';
import { CBTC, CC, TOKENS, USDCX, type Token } from '../../core/tokens.js';
import { payoutFeeInside, poolPayout } from '../pricing/constant-product.js';
import type { SandboxFeeQuote, SandboxQuoteRequest } from '../pricing/quote-shapes.js';
import type { AmmPool, PricedTrade, SandboxVenueSpec } from './sandbox-venue.js';
import { jsonReply, SANDBOX_INSTRUMENT_ADMINS, SANDBOX_VENUE_KEY, type SandboxVenueDefinition, type WireHandler, type WireRequest, type WireResponse } from './wire.js';

type Admins = Readonly<Record<Token['instrument'], string>>;

const ROUTES: Readonly<Record<string, string>> = { '/v2/pools/quote': 'POST', '/v2/pools/info': 'GET' };
const ADMIN_SHARE = dec('0.05');
const ONE = dec('1');
/** A Daml Decimal: 10 fractional digits at most; 20 integer digits is more than any supply. */
const AMOUNT_TEXT = /^(0|[1-9][0-9]{0,19})(\.[0-9]{1,10})?$/;
/** Not modelled by the sandbox: Cantex settles in a few Canton rounds. */
const ESTIMATED_TIME_SECONDS = '6';

const detail = (status: number, text: string): WireResponse => jsonReply(status, { detail: text });
const POOL_NOT_FOUND = detail(404, 'Pool not found');

class BadRequest extends Error {}

export function cantexWire(spec: SandboxVenueSpec, instrumentAdmins: Admins): WireHandler {
  const { pricing } = spec;
  if (pricing.kind !== 'amm') throw new Error(`cantexWire: ${spec.id} is not an AMM`);
  // Cantex documents no minimum; one in the spec would be a mechanic this wire cannot state.
  if (spec.minCc) throw new Error(`cantexWire: ${spec.id} has a minimum Cantex cannot express`);
  // The pool objects themselves, so every request reads their current reserves.
  const { pools } = pricing;
  const { inPriceFeeBps } = pricing;
  const lpFeeRate = BPS.times(inPriceFeeBps);
  // Stable per pool across restarts, shaped like a Canton contract id.
  const contractId = (pool: AmmPool) => `00${createHash('sha256').update(`sandbox-cantex-pool:${pool.quote.instrument}`).digest('hex')}`;
  const leg = (amount: Decimal, token: Token) => ({ amount: toWire(amount), instrument_id: token.instrument, instrument_admin: instrumentAdmins[token.instrument] });

  /** The token an (id, admin) pair names; undefined for anything else. */
  const instrument = (id: string, admin: string) => TOKENS.find((t) => t.instrument === id && instrumentAdmins[t.instrument] === admin);

  function poolsInfo(): WireResponse {
    return jsonReply(200, {
      pools: pools.map((pool) => ({
        contract_id: contractId(pool),
        token_a_instrument_id: CC.instrument,
        token_a_instrument_admin: instrumentAdmins[CC.instrument],
        token_b_instrument_id: pool.quote.instrument,
        token_b_instrument_admin: instrumentAdmins[pool.quote.instrument],
      })),
    });
  }

  function quote(body: string): WireResponse {
    const fields = readQuoteRequest(body);
    const sell = instrument(fields.sellInstrumentId, fields.sellInstrumentAdmin);
    const buy = instrument(fields.buyInstrumentId, fields.buyInstrumentAdmin);
    const other = sell === CC ? buy : buy === CC ? sell : undefined;
    const pool = other && pools.find((p) => p.quote === other);
    if (!sell || !buy || !pool) return POOL_NOT_FOUND;
    const amount = dec(fields.sellAmount);
    const sellingCc = sell === CC;
    const [reserveIn, reserveOut] = sellingCc ? [pool.baseReserve, pool.quoteReserve] : [pool.quoteReserve, pool.baseReserve];

    // As SandboxVenue prices it, so the wire and the in-process venue are the same venue.
    const returned = payoutFeeInside(reserveIn, reserveOut, amount, inPriceFeeBps);
    const withoutLpFee = poolPayout(reserveIn, reserveOut, amount);
    const networkFee = spec.fee({ give: sell, want: buy, amount }, { gross: returned, ccSize: sellingCc ? amount : returned });
    const lpFee = ceil10(amount.times(lpFeeRate));
    const adminFee = floor10(lpFee.times(ADMIN_SHARE));

    return jsonReply(200, {
      returned: leg(returned, buy),
      prices: {
        pool_before: toWire(divFloor10(reserveOut, reserveIn)),
        pool_after: toWire(divFloor10(reserveOut.minus(returned), reserveIn.plus(amount))),
        slippage: toWire(floor10(ONE.minus(withoutLpFee.times(reserveIn).div(amount.times(reserveOut))))),
        trade: toWire(divFloor10(returned, amount)),
        trade_no_fees: toWire(divFloor10(withoutLpFee, amount)),
      },
      fees: {
        fee_percentage: toWire(lpFeeRate),
        amount_admin: toWire(adminFee),
        amount_liquidity: toWire(lpFee.minus(adminFee)),
        instrument_id: sell.instrument,
        instrument_admin: instrumentAdmins[sell.instrument],
        // The spec's fee is CC's network fee; none is "0" of it, as Cantex answers from 500 CC.
        network_fee: networkFee ? leg(ceil10(networkFee.amount), networkFee.asset) : leg(dec('0'), CC),
      },
      pools: [{ pool_id: `${CC.instrument}-${pool.quote.instrument}`, contract_id: contractId(pool), sell: leg(amount, sell), buy: leg(returned, buy) }],
      pool_size: leg(reserveOut, buy),
      estimated_time_seconds: ESTIMATED_TIME_SECONDS,
    });
  }

  return (request: WireRequest): WireResponse => {
    const method = ROUTES[request.path];
    if (!method) return detail(404, 'Not Found');
    if (request.method !== method) return detail(405, 'Method Not Allowed');
    // The auth scheme's name is case-insensitive (RFC 9110); the key is not.
    const credentials = /^bearer +(.+)$/i.exec(String(request.headers.authorization ?? ''));
    if (credentials?.[1] !== SANDBOX_VENUE_KEY) return detail(401, 'Invalid API key');
    if (method === 'GET') return poolsInfo();
    try {
      return quote(request.body);
    } catch (err) {
      if (err instanceof BadRequest) return detail(400, err.message);
      throw err;
    }
  };
}

interface QuoteFields {
  readonly sellAmount: string;
  readonly sellInstrumentId: string;
  readonly sellInstrumentAdmin: string;
  readonly buyInstrumentId: string;
  readonly buyInstrumentAdmin: string;
}

const QUOTE_FIELDS = ['sellAmount', 'sellInstrumentId', 'sellInstrumentAdmin', 'buyInstrumentId', 'buyInstrumentAdmin'] as const;

/** The quote request's fields, all strings as the SDK sends them (a JSON number is refused, so no float becomes an amount). */
function readQuoteRequest(body: string): QuoteFields {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new BadRequest('the request body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new BadRequest('the request body is not a JSON object');
  const fields = parsed as Record<string, unknown>;
  for (const name of QUOTE_FIELDS) {
    if (typeof fields[name] !== 'string') throw new BadRequest(`${name} must be a string`);
  }
  const { sellAmount } = fields as unknown as QuoteFields;
  if (!AMOUNT_TEXT.test(sellAmount) || dec(sellAmount).isZero()) throw new BadRequest('sellAmount must be a positive decimal with at most 10 fractional digits');
  return fields as unknown as QuoteFields;
}

const CANTEX_FEE_FREE_FROM_CC = dec('500');
const CANTEX_NETWORK_FEE: SandboxFeeQuote = { amount: dec('0.79'), asset: CC, appliedTo: 'on_top' };

/** Cantex-style network fee: a flat CC charge on top of the give amount for trades under 500 CC. */
function cantexNetworkFee(_request: SandboxQuoteRequest, trade: PricedTrade): SandboxFeeQuote | null {
  return trade.ccSize.gte(CANTEX_FEE_FREE_FROM_CC) ? null : CANTEX_NETWORK_FEE;
}

/**
 * Cantex: constant-product AMM with a 0.05 % LP fee inside the price and a network fee charged
 * on top of the give amount.
 */
export function createCantexSpec(): SandboxVenueSpec {
  return {
    id: 'cantex',
    pricing: {
      kind: 'amm',
      inPriceFeeBps: 5,
      pools: [
        { quote: USDCX, baseReserve: dec('30000000'), quoteReserve: dec('4485000') },
        { quote: CBTC, baseReserve: dec('10000000'), quoteReserve: dec('14.95') },
      ],
    },
    fee: cantexNetworkFee,
  };
}

/** The sandbox's cantex: its market and its wire, under its prefix. */
export const cantexVenue: SandboxVenueDefinition = { id: 'cantex', prefix: '/cantex', keyed: true, spec: createCantexSpec, wire: (spec) => cantexWire(spec, SANDBOX_INSTRUMENT_ADMINS) };
