// "A constant-product curve fitted from what a quote already knows of a venue (its gross, fee and
// priceImpact at the quoted amount) reproduces the venue's quotes": each sandbox pool, quoted by
// the service over the sandbox's wire at one amount, fitted (core/routing/fit.ts), and set against
// the service's quotes of the same venue at amounts from a thousandth of it to all of it. The bound
// stated in docs/split-routing.md: the fitted net is never above the venue's, and below it by at
// most FIT_BOUND of it, or FIT_SLACK_UNITS units where that is more.
import t from 'tap';
import { dec, type Decimal } from '../../../core/decimal.js';
import { toQuoteVenue } from '../../../core/quotes/math.js';
import { VenueCurve } from '../../../core/routing/curves.js';
import { fitConstantProduct, type QuotedVenue, type VenueShape } from '../../../core/routing/fit.js';
import { CC, USDCX } from '../../../core/tokens.js';
import { x } from '../../helpers/exact.js';
import { testSandbox } from '../../helpers/sandbox.js';
import { noDeadline } from '../../helpers/venue-fetch.js';

/** The fit's bound, as a share of the venue's net. */
const FIT_BOUND = '1e-9';
/** And in units of 1e-10, for the smallest nets, where the venues' own rounding is the larger. */
const FIT_SLACK_UNITS = 4;

/** Each pool's shape, which a quote does not state (test/helpers/sandbox-curves.ts says why each). */
const SHAPES: Readonly<Record<string, { readonly at: string; readonly shape: VenueShape }>> = {
  tradecraft: { at: '1000000', shape: { feeScales: 'proportional' } },
  oneswap: { at: '1000000', shape: { feeScales: 'flat' } },
  nightly: { at: '300000', shape: { min: dec('25') } },
  // Quoted from 500 CC up, its network fee reads 0: the fee below 500 is known to the caller.
  cantex: { at: '1000000', shape: { unstatedFees: [{ token: 'give', flat: dec('0.79'), placement: 'on-top', waivedFrom: dec('500') }] } },
};

t.test('"the fitted curve reproduces the venue\'s quotes within the stated bound, never above them": every sandbox pool, fitted at one amount, a thousandth of it to all of it', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(() => sandbox.close());
  const adapters = new Map(sandbox.adapters(5000).map((a) => [a.id, a]));
  for (const adapter of adapters.values()) await adapter.probe(noDeadline().signal);
  const quote = async (venueId: string, amount: Decimal) => toQuoteVenue(venueId, amount, USDCX, CC, await adapters.get(venueId)!.quote({ give: CC, want: USDCX, amount }, noDeadline()));
  for (const [venueId, { at, shape }] of Object.entries(SHAPES)) {
    const entry = await quote(venueId, dec(at));
    const quoted: QuotedVenue = {
      venueId,
      amount: dec(at),
      gross: dec(entry.gross!),
      priceImpact: dec(entry.priceImpact!),
      fee: entry.fee && { amount: dec(entry.fee.amount), token: entry.fee.asset === CC.instrument ? 'give' : 'want', appliedTo: entry.fee.appliedTo },
    };
    const spec = fitConstantProduct(quoted, shape);
    if (!spec) {
      t.fail(`${venueId}: no fit`);
      continue;
    }
    const curve = new VenueCurve(spec);
    let worst = x(0);
    for (const share of ['1', '0.001', '0.0123456789', '0.05', '0.1', '0.25', '0.3333333333', '0.5', '0.75', '0.9', '0.9999999999']) {
      const amount = dec(at).times(share).toDecimalPlaces(10, 1);
      const actual = (await quote(venueId, amount)).net;
      const fitted = curve.net(amount);
      if (actual === null || fitted === null) {
        t.equal(fitted?.toFixed() ?? null, actual, `${venueId}: ${amount.toFixed()} CC refused alike`);
        continue;
      }
      const gap = x(actual).minus(fitted.toFixed());
      const allowed = x(actual).times(FIT_BOUND).plus(x(FIT_SLACK_UNITS).times('1e-10'));
      t.ok(gap.gte(0) && gap.lte(allowed), `${venueId}: ${amount.toFixed()} CC: fitted ${fitted.toFixed()}, quoted ${actual} (${gap.toFixed()} below)`);
      if (gap.div(actual).gt(worst)) worst = gap.div(actual);
    }
    t.comment(`${venueId}: the fit's largest shortfall, ${worst.toSignificantDigits(3).toFixed()} of the net`);
  }
});

t.test('"the fit refuses a quote that cannot place a curve": no impact, an impact of 1, a fee of the whole amount', async (t) => {
  const base: QuotedVenue = { venueId: 'v', amount: dec('100'), gross: dec('15'), priceImpact: dec('0.001'), fee: null };
  t.ok(fitConstantProduct(base), 'a quote with an impact fits');
  t.equal(fitConstantProduct({ ...base, priceImpact: dec('0') }), null);
  t.equal(fitConstantProduct({ ...base, priceImpact: dec('0.0000000001') }), null, 'an impact of one unit may be 0');
  t.equal(fitConstantProduct({ ...base, priceImpact: dec('1') }), null);
  t.equal(fitConstantProduct({ ...base, fee: { amount: dec('100'), token: 'give', appliedTo: 'deducted_from_give' } }), null);
});
