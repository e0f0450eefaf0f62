// The sandbox's own pricing (sandbox/pricing/, written from each venue's documented formula) and
// the service's adapters (core/venues/, with their own arithmetic) check each other: the adapters
// quote the sandbox over its HTTP wire, as a deployment quotes the real venues, and every answer
// must be what the sandbox's in-process venue prices for the same market, exactly where the
// venue's wire carries the amounts the adapter states, and by the documented relation where the
// adapter reads the answer its own way. Neither side imports the other's arithmetic
// (test/repository/imports.test.ts), so a slip in either one shows here.
import fc from 'fast-check';
import t from 'tap';
import { dec, type Decimal } from '../../../core/decimal.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import type { Venue } from '../../../core/venues/venue.js';
import { payoutAfterGiveFee, payoutFeeInside, poolPayout } from '../../../sandbox/pricing/constant-product.js';
import type { SandboxVenue } from '../../../sandbox/venues/sandbox-venue.js';
import { floor10, s, x } from '../../helpers/exact.js';
import { testSandbox } from '../../helpers/sandbox.js';
import { noDeadline, plainQuote } from '../../helpers/venue-fetch.js';

// ---------------------------------------------------------------------------------------------
// The constant-product curve against an oracle of its own (test/helpers/exact.ts).

/** out = rOut × in / (rIn + in), rounded down: the invariant x · y = k solved for the payout. */
const curve = (reserveIn: string, reserveOut: string, amountIn: string): string => s(floor10(x(reserveOut).times(amountIn).div(x(reserveIn).plus(amountIn))));

t.test('poolPayout: "keeps x · y = k: pays y − k / (x + a), rounded down to 10 fractional digits"', async (t) => {
  t.equal(poolPayout(dec('100'), dec('200'), dec('50')).toFixed(), '66.6666666666', '200×50/150 = 66.666… floors, never rounds up to …667');
  t.equal(poolPayout(dec('100'), dec('100'), dec('100')).toFixed(), '50', 'an exact quotient stays exact');
  t.equal(poolPayout(dec('3'), dec('1'), dec('0')).toFixed(), '0', 'zero in, zero out');
  t.equal(poolPayout(dec('2'), dec('1'), dec('1')).toFixed(), '0.3333333333', '1×1/3');
  t.equal(poolPayout(dec('20000000'), dec('3000000'), dec('1000')).toFixed(), '149.9925003749', 'a seeded pool: 3e9 / 20001000');
});

t.test('poolPayout: "never reaches the out reserve, at most 10 fractional digits" (property)', async (t) => {
  const scaled = (n: bigint): string => s(x(n.toString()).div('1e10'));
  const amount = fc.bigInt({ min: 1n, max: 10n ** 20n }).map(scaled);
  const reserve = fc.bigInt({ min: 1n, max: 10n ** 22n }).map(scaled);
  const details = fc.check(
    fc.property(reserve, reserve, amount, (rIn, rOut, a) => {
      const out = poolPayout(dec(rIn), dec(rOut), dec(a));
      return out.toFixed() === curve(rIn, rOut, a) && out.lt(dec(rOut)) && out.decimalPlaces() <= 10;
    }),
  );
  t.ok(!details.failed, details.failed ? (fc.defaultReportMessage(details) ?? 'property failed') : 'property holds');
});

t.test('payoutFeeInside and payoutAfterGiveFee: "the curve takes in a · (1 − f)" and "a − fee"; nothing when the fee takes it all', async (t) => {
  t.equal(payoutFeeInside(dec('30000000'), dec('4485000'), dec('1000'), 5).toFixed(), curve('30000000', '4485000', '999.5'));
  t.equal(payoutFeeInside(dec('30000000'), dec('4485000'), dec('1000'), 0).toFixed(), curve('30000000', '4485000', '1000'));
  t.equal(payoutAfterGiveFee(dec('20000000'), dec('3000000'), dec('1000'), dec('3')).toFixed(), curve('20000000', '3000000', '997'));
  t.equal(payoutAfterGiveFee(dec('20000000'), dec('3000000'), dec('0.5'), dec('0.5')).toFixed(), '0');
});

// ---------------------------------------------------------------------------------------------
// The adapters over the wire against the sandbox's in-process venues.

/**
 * Amounts per direction: small (below the venue minimums where there are any), medium, and large,
 * near the AMMs' reserves, Nightly's USD cap or the books' whole depth (one unit under, exactly,
 * one unit over), with ten fractional digits so every fee and curve rounds.
 */
