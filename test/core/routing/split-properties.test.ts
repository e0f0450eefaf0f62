// "A split's total net is never below the best single venue's, its legs sum exactly to the amount,
// and the same curves give the same split in any order": seeded properties (fast-check, a fixed
// seed, so every run checks the same markets) over random markets of two to five venues: pools
// with their fees anywhere a curve can place them, books either way, minimums and caps.
import fc from 'fast-check';
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { VenueCurve, type CurveFee, type CurveSpec } from '../../../core/routing/curves.js';
import { optimalSplit, SPLIT_MIN_EDGE_BPS } from '../../../core/routing/split.js';
import { fromUnits, toUnits } from '../../../core/routing/units.js';

const SEED = 20_261_206;
const RUNS = 150;

/** A decimal of `digits` fractional digits from an integer count of its units. */
const units = (min: bigint, max: bigint) => fc.bigInt({ min, max }).map((n) => fromUnits(n));
const rate = (maxBps: number) => fc.integer({ min: 0, max: maxBps }).map((bps) => dec(String(bps)).times('0.0001'));

const fee: fc.Arbitrary<CurveFee> = fc.oneof(
  fc.record({ token: fc.constant('give' as const), rate: rate(50), placement: fc.constantFrom('before-curve' as const, 'on-top' as const) }),
  fc.record({ token: fc.constant('give' as const), flat: units(1n, 50n * 10n ** 10n), placement: fc.constantFrom('before-curve' as const, 'on-top' as const) }, { requiredKeys: ['token', 'flat', 'placement'] }).chain((f) =>
    fc.option(units(10n ** 10n, 10n ** 14n), { nil: undefined }).map((waivedFrom) => (waivedFrom ? { ...f, waivedFrom } : f)),
  ),
  fc.record({ token: fc.constant('want' as const), flat: units(1n, 10n ** 10n) }),
);

const limits = fc.record({ min: fc.option(units(10n ** 10n, 10n ** 15n), { nil: undefined }), max: fc.option(units(10n ** 15n, 10n ** 17n), { nil: undefined }) });

const poolSpec = fc
  .record({
    reserveIn: units(10n ** 15n, 10n ** 18n),
    price: fc.integer({ min: 1300, max: 1700 }),
    poolFee: fc.option(fc.record({ rate: rate(100), placement: fc.constantFrom('input' as const, 'output' as const) }), { nil: undefined }),
    fees: fc.array(fee, { maxLength: 2 }),
    limits,
  })
  .map(({ reserveIn, price, poolFee, fees, limits: { min, max } }): Omit<Extract<CurveSpec, { kind: 'constant-product' }>, 'venueId'> => ({
    kind: 'constant-product',
    reserveIn,
    // About 0.13 to 0.17 out per unit in, as the sandbox's CC/USDCx.
    reserveOut: reserveIn.times(price).times('0.0001').toDecimalPlaces(10, 1),
    ...(poolFee ? { poolFee } : {}),
    fees,
    ...(min ? { min } : {}),
    ...(max ? { max } : {}),
  }));

const bookSpec = fc
  .record({
    best: fc.integer({ min: 1400, max: 1600 }),
    levels: fc.array(fc.record({ tick: fc.integer({ min: 0, max: 30 }), quantity: units(10n ** 13n, 10n ** 16n) }), { minLength: 1, maxLength: 6 }),
    taker: rate(10),
    fees: fc.array(fee, { maxLength: 1 }),
    limits,
  })
  .map(({ best, levels, taker, fees, limits: { min, max } }): Omit<Extract<CurveSpec, { kind: 'order-book' }>, 'venueId'> => {
    let price = best;
    return {
      kind: 'order-book',
      side: 'sell-base',
      // Each level no better than the one before, as a book is.
      levels: levels.map(({ tick, quantity }) => ({ price: dec(String((price -= tick))).times('0.0001'), quantity })),
      takerFeeRate: taker,
      fees,
      ...(min ? { min } : {}),
      ...(max ? { max } : {}),
    };
  });

