// What the split of one swap costs (core/routing/split.ts optimalSplit), measured in this process,
// gated: its CPU per call over SPLIT_AMOUNTS amounts of CC sold for USDCx on a five-venue market,
// the sandbox's (its seeds restated here, since the bench reaches the sandbox over HTTP only;
// test/bench/split-routing.test.ts holds them to the sandbox's own). Each call is timed by
// process.cpuUsage() around it (user and system, in µs); the median and p99 are printed beside
// the fresh quote's CPU per request, as the service spends it, the gate is on the p99.
import { BPS, dec, type Decimal } from '../core/decimal.js';
import { VenueCurve } from '../core/routing/curves.js';
import { optimalSplit } from '../core/routing/split.js';
import { fmt } from './report.js';

export const SPLIT_AMOUNTS = 1000;

const levels = (rows: Array<[string, string]>) => rows.map(([price, quantity]) => ({ price: dec(price), quantity: dec(quantity) }));

/** The sandbox market's five venues selling CC for USDCx (sandbox/venues/*.ts; docs/sandbox.md's market table). */
export function splitMarket(): VenueCurve[] {
  return [
    new VenueCurve({ kind: 'constant-product', venueId: 'tradecraft', reserveIn: dec('20000000'), reserveOut: dec('3000000'), fees: [{ token: 'give', rate: BPS.times(30) }] }),
    new VenueCurve({
      kind: 'constant-product',
      venueId: 'cantex',
      reserveIn: dec('30000000'),
      reserveOut: dec('4485000'),
      poolFee: { rate: BPS.times(5), placement: 'input' },
      fees: [{ token: 'give', flat: dec('0.79'), placement: 'on-top', waivedFrom: dec('500') }],
    }),
    new VenueCurve({ kind: 'constant-product', venueId: 'oneswap', reserveIn: dec('12000000'), reserveOut: dec('1806000'), poolFee: { rate: BPS.times(30), placement: 'input' }, fees: [{ token: 'give', flat: dec('0.5') }] }),
    // At most 50,000 USD at Nightly's listed CC price, 0.14975.
    new VenueCurve({ kind: 'constant-product', venueId: 'nightly', reserveIn: dec('16000000'), reserveOut: dec('2396000'), poolFee: { rate: BPS.times(20), placement: 'input' }, min: dec('25'), max: dec('333889.816360601') }),
    new VenueCurve({
      kind: 'order-book',
      venueId: 'temple',
      side: 'sell-base',
      levels: levels([['0.15', '40000'], ['0.1498', '80000'], ['0.1495', '150000'], ['0.149', '300000'], ['0.148', '600000']]),
      takerFeeRate: BPS,
      min: dec('1'),
    }),
  ];
}

/** The amounts split: 100 CC up to about 2,000,000 CC, every digit rounding. */
export function splitAmounts(): Decimal[] {
  const step = dec('2000.1234567891');
  return Array.from({ length: SPLIT_AMOUNTS }, (_, i) => dec('100').plus(step.times(i)));
}

export interface SplitCost {
  /** CPU µs per call. */
  readonly medianUs: number;
  readonly p99Us: number;
  /** How many of the amounts got a split proposed. */
  readonly proposed: number;
}

/** How many times every amount is split before any is timed. */
const WARM_UP_PASSES = 3;

/**
 * Each amount split WARM_UP_PASSES times to warm up, then once timed: a running service splits
 * every v2 quote, so its cost is the optimised code's. One pass left V8 still compiling: the
 * first timed pass after it read p99 650-840 µs, the next ones 340-390.
 */
export function measureSplitRouting(): SplitCost {
  const curves = splitMarket();
  const amounts = splitAmounts();
  for (let pass = 0; pass < WARM_UP_PASSES; pass++) for (const amount of amounts) optimalSplit(amount, curves);
  const us: number[] = [];
  let proposed = 0;
  for (const amount of amounts) {
    const before = process.cpuUsage();
    const split = optimalSplit(amount, curves);
    const spent = process.cpuUsage(before);
    us.push(spent.user + spent.system);
    if (split) proposed += 1;
  }
  us.sort((a, b) => a - b);
  return { medianUs: us[Math.floor(us.length / 2)]!, p99Us: us[Math.ceil(us.length * 0.99) - 1]!, proposed };
}

/** The bench's line: the split's cost beside the fresh quote's CPU per request (NaN: not measured). */
export function describeSplitCost(cost: SplitCost, freshCpuUs: number, maxP99Us: number, verdict: string): string {
  return (
    `split routing (optimalSplit alone, in the bench's own process, before any child started): ${SPLIT_AMOUNTS} amounts of CC for USDCx on the sandbox's five venues, ` +
    `CPU per call median ${fmt(cost.medianUs, 0)} µs, p99 ${fmt(cost.p99Us, 0)} µs (target p99 <= ${maxP99Us} µs) ${verdict}; a split proposed for ${cost.proposed}; ` +
    `beside it a fresh quote costs the service ${fmt(freshCpuUs, 1)} µs of CPU per request`
  );
}
