// The best split of a v2 quote's amount across the venues a wallet can execute
// (core/routing/): each executable venue's curve fitted from what the quote already states of it at
// the whole amount (its gross, its fee, its priceImpact), so the split asks no venue anything of its
// own and a cached quote's split is computed once with it. Proposed only where it nets more than
// the quote's bestExecutable by more than SPLIT_MIN_EDGE_BPS, with its edge over it.
//
// What a quote cannot say of a venue, its shape, is each adapter's knowledge (core/venues/*.ts):
// Tradecraft states its pool fee as its quote's fee, a share of the amount; OneSwap's fee is its
// traffic fee, flat; Nightly states none. A venue's limits on the give token come from its
// adapter where it knows them. A venue whose quote of the whole amount places no curve (it did
// not quote, or its impact reads 0) takes no leg.
import { dec, toWire, ZERO, type Decimal } from '../decimal.js';
import type * as V1 from '../contract/v1.js';
import { MAX_EDGE_BPS } from '../quotes/math.js';
import type * as V2 from '../contract/v2.js';
import { VenueCurve } from '../routing/curves.js';
import { fitConstantProduct, type VenueShape } from '../routing/fit.js';
import { optimalSplit, SPLIT_MIN_EDGE_BPS } from '../routing/split.js';
import type { Token } from '../tokens.js';
import type { VenueLimits } from '../venues/venue.js';

/** How each executable venue's stated fee grows with the amount (VenueShape.feeScales); a venue not listed: flat. */
const FEE_SCALES: Readonly<Record<string, VenueShape['feeScales']>> = {
  tradecraft: 'proportional',
  oneswap: 'flat',
};

/** A venue's limits on what it is given of a token, where its adapter knows them. */
export type LimitsOf = (venueId: string, give: Token) => VenueLimits | null;

/** Each executable venue's curve, fitted from what `quote` states of it at the whole amount; a venue that places none is left out. */
export function venueCurves(quote: V1.QuoteResponse, venues: readonly V2.QuoteVenue[], give: Token, limitsOf: LimitsOf): VenueCurve[] {
  const amount = dec(quote.amount);
  const curves: VenueCurve[] = [];
  for (const venue of venues) {
    if (!venue.available || !venue.execution.executable || venue.gross === null || venue.priceImpact === null) continue;
    const limits = limitsOf(venue.venueId, give);
    const shape: VenueShape = {
      feeScales: FEE_SCALES[venue.venueId] ?? 'flat',
      ...(limits?.min ? { min: limits.min } : {}),
      ...(limits?.max ? { max: limits.max } : {}),
    };
    const fee = venue.fee === null ? null : { amount: dec(venue.fee.amount), token: venue.fee.asset === quote.pair.give ? ('give' as const) : ('want' as const), appliedTo: venue.fee.appliedTo };
    const spec = fitConstantProduct({ venueId: venue.venueId, amount, gross: dec(venue.gross), priceImpact: dec(venue.priceImpact), fee }, shape);
    if (spec) curves.push(new VenueCurve(spec));
  }
  return curves;
}

/**
 * The edge in bps of a split's `net` over the quote's own bestExecutable (its stated net, not its
 * fitted curve's), rounded down as every edge is; null when it is not above SPLIT_MIN_EDGE_BPS,
 * judged on the exact gain, so the figures shown recompute.
 */
function edgeOver(net: Decimal, bestExecutable: NonNullable<V1.QuoteResponse['best']>): number | null {
  const best = dec(bestExecutable.net);
  const gain = net.minus(best).times(10_000);
  if (!gain.gt(best.times(SPLIT_MIN_EDGE_BPS))) return null;
  return Math.min(gain.dividedToIntegerBy(best).toNumber(), MAX_EDGE_BPS);
}

