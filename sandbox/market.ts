// The embedded sandbox market: five venues with distinct mechanics over seeded, plausible
// CC-paired liquidity (CC ~ 0.15 USDCx, CBTC ~ 100,000 USDCx). Deterministic on every start, so
// the spec's examples are reproducible. The README's "Sandbox market" section mirrors these seeds.
import { dec } from '../core/decimal.js';
import { CBTC, CC, USDCX } from '../core/tokens.js';
import type { VenueFeeQuote, VenueQuoteRequest } from '../core/venues/venue.js';
import { proportionalGiveFee } from '../core/venues/venue-math.js';
import { SandboxVenue, type PricedTrade } from './sandbox-venue.js';
import { createNightlySpec } from './wire/nightly.js';

/**
 * The sandbox tradecraft pools' parties, by pair: where a sandbox plan's deposit goes (the
 * TRADECRAFT_POOL_PARTIES default in sandbox mode).
 */
export const SANDBOX_POOL_PARTIES: Readonly<Record<string, string>> = {
  'CC/USDCx': `tradecraft-pool-cc-usdcx::1220${'c'.repeat(64)}`,
  'CC/CBTC': `tradecraft-pool-cc-cbtc::1220${'d'.repeat(64)}`,
};

const levels = (rows: Array<[string, string]>) => rows.map(([price, quantity]) => ({ price: dec(price), quantity: dec(quantity) }));

const CANTEX_FEE_FREE_FROM_CC = dec('500');
const CANTEX_NETWORK_FEE: VenueFeeQuote = { amount: dec('0.79'), asset: CC, appliedTo: 'on_top' };

/** Cantex-style network fee: a flat CC charge on top of the give amount for trades under 500 CC. */
function cantexNetworkFee(_request: VenueQuoteRequest, trade: PricedTrade): VenueFeeQuote | null {
  return trade.ccSize.gte(CANTEX_FEE_FREE_FROM_CC) ? null : CANTEX_NETWORK_FEE;
}

const ONESWAP_TRAFFIC_FEE = { CC: dec('0.5'), USDCx: dec('0.075') };

/** OneSwap-style traffic fee: a flat amount of the give token taken out of the give amount. */
function oneswapTrafficFee({ give }: VenueQuoteRequest): VenueFeeQuote {
  return { amount: give === CC ? ONESWAP_TRAFFIC_FEE.CC : ONESWAP_TRAFFIC_FEE.USDCx, asset: give, appliedTo: 'deducted_from_give' };
}

export function createSandboxVenues(): SandboxVenue[] {
  return [
    // Tradecraft: constant-product AMM, 0.30 % fee deducted from the give amount. The v1 execution
    // venue (managed deposit: the minimum-receive floor rides in the deposit memo).
    new SandboxVenue({
      id: 'tradecraft',
      pricing: {
        kind: 'amm',
        inPriceFeeBps: 0,
        pools: [
          { quote: USDCX, baseReserve: dec('20000000'), quoteReserve: dec('3000000') },
          { quote: CBTC, baseReserve: dec('8000000'), quoteReserve: dec('12') },
        ],
      },
      fee: proportionalGiveFee(30),
    }),
    // Cantex: constant-product AMM with a 0.05 % LP fee inside the price and a network fee charged
    // on top of the give amount.
    new SandboxVenue({
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
    }),
    // OneSwap: constant-product AMM, 0.30 % inside the price plus a traffic fee deducted from the
    // give amount. No CBTC pool: CC/CBTC quotes come back `no_pool`.
    new SandboxVenue({
      id: 'oneswap',
      pricing: {
        kind: 'amm',
        inPriceFeeBps: 30,
        pools: [{ quote: USDCX, baseReserve: dec('12000000'), quoteReserve: dec('1806000') }],
      },
      fee: oneswapTrafficFee,
    }),
    // Nightly CantonSwap: constant-product AMM, 0.20 % inside the price, minimum 25 CC (seeds in
    // its wire's module, which also states its 50,000 USD cap).
    new SandboxVenue(createNightlySpec()),
    // Temple: central limit order book walked level by level, 1 bp taker fee deducted from the
    // give amount, minimum order 1 CC.
    new SandboxVenue({
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
      fee: proportionalGiveFee(1),
      minCc: dec('1'),
    }),
  ];
}
