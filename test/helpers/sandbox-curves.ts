// The sandbox market's five venues selling CC for USDCx, as split-routing curves
// (core/routing/curves.ts), built from the sandbox's own seeds (sandbox/venues/*.ts) and each
// venue's mechanics as its module and the service's adapter for it state them: which fee, where it
// sits, the venue's limits. test/core/routing/venue-curves.test.ts holds each curve to the
// service's own quote of the venue over the sandbox's wire.
import { BPS, dec, type Decimal } from '../../core/decimal.js';
import { USDCX } from '../../core/tokens.js';
import { VenueCurve, type CurveSpec } from '../../core/routing/curves.js';
import { createCantexSpec } from '../../sandbox/venues/cantex.js';
import { createNightlySpec, NIGHTLY_MAX_SWAP_USD } from '../../sandbox/venues/nightly.js';
import { createOneSwapSpec } from '../../sandbox/venues/oneswap.js';
import type { SandboxVenueSpec } from '../../sandbox/venues/sandbox-venue.js';
import { createTempleSpec } from '../../sandbox/venues/temple.js';
import { createTradecraftSpec } from '../../sandbox/venues/tradecraft.js';

/** The venue's CC/USDCx pool: CC and USDCx reserves, and its fee inside the price. */
function pool(spec: SandboxVenueSpec): { cc: Decimal; usdcx: Decimal; inside: { rate: Decimal; placement: 'input' } | undefined } {
  if (spec.pricing.kind !== 'amm') throw new Error(`${spec.id} is no pool`);
  const found = spec.pricing.pools.find((p) => p.quote === USDCX)!;
  const bps = spec.pricing.inPriceFeeBps;
  return { cc: found.baseReserve, usdcx: found.quoteReserve, inside: bps === 0 ? undefined : { rate: BPS.times(bps), placement: 'input' } };
}

/** Each sandbox venue's curve spec for selling CC for USDCx, by venueId. */
export function sandboxCurveSpecs(): CurveSpec[] {
  const tradecraft = pool(createTradecraftSpec());
  const cantex = pool(createCantexSpec());
  const oneswap = pool(createOneSwapSpec());
  const nightly = pool(createNightlySpec());
  const temple = createTempleSpec();
  if (temple.pricing.kind !== 'book') throw new Error('temple is a book');
  // Nightly lists CC at its pool's spot, rounded down, and caps what is given at 50,000 USD of it.
  const ccPrice = nightly.usdcx.div(nightly.cc).toDecimalPlaces(10, 1);
  return [
    // Its pool fee, 0.30 % of the give amount, is its quote's fee, taken before the curve.
    { kind: 'constant-product', venueId: 'tradecraft', reserveIn: tradecraft.cc, reserveOut: tradecraft.usdcx, fees: [{ token: 'give', rate: BPS.times(30) }] },
    // 0.05 % inside the price; a 0.79 CC network fee on top, waived from 500 CC.
    { kind: 'constant-product', venueId: 'cantex', reserveIn: cantex.cc, reserveOut: cantex.usdcx, poolFee: cantex.inside, fees: [{ token: 'give', flat: dec('0.79'), placement: 'on-top', waivedFrom: dec('500') }] },
    // 0.30 % inside the price, and a 0.5 CC traffic fee out of the input first.
    { kind: 'constant-product', venueId: 'oneswap', reserveIn: oneswap.cc, reserveOut: oneswap.usdcx, poolFee: oneswap.inside, fees: [{ token: 'give', flat: dec('0.5') }] },
    // 0.20 % inside the price, nothing outside it; at least 25 CC, at most 50,000 USD.
    { kind: 'constant-product', venueId: 'nightly', reserveIn: nightly.cc, reserveOut: nightly.usdcx, poolFee: nightly.inside, min: dec('25'), max: NIGHTLY_MAX_SWAP_USD.div(ccPrice).toDecimalPlaces(10, 1) },
    // Its bids walked level by level; 1 bp taker fee valued at the average rate; at least 1 CC.
    { kind: 'order-book', venueId: 'temple', side: 'sell-base', levels: temple.pricing.books.find((b) => b.quote === USDCX)!.bids, takerFeeRate: BPS, min: dec('1') },
  ];
}

export const sandboxCurves = (): VenueCurve[] => sandboxCurveSpecs().map((spec) => new VenueCurve(spec));
