// Temple's wire (adapter: core/venues/temple.ts), answered from the sandbox temple's order books.
// Temple publishes no API reference; the one endpoint is the third-party SDK's, as the adapter reads it:
//
// - GET /api/v1/market/orderbook?symbol=Amulet/USDCx&levels=N, header `X-API-Key` ->
//   {bids: [{price, quantity}], asks: [{price, quantity}]}: price in quote currency per CC,
//   quantity in CC, best level first, at most N levels a side. Symbols: `Amulet/<quote>` for each
//   of the spec's books (Amulet/USDCx, Amulet/CBTC). The adapter's probe reads the same with levels=1.
//
// The adapter walks the levels itself and hard-codes the taker fee (1 bp of the give amount) and
// the minimum order (1 CC): Temple serves neither, so nothing here does; they agree with the
// sandbox spec's, which the test holds.
//
// Decided here, where the SDK is silent:
// - Amounts are decimal strings, which the adapter reads exactly; a price the venue pays (a bid)
//   and every quantity are rounded down, a price it charges (an ask) up, to 10 fractional digits.
// - Without `levels`, the whole book; a `levels` that is not a positive integer is a 400.
// - No error body is documented: errors are {"error": "<message>"}, as the adapter's fixtures
//   assume: 401 for a missing or wrong key (checked before anything else, as a gateway does), 400
//   for a missing symbol or bad levels, 404 for an unknown symbol or path, 405 for a method other
//   than GET on the book.
import { ceil10, dec, floor10 } from '../../core/decimal.js';
import { CBTC, CC, USDCX } from '../../core/tokens.js';
import { giveSideFee } from '../pricing/give-fee.js';
import type { BookLevel } from '../pricing/order-book.js';
import type { OrderBook, SandboxVenueSpec } from './sandbox-venue.js';
import { jsonReply, SANDBOX_VENUE_KEY, type SandboxVenueDefinition, type WireHandler, type WireResponse } from './wire.js';

const BOOK_PATH = '/api/v1/market/orderbook';
const POSITIVE_INTEGER = /^[1-9][0-9]*$/;

const error = (status: number, message: string): WireResponse => jsonReply(status, { error: message });

const symbolOf = (book: OrderBook): string => `${CC.instrument}/${book.quote.instrument}`;

/** One side of the book on the wire: `round` is floor10 for bids, ceil10 for asks. */
const side = (levels: readonly BookLevel[], count: number, round: typeof floor10) =>
  levels.slice(0, count).map((l) => ({ price: round(l.price).toFixed(), quantity: floor10(l.quantity).toFixed() }));

export function templeWire(spec: SandboxVenueSpec): WireHandler {
  if (spec.pricing.kind !== 'book') throw new Error(`templeWire needs an order-book venue; ${spec.id} is ${spec.pricing.kind}`);
  return (request) => {
    if (request.headers['x-api-key'] !== SANDBOX_VENUE_KEY) return error(401, 'invalid or missing API key');
    if (request.path !== BOOK_PATH) return error(404, `no such endpoint: ${request.path}`);
    if (request.method !== 'GET') return error(405, `${request.method} is not allowed on ${BOOK_PATH}`);
    const symbol = request.query.get('symbol');
    if (!symbol) return error(400, 'symbol is required');
    const levels = request.query.get('levels');
    if (levels !== null && !POSITIVE_INTEGER.test(levels)) return error(400, 'levels must be a positive integer');
    // Read on every request: the books are the market's live state, which others change.
    const { pricing } = spec;
    const book = pricing.kind === 'book' ? pricing.books.find((b) => symbolOf(b) === symbol) : undefined;
    if (!book) return error(404, `unknown symbol: ${symbol}`);
    const count = levels === null ? Infinity : Number(levels);
    return jsonReply(200, { bids: side(book.bids, count, floor10), asks: side(book.asks, count, ceil10) });
  };
}

const levels = (rows: Array<[string, string]>) => rows.map(([price, quantity]) => ({ price: dec(price), quantity: dec(quantity) }));

/**
 * Temple: central limit order book walked level by level, 1 bp taker fee deducted from the
 * give amount, minimum order 1 CC.
 */
export function createTempleSpec(): SandboxVenueSpec {
  return {
    id: 'temple',
    pricing: {
      kind: 'book',
      books: [
        {
          quote: USDCX,
          bids: levels([['0.15', '40000'], ['0.1498', '80000'], ['0.1495', '150000'], ['0.149', '300000'], ['0.148', '600000']]),
          asks: levels([['0.1503', '40000'], ['0.1505', '80000'], ['0.1508', '150000'], ['0.1512', '300000'], ['0.152', '600000']]),
        },
        {
          quote: CBTC,
          bids: levels([['0.000001499', '100000'], ['0.000001496', '250000']]),
          asks: levels([['0.000001503', '100000'], ['0.000001507', '250000']]),
        },
      ],
    },
    fee: giveSideFee(1),
    minCc: dec('1'),
  };
}

/** The sandbox's temple: its market and its wire, under its prefix. */
export const templeVenue: SandboxVenueDefinition = { id: 'temple', prefix: '/temple', keyed: true, spec: createTempleSpec, wire: templeWire };