/** The v2 quote's split of `quote.amount`, or null when none beats `bestExecutable` by more than SPLIT_MIN_EDGE_BPS. */
export function quoteSplit(quote: V1.QuoteResponse, venues: readonly V2.QuoteVenue[], bestExecutable: V1.QuoteResponse['best'], give: Token, limitsOf: LimitsOf): V2.SplitQuote | null {
  if (bestExecutable === null) return null;
  const curves = venueCurves(quote, venues, give, limitsOf);
  if (curves.length < 2) return null;
  const split = optimalSplit(dec(quote.amount), curves);
  if (split === null) return null;
  const edgeBps = edgeOver(split.net, bestExecutable);
  if (edgeBps === null) return null;
  return {
    legs: split.legs.map((leg) => ({ venueId: leg.venueId, amount: toWire(leg.amount), net: toWire(leg.net) })),
    net: toWire(split.net),
    edgeBps,
  };
}

/** A named split priced on a quote: each leg's net, their total and the edge over bestExecutable. */
export interface PricedSplit {
  readonly legs: ReadonlyArray<{ readonly venueId: string; readonly amount: Decimal; readonly net: Decimal }>;
  readonly net: Decimal;
  readonly edgeBps: number;
  readonly bestExecutable: NonNullable<V1.QuoteResponse['best']>;
}

/**
 * The split `legs` names, priced on `quote` by the same curves its own split is found on, or why
 * it no longer holds: a leg's venue places no curve or cannot take its amount (a cap, a minimum),
 * or the legs together no longer beat bestExecutable by more than SPLIT_MIN_EDGE_BPS. The quote's
 * own split, named back, is priced to the same figures.
 */
export function priceNamedSplit(
  quote: V1.QuoteResponse,
  venues: readonly V2.QuoteVenue[],
  bestExecutable: V1.QuoteResponse['best'],
  give: Token,
  limitsOf: LimitsOf,
  legs: ReadonlyArray<{ readonly venueId: string; readonly amount: Decimal }>,
): PricedSplit | { readonly refused: string } {
  if (bestExecutable === null) return { refused: 'no venue can execute the whole amount now' };
  const curves = new Map(venueCurves(quote, venues, give, limitsOf).map((curve) => [curve.venueId, curve]));
  const priced: Array<PricedSplit['legs'][number]> = [];
  for (const leg of legs) {
    const curve = curves.get(leg.venueId);
    const net = curve?.net(leg.amount) ?? null;
    if (net === null) return { refused: `venue ${leg.venueId} cannot take ${toWire(leg.amount)} now` };
    priced.push({ venueId: leg.venueId, amount: leg.amount, net });
  }
  const net = priced.reduce((sum, leg) => sum.plus(leg.net), ZERO);
  const edgeBps = edgeOver(net, bestExecutable);
  if (edgeBps === null) return { refused: `the legs net ${toWire(net)}, no more than ${SPLIT_MIN_EDGE_BPS} bps over ${bestExecutable.venueId} alone (${bestExecutable.net})` };
  return { legs: priced, net, edgeBps, bestExecutable };
}

/** A quote's split, by what it is computed from (quoteSplit's arguments). */
export type SplitOf = (quote: V1.QuoteResponse, venues: readonly V2.QuoteVenue[], bestExecutable: V1.QuoteResponse['best'], give: Token) => V2.SplitQuote | null;

/**
 * Splits remembered by what they are computed from: a keyed quote is its base quote with the
 * partner's fee lines, so every partner within a base quote's cache window gets the split computed
 * once, as keyless callers do. Bounded; the oldest goes first.
 */
export class QuoteSplits {
  private readonly known = new Map<string, V2.SplitQuote | null>();

  constructor(
    private readonly limitsOf: LimitsOf,
    private readonly maxEntries = 256,
  ) {}

  readonly of: SplitOf = (quote, venues, bestExecutable, give) => {
    const used = venues.filter((v) => v.available && v.execution.executable);
    const key = [quote.amount, quote.pair.give, quote.pair.want, bestExecutable?.net, ...used.map((v) => `${v.venueId}:${v.gross}:${v.priceImpact}:${v.fee ? `${v.fee.amount}:${v.fee.asset}:${v.fee.appliedTo}` : ''}`)].join('|');
    if (this.known.has(key)) return this.known.get(key)!;
    const split = quoteSplit(quote, venues, bestExecutable, give, this.limitsOf);
    if (this.known.size >= this.maxEntries) this.known.delete(this.known.keys().next().value!);
    this.known.set(key, split);
    return split;
  };
}
