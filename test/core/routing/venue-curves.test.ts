// "Each curve answers the worst-case net for a give amount exactly as the service's quote states
// it": the sandbox's five venues as curves (test/helpers/sandbox-curves.ts) against the service's
// own quote of each, its adapter over the sandbox's HTTP wire and the quote's arithmetic
// (core/quotes/math.ts toQuoteVenue), from below the venues' minimums to past a book's depth; and
// the curve kinds no sandbox venue has (a book bought into, a pool fee on the output, a fee in the
// want token) against an exact oracle of their own (test/helpers/exact.ts).
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { toQuoteVenue } from '../../../core/quotes/math.js';
import { VenueCurve } from '../../../core/routing/curves.js';
import { CC, USDCX } from '../../../core/tokens.js';
import { ceil10, floor10, s, x } from '../../helpers/exact.js';
import { sandboxCurves } from '../../helpers/sandbox-curves.js';
import { testSandbox } from '../../helpers/sandbox.js';
import { noDeadline } from '../../helpers/venue-fetch.js';

/** Below and at each venue's minimum and fee, near Cantex's waiver, Nightly's cap and the book's depth, with every digit rounding. */
const AMOUNTS = [
  '0.0000000001', '0.4999999999', '0.5', '0.5000000001', '0.79', '0.7900000001', '0.9999999999', '1', '3.1415926535', '24.9999999999', '25',
  '499.9999999999', '500', '500.0000000001', '12345.6789012345', '98765.4321098765', '333889.816360601', '333889.8163606011', '1000000',
  '1169999.9999999999', '1170000', '1170000.0000000001', '9876543.2109876543',
];

t.test('"a venue\'s curve nets what the service\'s quote of it nets": every sandbox venue selling CC for USDCx, over its wire, exactly, refusals included', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(() => sandbox.close());
  const adapters = new Map(sandbox.adapters(5000).map((a) => [a.id, a]));
  // As the service does before its first quote: the probes read tradecraft's pools and nightly's tokens.
  for (const adapter of adapters.values()) await adapter.probe(noDeadline().signal);
  const curves = sandboxCurves();
  t.strictSame(curves.map((c) => c.venueId).sort(), [...adapters.keys()].sort(), 'a curve for every sandbox venue');
  let priced = 0;
  for (const curve of curves) {
    const adapter = adapters.get(curve.venueId)!;
    for (const amount of AMOUNTS) {
      const entry = toQuoteVenue(curve.venueId, dec(amount), USDCX, CC, await adapter.quote({ give: CC, want: USDCX, amount: dec(amount) }, noDeadline()));
      const net = curve.net(dec(amount));
      t.equal(net?.toFixed() ?? null, entry.net, `${curve.venueId}: ${amount} CC (${entry.rejectionCode ?? 'available'})`);
      if (entry.net !== null) priced += 1;
    }
  }
  t.ok(priced >= 75, `${priced} available quotes compared`);
});

t.test('"a book bought into spends the give amount level by level, the last in part, rounded down once"', async (t) => {
  const levels = [
    { price: dec('0.1503'), quantity: dec('40000') },
    { price: dec('0.1505'), quantity: dec('80000') },
  ];
  const curve = new VenueCurve({ kind: 'order-book', venueId: 'book', side: 'buy-base', levels, takerFeeRate: dec('0.0001') });
  for (const spend of ['1', '6012', '6012.0000000001', '17000.1234567891', '18052']) {
    const first = x('0.1503').times('40000');
    const bought = x(spend).lte(first) ? x(spend).div('0.1503') : x('40000').plus(x(spend).minus(first).div('0.1505'));
    const gross = floor10(bought);
    const fee = ceil10(x(spend).times('0.0001'));
    t.equal(curve.net(dec(spend))?.toFixed(), s(floor10(gross.times(x(spend).minus(fee)).div(spend))), `${spend} USDCx`);
  }
  t.equal(curve.net(dec('18052.0000000001')), null, 'past the depth: no quote');
});

t.test('"a pool fee on the output is taken from what the curve pays, rounded up"; "a want-token fee comes off the net"', async (t) => {
  const curve = new VenueCurve({
    kind: 'constant-product',
    venueId: 'pool',
    reserveIn: dec('1000000'),
    reserveOut: dec('150000'),
    poolFee: { rate: dec('0.0025'), placement: 'output' },
    fees: [{ token: 'want', flat: dec('0.12') }],
  });
  for (const amount of ['10', '12345.6789012345', '400000']) {
    const paid = floor10(x('150000').times(amount).div(x('1000000').plus(amount)));
    const afterFee = paid.minus(ceil10(paid.times('0.0025')));
    t.equal(curve.net(dec(amount))?.toFixed(), s(afterFee.minus('0.12')), `${amount}`);
  }
  t.equal(curve.net(dec('0.5')), null, 'a net the want fee takes whole: no quote');
});

t.test('a curve refuses what no quote is: an amount of more than 10 fractional digits, a fee rate of 1, reserves of 0', async (t) => {
  const pool = new VenueCurve({ kind: 'constant-product', venueId: 'p', reserveIn: dec('10'), reserveOut: dec('10') });
  t.throws(() => pool.net(dec('1.00000000001')), RangeError);
  t.throws(() => new VenueCurve({ kind: 'constant-product', venueId: 'p', reserveIn: dec('10'), reserveOut: dec('10'), fees: [{ token: 'give', rate: dec('1') }] }), RangeError);
  t.throws(() => new VenueCurve({ kind: 'constant-product', venueId: 'p', reserveIn: dec('0'), reserveOut: dec('10') }), RangeError);
});