const market = fc.array(fc.oneof(poolSpec, poolSpec, bookSpec), { minLength: 2, maxLength: 5 }).map((specs) => specs.map((spec, i) => new VenueCurve({ ...spec, venueId: `v${i}` } as CurveSpec)));
const amount = units(10n ** 10n, 3n * 10n ** 16n);

function check<T>(t: { ok: (v: unknown, msg: string) => unknown }, prop: fc.IProperty<T>): void {
  const details = fc.check(prop, { seed: SEED, numRuns: RUNS }) as fc.RunDetails<T>;
  t.ok(!details.failed, details.failed ? (fc.defaultReportMessage(details) ?? 'property failed') : `holds over ${RUNS} markets (seed ${SEED})`);
}

t.test('"a split\'s total net is never below the best single venue\'s, and beats it by more than the threshold"; "its legs sum exactly to the amount, each priced by its curve"', async (t) => {
  let proposed = 0;
  check(
    t,
    fc.property(market, amount, (curves, given) => {
      const split = optimalSplit(given, curves);
      const best = curves.map((c) => c.netUnits(toUnits(given))).reduce<bigint | null>((a, b) => (b !== null && (a === null || b > a) ? b : a), null);
      if (!split) return true;
      proposed += 1;
      const net = toUnits(split.net);
      const byId = new Map(curves.map((c) => [c.venueId, c]));
      return (
        split.legs.length >= 2 &&
        (best === null || (net - best) * 10_000n > best * BigInt(SPLIT_MIN_EDGE_BPS)) &&
        split.legs.reduce((sum, leg) => sum + toUnits(leg.amount), 0n) === toUnits(given) &&
        split.legs.every((leg) => byId.get(leg.venueId)!.net(leg.amount)?.eq(leg.net) === true) &&
        split.legs.reduce((sum, leg) => sum + toUnits(leg.net), 0n) === net &&
        (split.bestSingle === null ? best === null : toUnits(split.bestSingle.net) === best)
      );
    }),
  );
  t.ok(proposed >= RUNS / 5, `${proposed} of the markets had a split to propose`);
});

t.test('"no allocation nets more than the split, or the best single venue where no split does", within 2 units a leg: random allocations of the amount', async (t) => {
  check(
    t,
    fc.property(market, amount, fc.array(fc.nat({ max: 1000 }), { minLength: 5, maxLength: 5 }), (curves, given, weights) => {
      const total = toUnits(given);
      // A threshold below any loss: the best allocation over two venues or more, whatever its edge.
      const split = optimalSplit(given, curves, { minEdgeBps: -10_000 });
      const single = curves.map((c) => c.netUnits(total)).reduce<bigint>((a, b) => (b !== null && b > a ? b : a), 0n);
      const found = split && toUnits(split.net) > single ? toUnits(split.net) : single;
      const used = weights.slice(0, curves.length);
      const sum = BigInt(used.reduce((a, b) => a + b, 0));
      if (sum === 0n) return true;
      let left = total;
      let net = 0n;
      for (let i = 0; i < curves.length; i++) {
        const a = i === curves.length - 1 ? left : (total * BigInt(used[i]!)) / sum;
        left -= a;
        if (a === 0n) continue;
        const leg = curves[i]!.netUnits(a);
        if (leg === null) return true;
        net += leg;
      }
      return net - found <= 2n * BigInt(curves.length);
    }),
  );
});

t.test('"deterministic": the same curves in any order give the same split, leg for leg', async (t) => {
  check(
    t,
    fc.property(market, amount, fc.integer({ min: 0, max: 1000 }), (curves, given, rotate) => {
      const shuffled = curves.map((_, i) => curves[(i + rotate) % curves.length]!).reverse();
      return JSON.stringify(optimalSplit(given, curves)) === JSON.stringify(optimalSplit(given, shuffled));
    }),
  );
});