const SPREAD: Readonly<Record<string, ReadonlyArray<readonly [Token, Token, readonly string[]]>>> = (() => {
  const amm = (cc: string[], usdcx: string[], cbtc: string[]) => [
    [CC, USDCX, cc],
    [USDCX, CC, usdcx],
    [CC, CBTC, cc],
    [CBTC, CC, cbtc],
  ] as const;
  const small = { cc: ['0.9999999999', '3.1415926535', '27.1828182845', '499.9999999999'], usdcx: ['0.7654321098', '76.5432109876'], cbtc: ['0.0000123457', '0.0012345679'] };
  const medium = { cc: ['12345.6789012345'], usdcx: ['1234.5678901234'], cbtc: ['0.0123456789'] };
  return {
    tradecraft: amm([...small.cc, ...medium.cc, '9876543.2109876543'], [...small.usdcx, ...medium.usdcx, '1500000.0000000001'], [...small.cbtc, ...medium.cbtc, '5.4321098765']),
    cantex: amm([...small.cc, ...medium.cc, '9876543.2109876543'], [...small.usdcx, ...medium.usdcx, '2200000.0000000001'], [...small.cbtc, ...medium.cbtc, '7.4321098765']),
    oneswap: amm([...small.cc, ...medium.cc, '5876543.2109876543'], [...small.usdcx, ...medium.usdcx, '900000.0000000001'], [...small.cbtc, ...medium.cbtc, '5.4321098765']),
    nightly: amm([...small.cc, ...medium.cc, '327000.0000000001'], [...small.usdcx, ...medium.usdcx, '48999.9999999999'], [...small.cbtc, ...medium.cbtc, '0.4876543211']),
    temple: [
      [CC, USDCX, [...small.cc, ...medium.cc, '1169999.9999999999', '1170000', '1170000.0000000001']],
      [USDCX, CC, [...small.usdcx, ...medium.usdcx, '177231.9999999999', '177232', '177232.0000000001']],
      [CC, CBTC, [...small.cc, ...medium.cc, '349999.9999999999', '350000', '350000.0000000001']],
      [CBTC, CC, [...small.cbtc, '0.1234567891', '0.5270499999', '0.52705', '0.5270500001']],
    ],
  };
})();

/** The in-process venue's pool for the pair, as [reserve of `give`, reserve of `want`]. */
function reservesOf(venue: SandboxVenue, give: Token, want: Token): [Decimal, Decimal] {
  const { pricing } = venue.spec;
  const pool = pricing.kind === 'amm' ? pricing.pools.find((p) => p.quote === (give === CC ? want : give)) : undefined;
  if (!pool) throw new Error(`${venue.id} has no pool for ${give.symbol}/${want.symbol}`);
  return give === CC ? [pool.baseReserve, pool.quoteReserve] : [pool.quoteReserve, pool.baseReserve];
}

/**
 * What the adapter of a venue answering with its output after a give-side fee states: the fee as
 * the venue prices it, and as gross that output at the quote's average rate for the whole amount,
 * floor(output × amount / (amount − fee)) (docs/sandbox.md; core/venues/tradecraft.ts, oneswap.ts).
 */
function afterGiveFee(output: Decimal, amount: string, fee: { amount: Decimal; asset: Token }) {
  return {
    gross: s(floor10(x(output).times(amount).div(x(amount).minus(x(fee.amount))))),
    fee: { amount: fee.amount.toFixed(), asset: fee.asset.symbol, appliedTo: 'deducted_from_give' },
  };
}

t.test('"the adapters and the sandbox check each other": every adapter over the sandbox\'s HTTP wire quotes what the sandbox\'s own pricing gives, small to near the depth, each direction, pair and venue', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(() => sandbox.close());
  const adapters = new Map<string, Venue>(sandbox.adapters(5000).map((a) => [a.id, a]));
  const outcomes = new Set<string>();
  const priced = new Map<string, number>();
  for (const venue of sandbox.market) {
    const adapter = adapters.get(venue.id)!;
    for (const [give, want, amounts] of SPREAD[venue.id]!) {
      for (const amount of amounts) {
        const label = `${venue.id}: ${amount} ${give.symbol}→${want.symbol}`;
        const request = { give, want, amount: dec(amount) };
        const own = await venue.quote(request);
        const quoted = plainQuote(await adapter.quote(request, noDeadline()));
        outcomes.add(typeof quoted === 'string' ? quoted : 'available');
        if (typeof quoted !== 'string') priced.set(venue.id, (priced.get(venue.id) ?? 0) + 1);
        if (!own.available || (venue.id !== 'tradecraft' && venue.id !== 'oneswap')) {
          // Cantex's `returned` and network fee, Nightly's `toAmount` and Temple's book are what the
          // adapter states: the same figures, or the same refusal.
          t.strictSame(quoted, plainQuote(own), label);
          continue;
        }
        // Tradecraft's `user_gets` is the curve's output for the amount less the pool fee; OneSwap's
        // `outputAmount` the curve's, after its fee inside the price, for the amount less the
        // traffic fee: each recomputed here from the pool's state by the sandbox's own pricing.
        const fee = own.fee!;
        const [reserveIn, reserveOut] = reservesOf(venue, give, want);
        const output =
          venue.id === 'tradecraft'
            ? payoutAfterGiveFee(reserveIn, reserveOut, dec(amount), fee.amount)
            : payoutFeeInside(reserveIn, reserveOut, dec(amount).minus(fee.amount), venue.spec.pricing.kind === 'amm' ? venue.spec.pricing.inPriceFeeBps : 0);
        t.strictSame(quoted, output.isZero() ? 'below_minimum' : afterGiveFee(output, amount, fee), label);
      }
    }
  }
  for (const venue of sandbox.market) t.ok((priced.get(venue.id) ?? 0) >= 8, `${venue.id}: ${priced.get(venue.id) ?? 0} available quotes compared`);
  t.strictSame([...outcomes].sort(), ['available', 'below_minimum', 'insufficient_liquidity', 'no_pool'], 'the spread reaches quotes, minimums, past a book\'s depth and a missing pool');
});
